/* bench's figures as text: the table on the terminal, --json and --csv, and the policy every
 * result file follows (staged and renamed into place; a path that is not a regular file, such as
 * /dev/stdout or a FIFO, written through). */
#include "bench_internal.h"
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- result files ---- */

int bench_file_open(bench_file *f, const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  struct stat st;
  int status;
  memset(f, 0, sizeof(*f));
  f->name = slash ? slash + 1 : path;
  if (!*f->name)
    return dsg_error_set(DSG_ERR_INVALID, "'%s' names a folder, not a file", path);
  if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    snprintf(f->tmpdir, sizeof(f->tmpdir), "/tmp/diaseg-bench-XXXXXX");
    if (!mkdtemp(f->tmpdir))
      return dsg_error_set(DSG_ERR_IO, "cannot create a folder in /tmp: %s", strerror(errno));
    f->direct = path;
    return app_out_begin(&f->out, f->tmpdir);
  }
  if (slash) {
    dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dir)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  }
  status = app_out_begin(&f->out, dir ? dir : ".");
  free(dir);
  return status;
}

int bench_file_commit(bench_file *f, int status)
{
  if (f->fp) {
    int st = app_out_close(f->out, f->fp);
    status = status == DSG_OK ? st : status;
  }
  if (status == DSG_OK)
    status = app_out_commit(f->out, NULL);
  app_out_destroy(f->out);
  if (f->direct) {
    char staged[128];
    snprintf(staged, sizeof(staged), "%s/%s", f->tmpdir, f->name);
    if (status == DSG_OK) {
      unsigned char *buf = NULL;
      size_t len = 0;
      status = app_read_file(staged, &buf, &len);
      if (status == DSG_OK)
        status = app_write_direct(f->direct, (const char *)buf, len);
      free(buf);
    }
    unlink(staged);
    rmdir(f->tmpdir);
  }
  memset(f, 0, sizeof(*f));
  return status;
}

int bench_file_probe(const char *path)
{
  bench_file f;
  int status = bench_file_open(&f, path);
  if (status == DSG_OK)
    status = app_out_open(f.out, f.name, &f.fp);
  app_out_destroy(f.out); /* removes the probe, and a folder it created */
  if (f.direct) {
    rmdir(f.tmpdir);
    if (status == DSG_OK && access(f.direct, W_OK) != 0)
      status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", f.direct, strerror(errno));
  }
  return status;
}

/* ---- the table ---- */

/* "backend/kernel", the table's name of a row */
static void table_name(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->backend, r->kernel[0] ? "/" : "", r->kernel);
}

void bench_print_table(const bench *b, FILE *out)
{
  int wi = (int)strlen("input"), wb = (int)strlen("backend"), ws = (int)strlen("solver");
  char name[80];
  for (int i = 0; i < b->nrows; i++) { /* the text columns as wide as their longest entry */
    table_name(&b->rows[i], name, sizeof(name));
    wi = (int)strlen(b->rows[i].input) > wi ? (int)strlen(b->rows[i].input) : wi;
    wb = (int)strlen(name) > wb ? (int)strlen(name) : wb;
    ws = (int)strlen(b->rows[i].solver) > ws ? (int)strlen(b->rows[i].solver) : ws;
  }
  fprintf(out, "%-*s %-*s %-*s %8s %8s %7s %7s %5s %8s %6s %8s %7s %7s %7s %6s %7s\n", wi, "input",
          wb, "backend", ws, "solver", "spmv ms", "min ms", "GFLOP/s", "GB/s", "%bw", "solve s",
          "prod", "mv s", "xfer s", "orth s", "host s", "x spmv", "x solve");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    table_name(r, name, sizeof(name));
    fprintf(out, "%-*s %-*s %-*s %8.3f %8.3f %7.1f %7.1f %5.1f", wi, r->input, wb, name, ws,
            r->solver[0] ? r->solver : "-", r->spmv_median * 1e3, r->spmv_min * 1e3, r->gflops,
            r->gbs, r->bound_pct);
    if (r->solved)
      fprintf(out, " %8.3f %6ld %8.3f %7.3f %7.3f %7.3f %6.2f %7.2f\n", r->solve_s, r->matvecs,
              r->mv_kernel_s, r->mv_transfer_s, r->orth_s,
              r->solve_s - r->mv_kernel_s - r->mv_transfer_s - r->orth_s - r->other_dev_s,
              r->speedup_spmv, r->speedup_solve);
    else
      fprintf(out, " %8s %6s %8s %7s %7s %7s %6.2f %7s\n", "-", "-", "-", "-", "-", "-",
              r->speedup_spmv, "-");
  }
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0)
      fprintf(out, "# %s: %dx%d, n = %d, %d diagonals\n", r->input, r->width, r->height, r->n,
              r->ndiag);
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0 ||
        strcmp(r->backend, b->rows[i - 1].backend) != 0)
      fprintf(out, "#   %s = %s, copy bandwidth %.1f GB/s\n", r->backend, r->device, r->copy_gbs);
  }
}

/* ---- JSON and CSV ---- */

