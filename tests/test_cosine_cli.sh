#!/usr/bin/env bash
# CLI smoke tests of --model cosine: test_cosine_cli.sh LIPGNN_BINARY FIXTURES_PARENT.
# FIXTURES_PARENT: the directory whose data/ holds the fixture data sets (the build's
# tests/, where tests/CMakeLists.txt mirrors tests/data).
# Exit 0 pass, 1 fail.
set -u
bin=$1 dir=$2
. "$(dirname "$0")/testlib.sh"
export OMP_NUM_THREADS=1
tiny=$dir/data/tiny

# help texts name the model
run train --help; expect_rc 0 "train --help"; grep -q "cosine (LipsFormer-style" "$tmp/out" || fail "train --help lacks cosine"
run depth-study --help; expect_rc 0 "depth-study --help"; grep -q "gcnii, l2, cosine" "$tmp/out" || fail "depth-study --help lacks cosine"

# trains, and reports itself
run train --data "$tiny" --model cosine --layers 3 --hidden 8 --heads 2 --epochs 5 --json
expect_rc 0 "train --model cosine"; no_sanitizer "train --model cosine"
grep -q '"model":"cosine"' "$tmp/out" || fail "--model cosine: $(tail -1 "$tmp/out")"
grep -q '"residual":true' "$tmp/out" || fail "--model cosine: residual not reported: $(tail -1 "$tmp/out")"
grep -q '"att_dropout":0,' "$tmp/out" || fail "--model cosine: att_dropout not 0: $(tail -1 "$tmp/out")"

# mini-batches of trees (the batch model: caches sized for the largest batch, smaller ones bound)
run train --trees 3 --trees-count 40 --model cosine --layers 4 --hidden 8 --epochs 3 --batch-size 7 --json
expect_rc 0 "train --model cosine --batch-size 7"; no_sanitizer "cosine in mini-batches"
grep -q '"model":"cosine"' "$tmp/out" || fail "cosine in mini-batches: $(tail -1 "$tmp/out")"

# a checkpoint round trip and the Lipschitz estimator on it (with the cosine block's bound)
run train --trees 3 --trees-count 40 --model cosine --layers 3 --hidden 8 --epochs 3 --batch-size 0 --quiet --save "$tmp/c.ckpt"
expect_rc 0 "train --model cosine --save"
run lipschitz --model "$tmp/c.ckpt" --trees 3 --trees-count 40 --iters 5 --starts 1 --csv "$tmp/lip.csv" --quiet
expect_rc 0 "lipschitz on a cosine model"; no_sanitizer "lipschitz on a cosine model"
grep -q "cosine" "$tmp/lip.csv" || fail "lipschitz CSV does not name the cosine layers: $(head -3 "$tmp/lip.csv")"
grep -q "cosine block" "$tmp/lip.csv" || fail "lipschitz CSV lacks the cosine bound: $(head -3 "$tmp/lip.csv")"

# what it refuses, with status 2 and a message
run train --data "$tiny" --model cosine --norm lipschitz; expect_rc 2 "--model cosine --norm lipschitz"
grep -q "normalises itself" "$tmp/err" || fail "cosine + lipschitz message: $(cat "$tmp/err")"
run train --data "$tiny" --model cosine --norm pairnorm; expect_rc 2 "--model cosine --norm pairnorm"
run train --data "$tiny" --model cosine --att-dropout 0.3; expect_rc 2 "--model cosine --att-dropout 0.3"
grep -q "no attention dropout" "$tmp/err" || fail "cosine + att-dropout message: $(cat "$tmp/err")"

# a depth study with the model (it needs --residual 1)
run depth-study --trees 2 --trees-count 40 --layers 1 --norms none --seeds 1 --epochs 2 --hidden 8 --model cosine \
  --out "$tmp/s0"
expect_rc 2 "depth-study cosine without --residual 1"
run depth-study --trees 2 --trees-count 40 --layers 1,2 --norms none --residual 1 --seeds 1 --epochs 2 --hidden 8 \
  --model gat,cosine --out "$tmp/s1"
expect_rc 0 "depth-study gat,cosine"; no_sanitizer "depth-study gat,cosine"
grep -q "^cosine,2,2,none,1," "$tmp/s1/runs.csv" || fail "depth-study: no cosine row: $(cat "$tmp/s1/runs.csv")"

[ $fails = 0 ] || exit 1
echo "all cosine CLI checks passed"
