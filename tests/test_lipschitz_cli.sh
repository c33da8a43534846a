#!/usr/bin/env bash
# lipgnn lipschitz tests: test_lipschitz_cli.sh LIPGNN_BINARY FIXTURES_PARENT. Exit 0 pass, 1 fail.
# FIXTURES_PARENT: the directory whose data/ holds the fixture data sets (the build's
# tests/, where tests/CMakeLists.txt mirrors tests/data).
set -u
bin=$1 dir=$2
. "$(dirname "$0")/testlib.sh"
# one thread: on a shared, loaded machine OpenMP threads spinning at barriers slow
# every run many times over (README); results do not depend on it
export OMP_NUM_THREADS=1
json_field() { grep -o "\"$1\":[^,}]*" "$tmp/out" | head -1 | cut -d: -f2; }

# two small full-batch models on TREES, with and without LipschitzNorm
L=4
data=(--trees 3 --trees-count 60)
train_args=(train "${data[@]}" --layers $L --hidden 8 --epochs 10 --batch-size 0 --quiet --threads 1)
run "${train_args[@]}" --norm lipschitz --save "$tmp/lip.ckpt"; expect_rc 0 "train --norm lipschitz"
run "${train_args[@]}" --save "$tmp/none.ckpt"; expect_rc 0 "train (no norm)"

# help
run lipschitz --help; expect_rc 0 "lipschitz --help"
grep -q -- "--model FILE" "$tmp/out" || fail "lipschitz --help lacks --model"
grep -q -- "--csv FILE" "$tmp/out" || fail "lipschitz --help lacks --csv"
run --help; grep -q "lipschitz" "$tmp/out" || fail "lipgnn --help does not list lipschitz"

# errors: each with status 2 and a message saying what is wrong
run lipschitz "${data[@]}"; expect_rc 2 "no --model"; grep -q -- "--model FILE is required" "$tmp/err" || fail "no --model: $(cat "$tmp/err")"
# no data option: the data the checkpoint records (an older checkpoint's error: test_cli.sh data_source)
run lipschitz --model "$tmp/lip.ckpt" --iters 2 --starts 0 --json; expect_rc 0 "no data option"
grep -qx "lipgnn lipschitz: data: --trees 3 --trees-count 60 --seed 0 (from the checkpoint)" "$tmp/err" ||
  fail "no data option: $(cat "$tmp/err")"
run lipschitz --model "$tmp/missing.ckpt" "${data[@]}"; expect_rc 2 "missing checkpoint"
grep -q "missing.ckpt: cannot open" "$tmp/err" || fail "missing checkpoint: $(cat "$tmp/err")"
head -c 300 "$tmp/lip.ckpt" >"$tmp/cut.ckpt"
run lipschitz --model "$tmp/cut.ckpt" "${data[@]}"; expect_rc 2 "truncated checkpoint"; no_sanitizer "truncated checkpoint"
grep -q "cut.ckpt" "$tmp/err" || fail "truncated checkpoint: $(cat "$tmp/err")"
run lipschitz --model "$tmp/lip.ckpt" --data "$dir/data/tiny"; expect_rc 2 "graph that does not match"
grep -q "another data set" "$tmp/err" || fail "other graph: $(cat "$tmp/err")"
grep -q "note: using --data $dir/data/tiny as given; $tmp/lip.ckpt records that it was trained on --trees 3 --trees-count 60 --seed 0$" \
  "$tmp/err" || fail "other graph: no note naming both: $(cat "$tmp/err")"
run lipschitz --model "$tmp/lip.ckpt" --trees 3 --trees-count 61; expect_rc 2 "other TREES"
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --iters 0; expect_rc 2 "--iters 0"
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --starts x; expect_rc 2 "--starts x"
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --out "$tmp/o" --csv "$tmp/x.csv"; expect_rc 2 "--out with --csv"
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" extra; expect_rc 2 "extra argument"
# an output that cannot be made: refused before the estimate, exit 2 as predict's (it failed after the
# estimate, exit 1)
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --csv "$tmp/no/such/dir/x.csv" --quiet; expect_rc 2 "unwritable CSV"
grep -q -- "--csv $tmp/no/such/dir/x.csv: cannot create a file in $tmp/no/such/dir" "$tmp/err" || fail "unwritable CSV: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "unwritable CSV: the estimate ran: $(head -c 300 "$tmp/out")"
run train "${data[@]}" --layers 2 --hidden 8 --epochs 1 --quiet --save "$tmp/batch.ckpt"; expect_rc 0 "train in mini-batches"
run lipschitz --model "$tmp/batch.ckpt" "${data[@]}"; expect_rc 2 "mini-batch checkpoint"
grep -q "mini-batches" "$tmp/err" || fail "mini-batch checkpoint: $(cat "$tmp/err")"

