#!/usr/bin/env bash
# How OpenMP's waiting changes a 2-thread epoch, idle and beside busy processes:
# bench_models on DeepGT 10 and DeepGAT 30 (Cora) under OMP_WAIT_POLICY=passive,
# GOMP_SPINCOUNT=1000 (what the lipgnn command sets when neither is set),
# GOMP_SPINCOUNT=3000 and libgomp's default (300 000 spins), with 0, 2, 6 and 18
# busy-looping processes beside it (18: DeepGAT 30 only, without 3000), ROUNDS
# rounds with the policies in turn. One line per run:
#   BUSY POLICY CONFIG EPOCH_MS EPOCH_CPU_MS [CROSS-CORE NS BEFORE, AFTER]
#
#   bench/wait_policy.sh [BUILD] [ROUNDS]     (default build, 2)
#
# Needs LIPGNN_DATA (the directory of cora/). Run it on an otherwise idle machine;
# libgomp's default under load takes up to a minute a run.
set -uo pipefail
build=${1:-build}
rounds=${2:-2}
exe=$build/bench/bench_models
[ -n "${LIPGNN_DATA:-}" ] || { echo "wait_policy.sh: LIPGNN_DATA is unset (the directory of cora/)" >&2; exit 2; }
[ -x "$exe" ] || { echo "wait_policy.sh: $exe is not an executable (build the project first)" >&2; exit 2; }
core=$("$exe" --blas | sed -n 's/.*"best":"\([A-Za-z0-9]*\)".*/\1/p')
[ -n "$core" ] && export OPENBLAS_CORETYPE=$core
unset OMP_WAIT_POLICY GOMP_SPINCOUNT
busy_pids=""
stop_busy() { [ -n "$busy_pids" ] && kill $busy_pids 2>/dev/null; wait $busy_pids 2>/dev/null; busy_pids=""; }
trap stop_busy EXIT
run() { # BUSY POLICY CONFIG EPOCHS
  local busy=$1 pol=$2 cfg=$3 ep=$4 setting=()
  case $pol in
    passive) setting=(OMP_WAIT_POLICY=passive) ;;
    default) ;; # neither variable: libgomp's default
    *) setting=(GOMP_SPINCOUNT=$pol) ;;
  esac
  for ((i = 0; i < busy; i++)); do sh -c 'while :; do :; done' & busy_pids="$busy_pids $!"; done
  sleep 0.5
  local line
  line=$(timeout 900 env "${setting[@]}" "$exe" --config "$cfg" --threads 2 --epochs "$ep" --warmup 1 --infer 1) ||
    line='{"epoch_ms":null,"epoch_cpu_ms":null}'
  stop_busy
  local ms cpu xc
  ms=$(sed -n 's/.*"epoch_ms":\([0-9.]*\|null\).*/\1/p' <<<"$line")
  cpu=$(sed -n 's/.*"epoch_cpu_ms":\([0-9.]*\|null\).*/\1/p' <<<"$line")
  xc=$(sed -n 's/.*"xcore_rt_ns":\[\([0-9, ]*\)\].*/[\1]/p' <<<"$line")
  echo "$busy $pol $cfg $ms $cpu $xc"
}
for ((r = 0; r < rounds; r++)); do
  for cfg in deepgt10-lip-cora deepgat30-lip-cora; do
    for busy in 0 2 6 18; do
      [ "$busy" = 18 ] && [ "$cfg" = deepgt10-lip-cora ] && continue
      for pol in passive 1000 3000 default; do
        [ "$busy" = 18 ] && [ "$pol" = 3000 ] && continue
        ep=20
        [ "$busy" -gt 0 ] && ep=5
        [ "$busy" = 18 ] && ep=3
        run "$busy" "$pol" "$cfg" "$ep"
      done
    done
  done
done
