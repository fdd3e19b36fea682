#!/usr/bin/env bash
# Bounded fuzz run of diaseg's two libFuzzer harnesses (README.md in this folder).
#
#   tests/fuzz/run_fuzz.sh SECONDS [BUILD_DIR]
#
# Configures a clang build with AddressSanitizer + UndefinedBehaviorSanitizer and the fuzzers in
# BUILD_DIR (default /tmp/diaseg-fuzz-build), builds fuzz_image and fuzz_cli, runs each for SECONDS
# on a copy of its seed corpus, sorts the crash / leak / timeout / oom artifacts by what they
# trigger, copies one reproducer per new finding into regressions/<target>/, prints a summary and
# exits 1 if anything was found (0 if not, 2 if the run could not be set up).
#
# Environment:
#   TARGETS="image cli"  which fuzzers to run
#   PARALLEL=0           1: run the fuzzers at the same time instead of one after the other
#   JOBS=1               worker processes per fuzzer (libFuzzer -fork=JOBS)
#   FORK=1               0: plain libFuzzer mode, which stops at the first finding
#   SKIP_KNOWN=0         1: skip inputs that trigger an already reported stb_image bug
#                        (fuzz_image_known_issue in fuzz_targets.h), to get past them
#   ALL_ARTIFACTS=0      1: copy every artifact into regressions/, not one per finding
#   RESUME=0             1: start from the seeds plus the corpus the last run in BUILD_DIR grew
#   CC=clang             the compiler (clang-14 or later)
#   SEED=                libFuzzer's -seed (CI sets one, so that its run is reproducible)
#
# Debian 12: apt-get install -y clang libclang-rt-14-dev libomp-14-dev llvm-14 cmake pkg-config
# plus diaseg's build dependencies (README.md at the top of the project).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DURATION=${1:-}
BUILD=${2:-/tmp/diaseg-fuzz-build}
TARGETS=${TARGETS:-image cli}
PARALLEL=${PARALLEL:-0}
JOBS=${JOBS:-1}
FORK=${FORK:-1}
SKIP_KNOWN=${SKIP_KNOWN:-0}
ALL_ARTIFACTS=${ALL_ARTIFACTS:-0}
RESUME=${RESUME:-0}
SEED=${SEED:-}
CC=${CC:-clang}
PACKAGES="clang libclang-rt-14-dev libomp-14-dev llvm-14"

die() { echo "run_fuzz.sh: $*" >&2; exit 2; }

[[ "$DURATION" =~ ^[0-9]+$ && "$DURATION" -gt 0 ]] ||
  die "usage: run_fuzz.sh SECONDS [BUILD_DIR]   (SECONDS: how long each fuzzer runs)"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "JOBS must be a positive integer"
for t in $TARGETS; do
  [[ "$t" == image || "$t" == cli ]] || die "unknown target '$t' in TARGETS (image, cli)"
done
command -v cmake >/dev/null || die "cmake is missing (apt-get install -y cmake)"
command -v "$CC" >/dev/null || die "$CC is missing: apt-get install -y $PACKAGES"
mkdir -p "$BUILD" || die "cannot create $BUILD"
BUILD=$(cd "$BUILD" && pwd)

# ---- the toolchain: libFuzzer and the sanitizer runtimes -------------------------------------
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat > "$probe_dir/probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n > 0 && d[0] == 1; }
EOF
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.c" -o "$probe_dir/probe" \
     > "$probe_dir/log" 2>&1; then
  cat "$probe_dir/log" >&2
  die "$CC cannot build a libFuzzer program with ASan/UBSan: the runtimes are missing. " \
      "On Debian 12: apt-get install -y $PACKAGES"
fi
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" ]]; then
  for s in llvm-symbolizer llvm-symbolizer-14 llvm-symbolizer-15 llvm-symbolizer-16; do
    if command -v "$s" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v "$s"); break; fi
  done
fi
[[ -n "${ASAN_SYMBOLIZER_PATH:-}" ]] ||
  echo "run_fuzz.sh: no llvm-symbolizer (apt-get install -y llvm-14): stack traces will show addresses only" >&2

# ---- build ------------------------------------------------------------------------------------
echo "== configuring $BUILD"
cmake -S "$HERE" -B "$BUILD" -DCMAKE_C_COMPILER="$CC" -DDIASEG_SANITIZE=ON -DDIASEG_FUZZ=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$BUILD/configure.log" 2>&1 ||
  { tail -30 "$BUILD/configure.log" >&2; die "configuring failed (log: $BUILD/configure.log)"; }
