#!/usr/bin/env bash
# lipgnn depth-study tests: test_depth.sh LIPGNN_BINARY FIXTURES_PARENT [FAKE_NOLOCK_LIB]. Exit 0 pass, 1 fail.
# FIXTURES_PARENT: the directory whose data/ holds the fixture data sets (the build's
# tests/, where tests/CMakeLists.txt mirrors tests/data).
set -u
bin=$1
. "$(dirname "$0")/testlib.sh"
rows() { echo $(($(wc -l <"$1") - 1)); }
# every line of a file ends with a newline and has 23 fields
complete_lines() {
  [ -z "$(tail -c 1 "$1")" ] || fail "$1: last line has no newline"
  awk -F, 'NF != 23 { bad = 1 } END { exit bad }' "$1" || fail "$1: a line without 23 fields"
}
# the key and results of each row, without the timing columns (epoch_ms_median, epochs_total_s)
results() { cut -d, -f1-16,18-20,22-23 "$1" | sort; }
# the same of the columns the second format had (the others are empty in an upgraded row)
results2() { cut -d, -f1-16 "$1" | sort; }
# a runs.csv as the second format wrote it (-1 for no explosion, 0 for TREES' validation accuracy),
# and as the first (without the trees column)
to_v1() {
  awk -F, -v OFS=, 'NR == 1 { NF = 17; print; next }
    NF == 23 { if ($10 == "") $10 = "0.000000"; if ($15 == "") $15 = "-1"; NF = 17 } { print }' "$1"
}
to_v0() { to_v1 "$1" | cut -d, -f1,3-; }

header="model,trees,layers,norm,residual,missing,seed,epochs_run,train_acc,val_acc,test_acc,best_val_acc,test_acc_at_best_val,exploded,first_explosion_epoch,max_layer_grad_norm,epoch_ms_median,best_epoch,train_acc_at_best_val,explosion_layer,epochs_total_s,threads,lipgnn_version"
out=$tmp/study
args=(depth-study --trees 2 --trees-count 40 --layers 1,2 --norms none,lipschitz --seeds 2 --epochs 3 --hidden 8)

run depth-study --help; expect_rc 0 "depth-study --help"
for o in --layers --norms --model --residual --missing --seeds --out --metric --json --grad-logs --trees "A..B" "d+1" \
         --jobs; do
  grep -q -- "$o" "$tmp/out" || fail "depth-study --help lacks $o"
done
run --help; grep -q "depth-study" "$tmp/out" || fail "lipgnn --help does not list depth-study"

# the study
run "${args[@]}" --out "$out" --verbose; expect_rc 0 "depth-study"; no_sanitizer "depth-study"
# TREES has no validation split: a run's line gives train and test, no "val 0.0000"
grep -q '^\[1/8\] gat none d=2 L=1 res=0 missing=0 seed 0: train [0-9.]* test [0-9.]* (' "$tmp/err" \
  || fail "--verbose run line: $(grep '^\[1/8\]' "$tmp/err")"
grep -q ' val ' "$tmp/err" && fail "--verbose on TREES gives a validation accuracy: $(grep ' val ' "$tmp/err" | head -1)"
[ "$(head -1 "$out/runs.csv")" = "$header" ] || fail "runs.csv header: $(head -1 "$out/runs.csv")"
[ "$(rows "$out/runs.csv")" = 8 ] || fail "runs.csv: $(rows "$out/runs.csv") rows, expected 8"
complete_lines "$out/runs.csv"
for n in none lipschitz; do for l in 1 2; do for s in 0 1; do
  grep -q "^gat,2,$l,$n,0,0,$s,3," "$out/runs.csv" || fail "runs.csv lacks gat L=$l $n seed $s"
done; done; done
grep -q "8 to do" "$tmp/err" || fail "first run does not say '8 to do': $(head -3 "$tmp/err")"
# the fields of a row: TREES has no validation split, so val_acc is empty (it was 0.000000); no run
# exploded, so first_explosion_epoch and explosion_layer are empty (it was -1); best_epoch is one of
# the 3 epochs, train_acc_at_best_val an accuracy, epochs_total_s a time, threads and the version lipgnn's
ver=$("$bin" --version | head -1 | cut -d' ' -f2)
awk -F, -v ver="$ver" 'NR > 1 && !($10 == "" && $15 == "" && $20 == "" && $18 >= 1 && $18 <= 3 &&
    $19 ~ /^[01]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ && $21 ~ /^[0-9]+\.[0-9][0-9][0-9]$/ && $22 >= 1 && $23 == ver) { bad = 1; print > "/dev/stderr" }
    END { exit bad }' "$out/runs.csv" 2>"$tmp/badrows" || fail "runs.csv fields: $(cat "$tmp/badrows")"
# summary.md: a row per depth, a column per norm, n=2 in each cell
sm=$out/summary.md
[ -f "$sm" ] || fail "no summary.md"
grep -q '^| layers |.*gat none.*|.*gat lipschitz.*|$' "$sm" || fail "summary.md header row: $(grep layers "$sm")"
[ "$(grep -c '^| [0-9]* |' "$sm")" = 2 ] || fail "summary.md: not 2 rows of layers"
grep -q '^| 1 |' "$sm" && grep -q '^| 2 |' "$sm" || fail "summary.md: rows are not layers 1 and 2"
cells2=$(grep '^| [0-9]* |' "$sm" | grep -o '(n=2)' | wc -l)
[ "$cells2" = 4 ] || fail "summary.md: $cells2 cells with n=2 in the rows of layers, expected 4"
grep -q 'train accuracy' "$sm" || fail "summary.md: --trees is not scored by train accuracy"
# the mean and std of one cell, recomputed from runs.csv (train_acc is field 9)
want=$(awk -F, '$1=="gat" && $3==2 && $4=="none" { x[n++] = $9 } END { m = (x[0] + x[1]) / 2;
  s = sqrt(((x[0] - m)^2 + (x[1] - m)^2) / 1); printf "%.3f ± %.3f", m, s }' "$out/runs.csv")
grep '^| 2 |' "$sm" | grep -qF "$want" || fail "summary.md L=2 none is not '$want': $(grep '^| 2 |' "$sm")"
# the number of layers chosen, per norm, recomputed from runs.csv: the highest mean best_val_acc
# (field 12: TREES has no validation split, so the best training accuracy, and summary.md says so)
# over the seeds, the first on ties; there test_acc_at_best_val (field 13)
grep -q 'chosen on training accuracy (the data set has no validation split)' "$sm" \
  || fail "summary.md does not say the choice is on training accuracy: $(grep chosen "$sm")"
