#!/bin/sh
# Test of tools/planetoid2mtx.py. First a small synthetic input with known
# answers (missing test node, empty label row, repeated pair, self-loop,
# one-way pair). Then converts $LIPGNN_DATA/planetoid-raw (Cora)
# into a temporary directory and compares the result with $LIPGNN_DATA/cora by
# parsed content: graph (size and multiset of undirected edges), features (size
# and every (row, column, value)), labels, and the train/val/test lists in
# order. Then checks that the comparison does fail: it breaks one edge, one
# feature value, one label and one split entry of the converted copy in turn.
# Exit 77 (skipped) when LIPGNN_DATA is unset or /usr/bin/python3 lacks numpy
# or scipy.
#
# Usage: test_planetoid.sh <source dir>   (ctest passes the project root)
set -u
SRC=${1:-$(dirname "$0")/..}
PY=/usr/bin/python3
CONVERTER="$SRC/tools/planetoid2mtx.py"

if [ ! -x "$PY" ] || ! "$PY" -c 'import numpy, scipy.sparse' 2>/dev/null; then
    echo "$PY with numpy and scipy is not available (Debian: python3-numpy python3-scipy): skipping"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lg_planetoid.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

# 1. A small synthetic CiteSeer-like input with known answers: a test node
# missing from tx (zero features, label -1), an all-zero label row, a repeated
# pair, a self-loop and a one-way pair in the adjacency lists.
echo "== synthetic input"
"$PY" - "$TMP/syn" <<'EOF_SYN' || { echo "FAIL: could not write the synthetic input"; exit 1; }
import os, pickle, sys
import numpy as np, scipy.sparse as sp
d = sys.argv[1]
os.makedirs(d)
allx = sp.lil_matrix((510, 3), dtype=np.float32)
allx[0, 1] = 0.5; allx[3, 0] = 2.0; allx[509, 2] = 1.25
ally = np.zeros((510, 2), dtype=np.int32)
ally[np.arange(510), np.arange(510) % 2] = 1
ally[4] = 0                                   # no label
tx = sp.csr_matrix(np.array([[1, 0, 0], [0, 3, 0], [0, 0, 0.125]], dtype=np.float32))
ty = np.array([[0, 1], [1, 0], [0, 1]], dtype=np.int32)
graph = {0: [1, 1, 0], 1: [0], 2: [3], 510: [511], 511: [510]}
parts = {"x": sp.csr_matrix(allx)[:2], "y": ally[:2], "allx": sp.csr_matrix(allx), "ally": ally,
         "tx": tx, "ty": ty, "graph": graph}
for k, v in parts.items():
    with open(os.path.join(d, "ind.syn." + k), "wb") as f:
        pickle.dump(v, f, protocol=2)
with open(os.path.join(d, "ind.syn.test.index"), "w") as f:
    f.write("513\n510\n512\n")                 # 511 is missing
EOF_SYN
"$PY" "$CONVERTER" --name syn --raw "$TMP/syn" --out "$TMP/syn_out" || { echo "FAIL: the converter failed on the synthetic input"; exit 1; }
"$PY" - "$TMP/syn_out" <<'EOF_CHK' || { echo "FAIL: wrong conversion of the synthetic input"; exit 1; }
import sys
d = sys.argv[1]
def body(name):
    with open(d + "/" + name) as f:
        return [l.split() for l in f.read().split("\n") if l and not l.startswith("%")]
g = body("graph.mtx")
assert g[0] == ["514", "514", "3"], g[0]
assert g[1:] == [["2", "1"], ["4", "3"], ["512", "511"]], g[1:]
x = body("features.mtx")
assert x[0] == ["514", "3", "6"], x[0]
got = {(int(i), int(j)): float(v) for i, j, v in x[1:]}
want = {(1, 2): 0.5, (4, 1): 2.0, (510, 3): 1.25, (514, 1): 1.0, (511, 2): 3.0, (513, 3): 0.125}
assert got == want, got
lab = [int(t[0]) for t in body("labels.txt")]
assert len(lab) == 514 and lab[4] == -1 and lab[5] == 1 and lab[511] == -1, lab[:6] + lab[509:]
assert lab[510:] == [0, -1, 1, 1], lab[510:]
assert [t[0] for t in body("train.txt")] == ["0", "1"]
val = [int(t[0]) for t in body("val.txt")]
assert val == list(range(2, 502)), val[:3]
assert [t[0] for t in body("test.txt")] == ["510", "512", "513"]
print("synthetic input converted as expected")
EOF_CHK

# 2. Cora from the shared data.
if [ -z "${LIPGNN_DATA:-}" ]; then
    echo "LIPGNN_DATA is unset: skipping the Cora comparison of the Planetoid converter test (point it at the directory holding cora/ and planetoid-raw/)"
    exit 77
fi
RAW="$LIPGNN_DATA/planetoid-raw"
REF="$LIPGNN_DATA/cora"
for f in "$RAW/ind.cora.graph" "$REF/graph.mtx"; do
    if [ ! -r "$f" ]; then
        echo "LIPGNN_DATA=$LIPGNN_DATA has no $f: skipping"
        exit 77
    fi
done