echo "== building fuzz_image fuzz_cli fuzz_replay"
cmake --build "$BUILD" -j"$(nproc)" --target fuzz_image fuzz_cli fuzz_replay \
      > "$BUILD/build.log" 2>&1 ||
  { grep -E "error|Error" "$BUILD/build.log" | head -30 >&2; die "building failed (log: $BUILD/build.log)"; }
for t in $TARGETS; do
  [[ -x "$BUILD/fuzz_$t" ]] || die "$BUILD/fuzz_$t was not built (is $CC clang?)"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:symbolize=1}
# the sanitizer run's suppressions (tests/sanitizers/ubsan.supp): stb's known benign shifts, F6
# above all, which the fuzzer reaches again through any corrupt JPEG scan, are not new findings;
# any other report still halts
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-suppressions=$HERE/../sanitizers/ubsan.supp:print_stacktrace=1:halt_on_error=1:symbolize=1}
export DIASEG_FUZZ_SKIP_KNOWN=$SKIP_KNOWN

STAMP=$(date +%Y%m%d-%H%M%S)
PREVIOUS=$(ls -d "$BUILD/fuzz-runs/"*/ 2>/dev/null | tail -1)
RUNS="$BUILD/fuzz-runs/$STAMP"
mkdir -p "$RUNS"

