/* bench --chart: the measurements as bar panels, one group per input and one colour per device
 * and kernel (--e2e: a stacked bar per run, one colour per stage), drawn on a canvas that is SVG
 * text or PNG pixels (the name ends in .png). */
#include "bench_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct canvas {
  FILE *svg;          /* SVG: elements go here */
  unsigned char *rgb; /* PNG: pixels */
  int png;            /* which of the two, known before either is open */
  int w, h;
} canvas;

static void hex_rgb(const char *hex, unsigned char c[3])
{
  unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
  c[0] = (unsigned char)(v >> 16);
  c[1] = (unsigned char)(v >> 8);
  c[2] = (unsigned char)v;
}

/* text as SVG character data: file names may hold &, < or > */
static void svg_escaped(FILE *f, const char *text)
{
  for (; *text; text++) {
    if (*text == '&')
      fputs("&amp;", f);
    else if (*text == '<')
      fputs("&lt;", f);
    else if (*text == '>')
      fputs("&gt;", f);
    else
      fputc(*text, f);
  }
}

static void cv_rect(canvas *cv, int x, int y, int w, int h, const char *fill, const char *title)
{
  if (cv->svg) {
    fprintf(cv->svg, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'>", x, y, w, h, fill);
    if (title) {
      fputs("<title>", cv->svg);
      svg_escaped(cv->svg, title);
      fputs("</title>", cv->svg);
    }
    fprintf(cv->svg, "</rect>\n");
    return;
  }
  unsigned char c[3];
  hex_rgb(fill, c);
  for (int yy = y < 0 ? 0 : y; yy < y + h && yy < cv->h; yy++)
    for (int xx = x < 0 ? 0 : x; xx < x + w && xx < cv->w; xx++)
      memcpy(cv->rgb + 3 * ((size_t)yy * cv->w + xx), c, 3);
}

static void cv_hline(canvas *cv, int x1, int x2, int y, const char *color, int width)
{
  if (cv->svg)
    fprintf(cv->svg, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='%d'/>\n", x1,
            y, x2, y, color, width);
  else
    cv_rect(cv, x1, y - width / 2, x2 - x1, width, color, NULL);
}

/* The width of text in pixels: the PNG's font at scale 2; for SVG's 12 px sans-serif, an
 * estimate on the wide side (7 px a character). */
static int cv_text_width(const canvas *cv, const char *text)
{
  char buf[256];
  if (!cv->png)
    return 7 * (int)strlen(text);
  snprintf(buf, sizeof(buf), "%.255s", text);
  return 2 * app_font_width(buf);
}

/* text at (x, y) = baseline-left (anchor 0), centred (1) or right-aligned (2) */
static void cv_text(canvas *cv, int x, int y, const char *text, int anchor, int bold)
{
  if (cv->svg) {
    static const char *anchors[] = {"start", "middle", "end"};
    fprintf(cv->svg, "<text x='%d' y='%d' text-anchor='%s'%s>", x, y, anchors[anchor],
            bold ? " font-weight='bold'" : "");
    svg_escaped(cv->svg, text);
    fputs("</text>\n", cv->svg);
    return;
  }
  char buf[256];
  static char quads[60000];
  snprintf(buf, sizeof(buf), "%.255s", text);
  const int scale = 2, tw = app_font_width(buf) * scale;
  const int x0 = anchor == 0 ? x : anchor == 1 ? x - tw / 2 : x - tw;
  const int nq = app_font_quads(buf, quads, sizeof(quads));
  for (int q = 0; q < nq; q++) { /* axis-aligned quads: 4 vertices of x, y, z, colour */
    const float *v = (const float *)(quads + (size_t)q * 64);
    const int qx = (int)v[0], qy = (int)v[1], qw = (int)v[8] - qx, qh = (int)v[9] - qy;
    for (int dx = bold ? 1 : 0; dx >= 0; dx--)
      cv_rect(cv, x0 + qx * scale + dx, y - 12 + qy * scale, qw * scale, qh * scale, "#000000",
              NULL);
  }
}

/* Whether value, as a bar's label, fits in a bar bw pixels wide. */
static int cv_value_fits(const canvas *cv, int bw, double value)
{
  char text[32];
  snprintf(text, sizeof(text), "%.3g", value);
  return cv_text_width(cv, text) <= bw - 2;
}

/* A bar h pixels high on the baseline, with its value above it if labelled. */
static void cv_bar(canvas *cv, int x, int bw, int base, int h, const char *fill, const char *title,
                   double value, int labelled)
{
  char text[32];
  cv_rect(cv, x, base - h, bw - 2, h, fill, title);
  snprintf(text, sizeof(text), "%.3g", value);
  if (labelled)
    cv_text(cv, x + (bw - 2) / 2, base - h - 4, text, 1, 0);
}

/* A chart series, one colour: the device's short name and the kernel ("NVIDIA H200, aligned") */
static void series_label(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->device_short, r->kernel[0] ? ", " : "", r->kernel);
}

