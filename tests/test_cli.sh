#!/usr/bin/env bash
# CLI tests: test_cli.sh CASE LIPGNN_BINARY FIXTURES_PARENT. Exit 0 pass, 1 fail, 77 skip.
# FIXTURES_PARENT: the directory whose data/ holds the fixture data sets (the build's
# tests/, where tests/CMakeLists.txt mirrors tests/data).
set -u
case_=$1 bin=$2 dir=$3 fake=${4:-}
. "$(dirname "$0")/testlib.sh"
json_field() { grep -o "\"$1\":[^,}]*" "$tmp/out" | head -1 | cut -d: -f2; }
# stopped_by SIG STATUS WORD CKPT WHAT [LIMIT]: a long training started in the
# background (under `ulimit -s LIMIT` when given) and sent SIG after 2 s stops at
# the end of an epoch: exit STATUS, "WORD: stopped after epoch", its checkpoint CKPT
stopped_by() {
  local sig=$1 want=$2 word=$3 ck=$4 what=$5 lim=${6:-} pid st
  ({ [ -z "$lim" ] || ulimit -s "$lim"; } && exec "$bin" train --trees 3 --trees-count 200 --layers 2 --hidden 8 --epochs 1000000 \
      --save "$ck") >"$tmp/out" 2>"$tmp/err" & pid=$!
  sleep 2; kill -"$sig" $pid; wait $pid; st=$?
  [ $st = "$want" ] || fail "$what: exit $st, expected $want: $(tail -c 300 "$tmp/err")"
  grep -q "$word: stopped after epoch" "$tmp/err" && [ -f "$ck" ] ||
    fail "$what: no stop at the end of an epoch, or no checkpoint: $(tail -c 300 "$tmp/err")"
}

case $case_ in
help)
  run --help; expect_rc 0 --help; grep -q "Usage: lipgnn COMMAND" "$tmp/out" || fail "--help has no usage"
  # the help on a full disk fails as --version and a command's help do: exit 1 and the reason
  for h in --help -h help --version "train --help"; do
    # shellcheck disable=SC2086
    "$bin" $h >/dev/full 2>"$tmp/err"; st=$?
    [ $st = 1 ] || fail "lipgnn $h >/dev/full: exit $st, expected 1"
    grep -q "standard output: write error: No space left on device" "$tmp/err" || fail "lipgnn $h >/dev/full: $(cat "$tmp/err")"
  done
  run info --help; expect_rc 0 "info --help"; grep -q -- "--dataset NAME" "$tmp/out" || fail "info --help lacks --dataset"
  # every command's help is text printed as it is: no printf escape may show through
  for c in demo depth-study gradmap info lipschitz predict train; do
    run $c --help; expect_rc 0 "$c --help"
    grep -n '%%\|\\n' "$tmp/out" && fail "$c --help shows a printf escape"
  done
  run --version; expect_rc 0 --version; grep -Eq "^lipgnn [0-9]+\.[0-9]+\.[0-9]+$" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
  run; expect_rc 2 "(no command)"
  run frobnicate; expect_rc 2 frobnicate; grep -q "unknown command 'frobnicate'" "$tmp/err" || fail "unknown command message"
  run trian; expect_rc 2 trian; grep -q "did you mean 'train'" "$tmp/err" || fail "no suggestion for trian: $(cat "$tmp/err")"
  run depth; expect_rc 2 depth; grep -q "did you mean 'depth-study'" "$tmp/err" || fail "no suggestion for depth: $(cat "$tmp/err")"
  run info --frob; expect_rc 2 "info --frob"
  grep -q "unknown option '--frob'" "$tmp/err" || fail "info --frob: $(cat "$tmp/err")"
  grep -q "did you mean" "$tmp/err" && fail "info --frob: a suggestion for a word far from every option: $(cat "$tmp/err")"
  run info --jsno; expect_rc 2 "info --jsno"; grep -q "did you mean '--json'" "$tmp/err" || fail "info --jsno: $(cat "$tmp/err")"
  run train --hiden 8; expect_rc 2 "train --hiden"
  grep -q "unknown option '--hiden' (did you mean '--hidden'?" "$tmp/err" || fail "train --hiden: $(cat "$tmp/err")"
  run train --trees 3 --epochs; expect_rc 2 "train --epochs (no value)"
  grep -q "option '--epochs' needs a value" "$tmp/err" || fail "train --epochs: $(cat "$tmp/err")"
  # a forgotten value: the next argument is an option, not the value (getopt_long alone would take
  # "--epochs" as the norm and stop at a stray "5"); every command, and depth-study's own options
  for args in "train --trees 3 --norm --epochs 5|--norm|--epochs" "train --trees --layers 3|--trees|--layers" \
              "info --dataset --json|--dataset|--json" "predict --resume --out p.csv|--resume|--out" \
              "lipschitz --model --iters 3|--model|--iters" "gradmap --log --out g.svg|--log|--out" \
              "depth-study --out $tmp/ds --layers --norms none|--layers|--norms" \
              "depth-study --out $tmp/ds --layers 2 --epochs --seeds 2|--epochs|--seeds" \
              "depth-study --out $tmp/ds --layers 2 --dataset --layers 3|--dataset|--layers"; do
    IFS='|' read -r cmdline opt next <<<"$args"
    # shellcheck disable=SC2086
    run $cmdline; expect_rc 2 "$cmdline"
    grep -q "option '$opt' needs a value, but the argument after it, '$next', is an option" "$tmp/err" \
      || fail "$cmdline: $(cat "$tmp/err")"
  done
  [ -e "$tmp/ds" ] && fail "depth-study with a forgotten value made its --out"
  run train --trees 3 --norm=--epochs; expect_rc 2 "train --norm=--epochs (a value written with =)"
  grep -q "unknown --norm '--epochs'" "$tmp/err" || fail "train --norm=--epochs: $(cat "$tmp/err")"
  run train --trees 3 --seed -5; expect_rc 2 "train --seed -5"
  grep -q "'-5' is not a non-negative integer" "$tmp/err" || fail "train --seed -5 (a value with one dash): $(cat "$tmp/err")"
  run train --trees 3 --l 3; expect_rc 2 "train --l (ambiguous)"
  grep -q "option '--l' is ambiguous: .*--layers.*--lr" "$tmp/err" || fail "train --l: $(cat "$tmp/err")"
  run train --trees 3 --residual=1; expect_rc 2 "train --residual=1"
  grep -q "option '--residual' takes no value" "$tmp/err" || fail "train --residual=1: $(cat "$tmp/err")"
  run depth-study --out "$tmp/ds" --layers 2 --hiden 8; expect_rc 2 "depth-study --hiden"
  grep -q "did you mean '--hidden'? see 'lipgnn depth-study --help'" "$tmp/err" || fail "depth-study --hiden: $(cat "$tmp/err")"
  run depth-study --out "$tmp/ds" --layers 2 --sedes 3; expect_rc 2 "depth-study --sedes"
  grep -q "did you mean '--seeds'?" "$tmp/err" || fail "depth-study --sedes (its own option): $(cat "$tmp/err")"
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
  # its memory: at least its arrays of ids (8 bytes each: row pointers, neighbours,
  # feature columns and their pointers) and at most twice them
  bytes=$(json_field bytes) ids=$(( 8 * (2 * $(json_field nodes) + $(json_field edges) + $(json_field features_nnz)) ))
  [ -n "$bytes" ] && [ "$bytes" -ge $ids ] && [ "$bytes" -le $((2 * ids)) ] || fail "trees 3: bytes '$bytes' against $ids of ids"
  run info --trees 3; expect_rc 0 "info --trees 3 (text)"; grep -q "15 nodes each" "$tmp/out" || fail "text: $(cat "$tmp/out")"
  grep -q "^memory        [0-9]*\.[0-9][0-9] MiB (graph, features, labels, splits)$" "$tmp/out" || fail "text memory: $(cat "$tmp/out")"
  # the built-in stochastic block model
  run info --sbm 400,1000 --json; expect_rc 0 "info --sbm 400,1000"
  [ "$(json_field nodes)" = 400 ] || fail "sbm: nodes $(json_field nodes)"
  [ "$(json_field classes)" = 8 ] || fail "sbm: classes $(json_field classes)"
  [ "$(json_field features)" = 128 ] || fail "sbm: features $(json_field features)"
  run info --sbm 400,1000 --trees 3; expect_rc 2 "--sbm with --trees"
  grep -q "only one of" "$tmp/err" || fail "--sbm with --trees: $(cat "$tmp/err")"
  run info --sbm 10; expect_rc 2 "--sbm 10 (too small)"
  grep -q -- "--sbm (nodes): 10 is outside 16\.\.2000000000" "$tmp/err" || fail "--sbm 10: $(cat "$tmp/err")"
  run info --sbm 400,x; expect_rc 2 "--sbm 400,x"
  run info --sbm 1000,10000000; expect_rc 2 "--sbm with too many edges"
  grep -q "more than" "$tmp/err" || fail "--sbm too many edges: $(cat "$tmp/err")"
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
  grep -Eq "the data sets there: (.*, )?cora, (.*, )?pubmed[,)]" "$tmp/err" || fail "missing data set: $(cat "$tmp/err")"
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
  # outputs that cannot be written. --save: refused before training (exit 2)
  # when its path is not a regular file (the save renames a new file onto it:
  # as root, --save /dev/null made /dev/null a regular file) or its directory
  # is missing
  mkfifo "$tmp/fifo"
  for p in "$tmp/fifo" "$tmp" "$tmp/none/x.ckpt"; do
    run train --trees 2 --trees-count 5 --epochs 1 --save "$p"; expect_rc 2 "--save $p"
    grep -q -- "--save $p: " "$tmp/err" || fail "--save $p: message: $(cat "$tmp/err")"
    grep -q "^epochs" "$tmp/out" && fail "--save $p: trained before refusing"
  done
  [ -p "$tmp/fifo" ] || fail "--save onto a pipe replaced it"
  # an output that is an input (or another output), by its path or through a link: refused before
  # anything is written (predict --out m.ckpt replaced the checkpoint by its CSV; gradmap --out g.csv
  # its grad log)
  run train --trees 2 --trees-count 5 --epochs 1 --save "$tmp/in.ckpt" --grad-log "$tmp/in.csv"; expect_rc 0 "train for the clobber checks"
  ln -s in.ckpt "$tmp/in-link.ckpt"
  cp "$tmp/in.ckpt" "$tmp/in.keep"; cp "$tmp/in.csv" "$tmp/in.csv.keep"
  expect_refusals "@OPT@ [^ ]* and --[a-z-]* [^ ]* are the same file" \
    "predict --resume $tmp/in.ckpt --trees 2 --trees-count 5 --out $tmp/in-link.ckpt|--out" \
    "predict --resume $tmp/in.ckpt --trees 2 --trees-count 5 --out $tmp/p.csv --embeddings $tmp/in.ckpt|--embeddings" \
    "lipschitz --model $tmp/in.ckpt --trees 2 --trees-count 5 --csv $tmp/in.ckpt|--csv" \
    "gradmap --log $tmp/in.csv --out $tmp/in.csv|--out" \
    "train --trees 2 --trees-count 5 --epochs 1 --resume $tmp/in.ckpt --grad-log $tmp/in-link.ckpt|--grad-log"
  cmp -s "$tmp/in.ckpt" "$tmp/in.keep" || fail "a refused command changed the checkpoint"
  cmp -s "$tmp/in.csv" "$tmp/in.csv.keep" || fail "a refused command changed the grad log"
  run predict --resume "$tmp/in.ckpt" --trees 2 --trees-count 5 --out "$tmp/p2.csv" --embeddings "$tmp/p2.csv"
  expect_rc 2 "predict, two outputs one file"; grep -q "writing --out would destroy the other output" "$tmp/err" || fail "two outputs: $(cat "$tmp/err")"
  run train --trees 2 --trees-count 5 --epochs 2 --resume "$tmp/in.ckpt" --save "$tmp/in.ckpt"; expect_rc 0 "train --save onto its --resume (continued in place)"
  # predict: --attention of a mini-batch model refused before any output; TREES has no validation
  # split: no "val 0.0000" and a JSON null; a checkpoint path with a newline stays on the comment line
  run predict --resume "$tmp/in.ckpt" --trees 2 --trees-count 5 --out "$tmp/pa.csv" --attention "$tmp/pa-att.csv"
  expect_rc 2 "predict --attention of a mini-batch model"; [ -e "$tmp/pa.csv" ] && fail "predict --attention refused after writing --out"
  run predict --resume "$tmp/in.ckpt" --trees 2 --trees-count 5 --out "$tmp/pt.csv"; expect_rc 0 "predict on TREES"
  grep -q "train [0-9.]*  test [0-9.]* (no validation split)" "$tmp/err" || fail "predict on TREES: $(cat "$tmp/err")"
  run predict --resume "$tmp/in.ckpt" --trees 2 --trees-count 5 --out "$tmp/pt.csv" --json; expect_rc 0 "predict --json on TREES"
  grep -q '"val_acc":null,' "$tmp/out" || fail "predict --json on TREES: $(cat "$tmp/out")"
  # an empty test split: no accuracy (null, n/a, an empty CSV field), where train and predict gave 0.0
  mkdir -p "$tmp/notest"; cp "$dir/data/tiny/"* "$tmp/notest/"; : >"$tmp/notest/test.txt"
  run train --data "$tmp/notest" --layers 2 --epochs 2 --json --log "$tmp/notest.csv" --save "$tmp/notest.ckpt"
  expect_rc 0 "train without a test split"
  grep -q '"test_acc":null,.*"test_loss":null,.*"test_acc_at_best_val":null,' "$tmp/out" || fail "train --json without a test split: $(cat "$tmp/out")"
  [ "$(sed -n 2p "$tmp/notest.csv" | cut -d, -f6,9)" = "," ] || fail "--log without a test split: $(sed -n 2p "$tmp/notest.csv")"
  run train --data "$tmp/notest" --layers 2 --epochs 2; expect_rc 0 "train without a test split (text)"
  grep -q "test n/a (last epoch; no test split)" "$tmp/out" && grep -q "at epoch [0-9]*: test n/a" "$tmp/out" \
    || fail "train without a test split: $(cat "$tmp/out")"
  run predict --resume "$tmp/notest.ckpt" --data "$tmp/notest" --json; expect_rc 0 "predict without a test split"
  grep -q '"test_acc":null}' "$tmp/out" || fail "predict --json without a test split: $(cat "$tmp/out")"
  run predict --resume "$tmp/notest.ckpt" --data "$tmp/notest" --out "$tmp/notest-p.csv"
  grep -q "test n/a (no test split)" "$tmp/err" || fail "predict without a test split: $(cat "$tmp/err")"
  # TREES made again from the checkpoint's seed, as lipschitz does (predict took seed 0 and refused)
  run train --trees 2 --trees-count 30 --seed 5 --epochs 2 --save "$tmp/t5.ckpt"; expect_rc 0 "train --trees --seed 5"
  run predict --resume "$tmp/t5.ckpt" --trees 2 --trees-count 30 --json; expect_rc 0 "predict, the checkpoint's seed"
  run predict --resume "$tmp/t5.ckpt" --trees 2 --trees-count 30 --seed 1; expect_rc 2 "predict --seed 1 on a seed-5 model"
  grep -q "need the checkpoint's --seed" "$tmp/err" || fail "predict, another seed: $(cat "$tmp/err")"
  # an output that fails ends the outputs: no attention file begun after --out's write error
  run train --data "$dir/data/tiny" --layers 2 --epochs 1 --save "$tmp/tiny.ckpt"; expect_rc 0 "train tiny for predict"
  # --batch-size on a data set of one graph: said to be one batch of the whole graph
  run train --data "$dir/data/tiny" --layers 2 --epochs 1 --batch-size 4; expect_rc 0 "train tiny --batch-size 4"
  grep -q -- "--batch-size 4 on its one graph: one batch an epoch, the whole graph" "$tmp/out" ||
    fail "train --batch-size on one graph: $(head -2 "$tmp/out")"
  run predict --resume "$tmp/tiny.ckpt" --data "$dir/data/tiny" --out /dev/full --attention "$tmp/att-after.csv"
  expect_rc 1 "predict --out /dev/full"; [ -e "$tmp/att-after.csv" ] && fail "predict wrote --attention after --out failed"
  # outputs that cannot be made: refused before the model is built and run
  run predict --resume "$tmp/tiny.ckpt" --data "$dir/data/tiny" --out "$tmp/none/p.csv"; expect_rc 2 "predict --out in a missing directory"
  grep -q -- "--out $tmp/none/p.csv: cannot create a file in $tmp/none" "$tmp/err" || fail "predict --out in a missing directory: $(cat "$tmp/err")"
  grep -q "after [0-9]* epochs" "$tmp/err" && fail "predict --out in a missing directory: predicted first"
  run predict --resume "$tmp/tiny.ckpt" --data "$dir/data/tiny" --out "$tmp/p3.csv" --embeddings "$tmp"; expect_rc 2 "predict --embeddings a directory"
  [ -e "$tmp/p3.csv" ] && fail "predict --embeddings a directory: --out written first"
  LIPGNN_DATA= "$bin" train --dataset cora >"$tmp/out" 2>"$tmp/err"
  grep -q "LIPGNN_DATA is empty" "$tmp/err" || fail "LIPGNN_DATA set but empty: $(cat "$tmp/err")"
  run train --trees 2 --trees-count 5 --epochs 1 --json; expect_rc 0 "train --json on TREES"
  grep -q '"val_acc":null,.*"val_loss":null,' "$tmp/out" || fail "train --json on TREES: $(tail -c 600 "$tmp/out")"
  cp "$tmp/in.ckpt" "$tmp/n"$'\n'"l.ckpt"
  run predict --resume "$tmp/n"$'\n'"l.ckpt" --trees 2 --trees-count 5 --out "$tmp/pt.csv" --embeddings "$tmp/e.mtx"
  expect_rc 0 "predict, a newline in the checkpoint's path"
  [ "$(sed -n 3p "$tmp/e.mtx" | tr -cd ' ' | wc -c)" = 1 ] || fail "embeddings: the size line is not line 3: $(head -4 "$tmp/e.mtx")"
  touch "$tmp/afile"
  run lipschitz --model "$tmp/in.ckpt" --trees 2 --trees-count 5 --out "$tmp/afile"; expect_rc 2 "lipschitz --out a file"
  grep -q -- "--out $tmp/afile/lipschitz.csv: cannot create a file in $tmp/afile: Not a directory" "$tmp/err" \
    || fail "lipschitz --out a file: $(cat "$tmp/err")"
  # a link is followed: the link stays, its file gets the checkpoint
  ln -s real.ckpt "$tmp/link.ckpt"
  run train --trees 2 --trees-count 5 --epochs 1 --save "$tmp/link.ckpt"; expect_rc 0 "--save onto a link"
  [ -L "$tmp/link.ckpt" ] && [ -s "$tmp/real.ckpt" ] || fail "--save onto a link: the link was replaced"
  # a full disk (/dev/full) for a log and for standard output: exit 1, said
  if [ -c /dev/full ]; then
    run train --trees 2 --trees-count 5 --epochs 1 --log /dev/full; expect_rc 1 "--log /dev/full"
    grep -q "/dev/full: write error" "$tmp/err" || fail "--log /dev/full: message: $(cat "$tmp/err")"
    for c in "train --trees 2 --trees-count 5 --epochs 1 --json" "info --trees 2 --trees-count 5" "--version"; do
      "$bin" $c >/dev/full 2>"$tmp/err"; rc_=$?
      [ $rc_ = 1 ] || fail "$c >/dev/full: exit $rc_, expected 1"
      grep -q "standard output: write error" "$tmp/err" || fail "$c >/dev/full: message: $(cat "$tmp/err")"
    done
    echo "unwritable outputs refused or reported"
  else
    echo "/dev/full absent: full-disk outputs not checked"
  fi
  # a standard stream closed when lipgnn starts: the first file it opened took
  # that number, and what was meant for the stream went into the file
  # (--verbose's epoch lines into --log's CSV; the results, with stdout closed)
  csv_only() { # csv_only FILE: the header and 2 epochs' lines, nothing else
    [ "$(wc -l <"$1")" = 3 ] && awk 'NR == 1 && !/^epoch,/ { bad = 1 } NR > 1 && !/^[0-9]+,/ { bad = 1 } END { exit bad }' "$1"
  }
  "$bin" train --trees 2 --trees-count 5 --epochs 2 --verbose --log "$tmp/c2.csv" >"$tmp/out" 2>&-; rc_=$?
  [ $rc_ = 0 ] || fail "train 2>&-: exit $rc_"
  csv_only "$tmp/c2.csv" || fail "train 2>&-: the --log CSV holds other lines: $(head -3 "$tmp/c2.csv")"
  "$bin" train --trees 2 --trees-count 5 --epochs 2 --json --log "$tmp/c1.csv" >&- 2>"$tmp/err"; rc_=$?
  [ $rc_ = 1 ] || fail "train >&-: exit $rc_, expected 1 (the results could not be written)"
  grep -q "standard output: write error" "$tmp/err" || fail "train >&-: message: $(cat "$tmp/err")"
  csv_only "$tmp/c1.csv" || fail "train >&-: the --log CSV holds other lines: $(head -3 "$tmp/c1.csv")"
  "$bin" train --trees 2 --trees-count 5 --epochs 2 --log "$tmp/c0.csv" <&- >&- 2>&-
  csv_only "$tmp/c0.csv" || fail "train <&- >&- 2>&-: the --log CSV holds other lines: $(head -3 "$tmp/c0.csv")"
  ;;
