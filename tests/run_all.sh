#!/bin/sh
# The whole test suite, as CI runs it (README, "Quick start" command 2; .ci/run):
#   1. a Release build and every ctest test (PoCL is the OpenCL device);
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer, leaks included
#      (narrow suppressions for the OpenCL runtime in tests/sanitizers/);
#   3. a bounded libFuzzer run of the image loader and the command line (30 s each, fixed seed).
# Needs diaseg's build dependencies and clang, libclang-rt-14-dev, libomp-14-dev, llvm-14.
set -e
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=$(nproc)

echo "== 1. Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure

echo "== 2. AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIASEG_SANITIZE=ON
cmake --build build-asan -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1 \
LSAN_OPTIONS=suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0 \
UBSAN_OPTIONS=suppressions=$ROOT/tests/sanitizers/ubsan.supp:print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure

echo "== 3. Bounded fuzzing (30 s per target)"
SEED=20261121 FORK=0 tests/fuzz/run_fuzz.sh 30 "$ROOT/build-fuzz"
