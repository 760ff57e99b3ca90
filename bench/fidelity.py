#!/usr/bin/env python3
"""The fidelity set: tessel's simulator against measured Trainium figures.

Runs every kernel of bench/fidelity/measured.csv (shared/FIDELITY.md: NKI kernels
written for this project from the published schedules, and small .tasm
microbenchmarks) with `tessel run --timing-only` on the row's target, predicting
the latency the row measured (--latency=device or benchmark), and prints per
point simulated vs measured, per-engine busy time and DMA bytes where published,
and a last line `WMAPE <n>% over <k> points`. Rows whose kernel file is missing
are reported as skipped. Nothing is fitted: the default targets are used.

  python3 bench/fidelity.py [--build build] [--csv FILE] [--report] [--calibrate TARGET[,TARGET] [--params a,b]]

--report writes the table into bench/REPORT.md (its own marked section, which
bench/paper_tables.py keeps); --calibrate TARGET also runs `tessel calibrate`
on that target's points whose kernels exist and prints its leave-one-out error
(--params: only those free parameters, e.g. the opt-in TensorE throttle ones).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

from report_sections import replace_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = ["tensor", "vector", "scalar", "gpsimd", "dma"]


def read_rows(path):
    with open(path) as f:
        lines = [l for l in f if l.strip() and not l.lstrip().startswith("#")]
    return list(csv.DictReader(lines))


def kernel_path(csv_path, row):
    return os.path.join(os.path.dirname(os.path.abspath(csv_path)), row["kernel"])


def run_args(row):
    """The row's defines as `tessel run` flags: -D for .tsl, --arg for .py."""
    flag = "--arg" if row["kernel"].endswith(".py") else "-D"
    args = []
    for d in (row.get("defines") or "").replace(";", " ").split():
        args += [flag, d]
    return args


def simulate(tessel, path, row):
    cmd = [tessel, "run", path, "--timing-only", "--report=json", "--latency=" + row["measured"]]
    if row.get("target"):
        cmd += ["--target", row["target"]]
    out = subprocess.run(cmd + run_args(row), capture_output=True, text=True)
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(out.stdout), None


def err_pct(sim, meas):
    return 100.0 * (sim - meas) / meas


def evaluate(tessel, csv_path):
    points, skipped, failed = [], [], []
    for row in read_rows(csv_path):
        path = kernel_path(csv_path, row)
        if not os.path.exists(path):
            skipped.append((row, "kernel " + row["kernel"] + " missing"))
            continue
        rep, err = simulate(tessel, path, row)
        if rep is None:
            failed.append((row, err))
            continue
        points.append((row, rep))
    return points, skipped, failed


def render(points, skipped, failed):
    lines = ["| point | target | measured | measured (us) | simulated (us) | error | ratio |",
             "|---|---|---|---:|---:|---:|---:|"]
    detail = []
    abs_err = total = 0.0
    worst = 1.0
    tensor_errs = []
    timed = 0
    for row, rep in points:
        if row.get("latency_us"):  # rows that publish only engine busy times have none
            meas, sim = float(row["latency_us"]), rep["latency_us"]
            abs_err += abs(sim - meas)
            total += meas
            timed += 1
            ratio = max(sim / meas, meas / sim)
            worst = max(worst, ratio)
            lines.append(f"| {row['name']} | {row['target']} | {row['measured']} | {meas:.1f} | {sim:.1f} | "
                         f"{err_pct(sim, meas):+.1f} % | {ratio:.2f}x |")
        for e in ENGINES:
            m = row.get(e + "_us")
            if m:
                s = rep["engines"][e]["busy_us"]
                detail.append(f"| {row['name']} | {e} busy (us) | {float(m):.1f} | {s:.1f} | "
                              f"{err_pct(s, float(m)):+.1f} % |")
                if e == "tensor":
                    tensor_errs.append(abs(err_pct(s, float(m))))
        if row.get("dma_bytes"):
            m = float(row["dma_bytes"])
            s = rep["hbm_read_bytes"] + rep["hbm_write_bytes"]
            detail.append(f"| {row['name']} | DMA bytes | {m:.0f} | {s:.0f} | {err_pct(s, m):+.1f} % |")
    if detail:
        lines += ["", "| point | quantity | measured | simulated | error |", "|---|---|---:|---:|---:|"] + detail
    notes = []
    for row, why in skipped:
        notes.append(f"- skipped {row['name']}: {why}")
    for row, why in failed:
        notes.append(f"- FAILED {row['name']}: {why}")
    if notes:
        lines += [""] + notes
    summary = []
    if points:
        summary.append(f"Every point within {worst:.2f}x of its measurement"
                       + (f"; tensor-engine busy within {max(tensor_errs):.1f} %" if tensor_errs else "") + ".")
    wmape = 100.0 * abs_err / total if total else 0.0
    summary.append(f"WMAPE {wmape:.1f}% over {timed} points")
    return lines, summary


