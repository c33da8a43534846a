#!/usr/bin/env bash
# bench/run_all.py on gat-classic-cora, one epoch, without the peer: under the
# suite's default wait setting (the spin count `lipgnn --version` names, for
# both sides) and under --omp-wait-policy passive, the header line records the
# setting and the configuration's line has its figures (the cold replay's
# among them), which --table prints; a core type set in the environment is
# replaced by the best one, with a notice, and both are recorded.
#   test_bench_suite.sh BUILD_DIR SOURCE_DIR     exit 0 pass, 1 fail, 77 skip
set -u
build=$1 src=$2
if [ -z "${LIPGNN_DATA:-}" ] || [ ! -d "$LIPGNN_DATA/cora" ]; then
  echo "LIPGNN_DATA is unset or holds no cora/: skipping"; exit 77
fi
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3: skipping"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
clean="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u LIPGNN_OMP_REEXEC"
spin=$($clean "$build/lipgnn" --version | sed -n 's/.* run with GOMP_SPINCOUNT=\([0-9]*\) .*/\1/p')
[ -n "$spin" ] || fail "lipgnn --version names no spin count: $($clean "$build/lipgnn" --version)"
for policy in lipgnn passive; do
  $clean /usr/bin/python3 "$src/bench/run_all.py" --build "$build" --configs gat-classic-cora --epochs 1 --warmup 0 \
    --infer 1 --no-peer --omp-wait-policy $policy >"$tmp/out" 2>"$tmp/err" ||
    fail "run_all.py --omp-wait-policy $policy: $(tail -c 600 "$tmp/err")"
  head -1 "$tmp/out" >"$tmp/head"
  if [ $policy = lipgnn ]; then
    grep -q "\"omp_wait_policy\": \"\", \"gomp_spincount\": \"$spin\"" "$tmp/head" || fail "lipgnn: $(cat "$tmp/head")"
  else
    grep -q '"omp_wait_policy": "passive", "gomp_spincount": ""' "$tmp/head" || fail "passive: $(cat "$tmp/head")"
  fi
  grep -q '^{"bench": "models", "name": "gat-classic-cora".*"epoch_ms": [0-9.]*,.*"floor_ms": [0-9.]*,' "$tmp/out" ||
    fail "$policy: no figures for gat-classic-cora: $(cat "$tmp/out")"
  grep -q '"floor_cold_ms": [0-9.]*, "cold_over_floor": [0-9.]*, "cold_ratio": [0-9.]*, "cold_slots": [1-9]' "$tmp/out" ||
    fail "$policy: no cold replay for gat-classic-cora: $(cat "$tmp/out")"
  /usr/bin/python3 "$src/bench/run_all.py" --table "$tmp/out" >"$tmp/table" 2>"$tmp/err" ||
    fail "run_all.py --table: $(tail -c 600 "$tmp/err")"
  grep -q '^| gat-classic-cora | 2708 |' "$tmp/table" || fail "run_all.py --table: no row: $(cat "$tmp/table")"
done
# --rounds 2: the configuration twice, its line the median of the two with their own values listed,
# which --table prints round by round; run with another core type in the environment (Prescott, or
# Haswell where Prescott is the best), which the suite replaces by the best and says so
best=$(env -u OPENBLAS_CORETYPE "$build/bench/bench_models" --blas | sed -n 's/.*"best":"\([A-Za-z0-9]*\)".*/\1/p')
other=Prescott
[ "$best" = Prescott ] && other=Haswell
OPENBLAS_CORETYPE=$other $clean /usr/bin/python3 "$src/bench/run_all.py" --build "$build" --configs gat-classic-cora \
  --epochs 1 --warmup 0 --infer 1 --no-peer --rounds 2 >"$tmp/out" 2>"$tmp/err" ||
  fail "run_all.py --rounds 2: $(tail -c 600 "$tmp/err")"
grep -q '"rounds": 2,' "$tmp/out" || fail "--rounds 2: the header does not say so: $(head -1 "$tmp/out")"
if [ -n "$best" ]; then
  grep -q "OPENBLAS_CORETYPE=$other in the environment is replaced by $best" "$tmp/err" ||
    fail "OPENBLAS_CORETYPE=$other: no notice of its replacement by $best: $(cat "$tmp/err")"
  grep -q "\"openblas_coretype\": \"$best\", \"openblas_coretype_environment\": \"$other\"" "$tmp/out" ||
    fail "OPENBLAS_CORETYPE=$other: the header does not record both: $(head -1 "$tmp/out")"
fi
/usr/bin/python3 - "$tmp/out" <<'PY' || fail "--rounds 2: $(cat "$tmp/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
m = [r for r in rows if r.get("bench") == "models"]
assert len(m) == 1 and m[0]["rounds"] == 2, m
e = m[0]["round_epoch_ms"]
assert len(e) == 2 and abs(m[0]["epoch_ms"] - (e[0] + e[1]) / 2) < 1e-9, (e, m[0]["epoch_ms"])
assert len(m[0]["round_ratio"]) == 2 and m[0]["allocs_in_loop"] == 0
x = m[0]["round_xcore_rt_ns"]  # each round's [before, after] at 2 threads
assert len(x) == 2 and all(isinstance(v, list) and len(v) == 2 for v in x), x
PY
/usr/bin/python3 "$src/bench/run_all.py" --table "$tmp/out" >"$tmp/table" 2>"$tmp/err" ||
  fail "--rounds 2: run_all.py --table: $(tail -c 600 "$tmp/err")"
grep -q '^| gat-classic-cora | [0-9.]* / [0-9.]* | [0-9.]* / [0-9.]* | [0-9.]* / [0-9.]* |' "$tmp/table" ||
  fail "--rounds 2: --table prints no round-by-round row: $(cat "$tmp/table")"
echo "run_all.py: both sides at GOMP_SPINCOUNT=$spin by default, passive on request; --rounds 2 combines two runs"