grep -q '^| series | layers | mean best train | test at best train |$' "$sm" || fail "summary.md choice header"
for n in none lipschitz; do
  want=$(awk -F, -v n=$n '$1=="gat" && $4==n { bv[$3] += $12; c[$3]++; t[$3, c[$3]] = $13 }
    END { best = 0; for (l = 1; l <= 2; l++) { m = bv[l] / c[l]; if (!best || m > bm) { best = l; bm = m } }
          tm = (t[best, 1] + t[best, 2]) / 2; s = sqrt((t[best, 1] - tm)^2 + (t[best, 2] - tm)^2);
          printf "| gat %s | %d | %.3f | %.3f ± %.3f (n=2) |", n, best, bm, tm, s }' "$out/runs.csv")
  grep -qF -- "$want" "$sm" || fail "summary.md choice on validation for $n is not '$want': $(grep "^| gat $n |" "$sm")"
done
# depth.svg
svg=$out/depth.svg
wellformed "$svg"
[ "$(count 'class="series"' "$svg")" = 2 ] || fail "depth.svg: $(count 'class="series"' "$svg") series, expected 2"
[ "$(count 'class="errbar"' "$svg")" = 4 ] || fail "depth.svg: $(count 'class="errbar"' "$svg") error bars, expected 4"
[ "$(count 'class="marker"' "$svg")" = 4 ] || fail "depth.svg: not 4 markers"
grep -q '>layers</text>' "$svg" || fail "depth.svg: no 'layers' axis title"
grep -q '>train accuracy</text>' "$svg" || fail "depth.svg: no 'train accuracy' axis title"
[ "$(count 'class="legend-label"' "$svg")" = 2 ] || fail "depth.svg: not 2 legend entries"
ls "$out" | grep -q tmp && fail "temporary files left in the output directory: $(ls "$out")"

# resume: nothing to do, runs.csv unchanged
cp "$out/runs.csv" "$tmp/runs1.csv"
run "${args[@]}" --out "$out"; expect_rc 0 "depth-study again"; no_sanitizer "depth-study again"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "second run does not say '0 to do': $(head -3 "$tmp/err")"
cmp -s "$out/runs.csv" "$tmp/runs1.csv" || fail "a finished study changed runs.csv"
# the same --out with trailing slashes: the same study, its files named without "//"
run "${args[@]}" --out "$out//"; expect_rc 0 "depth-study --out DIR//"
grep -q "8 already in $out/runs.csv, 0 to do" "$tmp/err" && grep -q "$out/summary.md, $out/depth.svg" "$tmp/err" ||
  fail "--out DIR//: $(cat "$tmp/err")"

# a narrower grid on the same --out: the other runs are kept, and a note says the outputs show this grid only
rm -rf "$tmp/narrow"; cp -r "$out" "$tmp/narrow"
run depth-study --trees 2 --trees-count 40 --layers 1 --norms none --seeds 2 --epochs 3 --hidden 8 --out "$tmp/narrow"
expect_rc 0 "depth-study, a narrower grid"
grep -q "note: .*runs.csv holds 6 runs outside this grid" "$tmp/err" || fail "narrower grid: no note: $(cat "$tmp/err")"
[ "$(rows "$tmp/narrow/runs.csv")" = 8 ] || fail "narrower grid: runs.csv lost rows"

# runs that exploded and stopped: counted in their cells (summary.md said "last epoch" of runs that
# stopped at their first, and nothing of explosions)
run depth-study --trees 2 --trees-count 20 --layers 1 --norms none --seeds 2 --epochs 3 --hidden 4 \
    --explode-threshold 1e-9 --stop-on-explosion --out "$tmp/exploded" --quiet --json
expect_rc 0 "depth-study, every run exploding"
grep -q '^| 1 | [0-9.]* ± [0-9.]* (n=2, 2 exploded, 2 stopped) |$' "$tmp/exploded/summary.md" \
  || fail "exploded cells: $(grep '^| 1 |' "$tmp/exploded/summary.md")"
grep -q '"n":2,"exploded":2,"stopped":2,' "$tmp/out" || fail "exploded cells in --json: $(cat "$tmp/out")"
# their rows: the first explosion at epoch 1, the layer flagged (0 or 1 of this 1-layer model's
# attention layer and output; -1 would be the loss), as train --json gives them
awk -F, 'NR > 1 && !($14 == 1 && $15 == 1 && $20 ~ /^-?[0-9]+$/) { bad = 1 } END { exit bad }' \
  "$tmp/exploded/runs.csv" || fail "exploded rows: $(cat "$tmp/exploded/runs.csv")"
run train --trees 2 --trees-count 20 --layers 1 --norm none --epochs 3 --hidden 4 --explode-threshold 1e-9 \
    --stop-on-explosion --json
layer=$(grep -o '"explosion_layer":-\?[0-9]*' "$tmp/out" | cut -d: -f2)
[ -n "$layer" ] && [ "$(sed -n 2p "$tmp/exploded/runs.csv" | cut -d, -f20)" = "$layer" ] \
  || fail "explosion_layer: runs.csv $(sed -n 2p "$tmp/exploded/runs.csv" | cut -d, -f20), train --json '$layer'"

# train's per-run files are not depth-study's: refused (--save-best was accepted and did nothing)
for o in --save --save-best --log --grad-log --resume; do
  run depth-study --trees 2 --trees-count 10 --layers 1 --norms none --seeds 1 --epochs 1 $o "$tmp/x" --out "$tmp/refused"
  expect_rc 2 "depth-study $o"; grep -q -- "$o is not supported by depth-study" "$tmp/err" || fail "depth-study $o: $(cat "$tmp/err")"
done
# --layers ranges: A..B:S and single depths mixed
run depth-study --trees 2 --trees-count 10 --layers 2..6:2,9 --norms none --seeds 1 --epochs 1 --hidden 2 --out "$tmp/range" --quiet
expect_rc 0 "depth-study --layers 2..6:2,9"
[ "$(cut -d, -f3 "$tmp/range/runs.csv" | sed 1d | sort -n | tr '\n' ' ')" = "2 4 6 9 " ] || fail "--layers 2..6:2,9: $(cut -d, -f3 "$tmp/range/runs.csv")"
for bad in 5..2 2..x 1..3,2 1..1000; do
  run depth-study --trees 2 --trees-count 10 --layers "$bad" --norms none --seeds 1 --epochs 1 --out "$tmp/range-bad"
  expect_rc 2 "depth-study --layers $bad"
done

# a deleted last line: exactly that run is redone, with the same results
sed -i '$d' "$out/runs.csv"
run "${args[@]}" --out "$out"; expect_rc 0 "depth-study after a deleted line"
grep -q "7 already in .*1 to do" "$tmp/err" || fail "deleted line: not '1 to do': $(head -3 "$tmp/err")"
[ "$(rows "$out/runs.csv")" = 8 ] || fail "deleted line: $(rows "$out/runs.csv") rows"
[ "$(results "$out/runs.csv")" = "$(results "$tmp/runs1.csv")" ] || fail "the redone run differs from the first"

# a truncated last line (an interrupted write): dropped and redone
head -c -20 "$tmp/runs1.csv" >"$out/runs.csv"
run "${args[@]}" --out "$out"; expect_rc 0 "depth-study after a truncated line"
grep -q "incomplete last line" "$tmp/err" || fail "truncated line not reported"
grep -q "1 to do" "$tmp/err" || fail "truncated line: not '1 to do'"
[ "$(rows "$out/runs.csv")" = 8 ] || fail "truncated line: $(rows "$out/runs.csv") rows"
complete_lines "$out/runs.csv"
[ "$(results "$out/runs.csv")" = "$(results "$tmp/runs1.csv")" ] || fail "truncated line: results differ"

# --json: one object with every cell
run "${args[@]}" --out "$out" --json; expect_rc 0 "depth-study --json"
if [ -x /usr/bin/python3 ]; then
  tail -1 "$tmp/out" | /usr/bin/python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["runs_total"] == 8 and o["runs_done"] == 8, o
assert len(o["cells"]) == 4 and all(c["n"] == 2 for c in o["cells"]), o["cells"]
assert {c["norm"] for c in o["cells"]} == {"none", "lipschitz"}
' || fail "--json output: $(tail -1 "$tmp/out")"
fi

# settings.txt: the options every run shares; a study with others is refused
grep -q "^data: TREES, 40 trees from seed 0$" "$out/settings.txt" || fail "settings.txt data line: $(head -1 "$out/settings.txt")"
grep -q "^model gat: hidden=8 .*epochs=3 " "$out/settings.txt" || fail "settings.txt model line: $(cat "$out/settings.txt")"
# the default initialisation is not written (the settings of studies made before --init still match)
grep -q "init=" "$out/settings.txt" && fail "settings.txt names the default init: $(cat "$out/settings.txt")"
cp "$out/runs.csv" "$tmp/runs.before"
args41=("${args[@]/#40/41}") # (--trees-count 41 in place of 40: a data option is given once)
for other in "--hidden 16" "--epochs 4" "--lr 0.01" "--trees-count 41" "--seed 1" "--init pytorch"; do
  if [ "$other" = "--trees-count 41" ]; then run "${args41[@]}" --out "$out"; else run "${args[@]}" $other --out "$out"; fi
  expect_rc 2 "depth-study $other in a study made without it"
  grep -q "other settings" "$tmp/err" || fail "depth-study $other: no 'other settings' message: $(head -c 300 "$tmp/err")"
  cmp -s "$out/runs.csv" "$tmp/runs.before" || fail "depth-study $other changed runs.csv"
done
# ... naming the setting that differs (both whole lines, 400 characters, had to be compared by eye)
run "${args[@]}" --epochs 4 --out "$out"
grep -q "other settings (model gat: epochs 3 there, 4 here):" "$tmp/err" || fail "settings difference not named: $(head -1 "$tmp/err")"
run "${args41[@]}" --out "$out"
grep -q "other settings (data: 'TREES, 40 trees from seed 0' there, 'TREES, 41 trees from seed 0' here):" "$tmp/err" \
  || fail "data difference not named: $(head -1 "$tmp/err")"
# numbers compare as numbers: settings.txt's %.17g lr edited to its short form (the same double), and
# a zero written as 0.0, are the same settings
grep -q " lr=0.0050000000000000001 " "$out/settings.txt" || fail "settings.txt: lr not as %.17g: $(cat "$out/settings.txt")"
cp "$out/settings.txt" "$tmp/settings.keep"
sed -i 's/ lr=0.0050000000000000001 / lr=0.005 /; s/ weight_decay=0 / weight_decay=0.0 /' "$out/settings.txt"
run "${args[@]}" --out "$out"; expect_rc 0 "depth-study after settings.txt's lr=0.005 (the same double)"
grep -q "other settings" "$tmp/err" && fail "lr=0.005 refused: $(head -c 300 "$tmp/err")"
sed -i 's/ lr=0.005 / lr=0.0051 /' "$out/settings.txt"
run "${args[@]}" --out "$out"; expect_rc 2 "depth-study after settings.txt's lr=0.0051 (another)"
grep -q "other settings (model gat: lr 0.0051 there, 0.0050000000000000001 here)" "$tmp/err" || fail "lr=0.0051: $(head -c 300 "$tmp/err")"
cp "$tmp/settings.keep" "$out/settings.txt"
run "${args[@]}" --threads 1 --out "$out"; expect_rc 0 "depth-study --threads 1 (threads change no result)"
lines=$(wc -l <"$out/settings.txt")
run depth-study --trees 2 --trees-count 40 --layers 1 --norms none --seeds 1 --epochs 3 --hidden 8 --model gat,gt \
  --out "$out"
expect_rc 0 "depth-study adding a model"
[ "$(wc -l <"$out/settings.txt")" = $((lines + 1)) ] || fail "settings.txt: a new model's line was not appended"
grep -q "^model gt: " "$out/settings.txt" || fail "settings.txt lacks the gt line"
# the choice on validation from a runs.csv written by hand (every run done: nothing trains): layers 2
# has the higher mean best_val_acc (0.55 against 0.5); its test_acc_at_best_val are 0.7 and 0.9, its
# last-epoch test_acc 0.1 (the field must not be confused)
out6=$tmp/study6
mkdir -p "$out6"
{ echo "$header"
  echo "gat,2,1,none,0,0,0,3,0.5,,0.1,0.4,0.3,0,-1,1,1.0,,,,,,"
  echo "gat,2,1,none,0,0,1,3,0.5,,0.1,0.6,0.3,0,,1,1.0,2,0.5,,0.1,1,0.1.0"
  echo "gat,2,2,none,0,0,0,3,0.5,,0.1,0.5,0.7,0,,1,1.0,3,0.5,,0.1,2,0.1.0"
  echo "gat,2,2,none,0,0,1,3,0.5,,0.1,0.6,0.9,0,,1,1.0,1,0.5,,0.1,2,0.1.0"; } > "$out6/runs.csv"
run depth-study --trees 2 --trees-count 40 --layers 1,2 --norms none --seeds 2 --epochs 3 --hidden 8 --out "$out6"
expect_rc 0 "depth-study on a finished runs.csv"
grep -q "0 to do" "$tmp/err" || fail "a finished runs.csv: not '0 to do': $(head -3 "$tmp/err")"
grep -qF '| gat none | 2 | 0.550 | 0.800 ± 0.141 (n=2) |' "$out6/summary.md" \
  || fail "choice on validation from a known runs.csv: $(grep '^| gat none |' "$out6/summary.md")"
# a data set with a validation split: the choice is on validation accuracy, and the run lines give it
vout=$tmp/studyval
run depth-study --data "$2/data/tiny" --layers 1,2 --hidden 4 --seeds 1 --epochs 2 --out "$vout" --verbose --json
expect_rc 0 "depth-study --data tiny"
grep -q '^\[1/4\] gat none L=1 res=0 missing=0 seed 0: train [0-9.]* val [0-9.]* test [0-9.]* (' "$tmp/err" \
  || fail "--verbose run line with validation: $(grep '^\[1/4\]' "$tmp/err")"
grep -q 'The number of layers chosen on validation accuracy: ' "$vout/summary.md" \
  || fail "summary.md on tiny: $(grep chosen "$vout/summary.md")"
grep -q '^| series | layers | mean best val. | test at best val. |$' "$vout/summary.md" || fail "summary.md val header"
grep -q '"selection":"val"' "$tmp/out" || fail "--json on tiny: no selection val: $(tail -1 "$tmp/out")"
awk -F, 'NR > 1 && $10 !~ /^[01]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ { bad = 1 } END { exit bad }' "$vout/runs.csv" \
  || fail "a validation split: val_acc not written: $(sed -n 2p "$vout/runs.csv")"
# no test split: test_acc and test_acc_at_best_val empty, n/a in summary.md and the run lines, null in
# --json (they were 0, an accuracy never reached); the metric the validation accuracy, said (the
# default, test, would have none), and --metric test refused
mkdir -p "$tmp/notest"; cp "$2/data/tiny/"* "$tmp/notest/"; : >"$tmp/notest/test.txt"
run depth-study --data "$tmp/notest" --layers 1,2 --hidden 4 --seeds 2 --epochs 2 --out "$tmp/notest-study" --verbose --json
expect_rc 0 "depth-study without a test split"
grep -q "note: notest has no test split: the metric is the validation accuracy (--metric val)" "$tmp/err" \
  || fail "no test split: no note of the metric: $(head -3 "$tmp/err")"
awk -F, 'NR > 1 && !($11 == "" && $13 == "" && $10 != "") { bad = 1 } END { exit bad }' "$tmp/notest-study/runs.csv" \
  || fail "no test split: runs.csv $(sed -n 2p "$tmp/notest-study/runs.csv")"
grep -q '^val accuracy at the last epoch' "$tmp/notest-study/summary.md" || fail "no test split: summary.md not of val"
grep -q '^| 1 | [0-9.]* ± [0-9.]* (n=2) | [0-9.]* ± [0-9.]* (n=2) |$' "$tmp/notest-study/summary.md" \
  || fail "no test split: summary.md $(grep '^| 1 |' "$tmp/notest-study/summary.md")"
grep -q '^| gat none | [12] | [0-9.]* | n/a (no test split) |$' "$tmp/notest-study/summary.md" \
  || fail "no test split: selection $(grep '^| gat none |' "$tmp/notest-study/summary.md")"
grep -q '"mean":[0-9.]*,"std":[0-9.]*,"best_val_mean":[0-9.]*,"test_at_best_val_mean":null' "$tmp/out" \
  || fail "no test split: --json $(tail -1 "$tmp/out")"
grep -q '^\[1/8\] gat none L=1 res=0 missing=0 seed 0: train [0-9.]* val [0-9.]* test n/a (' "$tmp/err" \
  || fail "no test split: run line $(grep '^\[1/8\]' "$tmp/err")"
run depth-study --data "$tmp/notest" --layers 1 --hidden 4 --seeds 1 --epochs 2 --metric test --out "$tmp/notest-study2"
expect_rc 2 "depth-study --metric test without a test split"
grep -q -- "--metric test: notest has no test split (give --metric val or train)" "$tmp/err" || fail "--metric test: $(cat "$tmp/err")"
# a row of a hand-joined runs.csv without the test accuracy its cell's other run has: the mean is the
# other's, and the cell says one run is n/a
rm -rf "$tmp/mixed"; cp -r "$vout" "$tmp/mixed"
grep '^gat,0,1,none,0,0,0,' "$vout/runs.csv" | awk -F, -v OFS=, '{ $7 = 1; $11 = ""; print }' >>"$tmp/mixed/runs.csv"
t0=$(grep '^gat,0,1,none,0,0,0,' "$vout/runs.csv" | cut -d, -f11)
run depth-study --data "$2/data/tiny" --layers 1 --norms none --hidden 4 --seeds 2 --epochs 2 --out "$tmp/mixed" --json
expect_rc 0 "depth-study, a row without its test accuracy"
grep -q "^| 1 | $(printf '%.3f' "$t0") (n=2, 1 n/a) |\$" "$tmp/mixed/summary.md" \
  || fail "a row without its test accuracy: $(grep '^| 1 |' "$tmp/mixed/summary.md") (test_acc of the other: $t0)"
# --json: the count of values beside n, and no std from one value (it was 0)
grep -q "\"n\":2,.*\"mean\":$t0,\"std\":null,.*\"n_values\":1,\"test_at_best_val_n_values\":2}" "$tmp/out" \
  || fail "a row without its test accuracy, --json: $(tail -1 "$tmp/out")"
run "${args[@]}" --out "$out" --json; expect_rc 0 "depth-study --json (TREES)"
grep -q '"selection":"train"' "$tmp/out" || fail "--json on TREES: no selection train: $(tail -1 "$tmp/out")"
# two models, a residual list, --metric, --grad-logs
out2=$tmp/study2
run depth-study --trees 2 --trees-count 40 --model gat,gt --layers 2 --norms lipschitz --residual 0,1 --seeds 1 \
    --epochs 2 --hidden 8 --metric test --grad-logs --out "$out2"
expect_rc 0 "depth-study two models"; no_sanitizer "two models"
[ "$(rows "$out2/runs.csv")" = 4 ] || fail "two models: $(rows "$out2/runs.csv") rows, expected 4"
grep -q "^gt,2,2,lipschitz,1,0,0," "$out2/runs.csv" || fail "two models: no gt residual row"
[ "$(ls "$out2" | grep -c '^grad_.*\.csv$')" = 4 ] || fail "--grad-logs: not 4 grad logs: $(ls "$out2")"
grep -q 'test accuracy' "$out2/summary.md" || fail "--metric test not used"
grep -q 'gt lipschitz res=1' "$out2/summary.md" || fail "summary.md lacks the gt residual column"
[ "$(count 'class="series"' "$out2/depth.svg")" = 0 ] || fail "one depth: no polyline expected"
[ "$(count 'class="marker"' "$out2/depth.svg")" = 4 ] || fail "one depth: not 4 markers"
wellformed "$out2/depth.svg"

# TREES depths on the x axis: d+1 layers each, runs keyed by the depth
out4=$tmp/study4
targs=(depth-study --trees 2..4 --trees-count 40 --norms lipschitz --seeds 1 --epochs 2 --hidden 8 --batch-size 8)
run "${targs[@]}" --out "$out4" --grad-logs; expect_rc 0 "depth-study --trees 2..4"; no_sanitizer "--trees 2..4"
[ "$(rows "$out4/runs.csv")" = 3 ] || fail "--trees 2..4: $(rows "$out4/runs.csv") rows, expected 3"
complete_lines "$out4/runs.csv"
for d in 2 3 4; do
  grep -q "^gat,$d,$((d + 1)),lipschitz,0,0,0,2," "$out4/runs.csv" || fail "--trees 2..4: no row for d=$d with $((d + 1)) layers"
  [ -f "$out4/grad_gat_lipschitz_r0_m0_d${d}_L$((d + 1))_seed0.csv" ] || fail "--trees 2..4: no grad log for d=$d: $(ls "$out4")"
done
grep -q '^| depth |' "$out4/summary.md" || fail "--trees 2..4: summary.md rows are not depths"
[ "$(grep -c '^| [2-4] |.*(n=1)' "$out4/summary.md")" = 3 ] || fail "--trees 2..4: summary.md lacks depth rows"
grep -q 'd+1 layers' "$out4/summary.md" || fail "--trees 2..4: summary.md does not say d+1 layers"
grep -q 'train accuracy' "$out4/summary.md" || fail "--trees 2..4: not scored by train accuracy"
grep -q '>tree depth d (d+1 layers)</text>' "$out4/depth.svg" || fail "--trees 2..4: depth.svg x axis is not the tree depth"
[ "$(count 'class="marker"' "$out4/depth.svg")" = 3 ] || fail "--trees 2..4: not 3 markers"
wellformed "$out4/depth.svg"
cp "$out4/runs.csv" "$tmp/runs4.csv"
grep -v '^gat,3,' "$tmp/runs4.csv" >"$out4/runs.csv"
run "${targs[@]}" --out "$out4"; expect_rc 0 "--trees 2..4 after a deleted depth"
grep -q "2 already in .*1 to do" "$tmp/err" || fail "--trees 2..4 resume: not '1 to do': $(head -2 "$tmp/err")"
[ "$(results "$out4/runs.csv")" = "$(results "$tmp/runs4.csv")" ] || fail "--trees 2..4: the redone depth differs"
run "${targs[@]}" --out "$out4" --json; expect_rc 0 "--trees 2..4 --json"
grep -q '"trees":4,"layers":5' "$tmp/out" || fail "--trees --json: no cell with trees 4 and 5 layers"
# a depth list with --layers: one series per number of layers
out5=$tmp/study5
run depth-study --trees 2,4 --layers 2,3 --trees-count 30 --norms none --seeds 1 --epochs 1 --hidden 4 --out "$out5"
expect_rc 0 "depth-study --trees 2,4 --layers 2,3"
[ "$(rows "$out5/runs.csv")" = 4 ] || fail "--trees 2,4 --layers 2,3: $(rows "$out5/runs.csv") rows, expected 4"
grep -q '^gat,4,2,none,' "$out5/runs.csv" || fail "--trees 2,4 --layers 2,3: no d=4 L=2 row"
grep -q '^| depth | gat none L=2 | gat none L=3 |$' "$out5/summary.md" || fail "--layers series: $(grep depth "$out5/summary.md")"

# a runs.csv of the first format (no trees column): upgraded in place, its runs kept
mkdir -p "$tmp/old"
to_v0 "$tmp/runs1.csv" >"$tmp/old/runs.csv"
printf 'gat,2,none' >>"$tmp/old/runs.csv" # an interrupted write, dropped
run "${args[@]}" --out "$tmp/old"; expect_rc 0 "depth-study on a first-format runs.csv"
grep -q "upgraded from the format without the trees column (8 runs; the columns after epoch_ms_median" "$tmp/err" || fail "old runs.csv: no upgrade message: $(head -c 300 "$tmp/err")"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "old runs.csv: its runs were not kept: $(head -3 "$tmp/err")"
[ "$(head -1 "$tmp/old/runs.csv")" = "$header" ] || fail "old runs.csv: header not upgraded"
awk -F, 'NR > 1 && $2 != 2 { bad = 1 } END { exit bad }' "$tmp/old/runs.csv" || fail "old runs.csv: trees column not the study's depth 2"
[ "$(results2 "$tmp/old/runs.csv")" = "$(results2 "$tmp/runs1.csv")" ] || fail "old runs.csv: rows changed by the upgrade"
complete_lines "$tmp/old/runs.csv"
mkdir -p "$tmp/old2"
to_v0 "$tmp/runs1.csv" >"$tmp/old2/runs.csv"
run depth-study --trees 2,3 --trees-count 40 --norms none --seeds 1 --epochs 3 --hidden 8 --out "$tmp/old2"
expect_rc 2 "depth-study over two depths on a first-format runs.csv (its one depth unknown)"
grep -q "give that depth alone" "$tmp/err" || fail "old runs.csv, two depths: message: $(head -c 300 "$tmp/err")"
# a first-format runs.csv with a malformed row: refused before the upgrade rewrites it (the
# upgraded file was written first, then refused, the original format lost)
mkdir -p "$tmp/old3"
to_v0 "$tmp/runs1.csv" | sed '3s/^\(\([^,]*,\)\{7\}\)[^,]*/\1x/' >"$tmp/old3/runs.csv"
cp "$tmp/old3/runs.csv" "$tmp/old3.csv"
run "${args[@]}" --out "$tmp/old3"; expect_rc 2 "depth-study on a first-format runs.csv with a malformed row"
grep -q "runs.csv:3: malformed row .*as upgraded from the first format, with the trees column and those after epoch_ms_median added; the file is unchanged" "$tmp/err" \
  || fail "old runs.csv, malformed row: $(cat "$tmp/err")"
cmp -s "$tmp/old3/runs.csv" "$tmp/old3.csv" || fail "old runs.csv with a malformed row: the file was rewritten"
# a first-format runs.csv with blank lines: upgraded with them (they were written as NUL bytes,
# which merged with the next row and left the study unusable)
mkdir -p "$tmp/old4"
{ to_v0 "$tmp/runs1.csv" | sed -n 1,3p; echo; to_v0 "$tmp/runs1.csv" | sed -n '4,$p'; echo; } >"$tmp/old4/runs.csv"
run "${args[@]}" --out "$tmp/old4"; expect_rc 0 "depth-study on a first-format runs.csv with blank lines"
grep -q "upgraded from the format without the trees column (8 runs; the columns after epoch_ms_median" "$tmp/err" || fail "old runs.csv with blank lines: $(cat "$tmp/err")"
tr -d '\n' <"$tmp/old4/runs.csv" | tr -d '[:print:]' | grep -q . && fail "old runs.csv with blank lines: control bytes written"
run "${args[@]}" --out "$tmp/old4"; expect_rc 0 "depth-study again on the upgraded file"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "upgraded file with blank lines, again: $(cat "$tmp/err")"
# a runs.csv of the second format (no best_epoch .. lipgnn_version): upgraded in place, its runs kept,
# the new columns empty, the -1 of no explosion and TREES' validation accuracy of 0 empty too
mkdir -p "$tmp/v1"
to_v1 "$tmp/runs1.csv" >"$tmp/v1/runs.csv"
grep -q ',0\.000000,.*,-1,' "$tmp/v1/runs.csv" || fail "to_v1 made no second-format row: $(sed -n 2p "$tmp/v1/runs.csv")"
printf 'gat,2,1,none' >>"$tmp/v1/runs.csv" # an interrupted write, dropped
run "${args[@]}" --out "$tmp/v1"; expect_rc 0 "depth-study on a second-format runs.csv"
grep -q "upgraded from the format without the columns best_epoch, .*lipgnn_version (8 runs; those are empty" "$tmp/err" \
  || fail "second-format runs.csv: no upgrade message: $(head -c 400 "$tmp/err")"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "second-format runs.csv: its runs were not kept: $(head -3 "$tmp/err")"
[ "$(head -1 "$tmp/v1/runs.csv")" = "$header" ] || fail "second-format runs.csv: header not upgraded"
complete_lines "$tmp/v1/runs.csv"
[ "$(results2 "$tmp/v1/runs.csv")" = "$(results2 "$tmp/runs1.csv")" ] || fail "second-format runs.csv: rows changed: $(diff <(results2 "$tmp/v1/runs.csv") <(results2 "$tmp/runs1.csv"))"
awk -F, 'NR > 1 && $18 $19 $20 $21 $22 $23 != "" { bad = 1 } END { exit bad }' "$tmp/v1/runs.csv" \
  || fail "second-format runs.csv: new columns not empty: $(sed -n 2p "$tmp/v1/runs.csv")"
cmp -s "$tmp/v1/summary.md" "$tmp/old/summary.md" || fail "second-format runs.csv: summary.md differs from the first-format one's"
cp "$tmp/v1/runs.csv" "$tmp/v1.csv"
run "${args[@]}" --out "$tmp/v1"; expect_rc 0 "depth-study again on the upgraded second-format file"
grep -q "upgraded" "$tmp/err" && fail "the upgraded file was upgraded again: $(cat "$tmp/err")"
cmp -s "$tmp/v1/runs.csv" "$tmp/v1.csv" || fail "the upgraded second-format file changed on a second study"
# a second-format runs.csv with a malformed row: refused, the file unchanged
mkdir -p "$tmp/v1bad"
to_v1 "$tmp/runs1.csv" | sed '3s/^\(\([^,]*,\)\{8\}\)[^,]*/\1x/' >"$tmp/v1bad/runs.csv"
cp "$tmp/v1bad/runs.csv" "$tmp/v1bad.csv"
run "${args[@]}" --out "$tmp/v1bad"; expect_rc 2 "depth-study on a second-format runs.csv with a malformed row"
grep -q "runs.csv:3: malformed row .*as upgraded from the format without the columns after epoch_ms_median; the file is unchanged" \
  "$tmp/err" || fail "second-format runs.csv, malformed row: $(cat "$tmp/err")"
cmp -s "$tmp/v1bad/runs.csv" "$tmp/v1bad.csv" || fail "second-format runs.csv with a malformed row: the file was rewritten"
# a tree depth with a sign ("-0"): refused, where the upgrade took it for TREES (emptying its val_acc)
to_v1 "$tmp/runs1.csv" | sed '3s/^\([^,]*\),[^,]*,/\1,-0,/' >"$tmp/v1bad/runs.csv"
sed -n 3p "$tmp/v1bad/runs.csv" | grep -q '^[^,]*,-0,' || fail "-0 trees: the edit did nothing"
cp "$tmp/v1bad/runs.csv" "$tmp/v1bad.csv"
run "${args[@]}" --out "$tmp/v1bad"; expect_rc 2 "depth-study on a second-format runs.csv with trees -0"
grep -q "runs.csv:3: malformed row '[^,]*,-0," "$tmp/err" || fail "trees -0: $(cat "$tmp/err")"
cmp -s "$tmp/v1bad/runs.csv" "$tmp/v1bad.csv" || fail "trees -0: the file was rewritten"
# blank lines (an editor's newline at the end): skipped, where the last one was a fatal 'malformed row'
rm -rf "$tmp/blank"; cp -r "$out" "$tmp/blank"
cp "$tmp/runs1.csv" "$tmp/blank/runs.csv"; printf '\n\n' >>"$tmp/blank/runs.csv"
run "${args[@]}" --out "$tmp/blank"; expect_rc 0 "depth-study, runs.csv ending in blank lines"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "blank lines: $(cat "$tmp/err")"
# a NUL byte: refused, naming its line, the file unchanged (in a second-format file the upgrade's line
# scan stopped at it, and the rows after it were dropped and run again)
for fmt in 3 2; do
  rm -rf "$tmp/nul"; mkdir -p "$tmp/nul"
  if [ $fmt = 3 ]; then cp "$tmp/runs1.csv" "$tmp/nul.csv"; else to_v1 "$tmp/runs1.csv" >"$tmp/nul.csv"; fi
  { sed -n 1,3p "$tmp/nul.csv"; sed -n 4p "$tmp/nul.csv" | sed 's/,/,\x00/'; sed -n '5,$p' "$tmp/nul.csv"; } >"$tmp/nul/runs.csv"
  cp "$tmp/nul/runs.csv" "$tmp/nul.before"
  run "${args[@]}" --out "$tmp/nul"; expect_rc 2 "depth-study, a NUL byte in a format-$fmt runs.csv"
  grep -q "runs.csv:4: a NUL byte .*the file is unchanged" "$tmp/err" || fail "NUL byte (format $fmt): $(cat "$tmp/err")"
  cmp -s "$tmp/nul/runs.csv" "$tmp/nul.before" || fail "NUL byte (format $fmt): the file was changed"
done
# a row ending in CR: the message shows it as '?' and says why (a raw CR moved the cursor)
rm -rf "$tmp/cr"; mkdir -p "$tmp/cr"; { sed -n 1,2p "$tmp/runs1.csv"; sed -n 3p "$tmp/runs1.csv" | sed 's/$/\r/'; } >"$tmp/cr/runs.csv"
run "${args[@]}" --out "$tmp/cr"; expect_rc 2 "depth-study, a row ending in CR"
grep -q "runs.csv:3: malformed row '[^']*?' (a field missing, extra or out of range; it holds a CR" "$tmp/err" \
  || fail "a row ending in CR: $(cat -v "$tmp/err")"
grep -q "$(printf '\r')" "$tmp/err" && fail "a row ending in CR: the CR printed raw"
# a runs.csv of blank lines only (emptied in an editor): as an empty one, where it was refused as foreign
rm -rf "$tmp/blank2"; mkdir -p "$tmp/blank2"; printf '\n\r\n\n' >"$tmp/blank2/runs.csv"
run depth-study --trees 2 --trees-count 40 --layers 1 --norms none --seeds 1 --epochs 3 --hidden 8 --out "$tmp/blank2"
expect_rc 0 "depth-study, runs.csv of blank lines"
[ "$(head -1 "$tmp/blank2/runs.csv")" = "$header" ] && [ "$(rows "$tmp/blank2/runs.csv")" = 1 ] \
  || fail "runs.csv of blank lines: $(cat "$tmp/blank2/runs.csv")"
# a row repeating another's run (two files concatenated): noted, the first kept
rm -rf "$tmp/dup"; cp -r "$out" "$tmp/dup"
sed -n 3p "$tmp/runs1.csv" | sed 's/^\(\([^,]*,\)\{8\}\)[^,]*/\10.999999/' >>"$tmp/dup/runs.csv"
run "${args[@]}" --out "$tmp/dup" --json; expect_rc 0 "depth-study, a duplicated run in runs.csv"
grep -q "note: .*runs.csv:[0-9]*: the run of this row (gat d=2 L=.* seed .*) is in an earlier row too: the earlier row is kept" \
  "$tmp/err" || fail "duplicate row: no note: $(cat "$tmp/err")"
grep -q "8 already in .*0 to do" "$tmp/err" || fail "duplicate row: $(cat "$tmp/err")"
cmp -s "$tmp/dup/summary.md" "$out/summary.md" || fail "duplicate row: summary.md differs from the study's: the later row counted"
# a wrong header
mkdir -p "$tmp/bad"
printf 'epoch,layer,group,norm\n1,0,all,1\n' >"$tmp/bad/runs.csv"
run "${args[@]}" --out "$tmp/bad"; expect_rc 2 "depth-study with a foreign runs.csv"
grep -q "runs.csv" "$tmp/err" || fail "wrong header: message does not name runs.csv"
[ "$(head -1 "$tmp/bad/runs.csv")" = "epoch,layer,group,norm" ] || fail "wrong header: file was modified"
# a header with CRLF line ends: said so (the two headers looked the same)
printf '%s\r\n' "$header" >"$tmp/bad/runs.csv"
run "${args[@]}" --out "$tmp/bad"; expect_rc 2 "depth-study with a CRLF runs.csv"
grep -q "its lines end in CRLF" "$tmp/err" || fail "CRLF runs.csv: $(cat "$tmp/err")"
# a malformed row
printf '%s\ngat,x,none\n' "$header" >"$tmp/bad/runs.csv"
run "${args[@]}" --out "$tmp/bad"; expect_rc 2 "depth-study with a malformed row"
# rows whose results are out of range, or not the 0/1 of exploded: refused, the row shown whole (a nan
# accuracy went into summary.md and into --json as a bare nan)
good=$(sed -n 2p "$out/runs.csv")
for edit in 's/^\(\([^,]*,\)\{8\}\)[^,]*/\1nan/' 's/^\(\([^,]*,\)\{10\}\)[^,]*/\17.5/' \
            's/^\(\([^,]*,\)\{13\}\)[^,]*/\1yes/' 's/^\(\([^,]*,\)\{6\}\)[^,]*/\1 -1/'; do
  rm -rf "$tmp/vals"; cp -r "$out" "$tmp/vals"
  printf '%s\n%s\n' "$header" "$(echo "$good" | sed "$edit")" >"$tmp/vals/runs.csv"
  run "${args[@]}" --out "$tmp/vals"; expect_rc 2 "depth-study with a row edited by $edit"
  grep -q "runs.csv:2: malformed row '$(echo "$good" | sed "$edit" | cut -c1-40)" "$tmp/err" || fail "row edited by $edit: $(cat "$tmp/err")"
done
# explosion fields that disagree with exploded: refused, saying which (they were taken as they were)
for cols in '14=1' '14=1 15=0' '15=3' '20=2'; do
  rm -rf "$tmp/vals"; cp -r "$out" "$tmp/vals"
  row=$(echo "$good" | awk -F, -v OFS=, -v e="$cols" '{ n = split(e, kv, " "); for (k = 1; k <= n; k++) { split(kv[k], p, "="); $p[1] = p[2] } print }')
  [ "$row" != "$good" ] || fail "explosion fields: edit $cols changed nothing"
  printf '%s\n%s\n' "$header" "$row" >"$tmp/vals/runs.csv"
  run "${args[@]}" --out "$tmp/vals"; expect_rc 2 "depth-study with a row whose explosion fields are $cols"
  case $cols in 14=1*) want="exploded is 1 but first_explosion_epoch is not an epoch" ;;
                *) want="exploded is 0 but first_explosion_epoch or explosion_layer is given" ;; esac
  grep -q "runs.csv:2: malformed row .*($want)" "$tmp/err" || fail "explosion fields $cols: $(cat "$tmp/err")"
