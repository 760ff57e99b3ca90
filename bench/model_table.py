#!/usr/bin/env python3
"""End-to-end speedup of the factorised MLP, six LLMs (issue 37).

For each of the paper's six models (examples/models/*.json) and compression
ratio in {0.05, 0.1, 0.2}, `tessel model CONFIG --tp 2 --target trn1 --ratio R`
at the bench's setting (batch 1, seq 640: Figure 8's setting; 128 decode
steps): prefill, decode and end-to-end speedup of the factorised model over
the dense one, beside the paper's Table 4 average end-to-end speedup and the
error of each. Ratio 0 is the dense model itself (1.00 on both sides). The
same at --tp 1 is printed beside it: the split of the factorised MLP over two
cores is what separates the two (docs/model.md). Then whether the predicted
speedup rises with the ratio for every model, and Figure 8's setting
(Llama-3.2-1B, seq 640, TP 2, ratio 0.05) in absolute latency.

What tessel models is the embedding gather, the projections, attention, the
MLP, the norms and residual adds, the AllReduces and the launch term; rotary
embeddings and q/k norms are not modelled (docs/model.md). Attention is
tessel's -O2 kernel, not yet the fused one (issue 36), and takes a large
share of each layer.

Writes bench/model_table.json and bench/model_table.md; --report also writes
the table into bench/REPORT.md (its own marked section, which
bench/paper_tables.py keeps).

Usage: bench/model_table.py [--tessel build/bin/tessel] [--jobs 2] [--report]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from report_sections import replace_section  # noqa: E402

# (config file, the paper's name)
MODELS = [("llama-3.2-1b", "Llama-3.2-1B"), ("llama-3.2-3b", "Llama-3.2-3B"), ("llama-3.1-8b", "Llama-3.1-8B"),
          ("qwen3-1.7b", "Qwen-3-1.7B"), ("qwen3-4b", "Qwen-3-4B"), ("qwen3-8b", "Qwen-3-8B")]
RATIOS = [0.05, 0.1, 0.2]
# The paper's Table 4, "Avg. Speedup" (end-to-end, TP 2), §5.4.2 (docs/paper.md).
PAPER_TABLE4 = {
    "llama-3.2-1b": {0.05: 1.19, 0.1: 1.28, 0.2: 1.63},
    "llama-3.2-3b": {0.05: 1.22, 0.1: 1.34, 0.2: 1.78},
    "llama-3.1-8b": {0.05: 1.24, 0.1: 1.37, 0.2: 1.69},
    "qwen3-1.7b": {0.05: 1.29, 0.1: 1.41, 0.2: 1.74},
    "qwen3-4b": {0.05: 1.17, 0.1: 1.25, 0.2: 1.67},
    "qwen3-8b": {0.05: 1.18, 0.1: 1.28, 0.2: 1.65},
}
SEQ, BATCH, DECODE, TP, TARGET = 640, 1, 128, 2, "trn1"


def model(tessel, name, ratio, tp):
    cmd = [tessel, "model", os.path.join(ROOT, "examples", "models", name + ".json"), "--tp", str(tp),
           "--target", TARGET, "--seq", str(SEQ), "--batch", str(BATCH), "--decode-tokens", str(DECODE),
           "--ratio", str(ratio), "--report=json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", action="store_true", help="write the table into bench/REPORT.md")
    args = ap.parse_args()

    jobs = [(name, ratio, tp) for name, _ in MODELS for ratio in RATIOS for tp in (TP, 1)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(jobs, pool.map(lambda j: model(args.tessel, *j), jobs)))

    table = [f"| model | ratio | rank (gate, up, down) | prefill | decode | end to end | paper Table 4 | "
             f"error | end to end at TP 1 |", "|---|---|---|---|---|---|---|---|---|"]
    records, errors, notes = [], [], []
    for name, paper_name in MODELS:
        table.append(f"| {paper_name} | 0 (dense) | - | 1.00 | 1.00 | 1.00 | 1.00 | - | 1.00 |")
        previous = None
        for ratio in RATIOS:
            r, r1 = results[(name, ratio, TP)], results[(name, ratio, 1)]
            s, s1 = r["speedup"], r1["speedup"]
            ranks = r["variants"][1]["ranks"]
            rank = (ranks["gate_proj"], ranks["up_proj"], ranks["down_proj"])
            paper = PAPER_TABLE4[name][ratio]
            error = s["end_to_end"] - paper
            errors.append(abs(error) / paper)
            table.append(f"| {paper_name} | {ratio} | {rank[0]}, {rank[1]}, {rank[2]} | {s['prefill']:.3f} | "
                         f"{s['decode']:.3f} | {s['end_to_end']:.3f} | {paper:.2f} | {error:+.3f} "
                         f"({100 * error / paper:+.0f}%) | {s1['end_to_end']:.3f} |")
            records.append({"model": name, "ratio": ratio, "ranks": ranks, "speedup": s, "speedup_tp1": s1,
                            "paper_end_to_end": paper, "error": error})
            if previous:
                prev_ratio, prev_rank, prev_speedup = previous
                if s["end_to_end"] < prev_speedup:
                    notes.append(f"{paper_name}: the speedup falls from ratio {prev_ratio} to {ratio} "
                                 f"({prev_speedup:.3f} to {s['end_to_end']:.3f})")
                elif rank == prev_rank:
                    notes.append(f"{paper_name}: ratios {prev_ratio} and {ratio} give the same tile-aligned "
                                 f"rank {rank[0]} (paper eq. 5 rounds both to {rank[0] // 128} tiles of 128), "
                                 f"so the same speedup")
            previous = (ratio, rank, s["end_to_end"])
    rises = not any("falls" in n for n in notes)
    fig8 = results[("llama-3.2-1b", 0.05, TP)]
    dense, fact = fig8["variants"]
    summary = [
        f"Predicted end-to-end speedup {'never falls' if rises else 'FALLS'} as the ratio rises, for every model"
        + (":" if notes else "."),
        *[f"* {n}" for n in notes],
        "",
        f"Mean |error| against Table 4: {100 * sum(errors) / len(errors):.0f}% over {len(errors)} points.",
        "",
        f"Figure 8's setting (Llama-3.2-1B, seq {SEQ}, TP {TP}, ratio 0.05), modelled parts: time to first "
        f"token {dense['prefill']['total_us'] / 1e3:.2f} ms dense, {fact['prefill']['total_us'] / 1e3:.2f} ms "
        f"factorised; time per output token {dense['decode']['total_us'] / 1e3:.2f} ms dense, "
        f"{fact['decode']['total_us'] / 1e3:.2f} ms factorised. The paper gives latency against the contest's "
        f"NKI baselines, not these parts alone, so there is no figure to set beside them.",
    ]
    dense_layer = dense["prefill"]["per_layer"]
    explanation = [
        "Why tessel's figures are not the paper's:",
        "",
        "* **Attention is the same in both variants and far from its bound.** -O2 derives the fused kernel",
        "  (no S x S tensor in HBM), but runs several times its bound (bench/REPORT.md, \"Attention\";",
        f"  issue 36). It takes {dense_layer['attention_us']:.0f} of {dense_layer['total_us']:.0f} us "
        f"of each dense Llama-3.2-1B layer at prefill ({100 * dense_layer['attention_us'] / dense_layer['total_us']:.0f}%),",
        "  so it dilutes every speedup towards 1.00 more than the hardware's attention would. It cannot",
        "  explain the paper's larger speedups.",
        "* **The split of the factorised MLP over two cores.** compiler/TensorParallel splits a factorised",
        "  MLP by its intermediate columns (Vg, Vu column-wise, Ud row-wise) and replicates Ug, Uu and Vd:",
        "  every core computes X @ Ug, X @ Uu and the partial result @ Vd in full. At these ratios the",
        "  replicated factors cost more than factorising saves (Llama-3.2-1B at 0.05: 28.3 M weights per",
        "  core against the dense MLP's 25.2 M), so at TP 2 the factorised MLP is slower than the dense",
        "  one; the TP 1 column shows the same models without the split. The paper's Figure 4 partitions each pair of factors (U column-wise, V row-wise); tessel",
        "  has no such plan for an MLP whose activation sits between the projections.",
        "* **The baseline.** The paper's dense model runs the NKI matmul kernel; tessel's dense MLP is its",
        "  own -O2 kernel (the gated result stays on chip), not a chain of separate matmuls. A stronger",
        "  dense baseline leaves less for factorisation to win.",
        "* **The rank rule.** Paper eq. 5 rounds each rank to whole tiles of 128; at 0.05 the ranks keep",
        "  92-97% of the dense MLP's FLOPs and weight bytes, so on one core the MLP alone cannot run 1.2x",
        "  faster unless the dense kernel is far less efficient than the factorised one.",
    ]
    intro = [
        "## End-to-end speedup of the factorised MLP (issue 37)",
        "",
        f"Generated by `python3 bench/model_table.py --report`: `tessel model examples/models/MODEL.json --tp {TP} "
        f"--target {TARGET} --seq {SEQ} --batch {BATCH} --decode-tokens {DECODE} --ratio R`, -O2, each kernel "
        "simulated timing-only. Speedup = dense / factorised time of the modelled parts (Q/K/V and O "
        "projections, the MLP, the AllReduces, the launch term, the LM head); end to end = prefill + "
        f"{DECODE} decode steps. The paper's column is Table 4's average end-to-end speedup; error = tessel - "
        "paper.",
        "",
    ]
    lines = intro + table + [""] + summary + [""] + explanation
    with open(os.path.join(HERE, "model_table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(HERE, "model_table.json"), "w") as f:
        json.dump({"setting": {"seq": SEQ, "batch": BATCH, "decode_tokens": DECODE, "tp": TP, "target": TARGET},
                   "rows": records}, f, indent=1)
        f.write("\n")
    if args.report:
        replace_section(os.path.join(HERE, "REPORT.md"), "model", lines)
    print("\n".join(table + [""] + summary))
    return 0 if rises else 1


if __name__ == "__main__":
    sys.exit(main())
