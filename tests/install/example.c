/* A program of a libdiaseg user: built against the installed header with pkg-config (shared and
 * static) by check_install.sh. Segments a synthetic two-region image and checks the labels, then
 * runs the boundary detector (the default: the edge forest, whose model is inside the library)
 * on it and checks that its one contour lies along the step. */
#include <diaseg.h>

#include <stdio.h>

int main(void)
{
  enum { W = 40, H = 30 };
  static unsigned char px[W * H];
  dsg_image img = {W, H, 1, px};
  dsg_options opt;
  dsg_result *r = NULL;
  int wrong = 0;
  for (int i = 0; i < W * H; i++)
    px[i] = (unsigned char)(i % W < W / 2 ? 50 : 200);
  dsg_options_init(&opt);
  opt.k = 2;
  opt.nev = 3;
  opt.matvec = "cpu";
  if (dsg_segment(&img, &opt, &r) != DSG_OK) {
    fprintf(stderr, "example: %s\n", dsg_error_message());
    return 1;
  }
  for (int i = 0; i < W * H; i++)
    wrong += dsg_result_labels(r)[i] != (i % W < W / 2 ? 0 : 1);
  printf("diaseg %s: %d segments, %d pixels off, lambda_2 = %.6f\n", dsg_version(), opt.k, wrong,
         dsg_result_eigenvalues(r)[1]);
  dsg_result_destroy(r);
  {
    float *strength = NULL;
    int off = 0;
    if (dsg_contours(&img, NULL, &strength, NULL) != DSG_OK) {
      fprintf(stderr, "example: %s\n", dsg_error_message());
      return 1;
    }
    /* the step lies between columns W/2 - 1 and W/2: the contour on one of them, in every row
     * but the 5 nearest the top and bottom (the forest's map tapers to 0 there); faint marks at
     * most elsewhere */
    for (int y = 0; y < H; y++) {
      const float *row = strength + y * W;
      off += y >= 5 && y < H - 5 && !(row[W / 2 - 1] > 0.5f || row[W / 2] > 0.5f);
      for (int x = 0; x < W; x++)
        off += (x < W / 2 - 1 || x > W / 2) && !(row[x] < 0.15f);
    }
    printf("contours: %d pixels off\n", off);
    wrong += off;
    dsg_free(strength);
  }
  return wrong == 0 ? 0 : 1;
}