done
# fields that name an epoch or a layer the run did not have, a norm that is not finite without an
# explosion (the detector always fires on one), numbers that are not decimal (strtod's hexadecimal
# and spaces): refused, saying which (they went into summary.md)
for cols in '8=999999999999' '18=99' '14=1 15=99 20=0' '14=1 15=2 20=999999' '16=nan' '16=inf' \
            '9=0x1p-1' '16=0x10' '17= 1.5' '21=+2' '6=0x0'; do
  rm -rf "$tmp/vals"; cp -r "$out" "$tmp/vals"
  row=$(echo "$good" | awk -F, -v OFS=, -v e="$cols" '{ n = split(e, kv, " "); for (k = 1; k <= n; k++) { split(kv[k], p, "="); $p[1] = p[2] } print }')
  [ "$row" != "$good" ] || fail "cross-field check: edit $cols changed nothing"
  printf '%s\n%s\n' "$header" "$row" >"$tmp/vals/runs.csv"
  run "${args[@]}" --out "$tmp/vals"; expect_rc 2 "depth-study with a row edited to $cols"
  case $cols in 8=*) want="epochs_run 999999999999 is more than the study's --epochs 3 of gat" ;;
                18=*|*15=99*) want="best_epoch or first_explosion_epoch is after epochs_run" ;;
                *20=999999) want="explosion_layer is not a layer of the model (0 to layers - 1, or -1: the loss)" ;;
                16=nan|16=inf) want="exploded is 0 but max_layer_grad_norm is not finite, which the detector fires on" ;;
                *) want="a field missing, extra or out of range" ;; esac
  grep -qF "runs.csv:2: malformed row '" "$tmp/err" && grep -qF "($want)" "$tmp/err" \
    || fail "cross-field check $cols: $(cat "$tmp/err")"
  cmp -s "$tmp/vals/runs.csv" <(printf '%s\n%s\n' "$header" "$row") || fail "cross-field check $cols: runs.csv changed"
