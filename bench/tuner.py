#!/usr/bin/env python3
"""Speed and safety of `tessel tune`, the block-size auto-tuner (docs/tuning.md).

On the DeepSeek-V3 up_proj example at M=4096 (examples/deepseek_v3_up_proj.tsl):

  * tuner speed: configurations evaluated per second with --jobs 2 and --jobs 1
    (--exhaustive --no-cache, so both runs do the same work: every configuration
    compiled, every legal one simulated), and their ratio;
  * the cached second run: a run fills a fresh cache, the identical second run
    answers from it (0 simulations); its wall time and the ratio to the first.

And, on every example kernel, that pruning with the cost model never drops the
true best: the default (pruned) run and the --exhaustive run name the same best,
and the model's roofline latency is below every simulated latency.

Each timing is the fastest of --repeat runs (the machine may be shared). Prints a
summary and writes the numbers as JSON (default: bench/tuner.json next to this
script).

Usage: bench/tuner.py [--tessel build/bin/tessel] [--repeat 3] [--out bench/tuner.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEEPSEEK = os.path.join(ROOT, "examples", "deepseek_v3_up_proj.tsl")
EXAMPLES = [
    ("deepseek_v3_up_proj (M=4096)", DEEPSEEK, []),
    ("dense_xw (M=4096)", os.path.join(ROOT, "examples", "dense_xw.tsl"), []),
    ("paper_table1_chain (M=2048)", os.path.join(ROOT, "examples", "paper_table1_chain.tsl"), []),
    ("llama32_1b_swiglu_mlp (M=4096)", os.path.join(ROOT, "examples", "llama32_1b_swiglu_mlp.tsl"), []),
]


def tune(tessel, path, args):
    """Runs tessel tune --report=json; returns (report, wall seconds)."""
    cmd = [tessel, "tune", path, "--report=json"] + args
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"tuner.py: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout), wall


def fastest(tessel, path, args, repeat):
    runs = [tune(tessel, path, args) for _ in range(repeat)]
    return min(runs, key=lambda r: r[1])


def speed(tessel, repeat):
    out = {}
    for jobs in (1, 2):
        report, wall = fastest(tessel, DEEPSEEK, ["--no-cache", "--exhaustive", f"--jobs={jobs}"], repeat)
        out[f"jobs{jobs}"] = {
            "wall_s": wall,
            "configurations": report["configurations"],
            "simulated": report["simulated"],
            "configs_per_s": report["configurations"] / wall,
            "simulations_per_s": report["simulated"] / wall,
        }
    out["jobs2_over_jobs1"] = out["jobs2"]["configs_per_s"] / out["jobs1"]["configs_per_s"]
    return out


def machine_parallelism(tessel, repeat):
    """How many simulations this machine runs at once right now: two independent
    `tessel run` processes against one (2.0 on an idle two-core machine, 1.0 when
    other work leaves one core). The --jobs ratio cannot exceed it."""
    cmd = [tessel, "run", DEEPSEEK, "-D", "M=8192", "-O2", "--timing-only", "--block", "m=128,n=128"]

    def wall(copies):
        start = time.perf_counter()
        procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL) for _ in range(copies)]
        for p in procs:
            p.wait()
        return time.perf_counter() - start

    one = min(wall(1) for _ in range(repeat))
    two = min(wall(2) for _ in range(repeat))
    return {"one_process_s": one, "two_processes_s": two, "parallelism": 2 * one / two}


def cached_rerun(tessel, repeat):
    firsts, seconds = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            cache = os.path.join(tmp, "tune.json")
            first, first_wall = tune(tessel, DEEPSEEK, ["--cache", cache])
            second, second_wall = tune(tessel, DEEPSEEK, ["--cache", cache])
            if second["simulated"] != 0 or second["best"] != first["best"]:
                sys.exit("tuner.py: the cached second run simulated again or changed its best")
            firsts.append((first_wall, first))
            seconds.append((second_wall, second))
    first_wall, first = min(firsts, key=lambda r: r[0])
    second_wall, second = min(seconds, key=lambda r: r[0])
    return {
        "first_wall_s": first_wall,
        "first_simulated": first["simulated"],
        "second_wall_s": second_wall,
        "second_simulated": second["simulated"],
        "second_from_cache": second["from_cache"],
        "first_over_second": first_wall / second_wall,
    }


def pruning_safety(tessel):
    rows = []
    for name, path, args in EXAMPLES:
        pruned, pruned_wall = tune(tessel, path, ["--no-cache"] + args)
        full, full_wall = tune(tessel, path, ["--no-cache", "--exhaustive"] + args)
        measured = [r for r in full["results"] if r["status"] == "simulated"]
        # The tuner prunes by the cost model's lower bound (bound_us); its
        # estimate (latency_us) orders the search and may lie either side.
        ratios = [r["latency_us"] / r["model"]["bound_us"] for r in measured]
        errors = [abs(r["model"]["latency_us"] / r["latency_us"] - 1) for r in measured]
        rows.append({
            "kernel": name,
            "configurations": full["configurations"],
            "illegal": full["illegal"],
            "simulated_exhaustive": full["simulated"],
            "simulated_pruned": pruned["simulated"],
            "pruned": pruned["pruned"],
            "best_exhaustive": full["best"],
            "best_pruned": pruned["best"],
            "same_best": pruned["best"] == full["best"]
                         and pruned["best_latency_us"] == full["best_latency_us"],
            "bound_violations": sum(1 for x in ratios if x < 1.0),
            "min_latency_over_bound": min(ratios) if ratios else None,
            "max_estimate_error": max(errors) if errors else None,
            "wall_s_pruned": pruned_wall,
            "wall_s_exhaustive": full_wall,
        })
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "tuner.json"))
    opts = ap.parse_args()

    results = {
        "machine_cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "machine_parallelism": machine_parallelism(opts.tessel, opts.repeat),
        "speed": speed(opts.tessel, opts.repeat),
        "cached_rerun": cached_rerun(opts.tessel, opts.repeat),
        "pruning": pruning_safety(opts.tessel),
    }
    s, c = results["speed"], results["cached_rerun"]
    print(f"tuner speed, DeepSeek-V3 up_proj M=4096, --exhaustive ({s['jobs1']['configurations']} "
          f"configurations, {s['jobs1']['simulated']} simulated):")
    for jobs in (1, 2):
        r = s[f"jobs{jobs}"]
        print(f"  --jobs {jobs}: {r['wall_s']:.3f} s, {r['configs_per_s']:.1f} configurations/s, "
              f"{r['simulations_per_s']:.1f} simulations/s")
    p = results["machine_parallelism"]
    print(f"  --jobs 2 / --jobs 1: {s['jobs2_over_jobs1']:.2f}x  (on {results['machine_cpus']} CPUs, load "
          f"average {results['load_average']:.1f}; two independent simulator processes run "
          f"{p['parallelism']:.2f}x as fast as one here)")
    print(f"cached second run: {c['second_wall_s'] * 1000:.1f} ms ({c['second_simulated']} simulated, "
          f"{c['second_from_cache']} from the cache) vs {c['first_wall_s'] * 1000:.1f} ms first "
          f"({c['first_simulated']} simulated): {c['first_over_second']:.1f}x faster")
    print("pruning keeps the best (pruned run vs --exhaustive):")
    for r in results["pruning"]:
        print(f"  {r['kernel']}: {r['pruned']} of {r['configurations']} pruned, "
              f"{r['simulated_pruned']} vs {r['simulated_exhaustive']} simulated, same best: "
              f"{r['same_best']}, bound violations: {r['bound_violations']}, "
              f"min latency/bound: {r['min_latency_over_bound']:.2f}, "
              f"estimate within {100 * r['max_estimate_error']:.0f}%")
    with open(opts.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.relpath(opts.out)}")
    if not all(r["same_best"] and r["bound_violations"] == 0 for r in results["pruning"]):
        sys.exit("tuner.py: pruning changed the best or the bound failed")


if __name__ == "__main__":
    main()
