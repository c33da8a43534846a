#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan, in
# build-fuzz/) and runs each for SECONDS (default 60), one after the other:
#
#   tools/fuzz.sh [SECONDS] [HARNESS...]     harnesses: mtx dataset checkpoint cli
#                                            (tests/fuzz/harnesses.cmake)
#
# Each run starts from the seed corpus tests/fuzz/corpus/<h> and the inputs of
# past findings tests/fuzz/regressions/<h>, keeps what it learns in
# build-fuzz/corpus/<h>, logs to build-fuzz/fuzz-<h>.log, and stops at the first
# crash, leak, timeout (10 s per input) or invariant failure, leaving the input
# in build-fuzz/findings/ and printing the report's first lines, the frames of
# the harness and the library, and the input in base64 (libFuzzer's, for small
# inputs: what a CI log must carry, the CI machine's files being gone). Exits
# 1 if any harness found something.
# LG_FUZZ_BUILD=DIR builds in DIR instead of build-fuzz.
# Needs Debian's clang and libclang-rt-14-dev (tools/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
harnesses=("$@")
# default: every harness listed in tests/fuzz/harnesses.cmake
[ ${#harnesses[@]} -gt 0 ] || read -r -a harnesses < <(sed -n 's/^set(LG_FUZZ_HARNESSES \(.*\))$/\1/p' tests/fuzz/harnesses.cmake)
jobs=$(nproc 2>/dev/null || echo 2)
B=${LG_FUZZ_BUILD:-build-fuzz}
CC=clang cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLG_FUZZ=ON \
  -DLG_BUILD_TESTS=OFF -DLG_BUILD_BENCH=OFF >/dev/null
cmake --build "$B" -j"$jobs" --target $(printf 'fuzz_%s ' "${harnesses[@]}") >/dev/null
mkdir -p "$B"/findings
status=0
for h in "${harnesses[@]}"; do
  mkdir -p "$B"/corpus/$h
  inputs=(tests/fuzz/corpus/$h)
  [ -d tests/fuzz/regressions/$h ] && inputs+=(tests/fuzz/regressions/$h)
  log="$B"/fuzz-$h.log
  rc=0
  # one core; the harness's own messages (stdout, stderr) are closed, the
  # sanitizers' and libFuzzer's reports are not
  OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$B"/tests/fuzz/fuzz_$h -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$B"/findings/$h- \
    "$B"/corpus/$h "${inputs[@]}" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  last=$(grep -E "^#[0-9]+" "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, features \2, corpus \3/p' <<<"$last")
  if [ $rc -eq 0 ]; then
    echo "fuzz $h: ${secs} s, ${execs:-?} executions ($(( ${execs:-0} / (secs > 0 ? secs : 1) ))/s), ${cov:-?}, peak RSS ${rss:-?} MB: no crash, leak or timeout"
  else
    status=1
    echo "fuzz $h: FINDING after ${execs:-?} executions (exit $rc); the input is in ${B}/findings/, the report in $log:"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 | sed 's/^/  /' || true
    # where, and the input itself (libFuzzer prints small inputs in base64), so
    # that a CI log alone reproduces it: base64 -d > F, then fuzz_<h> F
    awk '/^ +#[0-9]+ 0x/ { if (/fuzzer::/ || ++k > 8) exit; sub(/^ */, "  "); sub(/ \(BuildId: [0-9a-f]*\)/, ""); print }' "$log" || true
    grep -E '^Base64: ' "$log" | head -1 | sed 's/^/  input, /' || true
    # the harness's own messages were closed: run the input again to show them
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ -n "$unit" ] && [ -f "$unit" ]; then
      OMP_NUM_THREADS=1 "$B"/tests/fuzz/fuzz_$h "$unit" 2>&1 | grep -E 'invariant failed|ERROR|SUMMARY' | head -3 | sed 's/^/  /' || true
    fi
  fi
done
exit $status
