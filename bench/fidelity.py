#!/usr/bin/env python3
"""The fidelity set: tessel's simulator against measured Trainium figures.

Runs every kernel of bench/fidelity/measured.csv (docs/measurements.md: NKI kernels
written for this project from the published schedules, and small .tasm
microbenchmarks) with `tessel run --timing-only` on the row's target, predicting
the latency the row measured (--latency=device or benchmark), and prints per
point simulated vs measured, per-engine busy time and DMA bytes where published,
and a last line `WMAPE <n>% over <k> points`. Rows whose kernel file is missing
are reported as skipped. Nothing is fitted: the default targets are used.

Each point is in-sample (it shaped the model: bench/fidelity/shaped.csv says
which rule or value was introduced while looking at its residual) or held out;
WMAPE and the worst point are printed for each set. Every point a target value
names in its provenance (`tessel run --dump-target`, "shaped_by") must be
in-sample: the script stops with an error otherwise.

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


def read_shaped(csv_path):
    """name -> why, for the points that shaped the model (shaped.csv beside the CSV)."""
    path = os.path.join(os.path.dirname(os.path.abspath(csv_path)), "shaped.csv")
    return {r["name"]: r["why"] for r in read_rows(path)} if os.path.exists(path) else {}


def check_marks(tessel, rows, shaped, targets=("trn1", "trn2")):
    """Errors (strings): a point a target value was derived from or shaped by
    that is not marked in-sample, or a mark naming no point."""
    names = {r["name"] for r in rows}
    errors = [f"shaped.csv names {n}, which measured.csv does not have" for n in sorted(set(shaped) - names)]
    for t in targets:
        out = subprocess.run([tessel, "run", "--dump-target", "--target=" + t], capture_output=True, text=True)
        if out.returncode != 0:
            errors.append(f"tessel run --dump-target --target={t} failed: {out.stderr.strip()}")
            continue
        for field, p in json.loads(out.stdout).get("_provenance", {}).items():
            for point in p.get("shaped_by", []):
                if point not in shaped:
                    errors.append(f"{t} {field} was shaped by {point}, which shaped.csv does not mark in-sample")
    return errors


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


def set_of(row, shaped):
    return "in-sample" if row["name"] in shaped else "held-out"


def wmape_line(label, pts):
    """`label: WMAPE x% over k points, worst NAME (+e%, r x)` over (name, sim, meas)."""
    if not pts:
        return f"{label}: no points"
    err = sum(abs(s - m) for _, s, m in pts)
    total = sum(m for _, _, m in pts)
    name, s, m = max(pts, key=lambda p: max(p[1] / p[2], p[2] / p[1]))
    return (f"{label}: WMAPE {100.0 * err / total:.1f}% over {len(pts)} points, worst {name} "
            f"({err_pct(s, m):+.1f} %, {max(s / m, m / s):.2f}x)")


def against_goal(held):
    """Where the held-out points stand against the goal (issue 40), in words."""
    if not held:
        return ["No held-out point: the goal cannot be judged."]
    w = 100.0 * sum(abs(s - m) for _, s, m in held) / sum(m for _, _, m in held)
    out = [n for n, s, m in held if max(s / m, m / s) > 1.5]
    met = w <= 15.0 and not out
    return [f"Goal for the held-out points: WMAPE at most 15 % and none outside 1.5x. Now {w:.1f} % over "
            f"{len(held)} points, {len(out)} outside 1.5x ({', '.join(out) or 'none'}): "
            + ("met." if met else "not met. docs/calibration.md, \"Where the model misses\", says what the model "
               "puts the misses down to (the scoreboard and transposes kernels: one DMA queue per NKI stream (tensor and "
               "direction) issuing a transfer every dma_queue_issue_ns, and the 256 B-per-partition efficiency rule; "
               "NKIBench kernels whose published DMA bytes show the Neuron compiler changed their loops: tessel runs "
               "a schedule as written).")]


def render(points, skipped, failed, shaped):
    lines = ["| point | set | target | measured | measured (us) | simulated (us) | error | ratio |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    detail = []
    by_set = {"in-sample": [], "held-out": []}
    tensor_errs = []
    for row, rep in points:
        if row.get("latency_us"):  # rows that publish only engine busy times have none
            meas, sim = float(row["latency_us"]), rep["latency_us"]
            by_set[set_of(row, shaped)].append((row["name"], sim, meas))
            ratio = max(sim / meas, meas / sim)
            lines.append(f"| {row['name']} | {set_of(row, shaped)} | {row['target']} | {row['measured']} | "
                         f"{meas:.1f} | {sim:.1f} | {err_pct(sim, meas):+.1f} % | {ratio:.2f}x |")
        for e in ENGINES:
            m = row.get(e + "_us")
            if m:
                s = rep["engines"][e]["busy_us"]
                detail.append(f"| {row['name']} | {set_of(row, shaped)} | {e} busy (us) | {float(m):.1f} | {s:.1f} | "
                              f"{err_pct(s, float(m)):+.1f} % |")
                if e == "tensor":
                    tensor_errs.append(abs(err_pct(s, float(m))))
        if row.get("dma_bytes"):
            m = float(row["dma_bytes"])
            s = rep["hbm_read_bytes"] + rep["hbm_write_bytes"]
            detail.append(f"| {row['name']} | {set_of(row, shaped)} | DMA bytes | {m:.0f} | {s:.0f} | "
                          f"{err_pct(s, m):+.1f} % |")
    if detail:
        lines += ["", "| point | set | quantity | measured | simulated | error |", "|---|---|---|---:|---:|---:|"] + detail
    notes = []
    for row, why in skipped:
        notes.append(f"- skipped {row['name']}: {why}")
    for row, why in failed:
        notes.append(f"- FAILED {row['name']}: {why}")
    if notes:
        lines += [""] + notes
    sets = ["| set | points | WMAPE | within 1.5x | worst point |", "|---|---:|---:|---:|---|"]
    for label, pts in by_set.items():
        if pts:
            err = sum(abs(s - m) for _, s, m in pts)
            total = sum(m for _, _, m in pts)
            name, s, m = max(pts, key=lambda p: max(p[1] / p[2], p[2] / p[1]))
            within = sum(1 for _, ps, pm in pts if max(ps / pm, pm / ps) <= 1.5)
            sets.append(f"| {label} | {len(pts)} | {100.0 * err / total:.1f} % | {within} of {len(pts)} | {name} "
                        f"({err_pct(s, m):+.1f} %, {max(s / m, m / s):.2f}x) |")
        else:
            sets.append(f"| {label} | 0 | - | - | - |")
    sets += [""] + against_goal(by_set["held-out"])
    summary = [wmape_line(label, pts) for label, pts in by_set.items()]
    if tensor_errs:
        summary.append(f"tensor-engine busy within {max(tensor_errs):.1f} %.")
    summary.append(wmape_line("all", by_set["in-sample"] + by_set["held-out"]).replace("all: ", "", 1)
                   .split(", worst")[0])
    return lines, sets, summary


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


def leave_one_out(outputs, shaped):
    """The leave-one-out WMAPE over every target's points together (each point
    predicted by the fit of its own target's other points), per set and all."""
    pts = [(n, float(p), float(m)) for out in outputs for n, p, m in LEFT_OUT.findall(out)]
    lines = []
    for label, keep in (("in-sample", lambda n: n in shaped), ("held-out", lambda n: n not in shaped),
                        ("all", lambda n: True)):
        sub = [p for p in pts if keep(p[0])]
        if sub:
            lines.append(wmape_line("leave-one-out " + label, sub))
    return "\n".join(lines)


