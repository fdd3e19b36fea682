#!/bin/sh
# The whole test suite, as CI runs it (README, "Quick start" command 2; .ci/run):
#   1. a Release build and every ctest test (PoCL is the OpenCL device);
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer, leaks included
#      (narrow suppressions for the OpenCL runtime in tests/sanitizers/), then the sanitized
#      `diaseg segment` on every sample image in data/, on the C path and on PoCL, and
#      `diaseg contours` (the edge forest) on each;
#   3. a bounded libFuzzer run of the image loader and the command line (30 s each, fixed seed).
# Needs diaseg's build dependencies and clang, libclang-rt-14-dev, libomp-14-dev, llvm-14.
#
#   tests/run_all.sh                      everything
#   tests/run_all.sh --sanitized-cli DIR  only step 2's CLI runs, with the sanitized build in DIR
set -e
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=$(nproc)

# The sanitizers' settings for step 2. fast_unwind_on_malloc=0 and a deep malloc context: PoCL and
# LLVM have no frame pointers, and lsan.supp names a frame inside PoCL, not a whole library.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:fast_unwind_on_malloc=0:malloc_context_size=128
export LSAN_OPTIONS=suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=suppressions=$ROOT/tests/sanitizers/ubsan.supp:print_stacktrace=1:halt_on_error=1
# The test programs link the library directly (no diaseg main() to set it): their OpenMP threads
# wait passively too, so tests beside other work do not spin against it (docs/PERFORMANCE.md)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

# One run of the sanitized CLI ($diaseg with the arguments after LABEL): counted in runs, and in
# failed on a non-zero exit or any sanitizer report. Run once more where LeakSanitizer's own tracer
# crashed as the process exited, an intermittent fault of the sanitizer's runtime, not a report
# (tests/cli/checks.py, tracer_crashed); a run with a sanitizer's report is never run again.
sanitized_run() {
  label=$1
  shift
  runs=$((runs + 1))
  rc=0
  "$diaseg" "$@" 2>"$scratch/err" || rc=$?
  if [ "$rc" -ne 0 ] && grep -q "LeakSanitizer has encountered a fatal error" "$scratch/err" &&
    ! grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" "$scratch/err"; then
    echo "note: $label: LeakSanitizer's tracer crashed at exit, running once more"
    rc=0
    "$diaseg" "$@" 2>"$scratch/err" || rc=$?
  fi
  if [ "$rc" -eq 0 ] && ! grep -q "Sanitizer\|runtime error" "$scratch/err"; then
    echo "ok: $label"
  else
    echo "FAILED: $label (exit $rc):"
    cat "$scratch/err"
    failed=$((failed + 1))
  fi
}

# The sanitized CLI on every sample image (small, so that it takes seconds), on the C path and on
# PoCL: fails on a non-zero exit or any sanitizer report (LeakSanitizer exits non-zero too).
sanitized_cli() {
  diaseg=$1/app/diaseg
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/diaseg-sanitized-cli.XXXXXX")
  failed=0 runs=0
  for image in "$ROOT"/data/*.png "$ROOT"/data/*.jpg; do
    [ -f "$image" ] || continue
    name=$(basename "$image")
    for matvec in cpu opencl; do
      sanitized_run "segment $name --resize 96x64 --matvec $matvec" \
        segment "$image" --resize 96x64 --matvec "$matvec" -q -o "$scratch/out"
    done
    # and the contours alone with the default detector, the edge forest (host only)
    sanitized_run "contours $name --resize 96x64" \
      contours "$image" --resize 96x64 -q -o "$scratch/out_contours"
  done
  rm -rf "$scratch"
  if [ "$runs" -lt 15 ]; then
    echo "FAILED: $runs runs: data/ should hold the five sample images"
    return 1
  fi
  echo "sanitized CLI: $runs runs, $failed failed"
  [ "$failed" -eq 0 ]
}

if [ "$1" = "--sanitized-cli" ]; then
  sanitized_cli "${2:-build-asan}"
  exit
fi

echo "== 1. Release build and tests"
(unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
 cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
 cmake --build build -j"$JOBS"
 ctest --test-dir build --output-on-failure)

echo "== 2. AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIASEG_SANITIZE=ON
cmake --build build-asan -j"$JOBS"
ctest --test-dir build-asan --output-on-failure
echo "== 2b. The sanitized CLI on every sample image (C path and PoCL, leaks included)"
sanitized_cli build-asan

echo "== 3. Bounded fuzzing (30 s per target)"
(unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
 SEED=20261121 FORK=0 tests/fuzz/run_fuzz.sh 30 "$ROOT/build-fuzz")

# 4. The Python package: `pip install .` into a fresh venv (PyPI for scikit-build-core, NumPy,
# SciPy, pytest; Debian's python3-venv), then tests/python against the installed package.
python_package() {
  venv=$(mktemp -d "${TMPDIR:-/tmp}/diaseg-venv.XXXXXX")
  python3 -m venv "$venv"
  rc=0
  "$venv/bin/pip" install -q "$ROOT" pytest &&
    (cd "$ROOT" && unset DIASEG_LIBRARY PYTHONPATH &&
     "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python --diaseg build/app/diaseg \
       --data data) || rc=$?
  rm -rf "$venv"
  return $rc
}
echo "== 4. The Python package: pip install . into a fresh venv, then its tests against the installed package"
(unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; python_package)
