/* Private to spmv/: the backend interface.
 *
 * A backend is one spmv_backend: a table of the functions that do, on its hardware, what the
 * public matvec and basis functions promise (spmv.h). The front functions (backend.c) check the
 * arguments, keep the timing and dispatch through the table; a backend never sees the public
 * objects' bookkeeping beyond the spmv_basis fields documented below.
 *
 * The backends now: "cpu" (spmv/cpu/: the threaded C product and the OpenMP basis, the reference
 * of every other) and "opencl" (spmv/opencl/: the DIA kernels and the device-resident basis).
 * Adding one — a distributed backend, say, with a strip of rows and its halo per rank and one GPU
 * per rank — is one more spmv_backend and its create function (spmv_matvec_create_<name>), which
 * builds its state and hands it to spmv_matvec_wrap; nothing here or in the callers changes.
 */
#ifndef DIASEG_SPMV_BACKEND_INTERNAL_H
#define DIASEG_SPMV_BACKEND_INTERNAL_H

#include "spmv.h"

/* The matvec operations. `impl` is the backend's state, as given to spmv_matvec_wrap. */
typedef struct spmv_matvec_ops {
  /* y = A x on host arrays of rows floats. Adds its split of the time (kernel_s, transfer_s,
   * host_s) to *t; calls and total_s are kept by the front. Returns DSG_OK or an error with its
   * message. */
  int (*apply)(void *impl, const float *x, float *y, spmv_timing *t);
  /* Gets the backend ready for bases of m + 1 columns (2 <= m <= 4096, checked by the front):
   * spmv_matvec_prepare_basis. NULL: nothing to prepare. */
  int (*prepare_basis)(void *impl, int m);
  /* Frees impl and everything it owns (impl may be NULL). */
  void (*destroy)(void *impl);
} spmv_matvec_ops;

/* The basis operations, on the spmv_basis fields below. The front checks the column and step
 * ranges and counts the steps; each operation's contract is its public twin's (spmv.h). */
typedef struct spmv_basis_ops {
  /* Creates b->impl for a basis of b->m + 1 columns of b->n floats on the matvec whose state is
   * mv_impl (b->known and b->fuse are set). On failure b->impl is freed and NULL. */
  int (*create)(void *mv_impl, spmv_basis *b);
  int (*set)(spmv_basis *b, int col, const float *x, double *norm);
  int (*expand)(spmv_basis *b, int j);
  int (*coefficients)(spmv_basis *b, int j0, int j1, double *coef);
  int (*restart)(spmv_basis *b, const double *Y, int ldy, int mcur, int k);
  int (*ritz)(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out);
  /* Frees b->impl (NULL allowed) and sets it to NULL; b itself belongs to the front. */
  void (*destroy)(spmv_basis *b);
} spmv_basis_ops;

/* The block operations, on the spmv_block fields below. The front checks slot numbers and
 * counts the products; each operation's contract is its public twin's (spmv.h). */
typedef struct spmv_block_ops {
  /* Creates k->impl for k->slots blocks of k->b columns of k->n floats, zeroed, on the matvec
   * whose state is mv_impl (k->known is set). On failure k->impl is freed and NULL. */
  int (*create)(void *mv_impl, spmv_block *k);
  int (*set)(spmv_block *k, int s, const float *x);
  int (*get)(spmv_block *k, int s, int cols, float *out);
  int (*fill_random)(spmv_block *k, int s, unsigned long long seed);
  int (*product)(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                 double gamma);
  int (*axpby)(spmv_block *k, int dst, double alpha, int x, double beta, int y);
  int (*gram)(spmv_block *k, int x, int y, double *G);
  int (*transform)(spmv_block *k, int s, const double *M);
  int (*residuals)(spmv_block *k, int ax, int x, const double *theta, double *out);
  int (*project)(spmv_block *k, int s);
  /* Frees k->impl (NULL allowed) and sets it to NULL; k itself belongs to the front. */
  void (*destroy)(spmv_block *k);
} spmv_block_ops;

/* A backend: its name ("cpu", "opencl"; spmv_matvec_backend), its capabilities, its matvec, its
 * basis and its blocks. One static const instance per backend. */
typedef struct spmv_backend {
  const char *name;
  /* What the backend offers for the matvec state impl (spmv_matvec_caps); caps.backend is name. */
  spmv_caps (*caps)(const void *impl);
  spmv_matvec_ops matvec;
  spmv_basis_ops basis;
  spmv_block_ops block;
} spmv_backend;

/* The public matvec object: a backend and its state. */
struct spmv_matvec {
  const spmv_backend *backend;
  void *impl;
  int rows;
  spmv_timing timing;
};

/* The public basis object. The backend reads n, m, known and fuse, owns impl, and adds to timing
 * (all but `steps`, which the front counts). A basis must be destroyed before its matvec. */
struct spmv_basis {
  const spmv_basis_ops *ops; /* the backend's basis operations (the front's) */
  spmv_matvec *mv;           /* the matvec it was created on (the front's) */
  void *impl;                /* the backend's state */
  int n, m;                  /* n rows; m + 1 columns */
  spmv_known known;
  int fuse;
  spmv_basis_timing timing;
};

/* The public block object. The backend reads n, b, slots and known, owns impl, and adds to timing
 * (all but `products`, which the front counts). Destroyed before its matvec. */
struct spmv_block {
  const spmv_block_ops *ops; /* the backend's block operations (the front's) */
  spmv_matvec *mv;           /* the matvec it was created on (the front's) */
  void *impl;                /* the backend's state */
  int n, b, slots;
  spmv_known known; /* borrowed from the creator, like a basis's */
  spmv_block_timing timing;
};

/* Wraps impl (owned from here on: freed with backend->matvec.destroy, also when this fails) in a
 * new matvec object of `rows` rows. Returns DSG_OK or DSG_ERR_NOMEM. */
int spmv_matvec_wrap(spmv_matvec **out, const spmv_backend *backend, void *impl, int rows);
/* mv's state if mv runs on `backend`, else NULL: how a backend recognises its own matvecs. */
void *spmv_matvec_impl(const spmv_matvec *mv, const spmv_backend *backend);

#endif /* DIASEG_SPMV_BACKEND_INTERNAL_H */
