#!/bin/bash
# The CPU-side measurements of docs/PERFORMANCE.md (the 2-core CI-class machine), after the
# README's build, with nothing else running: tests/cpu_check.sh [RESULTS_DIR]
cd "$(dirname "$0")/.."
D=./build/app/diaseg
O=${1:-/tmp/cpu2}   # results folder
rm -rf $O; mkdir -p $O
git log --oneline -1 > $O/commit.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" > $O/machine.txt; free -g | head -2 >> $O/machine.txt
log() { echo "== $* $(date +%T)" >> $O/log.txt; }
log spmv
$D bench --size 481x321 --size 1920x1080 --size 3840x2160 --spmv-only --repeat 20 \
  --json $O/spmv.json --csv $O/spmv.csv > $O/spmv.txt 2> $O/spmv.err
log solves
$D bench --size 481x321 --matvec all --kernel vector --solver all --repeat 10 \
  --json $O/bench481.json > $O/bench481.txt 2> $O/bench481.err
$D bench --size 1920x1080 --matvec cpu --solver all --repeat 10 \
  --json $O/bench1080.json > $O/bench1080.txt 2> $O/bench1080.err
log peers
# issue 2: the C path vs SciPy's eigsh on the same matrix (segment's nev 8, tol 1e-5 at 481x321;
# the bench's nev 16, tol 1e-3 at both sizes)
for S in 481x321 1920x1080; do
  $D affinity --resize $S --export $O/m_$S -q
  for cfg in "8 1e-5" "16 1e-3"; do
    set -- $cfg
    [ $S = 1920x1080 ] && [ $1 = 8 ] && continue
    for s in arpack lanczos; do
      $D eigs data/coffee.png --resize $S --nev $1 --tol $2 --keep-specks --matvec cpu --solver $s \
        -o $O/e_${s}_$S -q --json $O/eigs_${s}_${S}_nev$1.json
    done
    /usr/bin/python3 tests/cli/peers.py $O/m_$S --nev $1 --tol $2 --report $O/eigs_arpack_${S}_nev$1.json \
      --repeat 1 --spmv-repeat 20 --json $O/peers_${S}_nev$1.json >> $O/peers.txt 2>&1
  done
  rm -rf $O/m_$S $O/e_*
done
log 4k
$D bench --size 3840x2160 --matvec cpu --solver lanczos --repeat 5 --json $O/bench4k.json > $O/bench4k.txt 2> $O/bench4k.err
log done