# The comparison: exit 0 if the two directories hold the same data set.
cat > "$TMP/compare.py" <<'EOF'
import collections
import sys


def mtx(path):
    """(header words, size tuple, list of entry tuples) of a coordinate file."""
    with open(path) as f:
        lines = f.read().split("\n")
    head = lines[0].split()
    body = [l for l in lines[1:] if l.strip() and not l.startswith("%")]
    size = tuple(int(t) for t in body[0].split())
    entries = [l.split() for l in body[1:]]
    if len(entries) != size[2]:
        raise SystemExit("%s: %d entries, header says %d" % (path, len(entries), size[2]))
    return [w.lower() for w in head], size, entries


def graph(d):
    head, size, entries = mtx(d + "/graph.mtx")
    edges = collections.Counter()
    for e in entries:
        i, j = int(e[0]), int(e[1])
        if head[4] == "symmetric":
            i, j = max(i, j), min(i, j)
        edges[(i, j)] += 1
    return head, size[:2], edges


def features(d):
    head, size, entries = mtx(d + "/features.mtx")
    vals = {}
    for e in entries:
        key = (int(e[0]), int(e[1]))
        if key in vals:
            raise SystemExit("%s/features.mtx: entry %s twice" % (d, key))
        vals[key] = float(e[2])
    return head, size[:2], vals


def ids(path):
    with open(path) as f:
        return [int(l) for l in f if l.strip()]


def main(got, ref):
    bad = []
    for what, load in (("graph", graph), ("features", features)):
        (gh, gs, gv), (rh, rs, rv) = load(got), load(ref)
        if gh != rh:
            bad.append("%s: header %s != %s" % (what, " ".join(gh), " ".join(rh)))
        if gs != rs:
            bad.append("%s: size %s != %s" % (what, gs, rs))
        if gv != rv:
            if isinstance(gv, dict) and not isinstance(gv, collections.Counter):
                diff = sorted(k for k in set(gv) | set(rv) if gv.get(k) != rv.get(k))
                bad.append("%s: %d entries differ, first %s: %s vs %s"
                           % (what, len(diff), diff[0], gv.get(diff[0]), rv.get(diff[0])))
            else:
                diff = sorted((gv - rv) + (rv - gv))
                bad.append("%s: %d edges differ, first %s" % (what, len(diff), diff[0]))
    for name in ("labels.txt", "train.txt", "val.txt", "test.txt"):
        g, r = ids(got + "/" + name), ids(ref + "/" + name)
        if g != r:
            k = next((k for k in range(min(len(g), len(r))) if g[k] != r[k]), min(len(g), len(r)))
            bad.append("%s: %d vs %d lines, first difference at line %d" % (name, len(g), len(r), k + 1))
    for b in bad:
        print("DIFFERENT: " + b)
    if not bad:
        print("same content: %s and %s" % (got, ref))
    return 1 if bad else 0


sys.exit(main(sys.argv[1], sys.argv[2]))
EOF

echo "== converting $RAW (cora)"
"$PY" "$CONVERTER" --name cora --raw "$RAW" --out "$TMP/out" || { echo "FAIL: the converter failed"; exit 1; }
echo "== comparing with $REF"
"$PY" "$TMP/compare.py" "$TMP/out" "$REF" || { echo "FAIL: converted Cora differs from $REF"; exit 1; }

# Negative controls: each broken copy must be reported as different.
"$PY" - "$TMP" <<'EOF' || { echo "FAIL: could not make the broken copies"; exit 1; }
import os, shutil, sys
tmp = sys.argv[1]
def copy(name):
    d = os.path.join(tmp, name)
    shutil.copytree(os.path.join(tmp, "out"), d)
    return d
def edit(path, fn):
    with open(path) as f:
        lines = f.read().split("\n")
    fn(lines)
    with open(path, "w") as f:
        f.write("\n".join(lines))
def first_entry(lines):
    return next(k for k in range(len(lines)) if lines[k] and not lines[k].startswith("%")) + 1
def move_edge(lines):  # same count, one edge moved
    k = first_entry(lines) + 10
    i, j = lines[k].split()
    lines[k] = "%s %d" % (i, int(j) + 1 if int(j) + 1 < int(i) else int(j) - 1)
def change_value(lines):
    k = first_entry(lines) + 100
    i, j, v = lines[k].split()
    lines[k] = "%s %s %.8e" % (i, j, float(v) * 2)
def change_label(lines):
    lines[1234] = str((int(lines[1234]) + 1) % 7)
def change_split(lines):
    lines[7] = str(int(lines[7]) + 1)
edit(os.path.join(copy("bad_edge"), "graph.mtx"), move_edge)
edit(os.path.join(copy("bad_feature"), "features.mtx"), change_value)
edit(os.path.join(copy("bad_label"), "labels.txt"), change_label)
edit(os.path.join(copy("bad_split"), "test.txt"), change_split)
EOF
for b in bad_edge bad_feature bad_label bad_split; do
    if "$PY" "$TMP/compare.py" "$TMP/$b" "$REF" >"$TMP/$b.log" 2>&1; then
        echo "FAIL: the comparison did not notice $b"
        exit 1
    fi
    echo "negative control $b: $(head -1 "$TMP/$b.log")"
done
echo "PASS"
exit 0
