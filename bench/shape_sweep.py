#!/usr/bin/env python3
"""The shape sweep of issue 38: -O2 against its bound on kernels no bench lists.

A seeded generator writes valid .tsl kernels over the DSL (docs/language.md):
chains of 1-6 matmuls (with ranks, a weight used twice, tied factors
`X @ E @ E.T`), SwiGLU / GeGLU / GELU MLP blocks, dense and factorised at ranks
64-4096 (sometimes uneven), inputs stored transposed (`X.T @ W`), weights stored
as nn.Linear keeps them (`X @ W.T`), transposed results (`(X @ W).T`) and an
activation in the middle of a chain; dimensions from public model configs
(hidden 576-16384, intermediate up to 53248, several not multiples of 128),
M from 1 to 32768, targets trn1 and trn2. Kernel i depends only on (seed, i).

Each kernel runs `tessel run --timing-only --report=json` (fast-forward) at
-O0 and -O2. Its bound is max(FLOPs / peak_flops, minimal traffic / streaming
rate): FLOPs of the matmuls as written, minimal traffic = every input read once
and the output written once (bf16), streaming rate = the smaller of the HBM
share (hbm_bandwidth_gbs) and the DMA engines' rate (dma_engines x
dma_engine_bandwidth_gbs, from `tessel run --dump-target`). A kernel whose
FLOPs exceed --max-flops has its M halved until it fits (the row says so).
A kernel tessel refuses is counted with its first error line. The cost model's
prediction of each -O2 kernel (the planner's notes) is set beside its simulation.
--tune N kernels (chosen by the seed) also run `tessel tune --exhaustive
--no-cache` and -O2 is compared with the best configuration. --rank N more
kernels also run it, and over every kernel that did, the static model's
predicted latency of each configuration is ranked against its simulated one
(bench/shape_sweep_rank.py: Spearman's rho and Kendall's tau-b per kernel, their
medians, and the kernels where the configuration the model predicts fastest
simulates more than 5 % slower than the simulated best).

Prints the distribution of -O2 / bound against the issue's goals (median
<= 1.10, p90 <= 1.20, worst <= 1.5, -O0 never faster than -O2, -O2 within 1.05x
of the exhaustive best on >= 95% of the tuned kernels), a table per kernel
family, the worst five (written as .tsl files, with the `[select-blocks]`
notes of `tessel compile -O2 --emit=tir`, into --worst-dir), and the kernels
-O0 beats. Writes every row to --json; --report writes bench/REPORT.md's
"shape-sweep" section. --list prints the kernels and runs nothing.

  python3 bench/shape_sweep.py [--seed 1] [--count 200] [--jobs 2] [--tune 8] [--rank 192]
                                [--report] [--list]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from report_sections import replace_section  # noqa: E402
from shape_sweep_kernels import generate, kernel_source  # noqa: E402
from shape_sweep_rank import configurations, rank_entry, rank_section  # noqa: E402

GOALS = {"median": 1.10, "p90": 1.20, "worst": 1.5, "tune": 1.05, "tune_share": 0.95, "rank_slack": 0.05}
BUCKETS = [1.05, 1.10, 1.20, 1.5, 2.0, 3.0]


def first_error(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l]
    return (errs or lines or ["failed"])[0].strip()


def call(cmd, timeout):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if out.returncode != 0:
        return None, first_error(out.stderr)
    return out.stdout, None


def simulate(tessel, path, opt, target, timeout):
    out, err = call([tessel, "run", path, f"-O{opt}", "--timing-only", "--report=json",
                     f"--target={target}"], timeout)
    if err:
        return {"error": err}
    r = json.loads(out)
    return {"latency_us": r["latency_us"], "peak_flops": r["peak_flops"],
            "hbm_bandwidth_gbs": r["hbm_bandwidth_gbs"], "mfu": r["mfu"],
            "intermediates_bytes": r["traffic"].get("intermediates", 0)}


def tune_best(tessel, path, target, timeout):
    out, err = call([tessel, "tune", path, "--exhaustive", "--no-cache", "--report=json", "--jobs=1",
                     f"--target={target}"], timeout)
    if err:
        return {"error": err}
    r = json.loads(out)
    if r.get("best_latency_us") is None:
        return {"error": "tune found no configuration"}
    return {"best_us": r["best_latency_us"], "best": r["best"], "configurations": r["configurations"],
            "points": configurations(r)}


def notes(tessel, path, target, timeout):
    """The planner's notes (`// [pass] ...` lines) of the -O2 kernel."""
    out, err = call([tessel, "compile", path, "-O2", "--emit=tir", f"--target={target}"], timeout)
    if err:
        return [err]
    return [l[3:] for l in out.splitlines() if l.startswith("// [")]


