#!/bin/sh
# lipgnn against the PyTorch peer: for each model, peer_export writes a small
# tie-free data set, the initial parameters and lipgnn's loss and gradients of
# one step with dropout off; bench/peer_torch.py check recomputes them in
# float64 from the spec and compares. Two negative controls show the check can
# fail: the peer told the wrong norm, and one gradient tensor perturbed by 1%.
# Usage: test_peer.sh PEER_EXPORT SOURCE_DIR
set -u
exp=$1
src=$2
py=/usr/bin/python3
if ! $py -c "import torch, numpy" 2>/dev/null; then
  echo "test_peer: SKIPPED: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
  exit 77
fi
peer="$py $src/bench/peer_torch.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
run() { # name, then peer_export's MODEL NORM LAYERS HIDDEN HEADS
  name=$1; shift
  "$exp" "$tmp/$name" "$@" || { echo "test_peer: peer_export $* failed"; status=1; return; }
  $peer check "$tmp/$name" || { echo "test_peer: FAILED: $name"; status=1; }
}
run gat-lip       gat lipschitz 4 8 2
run gat-none      gat none 3 8 2
run gat-lip-deep  gat lipschitz 12 8 1
run classic-none  gat-classic none 2 4 3
run classic-lip   gat-classic lipschitz 2 4 3
run gt-lip        gt lipschitz 3 8 2
run gt-none       gt none 2 8 2

# negative control 1: the peer believes the norm is none
cp -r "$tmp/gat-lip" "$tmp/neg1"
sed -i 's/"norm":"lipschitz"/"norm":"none"/' "$tmp/neg1/model.json"
$peer check "$tmp/neg1" --expect-fail >/dev/null || { echo "test_peer: FAILED: a wrong norm was not detected"; status=1; }
# negative control 2: the gradient of the output bias (the last 3 values) scaled by 1.01
cp -r "$tmp/gat-lip" "$tmp/neg2"
$py - "$tmp/neg2/grads.bin" <<'PY'
import sys, numpy as np
g = np.fromfile(sys.argv[1], dtype=np.float32); g[-3:] *= 1.01; g.tofile(sys.argv[1])
PY
$peer check "$tmp/neg2" --expect-fail >/dev/null || { echo "test_peer: FAILED: a 1% gradient error was not detected"; status=1; }
[ $status -eq 0 ] && echo "test_peer: all models match; both negative controls detected"
exit $status