int bench_write_json(const bench *b, const char *path)
{
  const dsg_options *opt = &b->cfg->opt;
  app_json j;
  int status;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", dsg_version());
  app_json_int(&j, "nev", opt->nev);
  app_json_number(&j, "tol", opt->tol);
  app_json_int(&j, "repeat", b->cfg->repeat);
  app_json_bool(&j, "keep_specks", opt->keep_specks);
  app_json_int(&j, "radius", opt->radius);
  app_json_begin_array(&j, "results");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    app_json_begin_object(&j, NULL);
    app_json_string(&j, "input", r->input);
    app_json_int(&j, "width", r->width);
    app_json_int(&j, "height", r->height);
    app_json_int(&j, "n", r->n);
    app_json_int(&j, "ndiag", r->ndiag);
    app_json_string(&j, "backend", r->backend);
    app_json_string(&j, "device", r->device);
    app_json_string(&j, "device_short", r->device_short);
    app_json_string(&j, "kernel", r->kernel[0] ? r->kernel : NULL);
    app_json_string(&j, "solver", r->solver[0] ? r->solver : NULL);
    app_json_number(&j, "check_error", r->check_error);
    app_json_begin_object(&j, "spmv");
    app_json_number(&j, "median_s", r->spmv_median);
    app_json_number(&j, "min_s", r->spmv_min);
    app_json_number(&j, "gflops", r->gflops);
    app_json_number(&j, "effective_gbs", r->gbs);
    app_json_number(&j, "copy_gbs", r->copy_gbs);
    app_json_number(&j, "percent_of_copy_bandwidth", r->bound_pct);
    app_json_number(&j, "speedup_vs_cpu", r->speedup_spmv);
    app_json_end_object(&j);
    if (r->solved) {
      app_json_begin_object(&j, "solve");
      app_json_bool(&j, "converged", r->converged);
      app_json_int(&j, "nconv", r->nconv);
      app_json_int(&j, "matvecs", r->matvecs);
      app_json_number(&j, "total_s", r->solve_s);
      app_json_number(&j, "matvec_kernel_s", r->mv_kernel_s);
      app_json_number(&j, "matvec_transfer_s", r->mv_transfer_s);
      app_json_number(&j, "matvec_host_s", r->mv_host_s);
      app_json_number(&j, "eigensolver_host_s", r->eig_host_s);
      app_json_number(&j, "orthogonalization_s", r->orth_s);
      app_json_number(&j, "other_device_s", r->other_dev_s);
      app_json_int(&j, "lanczos_steps", r->steps);
      app_json_int(&j, "kernel_launches", r->launches);
      app_json_int(&j, "gram_schmidt_second_passes", r->second_passes);
      app_json_number(&j, "max_residual", r->max_residual);
      app_json_number(&j, "last_eigenvalue", r->lambda_last);
      app_json_number(&j, "speedup_vs_cpu", r->speedup_solve);
      app_json_end_object(&j);
    } else {
      app_json_null(&j, "solve");
    }
    app_json_end_object(&j);
  }
  app_json_end_array(&j);
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK) {
    if (strcmp(path, "-") == 0) {
      status = app_write_direct("-", j.buf, j.len); /* every write checked: a full disk, a pipe */
    } else {
      bench_file f;
      status = bench_file_open(&f, path);
      if (status == DSG_OK)
        status = app_out_text(f.out, f.name, j.buf, j.len);
      status = bench_file_commit(&f, status);
    }
  }
  app_json_free(&j);
  return status;
}

int bench_write_csv(const bench *b, const char *path)
{
  bench_file out;
  int status = bench_file_open(&out, path);
  if (status == DSG_OK)
    status = app_out_open(out.out, out.name, &out.fp);
  if (status != DSG_OK)
    return bench_file_commit(&out, status);
  FILE *f = out.fp;
  fprintf(f, "input,width,height,n,ndiag,backend,device,kernel,solver,check_error,spmv_median_s,"
             "spmv_min_s,gflops,effective_gbs,copy_gbs,percent_of_copy_bandwidth,solve_s,matvecs,"
             "matvec_kernel_s,matvec_transfer_s,matvec_host_s,eigensolver_host_s,"
             "orthogonalization_s,other_device_s,max_residual,speedup_spmv,speedup_solve\n");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    fprintf(f, "%s,%d,%d,%d,%d,%s,\"%s\",%s,%s,%.3g,%.6g,%.6g,%.4g,%.4g,%.4g,%.4g,", r->input,
            r->width, r->height, r->n, r->ndiag, r->backend, r->device, r->kernel, r->solver,
            r->check_error, r->spmv_median, r->spmv_min, r->gflops, r->gbs, r->copy_gbs,
            r->bound_pct);
    if (r->solved)
      fprintf(f, "%.6g,%ld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.3g,%.4g,%.4g\n", r->solve_s, r->matvecs,
              r->mv_kernel_s, r->mv_transfer_s, r->mv_host_s, r->eig_host_s, r->orth_s,
              r->other_dev_s, r->max_residual, r->speedup_spmv, r->speedup_solve);
    else
      fprintf(f, ",,,,,,,,,%.4g,\n", r->speedup_spmv);
  }
  return bench_file_commit(&out, DSG_OK);
}