def predicted(tessel, path, target, timeout):
    """The cost model's latency of the -O2 kernel: the last `predicted X us` of its planner notes
    (select-blocks' chosen strip, or io-transpose / widen-columns after they changed it)."""
    value = None
    for line in notes(tessel, path, target, timeout):
        try:
            value = float(line.rsplit("predicted ", 1)[1].split()[0])
        except (IndexError, ValueError):
            continue
    return {"predicted_us": value} if value else {"error": "no predicted latency in the notes"}


def streaming(tessel, target):
    """(GB/s, limit, why) of what one core can stream: the smaller of the HBM share and the DMA engines' rate."""
    out, err = call([tessel, "run", "--dump-target", f"--target={target}"], 60)
    if err:
        sys.exit(f"shape_sweep: tessel run --dump-target --target={target}: {err}")
    t = json.loads(out)
    hbm, n, per = t["hbm_bandwidth_gbs"], t["dma_engines"], t["dma_engine_bandwidth_gbs"]
    dma_text = f"the DMA engines' {n} x {per:g} = {n * per:g} GB/s"
    if n * per < hbm:
        return n * per, "DMA engines", f"{dma_text}, below the HBM share of {hbm:g} GB/s"
    return hbm, "HBM share", f"the HBM share of {hbm:g} GB/s, below {dma_text}"


def bound(k, o2, stream):
    """(bound us, limit) of kernel k: compute, or the minimal traffic over the streaming rate."""
    compute = k["flops"] / o2["peak_flops"] * 1e6
    memory = k["min_bytes"] / (stream[0] * 1e9) * 1e6
    return (compute, "compute") if compute >= memory else (memory, "stream")


def run_all(args, kernels, tmp):
    """Runs -O0, -O2 (and tune for the chosen) of every kernel; returns {(index, what): result}."""
    jobs = []
    for k in kernels:
        path = os.path.join(tmp, k["file"])
        with open(path, "w") as f:
            f.write(kernel_source(k))
        jobs += [(k["index"], what, path, k["target"]) for what in (0, 2, "model")]
        if k["tuned"] or k["ranked"]:
            jobs.append((k["index"], "tune", path, k["target"]))
    jobs.sort(key=lambda j: j[1] != "tune")  # the long tune runs first, so they overlap the rest

    def one(job):
        _, what, path, target = job
        if what == "tune":
            return tune_best(args.tessel, path, target, args.timeout)
        if what == "model":
            return predicted(args.tessel, path, target, args.timeout)
        return simulate(args.tessel, path, what, target, args.timeout)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, jobs))
    return {(j[0], j[1]): r for j, r in zip(jobs, results)}


