#!/usr/bin/python3
"""Converts a Planetoid data set (Yang et al. 2016) into lipgnn's layout.

Reads the Planetoid files ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}
(Python-2 pickles of scipy sparse matrices, numpy one-hot arrays and a dict of
adjacency lists) the way Kipf & Welling's and PyTorch Geometric's loaders do:

  * node order: the rows of allx, then the test nodes; tx/ty row k belongs to
    node test.index[k] (the test indices are not sorted in the file);
  * test nodes absent from tx (citeseer's isolated nodes), i.e. ids in
    [len(allx), max(test.index)] not listed in test.index, get zero features
    and no label (-1); a row of ally/ty without a one also means no label;
  * edges: every pair of the adjacency lists, self-loops removed, duplicates
    merged (PyG's remove_self_loops + coalesce); the graph is written
    undirected (a one-way pair of the lists is made two-way, with a warning);
  * splits: train = range(len(y)), val = range(len(y), len(y) + 500), test =
    the sorted test indices.

Writes into --out (see the data README):
  graph.mtx     coordinate pattern symmetric, lower triangle, 1-based,
                entries sorted by (row, column)
  features.mtx  coordinate real general, raw values (float32 written with 9
                significant digits), entries sorted by (row, column)
  labels.txt    one class id (or -1) a line
  train.txt, val.txt, test.txt  node ids (0-based), one a line

Needs numpy and scipy (Debian's python3-numpy and python3-scipy); run it with
/usr/bin/python3.
"""
import argparse
import os
import pickle
import sys
import warnings

PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph")
N_VAL = 500


class ConvertError(Exception):
    """A problem with the input files, reported without a traceback."""


def load_parts(raw, name):
    """Returns a dict of the unpickled parts and the test index list."""
    parts = {}
    for part in PARTS:
        path = os.path.join(raw, "ind.%s.%s" % (name, part))
        try:
            with open(path, "rb") as f, warnings.catch_warnings():
                # old pickles name scipy.sparse.csr, which scipy flags as deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                parts[part] = pickle.load(f, encoding="latin1")
        except OSError as e:
            raise ConvertError("cannot read %s: %s" % (path, e.strerror))
        except Exception as e:  # a truncated or foreign pickle
            raise ConvertError("%s is not a Planetoid pickle: %s" % (path, e))
    path = os.path.join(raw, "ind.%s.test.index" % name)
    test_index = []
    try:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    test_index.append(int(line))
                except ValueError:
                    raise ConvertError("%s:%d: not a node id: %r" % (path, lineno, line.strip()))
    except OSError as e:
        raise ConvertError("cannot read %s: %s" % (path, e.strerror))
    return parts, test_index


def convert(parts, test_index, name):
    """Returns (n, edges, features csr, labels, train, val, test)."""
    import numpy as np
    import scipy.sparse as sp

    x, tx, allx = (sp.csr_matrix(parts[p]) for p in ("x", "tx", "allx"))
    y, ty, ally = (np.asarray(parts[p]) for p in ("y", "ty", "ally"))
    graph = parts["graph"]
    if not isinstance(graph, dict):
        raise ConvertError("ind.%s.graph is not a dict of adjacency lists" % name)
    d = allx.shape[1]
    if tx.shape[1] != d or x.shape[1] != d:
        raise ConvertError("feature widths differ: x %d, tx %d, allx %d" % (x.shape[1], tx.shape[1], d))
    if y.ndim != 2 or ty.ndim != 2 or ally.ndim != 2 or not (y.shape[1] == ty.shape[1] == ally.shape[1]):
        raise ConvertError("label arrays are not one-hot matrices of one width")
    if tx.shape[0] != len(test_index) or ty.shape[0] != len(test_index):
        raise ConvertError("tx has %d rows and ty %d, but test.index lists %d nodes"
                           % (tx.shape[0], ty.shape[0], len(test_index)))
    if allx.shape[0] != ally.shape[0]:
        raise ConvertError("allx has %d rows but ally %d" % (allx.shape[0], ally.shape[0]))
    if len(set(test_index)) != len(test_index):
        raise ConvertError("test.index lists a node twice")
    n_all = allx.shape[0]
    if test_index and min(test_index) < n_all:
        raise ConvertError("test index %d falls among the %d allx nodes" % (min(test_index), n_all))
    n = max([n_all + len(test_index)] + [t + 1 for t in test_index])
    if y.shape[0] + N_VAL > n:
        raise ConvertError("%d train + %d val nodes exceed the %d nodes" % (y.shape[0], N_VAL, n))

    # features (float32, as PyG holds them): allx's rows, then row k of tx at
    # node test_index[k]; other nodes (citeseer's missing test nodes) stay zero
    perm = np.asarray(test_index, dtype=np.int64)
    a, t = allx.tocoo(), tx.tocoo()
    rows = np.concatenate([a.row.astype(np.int64), perm[t.row]])
    cols = np.concatenate([a.col.astype(np.int64), t.col.astype(np.int64)])
    vals = np.concatenate([a.data.astype(np.float32), t.data.astype(np.float32)])
    feats = sp.csr_matrix((vals, (rows, cols)), shape=(n, d), dtype=np.float32)
    feats.sum_duplicates()
    feats.eliminate_zeros()
    feats.sort_indices()

    # labels: argmax of the one-hot rows; -1 where a row has no one
    def classes(onehot):
        lab = np.argmax(onehot, axis=1).astype(np.int64)
        lab[onehot.max(axis=1) <= 0] = -1
        return lab
    labels = np.full(n, -1, dtype=np.int64)
    labels[:n_all] = classes(ally)
    labels[perm] = classes(ty)

    # edges: both directions of every listed pair, no self-loops, no repeats
    pairs = set()
    oneway = 0
    directed = set()
    for u, nbrs in graph.items():
        for v in nbrs:
            u, v = int(u), int(v)
            if not (0 <= u < n and 0 <= v < n):
                raise ConvertError("graph: edge %d -> %d has a node id outside [0, %d)" % (u, v, n))
            if u != v:
                directed.add((u, v))
                pairs.add((max(u, v), min(u, v)))
    for (u, v) in directed:
        if (v, u) not in directed:
            oneway += 1
    if oneway:
        print("planetoid2mtx: warning: %d one-way pairs in ind.%s.graph made two-way" % (oneway, name),
              file=sys.stderr)
    edges = sorted(pairs)

    train = list(range(y.shape[0]))
    val = list(range(y.shape[0], y.shape[0] + N_VAL))
    test = sorted(test_index)
    return n, edges, feats, labels, train, val, test


