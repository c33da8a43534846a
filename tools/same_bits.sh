#!/usr/bin/env bash
# Usage: tools/same_bits.sh OLD_LIPGNN NEW_LIPGNN
#
# Checks that two builds of the `lipgnn` CLI train to the same bits: 22 models
# (GAT with 1 to 20 heads and at 8 heads of 64, GT, classic GAT, the baselines,
# PubMed, TREES in batches and as one graph, a small SBM), 12 epochs each, at
# 1 and 2 threads, each saved with --save and the two checkpoints (parameters
# and Adam state) compared byte for byte. The protocol of every "the same
# bits" claim in bench/README.md since stop 31 (20 models until stop 32).
# Needs $LIPGNN_DATA (Cora and PubMed); exit status 1 on any difference or
# failed run, 2 on a usage error.
set -uo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: $0 OLD_LIPGNN NEW_LIPGNN (two executable lipgnn binaries)" >&2
  exit 2
fi
if [ -z "${LIPGNN_DATA:-}" ]; then
  echo "$0: LIPGNN_DATA is unset: it must name the directory holding cora/ and pubmed/" >&2
  exit 2
fi
a=$1 b=$2
# the best core type for this CPU (SkylakeX where it has AVX-512, Haswell where AVX2)
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$(env -u OPENBLAS_CORETYPE "$a" --version 2>/dev/null | sed -n 's/.*best for this CPU: \([A-Za-z0-9]*\);.*/\1/p')}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
models=(
  "--dataset cora --model gat --layers 4 --norm lipschitz"
  "--dataset cora --model gat --layers 3 --norm lipschitz-ref"
  "--dataset cora --model gat --layers 3 --norm pairnorm --heads 2 --hidden 16"
  "--dataset cora --model gat --layers 3 --norm none --heads 2 --hidden 8"
  "--dataset cora --model gat --layers 2 --norm lipschitz --heads 8 --hidden 16"
  "--dataset cora --model gat --layers 2 --norm lipschitz-ref --heads 3 --hidden 8"
  "--dataset cora --model gat --layers 2 --norm lipschitz --heads 20 --hidden 4"
  "--dataset cora --model gat --layers 3 --norm lipschitz --heads 8 --hidden 64"
  "--dataset cora --model gat --layers 2 --norm lipschitz-ref --heads 8 --hidden 64"
  "--dataset cora --model gat-classic"
  "--dataset cora --model gt --layers 3 --norm lipschitz"
  "--dataset cora --model gt --layers 3 --norm lipschitz-ref --heads 2 --hidden 16 --gate"
  "--dataset cora --model gt --layers 3 --norm layernorm --residual"
  "--dataset cora --model gcnii --layers 8"
  "--dataset cora --model l2 --layers 3"
  "--dataset cora --model gcn"
  "--dataset cora --model gin --layers 3"
  "--dataset cora --model cosine --layers 3"
  "--dataset pubmed --model gat --layers 4 --norm lipschitz"
  "--trees 4 --trees-count 200"
  "--trees 4 --trees-count 200 --batch-size 0"
  "--sbm 3000,20000 --model gat --layers 2 --norm lipschitz"
)
bad=0 k=0
for m in "${models[@]}"; do
  k=$((k + 1))
  for t in 1 2; do
    # shellcheck disable=SC2086 # the options are meant to split
    if ! "$a" train $m --epochs 12 --threads "$t" --quiet --save "$dir/a.ckpt" >/dev/null 2>"$dir/a.err" ||
       ! "$b" train $m --epochs 12 --threads "$t" --quiet --save "$dir/b.ckpt" >/dev/null 2>"$dir/b.err"; then
      echo "FAILED to run: $m --threads $t" >&2
      cat "$dir/a.err" "$dir/b.err" >&2
      bad=1
    elif ! cmp -s "$dir/a.ckpt" "$dir/b.ckpt"; then
      echo "DIFFERENT: $m --threads $t"
      bad=1
    fi
  done
done
if [ "$bad" = 0 ]; then echo "same bits: $k models at 1 and 2 threads"; fi
exit "$bad"
