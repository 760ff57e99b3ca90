#!/usr/bin/env python3
"""The MLP table of issue 11: the SwiGLU MLP blocks of the six models the paper
evaluates, dense and factorised, on the simulator (timing-only).

For each model (public hidden / intermediate sizes), each variant (dense; every
weight factorised at compression ratio 0.05 and 0.2 with the tile-aligned rank
of paper eq. 4-5, as `tessel factorize` chooses it), each M in
{1, 32, 128, 1024, 4096, 16384} and each target (trn1, trn2):
latency at -O0 and -O2, the roofline bound (max of useful FLOPs / peak and
minimal traffic / bandwidth, minimal traffic = X + weights + output once, bf16),
-O2 / bound, MFU at -O2, HBM traffic by purpose at -O2, SBUF peak, the cost
model's estimate of the -O2 kernel (what select-blocks and the tuner rank by)
beside the simulated latency, and the summary lines against the issue's targets:
  * -O2 within 1.15x of the bound on every shape with M >= 1024, 1.3x for M <= 128;
  * -O2 at least 2x faster than -O0 on trn1, averaged over the M >= 1024 shapes;
  * no intermediate HBM traffic at -O2 but the transposed hand-off of the
    two-kernel form ("kernels": 1 when nothing goes through HBM, 2 when exactly
    h^T is written and read once, "unfused" otherwise);
  * the cost model within 10% of the simulator on every shape;
  * per model, one MLP layer dense vs factorised at -O2.
Kernels are generated into a temporary directory. Writes bench/mlp_table.json
and bench/mlp_table.md. `--quick` runs one model at M in {1, 1024} on trn1.

Usage: bench/mlp_table.py [--tessel build/bin/tessel] [--jobs 2] [--quick]
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODELS = [  # name, hidden, intermediate (the models' public configs)
    ("Llama-3.2-1B", 2048, 8192),
    ("Llama-3.2-3B", 3072, 8192),
    ("Llama-3.1-8B", 4096, 14336),
    ("Qwen3-1.7B", 2048, 6144),
    ("Qwen3-4B", 2560, 9728),
    ("Qwen3-8B", 4096, 12288),
]
ROWS = [1, 32, 128, 1024, 4096, 16384]
RATIOS = [0.05, 0.2]
TILE = 128  # the tensor engine's rows on trn1 and trn2 (pe_rows)


def aligned_rank(h, i, ratio, threshold=0.5):
    """Paper eq. 4-5, as factorize::chooseRank: the rank removing `ratio` of
    the parameters of an [h, i] weight, rounded to whole tiles."""
    tiles = (1 - ratio) * h * i / (h + i) / TILE
    whole = math.floor(tiles)
    return (whole + (1 if tiles - whole >= threshold and tiles > whole else 0)) * TILE


def kernel_source(h, i, rank):
    if rank is None:
        return (f"const M = 1024\n"
                f"kernel mlp(X: bf16[M, {h}], Wg: bf16[{h}, {i}], Wu: bf16[{h}, {i}],\n"
                f"           Wd: bf16[{i}, {h}]) -> bf16[M, {h}] {{\n"
                f"  h = silu(X @ Wg) * (X @ Wu)\n"
                f"  return h @ Wd\n}}\n")
    return (f"const M = 1024\n"
            f"kernel mlp(X: bf16[M, {h}],\n"
            f"           Ug: bf16[{h}, {rank}], Vg: bf16[{rank}, {i}],\n"
            f"           Uu: bf16[{h}, {rank}], Vu: bf16[{rank}, {i}],\n"
            f"           Ud: bf16[{i}, {rank}], Vd: bf16[{rank}, {h}]) -> bf16[M, {h}] {{\n"
            f"  h = silu(X @ Ug @ Vg) * (X @ Uu @ Vu)\n"
            f"  return h @ Ud @ Vd\n}}\n")


def useful(h, i, rank, m):
    """(FLOPs, minimal bytes) of one MLP block: 3 projections; X, weights, output once."""
    if rank is None:
        flops, weights = 2 * m * h * i * 3, 3 * h * i
    else:
        flops, weights = 2 * m * rank * (h + i) * 3, 3 * rank * (h + i)
    return flops, 2 * (m * h + weights + m * h)


def handoff_bytes(m, i):
    """The two-kernel form's hand-off: h^T [i, m] bf16 written once and read once."""
    return 2 * (m * i * 2)