def calibrate(tessel, csv_path, target, params=None):
    """Runs `tessel calibrate` on the rows of `target` whose kernels exist; returns its output."""
    rows = [r for r in read_rows(csv_path)
            if r.get("target") == target and os.path.exists(kernel_path(csv_path, r))]
    if len(rows) < 2:
        return f"calibrate {target}: fewer than 2 points with kernels"
    with tempfile.TemporaryDirectory() as tmp:
        sub = os.path.join(tmp, "points.csv")
        with open(sub, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                r = dict(r)
                r["kernel"] = kernel_path(csv_path, r)
                w.writerow(r)
        cmd = [tessel, "calibrate", sub, "--target", target] + (["--params=" + params] if params else [])
        out = subprocess.run(cmd, capture_output=True, text=True)
        return (out.stdout + out.stderr).strip()


LEFT_OUT = re.compile(r"left out (\S+)\s+predicted\s+([0-9.]+) us, measured\s+([0-9.]+) us")


def pooled_leave_one_out(outputs):
    """The leave-one-out WMAPE over every target's points together (each point
    predicted by the fit of its own target's other points)."""
    pts = [(float(p), float(m)) for out in outputs for _, p, m in LEFT_OUT.findall(out)]
    err = sum(abs(p - m) for p, m in pts)
    total = sum(m for _, m in pts)
    return f"leave-one-out WMAPE {100 * err / total:.1f}% over {len(pts)} points (all targets)" if total else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--csv", default=os.path.join(ROOT, "bench", "fidelity", "measured.csv"))
    ap.add_argument("--report", action="store_true", help="write the table into bench/REPORT.md")
    ap.add_argument("--calibrate", metavar="TARGET[,TARGET]",
                    help="also run tessel calibrate on each TARGET's points; with several, the pooled leave-one-out WMAPE")
    ap.add_argument("--params", metavar="a,b", help="with --calibrate: fit only these free parameters")
    a = ap.parse_args()
    tessel = os.path.join(a.build, "bin", "tessel")
    points, skipped, failed = evaluate(tessel, a.csv)
    table, summary = render(points, skipped, failed)
    print("\n".join(table))
    if a.calibrate:
        outputs = [calibrate(tessel, a.csv, t, a.params) for t in a.calibrate.split(",")]
        for out in outputs:
            print("\n" + out)
        if len(outputs) > 1:
            print("\n" + pooled_leave_one_out(outputs))
    if a.report:
        body = ["## Fidelity: simulated vs measured on hardware", "",
                "Generated by `python3 bench/fidelity.py --report` from `bench/fidelity/measured.csv`",
                "(figures and sources: shared/FIDELITY.md); default targets, nothing fitted; each point",
                "predicts the latency its source measured (device timeline or benchmark loop).", ""]
        replace_section(os.path.join(ROOT, "bench", "REPORT.md"), "fidelity", body + table + [""] + summary)
    print("\n".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