# CSV: header, L rows of 12 fields, numbers; estimates <= bound for the normalised model;
# each layer's input RMS a positive number
check_csv() { # FILE BOUNDED
  local f=$1
  [ "$(head -1 "$f")" = "layer,kind,heads,norm,power_iteration_estimate,ascent_estimate,upper_bound,bound_basis,prod_power_iteration,prod_ascent,prod_upper_bound,input_rms" ] ||
    fail "$f: header $(head -1 "$f")"
  [ "$(($(wc -l <"$f") - 1))" = $L ] || fail "$f: $(($(wc -l <"$f") - 1)) rows, expected $L"
  awk -F, -v bounded="$2" '
    NR == 1 { next }
    NF != 12 { print "row " NR ": " NF " fields"; bad = 1; next }
    !($12 + 0 > 0) || $12 == "inf" { print "row " NR ": input RMS " $12; bad = 1 }
    $1 != NR - 2 { print "row " NR ": layer " $1; bad = 1 }
    $2 != "gat" { print "row " NR ": kind " $2; bad = 1 }
    !($5 + 0 > 0) || !($6 + 0 > 0) { print "row " NR ": estimates " $5 ", " $6; bad = 1 }
    bounded == 1 && !($7 + 0 > 0 && $7 != "inf" && $5 + 0 <= $7 + 0 && $6 + 0 <= $7 + 0) { print "row " NR ": estimates " $5 ", " $6 " bound " $7; bad = 1 }
    bounded == 0 && ($7 != "inf" || $11 != "inf") { print "row " NR ": bound " $7 " product " $11 ", expected inf"; bad = 1 }
    { prod = (NR == 2 ? $5 : prod * $5); if (prod - $9 > 1e-4 * prod || $9 - prod > 1e-4 * prod) { print "row " NR ": product " $9 " for " prod; bad = 1 } }
    END { exit bad }' "$f" >"$tmp/awk" || fail "$f: $(cat "$tmp/awk")"
}

run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --iters 20 --starts 2 --out "$tmp/lip" --threads 1
expect_rc 0 "lipschitz (norm lipschitz)"; no_sanitizer "lipschitz"
grep -q "layer 4 of 4 done" "$tmp/err" || fail "no progress on stderr: $(cat "$tmp/err")"
grep -qx "$tmp/lip/lipschitz.csv" "$tmp/err" || fail "CSV path not printed on stderr"
grep -q "product over layers" "$tmp/out" || fail "no table on stdout: $(cat "$tmp/out")"
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --iters 2 --starts 0 --out "$tmp/lip2/" --threads 1
expect_rc 0 "lipschitz --out DIR/"
grep -qx "$tmp/lip2/lipschitz.csv" "$tmp/err" || fail "--out DIR/: the CSV's path: $(cat "$tmp/err")"
check_csv "$tmp/lip/lipschitz.csv" 1
grep -q ",corollary 1," "$tmp/lip/lipschitz.csv" || fail "bound basis not corollary 1"
wellformed "$tmp/lip/lipschitz.svg"
[ "$(count 'class="series"' "$tmp/lip/lipschitz.svg")" = 6 ] || fail "SVG: not 6 series"
[ "$(count 'class="point"' "$tmp/lip/lipschitz.svg")" = $((3 * L)) ] || fail "SVG: $(count 'class="point"' "$tmp/lip/lipschitz.svg") points, expected $((3 * L))"
[ "$(count '<polyline' "$tmp/lip/lipschitz.svg")" = 6 ] || fail "SVG: not 6 lines"
grep -q '>layer</text>' "$tmp/lip/lipschitz.svg" || fail "SVG: no x axis title"
grep -q 'class="ytick"[^>]*>1e' "$tmp/lip/lipschitz.svg" || fail "SVG: no decade ticks"

# same seed, same figures; the JSON summary
run lipschitz --model "$tmp/lip.ckpt" "${data[@]}" --iters 20 --starts 2 --csv "$tmp/again.csv" --json --quiet --threads 1
expect_rc 0 "lipschitz --json"
cmp -s "$tmp/lip/lipschitz.csv" "$tmp/again.csv" || fail "same seed, other figures"
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "--json: not one line"
[ "$(json_field layers)" = $L ] || fail "--json layers: $(json_field layers)"
[ "$(json_field model)" = '"gat"' ] || fail "--json model: $(json_field model)"
grep -q '"upper_bound":\[[0-9]' "$tmp/out" || fail "--json upper_bound: $(cat "$tmp/out")"
grep -q '"output_rms":[0-9]' "$tmp/out" || fail "--json output_rms: $(cat "$tmp/out")"
# the JSON's input RMS per layer are the CSV's
[ "$(sed 's/.*"input_rms":\[\([^]]*\)\].*/\1/' "$tmp/out")" = "$(tail -n +2 "$tmp/again.csv" | cut -d, -f12 | paste -sd,)" ] ||
  fail "--json input_rms: $(cat "$tmp/out")"
[ -s "$tmp/err" ] && fail "--quiet printed on stderr: $(cat "$tmp/err")"
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || fail "--json output is not JSON"
fi

# without the norm: no bound (inf), drawn without the bound's points, with a note
run lipschitz --model "$tmp/none.ckpt" "${data[@]}" --iters 20 --starts 1 --csv "$tmp/none.csv" --svg "$tmp/none.svg" --json --quiet
expect_rc 0 "lipschitz (no norm)"
check_csv "$tmp/none.csv" 0
grep -q ",no LipschitzNorm," "$tmp/none.csv" || fail "no-norm basis"
grep -q '"upper_bound":\[null' "$tmp/out" || fail "--json: inf bound not null: $(cat "$tmp/out")"
wellformed "$tmp/none.svg"
[ "$(count 'class="point"' "$tmp/none.svg")" = $((2 * L)) ] || fail "no-norm SVG: $(count 'class="point"' "$tmp/none.svg") points"
grep -q 'upper bound inf' "$tmp/none.svg" || fail "no-norm SVG: no note on the inf bound"

[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "lipschitz CLI: all checks passed"