enum { CHART_ROWS = 1024, CHART_SERIES = 32, CHART_SOLVERS = 8 };

static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/* A linear axis up to max: four ticks of a round step, with headroom over max; returns its top
 * and writes the 5 ticks (0 included). */
static double round_axis(double max, double ticks[5])
{
  const double raw = 1.05 * max / 4, mag = pow(10, floor(log10(raw)));
  static const double steps[] = {1, 2, 2.5, 5, 10};
  int m = 0;
  while (m < 4 && steps[m] * mag < raw)
    m++;
  for (int t = 0; t <= 4; t++)
    ticks[t] = 4 * steps[m] * mag * t / 4;
  return 4 * steps[m] * mag;
}

/* Stages the chart of W x H for path: a white canvas, SVG's header written. On an error, out is
 * committed (dropped) and the error returned. */
static int canvas_open(canvas *cv, bench_file *out, const char *path, int W, int H)
{
  int status = bench_file_open(out, path);
  cv->w = W;
  cv->h = H;
  if (status == DSG_OK && cv->png) {
    cv->rgb = malloc((size_t)W * H * 3);
    if (!cv->rgb)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the chart");
    else
      memset(cv->rgb, 255, (size_t)W * H * 3);
  } else if (status == DSG_OK) {
    status = app_out_open(out->out, out->name, &out->fp);
    cv->svg = out->fp;
  }
  if (status != DSG_OK)
    return bench_file_commit(out, status);
  if (cv->svg)
    fprintf(cv->svg,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif' font-size='12'>\n<rect width='100%%' "
            "height='100%%' fill='white'/>\n",
            W, H);
  return DSG_OK;
}

/* Ends the chart and puts it in place. */
static int canvas_close(canvas *cv, bench_file *out)
{
  int status = DSG_OK;
  if (cv->svg)
    fprintf(cv->svg, "</svg>\n");
  else
    status = app_out_png(out->out, out->name, cv->w, cv->h, 3, cv->rgb);
  free(cv->rgb);
  return bench_file_commit(out, status);
}

/* A solver's place in bench's order (bench_solver_name), or -1 for a name not in it. */
static int solver_index(const char *name, int nsolvers)
{
  for (int s = 0; s < nsolvers; s++)
    if (strcmp(name, bench_solver_name(s)) == 0)
      return s;
  return -1;
}

/* Bar panels with one group per input and one colour per device and kernel, named in a legend:
 * the eigensolve's seconds (log scale) in one sub-group per solver, when anything was solved, and
 * the SpMV's effective GB/s, one bar per device and kernel (the SpMV figures are the same for
 * every solver), with the device's copy bandwidth as a black tick. */
