/* Private to spmv/opencl/: the OpenCL matvec as the other OpenCL units see it — two accessors.
 * (The basis gets the same parts from the backend table's create, in cl_matvec.c.) */
#ifndef DIASEG_SPMV_CL_MATVEC_H
#define DIASEG_SPMV_CL_MATVEC_H

#include "cl_dia.h"

/* mv's device, context and queue; NULL when mv is not an OpenCL matvec. */
const spmv_cl_runtime *spmv_cl_matvec_runtime(const spmv_matvec *mv);
/* mv's matrix on the device and its DIA kernel; NULL when mv is not an OpenCL matvec. */
const spmv_cl_dia *spmv_cl_matvec_dia(const spmv_matvec *mv);

#endif /* DIASEG_SPMV_CL_MATVEC_H */
