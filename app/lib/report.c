/* The report of a run (report.json; docs/CLI.md lists every field). */
#include "diaseg_internal.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One k's segmentation: whether it was written (enough pairs converged), the k-means inertia, the
 * eigenvectors of its embedding and the localised ones passed over. `with_k` names the k (the
 * entries of "segmentations"; "segmentation" keeps its earlier keys). */
static void json_grouping(app_json *j, const char *key, const app_grouping *g, int with_k)
{
  app_json_begin_object(j, key);
  if (with_k)
    app_json_int(j, "k", g->k);
  app_json_bool(j, "written", g->labels != NULL);
  if (g->labels)
    app_json_int(j, "segments", g->segments);
  if (g->labels && g->hierarchy) {
    app_json_number(j, "level", g->level); /* the UCM threshold between this cut's regions */
  } else if (g->labels) {
    app_json_number(j, "kmeans_inertia", g->inertia);
    app_json_begin_array(j, "embedding_vectors");
    for (int q = 0; q < g->k && g->k > 1; q++)
      app_json_int(j, NULL, g->pick[q]);
    app_json_end_array(j);
    app_json_int(j, "localised_vectors_skipped", g->skipped);
  }
  app_json_end_object(j);
}

static void json_numbers(app_json *j, const char *key, const double *v, int n)
{
  app_json_begin_array(j, key);
  for (int i = 0; i < n; i++)
    app_json_number(j, NULL, v[i]);
  app_json_end_array(j);
}