static int spmv_chart(const bench *b, const char *path)
{
  char series[CHART_SERIES][100], name[100], label[256], tick[32];
  int nser = 0, ninputs = 0, group_of[CHART_ROWS], series_of[CHART_ROWS], status = DSG_OK;
  /* the solve panel's sub-groups: one per solver that has a bar, in bench's order */
  const int nsolvers = bench_solver_count() < CHART_SOLVERS ? bench_solver_count() : CHART_SOLVERS;
  int has_solver[CHART_SOLVERS] = {0}, slot_of[CHART_SOLVERS], nsol = 0;
  double max_gbs = 1, max_s = 1e-3, min_s = 1e9, ticks[2][16];
  int nticks[2] = {0, 0};
  const int nrows = b->nrows < CHART_ROWS ? b->nrows : CHART_ROWS;
  const size_t plen = strlen(path);
  const int png = plen > 4 && strcasecmp(path + plen - 4, ".png") == 0;
  canvas cv = {0};
  bench_file out;
  cv.png = png;
  for (int i = 0; i < nrows; i++) {
    const bench_row *r = &b->rows[i];
    int k;
    series_label(r, name, sizeof(name));
    for (k = 0; k < nser && strcmp(series[k], name) != 0; k++)
      ;
    if (k == nser && nser < CHART_SERIES)
      snprintf(series[nser++], sizeof(series[0]), "%s", name);
    series_of[i] = k < nser ? k : -1;
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0)
      ninputs++;
    group_of[i] = ninputs - 1;
    max_gbs = fmax(max_gbs, fmax(r->gbs, r->copy_gbs));
    if (r->solved && r->solve_s > 0) {
      const int s = solver_index(r->solver, nsolvers);
      if (s >= 0)
        has_solver[s] = 1;
      max_s = fmax(max_s, r->solve_s);
      min_s = fmin(min_s, r->solve_s);
    }
  }
  for (int s = 0; s < nsolvers; s++) { /* a sub-group's place among those with bars */
    slot_of[s] = nsol;
    nsol += has_solver[s];
  }
  const int npanels = nsol ? 2 : 1;
  max_gbs = round_axis(max_gbs, ticks[1]); /* GB/s: headroom over the highest bar or tick */
  nticks[1] = 5;
  if (min_s > max_s)
    min_s = max_s / 10;
  const double lo = pow(10, floor(log10(min_s))), hi = fmax(pow(10, ceil(log10(max_s))), 10 * lo);
  { /* seconds: every decade (every other one over 8), and 2 and 5 within a single decade */
    const int decades = (int)lround(log10(hi / lo)), step = decades > 8 ? 2 : 1;
    for (int t = 0; t <= decades && nticks[0] < 14; t += step)
      ticks[0][nticks[0]++] = lo * pow(10, t);
    if (decades == 1) {
      ticks[0][nticks[0]++] = 2 * lo;
      ticks[0][nticks[0]++] = 5 * lo;
    }
  }
  int left = 40;
  for (int p = 2 - npanels; p < 2; p++)
    for (int t = 0; t < nticks[p]; t++) {
      snprintf(tick, sizeof(tick), "%g", ticks[p][t]);
      left = cv_text_width(&cv, tick) + 12 > left ? cv_text_width(&cv, tick) + 12 : left;
    }
  int colw = 0; /* the legend: as many columns as its longest name allows */
  for (int k = 0; k < nser; k++)
    colw = cv_text_width(&cv, series[k]) + 40 > colw ? cv_text_width(&cv, series[k]) + 40 : colw;
  const int W = 960, PH = 240, right = 20, top = 40, plot_w = W - left - right;
  const int gw = plot_w / (ninputs ? ninputs : 1),
            ncols = colw && plot_w / colw ? plot_w / colw : 1;
  const int panel_h[2] = {38 + PH + 48, 38 + PH + 36}; /* title, plot, axis labels */
  const int legend_y = top + (nsol ? panel_h[0] : 0) + panel_h[1];
  const int H = legend_y + 20 * ((nser + ncols - 1) / ncols) + 10;
  status = canvas_open(&cv, &out, path, W, H);
  if (status != DSG_OK)
    return status;
  if (nsol)
    snprintf(label, sizeof(label), "diaseg bench: eigensolve nev %d, tol %g; SpMV median of %d",
             b->cfg->opt.nev, b->cfg->opt.tol, b->cfg->repeat);
  else
    snprintf(label, sizeof(label), "diaseg bench: SpMV, median of %d", b->cfg->repeat);
  cv_text(&cv, left, 22, label, 0, 1);
  for (int panel = 2 - npanels, y0 = top; panel < 2; y0 += panel_h[panel], panel++) {
    const int base = y0 + 38 + PH; /* the bars' baseline */
    cv_text(&cv, left, y0 + 14,
            panel == 0 ? "Eigensolve time, seconds (log scale, lower is better)"
                       : "SpMV effective bandwidth, GB/s (higher is better; "
                         "black ticks: copy bandwidth)",
            0, 1);
    for (int t = 0; t < nticks[panel]; t++) {
      const double v = ticks[panel][t];
      const int y =
          base - (int)lround(PH * (panel == 0 ? log(v / lo) / log(hi / lo) : v / max_gbs));
      cv_hline(&cv, left, W - right, y, "#dddddd", 1);
      snprintf(tick, sizeof(tick), "%g", v);
      cv_text(&cv, left - 6, y + 5, tick, 2, 0);
    }
    cv_hline(&cv, left, W - right, base, "#000000", 1);
    const int sgw = (gw - 10) / (nsol ? nsol : 1); /* a solver's sub-group */
    const int per = (panel == 0 ? sgw - 10 : gw - 20) / (nser ? nser : 1);
    const int bw = per > 90 ? 90 : per < 3 ? 3 : per; /* a bar and its 2-pixel gap */
    int labelled = 1; /* every bar's value above it, or none where one of them does not fit */
    for (int i = 0; i < nrows; i++)
      if (panel == 1 || (b->rows[i].solved && b->rows[i].solve_s > 0))
        labelled =
            labelled && cv_value_fits(&cv, bw, panel == 0 ? b->rows[i].solve_s : b->rows[i].gbs);
    for (int i = 0; i < nrows; i++) {
      const bench_row *r = &b->rows[i];
      const int k = series_of[i], g = group_of[i];
      int x, dup = 0;
      double frac;
      if (k < 0)
        continue;
      if (panel == 0) {
        const int s = solver_index(r->solver, nsolvers);
        if (!r->solved || !(r->solve_s > 0) || s < 0)
          continue;
        x = left + g * gw + 5 + slot_of[s] * sgw + (sgw - nser * bw) / 2 + k * bw;
        frac = log(r->solve_s / lo) / log(hi / lo);
        snprintf(label, sizeof(label), "%s %s, %s: solve %.4g s", r->input, series[k], r->solver,
                 r->solve_s);
      } else {
        for (int j = 0; j < i && !dup; j++) /* another solver's row of the same SpMV */
          dup = group_of[j] == g && series_of[j] == k;
        if (dup)
          continue;
        x = left + g * gw + (gw - nser * bw) / 2 + k * bw;
        frac = r->gbs / max_gbs;
        snprintf(label, sizeof(label), "%s %s: SpMV %.4g GB/s, copy %.4g GB/s", r->input, series[k],
                 r->gbs, r->copy_gbs);
      }
      frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
      const int h = (int)(PH * frac) > 2 ? (int)(PH * frac) : 2;
      cv_bar(&cv, x, bw, base, h, colors[k % 10], label, panel == 0 ? r->solve_s : r->gbs,
             labelled);
      if (panel == 1 && r->copy_gbs > 0)
        cv_rect(&cv, x, base - (int)(PH * fmin(1.0, r->copy_gbs / max_gbs)) - 1, bw - 2, 3,
                "#000000", NULL);
    }
    for (int i = 0; i < nrows; i++) {
      const int g = group_of[i];
      if (i > 0 && g == group_of[i - 1])
        continue;
      cv_text(&cv, left + g * gw + gw / 2, base + (panel == 0 ? 34 : 18), b->rows[i].input, 1, 1);
      for (int s = 0; panel == 0 && s < nsolvers; s++)
        if (has_solver[s])
          cv_text(&cv, left + g * gw + 5 + slot_of[s] * sgw + sgw / 2, base + 16,
                  bench_solver_name(s), 1, 0);
    }
  }
  for (int k = 0; k < nser; k++) {
    const int x = left + (k % ncols) * colw, y = legend_y + 20 * (k / ncols) + 12;
    cv_rect(&cv, x, y - 11, 12, 12, colors[k % 10], NULL);
    cv_text(&cv, x + 18, y, series[k], 0, 0);
  }
  return canvas_close(&cv, &out);
}