done
# a norm that is not finite in an exploded row, as the writer prints it ("-nan" too): taken
for gn in nan -nan inf; do
  row=$(echo "$good" | awk -F, -v OFS=, -v g=$gn '{ $14 = 1; $15 = 1; $16 = g; $20 = 0; print }')
  rm -rf "$tmp/vals"; cp -r "$out" "$tmp/vals"
  printf '%s\n%s\n' "$header" "$row" >"$tmp/vals/runs.csv"
  run "${args[@]}" --out "$tmp/vals" --quiet; expect_rc 0 "depth-study with an exploded row of norm $gn"
done
row=$(echo "$good" | awk -F, -v OFS=, '{ $14 = 1; $15 = 2; $20 = -1; print }') # exploded at epoch 2, by the loss
rm -rf "$tmp/vals"; cp -r "$out" "$tmp/vals"
printf '%s\n%s\n' "$header" "$row" >"$tmp/vals/runs.csv"
run "${args[@]}" --out "$tmp/vals" --quiet; expect_rc 0 "depth-study with an exploded row"
# runs.csv without its settings.txt (deleted, emptied): its runs are adopted as this command's (as a
# first-format study's, which had none), now with a note, where they were taken silently
for how in rm empty; do
  rm -rf "$tmp/nosettings"; cp -r "$out" "$tmp/nosettings"
  if [ $how = rm ]; then rm "$tmp/nosettings/settings.txt"; else : >"$tmp/nosettings/settings.txt"; fi
  run "${args[@]}" --out "$tmp/nosettings" --quiet; expect_rc 0 "depth-study, settings.txt $how"
  grep -q "note: .*settings.txt \(is missing\|names none of this study's settings\): the runs already in runs.csv are taken as made with this command's settings" "$tmp/err" \
    || fail "settings.txt $how: no note: $(cat "$tmp/err")"
  grep -q "^model gat: hidden=8 " "$tmp/nosettings/settings.txt" || fail "settings.txt $how: not written again"