int dsg_result_report(const dsg_result *r, const dsg_report_info *info, char **json, size_t *len)
{
  static const dsg_report_info none = {0};
  const dsg_options *opt = &r->opt;
  const eig_result *e = &r->eig;
  const char *command;
  app_json j;
  double max_res = 0.0;
  int status;

  *json = NULL;
  *len = 0;
  if (!info)
    info = &none;
  command = info->command ? info->command : opt->k > 0 ? "segment" : "eigs";
  for (int i = 0; i < e->nconv; i++)
    max_res = e->residuals[i] > max_res ? e->residuals[i] : max_res;

  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", DIASEG_VERSION);
  app_json_string(&j, "command", command);
  app_json_string(&j, "image", info->image);
  app_json_int(&j, "width", r->width);
  app_json_int(&j, "height", r->height);
  app_json_int(&j, "channels", r->channels);
  /* the working resolution: the size of the eigenvectors, the degrees and the hierarchy */
  app_json_begin_object(&j, "work");
  app_json_int(&j, "width", r->work_width);
  app_json_int(&j, "height", r->work_height);
  app_json_int(&j, "pixels_cap", r->opt.work_pixels);
  app_json_end_object(&j);
  app_json_int(&j, "n", (long long)r->width * r->height);
  app_json_int(&j, "nev", opt->nev);
  if (opt->k > 0)
    app_json_int(&j, "k", opt->k); /* the first k of a list */
  else
    app_json_null(&j, "k");
  if (r->ngroups > 0) {
    app_json_begin_array(&j, "ks");
    for (int g = 0; g < r->ngroups; g++)
      app_json_int(&j, NULL, r->groups[g].k);
    app_json_end_array(&j);
  } else {
    app_json_null(&j, "ks");
  }
  /* how the scale was chosen: by the caller (k, a list, a threshold) or automatically */
  app_json_begin_object(&j, "scale");
  app_json_bool(&j, "auto", r->k_auto);
  if (r->k_auto && r->opt.threshold > 0.0) {
    char rule[160];
    snprintf(rule, sizeof(rule),
             "the hierarchy cut at level %g, the UCM threshold of the best Covering and boundary "
             "F on BSDS500 train",
             r->opt.threshold);
    app_json_string(&j, "rule", rule);
  } else if (r->k_auto)
    app_json_string(&j, "rule",
                    "k-means at the k before the largest eigengap "
                    "lambda_k - lambda_(k+1), 2 <= k < nev");
  else
    app_json_string(&j, "rule", opt->threshold > 0.0 ? "the caller's threshold" : "the caller's k");
  app_json_end_object(&j);
  app_json_begin_object(&j, "parameters");
  app_json_bool(&j, "keep_specks", opt->keep_specks);
  app_json_int(&j, "radius", opt->radius);
  app_json_number(&j, "sigma_i", opt->sigma_i);
  app_json_number(&j, "sigma_x", opt->sigma_x);
  app_json_number(&j, "sigma_c", opt->sigma_c);
  app_json_string(&j, "affinity", opt->affinity);
  app_json_string(&j, "detector", dsg_options_detector(opt));
  app_json_number(&j, "tol", opt->tol);
  app_json_int(&j, "max_iter", opt->max_iter);
  app_json_int(&j, "ncv", e->ncv);
  app_json_string(&j, "matvec", opt->matvec);
  app_json_string(&j, "solver", e->solver ? e->solver : app_solver(opt));
  app_json_bool(&j, "coarse_start", opt->coarse_start);
  app_json_int(&j, "seed", (long long)opt->seed);
  app_json_int(&j, "restarts", opt->restarts);
  app_json_string(&j, "grouping", opt->grouping);
  app_json_number(&j, "spectral_weight", opt->spectral_weight);
  app_json_int(&j, "min_region", opt->min_region);
  app_json_number(&j, "region_weight", opt->region_weight);
  app_json_number(&j, "forest_weight", opt->forest_weight);
  app_json_number(&j, "arc_weight", opt->arc_weight);
  app_json_number(&j, "net_weight", opt->net_weight);
  app_json_number(&j, "threshold", opt->threshold);
  if (info->max_pixels > 0)
    app_json_int(&j, "max_pixels", info->max_pixels);
  else
    app_json_null(&j, "max_pixels");
  /* the image's size before the caller resampled it */
  app_json_int(&j, "input_width", info->input_width > 0 ? info->input_width : r->width);
  app_json_int(&j, "input_height", info->input_height > 0 ? info->input_height : r->height);
  if (info->resize_width > 0) {
    app_json_begin_object(&j, "resize");
    app_json_int(&j, "width", info->resize_width);
    app_json_int(&j, "height", info->resize_height);
    app_json_end_object(&j);
  } else {
    app_json_null(&j, "resize");
  }
  /* the OpenCL settings in effect */
  app_json_string(&j, "cl_device", opt->cl_device && *opt->cl_device ? opt->cl_device : NULL);
  app_json_string(&j, "kernel_dir", opt->kernel_dir && *opt->kernel_dir ? opt->kernel_dir : NULL);
  if (opt->cl_max_alloc)
    app_json_int(&j, "cl_max_alloc", (long long)opt->cl_max_alloc);
  else
    app_json_null(&j, "cl_max_alloc");
  if (opt->cl_max_mem)
    app_json_int(&j, "cl_max_mem", (long long)opt->cl_max_mem);
  else
    app_json_null(&j, "cl_max_mem");
  if (opt->max_memory)
    app_json_int(&j, "max_memory", (long long)opt->max_memory);
  else
    app_json_null(&j, "max_memory");
  app_json_end_object(&j);
  app_json_begin_object(&j, "matrix");
  app_json_string(&j, "format", "dia");
  app_json_int(&j, "ndiag", r->ndiag);
  app_json_int(&j, "pitch", (long long)r->pitch);
  app_json_int(&j, "bytes", (long long)r->matrix_bytes);
  app_json_begin_array(&j, "offsets");
  for (int d = 0; d < r->ndiag; d++)
    app_json_int(&j, NULL, r->offsets[d]);
  app_json_end_array(&j);
  app_json_end_object(&j);
  app_json_int(&j, "components", r->components);
  app_json_int(&j, "significant_components", r->significant);
  app_json_int(&j, "speck_pixels", (long long)r->speck_pixels);
  app_json_int(&j, "specks_carved_from_eigenvectors", r->carved);
  app_json_int(&j, "eigensolves", r->solves);
  app_json_int(&j, "matvec_count_all_solves", r->matvecs_all);
  app_json_bool(&j, "converged", e->converged);
  app_json_int(&j, "converged_count", e->nconv);
  app_json_string(&j, "solver_status",
                  e->converged ? "converged" : "iteration limit reached: partial results");
  json_numbers(&j, "eigenvalues", e->values, e->nconv);
  json_numbers(&j, "residuals", e->residuals, e->nconv);
  app_json_number(&j, "max_residual", max_res);
  app_json_int(&j, "matvec_count", e->matvecs);
  app_json_int(&j, "arpack_iterations", e->iterations); /* restarts, whichever solver */
  app_json_int(&j, "iterations", e->iterations);
  app_json_string(&j, "matvec_backend", r->backend);
  if (r->has_cl) {
    const spmv_cl_info *cl = &r->cl;
    app_json_begin_object(&j, "opencl");
    app_json_string(&j, "platform", cl->platform);
    app_json_string(&j, "device", cl->device);
    app_json_string(&j, "kernel", spmv_kernel_name(cl->kernel));
    app_json_int(&j, "local_size", (long long)cl->local_size);
    if (cl->kernel == SPMV_KERNEL_IMAGE) {
      app_json_int(&j, "image_width", (long long)cl->image_width);
      app_json_int(&j, "image_height", (long long)cl->image_height);
    }
    app_json_end_object(&j);
  } else {
    app_json_null(&j, "opencl");
  }
  if (r->ngroups > 0) {
    json_grouping(&j, "segmentation", &r->groups[0], 0);
  } else {
    app_json_begin_object(&j, "segmentation");
    app_json_bool(&j, "written", 0);
    app_json_end_object(&j);
  }
  app_json_begin_array(&j, "segmentations");
  for (int g = 0; g < r->ngroups; g++)
    json_grouping(&j, NULL, &r->groups[g], 1);
  app_json_end_array(&j);
  app_json_begin_object(&j, "seconds");
  app_json_number(&j, "load", info->load_s);
  app_json_number(&j, "affinity", r->timing.affinity);
  app_json_number(&j, "contours", r->timing.contours);
  app_json_number(&j, "matvec_setup", r->timing.setup);
  app_json_number(&j, "solve", r->timing.solve);
  app_json_number(&j, "cluster", r->timing.cluster);
  app_json_number(&j, "resolution", r->timing.resolution); /* to the working size and back */
  app_json_number(&j, "write", info->write_s);
  app_json_number(&j, "total", info->total_s > 0 ? info->total_s : r->timing.total);
  app_json_begin_object(&j, "solve_split");
  app_json_number(&j, "matvec_total", e->matvec.total_s);
  app_json_number(&j, "matvec_kernel", e->matvec.kernel_s);
  app_json_number(&j, "matvec_transfer", e->matvec.transfer_s);
  app_json_number(&j, "matvec_host", e->matvec.host_s);
  app_json_number(&j, "eigensolver_host", e->host_s);
  if (e->basis.steps > 0) {
    app_json_int(&j, "lanczos_steps", e->basis.steps);
    app_json_int(&j, "kernel_launches", e->basis.launches);
    app_json_int(&j, "gram_schmidt_second_passes", e->basis.second_passes);
    app_json_number(&j, "projection", e->basis.project_s);
    app_json_number(&j, "orthogonalization", e->basis.orth_s);
    app_json_number(&j, "normalization", e->basis.normalize_s);
    app_json_number(&j, "restart", e->basis.restart_s);
  }
  if (r->coarse.width > 0) { /* chfsi's start from the image shrunk (coarse.c): part of solve */
    app_json_begin_object(&j, "coarse_start");
    app_json_int(&j, "width", r->coarse.width);
    app_json_int(&j, "height", r->coarse.height);
    app_json_int(&j, "products", (int)r->coarse.products);
    app_json_number(&j, "seconds", r->coarse.seconds); /* what the solve waited for */
    app_json_bool(&j, "beside", r->coarse.beside);     /* solved beside the device's work */
    app_json_bool(&j, "ahead", r->coarse.ahead);       /* solved ahead of the run (presolve) */
    if (r->coarse.ahead)
      app_json_number(&j, "ahead_seconds", r->coarse.worker_seconds); /* its own time */
    if (r->coarse.beside) {
      app_json_number(&j, "worker_seconds", r->coarse.worker_seconds); /* its own time */
      app_json_number(&j, "waited", r->coarse.waited); /* the setup's wait for the worker */
    }
    app_json_end_object(&j);
  }
  app_json_end_object(&j);
  app_json_end_object(&j);
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK) {
    *json = j.buf;
    *len = j.len;
    j.buf = NULL;
  }
  app_json_free(&j);
  return status;
}
