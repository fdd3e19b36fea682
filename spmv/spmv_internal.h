/* Private to spmv/: what its C units share below the backend interface — how the C path's hot
 * loops (dia.c, cpu/basis_cpu.c, cpu/block_cpu.c) are compiled. */
#ifndef DIASEG_SPMV_INTERNAL_H
#define DIASEG_SPMV_INTERNAL_H

#include "spmv.h"

/* The C path's hot loops are compiled for AVX2 + FMA and for the x86-64 baseline, and the
 * loader picks one (target_clones): the baseline does two doubles per instruction. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SPMV_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
/* A loop written for 512-bit vectors (cpu/block_cpu.c's product) is compiled for AVX-512 as
 * well, and called where spmv_cpu_avx512() says the CPU has it. */
#define SPMV_AVX512 __attribute__((target("arch=x86-64-v4")))
static inline int spmv_cpu_avx512(void) /* x86-64-v4's AVX-512 subsets */
{
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
}
#else
#define SPMV_CLONES
#endif

#endif /* DIASEG_SPMV_INTERNAL_H */