blas)
  # A core type the user set is respected, silently.
  OPENBLAS_CORETYPE=Prescott "$bin" --version >"$tmp/out" 2>"$tmp/err"
  grep -q "OpenBLAS core: Prescott" "$tmp/out" || fail "user core type not respected: $(cat "$tmp/out")"
  [ -s "$tmp/err" ] && fail "message although the user set the core: $(cat "$tmp/err")"
  # ... but not its cost: a training run under a slower core than this CPU runs
  # ends with one note naming both and the remedy; under the best core, none.
  best=$(env -u OPENBLAS_CORETYPE "$bin" --version 2>/dev/null | sed -n 's/.*best for this CPU: \([A-Za-z0-9]*\);.*/\1/p')
  if [ -n "$best" ] && [ "$best" != unknown ] && [ "$best" != Prescott ]; then
    for core in Prescott "$best"; do
      OPENBLAS_CORETYPE=$core "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
        fail "train under OPENBLAS_CORETYPE=$core: $(cat "$tmp/err")"
      notes=$(grep -c '^note: OPENBLAS_CORETYPE=' "$tmp/err")
      if [ "$core" = Prescott ]; then
        [ "$notes" = 1 ] || fail "no single note about the slower core Prescott: $(cat "$tmp/err")"
        grep -q "^note: OPENBLAS_CORETYPE=Prescott .*'Prescott' kernels.*runs '$best'.*set it to $best)" "$tmp/err" ||
          fail "the note does not name the cores and the remedy: $(grep '^note' "$tmp/err")"
        grep -q '^note' "$tmp/out" && fail "the note is on stdout, among the results: $(cat "$tmp/out")"
      else
        [ "$notes" = 0 ] || fail "a note although OPENBLAS_CORETYPE is the best core $best: $(grep '^note' "$tmp/err")"
      fi
    done
    echo "a slower OPENBLAS_CORETYPE is noted, the best one is not ($best)"
  fi
  # A value OpenBLAS does not take: --version and a training run say so (once),
  # rather than "set by OPENBLAS_CORETYPE".
  OPENBLAS_CORETYPE=NoSuchCore "$bin" --version >"$tmp/out" 2>"$tmp/err"
  grep -q "^OpenBLAS core: .*detected by OpenBLAS, which did not take OPENBLAS_CORETYPE)$" "$tmp/out" ||
    fail "OPENBLAS_CORETYPE=NoSuchCore in --version: $(cat "$tmp/out")"
  OPENBLAS_CORETYPE=NoSuchCore "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
    fail "train under OPENBLAS_CORETYPE=NoSuchCore: $(cat "$tmp/err")"
  [ "$(grep -c '^note: OpenBLAS did not take OPENBLAS_CORETYPE=NoSuchCore (' "$tmp/err")" = 1 ] ||
    fail "no single note about the core type OpenBLAS did not take: $(cat "$tmp/err")"
  [ "$(grep -c '^note: ' "$tmp/err")" = 1 ] || fail "more than that note: $(grep '^note' "$tmp/err")"
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
  # The trap itself, simulated: OpenBLAS reports Prescott. lipgnn must restart
  # once with the best core for this CPU, say so once, and then run with it.
  if [ -n "$fake" ] && grep -q " avx2 " /proc/cpuinfo; then
    env -u OPENBLAS_CORETYPE -u LIPGNN_BLAS_REEXEC ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" --version >"$tmp/out" 2>"$tmp/err"
    [ "$(grep -c "restarting with OPENBLAS_CORETYPE=" "$tmp/err")" = 1 ] || fail "Prescott: no single restart message: $(cat "$tmp/err")"
    grep -q "selected its 'Prescott' kernels" "$tmp/err" || fail "message does not name the bad core: $(cat "$tmp/err")"
    best=$(sed -n 's/.*restarting with OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p' "$tmp/err")
    grep -q "OpenBLAS core: $best .*set by lipgnn" "$tmp/out" || fail "after the restart: $(cat "$tmp/out")"
    # a real command keeps working after the restart, with its own output intact
    env -u OPENBLAS_CORETYPE -u LIPGNN_BLAS_REEXEC ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" info --trees 2 --trees-count 3 --json >"$tmp/out" 2>"$tmp/err"
    grep -q '"nodes":21' "$tmp/out" || fail "info after restart: $(cat "$tmp/out") $(cat "$tmp/err")"
    # a core type the user set is respected even then
    env -u LIPGNN_BLAS_REEXEC OPENBLAS_CORETYPE=Prescott ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" --version >"$tmp/out" 2>"$tmp/err"
    [ -s "$tmp/err" ] && fail "restart although the user chose Prescott: $(cat "$tmp/err")"
    echo "simulated Prescott: restarted with $best"
    # OpenBLAS's Zen kernels are of Haswell's class: an AVX2 CPU taken for a Zen
    # keeps them, an AVX-512 one is restarted with SkylakeX
    env -u OPENBLAS_CORETYPE -u LIPGNN_BLAS_REEXEC LG_FAKE_CORENAME=Zen ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" --version >"$tmp/out" 2>"$tmp/err"
    if [ "$best" = SkylakeX ]; then
      grep -q "selected its 'Zen' kernels, but this CPU runs 'SkylakeX'" "$tmp/err" || fail "simulated Zen on AVX-512: no restart: $(cat "$tmp/err")"
      echo "simulated Zen on an AVX-512 CPU: restarted with SkylakeX"
    else
      [ -s "$tmp/err" ] && fail "simulated Zen on a CPU without AVX-512: a restart: $(cat "$tmp/err")"
      grep -q "^OpenBLAS core: Zen .*detected by OpenBLAS)$" "$tmp/out" || fail "simulated Zen: $(cat "$tmp/out")"
      echo "simulated Zen on a CPU without AVX-512: kept"
    fi
  fi
  # A core type this CPU cannot execute. OpenBLAS 0.3.21 takes it and stops the
  # process with SIGILL at its first product, so lipgnn restarts with the best
  # core, whoever set it, saying so; and where it cannot, its operations refuse
  # (LG_EUNSUPPORTED) rather than crash. Real where this CPU lacks AVX-512:
  best=$(env -u OPENBLAS_CORETYPE "$bin" --version 2>/dev/null | sed -n 's/.*best for this CPU: \([A-Za-z0-9]*\);.*/\1/p')
  if [ -n "$best" ] && [ "$best" != SkylakeX ]; then
    OPENBLAS_CORETYPE=SkylakeX "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
      fail "train under OPENBLAS_CORETYPE=SkylakeX without AVX-512: rc $?: $(cat "$tmp/err")"
    [ "$(grep -c "^lipgnn: OPENBLAS_CORETYPE=SkylakeX selects OpenBLAS's 'SkylakeX' kernels, which need instructions this CPU does not have .*restarting with OPENBLAS_CORETYPE=$best$" "$tmp/err")" = 1 ] ||
      fail "no single restart message away from SkylakeX: $(cat "$tmp/err")"
    grep -q "ms per epoch (median)" "$tmp/out" || fail "no results after the restart: $(cat "$tmp/out")"
    echo "OPENBLAS_CORETYPE=SkylakeX on a CPU without AVX-512: restarted with $best"
  else
    echo "this CPU runs every x86-64 core type from Prescott to SkylakeX: the real unrunnable-core case is not tried here"
  fi
  # ... and simulated, with a type this CPU cannot run reported by the shim.
  if [ -n "$fake" ]; then
    bad=
    for core in SkylakeX Cooperlake Bulldozer; do
      env -u OPENBLAS_CORETYPE LIPGNN_BLAS_REEXEC=Prescott LG_FAKE_CORENAME=$core ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" --version >"$tmp/out" 2>"$tmp/err"
      if grep -q "^OpenBLAS core: $core .*this CPU cannot run it" "$tmp/out"; then bad=$core; break; fi
    done
    [ -n "$bad" ] || fail "no core type among SkylakeX, Cooperlake and Bulldozer is reported as unrunnable: $(cat "$tmp/out")"
    env -u OPENBLAS_CORETYPE -u LIPGNN_BLAS_REEXEC LG_FAKE_CORENAME=$bad ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
      fail "train under a simulated unrunnable $bad: rc $?: $(cat "$tmp/err")"
    [ "$(grep -c "^lipgnn: OpenBLAS's '$bad' kernels, which need instructions this CPU does not have .*restarting with OPENBLAS_CORETYPE=" "$tmp/err")" = 1 ] ||
      fail "simulated $bad: no single restart message: $(cat "$tmp/err")"
    grep -q "ms per epoch (median)" "$tmp/out" || fail "simulated $bad: no results after the restart: $(cat "$tmp/out")"
    # the restart already made (or impossible): the command fails cleanly, naming the cause
    env -u OPENBLAS_CORETYPE LIPGNN_BLAS_REEXEC=Prescott LG_FAKE_CORENAME=$bad ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$fake" "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 2 ] || fail "simulated $bad without a restart: rc $rc, not 2 (an environment that cannot work): $(cat "$tmp/err")"
    grep -q "OpenBLAS runs its '$bad' kernels, which need instructions this CPU does not have" "$tmp/err" ||
      fail "simulated $bad without a restart: the error does not say why: $(cat "$tmp/err")"
    grep -qiE "sanitizer|runtime error" "$tmp/err" && fail "simulated $bad: sanitizer report"
    echo "simulated unrunnable $bad: restarted; without a restart, refused"
  fi
  ;;
omp)
  # an OMP_NUM_THREADS beyond lipgnn's limit: capped, with a note (a team of
  # 100 000 threads crashed libgomp; 20 000 hung)
  OMP_NUM_THREADS=100000 timeout 120 "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 >"$tmp/out" 2>"$tmp/err"
  echo $? >"$tmp/rc"; expect_rc 0 "train at OMP_NUM_THREADS=100000"
  grep -q "note: 100000 threads asked for (OMP_NUM_THREADS), 1024 used" "$tmp/err" || fail "no note of the cap: $(head -c 400 "$tmp/err")"
  # beyond INT_MAX, which libgomp takes and wraps into its int (4294967297: 1
  # thread; it ran so, silently): capped the same way
  OMP_NUM_THREADS=4294967297 timeout 120 "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --json >"$tmp/out" 2>"$tmp/err"
  echo $? >"$tmp/rc"; expect_rc 0 "train at OMP_NUM_THREADS=4294967297"
  grep -q "note: 4294967297 threads asked for (OMP_NUM_THREADS), 1024 used" "$tmp/err" || fail "2^32+1 threads: no note of the cap: $(head -c 400 "$tmp/err")"
  grep -q '"threads":1024,' "$tmp/out" || fail "2^32+1 threads: $(grep -o '"threads":[^,]*' "$tmp/out")"
  # a list, with spaces, as libgomp reads it: its first number
  OMP_NUM_THREADS=" 3 , 2" timeout 120 "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --json >"$tmp/out" 2>"$tmp/err" ||
    fail "train at OMP_NUM_THREADS=' 3 , 2': $(cat "$tmp/err")"
  grep -q '"threads":3,' "$tmp/out" || fail "' 3 , 2' threads: $(grep -o '"threads":[^,]*' "$tmp/out")"
  # one that libgomp refuses (it warns as the program loads, and runs one
  # thread per core): warned once, not again by the restart (spin unset here)
  # or by depth-study's workers, which run as many threads as the first process
  for bad in 0 abc 3,; do
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_NUM_THREADS=$bad timeout 120 "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --json >"$tmp/out" 2>"$tmp/err" ||
      fail "train at OMP_NUM_THREADS=$bad: $(cat "$tmp/err")"
    [ "$(grep -c "Invalid value for environment variable OMP_NUM_THREADS" "$tmp/err")" = 1 ] ||
      fail "OMP_NUM_THREADS=$bad: not one warning: $(cat "$tmp/err")"
    grep -q "\"threads\":$(nproc)," "$tmp/out" || fail "OMP_NUM_THREADS=$bad: $(grep -o '"threads":[^,]*' "$tmp/out"), not $(nproc)"
  done
  rm -rf "$tmp/omp-study"
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_NUM_THREADS=0 timeout 300 "$bin" depth-study --data "$dir/data/tiny" --layers 2,3 --norms none --seeds 1 --epochs 2 --jobs 2 --out "$tmp/omp-study" --quiet >"$tmp/out" 2>"$tmp/err" ||
    fail "depth-study at OMP_NUM_THREADS=0: $(cat "$tmp/err")"
  [ "$(grep -c "Invalid value for environment variable OMP_NUM_THREADS" "$tmp/err")" = 1 ] ||
    fail "depth-study at OMP_NUM_THREADS=0: not one warning: $(cat "$tmp/err")"
  echo "OMP_NUM_THREADS beyond the limit or INT_MAX capped with a note; a list read as libgomp reads it; a refused one warned of once"
  # OpenMP waiting: with OMP_WAIT_POLICY and GOMP_SPINCOUNT unset, the computing
  # commands restart once with GOMP_SPINCOUNT (a short spin; libgomp reads it
  # when it loads), which libgomp then uses; a setting of the user's is kept,
  # and commands that do not compute do not restart. The core type is fixed
  # here so that only this restart can happen.
  best=$(env -u OPENBLAS_CORETYPE "$bin" --version | sed -n 's/.*best for this CPU: \([A-Za-z0-9]*\);.*/\1/p')
  [ -n "$best" ] && [ "$best" != unknown ] || best=$(env -u OPENBLAS_CORETYPE "$bin" --version | sed -n 's/^OpenBLAS core: \([A-Za-z0-9]*\) .*/\1/p')
  clean="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u LIPGNN_OMP_REEXEC -u LIPGNN_BLAS_REEXEC OPENBLAS_CORETYPE=$best"
  $clean "$bin" --version >"$tmp/out" 2>"$tmp/err" || fail "--version: $(cat "$tmp/err")"
  spin=$(sed -n 's/^OpenMP waiting: libgomp.s default (spin, then sleep); .* run with GOMP_SPINCOUNT=\([0-9]*\) .*/\1/p' "$tmp/out")
  [ -n "$spin" ] || fail "--version does not name the spin count: $(cat "$tmp/out")"
  $clean OMP_DISPLAY_ENV=verbose "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 2 --json >"$tmp/out" 2>"$tmp/err" ||
    fail "train with OpenMP's waiting unset: $(cat "$tmp/err")"
  # libgomp displays its settings once per process: the first, then the restarted one
  [ "$(grep -c "GOMP_SPINCOUNT = " "$tmp/err")" = 2 ] || fail "not one restart: $(grep -c "DISPLAY ENVIRONMENT BEGIN" "$tmp/err") processes"
  [ "$(grep "GOMP_SPINCOUNT = " "$tmp/err" | tail -1)" = "  GOMP_SPINCOUNT = '$spin'" ] ||
    fail "the restarted process's libgomp does not spin $spin: $(grep "GOMP_SPINCOUNT" "$tmp/err")"
  grep -q "\"omp_wait\":\"GOMP_SPINCOUNT=$spin, a short spin before sleeping (set by lipgnn)\"" "$tmp/out" ||
    fail "the JSON does not record lipgnn's setting: $(grep -o '"omp_wait":"[^"]*"' "$tmp/out")"
  grep -q '"test_acc":0' "$tmp/out" || fail "train after the restart: no results: $(tail -c 300 "$tmp/out")"
  # the user's settings are kept, without a restart, and recorded as theirs
  for setting in GOMP_SPINCOUNT=5 OMP_WAIT_POLICY=passive OMP_WAIT_POLICY=active; do
    $clean $setting OMP_DISPLAY_ENV=verbose "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 2 --json >"$tmp/out" 2>"$tmp/err" ||
      fail "train under $setting: $(cat "$tmp/err")"
    [ "$(grep -c "GOMP_SPINCOUNT = " "$tmp/err")" = 1 ] || fail "$setting: restarted"
    grep -q "\"omp_wait\":\"$setting (from the environment)\"" "$tmp/out" ||
      fail "$setting: $(grep -o '"omp_wait":"[^"]*"' "$tmp/out")"
    $clean $setting "$bin" --version >"$tmp/out"
    grep -q "^OpenMP waiting: $setting (from the environment)$" "$tmp/out" || fail "$setting in --version: $(cat "$tmp/out")"
  done
  # a command that does not compute does not restart
  $clean OMP_DISPLAY_ENV=verbose "$bin" info --trees 2 --trees-count 3 >"$tmp/out" 2>"$tmp/err" || fail "info: $(cat "$tmp/err")"
  [ "$(grep -c "GOMP_SPINCOUNT = " "$tmp/err")" = 1 ] || fail "info restarted"
  echo "computing commands spin $spin when unset; the user's settings kept"
  # Small worker-thread stacks (OMP_STACKSIZE): the kernels keep their scratch
  # off the threads' stacks. Stop 43's 24 KB of per-thread scratch there made
  # the worker thread overflow at 72-95 KB; libgomp here takes no less than
  # about 72 KB. Not in a sanitizer build, whose frames are larger.
  if ldd "$bin" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    echo "small thread stacks: not checked in a sanitizer build"
  else
    for model in gat gt; do
      $clean OMP_STACKSIZE=80K "$bin" train --data "$dir/data/tiny" --model $model --layers 3 --epochs 2 --threads 2 --json \
        >"$tmp/out" 2>"$tmp/err"
      rc=$?
      if grep -q "Thread creation failed" "$tmp/err"; then
        echo "small thread stacks: libgomp takes no 80 KB stack here: not checked"
        break
      fi
      [ $rc = 0 ] || fail "$model with OMP_STACKSIZE=80K: exit $rc: $(tail -c 300 "$tmp/err")"
      grep -q '"test_acc":' "$tmp/out" || fail "$model with OMP_STACKSIZE=80K: no results"
    done
    echo "GAT and GT train with 80 KB worker-thread stacks"
  fi
  ;;
isa)
  # LIPGNN_ISA: a variant name caps lipgnn's kernels, and --version says which
  # and why; a value that names none is ignored, said by --version and in one
  # note of a training run (a typo must not pass for a setting).
  cpu=$(env -u LIPGNN_ISA "$bin" --version | sed -n 's/^lipgnn kernels: \([a-z0-9]*\) (CPUID;.*/\1/p')
  [ -n "$cpu" ] || fail "--version without LIPGNN_ISA: $(env -u LIPGNN_ISA "$bin" --version)"
  LIPGNN_ISA=baseline "$bin" --version >"$tmp/out" 2>"$tmp/err" || fail "--version under LIPGNN_ISA=baseline"
  if [ "$cpu" = baseline ]; then
    grep -q "^lipgnn kernels: baseline (CPUID;" "$tmp/out" || fail "LIPGNN_ISA=baseline: $(cat "$tmp/out")"
  else
    grep -q "^lipgnn kernels: baseline (LIPGNN_ISA=baseline caps this CPU's $cpu; same results)$" "$tmp/out" ||
      fail "LIPGNN_ISA=baseline: $(cat "$tmp/out")"
  fi
  LIPGNN_ISA=avx "$bin" --version >"$tmp/out" 2>"$tmp/err" || fail "--version under LIPGNN_ISA=avx"
  grep -q "^lipgnn kernels: $cpu (CPUID; LIPGNN_ISA=avx is not baseline, avx2, avx512 or auto: ignored)$" "$tmp/out" ||
    fail "LIPGNN_ISA=avx: $(cat "$tmp/out")"
  for v in avx ""; do
    LIPGNN_ISA=$v "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
      fail "train under LIPGNN_ISA='$v': $(cat "$tmp/err")"
    notes=$(grep -c '^note: LIPGNN_ISA=' "$tmp/err")
    if [ -n "$v" ]; then
      [ "$notes" = 1 ] && grep -q "^note: LIPGNN_ISA=avx is not baseline, avx2, avx512 or auto and was ignored; lipgnn's kernels run $cpu$" "$tmp/err" ||
        fail "no single note about LIPGNN_ISA=avx: $(cat "$tmp/err")"
    else
      [ "$notes" = 0 ] || fail "a note although LIPGNN_ISA is empty: $(grep '^note' "$tmp/err")"
    fi
  done
  LIPGNN_ISA=avx2 "$bin" train --data "$dir/data/tiny" --layers 2 --epochs 2 --threads 1 >"$tmp/out" 2>"$tmp/err" ||
    fail "train under LIPGNN_ISA=avx2: $(cat "$tmp/err")"
  grep -q '^note: LIPGNN_ISA' "$tmp/err" && fail "a note although LIPGNN_ISA=avx2 is a variant: $(grep '^note' "$tmp/err")"
  echo "LIPGNN_ISA caps ($cpu -> baseline), a wrong value is said and ignored"
  ;;
train)
  tiny="$dir/data/tiny"
  strip() { sed -E 's/"(epoch_ms_median|epochs_total_s)":[0-9.e+-]+//g' "$1"; }
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 6 --norm lipschitz+pairnorm --residual --json
  expect_rc 0 "train --json"; tail -1 "$tmp/out" > "$tmp/a.json"
  for k in lipgnn_version blas_core threads dataset model norm layers hidden heads epochs seed train_acc val_acc \
           test_acc best_val_acc test_acc_at_best_val epoch_ms_median epochs_total_s exploded first_explosion_epoch max_layer_grad_norm; do
    grep -q "\"$k\":" "$tmp/a.json" || fail "--json lacks $k"
  done
  command -v /usr/bin/python3 >/dev/null && { /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/a.json" || fail "--json is not JSON"; }
  # the same command twice: the same JSON apart from timings
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 6 --norm lipschitz+pairnorm --residual --json
  tail -1 "$tmp/out" > "$tmp/b.json"
  [ "$(strip "$tmp/a.json")" = "$(strip "$tmp/b.json")" ] || fail "same seed, different results"
  # a NaN gradient norm sticks in the maxima: the run's and each layer's are null (NaN) once a norm
  # was NaN (a later finite norm replaced it: a 1000-layer run's per-layer maxima were null, its
  # max_layer_grad_norm 7e38)
  if [ -x /usr/bin/python3 ]; then
    run train --data "$dir/data/random60" --layers 1000 --epochs 1 --json --grad-log "$tmp/nan-g.csv"
    expect_rc 0 "train 1000 layers (NaN norms)"; tail -1 "$tmp/out" >"$tmp/nan.json"
    /usr/bin/python3 - "$tmp/nan.json" "$tmp/nan-g.csv" <<'PY' || fail "NaN norms and the maxima disagree"
import csv, json, math, sys
d = json.loads(open(sys.argv[1]).read())
nan_layers = {int(r['layer']) for r in csv.DictReader(open(sys.argv[2]))
              if r['group'] == 'all' and math.isnan(float(r['norm']))}
if not nan_layers: sys.exit("no NaN norm in the grad log: the check would be vacuous")
per = d['max_grad_norm_per_layer']
bad = [l for l in range(len(per)) if (per[l] is None) != (l in nan_layers)]
if bad: sys.exit("layers whose maximum disagrees with their norms: %s" % bad[:5])
if d['max_layer_grad_norm'] is not None:
    sys.exit("max_layer_grad_norm %s although %d layers' norms were NaN" % (d['max_layer_grad_norm'], len(nan_layers)))
PY
  fi
  # --init: in the JSON; pytorch is another start (other results), refused for the models it does not describe
  grep -q '"init":"glorot"' "$tmp/a.json" || fail "--json lacks init glorot: $(tail -c 300 "$tmp/a.json")"
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 6 --norm lipschitz+pairnorm --residual --init pytorch --json
  expect_rc 0 "train --init pytorch"; tail -1 "$tmp/out" > "$tmp/p.json"
  grep -q '"init":"pytorch"' "$tmp/p.json" || fail "--json lacks init pytorch"
  [ "$(strip "$tmp/a.json" | sed 's/"init":"glorot"//')" = "$(strip "$tmp/p.json" | sed 's/"init":"pytorch"//')" ] &&
    fail "--init pytorch gives the same run as glorot"
  run train --data "$tiny" --model gcn --init pytorch; expect_rc 2 "--model gcn --init pytorch"
  grep -q -- "--init pytorch is for" "$tmp/err" || fail "--model gcn --init pytorch: $(cat "$tmp/err")"
  run train --data "$tiny" --init xavier; expect_rc 2 "--init xavier"
  grep -q "unknown --init 'xavier' (valid: glorot, pytorch)" "$tmp/err" || fail "--init xavier: $(cat "$tmp/err")"
  # --epochs 0: the initial model built (and saved), nothing evaluated: says so; JSON nulls, not zeros
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 0 --save "$tmp/z.ckpt"
  expect_rc 0 "train --epochs 0"
  grep -q "nothing was trained or evaluated" "$tmp/out" || fail "train --epochs 0 does not say that nothing ran: $(cat "$tmp/out")"
  [ -s "$tmp/z.ckpt" ] || fail "train --epochs 0 --save wrote no checkpoint"
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 0 --json
  expect_rc 0 "train --epochs 0 --json"
  for k in epochs_run:0 train_acc:null test_acc:null best_epoch:null max_layer_grad_norm:null; do
    grep -q "\"${k%%:*}\":${k#*:}[,}]" "$tmp/out" || fail "train --epochs 0 --json: ${k%%:*} is not ${k#*:}"
  done
  command -v /usr/bin/python3 >/dev/null && { tail -1 "$tmp/out" > "$tmp/z.json"; /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/z.json" || fail "--epochs 0 --json is not JSON"; }
  # a run whose values overflow (features of 3e38): its NaN loss and gradient norms are
  # null in --json (JSON has no NaN), and the explosion message says nan, not -nan. Where
  # the overflow first shows depends on the initial weights (at some seeds the loss stays
  # finite and a gradient norm is the first NaN): seed 1 without dropout, whose masks
  # would change the run, overflows in layer 0's output.
  mkdir -p "$tmp/huge"; cp "$tiny"/*.txt "$tiny/graph.mtx" "$tmp/huge/"
  awk 'NR <= 3 || NF < 3 { print; next } { print $1, $2, ($3 < 0 ? "-" : "") "3e38" }' "$tiny/features.mtx" \
    > "$tmp/huge/features.mtx"
  run train --data "$tmp/huge" --layers 2 --hidden 4 --epochs 2 --seed 1 --dropout 0 --att-dropout 0 --json
  expect_rc 0 "train on overflowing features"
  grep -q "loss is nan: the output of layer 0 is the first not finite" "$tmp/err" || fail "NaN loss message: $(cat "$tmp/err")"
  grep -q -- '-nan' "$tmp/err" "$tmp/out" && fail "a -nan is printed: $(cat "$tmp/err" "$tmp/out")"
  tail -1 "$tmp/out" > "$tmp/nan.json"
  grep -qiE '[:,[]-?(nan|inf)' "$tmp/nan.json" && fail "--json prints a NaN or inf: $(cat "$tmp/nan.json")"
  for k in train_loss:null max_layer_grad_norm:null exploded:true; do
    grep -q "\"${k%%:*}\":${k#*:}[,}]" "$tmp/nan.json" || fail "overflowing run --json: ${k%%:*} is not ${k#*:}"
  done
  grep -q '"max_grad_norm_per_layer":\[null,null\]' "$tmp/nan.json" || fail "per-layer norms: $(cat "$tmp/nan.json")"
  command -v /usr/bin/python3 >/dev/null && { /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/nan.json" || fail "the overflowing run's --json is not JSON"; }
  # seed 2 overflows past every layer (the loss is the first NaN): said once, not "loss: loss is nan"
  run train --data "$tmp/huge" --layers 2 --hidden 4 --epochs 2 --seed 2 --dropout 0 --att-dropout 0
  expect_rc 0 "train on overflowing features, seed 2"
  grep -q "gradient explosion at epoch 1: loss is nan$" "$tmp/err" || fail "NaN loss message, seed 2: $(cat "$tmp/err")"
  grep -q "largest gradient norm of a layer nan (attention parameters nan); gradients EXPLODED" "$tmp/out" ||
    fail "the summary of a NaN run: $(cat "$tmp/out")"
  # the input and output linear layers' largest norms beside the layers', as --json's; none without them
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 3; expect_rc 0 "train, the summary's norms"
  grep -qE "^largest gradient norm of a layer [0-9.e+-]+ \(attention parameters [0-9.e+-]+; input layer [0-9.e+-]+, output layer [0-9.e+-]+\); no explosion$" \
    "$tmp/out" || fail "the summary's input and output layers' norms: $(cat "$tmp/out")"
  text=$(grep -o 'input layer [0-9.e+-]*, output layer [0-9.e+-]*' "$tmp/out")
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 3 --json; expect_rc 0 "train --json, the summary's norms"
  json=$(tail -1 "$tmp/out" | grep -oE '"max_(in|out)put_grad_norm":[0-9.e+-]+' | cut -d: -f2 |
    awk '{printf "%s%.4g", NR == 1 ? "input layer " : ", output layer ", $1}')
  [ "$text" = "$json" ] || fail "the summary's input and output layers' norms ($text) are not --json's ($json)"
  run train --data "$tiny" --model gcn --layers 2 --hidden 8 --epochs 3; expect_rc 0 "train gcn, the summary's norms"
  grep -q "^largest gradient norm of a layer [0-9.e+-]* (attention parameters 0); no explosion$" "$tmp/out" ||
    fail "gcn's summary: $(cat "$tmp/out")"
  # 3 epochs, save, resume to 6: the same as 6 straight
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 3 --norm lipschitz+pairnorm --residual --save "$tmp/c.ckpt" --json
  expect_rc 0 "train --save"
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 6 --norm lipschitz+pairnorm --residual --resume "$tmp/c.ckpt" --json
  expect_rc 0 "train --resume"; tail -1 "$tmp/out" > "$tmp/r.json"
  [ "$(strip "$tmp/a.json")" = "$(strip "$tmp/r.json")" ] || fail "resumed run differs from the straight one"
  grep -q "counts the whole run" "$tmp/err" && fail "a note on a resume that trains: $(cat "$tmp/err")"
  # --epochs counts the whole run: at or below the checkpoint's epochs none
  # runs, and a note says so (it ran none silently)
  for e in 3 2; do
    run train --data "$tiny" --layers 3 --hidden 8 --epochs $e --norm lipschitz+pairnorm --residual --resume "$tmp/c.ckpt" --json
    expect_rc 0 "train --resume --epochs $e"
    grep -q "note: $tmp/c.ckpt has run 3 epochs, and --epochs $e counts the whole run, those included: no epoch to run (give --epochs above 3 to train on)" "$tmp/err" ||
      fail "--resume --epochs $e: no note: $(cat "$tmp/err")"
    grep -q '"epochs_run":3,' "$tmp/out" || fail "--resume --epochs $e: $(grep -o '"epochs_run":[^,]*' "$tmp/out")"
  done
  # a diverged run's checkpoint: saved, with a note that it will be refused (it was saved silently)
  run train --data "$dir/data/random60" --lr 100 --epochs 30 --layers 8 --model gt --dropout 0 --save "$tmp/nan.ckpt"
  expect_rc 0 "train, diverging"
  grep -q "note: $tmp/nan.ckpt holds parameters that are not finite numbers" "$tmp/err" || fail "diverged save: $(cat "$tmp/err")"
  run predict --resume "$tmp/nan.ckpt" --data "$dir/data/random60"; expect_rc 2 "predict a diverged checkpoint"
  grep -q "checkpoint parameter 0 is not a finite number" "$tmp/err" || fail "predict, diverged checkpoint: $(cat "$tmp/err")"
  run train --data "$tiny" --layers 2 --epochs 1 --save "$tmp/fine.ckpt"; expect_rc 0 "train, a finite checkpoint"
  grep -q "not finite numbers" "$tmp/err" && fail "the note on a finite checkpoint: $(cat "$tmp/err")"
  # --patience / --plateau without a validation split watch the training loss, and say so
  run train --trees 2 --trees-count 20 --epochs 3 --patience 2; expect_rc 0 "train --trees --patience"
  grep -q "note: trees-d2 has no validation split: --patience watches the training loss" "$tmp/err" || fail "--patience on TREES: $(cat "$tmp/err")"
  # the same bits at 1 and 2 threads, the whole run (README "Reproducibility"; the kernels' tests check each op)
  for t in 1 2; do
    run train --sbm 2000 --layers 3 --norm lipschitz --epochs 3 --threads $t --save "$tmp/th$t.ckpt"; expect_rc 0 "train --threads $t"
  done
  cmp -s "$tmp/th1.ckpt" "$tmp/th2.ckpt" || fail "1 and 2 threads trained different bits"
  # --save-best: the checkpoint of the best epoch, the model the summary's "best" figures describe
  run train --data "$dir/data/random60" --layers 2 --epochs 40 --save-best "$tmp/best.ckpt" --json
  expect_rc 0 "train --save-best"; tail -1 "$tmp/out" >"$tmp/best.json"
  be=$(sed -n 's/.*"best_epoch":\([0-9]*\).*/\1/p' "$tmp/best.json")
  bv=$(sed -n 's/.*"best_val_acc":\([0-9.]*\).*/\1/p' "$tmp/best.json")
  bt=$(sed -n 's/.*"test_acc_at_best_val":\([0-9.]*\).*/\1/p' "$tmp/best.json")
  [ -n "$be" ] && [ "$be" -lt 40 ] || fail "--save-best: the best epoch is the last, the check would be vacuous: $(cat "$tmp/best.json")"
  grep -q "best.ckpt: the checkpoint of epoch $be, the best validation accuracy" "$tmp/err" || fail "--save-best message: $(cat "$tmp/err")"
  run predict --resume "$tmp/best.ckpt" --data "$dir/data/random60" --json; expect_rc 0 "predict the best epoch"
  grep -q "\"epochs_trained\":$be,.*\"val_acc\":$bv,\"test_acc\":$bt}" "$tmp/out" \
    || fail "--save-best holds another model than epoch $be (val $bv, test $bt): $(cat "$tmp/out")"
  run train --data "$tiny" --layers 2 --epochs 2 --save "$tmp/same.ckpt" --save-best "$tmp/same.ckpt"
  expect_rc 2 "--save and --save-best one file"
  # a resumed run that never beats the checkpoint's best: said, where no file and no word came
  run train --data "$tiny" --layers 2 --epochs 3 --save "$tmp/sb.ckpt"; expect_rc 0 "train for --save-best --resume"
  run train --data "$tiny" --layers 2 --epochs 5 --resume "$tmp/sb.ckpt" --save-best "$tmp/sb-best.ckpt"
  expect_rc 0 "train --resume --save-best"
  if [ -e "$tmp/sb-best.ckpt" ]; then
    grep -q "sb-best.ckpt: the checkpoint of epoch [45]," "$tmp/err" || fail "--resume --save-best wrote without saying: $(cat "$tmp/err")"
  else
    grep -q "note: --save-best .* not written: no epoch of this run beat" "$tmp/err" || fail "--resume --save-best: nothing written, nothing said"
  fi
  # the detector's window is part of its saved state: named when it differs (a section size was)
  run train --data "$tiny" --layers 2 --epochs 5 --resume "$tmp/sb.ckpt" --explode-window 5; expect_rc 2 "resume, another window"
  grep -q "explode-window 10, this run has .*--explode-window 5" "$tmp/err" || fail "resume, another window: $(cat "$tmp/err")"
  # a new --lr on resume applies, with a note (the checkpoint's was kept and the new one reported as used)
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 5 --norm lipschitz+pairnorm --residual --resume "$tmp/c.ckpt" \
      --lr 0.05 --log "$tmp/rlr.csv"
  expect_rc 0 "train --resume --lr 0.05"
  grep -q "note: --lr 0.05 replaces the checkpoint's learning rate (its run's --lr 0.005) from epoch 4" "$tmp/err" \
    || fail "resume --lr: no note: $(cat "$tmp/err")"
  [ "$(cut -d, -f2 "$tmp/rlr.csv" | sed 1d | sort -u)" = 0.05 ] || fail "resume --lr: the log's lr: $(cut -d, -f2 "$tmp/rlr.csv")"
  # a checkpoint of another model or data set: what differs is named (both descriptions could read the same)
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 5 --norm lipschitz+pairnorm --residual --resume "$tmp/c.ckpt" \
      --dropout 0.1 --self-loops off
  expect_rc 2 "train --resume, another dropout"
  grep -q "checkpoint of another model: --dropout 0.6 (this run 0.1); --self-loops on (this run off)$" "$tmp/err" \
    || fail "resume, another model: $(cat "$tmp/err")"
  mkdir -p "$tmp/relab"; cp "$tiny"/* "$tmp/relab/"; sed -i '2s/^0$/2/' "$tmp/relab/labels.txt" # node 0: class 2
  cmp -s "$tiny/labels.txt" "$tmp/relab/labels.txt" && fail "relab: the labels did not change"
  run predict --resume "$tmp/c.ckpt" --data "$tmp/relab"; expect_rc 2 "predict, other labels"
  grep -q "checkpoint of another data set (the same sizes, but other labels, splits or edges:" "$tmp/err" \
    || fail "predict, other labels: $(cat "$tmp/err")"
  # predict from the checkpoint: predictions, embeddings, attention weights
  run predict --resume "$tmp/c.ckpt" --data "$tiny" --out "$tmp/p.csv" --embeddings "$tmp/e.mtx" --attention "$tmp/w.csv" --json
  expect_rc 0 predict
  [ "$(wc -l < "$tmp/p.csv")" = 7 ] || fail "predict: $(wc -l < "$tmp/p.csv") lines for 6 nodes"
  # the true label and the split beside each prediction (tiny: labels 0 1 2 1 0 -1)
  [ "$(head -1 "$tmp/p.csv")" = "node,class,p_0,p_1,p_2,label,split" ] || fail "predict header: $(head -1 "$tmp/p.csv")"
  [ "$(sed 1d "$tmp/p.csv" | cut -d, -f6 | tr '\n' ' ')" = "0 1 2 1 0 -1 " ] || fail "predict labels: $(cut -d, -f6 "$tmp/p.csv")"
  for q in train val test; do
    want=$(grep -v '^#' "$tiny/$q.txt" | sort -n | tr '\n' ' ')
    got=$(awk -F, -v q=$q 'NR > 1 && $7 == q { print $1 }' "$tmp/p.csv" | sort -n | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "predict split $q: nodes '$got', $q.txt '$want'"
  done
  head -1 "$tmp/e.mtx" | grep -q "^%%MatrixMarket matrix array real general" || fail "embeddings banner"
  grep -q '"epochs_trained":3' "$tmp/out" || fail "predict json: $(cat "$tmp/out")"
  awk -F, 'NR > 1 { s[$1 "," $2 "," $4] += $5 } END { for (k in s) if (s[k] < 0.9999 || s[k] > 1.0001) { print "sum " k " = " s[k]; bad = 1 } exit bad }' \
      "$tmp/w.csv" || fail "attention weights of a node do not sum to 1"
  run predict --data "$tiny"; expect_rc 2 "predict without --resume"
  run predict --resume "$tmp/c.ckpt" --data "$tiny" --max-memory 1K
  expect_rc 2 "predict --max-memory 1K"
  grep -q "^lipgnn predict: reading the data set (--data $tiny) needs about 1.00 MiB at its peak, more than --max-memory (1.00 KiB)$" "$tmp/err" ||
    fail "predict data-set memory message: $(cat "$tmp/err")"
  run train --data "$tiny" --layers 30 --hidden 256 --epochs 1 --save "$tmp/big.ckpt"; expect_rc 0 "a 31 MiB model"
  run predict --resume "$tmp/big.ckpt" --data "$tiny" --max-memory 8M
  expect_rc 2 "predict --max-memory 8M"
  grep -q "the model needs about [0-9.]* MiB.*more than --max-memory (8.00 MiB)" "$tmp/err" || fail "predict memory message: $(cat "$tmp/err")"
  rm -f "$tmp/big.ckpt"
  # a mismatched and a damaged checkpoint are refused
  run train --data "$tiny" --layers 4 --hidden 8 --epochs 6 --resume "$tmp/c.ckpt"
  expect_rc 2 "resume another model"; grep -q "another model" "$tmp/err" || fail "mismatch message: $(cat "$tmp/err")"
  head -c 100 "$tmp/c.ckpt" > "$tmp/t.ckpt"
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 6 --resume "$tmp/t.ckpt"
  expect_rc 2 "resume truncated"; grep -q "t.ckpt" "$tmp/err" || fail "truncated checkpoint message"
  run train --data "$tiny" --resume "$tmp/none.ckpt"; expect_rc 2 "resume missing file"
  # explosion: flagged, logged, and --stop-on-explosion ends with status 3
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 50 --explode-threshold 1e-12 --stop-on-explosion \
      --grad-log "$tmp/g.csv" --json
  expect_rc 3 "--stop-on-explosion"
  grep -q "^lipgnn train: gradient explosion at epoch 1" "$tmp/err" || fail "explosion not reported: $(cat "$tmp/err")"
  [ "$(grep -c "gradient explosion" "$tmp/err")" = 1 ] || fail "explosion reported more than once"
  head -1 "$tmp/g.csv" | grep -q "^epoch,layer,group,norm$" || fail "grad log header"
  [ "$(wc -l < "$tmp/g.csv")" = 9 ] || fail "grad log: $(wc -l < "$tmp/g.csv") lines, expected 1 + 3 layers x 2 groups + 2"
  # the input and output linear layers' rows: layer -1 and the layer count, their own groups
  grep -q '^1,-1,input,[0-9.e+-]*$' "$tmp/g.csv" && grep -q '^1,3,output,[0-9.e+-]*$' "$tmp/g.csv" \
    || fail "grad log without the linear layers' rows: $(cat "$tmp/g.csv")"
  grep -q '"exploded":true' "$tmp/out" || fail "summary lacks the explosion"
  run train --data "$tiny" --model gat-classic --hidden 8 --epochs 1 --grad-log "$tmp/gc.csv"
  expect_rc 0 "train gat-classic --grad-log"
  grep -q 'input\|output' "$tmp/gc.csv" && fail "gat-classic (no linear layers): their rows in the grad log"
  # memory: the estimates are checked before anything is allocated, the data
  # set's before it is read (1 MiB at least: the allocator's margin), then the model's
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 1 --max-memory 1K
  expect_rc 2 "--max-memory 1K"
  grep -q "^lipgnn train: reading the data set (--data $tiny) needs about 1.00 MiB at its peak, more than --max-memory (1.00 KiB)$" "$tmp/err" ||
    fail "data-set memory message: $(cat "$tmp/err")"
  run train --data "$tiny" --layers 30 --hidden 256 --epochs 1 --max-memory 8M
  expect_rc 2 "--max-memory 8M"; grep -q "the model needs about [0-9.]* MiB.*more than --max-memory (8.00 MiB)" "$tmp/err" || fail "memory message: $(cat "$tmp/err")"
  # a graph file too large for the limit is refused from its length and header
  # at once (a sparse file of 2 GB: it was read whole first, 2 GB resident)
  mkdir "$tmp/big"; cp "$tiny"/*.txt "$tiny/features.mtx" "$tmp/big/"
  printf '%%%%MatrixMarket matrix coordinate pattern general\n5 5 25\n' > "$tmp/big/graph.mtx"
  truncate -s 2G "$tmp/big/graph.mtx"
  run train --data "$tmp/big" --max-memory 1G; expect_rc 2 "a 2 GB graph.mtx with --max-memory 1G"
  grep -q "^lipgnn train: reading the data set (--data $tmp/big) needs about 2.0[0-9] GiB at its peak, more than --max-memory (1.00 GiB)$" "$tmp/err" ||
    fail "graph file memory message: $(cat "$tmp/err")"
  rm -rf "$tmp/big"
  # a limit of 1 GiB or more is said in GiB (this model's parameters alone take 4 GiB)
  run train --sbm 200 --layers 1000 --hidden 1024 --epochs 1 --max-memory 1G
  expect_rc 2 "a 4 GiB model with --max-memory 1G"
  grep -q "the model needs about [0-9.]* GiB.*more than --max-memory (1.00 GiB)" "$tmp/err" || fail "memory message in GiB: $(cat "$tmp/err")"
  grep -q "the data set [0-9.]*), more than" "$tmp/err" || fail "memory message without the data set: $(cat "$tmp/err")"
  run train --data "$tiny" --layers 3 --hidden 8 --epochs 1 --max-memory 1G; expect_rc 0 "--max-memory 1G"
  # on a terminal: status lines while the data set is made and the model built,
  # each cleared ("\r\033[K") before what follows, an error message included
  if command -v script >/dev/null; then
    esc=$(printf '\r\033[K')
    script -qec "$bin train --trees 3 --trees-count 50 --layers 2 --epochs 1" /dev/null >"$tmp/tty" 2>&1
    grep -qF "lipgnn train: making the data set (TREES of depth 3)...$esc" "$tmp/tty" || fail "terminal: no data status line: $(cat -v "$tmp/tty")"
    grep -qF "lipgnn train: building the model...$esc" "$tmp/tty" || fail "terminal: no model status line: $(cat -v "$tmp/tty")"
    script -qec "$bin train --trees 3 --trees-count 50 --layers 2 --epochs 1 --quiet" /dev/null >"$tmp/tty" 2>&1
    grep -q "making the data set\|building the model" "$tmp/tty" && fail "terminal: status lines with --quiet: $(cat -v "$tmp/tty")"
    script -qec "$bin train --trees 3 --trees-count 50 --max-memory 1K" /dev/null >"$tmp/tty" 2>&1
    grep -qF "...${esc}lipgnn train: making the data set (--trees 3, 50 trees) needs about" "$tmp/tty" ||
      fail "terminal: the error does not start its own line: $(cat -v "$tmp/tty")"
    echo "terminal status lines: checked"
  else
    echo "no script(1) here: the terminal's status lines not checked"
  fi
  # a synthetic data set too large to make is refused before it is made, at once
  # (it was made first: 20M nodes took minutes and more than the limit)
  for data in "--sbm 20000000,100000000" "--trees 10 --trees-count 200000"; do
    # shellcheck disable=SC2086
    timeout -s KILL 60 "$bin" train $data --max-memory 1G >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"
    expect_rc 2 "train $data --max-memory 1G"
    grep -q "^lipgnn train: making the data set (${data%% *} [0-9, trees]*) needs about [0-9.]* GiB at its peak, more than --max-memory (1.00 GiB)$" "$tmp/err" ||
      fail "$data: data-set memory message: $(cat "$tmp/err")"
  done
  run train --data "$tiny" --max-memory lots; expect_rc 2 "--max-memory lots"
  run train --trees 2 --trees-count 10 --hidden 4096 --heads 64 --layers 100 --epochs 1
  expect_rc 2 "a model larger than the machine"; grep -q "more than this machine's memory" "$tmp/err" || fail "machine memory message: $(cat "$tmp/err")"
  # bad options
  run train --data "$tiny" --norm bogus; expect_rc 2 "--norm bogus"
  run train --data "$tiny" --model bogus; expect_rc 2 "--model bogus"
  run train --data "$tiny" --model gcn --norm lipschitz; expect_rc 2 "--model gcn --norm lipschitz"
  grep -q "has no attention" "$tmp/err" || fail "gcn + lipschitz message: $(cat "$tmp/err")"
  run train --data "$tiny" --model gcnii --lambda 5; expect_rc 2 "--lambda 5"
  # the baselines train and say so in the summary
  for m in gcn gin ggnn gcnii; do
    eps=; [ $m = gin ] && eps=--train-eps
    # shellcheck disable=SC2086
    run train --data "$tiny" --model $m --layers 3 --hidden 8 --epochs 2 --norm pairnorm $eps --json
    expect_rc 0 "--model $m"; grep -q "\"model\":\"$m\"" "$tmp/out" || fail "--model $m: $(tail -1 "$tmp/out")"
  done
  grep -q '"lr":0.01,"weight_decay":0.0005,"layer_weight_decay":0.01,' "$tmp/out" || fail "gcnii's defaults: $(tail -1 "$tmp/out")"
  # the config's numbers as given, the layer weight decay in effect (a placeholder -1 was shown)
  run train --data "$tiny" --layers 2 --epochs 1 --json; expect_rc 0 "train, default weight decay"
  grep -q '"dropout":0.6,"att_dropout":0.3,.*"weight_decay":0.0005,"layer_weight_decay":0.0005,.*"explode_threshold":1000,' \
    "$tmp/out" || fail "--json config numbers: $(tail -1 "$tmp/out")"
  # options given that the model ignores: refused (they were taken into --json's config, unused)
  for bad in "--model gat --alpha 0.5" "--model gcn --lambda 1" "--model gcnii --train-eps" "--model l2 --att-dropout 0.3" \
             "--model gcn --att-dropout 0.5" "--model gat --norm none --lip-scale 5"; do
    # shellcheck disable=SC2086
    run train --data "$tiny" --layers 2 --epochs 1 $bad; expect_rc 2 "train $bad"
    grep -q -- "--[a-z-]*: \(only --model\|--model [a-z0-9]* has no attention dropout\|LipschitzNorm's scale\)" "$tmp/err" \
      || fail "train $bad: $(cat "$tmp/err")"
  done
  run depth-study --data "$tiny" --model gat,gcnii --layers 2 --norms none --seeds 1 --epochs 1 --alpha 0.2 --out "$tmp/ds-alpha" --quiet
  expect_rc 0 "depth-study --model gat,gcnii --alpha"
  grep -q "note: --alpha: only --model gcnii has it: ignored in the runs of --model gat" "$tmp/err" || fail "depth-study --alpha note: $(cat "$tmp/err")"
  run train --data "$tiny" --model gin --layers 2 --hidden 4 --epochs 1 --layer-weight-decay 0.1 --json
  expect_rc 0 "--layer-weight-decay"
  grep -q '"layer_weight_decay":0.1,' "$tmp/out" || fail "--layer-weight-decay: $(tail -1 "$tmp/out")"
  run train --help; expect_rc 0 "train --help"; grep -q -- "gcn, gin, ggnn, gcnii" "$tmp/out" || fail "train --help lists the baselines"
  grep -q -- "l2 (L2 self-attention" "$tmp/out" || fail "train --help lacks --model l2"
  # L2 attention: trains, is named in the summary, refuses LipschitzNorm
  run train --data "$tiny" --model l2 --layers 3 --hidden 4 --heads 2 --epochs 2 --norm pairnorm --residual --json
  expect_rc 0 "--model l2"; grep -q '"model":"l2"' "$tmp/out" || fail "--model l2: $(tail -1 "$tmp/out")"
  run train --data "$tiny" --model l2 --norm lipschitz; expect_rc 2 "--model l2 --norm lipschitz"
  grep -q "Lipschitz without LipschitzNorm" "$tmp/err" || fail "l2 + lipschitz message: $(cat "$tmp/err")"
  run train --data "$tiny" --dropout 1.5; expect_rc 2 "--dropout 1.5"
  # the refused value as given: %g printed "1 is outside [0, 0.999]"
  run train --data "$tiny" --dropout 0.9999999; expect_rc 2 "--dropout 0.9999999"
  grep -q -- "--dropout: 0.9999999 is outside \[0, 0.999\]" "$tmp/err" || fail "--dropout 0.9999999 message: $(cat "$tmp/err")"
  # the bounds exact: %g printed "1 is outside [1, 1e+300]" for --explode-growth's 1.000001
  run train --data "$tiny" --explode-growth 1; expect_rc 2 "--explode-growth 1"
  grep -q -- "--explode-growth: 1 is outside \[1.000001, 1e+300\]" "$tmp/err" || fail "--explode-growth 1: $(cat "$tmp/err")"
  # an underflow is a number near 0, not "not a finite number"
  run train --data "$tiny" --epochs 1 --weight-decay 1e-400; expect_rc 0 "--weight-decay 1e-400"
  run train --data "$tiny" --model gcn --norm layernorm; expect_rc 2 "layernorm on gcn"
  grep -q "is for the deep attention stacks" "$tmp/err" || fail "layernorm on gcn message: $(cat "$tmp/err")"
  run train --data "$tiny" --layers 3 --hidden 4 --epochs 2 --norm lipschitz+layernorm --residual --json
  expect_rc 0 "gat lipschitz+layernorm"; grep -q '"norm":"lipschitz+layernorm"' "$tmp/out" || fail "gat layernorm: $(tail -1 "$tmp/out")"
  run train --help; expect_rc 0 "train --help"; grep -q -- "--grad-log FILE" "$tmp/out" || fail "train --help"
  grep -q -- "--batch-size N" "$tmp/out" || fail "train --help lacks --batch-size"
  # TREES in mini-batches: the defaults (d+1 layers of 32, batches of 1024), determinism, resume, predict
  tr=(train --trees 2 --trees-count 60 --epochs 4 --batch-size 7 --norm lipschitz --json)
  run "${tr[@]}"; expect_rc 0 "train --trees --batch-size 7"; tail -1 "$tmp/out" > "$tmp/t1.json"
  grep -q '"layers":3,"hidden":32' "$tmp/t1.json" || fail "--trees 2: not 3 layers of 32: $(cat "$tmp/t1.json")"
  grep -q '"batch_size":7,"graphs":60' "$tmp/t1.json" || fail "--batch-size 7 not in the JSON: $(cat "$tmp/t1.json")"
  grep -q '"dropout":0,' "$tmp/t1.json" || fail "--trees: dropout is not 0 by default"
  grep -q '"weight_decay":0,' "$tmp/t1.json" || fail "--trees: weight decay is not 0 by default"
  run "${tr[@]}"; tail -1 "$tmp/out" > "$tmp/t2.json"
  [ "$(strip "$tmp/t1.json")" = "$(strip "$tmp/t2.json")" ] || fail "batch training: same seed, different results"
  run train --trees 2 --trees-count 60 --epochs 2 --batch-size 7 --norm lipschitz --json --save "$tmp/b.ckpt" --grad-log "$tmp/bg.csv"
  expect_rc 0 "batch train --save"
  [ "$(wc -l < "$tmp/bg.csv")" = 17 ] || fail "batch grad log: $(wc -l < "$tmp/bg.csv") lines, expected 1 + 2 epochs x (3 layers x 2 + 2)"
  run "${tr[@]}" --resume "$tmp/b.ckpt"; expect_rc 0 "batch train --resume"; tail -1 "$tmp/out" > "$tmp/t3.json"
  [ "$(strip "$tmp/t1.json")" = "$(strip "$tmp/t3.json")" ] || fail "batch training: resumed run differs from the straight one"
  run train --trees 2 --trees-count 60 --epochs 4 --batch-size 8 --norm lipschitz --resume "$tmp/b.ckpt"
  expect_rc 2 "resume with another batch size"; grep -q -- "--batch-size 7" "$tmp/err" || fail "batch-size mismatch message: $(cat "$tmp/err")"
  run predict --resume "$tmp/b.ckpt" --trees 2 --trees-count 60 --out "$tmp/bp.csv"; expect_rc 0 "predict a batch model"
  [ "$(wc -l < "$tmp/bp.csv")" = 421 ] || fail "batch predict: $(wc -l < "$tmp/bp.csv") lines for 420 nodes"
  run predict --resume "$tmp/b.ckpt" --trees 2 --trees-count 60 --attention "$tmp/bw.csv"
  expect_rc 2 "predict --attention of a batch model"; grep -q "mini-batches" "$tmp/err" || fail "batch --attention message: $(cat "$tmp/err")"
  run train --trees 3 --trees-count 50 --epochs 1 --json; expect_rc 0 "train --trees 3 defaults"
  grep -q '"layers":4,"hidden":32.*"batch_size":1024' "$tmp/out" || fail "--trees 3 defaults: $(tail -1 "$tmp/out")"
  run train --trees 3 --trees-count 50 --epochs 1 --layers 2 --hidden 8 --batch-size 0 --weight-decay 1e-3 --json
  expect_rc 0 "--batch-size 0"
  grep -q '"layers":2,"hidden":8.*"batch_size":0' "$tmp/out" || fail "given options lost: $(tail -1 "$tmp/out")"
  grep -q '"weight_decay":0.001' "$tmp/out" || fail "given --weight-decay lost: $(tail -1 "$tmp/out")"
  for b in -1 x 1.5 "" 100000001; do
    run train --trees 2 --trees-count 20 --epochs 1 --batch-size "$b"; expect_rc 2 "--batch-size '$b'"
    grep -q -- "--batch-size" "$tmp/err" || fail "--batch-size '$b': message does not name the option: $(cat "$tmp/err")"
  done
  run train --trees 2 --trees-count 20 --epochs 1 --batch-size; expect_rc 2 "--batch-size without a value"
  # SIGTERM: stops at the end of an epoch, writes the checkpoint, status 143
  stopped_by TERM 143 terminated "$tmp/s.ckpt" SIGTERM
  run train --trees 3 --trees-count 200 --layers 2 --hidden 8 --epochs 1 --resume "$tmp/s.ckpt"
  expect_rc 0 "resume after SIGTERM"
  # a --save checked at the start that fails at the end (its directory removed
  # during the run): exit 1, not the signal's 143, with the reason
  mkdir -p "$tmp/gone"
  "$bin" train --trees 3 --trees-count 200 --layers 2 --hidden 8 --epochs 1000000 --save "$tmp/gone/x.ckpt" \
      >"$tmp/out" 2>"$tmp/err" & pid=$!
  sleep 2; rm -rf "$tmp/gone"; kill -TERM $pid; wait $pid; st=$?
  [ $st = 1 ] || fail "--save into a directory removed during the run: exit $st, expected 1: $(tail -c 300 "$tmp/err")"
  grep -q "terminated: stopped after epoch" "$tmp/err" && grep -q -- "--save $tmp/gone/x.ckpt: cannot create" "$tmp/err" ||
    fail "late --save failure: no stop at an epoch's end, or no reason: $(tail -c 300 "$tmp/err")"
  echo "a --save that fails at the end: exit 1 and the reason"
  # SIGHUP (the terminal closed) the same, status 129; it ended the process mid-epoch
  stopped_by HUP 129 "hung up" "$tmp/h.ckpt" SIGHUP
  # a signal ignored when lipgnn started stays ignored: SIGINT in a script's
  # background job, SIGHUP under nohup. Both stopped the run before.
  (trap '' INT HUP; exec "$bin" train --trees 3 --trees-count 200 --layers 2 --hidden 8 --epochs 1000000) \
      >"$tmp/out" 2>"$tmp/err" & pid=$!
  sleep 2; kill -INT $pid; kill -HUP $pid; sleep 1
  kill -0 $pid 2>/dev/null || fail "an ignored SIGINT or SIGHUP stopped the run: $(tail -3 "$tmp/err")"
  kill -TERM $pid; wait $pid; rc_=$?
  [ $rc_ = 143 ] || fail "ignored SIGINT and SIGHUP, then SIGTERM: exit $rc_, expected 143: $(tail -3 "$tmp/err")"
  # a second SIGTERM ends the process at once, without waiting for the end of
  # the epoch (2 s an epoch here after the first, 5 s; the signals 0.2 s apart)
  "$bin" train --sbm 50000,500000 --layers 30 --epochs 1000000 --threads 2 --verbose --save "$tmp/k.ckpt" \
      >"$tmp/out" 2>"$tmp/err" & pid=$!
  for _ in $(seq 1200); do grep -q "^epoch *1 " "$tmp/err" && break; sleep 0.1; done
  grep -q "^epoch *1 " "$tmp/err" || fail "no first epoch in 120 s: $(cat "$tmp/err")"
  kill -TERM $pid; sleep 0.2; kill -TERM $pid; wait $pid; rc_=$?
  [ $rc_ = 143 ] || fail "two SIGTERMs: exit $rc_, expected 143: $(tail -3 "$tmp/err")"
  ! grep -q "stopped after epoch" "$tmp/err" || fail "two SIGTERMs: the second waited for the epoch: $(tail -3 "$tmp/err")"
  [ ! -e "$tmp/k.ckpt" ] || fail "two SIGTERMs: a checkpoint was written"
  echo "a second SIGTERM ends training at once"
  ;;
limits)
  # Resource limits (ulimit). Every run under a KILL timeout, so that a hang
  # fails. Not in a sanitizer build: AddressSanitizer's shadow memory admits
  # no address-space limit, and its frames are larger.
  if ldd "$bin" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    echo "resource limits: not checked in a sanitizer build"; exit 77
  fi
  limited() { # limited OPT KB CMD...: CMD under ulimit OPT KB, at most 120 s
    local opt=$1 kb=$2; shift 2
    (ulimit "$opt" "$kb" && exec timeout -s KILL 120 "$bin" "$@") >"$tmp/out" 2>"$tmp/err"
    rc=$?
  }
  # a 64 KB stack (ulimit -s): depth-study kept 197 KB of one function's
  # locals on the stack and died with SIGSEGV
  limited -s 64 depth-study --trees 2 --trees-count 10 --layers 1,2 --epochs 1 --seeds 1 --threads 1 --out "$tmp/small-stack"
  [ $rc = 0 ] || fail "depth-study under ulimit -s 64: exit $rc (139: SIGSEGV): $(tail -c 300 "$tmp/err")"
  limited -s 64 train --trees 2 --trees-count 10 --layers 2 --epochs 1 --threads 2
  [ $rc = 0 ] || fail "train under ulimit -s 64: exit $rc: $(tail -c 300 "$tmp/err")"
  echo "ulimit -s 64: depth-study and train run"
  # Smaller stacks. On the main thread: train, lipschitz and depth-study died
  # (SIGSEGV) at 32 and 48 KB, in OpenBLAS's dgemm or lipgnn's own frames; the
  # command now runs on a thread of 8 MiB. On libgomp's workers, whose stacks
  # follow the limit: OpenBLAS keeps about 60 KB of thread-local data in each,
  # and lipschitz on a 64-wide model died in a worker's dgemm (Haswell's) at
  # 64-88 KB; the restart now sets OMP_STACKSIZE.
  run train --trees 3 --trees-count 50 --layers 4 --hidden 64 --epochs 1 --batch-size 0 --save "$tmp/w64.ckpt"
  expect_rc 0 "train a 64-wide model for lipschitz"
  for kb in 32 48 64 88; do
    OPENBLAS_CORETYPE=Haswell limited -s $kb lipschitz --model "$tmp/w64.ckpt" --trees 3 --trees-count 50 --threads 2
    [ $rc = 0 ] || fail "lipschitz (Haswell) under ulimit -s $kb: exit $rc (139: SIGSEGV): $(tail -c 300 "$tmp/err")"
  done
  limited -s 32 train --trees 2 --trees-count 10 --layers 2 --epochs 1 --threads 2
  [ $rc = 0 ] || fail "train under ulimit -s 32: exit $rc (139: SIGSEGV): $(tail -c 300 "$tmp/err")"
  limited -s 32 depth-study --trees 2 --trees-count 10 --layers 1,2 --epochs 1 --seeds 2 --jobs 2 --threads 1 \
      --out "$tmp/smaller-stack"
  [ $rc = 0 ] || fail "depth-study --jobs 2 under ulimit -s 32: exit $rc (139: SIGSEGV): $(tail -c 300 "$tmp/err")"
  # SIGTERM reaches the command on its own thread: it stops at the end of an epoch
  stopped_by TERM 143 terminated "$tmp/s32.ckpt" "SIGTERM under ulimit -s 32" 32
  echo "ulimit -s 32-88: lipschitz, train, depth-study --jobs run; SIGTERM stops training"
  # A control group's memory limit (a batch job's memory request, a container's
  # limit): a model above it was refused only when also above the machine's
  # memory; below that the kernel killed the process (SIGKILL, status 137).
  # Checked in a cgroup v1 memory group made here (as root); where none can be
  # made (cgroup v2, not root), said.
  cg=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup 2>/dev/null)
  cgd=/sys/fs/cgroup/memory${cg%/}/lipgnn-test-$$
  if [ -n "$cg" ] && mkdir "$cgd" 2>/dev/null; then
    if echo $((256 * 1024 * 1024)) >"$cgd/memory.limit_in_bytes" 2>/dev/null; then
      # a model above the limit; then a data set whose making goes above it
      # (641 MiB at its peak: killed while igraph made it, before the check)
      for what in "the model needs" "making the data set"; do
        args="--sbm 3000 --layers 30 --hidden 512 --heads 8"
        [ "$what" = "making the data set" ] && args="--sbm 1000000,10000000 --layers 2"
        # shellcheck disable=SC2086
        (echo $BASHPID 2>/dev/null >"$cgd/cgroup.procs" || exit 77
          exec timeout -s KILL 120 "$bin" train $args --epochs 1) >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc = 77 ]; then
          echo "no process could join $cgd: a control group's limit not checked"
          break
        fi
        [ $rc = 2 ] || fail "$args above the control group's limit: exit $rc, expected 2 (137: killed): $(tail -c 300 "$tmp/err")"
        grep -q "^lipgnn train: $what .*more than the memory limit of this process's control group (256.00 MiB)" "$tmp/err" ||
          fail "control group limit: message: $(tail -c 300 "$tmp/err")"
        echo "a control group's memory limit: checked ($what)"
      done
    else
      echo "no memory limit could be set on $cgd: a control group's limit not checked"
    fi
    for _ in $(seq 50); do rmdir "$cgd" 2>/dev/null && break; sleep 0.1; done
  else
    echo "no cgroup v1 memory group could be made here (cgroup v2, or not root): a control group's limit not checked"
  fi
  # Under an address-space (ulimit -v) or data (ulimit -d) limit, Debian's
  # OpenBLAS 0.3.21 retries forever a 128 MiB buffer that does not fit: before
  # lipgnn handled it, every command hung there, one core busy (--version at
  # 200 MB on 2 cores, because of OpenBLAS's own threads; train at 360 MB on
  # 2 threads). Now the restart sets OPENBLAS_NUM_THREADS=1 and the commands
  # that compute end with a message naming a limit that fits, which must then
  # run. The limit here leaves room for the program (about 100 MiB) and for
  # the stacks of the threads OpenBLAS starts when it loads (one per core but
  # one, 8 MiB each; without that room OpenBLAS ends the process before
  # lipgnn runs), not for their buffers nor for two threads' buffers.
  ncores=$(nproc 2>/dev/null || echo 2)
  mib=$((150 + 8 * (ncores - 1)))
  if [ $mib -ge 340 ]; then
    echo "memory limits: $ncores cores leave no limit between OpenBLAS's start and the check: not checked"
  else
    kb=$((mib * 1024))
    limited -v $kb --version
    [ $rc = 0 ] || fail "--version under ulimit -v $kb: exit $rc (137: hung): $(tail -c 300 "$tmp/err")"
    limited -v $kb info --trees 2 --trees-count 3
    [ $rc = 0 ] || fail "info under ulimit -v $kb: exit $rc (137: hung): $(tail -c 300 "$tmp/err")"
    for opt in -v -d; do
      name="address-space limit (ulimit -v)"; [ $opt = -d ] && name="data limit (ulimit -d)"
      limited $opt $kb train --trees 3 --trees-count 50 --layers 2 --epochs 2 --threads 2
      [ $rc = 1 ] || fail "train under ulimit $opt $kb: exit $rc, expected 1 (137: hung): $(tail -c 300 "$tmp/err")"
      grep -q "lg_trainer_init: the $name of [0-9]* MiB, [0-9]* MiB of it in use, leaves too little for OpenBLAS" "$tmp/err" ||
        fail "ulimit $opt message: $(cat "$tmp/err")"
      advised=$(sed -n 's/.*raise the limit to \([0-9]*\) MiB or more.*/\1/p' "$tmp/err")
      [ -n "$advised" ] || { fail "ulimit $opt: no limit advised: $(cat "$tmp/err")"; continue; }
      limited $opt $((advised * 1024)) train --trees 3 --trees-count 50 --layers 2 --epochs 2 --threads 2 --json
      [ $rc = 0 ] || fail "train under the advised ulimit $opt of $advised MiB: exit $rc (137: hung): $(tail -c 300 "$tmp/err")"
      grep -q '"test_acc":' "$tmp/out" || fail "train under ulimit $opt $advised MiB: no results"
      echo "ulimit $opt: $kb KB refused with a message, the advised $advised MiB trains"
    done
  fi
  ;;
checkpoint_v0)
  # checkpoints of lipgnn's first format (before the baselines' and the
  # mini-batch fields; trained on --trees 2 --trees-count 4) stay readable
  for m in gat gt classic; do
    run predict --trees 2 --trees-count 4 --resume "$dir/data/ckpt-v0/$m.ckpt" --out "$tmp/p_$m.csv"
    expect_rc 0 "predict with a first-format $m checkpoint"
    [ "$(wc -l <"$tmp/p_$m.csv")" = 29 ] || fail "$m: $(wc -l <"$tmp/p_$m.csv") lines of predictions, expected 29"
    awk -F, 'NR > 1 { # p_0..p_{C-1}, then label and split
      s = 0; for (k = 3; k <= NF - 2; k++) s += $k; if (s < 0.999 || s > 1.001) bad = 1 } END { exit bad }' \
      "$tmp/p_$m.csv" || fail "$m: probabilities do not sum to 1"
  done
  # the same file cut inside its model section is refused, not misread
  head -c 60 "$dir/data/ckpt-v0/gat.ckpt" >"$tmp/cut.ckpt"
  run predict --trees 2 --trees-count 4 --resume "$tmp/cut.ckpt" --out "$tmp/p.csv"; expect_rc 2 "a cut checkpoint"
  ;;
