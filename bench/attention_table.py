#!/usr/bin/env python3
"""The attention table of issue 36: fused attention prefill and decode attention
on the simulator (timing-only), against their bounds.

Prefill: one head of `softmax(Q @ K.T * scale) @ V` (full, and causal with the
mask from indices) at S in {2048, 4096, 8192, 16384} and head dims 64 and
128, at -O0 and -O2, on trn1 and trn2. Its bound is the largest of
  * the matmul time: 4 S^2 D FLOPs (Q @ K.T and P @ V) at the target's peak;
  * the exp time: S^2 exponentials on ScalarE (partitions x
    scalar_elems_per_cycle per cycle at scalar_clock_ghz, from the target);
  * the HBM time: Q, K and V read once and O written once (4 S D bf16);
for the causal form half of the matmul FLOPs and of the exps (the masked half
skipped, at element granularity). The table says whether an S x S tensor
goes through HBM at -O2 (intermediate traffic of at least S^2 bf16).

Decode: examples/decode_attention.tsl (2 KV heads of D = 128, 4 query heads
each, one query row per head) at KV lengths L in {2048, ..., 16384}: -O0 and
-O2 against the time to stream K and V once (2 x 2 x L x 128 bf16 at the
target's HBM bandwidth).

Writes bench/attention_table.json and bench/attention_table.md; --report also
writes the tables into bench/REPORT.md (its own marked section, which
bench/paper_tables.py keeps). --quick: S and L in {2048, 4096}, trn1 only.

Usage: bench/attention_table.py [--tessel build/bin/tessel] [--jobs 2] [--quick] [--report]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from report_sections import replace_section  # noqa: E402

LENGTHS = [2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 128]
DECODE = os.path.join(ROOT, "examples", "decode_attention.tsl")
DECODE_KV_HEADS, DECODE_DIM = 2, 128
LAYER = os.path.join(ROOT, "examples", "llama_decoder_layer.tsl")
LAYER_ROWS = [130, 647, 2048]


def prefill_source(d, causal):
    scores = f"Q @ K.T * {1 / d ** 0.5!r}"
    if causal:
        scores = f"causal({scores})"
    return (f"const S = 2048\n"
            f"kernel attention(Q: bf16[S, {d}], K: bf16[S, {d}], V: bf16[S, {d}]) -> bf16[S, {d}] {{\n"
            f"  return softmax({scores}) @ V\n}}\n")


def simulate(tessel, path, name, value, opt, target):
    cmd = [tessel, "run", path, "-D", f"{name}={value}", f"-O{opt}", "--timing-only", "--report=json",
           f"--target={target}"]
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[0] if out.stderr.strip() else "failed"}
    report = json.loads(out.stdout)
    report["wall_seconds"] = seconds
    return report


def target_fields(tessel, target):
    out = subprocess.run([tessel, "run", "--dump-target", f"--target={target}"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tessel run --dump-target --target={target}: {out.stderr.strip()}")
    fields = json.loads(out.stdout)
    return fields.get("fields", fields)


def prefill_bound(t, peak_flops, s, d, causal):
    """(bound, matmul, exp, hbm) in us."""
    share = 0.5 if causal else 1.0
    matmul = share * 4 * s * s * d / peak_flops
    exp_rate = t["sbuf_partitions"] * t["scalar_elems_per_cycle"] * t["scalar_clock_ghz"] * 1e9
    exp = share * s * s / exp_rate
    hbm = 4 * s * d * 2 / (t["hbm_bandwidth_gbs"] * 1e9)
    parts = [x * 1e6 for x in (matmul, exp, hbm)]
    return (max(parts), *parts)


def layer_consts():
    """The `const NAME = VALUE` lines of the decoder-layer example."""
    consts = {}
    with open(LAYER) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "const" and parts[2] == "=":
                consts[parts[1]] = int(parts[3])
    return consts


def layer_bound(t, peak_flops, m, c):
    """The sum of the decoder layer's parts' bounds in us, each part the larger of its FLOPs at
    peak and its minimal HBM traffic (inputs and weights read, result written once) at the
    HBM bandwidth: three RMSNorms, the Q, K, V and O projections, causal attention per
    query head (prefill_bound), two residual adds and the SwiGLU MLP."""
    bw = t["hbm_bandwidth_gbs"] * 1e9

    def part(flops, elems):
        return max(flops / peak_flops, elems * 2 / bw) * 1e6

    dm, h, hkv, d, hd, f = c["DM"], c["H"], c["HKV"], c["D"], c["HD"], c["F"]
    norms = 3 * part(0, 2 * m * dm + dm)
    q = part(2 * m * dm * d * h, m * dm + h * dm * d + m * h * d)
    kv = 2 * part(2 * m * dm * d * hkv, m * dm + hkv * dm * d + m * hkv * d)
    attention = h * prefill_bound(t, peak_flops, m, d, True)[0]
    o = part(2 * m * hd * dm, m * hd + hd * dm + m * dm)
    residuals = 2 * part(0, 3 * m * dm)
    mlp = part(6 * m * dm * f, 2 * m * dm + 3 * dm * f)
    return norms + q + kv + attention + o + residuals + mlp


def fmt_row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--report", action="store_true", help="write the tables into bench/REPORT.md")
    ap.add_argument("--out", default=os.path.join(HERE, "attention_table"))
    args = ap.parse_args()
    lengths = LENGTHS[:2] if args.quick else LENGTHS
    targets = ["trn1"] if args.quick else ["trn1", "trn2"]
    fields = {t: target_fields(args.tessel, t) for t in targets}

    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for d in HEAD_DIMS:
            for causal in (False, True):
                path = os.path.join(tmp, f"attention-{d}-{'causal' if causal else 'full'}.tsl")
                with open(path, "w") as f:
                    f.write(prefill_source(d, causal))
                jobs += [(("prefill", d, causal, s, t, opt), path, "S", s)
                         for t in targets for s in lengths for opt in (0, 2)]
        jobs += [(("decode", DECODE_DIM, False, l, t, opt), DECODE, "L", l)
                 for t in targets for l in lengths for opt in (0, 2)]
        jobs += [(("layer", 0, True, m, t, opt), LAYER, "M", m)
                 for t in targets for m in LAYER_ROWS for opt in (0, 2)]

        def run(job):
            key, path, name, value = job
            return simulate(args.tessel, path, name, value, key[5], key[4])

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = dict(zip([j[0] for j in jobs], pool.map(run, jobs)))

    rows, prefill, decode, layer = [], [], [], []
    consts = layer_consts()
    for (kind, d, causal, s, t, opt), r in results.items():
        if opt != 2:
            continue
        o0 = results[(kind, d, causal, s, t, 0)]
        row = {"kind": kind, "target": t, "D": d, "causal": causal, "S" if kind == "prefill" else "L": s}
        if "error" in r or "error" in o0:
            row["error"] = r.get("error") or o0.get("error")
            rows.append(row)
            {"prefill": prefill, "decode": decode, "layer": layer}[kind].append(
                fmt_row([t, d, s, "error: " + row["error"]]))
            continue
        row.update({"o0_us": o0["latency_us"], "o2_us": r["latency_us"],
                    "o0_compile_run_s": o0["wall_seconds"], "o2_compile_run_s": r["wall_seconds"],
                    "intermediate_bytes": r["traffic"]["intermediates"], "spill_bytes": r["traffic"]["spill"]})
        if kind == "prefill":
            bound, mm, ex, hbm = prefill_bound(fields[t], r["peak_flops"], s, d, causal)
            row.update({"bound_us": bound, "matmul_us": mm, "exp_us": ex, "hbm_us": hbm,
                        "s_by_s_in_hbm": r["traffic"]["intermediates"] >= 2 * s * s})
            prefill.append(fmt_row([
                t, d, "causal" if causal else "full", s, f"{row['o0_us']:.0f}", f"{row['o2_us']:.0f}",
                f"{bound:.0f} ({'matmul' if bound == mm else 'exp' if bound == ex else 'HBM'})",
                f"{row['o0_us'] / bound:.2f}", f"{row['o2_us'] / bound:.2f}", f"{row['o0_us'] / row['o2_us']:.2f}",
                "yes" if row["s_by_s_in_hbm"] else "no", f"{row['intermediate_bytes'] / 1e6:.0f}",
                f"{row['o2_compile_run_s']:.2f}"]))
        elif kind == "layer":
            bound = layer_bound(fields[t], r["peak_flops"], s, consts)
            row.update({"bound_us": bound})
            layer.append(fmt_row([
                t, s, f"{row['o0_us']:.1f}", f"{row['o2_us']:.1f}", f"{bound:.1f}",
                f"{row['o0_us'] / bound:.2f}", f"{row['o2_us'] / bound:.2f}",
                f"{row['intermediate_bytes'] / 1e6:.2f}", f"{row['o2_compile_run_s']:.2f}"]))
        else:
            stream = 2 * DECODE_KV_HEADS * s * DECODE_DIM * 2 / (r["hbm_bandwidth_gbs"] * 1e9) * 1e6
            row.update({"stream_us": stream})
            decode.append(fmt_row([
                t, s, f"{row['o0_us']:.1f}", f"{row['o2_us']:.1f}", f"{stream:.1f}",
                f"{row['o0_us'] / stream:.2f}", f"{row['o2_us'] / stream:.2f}",
                f"{row['intermediate_bytes'] / 1e6:.2f}", f"{row['o2_compile_run_s']:.2f}"]))
        rows.append(row)

    ok = [r for r in rows if "error" not in r]
    pre = [r for r in ok if r["kind"] == "prefill"]
    dec = [r for r in ok if r["kind"] == "decode"]
    lay = [r for r in ok if r["kind"] == "layer"]
    summary = []
    if pre:
        summary += [
            f"prefill -O2 within 1.25x of its bound: {sum(r['o2_us'] <= 1.25 * r['bound_us'] for r in pre)} of "
            f"{len(pre)}; best {min(r['o2_us'] / r['bound_us'] for r in pre):.2f}x, worst "
            f"{max(r['o2_us'] / r['bound_us'] for r in pre):.2f}x",
            f"prefill -O2 writing an S x S tensor to HBM: {sum(r['s_by_s_in_hbm'] for r in pre)} of {len(pre)}",
        ]
        at4k = [r["o0_us"] / r["o2_us"] for r in pre if r["S"] == 4096]
        if at4k:
            summary.append(f"prefill -O0 / -O2 at S = 4096: {min(at4k):.2f}x to {max(at4k):.2f}x")
        slower = [r for r in pre + dec if r["o2_us"] > r["o0_us"]]
        summary.append(f"-O2 slower than -O0: {len(slower)} of {len(pre) + len(dec)}")
    if dec:
        summary.append(f"decode -O2 within 1.2x of streaming K and V: {sum(r['o2_us'] <= 1.2 * r['stream_us'] for r in dec)} "
                       f"of {len(dec)}; worst {max(r['o2_us'] / r['stream_us'] for r in dec):.2f}x")
    if lay:
        summary.append(f"decoder layer -O2 within 1.2x of the sum of its parts' bounds: "
                       f"{sum(r['o2_us'] <= 1.2 * r['bound_us'] for r in lay)} of {len(lay)}; best "
                       f"{min(r['o2_us'] / r['bound_us'] for r in lay):.2f}x, worst "
                       f"{max(r['o2_us'] / r['bound_us'] for r in lay):.2f}x")
    summary.append(f"errors: {len(rows) - len(ok)}")

    pre_head = ["| target | D | mask | S | -O0 us | -O2 us | bound us (by) | O0/bound | O2/bound | O0/O2 | "
                "S x S in HBM | interm. MB | -O2 s |", "|" + "---|" * 13]
    dec_head = ["| target | L | -O0 us | -O2 us | stream K, V us | O0/stream | O2/stream | interm. MB | -O2 s |",
                "|" + "---|" * 9]
    layer_head = ["| target | M | -O0 us | -O2 us | sum of parts' bounds us | O0/bound | O2/bound | interm. MB | "
                  "-O2 s |", "|" + "---|" * 9]
    intro = [
        "## Attention: fused prefill and decode against their bounds (issue 36)",
        "",
        "Generated by `python3 bench/attention_table.py --report` (timing-only). Prefill: one head of "
        "`softmax(Q @ K.T / sqrt(D)) @ V` (full, and causal from indices); bound = the largest of the matmul "
        "time (4 S^2 D FLOPs at peak), the exp time (S^2 on ScalarE at the target's rate) and the HBM time "
        "(Q, K, V read and O written once); causal counts half the FLOPs and exps. \"S x S in HBM\": the "
        "-O2 kernel's intermediate traffic is at least S^2 bf16. \"-O2 s\": wall time of `tessel run -O2` "
        "(compile and simulate) on the bench machine. Decode: `examples/decode_attention.tsl` (2 KV heads of "
        "128, 4 query rows each) against the time to stream K and V once. Decoder layer: "
        "`examples/llama_decoder_layer.tsl` (its own small widths: hidden 256, 4 query and 2 KV heads of "
        "64, MLP 512; causal) against the sum of its parts' bounds (each part's FLOPs at peak or its "
        "minimal HBM traffic, whichever is larger: three RMSNorms, the Q, K, V and O projections, "
        "attention per query head as above, two residual adds, the MLP).",
        "",
    ]
    lines = (intro + pre_head + prefill + [""] + dec_head + decode + [""] + layer_head + layer + [""] +
             summary)
    text = "\n".join(lines)
    print(text)
    with open(args.out + ".json", "w") as f:
        json.dump({"rows": rows, "summary": summary}, f, indent=1)
        f.write("\n")
    with open(args.out + ".md", "w") as f:
        f.write(text + "\n")
    if args.report:
        replace_section(os.path.join(HERE, "REPORT.md"), "attention", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
