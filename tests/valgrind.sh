#!/usr/bin/env bash
# valgrind memcheck on the lipgnn CLI: training runs (fixture data and TREES,
# with checkpoint, resume, logs and predict outputs), and a sample of the
# bad-input runs (bad data sets, damaged checkpoint, bad options). Every run
# must have no memcheck error and no definitely lost block.
#   valgrind.sh LIPGNN_BINARY FIXTURES_PARENT     exit 0 pass, 1 fail, 77 skip
#   FIXTURES_PARENT: the directory whose data/ holds the fixture data sets (the
#   build's tests/, where tests/CMakeLists.txt mirrors tests/data).
# valgrind 3.19 cannot run AVX-512 code: OpenBLAS gets a core type it can run
# (OPENBLAS_CORETYPE=Haswell; lipgnn respects a core type set by the user).
set -u
bin=$1 dir=$2
command -v valgrind >/dev/null || { echo "valgrind is not installed: skipping"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# OMP_WAIT_POLICY set: lipgnn would otherwise restart itself with GOMP_SPINCOUNT
# (main.c, lg_cli_env_fix), and the restarted process would run outside memcheck.
export OPENBLAS_CORETYPE=Haswell OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive
fails=0 runs=0
# vg EXPECTED_STATUS ARGS...: lipgnn under memcheck
vg() {
  local want=$1; shift
  runs=$((runs + 1))
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --track-origins=yes --num-callers=30 --log-file="$tmp/vg.$runs" \
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc = 99 ] || ! grep -q "ERROR SUMMARY: 0 errors" "$tmp/vg.$runs"; then
    echo "FAIL: valgrind reports errors for: lipgnn $*"; grep -E "ERROR SUMMARY|definitely lost|Invalid|uninitialised" "$tmp/vg.$runs" | head -8
    fails=$((fails + 1))
  elif [ $rc != "$want" ]; then
    echo "FAIL: lipgnn $*: exit $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
    fails=$((fails + 1))
  fi
}
tiny=$dir/data/tiny
# lipgnn's own kernels: CPUID under valgrind hides AVX-512, so the AVX2 or baseline variant runs
vg 0 --version
grep -Eq "lipgnn kernels: (baseline|avx2) " "$tmp/out" || { echo "FAIL: under valgrind: $(cat "$tmp/out")"; fails=$((fails + 1)); }
# training: every output, checkpoint, resume, predict with all exports
vg 0 train --data "$tiny" --layers 3 --hidden 8 --heads 2 --epochs 4 --norm lipschitz+pairnorm --residual \
   --grad-log "$tmp/g.csv" --log "$tmp/l.csv" --save "$tmp/m.ckpt" --json
vg 0 train --data "$tiny" --layers 3 --hidden 8 --heads 2 --epochs 6 --norm lipschitz+pairnorm --residual \
   --resume "$tmp/m.ckpt" --save "$tmp/m2.ckpt" --quiet
vg 0 predict --resume "$tmp/m2.ckpt" --data "$tiny" --out "$tmp/p.csv" --embeddings "$tmp/h.mtx" --attention "$tmp/a.csv"
vg 0 train --trees 2 --trees-count 20 --model gt --layers 2 --hidden 8 --heads 2 --norm lipschitz+layernorm --gate \
   --epochs 3 --json
vg 0 train --data "$dir/data/tiny-edges" --model gat-classic --epochs 3 --plateau --patience 2 --quiet
vg 3 train --data "$tiny" --layers 3 --hidden 8 --epochs 5 --explode-threshold 1e-12 --stop-on-explosion --quiet
# bad input: a sample of the data-set fixtures, a damaged checkpoint, bad options
for f in value-nan value-inf dense-nan size-huge-nnz truncated-graph labels-nul split-overlap index-beyond-row \
         banner-missing edges-range; do
  vg 2 info --data "$dir/data/bad/$f"
done
vg 2 train --data "$dir/data/bad/value-nan" --epochs 1
head -c 300 "$tmp/m.ckpt" >"$tmp/cut.ckpt"
vg 2 predict --resume "$tmp/cut.ckpt" --data "$tiny"
vg 2 train --data "$tiny" --layers 2 --resume "$tmp/m.ckpt"
vg 2 train --data "$tiny" --layers 0
vg 2 train --trees 3 --max-memory 1K
vg 2 train --data "$tiny" --layers 2 --max-memory 1K
# without OPENBLAS_CORETYPE: valgrind hides AVX-512, so lipgnn must not restart
# itself (which would leave memcheck) for a core valgrind cannot run
(unset OPENBLAS_CORETYPE; vg 0 train --trees 2 --trees-count 10 --layers 2 --hidden 4 --epochs 2 --quiet
 grep -q "restarting" "$tmp/err" && { echo "FAIL: lipgnn restarted itself under valgrind"; exit 1; }
 exit $fails) || fails=$((fails + 1))
runs=$((runs + 1))
echo "$runs runs under valgrind memcheck, $fails failed"
[ $fails = 0 ]