data_source)
  # a checkpoint records its run's data options: predict, train --resume and lipschitz given none
  # use them, say so, and give what the explicit option gives; one given that differs is used, with
  # a note naming both; a checkpoint written before they were recorded needs one, and the error says so
  mkdir -p "$tmp/d/tiny" "$tmp/elsewhere"; cp "$dir/data/tiny"/* "$tmp/d/tiny/"
  abs=$(cd -P "$tmp/d/tiny" && pwd -P)
  (cd "$tmp/d" && "$bin" train --data tiny --layers 2 --hidden 4 --epochs 3 --save "$tmp/a.ckpt" >/dev/null 2>&1) ||
    fail "train --data tiny (a relative path)"
  grep -aq "lipgnn data options 1" "$tmp/a.ckpt" || fail "the checkpoint holds no data options"
  # (from another directory: --data by the absolute path it had)
  (cd "$tmp/elsewhere" && run predict --resume "$tmp/a.ckpt" --out "$tmp/p1.csv"); expect_rc 0 "predict, the checkpoint's data"
  grep -qx "lipgnn predict: data: --data $abs (from the checkpoint, where it was given as tiny)" "$tmp/err" ||
    fail "predict, the checkpoint's data: $(cat "$tmp/err")"
  run predict --resume "$tmp/a.ckpt" --data "$tmp/d/tiny" --out "$tmp/p2.csv"; expect_rc 0 "predict --data, as recorded"
  cmp -s "$tmp/p1.csv" "$tmp/p2.csv" || fail "predict without a data option predicts otherwise than with --data"
  grep -q "data:\|note:" "$tmp/err" && fail "predict --data, the recorded directory: $(cat "$tmp/err")"
  [ "$(sed 1d "$tmp/p1.csv" | wc -l)" = 6 ] || fail "predict, the checkpoint's data: $(cat "$tmp/p1.csv")"
  # --dataset NAME naming the recorded directory is that directory: no note, either way round
  LIPGNN_DATA="$tmp/d" run predict --resume "$tmp/a.ckpt" --dataset tiny --out "$tmp/p2.csv"; expect_rc 0 "predict --dataset, as recorded"
  grep -q "note:" "$tmp/err" && fail "predict --dataset naming the recorded directory: $(cat "$tmp/err")"
  LIPGNN_DATA="$tmp/d" run train --dataset tiny --layers 2 --hidden 4 --epochs 1 --save "$tmp/ds.ckpt"; expect_rc 0 "train --dataset"
  LIPGNN_DATA="$tmp/d" run predict --resume "$tmp/ds.ckpt" --data "$tmp/d/tiny" --out "$tmp/p2.csv" ; expect_rc 0 "predict --data, the recorded --dataset"
  grep -q "note:" "$tmp/err" && fail "predict --data naming the recorded --dataset's directory: $(cat "$tmp/err")"
  LIPGNN_DATA="$tmp/d" run predict --resume "$tmp/ds.ckpt" --out "$tmp/p2.csv"; expect_rc 0 "predict, the recorded --dataset"
  grep -qx "lipgnn predict: data: --dataset tiny (from the checkpoint)" "$tmp/err" || fail "predict, the recorded --dataset: $(cat "$tmp/err")"
  # the directory moved: the recorded one is gone (the loader's error); the one given is used, with a note
  mv "$tmp/d/tiny" "$tmp/d/moved"
  run predict --resume "$tmp/a.ckpt" --out "$tmp/p3.csv"; expect_rc 2 "predict, the recorded directory gone"
  grep -q "^lipgnn predict: data: --data $abs (from the checkpoint" "$tmp/err" && grep -q "$abs" <(sed 1d "$tmp/err") ||
    fail "predict, the recorded directory gone: $(cat "$tmp/err")"
  grep -qx "lipgnn predict: note: those are the data options $tmp/a.ckpt records; a data option given (--data DIR, --dataset NAME, --trees DEPTH or --sbm N\[,M\]) is used instead" \
    "$tmp/err" || fail "predict, the recorded directory gone: no hint: $(cat "$tmp/err")"
  run predict --resume "$tmp/a.ckpt" --data "$tmp/d/moved" --out "$tmp/p3.csv"; expect_rc 0 "predict --data, moved"
  grep -qx "lipgnn predict: note: using --data $tmp/d/moved as given; $tmp/a.ckpt records that it was trained on --data $abs" \
    "$tmp/err" || fail "predict --data, moved: no note naming both: $(cat "$tmp/err")"
  cmp -s "$tmp/p1.csv" "$tmp/p3.csv" || fail "predict --data, moved: other predictions"
  # TREES: the count and the seed recorded; predict and train --resume (the TREES setting with it)
  run train --trees 2 --trees-count 30 --seed 5 --epochs 2 --save "$tmp/t.ckpt"; expect_rc 0 "train --trees --seed 5"
  run predict --resume "$tmp/t.ckpt" --json; expect_rc 0 "predict, the checkpoint's TREES"
  grep -qx "lipgnn predict: data: --trees 2 --trees-count 30 --seed 5 (from the checkpoint)" "$tmp/err" ||
    fail "predict, the checkpoint's TREES: $(cat "$tmp/err")"
  cp "$tmp/out" "$tmp/t1.json"
  run predict --resume "$tmp/t.ckpt" --trees 2 --trees-count 30 --json; expect_rc 0 "predict --trees, as recorded"
  cmp -s "$tmp/out" "$tmp/t1.json" || fail "predict --trees: $(cat "$tmp/out") against $(cat "$tmp/t1.json")"
  grep -q "note:" "$tmp/err" && fail "predict --trees as recorded: a note: $(cat "$tmp/err")"
  run predict --resume "$tmp/t.ckpt" --trees 2 --trees-count 40; expect_rc 2 "predict, another --trees-count"
  grep -qx "lipgnn predict: note: using --trees 2 --trees-count 40 as given, with the checkpoint's --seed 5; $tmp/t.ckpt records that it was trained on --trees 2 --trees-count 30 --seed 5" \
    "$tmp/err" || fail "predict, another --trees-count: no note naming both: $(cat "$tmp/err")"
  grep -q "checkpoint of another data set" "$tmp/err" || fail "predict, another --trees-count: $(cat "$tmp/err")"
  strip() { sed -E 's/"(epoch_ms_median|epochs_total_s)":[0-9.e+-]+//g' "$1"; }
  run train --resume "$tmp/t.ckpt" --epochs 4 --json; expect_rc 0 "train --resume, the checkpoint's TREES"
  grep -qx "lipgnn train: data: --trees 2 --trees-count 30 --seed 5 (from the checkpoint)" "$tmp/err" ||
    fail "train --resume, the checkpoint's TREES: $(cat "$tmp/err")"
  tail -1 "$tmp/out" >"$tmp/r1.json"
  grep -q '"layers":3,"hidden":32,.*"seed":5,"batch_size":1024' "$tmp/r1.json" || fail "train --resume: not the TREES setting: $(cat "$tmp/r1.json")"
  run train --resume "$tmp/t.ckpt" --epochs 4 --trees 2 --trees-count 30 --seed 5 --json; expect_rc 0 "train --resume --trees"
  tail -1 "$tmp/out" >"$tmp/r2.json"
  [ "$(strip "$tmp/r1.json")" = "$(strip "$tmp/r2.json")" ] || fail "train --resume without a data option trains otherwise"
  run train --resume "$tmp/t.ckpt" --epochs 3 --quiet; expect_rc 0 "train --resume --quiet"
  grep -q "data:" "$tmp/err" && fail "train --resume --quiet: $(cat "$tmp/err")"
  # given --trees without --seed: the checkpoint's seed, as without a data option (it was 0, and the
  # run refused as of another seed)
  run train --resume "$tmp/t.ckpt" --epochs 4 --trees 2 --trees-count 30 --json; expect_rc 0 "train --resume --trees, no --seed"
  grep -q "note:" "$tmp/err" && fail "train --resume --trees, no --seed: a note: $(cat "$tmp/err")"
  tail -1 "$tmp/out" >"$tmp/r3.json"
  [ "$(strip "$tmp/r1.json")" = "$(strip "$tmp/r3.json")" ] || fail "train --resume --trees without --seed trains otherwise"
  # ... and the note on another data set says the seed is the checkpoint's (it read "--seed 5 as given")
  run train --resume "$tmp/t.ckpt" --epochs 4 --trees 2 --trees-count 40; expect_rc 2 "train --resume, another --trees-count"
  grep -qx "lipgnn train: note: using --trees 2 --trees-count 40 as given, with the checkpoint's --seed 5; $tmp/t.ckpt records that it was trained on --trees 2 --trees-count 30 --seed 5" \
    "$tmp/err" || fail "train --resume, another --trees-count: $(cat "$tmp/err")"
  # given --trees and another --seed: the note, then the seed named as what differs
  run train --resume "$tmp/t.ckpt" --epochs 3 --trees 2 --trees-count 30 --seed 0; expect_rc 2 "train --resume, seed 0"
  grep -q "note: using --trees 2 --trees-count 30 --seed 0 as given; .* --seed 5$" "$tmp/err" &&
    grep -q "checkpoint made with --seed 5" "$tmp/err" || fail "train --resume, seed 0: $(cat "$tmp/err")"
  # no data option but --seed: the seed given is said as such, with the recorded one (it read "(from the
  # checkpoint)" for a seed it did not hold)
  run predict --resume "$tmp/t.ckpt" --seed 4; expect_rc 2 "predict, the checkpoint's TREES, --seed 4"
  grep -qx "lipgnn predict: data: --trees 2 --trees-count 30 --seed 4 (from the checkpoint; --seed 4 as given, where it records --seed 5)" \
    "$tmp/err" || fail "predict --seed 4: $(cat "$tmp/err")"
  # data options too long to record ('%' is written escaped, 3 bytes): said, with --quiet too, and
  # predict's error allows for it (it said the checkpoint predated the record)
  long=$tmp; for k in $(seq 1 14); do long=$long/$(printf '%%%.0s' $(seq 1 250)); done
  mkdir -p "$long" && cp "$dir/data/tiny/"* "$long/"
  run train --data "$long" --layers 2 --epochs 1 --save "$tmp/long.ckpt" --quiet; expect_rc 0 "train, data options too long"
  grep -q "note: the data options are too long to be recorded in the checkpoint: predict and train --resume will need them given" \
    "$tmp/err" || fail "data options too long, --quiet: $(head -c 300 "$tmp/err")"
  run predict --resume "$tmp/long.ckpt"; expect_rc 2 "predict, data options too long to have been recorded"
  grep -q "has no record of the data it was trained on: it predates that record, or its options were too long to record" \
    "$tmp/err" || fail "predict, unrecorded data options: $(head -c 300 "$tmp/err")"
  # a path with a space, a quote and a newline: one shell word on one line in the messages
  odd="$tmp/a b'c
d"
  mkdir -p "$odd" && cp "$dir/data/tiny/"* "$odd/"
  run train --data "$odd" --layers 2 --epochs 1 --save "$tmp/odd.ckpt" --quiet; expect_rc 0 "train, an odd path"
  run predict --resume "$tmp/odd.ckpt"; expect_rc 0 "predict, an odd recorded path"
  grep -qxF "lipgnn predict: data: --data '$tmp/a b'\\''c?d' (from the checkpoint)" "$tmp/err" \
    || fail "an odd path: $(cat -A "$tmp/err" | head -3)"
  # lipschitz, on a full-batch model
  run train --sbm 200 --layers 2 --hidden 4 --epochs 1 --save "$tmp/s.ckpt"; expect_rc 0 "train --sbm 200"
  run lipschitz --model "$tmp/s.ckpt" --iters 2 --starts 0 --json; expect_rc 0 "lipschitz, the checkpoint's data"
  grep -qx "lipgnn lipschitz: data: --sbm 200,800 --seed 0 (from the checkpoint)" "$tmp/err" ||
    fail "lipschitz, the checkpoint's data: $(cat "$tmp/err")"
  # checkpoints from before the record (the first format; and the last without it): a data option
  # is needed, and the error says why; with one they load as before
  for ck in "$dir/data/ckpt-v0/gat.ckpt" "$dir/data/ckpt-nodata/tiny.ckpt"; do
    for c in predict "train --epochs 5"; do
      # shellcheck disable=SC2086
      run $c --resume "$ck"; expect_rc 2 "$c, $(basename "$ck") without a data option"
      grep -q "no data set: give --data DIR, --dataset NAME, --trees DEPTH or --sbm N\[,M\] ($ck has no record of the data it was trained on: it predates that record, or its options were too long to record)" \
        "$tmp/err" || fail "$c, $(basename "$ck"): $(cat "$tmp/err")"
    done
  done
  run predict --resume "$dir/data/ckpt-nodata/tiny.ckpt" --data "$dir/data/tiny"; expect_rc 0 "predict an older checkpoint --data"
  grep -q "^lipgnn predict: tiny after 3 epochs" "$tmp/err" || fail "predict an older checkpoint: $(cat "$tmp/err")"
  grep -q "note:" "$tmp/err" && fail "predict an older checkpoint: a note: $(cat "$tmp/err")"
  run train --resume "$dir/data/ckpt-nodata/tiny.ckpt" --data "$dir/data/tiny" --layers 2 --hidden 4 --epochs 4
  expect_rc 0 "train --resume an older checkpoint --data"
  # a checkpoint that cannot be read: its own error, not "no data set"
  run predict --resume "$tmp/none.ckpt"; expect_rc 2 "predict, no checkpoint"
  grep -q "none.ckpt: cannot open" "$tmp/err" || fail "predict, no checkpoint: $(cat "$tmp/err")"
  ;;
demo)
  run demo --help; expect_rc 0 "demo --help"
  run demo --trees 2 --trees-count 40 --layers 3 --epochs 4
  expect_rc 0 demo
  grep -q "^none " "$tmp/out" && grep -q "^lipschitz " "$tmp/out" || fail "demo table: $(cat "$tmp/out")"
  grep -q "With LipschitzNorm: training accuracy" "$tmp/out" || fail "demo on TREES: $(cat "$tmp/out")"
  # the default problem (a stochastic block model), made small
  run demo --sbm 400,1200 --layers 2 --epochs 3
  expect_rc 0 "demo --sbm"
  grep -q "sbm-400-1200 (400 nodes, 8 classes), 2-layer GAT" "$tmp/out" || fail "demo --sbm: $(cat "$tmp/out")"
  grep -q "With LipschitzNorm: test accuracy" "$tmp/out" || fail "demo --sbm: $(cat "$tmp/out")"
  # one file a run for --log, --grad-log and --save (the second run overwrote the first's); a node norm
  # stays in both runs and labels their rows; a model without attention or --resume refused before training
  run demo --sbm 400,1200 --layers 2 --epochs 2 --norm pairnorm --log "$tmp/dl.csv" --grad-log "$tmp/dg" \
      --save "$tmp/dm.ckpt"
  expect_rc 0 "demo with outputs"
  for f in dl-none.csv dl-lipschitz.csv dg-none dg-lipschitz dm-none.ckpt dm-lipschitz.ckpt; do
    [ -s "$tmp/$f" ] || fail "demo: no $f"
  done
  [ -e "$tmp/dl.csv" ] && fail "demo: --log wrote the path as given"
  cmp -s "$tmp/dl-none.csv" "$tmp/dl-lipschitz.csv" && fail "demo: the two runs' logs are the same"
  grep -q "^pairnorm " "$tmp/out" && grep -q "^lipschitz+pairnorm " "$tmp/out" || fail "demo --norm pairnorm rows: $(cat "$tmp/out")"
  run predict --resume "$tmp/dm-lipschitz.ckpt" --sbm 400,1200 --json; expect_rc 0 "predict the demo's second model"
  OPENBLAS_CORETYPE=Prescott "$bin" demo --sbm 400,1200 --layers 2 --epochs 1 --json >"$tmp/out" 2>"$tmp/err"
  best=$(env -u OPENBLAS_CORETYPE "$bin" --version 2>/dev/null | sed -n 's/.*best for this CPU: \([A-Za-z0-9]*\);.*/\1/p')
  if [ -n "$best" ] && [ "$best" != Prescott ] && [ "$best" != unknown ]; then
    grep -q "^note: OPENBLAS_CORETYPE=Prescott" "$tmp/err" || fail "demo --json: no core-type note on stderr: $(cat "$tmp/err")"
  fi
  # --json: one object a run, none's first
  [ "$(wc -l <"$tmp/out")" = 2 ] && [ "$(grep -c '^{.*}$' "$tmp/out")" = 2 ] || fail "demo --json: not two objects: $(cat "$tmp/out")"
  head -1 "$tmp/out" | grep -q '"norm":"none",' && tail -1 "$tmp/out" | grep -q '"norm":"lipschitz",' ||
    fail "demo --json: not none, then lipschitz: $(grep -o '"norm":"[^"]*"' "$tmp/out")"
  # a model without an attention LipschitzNorm normalises: refused, naming the
  # model, not the demo's own --norm lipschitz (it did)
  for m in gcn l2 cosine; do
    run demo --sbm 400,1200 --model $m --epochs 2; expect_rc 2 "demo --model $m"
    grep -q "^lipgnn demo: --model $m: the demo trains a model without and with LipschitzNorm, which needs an attention it normalises (--model gat, gt or gat-classic)$" "$tmp/err" ||
      fail "demo --model $m: $(cat "$tmp/err")"
    grep -q "epoch" "$tmp/out" && fail "demo --model $m trained first: $(cat "$tmp/out")"
  done
  # --resume refused before the checkpoint is read (it said first which data the checkpoint records)
  run demo --sbm 400,1200 --resume "$tmp/dm-none.ckpt"; expect_rc 2 "demo --resume"
  [ "$(cat "$tmp/err")" = "lipgnn demo: --resume: the demo trains two models from their start (use lipgnn train --resume)" ] ||
    fail "demo --resume: $(cat "$tmp/err")"
  # gat-classic, which the help names, on its 2 layers (the demo's --layers 12 refused it)
  run demo --sbm 400,1200 --model gat-classic --epochs 1; expect_rc 0 "demo --model gat-classic"
  grep -q "2-layer GAT" "$tmp/out" || fail "demo --model gat-classic: $(head -1 "$tmp/out")"
  run demo --sbm 400,1200 --model gt --layers 2 --epochs 1; expect_rc 0 "demo --model gt"
  grep -q "2-layer graph transformer" "$tmp/out" || fail "demo --model gt: $(head -1 "$tmp/out")"
  ;;
outputs)
  # an output that is one of the data set's files (labels.txt, val.txt, ...: given, through a link,
  # or a hard link) is refused before any work, exit 2, and the data set is left as it was
  cp -r "$dir/data/tiny" "$tmp/d"; chmod -R u+w "$tmp/d"
  run train --data "$tmp/d" --epochs 1 --save "$tmp/m.ckpt"; expect_rc 0 "train for the data-file checks"
  (cd "$tmp/d" && md5sum ./*) >"$tmp/sums"
  ln -s d/test.txt "$tmp/sl"; ln "$tmp/d/labels.txt" "$tmp/hl"; ln -s d "$tmp/dl"; ln -s d/labels.txt "$tmp/g-none.csv"
  mkdir "$tmp/study"; ln -s ../d/val.txt "$tmp/study/runs.csv"
  expect_refusals "@OPT@ [^ ]* is the data set's [a-z]*\.[a-z]* (--data [^)]*): writing @OPT@ would destroy the data set" \
    "predict --resume $tmp/m.ckpt --out $tmp/d/labels.txt|--out" \
    "predict --resume $tmp/m.ckpt --embeddings $tmp/sl|--embeddings" \
    "predict --resume $tmp/m.ckpt --out $tmp/hl|--out" \
    "predict --resume $tmp/m.ckpt --out $tmp/dl/edges.txt|--out" \
    "lipschitz --model $tmp/m.ckpt --csv $tmp/d/val.txt|--csv" \
    "train --data $tmp/d --epochs 1 --log $tmp/d/labels.txt|--log" \
    "train --data $tmp/d --epochs 1 --grad-log $tmp/d/train.txt|--grad-log" \
    "train --data $tmp/d --epochs 1 --save $tmp/d/features.mtx|--save" \
    "train --data $tmp/d --epochs 1 --save-best $tmp/d/graph.mtx|--save-best" \
    "train --resume $tmp/m.ckpt --epochs 2 --log $tmp/d/val.txt|--log" \
    "demo --data $tmp/d --epochs 1 --layers 2 --log $tmp/g.csv|--log" \
    "depth-study --data $tmp/d --layers 1 --epochs 1 --seeds 1 --out $tmp/study|--out"
  (cd "$tmp/d" && md5sum -c --quiet "$tmp/sums") || fail "a refused command changed the data set"
  [ -e "$tmp/d/edges.txt" ] && fail "a refused command made edges.txt in the data set"
  # every two outputs of train are distinct: --save and --save-best against each log too
  for pair in "--save --log" "--save --grad-log" "--save-best --log" "--save-best --grad-log" "--log --grad-log"; do
    set -- $pair; rm -f "$tmp/same"
    run train --trees 2 --trees-count 20 --epochs 1 "$1" "$tmp/same" "$2" "$tmp/same"; expect_rc 2 "train $pair one file"
    grep -q -- "and $1 $tmp/same are the same file\|$1 $tmp/same and [^ ]* $tmp/same are the same file" "$tmp/err" ||
      fail "train $pair one file: $(cat "$tmp/err")"
    [ -e "$tmp/same" ] && fail "train $pair one file: written"
  done
  # an output's directory is tried by making a file there before the work (root passes access() on
  # /proc): exit 2, naming the option and the path, with the real reason
  run train --trees 2 --trees-count 20 --epochs 3 --save /proc/x; expect_rc 2 "--save /proc/x"
  grep -q -- "--save /proc/x: cannot create a file in /proc: " "$tmp/err" || fail "--save /proc/x: $(cat "$tmp/err")"
  grep -q "^epochs" "$tmp/out" && fail "--save /proc/x: trained before refusing"
  grep -q "\.tmp\." "$tmp/err" && fail "--save /proc/x: names a temp file: $(cat "$tmp/err")"
  run train --trees 2 --trees-count 20 --epochs 3 --log /proc/x; expect_rc 2 "--log /proc/x"
  grep -q -- "--log /proc/x: cannot create a file in /proc: " "$tmp/err" || fail "--log /proc/x: $(cat "$tmp/err")"
  run train --trees 2 --trees-count 20 --epochs 1 --save "$tmp/m.ckpt/x"; expect_rc 2 "--save under a regular file"
  grep -q -- "--save $tmp/m.ckpt/x: cannot create a file in $tmp/m.ckpt: Not a directory" "$tmp/err" ||
    fail "--save under a regular file: $(cat "$tmp/err")"
  ls -a /proc | grep -q lipgnn-probe && fail "a probe file left in /proc"
  ls -a "$tmp" | grep -q lipgnn-probe && fail "a probe file left in $tmp"
  ;;
messages)
  # an integer too large for the parser is outside the option's range, not "not an integer"
  for e in 99999999999999999999 -99999999999999999999 2147483648; do
    run train --trees 2 --trees-count 20 --epochs "$e"; expect_rc 2 "--epochs $e"
    grep -q -- "--epochs: $e is outside 0\.\.10000000" "$tmp/err" || fail "--epochs $e: $(cat "$tmp/err")"
  done
  run info --trees 2 --seed 99999999999999999999; expect_rc 2 "--seed 2^66"
  grep -q -- "--seed: 99999999999999999999 is outside 0\.\.18446744073709551615" "$tmp/err" || fail "--seed 2^66: $(cat "$tmp/err")"
  # --sbm: the generator's rules at the parse (2 nodes a class; the edges the blocks hold), not its
  # internal name after it; the range said is the true one
  for n in 0 1 8 10 15; do
    run info --sbm "$n"; expect_rc 2 "info --sbm $n"
    grep -q -- "--sbm (nodes): $n is outside 16\.\.2000000000" "$tmp/err" || fail "info --sbm $n: $(cat "$tmp/err")"
  done
  run train --sbm 20 --epochs 1; expect_rc 2 "train --sbm 20"
  grep -q -- "--sbm 20: 80 edges (the default, 4N) are more than 20 nodes in 8 classes can hold (at most 27" "$tmp/err" ||
    fail "train --sbm 20: $(cat "$tmp/err")"
  run info --sbm 20,27; expect_rc 0 "info --sbm 20,27 (the most edges said)"
  run info --sbm 16,10; expect_rc 0 "info --sbm 16,10 (the fewest nodes)"
  # an empty path is refused at the parse, naming the option
  for cmdline in "info --data|--data" "info --dataset|--dataset" "train --trees 2 --log|--log" "train --trees 2 --save|--save" \
                 "train --trees 2 --grad-log|--grad-log" "train --trees 2 --save-best|--save-best" "train --trees 2 --resume|--resume" \
                 "predict --resume|--resume" "predict --resume x --out|--out" "predict --resume x --embeddings|--embeddings" \
                 "lipschitz --model|--model" "lipschitz --model x --csv|--csv" "lipschitz --model x --out|--out" \
                 "gradmap --out x --log|--log" "gradmap --log x --out|--out" "depth-study --trees 2 --out|--out"; do
    IFS='|' read -r c o <<<"$cmdline"
    # shellcheck disable=SC2086
    run $c ""; expect_rc 2 "$c ''"
    grep -q -- "^lipgnn [a-z-]*: $o: an empty \(path\|name\)" "$tmp/err" || fail "$c '': $(cat "$tmp/err")"
    grep -q "lg_\|: : " "$tmp/err" && fail "$c '': $(cat "$tmp/err")"
  done
  # a data option given twice is refused, as two sources are, not the last one kept
  expect_refusals "^lipgnn [a-z-]*: @OPT@ given twice" \
    "info --data A --data B|--data" "info --trees 3 --trees 4|--trees" "info --sbm 400 --sbm=800|--sbm" \
    "info --dataset cora --dataset pubmed|--dataset" "info --trees 2 --trees-count 5 --trees-count 6|--trees-count" \
    "train --trees 2 --seed 1 --seed 2 --epochs 1|--seed" "predict --resume x --trees 2 --trees 3|--trees" \
    "lipschitz --model x --sbm 400 --sbm 400|--sbm" "demo --trees 2 --trees 3|--trees" \
    "depth-study --sbm 400 --sbm 400 --layers 2 --out $tmp/ds|--sbm"
  run demo --trees 2 --trees-count 30 --layers 2 --epochs 1; expect_rc 0 "demo --trees 2 --trees-count 30 (the demo's count replaced)"
  # a full standard output is said with its reason by every command (train --json flushed it before
  # main closed it, and lost the reason)
  for c in "train --trees 2 --trees-count 20 --epochs 1 --quiet --json" "train --trees 2 --trees-count 20 --epochs 1 --quiet" \
           "info --trees 2 --trees-count 20" "info --trees 2 --trees-count 20 --json"; do
    # shellcheck disable=SC2086
    "$bin" $c >/dev/full 2>"$tmp/err"; st=$?
    [ $st = 1 ] || fail "$c >/dev/full: exit $st, expected 1"
    grep -q "standard output: write error: No space left on device$" "$tmp/err" || fail "$c >/dev/full: $(cat "$tmp/err")"
  done
  # --max-memory: a small limit in a unit that does not print it as 0.00; 0 is a size, but not above 0
  run train --trees 2 --trees-count 20 --epochs 1 --max-memory 1K; expect_rc 2 "--max-memory 1K"
  grep -q "needs about [0-9.]* MiB at its peak, more than --max-memory (1.00 KiB)$" "$tmp/err" || fail "--max-memory 1K: $(cat "$tmp/err")"
  for m in 0 0K -1; do
    run train --trees 2 --trees-count 20 --epochs 1 --max-memory "$m"; expect_rc 2 "--max-memory $m"
    grep -q -- "--max-memory: '$m': the size must be above 0" "$tmp/err" || fail "--max-memory $m: $(cat "$tmp/err")"
  done
  ;;
*) echo "unknown case $case_"; exit 1 ;;
esac
[ $fails -eq 0 ] && echo "cli $case_: passed" && exit 0
exit 1
