#!/usr/bin/python3
"""The PyTorch peer of lipgnn's model benchmarks (issue 8), and its independent check.

The models of attention-spec.md section 6 written in plain PyTorch (Debian's
python3-torch; no PyTorch Geometric): DeepGAT (GAT layers with or without the
paper's LipschitzNorm), the classic 2-layer GAT, DeepGT (graph-transformer
layers with or without the paper's quadratic LipschitzNorm). Message passing is
index_add_ / scatter_reduce over the edge list of the in-neighbour CSR.

  peer_torch.py bench DIR --threads T [--epochs E] [--warmup W] [--infer P]
      DIR holds a data set and model.json written by `bench_models --config NAME
      --dump DIR`. Times training epochs (forward with dropout, NLL over the
      training nodes, backward, Adam lr/weight decay as lipgnn) and inference
      passes, float32, T threads; prints one JSON line.

  peer_torch.py check DIR [--expect-fail]
      DIR written by tests/peer_export: a data set, lipgnn's model settings,
      its initial parameters (flat, lipgnn's layout), and its loss and
      gradients of one full-model step with dropout off. Rebuilds the model
      from the spec (the layout is recomputed here and must have lipgnn's
      length), loads the parameters, computes loss and gradients in float64
      and compares. Exit 0 if they match, 1 if not (with --expect-fail the
      other way round), 77 if torch is missing.

Run it with /usr/bin/python3. Set OPENBLAS_CORETYPE (bench/run_all.py does) so
that torch's OpenBLAS does not run its generic Prescott kernels; the JSON line
reports the core it ran.
"""
import argparse
import ctypes
import json
import math
import os
import resource
import sys
import time
import warnings

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the test skips with this message
    print(f"peer_torch.py: {e}: python3-torch (and python3-numpy) are needed "
          "(apt-get install python3-torch); skipping", file=sys.stderr)
    sys.exit(77)
warnings.filterwarnings("ignore", message="scatter_reduce")


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def load_dump(d, dtype):
    meta = json.load(open(os.path.join(d, "meta.json")))
    model = json.load(open(os.path.join(d, "model.json")))
    rd = lambda f, t: np.fromfile(os.path.join(d, f), dtype=t)
    n, fd = meta["nodes"], meta["features"]
    gp, gj = rd("graph_p.bin", np.int64), rd("graph_j.bin", np.int64)
    fx = rd("feat_x.bin", np.float32)
    if meta["feature_kind"] == "sparse":
        fp, fj = rd("feat_p.bin", np.int64), rd("feat_j.bin", np.int64)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(fp))
        x = ("sparse", rows, fj, fx)
    else:
        x = ("dense", fx.reshape(n, fd))
    return dict(meta=meta, model=model, n=n, d=fd, gp=gp, gj=gj, x=x,
                labels=torch.from_numpy(rd("labels.bin", np.int32).astype(np.int64)),
                train=torch.from_numpy(rd("train.bin", np.int64)), dtype=dtype)


def edges(gp, gj, n, self_loops):
    """Edge list (dst, src) of the in-neighbour CSR; with self_loops, i -> i
    added where missing (existing ones not duplicated), rows sorted by src."""
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(gp))
    src = gj.copy()
    if self_loops:
        keep = dst != src
        dst, src = dst[keep], src[keep]
        dst = np.concatenate([dst, np.arange(n, dtype=np.int64)])
        src = np.concatenate([src, np.arange(n, dtype=np.int64)])
        order = np.lexsort((src, dst))
        dst, src = dst[order], src[order]
    return torch.from_numpy(dst), torch.from_numpy(src)


def features(data, row_norm, dense):
    """The model's input: a sparse COO tensor, or dense (gat-classic), rows
    scaled to sum 1 if row_norm (rows summing to 0 stay)."""
    n, d, dt = data["n"], data["d"], data["dtype"]
    if data["x"][0] == "sparse":
        _, rows, cols, vals = data["x"]
        vals = vals.astype(np.float64)
        if row_norm:
            s = np.bincount(rows, weights=vals, minlength=n)
            s[s == 0] = 1
            vals = vals / s[rows]
        idx = torch.from_numpy(np.stack([rows, cols]))
        v = torch.from_numpy(vals).to(dt)
        if dense:
            x = torch.zeros(n, d, dtype=dt)
            x[idx[0], idx[1]] = v
            return x
        return torch.sparse_coo_tensor(idx, v, (n, d)).coalesce()
    x = torch.from_numpy(data["x"][1].astype(np.float64))
    if row_norm:
        s = x.sum(1, keepdim=True)
        s[s == 0] = 1
        x = x / s
    x = x.to(dt)
    return x if dense else x.to_sparse().coalesce()