def kernels_of(intermediate_bytes, m, i):
    """1 when no intermediate goes through HBM, 2 when exactly the hand-off does,
    otherwise 'unfused' (some other intermediate does)."""
    if intermediate_bytes == 0:
        return 1
    return 2 if intermediate_bytes == handoff_bytes(m, i) else "unfused"


def simulate(tessel, path, m, opt, target):
    cmd = [tessel, "run", path, "-D", f"M={m}", f"-O{opt}", "--timing-only", "--report=json",
           f"--target={target}"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[0] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout)


def predicted(tessel, path, m, target):
    """The cost model's latency estimate of the -O2 kernel: what select-blocks
    ranks by (its '[select-blocks] chosen: ... predicted X us' note)."""
    cmd = [tessel, "compile", path, "-D", f"M={m}", "-O2", "--emit=tir", f"--target={target}"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("// [select-blocks] chosen:") and "predicted " in line:
            return float(line.rsplit("predicted ", 1)[1].split()[0])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "mlp_table"))
    args = ap.parse_args()
    models = MODELS[:1] if args.quick else MODELS
    rows = [1, 1024] if args.quick else ROWS
    targets = ["trn1"] if args.quick else ["trn1", "trn2"]

    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for name, h, i in models:
            for variant, rank in [("dense", None)] + [(f"r{aligned_rank(h, i, r)} ({r})", aligned_rank(h, i, r))
                                                       for r in RATIOS]:
                path = os.path.join(tmp, f"{name}-{rank or 'dense'}.tsl")
                with open(path, "w") as f:
                    f.write(kernel_source(h, i, rank))
                for target in targets:
                    for m in rows:
                        cases.append((name, h, i, variant, rank, path, target, m))
        jobs = [(c, opt) for c in cases for opt in (0, 2, "model")]

        def run(job):
            c, opt = job
            if opt == "model":
                return predicted(args.tessel, c[5], c[7], c[6])
            return simulate(args.tessel, c[5], c[7], opt, c[6])

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(run, jobs))
    by = {(c, opt): r for (c, opt), r in zip(jobs, results)}

    rows_out, lines = [], []
    head = ("| target | model | weights | M | -O0 us | -O2 us | bound us | O2/bound | O0/O2 | MFU | "
            "interm. MB | spill MB | SBUF KiB | kernels | model us | model/sim |")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for c in cases:
        name, h, i, variant, rank, _, target, m = c
        o0, o2 = by[(c, 0)], by[(c, 2)]
        if "error" in o0 or "error" in o2:
            lines.append(f"| {target} | {name} | {variant} | {m} | error: {(o0.get('error') or o2.get('error'))} |")
            rows_out.append({"target": target, "model": name, "weights": variant, "M": m,
                             "error": o0.get("error") or o2.get("error")})
            continue
        flops, min_bytes = useful(h, i, rank, m)
        bound = max(flops / o2["peak_flops"], min_bytes / (o2["hbm_bandwidth_gbs"] * 1e9)) * 1e6
        row = {"target": target, "model": name, "hidden": h, "intermediate": i, "weights": variant,
               "rank": rank, "M": m, "o0_us": o0["latency_us"], "o2_us": o2["latency_us"],
               "bound_us": bound, "mfu": flops / (o2["peak_flops"] * o2["latency_us"] * 1e-6),
               "traffic": o2["traffic"], "sbuf_peak_kib": o2["sbuf_peak_bytes_per_partition"] / 1024,
               "kernels": kernels_of(o2["traffic"]["intermediates"], m, i),
               "model_us": by[(c, "model")]}
        rows_out.append(row)
        model = (f"{row['model_us']:.1f} | {row['model_us'] / row['o2_us']:.2f}" if row["model_us"]
                 else "- | -")
        lines.append(f"| {target} | {name} | {variant} | {m} | {row['o0_us']:.1f} | {row['o2_us']:.1f} | "
                     f"{bound:.1f} | {row['o2_us'] / bound:.2f} | {row['o0_us'] / row['o2_us']:.2f} | "
                     f"{100 * row['mfu']:.0f}% | {o2['traffic']['intermediates'] / 1e6:.1f} | "
                     f"{o2['traffic']['spill'] / 1e6:.1f} | {row['sbuf_peak_kib']:.0f} | {row['kernels']} | {model} |")

    ok = [r for r in rows_out if "error" not in r]
    big = [r for r in ok if r["M"] >= 1024]
    small = [r for r in ok if r["M"] <= 128]
    big_ok = sum(r["o2_us"] <= 1.15 * r["bound_us"] for r in big)
    small_ok = sum(r["o2_us"] <= 1.3 * r["bound_us"] for r in small)
    speed = [r["o0_us"] / r["o2_us"] for r in big if r["target"] == "trn1"]
    interm = sum(r["traffic"]["intermediates"] for r in ok if r["kernels"] == "unfused")
    two = sum(r["kernels"] == 2 for r in ok)
    summary = [
        f"-O2 within 1.15x of the bound (M >= 1024): {big_ok} of {len(big)}"
        + (f"; worst {max(r['o2_us'] / r['bound_us'] for r in big):.2f}x" if big else ""),
        f"-O2 within 1.3x of the bound (M <= 128): {small_ok} of {len(small)}"
        + (f"; worst {max(r['o2_us'] / r['bound_us'] for r in small):.2f}x" if small else ""),
        f"-O0 / -O2 on trn1, mean over M >= 1024: {sum(speed) / len(speed):.2f}x" if speed else "no trn1 M >= 1024 rows",
        f"intermediate HBM traffic at -O2 other than a two-kernel hand-off, all shapes: {interm / 1e9:.2f} GB",
        f"one-kernel / two-kernel form at -O2: {len(ok) - two} / {two} shapes",
        f"errors: {len(rows_out) - len(ok)}",
    ]
    modelled = [r for r in ok if r["model_us"]]
    if modelled:
        err = [abs(r["model_us"] / r["o2_us"] - 1) for r in modelled]
        summary.insert(-1, f"cost model (select-blocks' estimate) within 10% of the simulator: "
                           f"{sum(e <= 0.10 for e in err)} of {len(modelled)} shapes; worst {100 * max(err):.0f}%")
    per_model = ["", "| target | model | M | dense -O2 us | " + " | ".join(f"ratio {r} -O2 us" for r in RATIOS) + " |",
                 "|---|---|---|---|" + "---|" * len(RATIOS)]
    for target in targets:
        for name, _, _ in models:
            for m in [r for r in rows if r >= 1024][:2]:
                sel = [r for r in ok if r["target"] == target and r["model"] == name and r["M"] == m]
                if len(sel) == 1 + len(RATIOS):
                    per_model.append(f"| {target} | {name} | {m} | " + " | ".join(f"{r['o2_us']:.1f}" for r in sel) + " |")
    text = "\n".join(lines + [""] + summary + per_model)
    print(text)
    with open(args.out + ".json", "w") as f:
        json.dump({"rows": rows_out, "summary": summary}, f, indent=1)
        f.write("\n")
    with open(args.out + ".md", "w") as f:
        f.write("# MLP table (bench/mlp_table.py, timing-only)\n\n" + text + "\n")


if __name__ == "__main__":
    main()