done
# runs.csv or settings.txt a FIFO or a device: refused at once (a FIFO hung; /dev/zero filled the memory)
for f in runs.csv settings.txt; do
  for kind in fifo zero; do
    rm -rf "$tmp/special"; cp -r "$out" "$tmp/special"; rm "$tmp/special/$f"
    if [ $kind = fifo ]; then mkfifo "$tmp/special/$f"; else ln -s /dev/zero "$tmp/special/$f"; fi
    timeout 60 "$bin" "${args[@]}" --out "$tmp/special" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"
    expect_rc 2 "depth-study, $f a $kind"
    grep -q "$f: not a regular file" "$tmp/err" || fail "$f a $kind: $(cat "$tmp/err")"
  done
done

# bad options
bad() {
  run depth-study --trees 2 --trees-count 40 --epochs 1 --out "$tmp/badopt" "$@"
  expect_rc 2 "depth-study $*"; no_sanitizer "depth-study $*"
  [ -s "$tmp/err" ] || fail "depth-study $*: no message"
}
bad --layers ""
bad --epochs 0
bad --layers 0,2
bad --layers 1,,2
bad --layers 2,x
bad --layers 2,2
bad --layers 2 --norms ""
bad --layers 2 --norms none,bogus
bad --layers 2 --seeds 0
bad --layers 2 --seeds -1
bad --layers 2 --model gat,nope
bad --layers 2 --residual 2
bad --layers 2 --missing 1.5
bad --layers 2 --metric foo
bad --layers 2 --save x.ckpt
bad --layers 2 --hidden 0
bad --layers 2 --bogus-option
bad --layers 2 --model gat-classic --layers 5
bad --layers 2 --trees 3 --dataset cora
bad --trees 1..3
bad --trees 5..3
bad --trees 2,2
bad --trees 2,x
bad --trees 11
bad --trees 2 --batch-size -1
bad --layers 2 --jobs 0
bad --layers 2 --jobs 65
bad --layers 2 --jobs x
run depth-study --trees 2 --layers 2; expect_rc 2 "depth-study without --out"
grep -q -- "--out" "$tmp/err" || fail "missing --out: message does not say --out"
run depth-study --out "$tmp/x" --layers 2; expect_rc 2 "depth-study without data"

