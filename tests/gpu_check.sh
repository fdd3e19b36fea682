#!/bin/bash
# Build diaseg on a GPU machine, run its correctness tests against the OpenCL GPU, and measure.
# Used on the H200 machine (docs/PERFORMANCE.md); any Linux box with an OpenCL GPU works.
#
#   tests/gpu_check.sh OUT [STEP ...]
#   steps: setup build devices test spmv sweep solvecheck bench bench4k benchgpu fuse lzsweep
#          lanczos cpulz scipy peers pack
#
# setup: where .deps/ holds Debian's libarpack2, libarpack2-dev, libstb-dev, libstb0 (and
# libturbojpeg0, libturbojpeg0-dev, libpng, zlib) packages (apt-get download), unpack them to /opt/deps and register NVIDIA's OpenCL ICD (the recipe of the
# machine this was measured on). Results and logs go to OUT.
set -u
OUT=${1:?usage: tests/gpu_check.sh OUT [STEP ...]}
shift
STEPS=${*:-setup build devices test spmv}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-gpu
D=$BUILD/app/diaseg
GPU=${DIASEG_CL_DEVICE:-NVIDIA}
SIZES="--size 481x321 --size 1920x1080 --size 3840x2160"

step() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
log() { echo "== $* ($(date +%T))"; }

if [ -d "$ROOT/.deps" ]; then
  export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu CPATH=/opt/deps/usr/include \
         LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu \
         PKG_CONFIG_PATH=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/opt/deps
