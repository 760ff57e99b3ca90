#!/usr/bin/env python3
"""`tessel factorize` figures (issue 16, part 1):

  * error vs rank: a synthetic 1024 x 2048 weight with a decaying spectrum
    (sigma_i ~ 1 / (1 + i)^0.8, like a trained layer's), factorised at ratios
    0.05 .. 0.8; rank, ratio achieved and ||W - UV|| / ||W|| per ratio (the
    error must fall as the rank grows);
  * whitened vs plain: the same weight with 4096 activation rows whose channels
    have unequal scales (every 8th 20x larger, as LLM activations' outlier
    channels), ratios 0.2 and 0.5: ||X(W - UV)|| / ||XW|| with and without
    --activations;
  * time: DeepSeek-V3 up_proj's size, 7168 x 18432, at ratio 0.2 (the paper's
    rank 4096), wall clock of the whole command (reading, SVD, errors, writing).

Writes bench/factorize.json and prints a summary. Needs numpy (Debian:
python3-numpy; if this python3 lacks it, the script re-runs itself under
/usr/bin/python3).

Usage: bench/factorize.py [--tessel build/bin/tessel] [--skip-large] [--out FILE]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("bench/factorize.py needs numpy (apt-get install python3-numpy)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def decaying(rng, rows, cols, k=None):
    k = k or min(rows, cols)
    left = rng.standard_normal((rows, k), dtype=np.float32) / (1.0 + np.arange(k, dtype=np.float32)) ** 0.8
    return left @ rng.standard_normal((k, cols), dtype=np.float32)


def factorize(tessel, w, ratio, out, acts=None):
    cmd = [tessel, "factorize", w, "--ratio", str(ratio), "-o", out, "--json", "--force"]
    if acts:
        cmd += ["--activations", acts]
    start = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stderr}")
    report = json.loads(res.stdout)
    report["wall_seconds"] = wall
    # CPU time (user + system) of the command: on a shared machine the wall
    # clock includes other work's time slices.
    report["cpu_seconds"] = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    report["load_average"] = os.getloadavg()[0]
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--skip-large", action="store_true", help="skip the 7168 x 18432 timing")
    ap.add_argument("--out", default=os.path.join(HERE, "factorize.json"))
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        w_path, x_path = os.path.join(tmp, "W.npy"), os.path.join(tmp, "X.npy")
        np.save(w_path, decaying(rng, 1024, 2048))
        x = rng.standard_normal((4096, 1024), dtype=np.float32)
        x[:, ::8] *= 20
        np.save(x_path, x)

        print("error vs rank (W 1024 x 2048, decaying spectrum):")
        print(f"  {'ratio':>6} {'rank':>5} {'achieved':>8} {'||W-UV||/||W||':>15}")
        curve = []
        for ratio in [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]:
            r = factorize(args.tessel, w_path, ratio, os.path.join(tmp, "f"))
            curve.append({k: r[k] for k in ("ratio_requested", "rank", "ratio", "relative_error")})
            print(f"  {ratio:>6} {r['rank']:>5} {r['ratio']:>8.3f} {r['relative_error']:>15.4f}")
        falls = all(a["relative_error"] > b["relative_error"] for a, b in zip(curve[1:], curve[:-1])
                    if a["rank"] != b["rank"])
        print(f"  error falls as the rank grows: {'yes' if falls else 'NO'}")
        results["error_vs_rank"] = {"shape": [1024, 2048], "points": curve, "error_falls_with_rank": falls}

        print("whitened vs plain (X 4096 x 1024, every 8th channel 20x):")
        print(f"  {'ratio':>6} {'rank':>5} {'plain ||X(W-UV)||/||XW||':>25} {'whitened':>9} {'gain':>6}")
        white = []
        for ratio in [0.2, 0.5]:
            p = factorize(args.tessel, w_path, ratio, os.path.join(tmp, "p"))
            pu, pv = np.load(os.path.join(tmp, "p", "U.npy")), np.load(os.path.join(tmp, "p", "V.npy"))
            plain = float(np.linalg.norm(x @ (np.load(w_path) - pu @ pv)) / np.linalg.norm(x @ np.load(w_path)))
            wr = factorize(args.tessel, w_path, ratio, os.path.join(tmp, "w"), acts=x_path)
            white.append({"ratio": ratio, "rank": wr["rank"], "plain": plain,
                          "whitened": wr["activation_error"]})
            print(f"  {ratio:>6} {wr['rank']:>5} {plain:>25.4f} {wr['activation_error']:>9.4f} "
                  f"{plain / wr['activation_error']:>5.2f}x")
        results["whitening"] = white

        if not args.skip_large:
            big = os.path.join(tmp, "big.npy")
            # Spectrum: 1024 decaying directions plus full-rank noise (the SVD's
            # cost does not depend on the spectrum; generating a full decaying
            # one would take longer than the factorisation).
            wb = decaying(rng, 7168, 18432, k=1024)
            wb += 0.01 * rng.standard_normal(wb.shape, dtype=np.float32)
            np.save(big, wb)
            del wb
            print("DeepSeek-V3 up_proj size (7168 x 18432, ratio 0.2) ...", flush=True)
            r = factorize(args.tessel, big, 0.2, os.path.join(tmp, "big"))
            results["large"] = {"shape": [7168, 18432], "rank": r["rank"], "ratio": r["ratio"],
                                "seconds": r["seconds"], "wall_seconds": r["wall_seconds"],
                                "cpu_seconds": r["cpu_seconds"], "load_average": r["load_average"],
                                "cores": os.cpu_count()}
            print(f"  rank {r['rank']} (ratio {r['ratio']:.3f}): {r['wall_seconds']:.1f} s wall, "
                  f"{r['cpu_seconds']:.1f} s CPU on {os.cpu_count()} cores (load average "
                  f"{r['load_average']:.1f} at the end)")
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.relpath(args.out)}")


if __name__ == "__main__":
    main()
