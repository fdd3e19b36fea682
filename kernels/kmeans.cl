/* k-means on the device (spmv/opencl/cl_image.c, spmv_cl_points): the primitives of k-means++
 * seeding and Lloyd's iterations that the library's app_kmeans drives (app/lib/cluster.c, whose
 * host engine is the C reference). Points are n rows of dim floats; centres, distances and sums
 * are doubles computed as the reference computes them: each squared distance summed over the
 * coordinates in order, each sum over a chunk's points in index order (chunk b of nchunk: the
 * points [n b / nchunk, n (b + 1) / nchunk)), and no contraction into fused multiply-adds (the
 * reference's x86-64 code has none), so the results are the same bit for bit. Needs cl_khr_fp64.
 *
 * kmeans_distances and kmeans_assign run one work-item per point; kmeans_sums one per chunk,
 * cluster and coordinate (the work-items of a chunk read the same labels at the same time),
 * then kmeans_reduce one per cluster and coordinate (the chunks' sums in chunk order);
 * kmeans_chunk_sums one per chunk. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

inline double dist2(__global const float *p, __global const double *c, const int dim)
{
  double s = 0.0;
  for (int j = 0; j < dim; j++) {
    const double d = (double)p[j] - c[j];
    s += d * d;
  }
  return s;
}

/* d2[i] = the squared distance of point i to centre (first), or the smaller of it and d2[i]. */
__kernel void kmeans_distances(__global const float *points, const long n, const int dim,
                               __global const double *centre, const int first, __global double *d2)
{
  const size_t i = get_global_id(0);
  if (i >= (size_t)n)
    return;
  const double d = dist2(points + i * dim, centre, dim);
  if (first || d < d2[i])
    d2[i] = d;
}

/* Point i's nearest of the k centres (the first of equals) into labels[i], its squared distance
 * into d2[i]; *changed counts the labels that moved. */
__kernel void kmeans_assign(__global const float *points, const long n, const int dim,
                            __global const double *centres, const int k, __global int *labels,
                            __global double *d2, __global int *changed)
{
  const size_t i = get_global_id(0);
  if (i >= (size_t)n)
    return;
  __global const float *p = points + i * dim;
  int best = 0;
  double bd = DBL_MAX;
  for (int c = 0; c < k; c++) {
    const double d = dist2(p, centres + (size_t)c * dim, dim);
    if (d < bd) {
      bd = d;
      best = c;
    }
  }
  if (labels[i] != best)
    atomic_inc(changed);
  labels[i] = best;
  d2[i] = bd;
}

/* Work-item (b, c dim + j): sums[(b k + c) dim + j] = the sum of coordinate j over chunk b's
 * points labelled c, in index order; counts[b k + c] their number (from j = 0). */
__kernel void kmeans_sums(__global const float *points, __global const int *labels, const long n,
                          const int dim, const int k, const int nchunk, __global double *sums,
                          __global long *counts)
{
  const int b = get_global_id(0), cj = get_global_id(1);
  if (b >= nchunk)
    return;
  const int c = cj / dim, j = cj % dim;
  const ulong lo = (ulong)n * b / nchunk, hi = (ulong)n * (b + 1) / nchunk;
  double s = 0.0;
  long count = 0;
  for (ulong i = lo; i < hi; i++)
    if (labels[i] == c) {
      s += (double)points[i * dim + j];
      count++;
    }
  sums[((size_t)b * k + c) * dim + j] = s;
  if (j == 0)
    counts[(size_t)b * k + c] = count;
}

/* out[b] = the sum of chunk b's d2, in index order. */
__kernel void kmeans_chunk_sums(__global const double *d2, const long n, const int nchunk,
                                __global double *out)
{
  const int b = get_global_id(0);
  if (b >= nchunk)
    return;
  const ulong lo = (ulong)n * b / nchunk, hi = (ulong)n * (b + 1) / nchunk;
  double s = 0.0;
  for (ulong i = lo; i < hi; i++)
    s += d2[i];
  out[b] = s;
}

/* Work-item c dim + j: out[c dim + j] = the sum over the chunks b, in order, of sums[(b k + c)
 * dim + j]; out_counts[c] the same of counts[b k + c] (from j = 0). */
__kernel void kmeans_reduce(__global const double *sums, __global const long *counts, const int dim,
                            const int k, const int nchunk, __global double *out,
                            __global long *out_counts)
{
  const int cj = get_global_id(0);
  if (cj >= k * dim)
    return;
  const int c = cj / dim, j = cj % dim;
  double s = 0.0;
  long count = 0;
  for (int b = 0; b < nchunk; b++) {
    s += sums[((size_t)b * k + c) * dim + j];
    count += counts[(size_t)b * k + c];
  }
  out[cj] = s;
  if (j == 0)
    out_counts[c] = count;
}