/* --e2e: a horizontal bar per run (input, device, kernel, solver), stacked by stage in the order
 * they run, one colour per stage named in the legend, the total at its end; a run without
 * figures (over the budget, skipped, interrupted) says so in place of its bar. */
static int e2e_chart(const bench *b, const char *path)
{
  enum { ROW_H = 22, BAR_H = 14 };
  const size_t plen = strlen(path);
  const int nrows = b->nrows < CHART_ROWS ? b->nrows : CHART_ROWS;
  char name[300], series[100], label[300], tick[32];
  double ticks[5], max_s = 1e-3;
  canvas cv = {0};
  bench_file out;
  int status, left = 0;
  cv.png = plen > 4 && strcasecmp(path + plen - 4, ".png") == 0;
  for (int i = 0; i < nrows; i++) {
    const bench_row *r = &b->rows[i];
    series_label(r, series, sizeof(series));
    snprintf(name, sizeof(name), "%s  %s, %s", r->input, series, r->solver);
    left = cv_text_width(&cv, name) + 16 > left ? cv_text_width(&cv, name) + 16 : left;
    if (r->solved)
      max_s = fmax(max_s, r->total_s);
  }
  left = left < 120 ? 120 : left > 480 ? 480 : left;
  max_s = round_axis(max_s, ticks);
  const int W = 960, right = 70, top = 58, plot_w = W - left - right;
  const int legend_y = top + ROW_H * (nrows ? nrows : 1) + 34;
  const int H = legend_y + 20 * ((BENCH_STAGE_COUNT + 3) / 4) + 10;
  status = canvas_open(&cv, &out, path, W, H);
  if (status != DSG_OK)
    return status;
  snprintf(tick, sizeof(tick), "%g", b->cfg->opt.tol);
  snprintf(label, sizeof(label),
           "diaseg bench --e2e: segment, stage by stage (nev %d, tol %s), seconds", b->cfg->opt.nev,
           b->cfg->opt.tol > 0.0 ? tick : "segment's");
  cv_text(&cv, 10, 22, label, 0, 1);
  const int base = top + ROW_H * (nrows ? nrows : 1); /* the axis, below the bars */
  for (int t = 0; t < 5; t++) {
    const int x = left + (int)lround(plot_w * ticks[t] / max_s);
    cv_rect(&cv, x, top - 4, 1, base - top + 4, "#dddddd", NULL);
    snprintf(tick, sizeof(tick), "%g", ticks[t]);
    cv_text(&cv, x, base + 16, tick, 1, 0);
  }
  for (int i = 0; i < nrows; i++) {
    const bench_row *r = &b->rows[i];
    const int y = top + ROW_H * i, yb = y + (ROW_H - BAR_H) / 2;
    double at = 0.0;
    series_label(r, series, sizeof(series));
    snprintf(name, sizeof(name), "%s  %s, %s", r->input, series, r->solver);
    cv_text(&cv, left - 8, y + 15, name, 2, 0);
    if (!r->solved) {
      cv_text(&cv, left + 4, y + 15, bench_state_name(r->state), 0, 0);
      continue;
    }
    for (int s = 0; s < BENCH_STAGE_COUNT; s++) {
      const int x0 = left + (int)lround(plot_w * at / max_s);
      at += r->stage_s[s];
      const int x1 = left + (int)lround(plot_w * at / max_s);
      snprintf(label, sizeof(label), "%s %s: %s %.4g s", r->input, r->backend, bench_stage_name(s),
               r->stage_s[s]);
      if (x1 > x0)
        cv_rect(&cv, x0, yb, x1 - x0, BAR_H, colors[s % 10], label);
    }
    snprintf(tick, sizeof(tick), "%.3g", r->total_s);
    cv_text(&cv, left + (int)lround(plot_w * at / max_s) + 4, y + 15, tick, 0, 0);
  }
  cv_hline(&cv, left, W - right, base, "#000000", 1);
  for (int s = 0; s < BENCH_STAGE_COUNT; s++) {
    const int colw = (W - 20) / 4, x = 10 + (s % 4) * colw, y = legend_y + 20 * (s / 4) + 12;
    cv_rect(&cv, x, y - 11, 12, 12, colors[s % 10], NULL);
    cv_text(&cv, x + 18, y, bench_stage_name(s), 0, 0);
  }
  return canvas_close(&cv, &out);
}

int bench_write_chart(const bench *b, const char *path)
{
  return b->cfg->e2e ? e2e_chart(b, path) : spmv_chart(b, path);
}