fi
if step setup; then
  log setup
  if [ -d "$ROOT/.deps" ]; then
    for f in "$ROOT"/.deps/*.deb; do dpkg -x "$f" /opt/deps; done
  fi
  mkdir -p /etc/OpenCL/vendors
  [ -e /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
    > "$OUT/gpu.txt" 2>&1
  (nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2) >> "$OUT/gpu.txt"
fi
if step build; then
  log build
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
    > "$OUT/build.log" 2>&1 && cmake --build "$BUILD" -j"$(nproc)" >> "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 1; }
fi
if step devices; then
  log devices
  "$D" devices | tee "$OUT/devices.txt"
fi
if step test; then
  log "test: ctest with DIASEG_CL_DEVICE=$GPU"
  # the install test builds an example with pkg-config against the installed prefix: the
  # sysroot that points pkg-config into /opt/deps for the build must not apply to it
  (cd "$BUILD" && unset PKG_CONFIG_SYSROOT_DIR &&
     DIASEG_CL_DEVICE=$GPU ctest --timeout 150 --output-on-failure) > "$OUT/ctest_gpu.log" 2>&1
  tail -15 "$OUT/ctest_gpu.log"
fi
if step spmv; then
  log "spmv: every backend and kernel, three sizes"
  "$D" bench $SIZES --spmv-only --repeat 20 --json "$OUT/spmv.json" --csv "$OUT/spmv.csv" \
    --chart "$OUT/spmv.svg" 2> "$OUT/spmv.err" | tee "$OUT/spmv.txt"
fi
if step sweep; then
  log "sweep: vector and image kernels, unrolled 1/2/4/8 times, work-groups of 64/128/256"
  : > "$OUT/sweep.txt"
  for u in 1 2 4 8; do
    dir=/tmp/diaseg-unroll$u
    mkdir -p "$dir"
    sed "s|^      for (int d = 0; d < count; d++) {|#pragma unroll $u\n      for (int d = 0; d < count; d++) {|" \
      "$ROOT/kernels/dia_spmv.cl" > "$dir/dia_spmv.cl"
    for ls in 64 128 256; do
      echo "# unroll $u, local size $ls" >> "$OUT/sweep.txt"
      "$D" bench --size 1920x1080 --size 3840x2160 --spmv-only --repeat 20 --matvec opencl \
        --cl-device "$GPU" --kernel all --kernel-dir "$dir" --local-size $ls -q \
        >> "$OUT/sweep.txt" 2>&1
    done
  done
  grep -E "^#|opencl" "$OUT/sweep.txt" | grep -vE "^#   |^# [0-9]" | head -200
fi
if step solvecheck; then
  log "solvecheck: a small solve on each backend, with its time split"
  for mv in cpu opencl; do
    "$D" eigs "$ROOT/data/coffee.png" --matvec $mv --cl-device "$GPU" --nev 8 -o /tmp/sc_$mv -q \
      --json - | python3 -c "import json,sys; r=json.load(sys.stdin); print('$mv', r['matvec_count'], r['seconds']['solve'], r['seconds']['solve_split'])"
  done | tee "$OUT/solvecheck.txt"
fi
BENCH="--matvec all --cl-device $GPU --kernel aligned,image --solver all --repeat 20"
if step bench; then
  log "bench: eigensolves (nev 16, tol 1e-3), C path and the GPU, both solvers"
  "$D" bench --size 481x321 --size 1920x1080 $BENCH --json "$OUT/bench.json" \
    --csv "$OUT/bench.csv" --chart "$OUT/bench.svg" 2> "$OUT/bench.err" | tee "$OUT/bench.txt"
fi
if step bench4k; then
  # at 3840x2160 an ARPACK solve costs minutes of host work: the GPU's ARPACK run (the baseline
  # of the device-resident solver) is kept, the C path's is left out to fit the time
  log "bench4k: 3840x2160: Lanczos on the C path and the GPU, ARPACK on the GPU (aligned kernel)"
  "$D" bench --size 3840x2160 --matvec all --cl-device "$GPU" --kernel aligned --solver lanczos \
    --repeat 20 --json "$OUT/bench4k.json" 2> "$OUT/bench4k.err" | tee "$OUT/bench4k.txt"
  "$D" bench --size 3840x2160 --matvec opencl --cl-device "$GPU" --kernel aligned --solver arpack \
    --repeat 5 --json "$OUT/bench4k_arpack.json" 2>> "$OUT/bench4k.err" | tee -a "$OUT/bench4k.txt"
fi
if step benchgpu; then
  log "benchgpu: the device-resident solver at every size (aligned and image kernels)"
  "$D" bench $SIZES --matvec opencl --cl-device "$GPU" --kernel aligned,image --solver lanczos \
    --repeat 20 --json "$OUT/benchgpu.json" 2> "$OUT/benchgpu.err" | tee "$OUT/benchgpu.txt"
fi
if step fuse; then
  log "fuse: the device-resident solver without its fusions"
  DIASEG_LANCZOS_UNFUSED=1 "$D" bench --size 481x321 --size 1920x1080 --size 3840x2160 \
    --matvec opencl --cl-device "$GPU" --kernel aligned --solver lanczos --repeat 5 \
    --json "$OUT/unfused.json" 2> "$OUT/unfused.err" | tee "$OUT/unfused.txt"
fi
if step lzsweep; then
  # work-group counts of the Lanczos kernels: G (row-parallel kernels) and T (row groups of V^T w)
  log "lzsweep: the device-resident solver's work-group counts, plain top of the spectrum"
  for gt in default 1056,132 528,264 2112,264 1056,528; do
    if [ $gt = default ]; then unset DIASEG_LANCZOS_GROUPS; else export DIASEG_LANCZOS_GROUPS=$gt; fi
    "$D" bench --size 481x321 --size 1920x1080 --matvec opencl --cl-device "$GPU" --kernel aligned \
      --solver lanczos --keep-specks --repeat 5 -q --json "$OUT/lzsweep_$gt.json" \
      | sed "s/^/$gt /" | tee -a "$OUT/lzsweep.txt"
  done
  unset DIASEG_LANCZOS_GROUPS
fi
if step lanczos; then
  log "lanczos: the device-resident solver at every size; with the component vectors, then the plain top (3 runs)"
  "$D" bench $SIZES --matvec opencl --cl-device "$GPU" --kernel aligned,image --solver lanczos \
    --repeat 20 --json "$OUT/lanczos.json" --chart "$OUT/lanczos.svg" 2> "$OUT/lanczos.err" \
    | tee "$OUT/lanczos.txt"
  for r in 1 2 3; do
    "$D" bench $SIZES --matvec opencl --cl-device "$GPU" --kernel aligned --solver lanczos \
      --keep-specks --repeat 5 -q --json "$OUT/lanczos_plain_$r.json" | tee -a "$OUT/lanczos_plain.txt"
  done
fi
if step cpulz; then
  log "cpulz: the same Lanczos on the host's cores (C path), 481x321 and 1920x1080"
  "$D" bench --size 481x321 --size 1920x1080 --matvec cpu --solver lanczos --repeat 20 \
    --json "$OUT/cpulz.json" 2> "$OUT/cpulz.err" | tee "$OUT/cpulz.txt"
fi
if step scipy; then
  log "scipy: SciPy's eigsh against diaseg's C path on the same matrices (host)"
  for S in 481x321 1920x1080; do
    "$D" affinity --resize "$S" --export "/tmp/m_$S" -q
    "$D" eigs "$ROOT/data/coffee.png" --resize "$S" --nev 16 --tol 1e-3 --keep-specks \
      --matvec cpu -o "/tmp/c_$S" -q
    python3 "$ROOT/tests/cli/peers.py" "/tmp/m_$S" --nev 16 --tol 1e-3 --repeat 1 \
      --report "/tmp/c_$S/report.json" --json "$OUT/scipy_$S.json" | tee -a "$OUT/scipy.txt"
    cp "/tmp/c_$S/report.json" "$OUT/scipy_diaseg_$S.json"
  done
fi
if step peers; then
  log "peers: CuPy on the same matrices (cuSPARSE CSR SpMV, eigsh)"
  for S in 481x321 1920x1080 3840x2160; do
    "$D" affinity --resize "$S" --export "/tmp/m_$S" -q
    "$D" eigs "$ROOT/data/coffee.png" --resize "$S" --nev 16 --tol 1e-3 --keep-specks \
      --matvec opencl --cl-device "$GPU" --kernel aligned -o "/tmp/e_$S" -q
    python3 "$ROOT/tests/cli/peers.py" "/tmp/m_$S" --nev 16 --tol 1e-3 --no-scipy --cupy \
      --report "/tmp/e_$S/report.json" --json "$OUT/peers_$S.json" | tee -a "$OUT/peers.txt"
    cp "/tmp/e_$S/report.json" "$OUT/peers_diaseg_$S.json"
  done
fi
if step pack; then
  (cd "$OUT" && tar czf results.tgz --exclude results.tgz . && ls -la results.tgz)
fi
log done
