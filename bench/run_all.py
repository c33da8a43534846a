#!/usr/bin/python3
"""Runs the whole model benchmark suite (issue 8) and prints one JSON line per
measurement, then one per target. Standard library only; the PyTorch peer runs
where /usr/bin/python3 has torch (else its fields are null and it says why).

  LIPGNN_DATA=../shared/data bench/run_all.py [--build build] [--threads 2]
      [--epochs 10] [--warmup 2] [--infer 10] [--peer-epochs N] [--configs a,b,...] [--no-peer]
      [--peer-max-edges N] [--coretype auto|keep|NAME] [--trees-count N] [--rounds R]
  bench/run_all.py --table FILE    the JSON lines of a run as Markdown tables

For every configuration (bench_models --list): lipgnn at --threads (for the
deep ones each epoch paired with one at 1 thread in the same run, for the
thread scaling: bench_models --threads1), then the peer on the same
data (bench_models --dump), the same hyper-parameters and thread count
(torch.set_num_threads, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS), both with
OPENBLAS_CORETYPE set to the best core for this CPU (--coretype auto, the
default: the Prescott trap avoided on both sides; `keep` leaves the
environment's setting). The peer is skipped on graphs above --peer-max-edges
directed edges (default 5e6): its per-edge tensors (edges x width floats, a
few per layer kept by autograd) would not fit in memory. Both sides wait at
OpenMP barriers as the lipgnn command does (--omp-wait-policy lipgnn, the
default): OMP_WAIT_POLICY unset and GOMP_SPINCOUNT at the value `lipgnn
--version` names, a short spin before sleeping. libgomp's own default spins
300 000 times, which on a shared, oversubscribed machine makes threads wait
for a partner that is not scheduled (measured here at load 20 on 2 cores,
DeepGAT 30 layers on Cora at 2 threads: 87 ms per epoch passive, 8090 ms
spinning); `passive` never spins and pays a wake-up per parallel region;
`keep` leaves the environment's OMP_WAIT_POLICY and GOMP_SPINCOUNT.

--rounds R (default 1) runs every configuration R times, the configurations
in turn (round 1 of each, then round 2, ...), so that a machine whose speed
drifts over minutes spreads its drift over all of them; each configuration's
line then carries the median over its rounds of every figure (the largest
peak RSS and allocation count), each figure still measured within one run
(a ratio is the median of R ratios, not a ratio of medians), and the rounds'
own values of the figures the targets read (and each round's cross-core round
trip, whose line value is the last round's) in round_<field> lists.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEEP = {"narrow", "dense"}
# --rounds: figures combined by their maximum over the rounds, not the median
WORST = {"peak_rss_bytes", "rss_end_bytes", "allocs_in_loop", "mem_ratio", "peer_peak_rss_bytes"}
# and the figures whose rounds' values the line lists (round_<field>)
# (and the cross-core round trip, a list [before, after] that has no median: the placement
# of the two virtual CPUs can change between rounds)
LISTED = ("epoch_ms", "floor_ms", "ratio", "thread_speedup", "speedup", "peer_epoch_ms", "cold_over_floor",
          "xcore_rt_ns")


def median(v):
    v = sorted(v)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def combine(rounds):
    """One configuration's line from its rounds' lines (run_all --rounds)."""
    if len(rounds) == 1:
        return rounds[0]
    r = dict(rounds[-1])
    for k, v in rounds[-1].items():
        vals = [x.get(k) for x in rounds]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or any(
                not isinstance(x, (int, float)) or isinstance(x, bool) for x in vals):
            continue
        r[k] = max(vals) if k in WORST else median(vals)
        if isinstance(v, int) and k not in WORST:
            r[k] = int(round(r[k]))
    for k in LISTED:
        r["round_" + k] = [x.get(k) for x in rounds]
    r["rounds"] = len(rounds)
    return r


def run_json(cmd, env, what):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 77:
        return None, p.stderr.strip()
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"run_all: {what} failed ({p.returncode}): {' '.join(cmd)}")
    # (a build with LG_PASS_TIMES adds {"bench":"passes"} lines: not the run's line)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{") and '"bench":"passes"' not in l]
    return json.loads(lines[-1]), p.stderr.strip()


def lipgnn_spincount(build):
    """The GOMP_SPINCOUNT the lipgnn command gives its computing commands (its --version says)."""
    exe = os.path.join(build, "lipgnn")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "LIPGNN_OMP_REEXEC")}
    try:
        out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env=env).stdout
    except OSError as e:
        raise SystemExit(f"run_all: {exe}: {e} (--omp-wait-policy lipgnn reads its --version)")
    m = re.search(r"run with GOMP_SPINCOUNT=(\d+)", out)
    if not m:
        raise SystemExit(f"run_all: {exe} --version names no GOMP_SPINCOUNT: {out!r}")
    return m.group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--infer", type=int, default=10)
    ap.add_argument("--peer-epochs", type=int, default=0, help="epochs of the peer (default: --epochs)")
    ap.add_argument("--configs", default="", help="comma-separated, run in that order")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--peer-max-edges", type=float, default=5e6)
    ap.add_argument("--coretype", default="auto")
    ap.add_argument("--omp-wait-policy", default="lipgnn",
                    help="how both sides' OpenMP threads wait: 'lipgnn' (the default: GOMP_SPINCOUNT as the "
                         "lipgnn command sets it), 'passive', 'active', or 'keep' (the environment's)")
    ap.add_argument("--trees-count", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs of every configuration, in turn; each figure the median of its rounds'")
    ap.add_argument("--table", metavar="FILE")
    a = ap.parse_args()
    if a.table:
        return table(a.table)
    if a.rounds < 1:
        raise SystemExit("run_all: --rounds must be at least 1")
    if a.epochs < 10:
        sys.stderr.write("run_all: fewer than 10 epochs: the figures are not the suite's\n")
    exe = os.path.join(a.build, "bench", "bench_models")
    if not os.access(exe, os.X_OK):
        raise SystemExit(f"run_all: {exe} not found: build the project first (cmake --build build)")
    env = dict(os.environ)
    blas = json.loads(subprocess.run([exe, "--blas"], stdout=subprocess.PIPE, text=True, env=env).stdout)
    if a.coretype == "auto":
        if blas["best"]:
            env["OPENBLAS_CORETYPE"] = blas["best"]
            user = os.environ.get("OPENBLAS_CORETYPE", "")
            if user and user.lower() != blas["best"].lower():
                sys.stderr.write(f"run_all: OPENBLAS_CORETYPE={user} in the environment is replaced by "
                                 f"{blas['best']}, the best core for this CPU, on both sides "
                                 "(--coretype keep keeps it)\n")
    elif a.coretype != "keep":
        env["OPENBLAS_CORETYPE"] = a.coretype
    if a.omp_wait_policy == "lipgnn":
        env.pop("OMP_WAIT_POLICY", None)
        env["GOMP_SPINCOUNT"] = lipgnn_spincount(a.build)
    elif a.omp_wait_policy != "keep":
        env.pop("GOMP_SPINCOUNT", None)
        env["OMP_WAIT_POLICY"] = a.omp_wait_policy
    configs = [l.split() for l in subprocess.run([exe, "--list"], stdout=subprocess.PIPE, text=True).stdout.splitlines()]
    if a.configs:
        fam = dict((c[0], c[1]) for c in configs)
        bad = [w for w in a.configs.split(",") if w not in fam]
        if bad:
            raise SystemExit(f"run_all: unknown configurations {bad}; see bench_models --list")
        configs = [(w, fam[w]) for w in a.configs.split(",")]
    peer = os.path.join(HERE, "peer_torch.py")
    have_torch = not a.no_peer and subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                                  stderr=subprocess.DEVNULL).returncode == 0
    if not a.no_peer and not have_torch:
        sys.stderr.write("run_all: /usr/bin/python3 has no torch (apt-get install python3-torch): the peer is skipped\n")
    print(json.dumps({"suite": "lipgnn models", "threads": a.threads, "epochs": a.epochs, "warmup": a.warmup,
                      "infer_passes": a.infer, "peer_epochs": a.peer_epochs or a.epochs, "rounds": a.rounds,
                      "load_average": os.getloadavg(),
                      "openblas_coretype": env.get("OPENBLAS_CORETYPE", ""),
                      "openblas_coretype_environment": os.environ.get("OPENBLAS_CORETYPE", ""),
                      "omp_wait_policy": env.get("OMP_WAIT_POLICY", ""),
                      "gomp_spincount": env.get("GOMP_SPINCOUNT", ""), "blas_detected": blas,
                      "cpu": cpu_name(), "cores": os.cpu_count()}), flush=True)
    tmp = tempfile.mkdtemp(prefix="lipgnn-bench-")
    results, runs, skipped = [], {}, set()
    try:
        for rnd in range(a.rounds):
            for name, family in configs:
                if name in skipped:
                    continue
                r = run_config(a, exe, env, tmp, have_torch, peer, name, family)
                if "skipped" in r:
                    skipped.add(name)
                    print(json.dumps(r), flush=True)
                    continue
                runs.setdefault(name, []).append(r)
                if a.rounds > 1:
                    sys.stderr.write(f"run_all: round {rnd + 1}/{a.rounds}: {name} {r['epoch_ms']:.1f} ms an epoch\n")
        for name, _ in configs:
            if name in runs:
                results.append(combine(runs[name]))
                print(json.dumps(results[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for t in targets(results):
        print(json.dumps(t), flush=True)


def run_config(a, exe, env, tmp, have_torch, peer, name, family):
    """One run of one configuration: lipgnn's line with the peer's figures."""
    base = [exe, "--config", name, "--epochs", str(a.epochs), "--warmup", str(a.warmup), "--infer", str(a.infer)]
    if a.trees_count:
        base += ["--trees-count", str(a.trees_count)]
    ev = dict(env, OMP_NUM_THREADS=str(a.threads))
    load = [round(x, 1) for x in os.getloadavg()]
    # the deep configurations: each epoch at T threads paired with one at 1 thread in
    # the same run (bench_models --threads1), so the 2-vs-1 ratio does not drift
    pair = ["--threads1"] if family in DEEP and a.threads > 1 else []
    r, err = run_json(base + ["--threads", str(a.threads)] + pair, ev, name)
    if r is None:
        return {"name": name, "skipped": err}
    r["load_average"] = load
    r.setdefault("threads1_epoch_ms", None)
    r.setdefault("thread_speedup", None)
    r["peer_epoch_ms"] = r["peer_infer_ms"] = r["speedup"] = r["infer_speedup"] = None
    r["peer_epoch_cpu_ms"] = r["cpu_speedup"] = None
    r["peer_blas_core"] = r["peer_peak_rss_bytes"] = None
    r["peer_note"] = "" if have_torch else "no torch"
    if have_torch and r["config"]["edges"] > a.peer_max_edges:
        r["peer_note"] = f"not run: {r['config']['edges']} edges > --peer-max-edges {a.peer_max_edges:.0f}"
    elif have_torch:
        d = os.path.join(tmp, name)
        dump = base[:3] + ["--dump", d] + (["--trees-count", str(a.trees_count)] if a.trees_count else [])
        subprocess.run(dump, env=ev, check=True)
        pe = dict(env, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
        pep = a.peer_epochs or a.epochs
        p, err = run_json(["/usr/bin/python3", peer, "bench", d, "--threads", str(a.threads), "--epochs",
                           str(pep), "--warmup", str(min(a.warmup, 1) if a.peer_epochs else a.warmup),
                           "--infer", str(min(a.infer, pep))], pe, name + " (peer)")
        shutil.rmtree(d, ignore_errors=True)
        if p:
            r["peer_epoch_ms"], r["peer_infer_ms"] = p["epoch_ms"], p["infer_ms"]
            r["speedup"] = round(p["epoch_ms"] / r["epoch_ms"], 3)
            r["peer_epoch_cpu_ms"] = p["epoch_cpu_ms"]
            r["cpu_speedup"] = round(p["epoch_cpu_ms"] / r["epoch_cpu_ms"], 3)
            r["infer_speedup"] = round(p["infer_ms"] / r["infer_ms"], 3)
            r["peer_blas_core"], r["peer_peak_rss_bytes"] = p["blas_core"], p["peak_rss_bytes"]
            r["peer_loss_first"] = p["loss_first"]
            r["peer_epochs"], r["peer_infer_passes"] = p["epochs"], p["infer_passes"]
        else:
            r["peer_note"] = err
    return r


def targets(results):
    """The issue's targets, each with the measured figure."""
    out = []
    by = {r["name"]: r for r in results}

    def add(target, name, value, met):
        out.append({"target": target, "config": name, "value": value, "met": met})

    for r in results:
        fam, n = r["family"], r["name"]
        if r["speedup"] is not None and fam in DEEP:
            need = 10 if fam == "narrow" else 2
            add(f"speed-up over the PyTorch peer >= {need}x", n, r["speedup"], r["speedup"] >= need)
        if fam in DEEP:
            lim = 2.0 if fam == "narrow" else 1.3
            add(f"epoch / floor <= {lim}", n, r["ratio"], r["ratio"] <= lim)
        if r["thread_speedup"] is not None:
            add("2 threads vs 1 >= 1.6x", n, r["thread_speedup"], r["thread_speedup"] >= 1.6)
        add("(peak RSS - RSS before model) / (params + Adam + kept activations) <= 1.5", n, r["mem_ratio"],
            r["mem_ratio"] <= 1.5)
        add("no allocation inside the epoch loop", n, r["allocs_in_loop"], r["allocs_in_loop"] == 0)
    big, small = by.get("sbm1m-gat2-lip"), by.get("sbm100k-gat2-lip")
    if big:
        add("1M nodes / 10M edges: epoch < 10 s", big["name"], big["epoch_ms"], big["epoch_ms"] < 10000)
        add("1M nodes / 10M edges: peak RSS < 8 GiB", big["name"], big["peak_rss_bytes"],
            big["peak_rss_bytes"] < 8 * 2**30)
    if big and small:
        g = big["epoch_ms"] / small["epoch_ms"]
        add("epoch(10M edges) / epoch(1M edges) <= 12", "sbm", round(g, 3), g <= 12)
    return out