# ---- fuzzing ----------------------------------------------------------------------------------
run_target() {
  local t=$1 work="$RUNS/$1"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$HERE/corpus_$t/"* "$work/corpus/"
  if [[ $RESUME == 1 && -n "$PREVIOUS" && -d "$PREVIOUS/$t/corpus" ]]; then
    cp -n "$PREVIOUS/$t/corpus/"* "$work/corpus/" 2>/dev/null
  fi
  ls "$work/corpus" | wc -l > "$work/seeds"
  local opts=(-max_total_time="$DURATION" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
              ${SEED:+-seed=$SEED}
              -artifact_prefix="$work/artifacts/")
  [[ $t == image ]] && opts+=(-max_len=65536)
  [[ $FORK == 1 ]] && opts+=(-fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  local start=$(date +%s)
  timeout --signal=INT --kill-after=60 $((DURATION + 300)) \
    "$BUILD/fuzz_$t" "${opts[@]}" "$work/corpus" > "$work/fuzz.log" 2>&1
  echo $? > "$work/rc"
  echo $(( $(date +%s) - start )) > "$work/wall"
}

for t in $TARGETS; do
  echo "== fuzzing $t for $DURATION s (log: $RUNS/$t/fuzz.log)"
  if [[ $PARALLEL == 1 ]]; then run_target "$t" & else run_target "$t"; fi
done
wait

# ---- sorting the findings ---------------------------------------------------------------------
# A finding's signature: what went wrong and where (the first frame in diaseg's or stb's code).
signature() { # fuzzer file
  local out
  # (ASan fills fresh allocations with 0xff, as in the ctest: readers of uninitialised memory then
  # fail the same way every time)
  out=$(DIASEG_FUZZ_SKIP_KNOWN=0 \
        ASAN_OPTIONS="$ASAN_OPTIONS:malloc_fill_byte=255:max_malloc_fill_size=1048576" \
        timeout --kill-after=10 60 "$1" -timeout=10 -rss_limit_mb=2048 "$2" 2>&1)
  local frame
  frame=$(grep -E '^ *#[0-9]+ 0x[0-9a-f]+ in ' <<<"$out" |
          grep -E 'stb_image|/app/|/spmv/|/eigensolver/' | grep -vE 'LLVMFuzzerTestOneInput|fuzz_' |
          head -1 | sed -E 's/^ *#[0-9]+ 0x[0-9a-f]+ in ([^ ]+) .*\/([^/]+:[0-9]+)(:[0-9]+)?$/\1 \2/')
  if grep -q 'contract broken:' <<<"$out"; then
    echo "contract: $(grep -m1 -o 'contract broken: .*' <<<"$out" | sed -E 's/0x[0-9a-f]+/P/g; s/[0-9]+/N/g')"
  elif grep -q 'runtime error:' <<<"$out"; then
    local line loc msg
    line=$(grep -m1 'runtime error:' <<<"$out")
    loc=$(sed -E 's/^(.*\/)?([^/ ]+:[0-9]+):[0-9]+: runtime error: .*$/\2/' <<<"$line")
    msg=$(sed -E 's/^.*: runtime error: //; s/[0-9]+/N/g' <<<"$line")
    echo "ubsan $loc: $msg"
  elif grep -q 'ERROR: LeakSanitizer' <<<"$out"; then
    echo "leak @ ${frame:-?}"
  elif grep -q 'ERROR: libFuzzer: timeout' <<<"$out"; then
    echo "timeout @ ${frame:-?}"
  elif grep -qE 'ERROR: libFuzzer: (out-of-memory|malloc)' <<<"$out"; then
    echo "oom @ ${frame:-?}"
  elif grep -q '^SUMMARY: ' <<<"$out"; then
    grep -m1 '^SUMMARY: ' <<<"$out" | sed -E 's/^SUMMARY: //; s/ \/[^ ]*\/([^/ ]+:[0-9]+):[0-9]+/ \1/'
  elif grep -q 'ERROR: libFuzzer: deadly signal' <<<"$out"; then
    echo "deadly signal @ ${frame:-?}"
  else
    echo "no-repro"
  fi
}

slug() { sed -E 's/[^A-Za-z0-9_.]+/-/g; s/^-+//; s/-+$//' <<<"$1" | cut -c1-60; }

found=0
summary=""
for t in $TARGETS; do
  work="$RUNS/$t"
  fuzzer="$BUILD/fuzz_$t"
  log="$work/fuzz.log"
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  done_runs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
  [[ -n "$done_runs" ]] && execs=$done_runs
  stat_runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  [[ -n "$stat_runs" && -z "$done_runs" && $FORK != 1 ]] && execs=$stat_runs
  execs=${execs:-0}
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  edges=$(sed -nE 's/.*\(([0-9]+) inline 8-bit counters\).*/\1/p' "$log" | head -1)
  counts=$(grep -oE 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  wall=$(cat "$work/wall")
  # the grown corpus's coverage, measured in one process (fork mode's running count is not)
  lenopt=()
  [[ $t == image ]] && lenopt=(-max_len=65536)
  corpus_cov=$(timeout 600 "$fuzzer" -runs=0 -rss_limit_mb=2048 -timeout=10 "${lenopt[@]}" \
                 "$work/corpus" 2>&1 | grep -oE 'INITED cov: [0-9]+' | grep -oE '[0-9]+$')
  corpus_end=$(ls "$work/corpus" | wc -l)

  # existing regressions: their signatures
  declare -A known=()
  for f in "$HERE/regressions/$t"/*; do
    [[ -f "$f" ]] || continue
    known["$(signature "$fuzzer" "$f")"]=$(basename "$f")
  done
  # this run's artifacts, smallest first: one per signature
  declare -A seen=()
  lines=""
  nart=0
  while IFS= read -r a; do
    [[ -n "$a" ]] || continue
    nart=$((nart + 1))
    sig=$(signature "$fuzzer" "$a")
    kind=$(basename "$a" | cut -d- -f1)
    if [[ $ALL_ARTIFACTS != 1 && -n "${seen[$sig]:-}" ]]; then
      seen[$sig]=$(( ${seen[$sig]%% *} + 1 ))" ${seen[$sig]#* }"
      continue
    fi
    if [[ -n "${known[$sig]:-}" && $ALL_ARTIFACTS != 1 ]]; then
      seen[$sig]="1 known: regressions/$t/${known[$sig]}"
      continue
    fi
    if [[ $sig == no-repro ]]; then # depends on the fuzzing process's state: not a regression
      seen[$sig]="1 not reproducible alone (e.g. $a)"
      continue
    fi
    name="$kind-$(slug "${sig#* }")-$(sha1sum "$a" | cut -c1-8)"
    cp "$a" "$HERE/regressions/$t/$name"
    seen[$sig]="1 new: regressions/$t/$name"
  done < <(find "$work/artifacts" -maxdepth 1 -type f \
             \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
             -printf '%s %p\n' 2>/dev/null | sort -n | cut -d' ' -f2-)
  for sig in "${!seen[@]}"; do
    lines+="    ${seen[$sig]#* } (${seen[$sig]%% *} artifacts): $sig"$'\n'
  done
  [[ $nart -gt 0 ]] && found=1
  rate=0
  [[ $wall -gt 0 ]] && rate=$((execs / wall))
  summary+="fuzz_$t: ${wall} s, $execs executions ($rate/s), corpus $(cat "$work/seeds") -> $corpus_end files"$'\n'
  summary+="    coverage: the final corpus reaches ${corpus_cov:-?} of ${edges:-?} instrumented edges"
  summary+=" (libFuzzer's last count: cov ${cov:-?}, ft ${ft:-?})"$'\n'
  summary+="    libFuzzer exit $(cat "$work/rc")${counts:+, oom/timeout/crash $counts}, artifacts: $nart, distinct findings: ${#seen[@]}"$'\n'
  summary+="$lines"
  unset known seen
done

echo
echo "== summary (logs, artifacts and grown corpora: $RUNS)"
printf '%s' "$summary"
if [[ $found == 1 ]]; then
  echo "== findings: see above; reproducers are in $HERE/regressions/ (replay: $BUILD/fuzz_replay TARGET FILE)"
  exit 1
fi
echo "== no findings"
exit 0
