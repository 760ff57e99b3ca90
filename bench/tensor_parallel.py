#!/usr/bin/env python3
"""Tensor parallelism on the simulator (issue 16, part 2): TP = 1 vs 2 on trn1
(and 4 on trn2) for

  * DeepSeek-V3 up_proj (examples/deepseek_v3_up_proj.tsl) at M = 1K .. 32K;
  * the six paper models' SwiGLU MLPs at M = 640 (the paper's setting),
    factorised at compression ratios 0.05 and 0.2 (tile-aligned ranks, as
    `tessel factorize` chooses them; bench/mlp_table.py has the rank rule);

all at -O2, timing-only: latency, the per-core MFU (AllReduce included), the
AllReduce's share of the latency, and the scaling efficiency T1 / (N * TN).
Writes bench/tensor_parallel.json and bench/tensor_parallel.md.

Usage: bench/tensor_parallel.py [--tessel build/bin/tessel] [--jobs 2] [--quick]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from mlp_table import MODELS, aligned_rank, kernel_source  # noqa: E402

DEEPSEEK = os.path.join(ROOT, "examples", "deepseek_v3_up_proj.tsl")


def run(tessel, path, m, tp, target):
    cmd = [tessel, "run", path, "-D", f"M={m}", "-O2", "--timing-only", "--report=json",
           f"--target={target}"] + (["--tp", str(tp)] if tp > 1 else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[0]}
    r = json.loads(out.stdout)
    if tp == 1:
        return {"latency_us": r["latency_us"], "mfu": r["mfu"], "allreduce_share": 0.0}
    return {"latency_us": r["latency_us"], "mfu": r["mfu"],
            "allreduce_share": r["tensor_parallel"]["allreduce_share"],
            "allreduce_us": r["tensor_parallel"]["allreduce"]["us"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--quick", action="store_true", help="M = 1024 and one model only")
    ap.add_argument("--out", default=os.path.join(HERE, "tensor_parallel"))
    args = ap.parse_args()
    rows = [1024] if args.quick else [1024, 2048, 4096, 8192, 16384, 32768]
    models = MODELS[:1] if args.quick else MODELS
    degrees = [("trn1", [1, 2]), ("trn2", [1, 2, 4])]

    with tempfile.TemporaryDirectory() as tmp:
        cases = []  # (table, label, path, m, target, tps)
        for target, tps in degrees:
            for m in rows:
                cases.append(("deepseek", "DeepSeek-V3 up_proj", DEEPSEEK, m, target, tps))
        for name, h, i in models:
            for ratio in (0.05, 0.2):
                rank = aligned_rank(h, i, ratio)
                path = os.path.join(tmp, f"{name}-{ratio}.tsl")
                with open(path, "w") as f:
                    f.write(kernel_source(h, i, rank))
                for target, tps in degrees:
                    cases.append(("mlp", f"{name} MLP r{rank} ({ratio})", path, 640, target, tps))
        jobs = [(c, tp) for c in cases for tp in c[5]]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(lambda j: run(args.tessel, j[0][2], j[0][3], j[1], j[0][4]), jobs))
    by = {(id(c), tp): r for (c, tp), r in zip(jobs, results)}

    lines, out = [], []
    head = "| target | kernel | M | TP | latency us | MFU per core | AllReduce share | scaling T1/(N TN) |"
    lines += [head, "|---|---|---|---|---|---|---|---|"]
    for c in cases:
        table, label, _, m, target, tps = c
        t1 = by[(id(c), 1)]
        for tp in tps:
            r = by[(id(c), tp)]
            if "error" in r or "error" in t1:
                lines.append(f"| {target} | {label} | {m} | {tp} | error: {r.get('error') or t1.get('error')} | | | |")
                continue
            eff = t1["latency_us"] / (tp * r["latency_us"])
            out.append({"table": table, "kernel": label, "M": m, "target": target, "tp": tp, **r,
                        "scaling_efficiency": eff})
            lines.append(f"| {target} | {label} | {m} | {tp} | {r['latency_us']:.1f} | {100 * r['mfu']:.1f}% | "
                         f"{100 * r['allreduce_share']:.1f}% | {eff:.2f} |")
    effs = [r["scaling_efficiency"] for r in out if r["tp"] > 1]
    summary = f"mean scaling efficiency over the TP > 1 rows: {sum(effs) / len(effs):.2f}" if effs else ""
    text = "\n".join(lines + ["", summary])
    print(text)
    with open(args.out + ".json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    with open(args.out + ".md", "w") as f:
        f.write("# Tensor parallelism (bench/tensor_parallel.py, -O2, timing-only)\n\n" + text + "\n")


if __name__ == "__main__":
    main()