def table(path):
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    f = lambda v, d=1: "-" if v is None else f"{v:.{d}f}"
    mib = lambda b: "-" if b is None else f"{b / 2**20:.0f}"
    xc = lambda v: "-" if not v else " / ".join(f"{x:.0f}" for x in v)  # before / after the timed epochs
    print("| configuration | nodes | edges | ms/epoch | floor ms | ratio | cold floor ms | ratio to it | ms/inference | 1-thread ms/epoch | "
          "2 vs 1 thread | peer ms/epoch | speed-up | CPU ms/epoch | peer CPU ms/epoch | CPU speed-up | peak RSS MiB | "
          "kept activations MiB | mem ratio | cross-core ns |")
    print("| --- |" + " ---: |" * 19)
    for r in rows:
        if "bench" not in r:
            continue
        c = r["config"]
        print(f"| {r['name']} | {c['nodes']} | {c['edges']} | {f(r['epoch_ms'])} | {f(r['floor_ms'])} | "
              f"{f(r['ratio'], 2)} | {f(r.get('floor_cold_ms'))} | {f(r.get('cold_ratio'), 2)} | {f(r['infer_ms'])} | {f(r['threads1_epoch_ms'])} | {f(r['thread_speedup'], 2)} | "
              f"{f(r['peer_epoch_ms'])} | {f(r['speedup'], 2)} | {f(r.get('epoch_cpu_ms'))} | "
              f"{f(r.get('peer_epoch_cpu_ms'))} | {f(r.get('cpu_speedup'), 2)} | {mib(r['peak_rss_bytes'])} | "
              f"{mib(r['activation_bytes'])} | {f(r['mem_ratio'], 2)} | {xc(r.get('xcore_rt_ns'))} |")
    multi = [r for r in rows if "bench" in r and r.get("rounds", 1) > 1]
    if multi:  # --rounds R: the figures that decide a target, each round's
        rr = lambda r, k, d: " / ".join(f(v, d) for v in r.get("round_" + k) or [])
        print()
        print("| configuration | epoch ms | floor ms | ratio to the floor | 2 vs 1 thread | speed-up over the peer | "
              "peer ms/epoch |")
        print("| --- |" + " --- |" * 6)
        for r in multi:
            print(f"| {r['name']} | {rr(r, 'epoch_ms', 1)} | {rr(r, 'floor_ms', 1)} | {rr(r, 'ratio', 2)} | "
                  f"{rr(r, 'thread_speedup', 2)} | {rr(r, 'speedup', 2)} | {rr(r, 'peer_epoch_ms', 0)} |")
    print()
    print("| target | configuration | measured | met |")
    print("| --- | --- | ---: | --- |")
    for r in rows:
        if "target" in r:
            v = r["value"]
            if "RSS <" in r["target"]:
                v = f"{v / 2**30:.2f} GiB"
            elif "epoch <" in r["target"]:
                v = f"{v / 1000:.1f} s"
            elif isinstance(v, float):
                v = f"{v:.3g}"
            print(f"| {r['target']} | {r['config']} | {v} | {'yes' if r['met'] else '**no**'} |")


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


if __name__ == "__main__":
    main()