# --------------------------------------------------------------------------
# Models (attention-spec.md)
# --------------------------------------------------------------------------

def seg_max(v, dst, n):
    """max over the in-edges of each node of per-edge values v (E x K)."""
    out = torch.zeros((n,) + v.shape[1:], dtype=v.dtype)
    return out.scatter_reduce(0, dst.view(-1, *([1] * (v.dim() - 1))).expand_as(v), v, "amax", include_self=False)


def seg_softmax(e, dst, n):
    """softmax of e (E x K) over the in-edges of each node."""
    m = seg_max(e.detach(), dst, n)
    w = torch.exp(e - m.index_select(0, dst))
    s = torch.zeros((n,) + e.shape[1:], dtype=e.dtype).index_add_(0, dst, w)
    return w / s.index_select(0, dst)


def gat_layer(h, p, g, K, C, concat, lip, att_p, training):
    """GAT (section 1) with the paper's LipschitzNorm (section 2) when lip."""
    dst, src, n = g
    x = (h @ p["W"]).view(-1, K, C)
    a_dst, a_src = p["a_dst"].view(K, C), p["a_src"].view(K, C)
    s = (x * a_dst).sum(-1).index_select(0, dst) + (x * a_src).sum(-1).index_select(0, src)  # E x K
    if lip:
        nx2 = (x * x).sum(-1)                                           # n x K
        anorm = torch.sqrt((a_dst * a_dst).sum(-1) + (a_src * a_src).sum(-1))
        c = anorm * torch.sqrt(nx2 + seg_max(nx2.index_select(0, src), dst, n) + 1e-12)
        s = s / c.index_select(0, dst)
    att = seg_softmax(F.leaky_relu(s, 0.2), dst, n)
    if training and att_p > 0:
        att = F.dropout(att, att_p)
    out = torch.zeros(n, K, C, dtype=h.dtype).index_add_(0, dst, att.unsqueeze(-1) * x.index_select(0, src))
    out = out.reshape(n, K * C) if concat else out.mean(1)
    return out + p["bias"]


def gt_layer(h, p, g, K, C, lip, att_p, training):
    """Graph transformer (section 3) with the paper's quadratic LipschitzNorm
    (section 4) when lip. Concatenated heads, skip term, no gate."""
    dst, src, n = g
    KC = K * C
    z = h @ p["W"] + p["b"]
    q, k, v, r = z[:, :KC].view(-1, K, C), z[:, KC:2 * KC].view(-1, K, C), z[:, 2 * KC:3 * KC].view(-1, K, C), z[:, 3 * KC:]
    s = (q.index_select(0, dst) * k.index_select(0, src)).sum(-1)
    if lip:
        nq = q.norm(dim=-1)
        nk = seg_max(k.norm(dim=-1).index_select(0, src), dst, n)
        nv = seg_max(v.norm(dim=-1).index_select(0, src), dst, n)
        den = torch.maximum(torch.maximum(nq * nk, nq * nv), nk * nv) + 1e-12
        s = s / den.index_select(0, dst)
    else:
        s = s / math.sqrt(C)
    att = seg_softmax(s, dst, n)
    if training and att_p > 0:
        att = F.dropout(att, att_p)
    m = torch.zeros(n, K, C, dtype=h.dtype).index_add_(0, dst, att.unsqueeze(-1) * v.index_select(0, src))
    return r + m.reshape(n, KC)


