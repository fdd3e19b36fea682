/* libFuzzer harness: app_cli_parse. Input: the arguments, each terminated by a NUL byte
 * (argv[0] = "diaseg", at most 64 arguments). A broken contract (fuzz_targets.h) aborts with the
 * reason on stderr. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char why[512];
  if (fuzz_cli_one(data, size, why, sizeof(why))) {
    fprintf(stderr, "\nfuzz_cli: contract broken: %s\n", why);
    fflush(stderr);
    __builtin_trap();
  }
  return 0;
}