# SIGTERM during a longer study: exit 143, only complete lines, then a re-run completes it.
# interrupted WHAT OUT ARGS...: runs the 8-run study ARGS, sends SIGTERM after 2 s and checks
# what it left in OUT; sets n (the runs recorded); 1 if the study was not interrupted
interrupted() {
  local what=$1 o=$2; shift 2
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  sleep 2
  kill -TERM $pid 2>/dev/null
  wait $pid
  local st=$?
  if [ "$st" != 143 ]; then
    fail "$what: exit $st, expected 143 (was the study shorter than 2 s?); stderr: $(head -c 300 "$tmp/err")"
    return 1
  fi
  no_sanitizer "$what"
  complete_lines "$o/runs.csv"
  n=$(rows "$o/runs.csv")
  [ "$n" -lt 8 ] || fail "$what: all 8 runs recorded, the study was not interrupted"
  [ -f "$o/summary.md" ] && [ -f "$o/depth.svg" ] || fail "$what: summary.md / depth.svg not written"
  grep -q "$n of 8 runs done" "$o/summary.md" || fail "$what: summary.md does not say '$n of 8 runs done'"
}
# resumed WHAT OUT ARGS...: the same study run again completes it, redoing only what is missing
resumed() {
  local what=$1 o=$2; shift 2
  run "$@"; expect_rc 0 "depth-study after $what"
  grep -q "$n already in .*$((8 - n)) to do" "$tmp/err" || fail "resume after $what: $(head -2 "$tmp/err")"
  [ "$(rows "$o/runs.csv")" = 8 ] || fail "after $what + re-run: $(rows "$o/runs.csv") rows"
  complete_lines "$o/runs.csv"
  wellformed "$o/depth.svg"
}
out3=$tmp/study3
long=(depth-study --trees 3 --trees-count 300 --layers 2,4 --norms none,lipschitz --seeds 2 --epochs 150 --hidden 16
      --threads 1 --out "$out3")