class Model:
    """DeepGAT, gat-classic or DeepGT; parameters in lipgnn's layout order
    (src/train/model.h): [W_in F x H | b_in H], per layer its block, then
    [W_out D x classes | b_out classes]; a GAT block is [W F x KC | a_dst KC |
    a_src KC | bias D], a GT block [W F x (3KC + D) | bq | bk | bv | bskip]."""

    def __init__(self, cfg, F_in, classes):
        self.cfg = cfg
        kind, L, H, K = cfg["model"], cfg["layers"], cfg["hidden"], cfg["heads"]
        self.kind, self.L, self.K, self.H = kind, L, K, H
        self.lip = cfg["norm"] == "lipschitz"
        if cfg["norm"] not in ("none", "lipschitz"):
            raise SystemExit(f"peer_torch.py: norm {cfg['norm']} is not implemented in the peer")
        self.shapes = []  # (name, shape) in layout order
        classic = kind == "gat-classic"
        w = F_in
        if not classic:
            self.shapes += [("W_in", (F_in, H)), ("b_in", (H,))]
            w = H
        self.layers = []
        for l in range(L):
            last = l == L - 1
            if kind == "gt":
                KC = K * H
                self.shapes += [(f"{l}.W", (w, 3 * KC + KC)), (f"{l}.b", (3 * KC + KC,))]
                self.layers.append(("gt", K, H, True))
                w = KC
            else:
                k, c, concat = (1, classes, False) if classic and last else (K, H, True)
                self.shapes += [(f"{l}.W", (w, k * c)), (f"{l}.a_dst", (k * c,)), (f"{l}.a_src", (k * c,)),
                                (f"{l}.bias", (k * c if concat else c,))]
                self.layers.append(("gat", k, c, concat))
                w = k * c if concat else c
        if not classic:
            self.shapes += [("W_out", (w, classes)), ("b_out", (classes,))]
        self.count = sum(math.prod(s) for _, s in self.shapes)

    def views(self, flat):
        out, off = {}, 0
        for name, shape in self.shapes:
            size = math.prod(shape)
            out[name] = flat[off:off + size].view(shape)
            off += size
        return out

    def init(self, dtype, gen):
        """Glorot-uniform weights and attention vectors, zero biases (spec 6)."""
        p = {}
        for name, shape in self.shapes:
            if len(shape) == 2 or name.endswith("a_dst") or name.endswith("a_src"):
                fi, fo = shape if len(shape) == 2 else (self.K, shape[0] // self.K)
                b = math.sqrt(6.0 / (fi + fo))
                t = (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * b
            else:
                t = torch.zeros(shape, dtype=torch.float64)
            p[name] = t.to(dtype).requires_grad_(True)
        return p

    def forward(self, p, x, g, training, rows=None):
        """Log-probabilities of every node, or of the nodes rows only (as
        lipgnn's training step: the output layer and the log-softmax on those
        rows alone)."""
        cfg = self.cfg
        drop, att_p = cfg["dropout"], cfg["att_dropout"]
        if self.kind == "gat-classic":
            h = x
        elif x.is_sparse:
            h = torch.sparse.mm(x, p["W_in"]) + p["b_in"]
        else:
            h = x @ p["W_in"] + p["b_in"]
        for l, (typ, k, c, concat) in enumerate(self.layers):
            hd = F.dropout(h, drop) if training and drop > 0 else h
            lp = {nm.split(".", 1)[1]: t for nm, t in p.items() if nm.startswith(f"{l}.")}
            if typ == "gt":
                h = gt_layer(hd, lp, g, k, c, self.lip, att_p, training)
            else:
                h = gat_layer(hd, lp, g, k, c, concat, self.lip, att_p, training)
            if l < self.L - 1:
                h = F.elu(h)
        if rows is not None:
            h = h[rows]
        if self.kind != "gat-classic":
            h = h @ p["W_out"] + p["b_out"]
        return F.log_softmax(h, dim=1)


def build(data):
    cfg = data["model"]
    classic = cfg["model"] == "gat-classic"
    x = features(data, cfg["feature_norm_row"], dense=classic)
    dst, src = edges(data["gp"], data["gj"], data["n"], cfg["self_loops"])
    return Model(cfg, data["d"], data["meta"]["classes"]), x, (dst, src, data["n"])


# --------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------

def blas_core():
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode(), lib.openblas_get_num_threads()
    except OSError:
        return "?", -1


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cmd_bench(a):
    torch.set_num_threads(a.threads)
    data = load_dump(a.dir, torch.float32)
    model, x, g = build(data)
    gen = torch.Generator().manual_seed(a.seed)
    torch.manual_seed(a.seed)
    p = model.init(torch.float32, gen)
    cfg = data["model"]
    opt = torch.optim.Adam(list(p.values()), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    labels, train = data["labels"], data["train"]
    rss_before = peak_rss()
    ep, epc, losses = [], [], []
    for e in range(a.warmup + a.epochs):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        out = model.forward(p, x, g, True, rows=train)
        loss = F.nll_loss(out, labels[train])
        loss.backward()
        opt.step()
        t1, c1 = time.perf_counter(), time.process_time()
        losses.append(loss.item())
        if e >= a.warmup:
            ep.append((t1 - t0) * 1e3)
            epc.append((c1 - c0) * 1e3)
    inf = []
    with torch.no_grad():
        for e in range(a.infer + 1):
            t0 = time.perf_counter()
            model.forward(p, x, g, False)
            if e:
                inf.append((time.perf_counter() - t0) * 1e3)
    core, bt = blas_core()
    print(json.dumps({"bench": "peer_torch", "name": cfg["config"], "threads": a.threads, "torch": torch.__version__,
                      "torch_threads": torch.get_num_threads(), "blas_core": core, "blas_threads": bt,
                      "epochs": a.epochs, "warmup": a.warmup, "infer_passes": a.infer, "epoch_ms": float(np.median(ep)),
                      "epoch_ms_min": float(min(ep)), "epoch_cpu_ms": float(np.median(epc)), "infer_ms": float(np.median(inf)),
                      "peak_rss_bytes": peak_rss(), "rss_before_bytes_peak": rss_before,
                      "params": model.count, "loss_first": losses[0], "loss_last": losses[-1]}), flush=True)


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------

def cmd_check(a):
    data = load_dump(a.dir, torch.float64)
    ref = json.load(open(os.path.join(a.dir, "step.json")))
    model, x, g = build(data)
    if model.count != ref["params"]:
        print(f"peer_torch.py check: layout of {model.count} parameters, lipgnn has {ref['params']}")
        return 1
    flat = torch.from_numpy(np.fromfile(os.path.join(a.dir, "params.bin"), dtype=np.float32).astype(np.float64))
    gref = np.fromfile(os.path.join(a.dir, "grads.bin"), dtype=np.float32).astype(np.float64)
    flat.requires_grad_(True)
    p = model.views(flat)
    out = model.forward(p, x, g, False)  # dropout off: the same with training on
    loss = F.nll_loss(out[data["train"]], data["labels"][data["train"]])
    loss.backward()
    gp = flat.grad.numpy()
    # float tolerance: lipgnn computes in float32 (rounding ~6e-8 a step); the
    # peer in float64 is the reference. Loss to 1e-5 relative, each parameter
    # tensor's gradient to 1e-4 relative L2 error, plus 1e-6 of the whole
    # gradient's norm for tensors whose own gradient is tiny.
    ok = abs(loss.item() - ref["loss"]) <= 1e-5 * max(1.0, abs(ref["loss"]))
    lines = [f"loss: lipgnn {ref['loss']:.9g} peer {loss.item():.9g}"]
    gnorm = float(np.linalg.norm(gref))
    off, worst = 0, 0.0
    for name, shape in model.shapes:
        size = math.prod(shape)
        d = float(np.linalg.norm(gp[off:off + size] - gref[off:off + size]))
        r = float(np.linalg.norm(gref[off:off + size]))
        rel = d / max(r, 1e-300)
        worst = max(worst, rel if r > 1e-3 * gnorm else 0.0)
        good = d <= 1e-4 * r + 1e-6 * gnorm
        ok = ok and good
        if not good or a.verbose:
            lines.append(f"  {name} {shape}: |diff| {d:.3g}  |grad| {r:.3g}  rel {rel:.3g}{'' if good else '  MISMATCH'}")
        off += size
    lines.append(f"worst relative gradient error (tensors above 1e-3 of the norm): {worst:.3g}")
    print(f"peer_torch.py check {ref['what']}: {'match' if ok else 'MISMATCH'}")
    print("\n".join(lines))
    if a.expect_fail:
        return 0 if not ok else 1
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("dir")
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--epochs", type=int, default=10)
    b.add_argument("--warmup", type=int, default=2)
    b.add_argument("--infer", type=int, default=10)
    b.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--expect-fail", action="store_true")
    c.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    sys.exit(cmd_bench(a) if a.cmd == "bench" else cmd_check(a))


if __name__ == "__main__":
    main()
