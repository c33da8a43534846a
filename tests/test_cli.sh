#!/usr/bin/env bash
# CLI tests: test_cli.sh CASE LIPGNN_BINARY TESTS_DIR. Exit 0 pass, 1 fail, 77 skip.
set -u
case_=$1 bin=$2 dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run ARGS...: runs lipgnn as a user would (it may restart itself for OpenBLAS)
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"; }
rc() { cat "$tmp/rc"; }
expect_rc() { [ "$(rc)" = "$1" ] || fail "lipgnn $2: exit $(rc), expected $1; stderr: $(head -c 400 "$tmp/err")"; }
json_field() { grep -o "\"$1\":[^,}]*" "$tmp/out" | head -1 | cut -d: -f2; }

case $case_ in
help)
  run --help; expect_rc 0 --help; grep -q "Usage: lipgnn COMMAND" "$tmp/out" || fail "--help has no usage"
  run info --help; expect_rc 0 "info --help"; grep -q -- "--dataset NAME" "$tmp/out" || fail "info --help lacks --dataset"
  run --version; expect_rc 0 --version; grep -Eq "^lipgnn [0-9]+\.[0-9]+\.[0-9]+$" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
  run; expect_rc 2 "(no command)"
  run frobnicate; expect_rc 2 frobnicate; grep -q "unknown command 'frobnicate'" "$tmp/err" || fail "unknown command message"
  run info --frob; expect_rc 2 "info --frob"
  run info --trees; expect_rc 2 "info --trees (no value)"
  run info --trees 11; expect_rc 2 "info --trees 11"; grep -q "outside 2..10" "$tmp/err" || fail "range message: $(cat "$tmp/err")"
  run info --trees 3x; expect_rc 2 "info --trees 3x"
  run info; expect_rc 2 "info (no data)"; grep -q "no data set" "$tmp/err" || fail "no-data message"
  run info --trees 3 --data x; expect_rc 2 "two data sources"
  run info --trees 3 extra; expect_rc 2 "extra argument"
  (unset LIPGNN_DATA; run info --dataset cora; expect_rc 2 "--dataset without LIPGNN_DATA"
   grep -q "LIPGNN_DATA" "$tmp/err" || fail "unset LIPGNN_DATA not explained: $(cat "$tmp/err")"; exit $fails) || fails=$((fails + 1))
  ;;
info_trees)
  run info --trees 3 --trees-count 100 --json; expect_rc 0 "info --trees 3"
  [ "$(json_field nodes)" = 1500 ] || fail "trees 3: nodes $(json_field nodes), expected 15 per tree"
  [ "$(json_field classes)" = 8 ] || fail "trees 3: classes $(json_field classes)"
  [ "$(json_field graphs)" = 100 ] || fail "trees 3: graphs $(json_field graphs)"
  [ "$(json_field features)" = 16 ] || fail "trees 3: features $(json_field features)"
  run info --trees 3; expect_rc 0 "info --trees 3 (text)"; grep -q "15 nodes each" "$tmp/out" || fail "text: $(cat "$tmp/out")"
  ;;
info_datasets)
  [ -n "${LIPGNN_DATA:-}" ] || { echo "LIPGNN_DATA is unset: skipping the Cora/PubMed CLI checks"; exit 77; }
  run info --dataset cora --json; expect_rc 0 "info --dataset cora"
  got="$(json_field nodes)/$(json_field edges)/$(json_field features)/$(json_field classes)/$(json_field train)/$(json_field val)/$(json_field test)"
  [ "$got" = "2708/10556/1433/7/140/500/1000" ] || fail "cora: $got"
  run info --data "$LIPGNN_DATA/pubmed" --json; expect_rc 0 "info --data pubmed"
  got="$(json_field nodes)/$(json_field edges)/$(json_field features)/$(json_field classes)/$(json_field train)/$(json_field val)/$(json_field test)"
  [ "$got" = "19717/88648/500/3/60/500/1000" ] || fail "pubmed: $got"
  run info --dataset no-such-set; expect_rc 2 "missing data set"
  ;;
bad_input)
  n=0
  for d in "$dir"/data/bad/*/; do
    d=${d%/}; n=$((n + 1))
    run info --data "$d"
    expect_rc 2 "info --data $d"
    grep -q "$(basename "$d")/" "$tmp/err" || fail "$d: message does not name the file: $(cat "$tmp/err")"
    grep -qiE "sanitizer|runtime error" "$tmp/err" && fail "$d: sanitizer report"
  done
  [ $n -ge 10 ] || fail "only $n bad-input fixtures found"
  echo "$n bad-input cases checked"
  ;;
blas)
  # A core type the user set is respected, silently.
  OPENBLAS_CORETYPE=Prescott "$bin" --version >"$tmp/out" 2>"$tmp/err"
  grep -q "OpenBLAS core: Prescott" "$tmp/out" || fail "user core type not respected: $(cat "$tmp/out")"
  [ -s "$tmp/err" ] && fail "message although the user set the core: $(cat "$tmp/err")"
  # Unset: a restart with the best core when OpenBLAS picked a worse one.
  env -u OPENBLAS_CORETYPE -u LIPGNN_BLAS_REEXEC "$bin" --version >"$tmp/out" 2>"$tmp/err"
  if grep -q "restarting with OPENBLAS_CORETYPE=" "$tmp/err"; then
    [ "$(grep -c restarting "$tmp/err")" = 1 ] || fail "restart message not said once"
    best=$(sed -n 's/.*restarting with OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p' "$tmp/err")
    grep -q "OpenBLAS core: $best .*set by lipgnn" "$tmp/out" || fail "not running $best after restart: $(cat "$tmp/out")"
    echo "restarted with $best"
  else
    grep -q "detected by OpenBLAS" "$tmp/out" || fail "no restart and no detection: $(cat "$tmp/out")"
    echo "OpenBLAS's own choice is already the best: $(head -2 "$tmp/out" | tail -1)"
  fi
  ;;
*) echo "unknown case $case_"; exit 1 ;;
esac
[ $fails -eq 0 ] && echo "cli $case_: passed" && exit 0
exit 1