interrupted SIGTERM "$out3" "${long[@]}" && resumed SIGTERM "$out3" "${long[@]}"

# --jobs: the runs in worker processes give the same rows as one after the other
# (at the same --threads), in the order they finish; every run recorded once
jargs=(depth-study --trees 3 --trees-count 60 --layers 1,2,3 --norms none,lipschitz --seeds 2 --epochs 4 --hidden 8
       --threads 1)
run "${jargs[@]}" --out "$tmp/jser"; expect_rc 0 "depth-study (serial, for --jobs)"
run "${jargs[@]}" --jobs 3 --out "$tmp/jpar"; expect_rc 0 "depth-study --jobs 3"; no_sanitizer "--jobs 3"
grep -q "3 jobs of 1 thread each" "$tmp/err" || fail "--jobs 3: does not say its jobs: $(head -c 300 "$tmp/err")"
[ "$(rows "$tmp/jpar/runs.csv")" = 12 ] || fail "--jobs 3: $(rows "$tmp/jpar/runs.csv") rows, expected 12"
complete_lines "$tmp/jpar/runs.csv"
[ "$(results "$tmp/jpar/runs.csv")" = "$(results "$tmp/jser/runs.csv")" ] || fail "--jobs 3: rows differ from the serial study's"
cmp -s "$tmp/jpar/summary.md" "$tmp/jser/summary.md" || fail "--jobs 3: summary.md differs from the serial study's"
[ -z "$(cut -d, -f1-7 "$tmp/jpar/runs.csv" | sort | uniq -d)" ] || fail "--jobs 3: a run recorded twice"
run "${jargs[@]}" --jobs 2 --out "$tmp/jpar"; expect_rc 0 "depth-study --jobs 2 on a finished study"
grep -q "0 to do" "$tmp/err" || fail "--jobs on a finished study: not '0 to do'"
grep -q "jobs of" "$tmp/err" && fail "--jobs on a finished study started workers"
# each run's explosion message names its run (with --jobs they interleave), and only that run's
run depth-study --trees 2 --trees-count 40 --layers 1,2 --norms none --missing 0,0.5 --seeds 1 --epochs 3 --hidden 8 \
  --threads 1 --jobs 2 --explode-threshold 1e-12 --out "$tmp/jexp"
expect_rc 0 "depth-study --explode-threshold 1e-12 --jobs 2"
for l in "L=1" "L=2" "L=1 missing=0.5" "L=2 missing=0.5"; do
  [ "$(grep -c "^lipgnn depth-study: run gat none d=2 $l seed 0: gradient explosion at epoch 1: " "$tmp/err")" = 1 ] ||
    fail "explosion message of run '$l' not named once: $(grep explosion "$tmp/err")"
done
[ "$(grep -c "gradient explosion" "$tmp/err")" = 4 ] || fail "explosion messages: $(grep -c "gradient explosion" "$tmp/err"), expected 4"
# more threads than cores over the jobs: said
run depth-study --trees 2 --trees-count 40 --layers 1,2 --norms none --seeds 1 --epochs 2 --hidden 8 \
  --threads "$(nproc)" --jobs 2 --out "$tmp/jover"
expect_rc 0 "depth-study --jobs 2 --threads nproc"
grep -q "is more than the $(nproc) cores" "$tmp/err" || fail "--jobs x --threads over the cores not said: $(cat "$tmp/err")"
# a run that fails (the deepest exceeds --max-memory): named, the others recorded, its status
run depth-study --trees 3 --trees-count 60 --layers 1,30 --norms none --seeds 2 --epochs 2 --hidden 16 --threads 1 \
  --max-memory 4M --jobs 2 --out "$tmp/jfail"
expect_rc 2 "depth-study --jobs 2 with a run over --max-memory"; no_sanitizer "--jobs failure"
grep -q "run gat none d=3 L=30 seed 0 failed (status 2)" "$tmp/err" || fail "--jobs failure: run not named: $(cat "$tmp/err")"
grep -q "^lipgnn depth-study: run gat none d=3 L=30 seed 0: the model needs" "$tmp/err" ||
  fail "--jobs failure: the memory message does not name its run: $(cat "$tmp/err")"
grep -q "^gat,3,1,none,0,0,0," "$tmp/jfail/runs.csv" || fail "--jobs failure: the run that fits was not recorded"
grep -q ",30,none," "$tmp/jfail/runs.csv" && fail "--jobs failure: the failed run was recorded"
# --jobs within the memory limit: a run waits while it would take the runs in
# progress past it (here two 30-layer runs, each alone within the limit), with
# a note; every run is recorded, with the rows of a study without the limit
need=$("$bin" train --sbm 3000 --layers 30 --max-memory 3M 2>&1 | sed -n 's/.*the model needs about \([0-9]*\)\.[0-9]* MiB.*/\1/p')
if [ -z "$need" ]; then
  fail "--jobs memory: no estimate of a 30-layer model"