def write_ids(path, ids):
    with open(path, "w") as f:
        f.writelines("%d\n" % int(i) for i in ids)


def write_all(out, name, n, edges, feats, labels, train, val, test):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "graph.mtx"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate pattern symmetric\n")
        f.write("%% %s: undirected citation graph, Planetoid node order\n" % name)
        f.write("%d %d %d\n" % (n, n, len(edges)))
        f.writelines("%d %d\n" % (u + 1, v + 1) for u, v in edges)
    with open(os.path.join(out, "features.mtx"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write("%% %s: node features, Planetoid node order\n" % name)
        f.write("%d %d %d\n" % (feats.shape[0], feats.shape[1], feats.nnz))
        for i in range(feats.shape[0]):
            lo, hi = feats.indptr[i], feats.indptr[i + 1]
            f.writelines("%d %d %.8e\n" % (i + 1, j + 1, float(v))
                         for j, v in zip(feats.indices[lo:hi], feats.data[lo:hi]))
    write_ids(os.path.join(out, "labels.txt"), labels)
    write_ids(os.path.join(out, "train.txt"), train)
    write_ids(os.path.join(out, "val.txt"), val)
    write_ids(os.path.join(out, "test.txt"), test)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="planetoid2mtx.py",
        description="Convert the Planetoid files ind.<name>.* (Cora, CiteSeer, PubMed) into "
                    "lipgnn's data-set layout (graph.mtx, features.mtx, labels.txt, "
                    "train.txt, val.txt, test.txt).")
    ap.add_argument("--name", required=True, help="data set name in the file names: cora, citeseer, pubmed")
    ap.add_argument("--raw", required=True, help="directory holding ind.<name>.x, .y, .tx, ...")
    ap.add_argument("--out", required=True, help="output directory (created if absent)")
    args = ap.parse_args(argv)
    try:
        import numpy  # noqa: F401
        import scipy.sparse  # noqa: F401
    except ImportError as e:
        print("planetoid2mtx: needs numpy and scipy (%s); run it with /usr/bin/python3 "
              "(Debian's python3-numpy, python3-scipy)" % e, file=sys.stderr)
        return 2
    if not os.path.isdir(args.raw):
        print("planetoid2mtx: --raw %s is not a directory" % args.raw, file=sys.stderr)
        return 2
    try:
        parts, test_index = load_parts(args.raw, args.name)
        n, edges, feats, labels, train, val, test = convert(parts, test_index, args.name.lower())
        write_all(args.out, args.name.lower(), n, edges, feats, labels, train, val, test)
    except ConvertError as e:
        print("planetoid2mtx: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("planetoid2mtx: cannot write into %s: %s" % (args.out, e), file=sys.stderr)
        return 1
    print("planetoid2mtx: %s: %d nodes, %d undirected edges, %d features (%d non-zeros), "
          "%d/%d/%d train/val/test -> %s"
          % (args.name, n, len(edges), feats.shape[1], feats.nnz, len(train), len(val), len(test), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
