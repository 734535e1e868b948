#!/usr/bin/env bash
# A/B on the GPU machine: the tuner's norms with HEAD's row_norm.cuh (a) and the working tree's (b),
# alternated, for each width given. Output under $OUT/ab.
set -uo pipefail
root=$(pwd); mkdir -p $OUT/ab /tmp/a; rm -rf /tmp/a/*
cp -r benchmarks lib verify /tmp/a/ && cp scratch/ab/row_norm_head.cuh /tmp/a/benchmarks/common/row_norm.cuh
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/ab/gpu.txt
for v in a b; do   # builds each (run.sh), a first run of the first width
  dir=$root; [ $v = a ] && dir=/tmp/a
  (cd $dir && TUNE_OUT=$OUT/ab/${v}0 bash verify/tune/run.sh 40 norm $1) > $OUT/ab/${v}0.log 2>&1
done
for round in 1 2 3; do
  for v in a b; do
    dir=$root; [ $v = a ] && dir=/tmp/a
    for cols in "$@"; do
      $dir/build/kernel_tune 40 norm $cols > $OUT/ab/$v$round.$cols.csv 2>>$OUT/ab/$v$round.log
      python3 verify/tune/summarize.py $OUT/ab/$v$round.$cols.csv | grep "Norm" | sed "s/^/$v$round /"
    done
  done
done
