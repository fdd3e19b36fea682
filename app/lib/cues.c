/* The cues: what a pixel's feature vector is, for the affinity's feature term
 * exp(-|f_i - f_j|^2 / sigma_i^2), and whether the intervening-contour term
 * exp(-max contour / sigma_c) of the boundary detector (contours.c) multiplies it. A table:
 * adding a cue is a row here and its function. */
#include "diaseg_internal.h"

#include <stdlib.h>
#include <string.h>

/* gray = (0.299 R + 0.587 G + 0.114 B) / 255, or v / 255 */
static void cue_intensity(const unsigned char *p, int c, float *f)
{
  double r = p[0], g = c >= 3 ? p[1] : p[0], b = c >= 3 ? p[2] : p[0];
  f[0] = c >= 3 ? (float)((0.299 * r + 0.587 * g + 0.114 * b) / 255.0) : (float)(r / 255.0);
}

/* (R, G, B) / 255; a gray image repeats v */
static void cue_color(const unsigned char *p, int c, float *f)
{
  double r = p[0], g = c >= 3 ? p[1] : p[0], b = c >= 3 ? p[2] : p[0];
  f[0] = (float)(r / 255.0);
  f[1] = (float)(g / 255.0);
  f[2] = (float)(b / 255.0);
}

static const app_cue cues[] = {
    {"intensity", "brightness differences", 1, cue_intensity, 0},
    {"color", "RGB differences", 3, cue_color, 0},
    {"contour", "intervening contours of the boundary detector", 0, NULL, 1},
    {"contour+color", "intervening contours and RGB differences", 3, cue_color, 1},
};

int dsg_cue_count(void) { return (int)(sizeof(cues) / sizeof(cues[0])); }

const char *dsg_cue_name(int i) { return i >= 0 && i < dsg_cue_count() ? cues[i].name : NULL; }

int app_cue_find(const char *name, const app_cue **out)
{
  char names[128] = "";
  for (int i = 0; i < dsg_cue_count(); i++) {
    if (name && strcmp(name, cues[i].name) == 0) {
      *out = &cues[i];
      return DSG_OK;
    }
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
             cues[i].name);
  }
  *out = NULL;
  return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("affinity") " '%s' is not one of %s",
                       name ? name : "", names);
}

int app_features(const dsg_image *img, const app_cue *cue, float **out, int *nfeat)
{
  const size_t n = (size_t)img->width * (size_t)img->height;
  const int c = img->channels, nf = cue->nfeat;
  float *f = malloc((n * (size_t)nf > 0 ? n * (size_t)nf : 1) * sizeof(*f));
  *out = NULL;
  if (!f)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate features for %zu pixels", n);
  for (size_t i = 0; i < n && nf > 0; i++)
    cue->features(img->pixels + i * (size_t)c, c, f + i * (size_t)nf);
  *out = f;
  *nfeat = nf;
  return DSG_OK;
}