def make_rows(kernels, results, streams):
    rows = []
    for k in kernels:
        o0, o2 = results[(k["index"], 0)], results[(k["index"], 2)]
        row = {key: k[key] for key in ("index", "name", "family", "detail", "tags", "target", "M", "M_drawn",
                                       "flops", "min_bytes", "file", "tuned", "ranked")}
        if "error" in o2:
            row["error"] = o2["error"]
            rows.append(row)
            continue
        b, limit = bound(k, o2, streams[k["target"]])
        row.update(o2_us=o2["latency_us"], bound_us=b, limit=limit if limit == "compute" else
                   f"stream ({streams[k['target']][1]})", ratio=o2["latency_us"] / b, mfu_o2=o2["mfu"],
                   intermediates_bytes_o2=o2["intermediates_bytes"])
        model = results[(k["index"], "model")]
        if "predicted_us" in model:
            row.update(predicted_us=model["predicted_us"], predicted_over_o2=model["predicted_us"] / o2["latency_us"])
        if "error" in o0:
            row["error_o0"] = o0["error"]
        else:
            row.update(o0_us=o0["latency_us"], o0_over_o2=o0["latency_us"] / o2["latency_us"])
        if k["tuned"] or k["ranked"]:
            t = results[(k["index"], "tune")]
            row["rank"] = rank_entry(t, GOALS["rank_slack"])
            # one line per configuration in the JSON: block, the model's and the simulated latency
            row["tune"] = {**t, "points": [f"{blk}: model {pred:.1f} us, simulated {sim:.1f} us" for blk, pred, sim in
                                           t.get("points", [])]}
            if "best_us" in t and k["tuned"]:
                row["o2_over_tune"] = o2["latency_us"] / t["best_us"]
        rows.append(row)
    return rows


def quantile(values, q):
    """The q-quantile of sorted `values` (nearest rank)."""
    return values[min(len(values) - 1, max(0, int(round(q * len(values) + 0.5)) - 1))]


def met(ok):
    return "met" if ok else "NOT met"


def distribution(ok):
    r = sorted(x["ratio"] for x in ok)
    med, p90, worst = statistics.median(r), quantile(r, 0.9), r[-1]
    lines = [f"-O2 / bound over {len(r)} kernels: median {med:.3f} (goal <= {GOALS['median']:.2f}: "
             f"{met(med <= GOALS['median'])}), p90 {p90:.3f} (goal <= {GOALS['p90']:.2f}: {met(p90 <= GOALS['p90'])}), "
             f"worst {worst:.3f} (goal <= {GOALS['worst']:.2f}: {met(worst <= GOALS['worst'])})", "",
             "| -O2 / bound | kernels | share | |", "|---|---:|---:|---|"]
    lo = 0.0
    for hi in BUCKETS + [float("inf")]:
        n = sum(lo < x <= hi for x in r)
        label = f"<= {hi:.2f}" if lo == 0 else (f"{lo:.2f} - {hi:.2f}" if hi != float("inf") else f"> {lo:.2f}")
        lines.append(f"| {label} | {n} | {100 * n / len(r):.0f} % | {'#' * round(40 * n / len(r))} |")
        lo = hi
    return lines, {"median": med, "p90": p90, "worst": worst}


def limits(ok, streams):
    lines = []
    for target in sorted(streams):
        sel = [x for x in ok if x["target"] == target]
        n_c = sum(x["limit"] == "compute" for x in sel)
        lines.append(f"{target}: streaming rate {streams[target][2]}; bound by compute on {n_c} of {len(sel)} "
                     f"kernels, by streaming on {len(sel) - n_c}")
    return lines


def by_bound(ok):
    """-O2 / bound by the bound's size: fixed costs (DMA latency, pipeline fill) weigh most on small kernels."""
    lines = ["| bound | kernels | median -O2/bound | p90 | worst |", "|---|---:|---:|---:|---:|"]
    for lo, hi in [(0, 10), (10, 100), (100, 1000), (1000, float("inf"))]:
        r = sorted(x["ratio"] for x in ok if lo <= x["bound_us"] < hi)
        label = f"{lo}-{hi} us" if hi != float("inf") else f">= {lo} us"
        if r:
            lines.append(f"| {label} | {len(r)} | {statistics.median(r):.2f} | {quantile(r, 0.9):.2f} | {r[-1]:.2f} |")
    return lines


