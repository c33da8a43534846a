#!/usr/bin/python3
"""Regenerates the bad-input fixtures of tests/test_dataset.c.

Each case is a copy of tests/data/tiny/ with exactly one defect. The expected
status, file and line of each case live in tests/test_dataset.c (kept there by
hand, so that the test does not trust this script). Run from anywhere:

    /usr/bin/python3 tests/data/bad/make_fixtures.py
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "..", "tiny")
FILES = ["graph.mtx", "features.mtx", "labels.txt", "train.txt", "val.txt", "test.txt"]


def stored(f):
    """The name a fixture file is committed under: features.mtx as
    features-fixture.mtx (tests/CMakeLists.txt restores the name in the build
    tree), so that the project tracks no file named as the shared data sets'."""
    return "features-fixture.mtx" if f == "features.mtx" else f


BASE = {f: open(os.path.join(TINY, stored(f)), "rb").read().decode() for f in FILES}

# tiny's edges as an edges.txt, for the cases on that format
EDGES = "# u v: the edge u -> v, 0-based\n0 1\n1 2\n2 0\n3 4\n4 3\n1 1\n"


def line(text, n, new):
    """text with its line n (1-based) replaced by new (None: deleted)."""
    lines = text.split("\n")
    if new is None:
        del lines[n - 1]
    else:
        lines[n - 1] = new
    return "\n".join(lines)


def G(n, new):
    return {"graph.mtx": line(BASE["graph.mtx"], n, new)}


def F(n, new):
    return {"features.mtx": line(BASE["features.mtx"], n, new)}


def L(n, new):
    return {"labels.txt": line(BASE["labels.txt"], n, new)}


def E(text):
    return {"graph.mtx": None, "edges.txt": text}


def DENSE(body):
    return {"features.mtx": "%%MatrixMarket matrix array real general\n6 2\n" + body}


DENSE_OK = "".join("%d\n" % (r + 1) for r in range(6)) + "".join("-%d\n" % (r + 1) for r in range(6))