else
  mem=$(( need * 3 / 2 ))
  jmem=(depth-study --sbm 3000 --layers 2,30 --seeds 2 --epochs 2 --hidden 64 --threads 1 --jobs 2)
  run "${jmem[@]}" --max-memory "${mem}M" --out "$tmp/jmem"; expect_rc 0 "depth-study --jobs 2 --max-memory ${mem}M"
  no_sanitizer "--jobs memory"
  grep -q "^note: run gat [a-z]* L=30 seed [01] waits for memory: it needs about [0-9.]* MiB, the 1 run in progress [0-9.]*, more than --max-memory ($mem\.00 MiB) together$" \
    "$tmp/err" || fail "--jobs memory: no run waited: $(cat "$tmp/err")"
  [ "$(rows "$tmp/jmem/runs.csv")" = 8 ] || fail "--jobs memory: $(rows "$tmp/jmem/runs.csv") rows, expected 8"
  run "${jmem[@]}" --out "$tmp/jmem2"; expect_rc 0 "depth-study --jobs 2 without a limit"
  grep -q "waits for memory" "$tmp/err" && fail "--jobs: a run waited within the machine's memory"
  [ "$(results "$tmp/jmem/runs.csv")" = "$(results "$tmp/jmem2/runs.csv")" ] || fail "--jobs memory: rows differ from the study's without the limit"
fi
# SIGTERM: passed on to the workers; exit 143, complete lines, no worker left, resumable
jlong=(depth-study --trees 3 --trees-count 300 --layers 2,4 --norms none,lipschitz --seeds 2 --epochs 400 --hidden 16
       --threads 1 --jobs 2 --out "$tmp/jterm")
if interrupted "--jobs SIGTERM" "$tmp/jterm" "${jlong[@]}"; then
  sleep 0.2
  pgrep -f -- "--out $tmp/jterm --worker-of-jobs" >/dev/null && fail "--jobs SIGTERM: a worker is still running"
  grep -q "runs in progress were stopped" "$tmp/err" || fail "--jobs SIGTERM: no message: $(cat "$tmp/err")"
  resumed "--jobs SIGTERM" "$tmp/jterm" "${jlong[@]}"
fi
# Signals as a user sends them (tests/signals.py, the study on a terminal of its own,
# the signals sent as soon as both workers are in their first epoch): one Ctrl-C
# reaches the workers from the terminal, and each stops at the end of its epoch
# (the parent passed it on as well, a second signal, which ended them at once);
# two Ctrl-Cs end them at once; two SIGTERMs sent to the parent alone are passed on,
# and the second ends them at once (before, it waited for the epoch).
if [ -x /usr/bin/python3 ] && [ -r /proc/self/status ]; then
  sig=(depth-study --sbm 20000,200000 --layers 30 --seeds 2 --jobs 2 --threads 1 --epochs 1000)
  signals() { # signals VIA COUNT OUT: sets got (signals.py's line) and graceful (runs stopped at an epoch's end)
    got=$(/usr/bin/python3 "$(dirname "$0")/signals.py" "$1" "$2" 2 "$tmp/sig.log" -- "$bin" "${sig[@]}" --out "$3")
    graceful=$(grep -c "stopped after epoch" "$tmp/sig.log" 2>/dev/null)
  }
  signals tty 1 "$tmp/sig1"
  if [[ $got == "no pseudo-terminal"* ]]; then
    echo "$got: signals through a terminal not checked"
  else
    [[ $got == "status 130 "* ]] && [ "$graceful" = 2 ] ||
      fail "one Ctrl-C: '$got', $graceful of 2 runs stopped at the end of an epoch: $(tail -c 300 "$tmp/sig.log")"
    signals tty 2 "$tmp/sig2"
    [[ $got == "status 130 "* ]] && [ "$graceful" = 0 ] ||
      fail "two Ctrl-Cs: '$got', $graceful runs waited for the end of an epoch: $(tail -c 300 "$tmp/sig.log")"
    signals kill 2 "$tmp/sig3"
    [[ $got == "status 143 "* ]] && [ "$graceful" = 0 ] ||
      fail "two SIGTERMs to the parent: '$got', $graceful runs waited for the end of an epoch: $(tail -c 300 "$tmp/sig.log")"
    echo "signals: one and two Ctrl-Cs on a terminal, two SIGTERMs to the parent checked"
  fi
else
  echo "no /usr/bin/python3 or no /proc: signals through a terminal not checked"
fi
# a worker killed (as by the kernel when out of memory): its run named, status 1, the rest
# resumable
jkill=("${jlong[@]/jterm/jkill}")
"$bin" "${jkill[@]}" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
pkill -KILL -n -f -- "--out $tmp/jkill --worker-of-jobs"
wait $pid
st=$?
[ "$st" = 1 ] || fail "--jobs, a worker killed: exit $st, expected 1; stderr: $(head -c 400 "$tmp/err")"
grep -q "its process ended on signal 9" "$tmp/err" || fail "--jobs, a worker killed: not said: $(cat "$tmp/err")"
complete_lines "$tmp/jkill/runs.csv"
# a worker's input that is not a cell of the grid is refused
echo "5 0 0 0 0 0 0" | "$bin" "${jargs[@]}" --out "$tmp/jw" --worker-of-jobs >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] || fail "a worker given a seed index outside the grid did not fail"
grep -q "bad cell" "$tmp/err" || fail "a worker given a bad cell: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "a worker given a bad cell wrote a row: $(cat "$tmp/out")"

# models side by side whose norms differ: the combinations a model refuses are
# skipped (said on stderr and in summary.md); a model left with nothing is an error
sbs=$tmp/side
run depth-study --trees 2 --trees-count 40 --layers 1 --model gat,l2 --norms none,lipschitz --seeds 1 --epochs 2 \
  --hidden 8 --out "$sbs"
expect_rc 0 "depth-study gat,l2 x none,lipschitz"
[ "$(rows "$sbs/runs.csv")" = 3 ] || fail "side by side: $(rows "$sbs/runs.csv") runs, expected 3 (l2 lipschitz skipped)"
grep -q "not run: --model l2 --norm lipschitz --residual 0" "$tmp/err" || fail "side by side stderr: $(cat "$tmp/err")"
grep -q "^Not run (the model refuses the combination): l2 lipschitz res=0.$" "$sbs/summary.md" \
  || fail "side by side summary: $(cat "$sbs/summary.md")"
grep -q "^l2,2,1,lipschitz" "$sbs/runs.csv" && fail "l2 lipschitz was run"
run depth-study --trees 2 --trees-count 40 --layers 1 --model l2 --norms lipschitz --seeds 1 --epochs 2 --out "$tmp/none"
expect_rc 2 "depth-study l2 x lipschitz"
grep -q "accepts none of the --norms" "$tmp/err" || fail "l2 x lipschitz: $(cat "$tmp/err")"

# one study at a time per --out: a second one while the first runs is refused
# (two at once each ran the runs they found missing: runs.csv got them twice)
largs=(depth-study --trees 3 --trees-count 30 --layers 2,3,4 --epochs 400 --seeds 3 --threads 1 --out "$tmp/lock")
"$bin" "${largs[@]}" >"$tmp/out1" 2>"$tmp/err1" & pid=$!
for _ in $(seq 300); do [ -s "$tmp/lock/runs.csv" ] && break; sleep 0.1; done
run "${largs[@]}"
if kill -0 $pid 2>/dev/null; then
  expect_rc 2 "a second study on the same --out"
  grep -q "is in use by another depth-study (process $pid holds" "$tmp/err" || fail "second study: $(cat "$tmp/err")"
else
  echo "the first study had ended when the second returned: the lock's message not checked"
fi
wait $pid || fail "the first study: exit $?: $(cat "$tmp/err1")"
[ "$(rows "$tmp/lock/runs.csv")" = 18 ] || fail "locked study: $(rows "$tmp/lock/runs.csv") runs, expected 18"
run "${largs[@]}"; expect_rc 0 "the same study again, after the first"
# a file system without locks (ENOLCK, by LD_PRELOAD): the study runs, unlocked, and says so
# (it was refused: "cannot lock: No locks available")
nolock=${3:-}
if [ -n "$nolock" ] && [ -f "$nolock" ]; then
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$nolock" \
    "$bin" depth-study --trees 2 --trees-count 20 --layers 1,2 --norms none,lipschitz --epochs 2 --seeds 1 --out "$tmp/nolock" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 0 ] || fail "depth-study where locks fail with ENOLCK: exit $rc: $(tail -c 300 "$tmp/err")"
  grep -q "note: $tmp/nolock/.lock: cannot lock (No locks available): another depth-study" "$tmp/err" ||
    fail "depth-study without locks: no note: $(tail -c 300 "$tmp/err")"
  [ "$(rows "$tmp/nolock/runs.csv")" = 4 ] || fail "depth-study without locks: $(rows "$tmp/nolock/runs.csv") runs, expected 4"
else
  echo "no fcntl shim given (test_depth.sh's third argument): a file system without locks not checked"
fi

if [ $fails -gt 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "depth-study: all checks passed"
exit 0