def families(ok):
    """Per tag: count, median and worst -O2 / bound, worst first."""
    by = {}
    for x in ok:
        for tag in x["tags"]:
            by.setdefault(tag, []).append(x["ratio"])
    lines = ["| kernels with | count | median -O2/bound | worst | over 1.20 |", "|---|---:|---:|---:|---:|"]
    for tag, r in sorted(by.items(), key=lambda kv: -statistics.median(kv[1])):
        lines.append(f"| {tag} | {len(r)} | {statistics.median(r):.2f} | {max(r):.2f} | "
                     f"{sum(x > GOALS['p90'] for x in r)} |")
    return lines


def describe(x):
    tags = [t for t in x["tags"] if not t.startswith("M ")]
    return f"#{x['index']} {x['family']} ({', '.join(tags)}), M={x['M']}, {x['target']}"


def write_worst(args, kernels, worst):
    """Writes the worst kernels as .tsl files (with their numbers and planner notes) into --worst-dir."""
    os.makedirs(args.worst_dir, exist_ok=True)
    for old in os.listdir(args.worst_dir):
        if old.startswith("worst") and old.endswith(".tsl"):
            os.remove(os.path.join(args.worst_dir, old))
    by_index = {k["index"]: k for k in kernels}
    lines = ["| rank | kernel | -O0 us | -O2 us | bound us | limit | -O2/bound | file |",
             "|---:|---|---:|---:|---:|---|---:|---|"]
    for rank, x in enumerate(worst, 1):
        name = f"worst{rank}-{x['name']}.tsl"
        path = os.path.join(args.worst_dir, name)
        k = by_index[x["index"]]
        with tempfile.NamedTemporaryFile("w", suffix=".tsl", delete=False) as f:
            f.write(kernel_source(k))
        x["notes"] = notes(args.tessel, f.name, k["target"], args.timeout)
        os.remove(f.name)
        head = [f"# bench/shape_sweep.py --seed {args.seed}: kernel {x['index']}, -O2 / bound {x['ratio']:.3f} "
                f"(rank {rank} of the sweep's worst)",
                f"# tessel run {name} -O2 --timing-only --target={x['target']}: {x['o2_us']:.1f} us; -O0 "
                f"{x.get('o0_us', float('nan')):.1f} us; bound {x['bound_us']:.1f} us ({x['limit']})",
                "# [select-blocks] notes of tessel compile -O2 --emit=tir:"]
        head += ["#   " + n for n in x["notes"] if n.startswith("[select-blocks]")]
        with open(path, "w") as f:
            f.write("\n".join(head) + "\n" + kernel_source(k))
        rel = os.path.relpath(path, ROOT)
        lines.append(f"| {rank} | {describe(x)} | {x.get('o0_us', float('nan')):.1f} | {x['o2_us']:.1f} | "
                     f"{x['bound_us']:.1f} | {x['limit']} | {x['ratio']:.2f} | {rel} |")
    return lines


def model_agreement(ok):
    """How close the cost model's prediction of each -O2 kernel is to its simulation: where the
    model agrees, a kernel far from the bound is one whose schedule the planner knows to be slow."""
    rows = [x for x in ok if "predicted_us" in x]
    lines = []
    for label, sel in [("all kernels", rows), ("kernels over 1.5x the bound", [x for x in rows if x["ratio"] > 1.5])]:
        err = sorted(abs(x["predicted_over_o2"] - 1) for x in sel)
        if err:
            lines.append(f"cost model (the -O2 planner's predicted latency) against the simulated -O2 latency, "
                         f"{label}: within 10 % on {sum(e <= 0.10 for e in err)} of {len(err)}, within 25 % on "
                         f"{sum(e <= 0.25 for e in err)}; median error {100 * statistics.median(err):.1f} %")
    if len(rows) < len(ok):
        lines.append(f"no predicted latency for {len(ok) - len(rows)} kernels")
    return lines


