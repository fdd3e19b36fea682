/* The kind of matrix diaseg solves, built here without the application: the normalised affinity
 * D^-1/2 W D^-1/2 of a synthetic image over a disc of radius r (81 offsets dy * width + dx with
 * dx^2 + dy^2 <= 25 for r = 5), W_ij = exp(-|f_i - f_j|^2 / sigma_i^2 - d_ij^2 / sigma_x^2),
 * zero outside the image. The same construction as the application's affinity (its diagonals,
 * their order, the weights and the symmetric normalisation), for the spmv tests. */
#ifndef DIASEG_TEST_DISC_AFFINITY_H
#define DIASEG_TEST_DISC_AFFINITY_H

#include "check.h"
#include "spmv.h"

#include <math.h>
#include <stdlib.h>

/* A synthetic w x h image of nfeat channels in [0, 1]: smooth gradients, a few sharp edges and a
 * little noise (deterministic: test_uniform). Caller frees. */
static inline float *test_image_features(int w, int h, int nfeat)
{
  float *f = malloc((size_t)w * (size_t)h * (size_t)nfeat * sizeof(*f));
  if (!f)
    return NULL;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < nfeat; c++) {
        double v = 0.45 + 0.25 * sin(0.07 * x + 1.3 * c) * cos(0.05 * y - 0.7 * c);
        v += (x * 3 > w) != (y * 2 > h) ? 0.2 : 0.0; /* a step edge */
        v += (x - w / 3) * (x - w / 3) + (y - h / 2) * (y - h / 2) < (w + h) * (w + h) / 100
                 ? -0.15 * (c + 1) / nfeat
                 : 0.0;                       /* a disc */
        v += 0.03 * (2 * test_uniform() - 1); /* noise */
        f[((size_t)y * (size_t)w + (size_t)x) * (size_t)nfeat + (size_t)c] = (float)(v < 0   ? 0
                                                                                     : v > 1 ? 1
                                                                                             : v);
      }
  return f;
}

static int test_cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* N = D^-1/2 W D^-1/2 of the w x h image `features` (nfeat per pixel) over the disc of radius r.
 * Returns DSG_OK (*out: free with spmv_dia_destroy) or an error of spmv_dia_create. */
static inline int test_disc_affinity(int w, int h, const float *features, int nfeat, int radius,
                                     double sigma_i, double sigma_x, spmv_dia **out)
{
  const int n = w * h, side = 2 * radius + 1;
  int ndisc = 0, nvalid = 0, ndiag = 0, status;
  int *dx = malloc((size_t)side * side * sizeof(int)),
      *dy = malloc((size_t)side * side * sizeof(int));
  int *offsets = malloc((size_t)side * side * sizeof(int));
  int *diag_of = malloc((size_t)side * side * sizeof(int));
  double *degree = calloc((size_t)n, sizeof(double));
  spmv_dia *A = NULL;

  *out = NULL;
  if (!dx || !dy || !offsets || !diag_of || !degree) {
    status = DSG_ERR_NOMEM;
    goto out;
  }
  for (int y = -radius; y <= radius; y++)
    for (int x = -radius; x <= radius; x++)
      if (x * x + y * y <= radius * radius) {
        dx[ndisc] = x;
        dy[ndisc] = y;
        ndisc++;
      }
  /* the diagonals: the distinct offsets of disc entries that can join two pixels, ascending */
  for (int k = 0; k < ndisc; k++)
    if (abs(dx[k]) < w && abs(dy[k]) < h)
      offsets[nvalid++] = dy[k] * w + dx[k];
  qsort(offsets, (size_t)nvalid, sizeof(int), test_cmp_int);
  for (int k = 0; k < nvalid; k++)
    if (ndiag == 0 || offsets[k] != offsets[ndiag - 1])
      offsets[ndiag++] = offsets[k];
  for (int k = 0; k < ndisc; k++) {
    const int o = dy[k] * w + dx[k];
    const int *hit = bsearch(&o, offsets, (size_t)ndiag, sizeof(int), test_cmp_int);
    diag_of[k] = abs(dx[k]) < w && abs(dy[k]) < h && hit ? (int)(hit - offsets) : -1;
  }
  status = spmv_dia_create(&A, n, ndiag, offsets);
  if (status == DSG_OK) {
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const int i = y * w + x;
        for (int k = 0; k < ndisc; k++) {
          const int xj = x + dx[k], yj = y + dy[k];
          if (diag_of[k] < 0 || xj < 0 || xj >= w || yj < 0 || yj >= h)
            continue;
          const int j = yj * w + xj;
          double dist2 = 0.0;
          for (int c = 0; c < nfeat; c++) {
            const double d =
                (double)features[(size_t)i * nfeat + c] - (double)features[(size_t)j * nfeat + c];
            dist2 += d * d;
          }
          const double wij = exp(-dist2 / (sigma_i * sigma_i) -
                                 (double)(dx[k] * dx[k] + dy[k] * dy[k]) / (sigma_x * sigma_x));
          A->values[(size_t)diag_of[k] * A->pitch + (size_t)i] = (float)wij;
          degree[i] += wij;
        }
      }
    for (int i = 0; i < n; i++)
      degree[i] = sqrt(degree[i]);
    for (int d = 0; d < ndiag; d++)
      for (int i = 0; i < n; i++) {
        const long long j = (long long)i + offsets[d];
        float *a = A->values + (size_t)d * A->pitch + (size_t)i;
        if (j >= 0 && j < n && *a != 0.0f)
          *a = (float)((double)*a * (1.0 / (degree[i] * degree[j])));
      }
    *out = A;
  }
out:
  free(dx);
  free(dy);
  free(offsets);
  free(diag_of);
  free(degree);
  return status;
}

#endif /* DIASEG_TEST_DISC_AFFINITY_H */