def loo_lines(loo, targets, params):
    """The leave-one-out figures for the report, said in words (none without --calibrate)."""
    if not loo:
        return []
    fitted = "the free parameters fitted by default" if not params else "only " + params
    return ["", f"**Leave-one-out** (`--calibrate {targets}`{' --params=' + params if params else ''}): each point",
            f"predicted by `tessel calibrate` fitted ({fitted}) to the other points of its target, its",
            "duplicates (rows running the same program) left out too; what a fitted target predicts for a",
            "kernel it was not fitted to.", ""] + [l for l in loo.splitlines()]


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
    shaped = read_shaped(a.csv)
    marks = check_marks(tessel, read_rows(a.csv), shaped)
    if marks:
        print("\n".join("error: " + m for m in marks), file=sys.stderr)
        return 1
    points, skipped, failed = evaluate(tessel, a.csv)
    table, sets, summary = render(points, skipped, failed, shaped)
    print("\n".join(table + [""] + sets))
    loo = ""
    if a.calibrate:
        outputs = [calibrate(tessel, a.csv, t, a.params) for t in a.calibrate.split(",")]
        for out in outputs:
            print("\n" + out)
        loo = leave_one_out(outputs, shaped)
        print("\n" + loo)
    if a.report:
        body = ["## Fidelity: simulated vs measured on hardware", "",
                "Generated by `python3 bench/fidelity.py --report` from `bench/fidelity/measured.csv`",
                "(figures and sources: docs/measurements.md); default targets, nothing fitted; each point",
                "predicts the latency its source measured (device timeline or benchmark loop).", "",
                "**In-sample** points shaped the model: some rule or value of the simulator or of a target",
                "was introduced, or chosen among alternatives, while looking at their residual",
                "(`bench/fidelity/shaped.csv` says which, per point; docs/calibration.md tells the story).",
                "Their error says how well the model was made to explain them, not how well it predicts.",
                "**Held-out** points shaped nothing: no rule or value was introduced while looking at them.",
                "Those of the original public set were visible while the model was built; those added by",
                "issue 40 (marked so in measured.csv) were first simulated when they were added.",
                "A figure for a new kernel should be read against the held-out error.", ""]
        replace_section(os.path.join(ROOT, "bench", "REPORT.md"), "fidelity",
                        body + sets + [""] + table + [""] + summary + loo_lines(loo, a.calibrate, a.params))
    print("\n".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