def o0_wins(ok):
    both = [x for x in ok if "o0_us" in x]
    wins = sorted((x for x in both if x["o0_us"] < x["o2_us"]), key=lambda x: x["o0_over_o2"])
    lines = [f"-O0 faster than -O2 on {len(wins)} of {len(both)} kernels (goal: never: {met(not wins)})"
             + (f"; by up to {100 * (1 / wins[0]['o0_over_o2'] - 1):.1f} % (-O2 / -O0 = "
                f"{1 / wins[0]['o0_over_o2']:.3f})" if wins else "")]
    if wins:
        lines += ["", "| kernel | -O0 us | -O2 us | -O2 / -O0 | -O2/bound |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {describe(x)} | {x['o0_us']:.1f} | {x['o2_us']:.1f} | {1 / x['o0_over_o2']:.3f} | "
                  f"{x['ratio']:.2f} |" for x in wins]
    return lines


def tune_table(rows):
    sel = [x for x in rows if x.get("tuned") and "tune" in x]
    good = [x for x in sel if "o2_over_tune" in x]
    within = sum(x["o2_over_tune"] <= GOALS["tune"] for x in good)
    share = within / len(good) if good else 0
    lines = [f"-O2 within {GOALS['tune']}x of `tune --exhaustive` on {within} of {len(good)} tuned kernels "
             f"(goal >= {100 * GOALS['tune_share']:.0f} %: {met(good and share >= GOALS['tune_share'])})", "",
             "| kernel | -O2 us | exhaustive best us | best (m, n, ...) | configurations | -O2 / best |",
             "|---|---:|---:|---|---:|---:|"]
    for x in sel:
        t = x["tune"]
        if "best_us" not in t:
            lines.append(f"| {describe(x)} | {x['o2_us']:.1f} | error: {t['error']} | | | |")
            continue
        best = ", ".join(f"{k}={v}" for k, v in sorted(t["best"].items()))
        lines.append(f"| {describe(x)} | {x['o2_us']:.1f} | {t['best_us']:.1f} | {best} | {t['configurations']} | "
                     f"{x['o2_over_tune']:.3f} |")
    return lines


def refused(rows):
    bad = [x for x in rows if "error" in x]
    lines = [f"kernels tessel refused (or that timed out) at -O2: {len(bad)} of {len(rows)}"]
    lines += [f"  {describe(x)}: {x['error']}" for x in bad]
    half = [x for x in rows if "error_o0" in x]
    lines += [f"  refused at -O0 only: {describe(x)}: {x['error_o0']}" for x in half]
    return lines