# case name -> {file: new content, or None to delete it}
CASES = {
    # missing and unreadable files
    "missing-labels": {"labels.txt": None},
    "missing-graph": {"graph.mtx": None},
    "missing-features": {"features.mtx": None},
    "missing-train": {"train.txt": None},
    "missing-test": {"test.txt": None},
    "labels-is-dir": {"labels.txt": None, "labels.txt/README": "a directory where a file is expected\n"},
    "both-graphs": {"edges.txt": EDGES},
    # empty files
    "empty-graph": {"graph.mtx": ""},
    "empty-features": {"features.mtx": ""},
    "empty-labels": {"labels.txt": ""},
    "empty-labels-comments": {"labels.txt": "# no labels here\n\n"},
    "empty-train": {"train.txt": ""},
    # banners
    "banner-missing": G(1, "MatrixMarket matrix coordinate pattern general"),
    "banner-blank": G(1, ""),
    "banner-object": F(1, "%%MatrixMarket vector coordinate real general"),
    "banner-graph-array": G(1, "%%MatrixMarket matrix array pattern general"),
    "banner-graph-real": G(1, "%%MatrixMarket matrix coordinate real general"),
    "banner-graph-skew": G(1, "%%MatrixMarket matrix coordinate pattern skew-symmetric"),
    "banner-features-pattern": F(1, "%%MatrixMarket matrix coordinate pattern general"),
    "banner-features-complex": F(1, "%%MatrixMarket matrix coordinate complex general"),
    "banner-features-symmetric": F(1, "%%MatrixMarket matrix coordinate real symmetric"),
    "banner-format-unknown": F(1, "%%MatrixMarket matrix sparse real general"),
    "banner-extra": G(1, "%%MatrixMarket matrix coordinate pattern general extra"),
    "banner-short": G(1, "%%MatrixMarket matrix coordinate"),
    # size lines
    "size-missing-number": G(3, "6 6"),
    "size-nonnumeric": G(3, "6 six 7"),
    "size-extra": G(3, "6 6 7 7"),
    "size-absent": {"graph.mtx": "%%MatrixMarket matrix coordinate pattern general\n% no size line\n"},
    "size-negative-rows": G(3, "-6 -6 7"),
    "size-negative-nnz": F(3, "6 4 -7"),
    "size-huge-nodes": G(3, "1000000000000 1000000000000 7"),
    "size-huge-nnz": F(3, "6 1000000000000 1000000000000"),
    "size-huge-dense": {"features.mtx": "%%MatrixMarket matrix array real general\n6 1000000000000\n1\n2\n"},
    "size-overflow": F(3, "6 9223372036854775807 7"),
    "size-64bit": G(3, "99999999999999999999 6 7"),
    "size-not-square": G(3, "6 5 7"),
    "size-zero-features": {"features.mtx": "%%MatrixMarket matrix coordinate real general\n6 0 0\n"},
    "rows-graph-labels": G(3, "5 5 7"),
    "rows-features-labels": F(3, "5 4 7"),
    # entry counts
    "truncated-graph": {"graph.mtx": "\n".join(BASE["graph.mtx"].split("\n")[:8]) + "\n"},
    "truncated-features": {"features.mtx": "\n".join(BASE["features.mtx"].split("\n")[:9]) + "\n"},
    "surplus-graph": {"graph.mtx": BASE["graph.mtx"] + "6 1\n"},
    "surplus-features": {"features.mtx": BASE["features.mtx"] + "6 1 1.0\n"},
    # indices and tokens
    "index-zero-row": G(4, "0 2"),
    "index-zero-col": F(4, "1 0 0.5"),
    "index-beyond-row": G(5, "7 3"),
    "index-beyond-col": F(5, "1 5 -2"),
    "index-negative": G(4, "-1 2"),
    "index-float": G(4, "1.0 2"),
    "index-nonnumeric": G(4, "1 b"),
    "entry-extra-token": G(4, "1 2 3"),
    "entry-short": G(4, "1"),
    "comment-in-entries": G(6, "% a comment among the entries"),
    "graph-symmetric-upper": G(1, "%%MatrixMarket matrix coordinate pattern symmetric"),
    "value-nonnumeric": F(4, "1 3 abc"),
    "value-junk": F(4, "1 3 0.5x"),
    "value-missing": F(4, "1 3"),
    "value-extra-token": F(4, "1 3 0.5 1"),
    "value-nan": F(4, "1 3 nan"),
    "value-inf": F(5, "1 1 -inf"),
    "value-overflow": F(6, "2 2 1e999"),
    "value-float-overflow": F(6, "2 2 3.5e38"),
    "value-not-integer": F(1, "%%MatrixMarket matrix coordinate integer general"),
    "features-duplicate": {"features.mtx": line(BASE["features.mtx"], 3, "6 4 8") + "1 3 9\n"},
    # dense features
    "dense-truncated": DENSE(DENSE_OK.rsplit("\n", 2)[0] + "\n"),
    "dense-surplus": DENSE(DENSE_OK + "7\n"),
    "dense-extra-token": DENSE("1 2\n" + DENSE_OK.split("\n", 1)[1]),
    "dense-nan": DENSE(DENSE_OK.replace("-3\n", "NaN\n")),
    "dense-symmetric": {"features.mtx": "%%MatrixMarket matrix array real symmetric\n6 6\n"},
    # labels
    "labels-below": L(3, "-2"),
    "labels-float": L(4, "1.5"),
    "labels-text": L(2, "abc"),
    "labels-extra": L(6, "1 2"),
    "labels-too-big": L(7, "6"),
    "labels-64bit": L(2, "99999999999999999999999"),
    "labels-nul": L(3, "1\0"),
    # splits
    "split-range": {"train.txt": "0\n6\n"},
    "split-negative": {"test.txt": "-1\n4\n"},
    "split-duplicate": {"train.txt": "0\n1\n0\n"},
    "split-overlap": {"test.txt": "3\n0\n"},
    "split-unlabelled": {"test.txt": "3\n5\n"},
    "split-float": {"val.txt": "# validation\n2.0\n"},
    "split-extra": {"train.txt": "0 1\n"},
    # edges.txt
    "edges-range": E(line(EDGES, 3, "1 6")),
    "edges-negative": E(line(EDGES, 2, "-1 0")),
    "edges-one-token": E(line(EDGES, 4, "2")),
    "edges-extra-token": E(line(EDGES, 4, "2 0 1")),
    "edges-nonnumeric": E(line(EDGES, 5, "3 four")),
}


def main():
    for name in sorted(os.listdir(HERE)):
        path = os.path.join(HERE, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
    for name, changes in CASES.items():
        d = os.path.join(HERE, name)
        os.makedirs(d)
        files = dict(BASE)
        files.update(changes)
        for f, text in files.items():
            if text is None:
                continue
            p = os.path.join(d, stored(f))
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as out:
                out.write(text.encode())
    print("%d fixtures in %s" % (len(CASES), HERE))


if __name__ == "__main__":
    main()
