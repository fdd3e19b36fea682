/* A program of a libdiaseg user: built against the installed header with pkg-config (shared and
 * static) by check_install.sh. Segments a synthetic two-region image and checks the labels. */
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
  return wrong == 0 ? 0 : 1;
}
