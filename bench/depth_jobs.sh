#!/usr/bin/env bash
# depth-study --jobs against one run at a time: the same Cora grid (GAT-Lip at 10,
# 20, 30 layers, one head of 64, 2 seeds, 80 epochs) with --threads T (one run at a
# time) and with --threads 1 --jobs T, alternated ROUNDS times; prints each time,
# the medians and their ratio, and checks that both wrote the same rows.
#
#   bench/depth_jobs.sh [LIPGNN] [ROUNDS]     (default build/lipgnn, 3; T = nproc)
#
# Needs LIPGNN_DATA (the directory of cora/). Run it on an otherwise idle machine.
set -euo pipefail
bin=${1:-build/lipgnn}
rounds=${2:-3}
T=$(nproc)
[ -n "${LIPGNN_DATA:-}" ] || { echo "depth_jobs.sh: LIPGNN_DATA is unset (the directory of cora/)" >&2; exit 2; }
[ -x "$bin" ] || { echo "depth_jobs.sh: $bin is not an executable" >&2; exit 2; }
[ "$T" -ge 2 ] || { echo "depth_jobs.sh: one core: nothing to compare" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grid=(depth-study --dataset cora --model gat --layers 10,20,30 --norms lipschitz --hidden 64 --heads 1
      --seeds 2 --epochs 80 --quiet)
declare -A times
for r in $(seq "$rounds"); do
  for mode in serial jobs; do
    rm -rf "$tmp/$mode"
    if [ $mode = serial ]; then opt=(--threads "$T"); else opt=(--threads 1 --jobs "$T"); fi
    s=$(date +%s.%N)
    "$bin" "${grid[@]}" "${opt[@]}" --out "$tmp/$mode"
    e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    times[$mode]="${times[$mode]:-} $t"
    echo "round $r: ${opt[*]}: $t s"
  done
done
med() { tr ' ' '\n' | grep . | sort -g | awk '{ x[NR] = $1 } END { print (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }'; }
ms=$(echo "${times[serial]}" | med)
mj=$(echo "${times[jobs]}" | med)
echo "median: --threads $T: $ms s; --threads 1 --jobs $T: $mj s; ratio $(echo "scale=2; $ms / $mj" | bc)"
if [ "$(cut -d, -f1-16 "$tmp/serial/runs.csv" | sort)" = "$(cut -d, -f1-16 "$tmp/jobs/runs.csv" | sort)" ]; then
  echo "rows: the same"
else
  echo "rows: differ (OpenBLAS may round differently at another thread count)"
fi