def report_lines(args, sections, capped):
    """bench/REPORT.md's shape-sweep section."""
    out = ["## Shape sweep: -O2 against its bound on generated kernels (issue 38)", "",
           f"Generated by `python3 bench/shape_sweep.py --seed {args.seed} --count {args.count} --tune {args.tune} "
           f"--rank {args.rank} --report`: kernels drawn by a seeded generator (bench/shape_sweep_kernels.py: "
           "chains of 1-6 matmuls, tied factors, SwiGLU / GeGLU / GELU MLP blocks dense and factorised at ranks "
           "64-4096, inputs, weights and results transposed, an activation mid-chain, a weight used twice; sizes "
           "from public model configs, M 1-32768, trn1 and trn2), each run timing-only at -O0 and -O2. Bound = "
           "max(FLOPs of the matmuls as written / peak, (inputs + output, bf16, once) / streaming rate); the "
           "streaming rate is the smaller of the HBM share and the DMA engines' rate. "
           f"{capped} kernels had M halved to fit --max-flops {args.max_flops:g}. Every row: bench/shape_sweep.json; "
           "what the misses come from: docs/cost-models.md, \"What the shape sweep shows\".", ""]
    for name, title in [("distribution", None), ("limits", None), ("bound", "By the size of the bound:"),
                        ("families", "By kernel family (a kernel counts under each of its tags), worst first:"),
                        ("model", None),
                        ("worst", "The worst five (written to bench/shape_sweep_worst/ with their "
                                  "`[select-blocks]` notes):"), ("o0", None),
                        ("tune", "-O2 against `tessel tune --exhaustive --no-cache` on the tuned subset:"),
                        ("rank", "Does the static model rank configurations as the simulator does? On the tuned "
                                 "kernels and the --rank ones:"),
                        ("refused", None)]:
        out += ([title, ""] if title else []) + sections[name] + [""]
    return out[:-1]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2, help="tessel processes at a time (default 2)")
    ap.add_argument("--tune", type=int, default=8, help="kernels that also run tune --exhaustive (default 8)")
    ap.add_argument("--rank", type=int, default=192,
                    help="kernels besides the --tune ones that also run tune --exhaustive, for the static model's "
                         "rank correlation with simulation (default 192: with --count 200 every kernel; the "
                         "exhaustive tunes take about a minute on 2 cores)")
    ap.add_argument("--max-flops", type=float, default=2e14,
                    help="halve a kernel's M until its FLOPs are at most this (default 2e14: the largest "
                         "MLP of the families, Llama-3.1-405B at M = 32768, 1.7e14, simulates in 3 s)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per tessel process")
    ap.add_argument("--json", default=os.path.join(HERE, "shape_sweep.json"))
    ap.add_argument("--worst-dir", default=os.path.join(HERE, "shape_sweep_worst"))
    ap.add_argument("--report", action="store_true", help="write bench/REPORT.md's shape-sweep section")
    ap.add_argument("--list", action="store_true", help="print the kernels and run nothing")
    return ap.parse_args()


def list_kernels(kernels):
    for k in kernels:
        capped = "" if k["M"] == k["M_drawn"] else f" (drawn {k['M_drawn']}, halved to fit --max-flops)"
        print(f"# kernel {k['index']}: {k['family']} ({', '.join(k['tags'])}), target {k['target']}, "
              f"M {k['M']}{capped}{', tuned' if k['tuned'] else ''}{', ranked' if k['ranked'] else ''}")
        print(kernel_source(k))


def main():
    args = parse_args()
    kernels = generate(args.seed, args.count, args.tune, args.max_flops, args.rank)
    if args.list:
        list_kernels(kernels)
        return 0
    streams = {t: streaming(args.tessel, t) for t in sorted({k["target"] for k in kernels})}
    with tempfile.TemporaryDirectory() as tmp:
        results = run_all(args, kernels, tmp)
    rows = make_rows(kernels, results, streams)
    ok = [x for x in rows if "error" not in x]
    if not ok:
        print("\n".join(refused(rows)))
        return 1
    dist, stats = distribution(ok)
    worst = sorted(ok, key=lambda x: -x["ratio"])[:5]
    ranked, rank_stats = rank_section([x for x in rows if "rank" in x], GOALS["rank_slack"], describe)
    sections = {"distribution": dist, "limits": limits(ok, streams), "bound": by_bound(ok),
                "families": families(ok), "model": model_agreement(ok), "worst": write_worst(args, kernels, worst), "o0": o0_wins(ok),
                "tune": tune_table(rows), "rank": ranked, "refused": refused(rows)}
    text = []
    for name in ("distribution", "limits", "bound", "families", "model", "worst", "o0", "tune", "rank", "refused"):
        text += sections[name] + [""]
    print("\n".join(text))
    capped = sum(k["M"] != k["M_drawn"] for k in kernels)
    with open(args.json, "w") as f:
        json.dump({"seed": args.seed, "count": args.count, "max_flops": args.max_flops, "capped": capped,
                   "streaming": {t: {"gbs": s[0], "limit": s[1], "why": s[2]} for t, s in streams.items()},
                   "summary": stats, "rank": rank_stats, "rows": rows}, f, indent=1)
        f.write("\n")
    if args.report:
        replace_section(os.path.join(HERE, "REPORT.md"), "shape-sweep", report_lines(args, sections, capped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
