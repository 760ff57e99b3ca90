"""The --emit=nki round trip: for each M, compile a .tsl kernel to NKI, run the
.tsl and the emitted kernel on the same --input files, and require
bit-identical outputs and predicted latencies within 1%.

usage: roundtrip.py WORKDIR EXAMPLE.tsl M[,M...] [tessel compile flags...] [--timing-only] [--latency=report]

The inputs are float32 .npy files (written here without numpy: a pseudo-random
block repeated), given to both runs; a bf16 argument of the emitted kernel is
declared `--arg NAME=bf16`, so both round the file to bf16 the same way.
Prints one line per M; exits 1 when outputs differ or, unless
--latency=report, when a latency is off by more than 1%.
"""
import array
import json
import os
import random
import re
import struct
import subprocess
import sys


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(args), p.stdout, p.stderr))
    return p.stdout


def write_npy(path, shape, seed):
    rng = random.Random(seed)
    period = array.array("f", (rng.uniform(-1.0, 1.0) for _ in range(4099))).tobytes()
    n = 1
    for s in shape:
        n *= s
    data = (period * (n // 4099 + 1))[:4 * n]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % s for s in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def main():
    work, example, ms = sys.argv[1], sys.argv[2], sys.argv[3]
    own = ("--timing-only", "--latency=report")
    flags = [a for a in sys.argv[4:] if a not in own]
    timing_only = "--timing-only" in sys.argv[4:]
    check_latency = "--latency=report" not in sys.argv[4:]
    targets = [f for f in flags if f.startswith("--target")]
    os.makedirs(work, exist_ok=True)
    failed = False
    for m in ms.split(","):
        tag = os.path.join(work, "M%s" % m)
        py = tag + ".py"
        run(["tessel", "compile", example, "-D", "M=" + m, "--emit=nki", "-o", py] + flags)
        header = next(l for l in run(["tessel", "compile", example, "-D", "M=" + m, "--emit=tir"] + flags)
                      .splitlines() if l.startswith("kernel @"))
        inputs = re.findall(r"%(\w+): hbm<(\w+), \[([^\]]*)\]>", header.split("->")[0])
        tsl_args, py_args = [], []
        for i, (name, dtype, dims) in enumerate(inputs):
            shape = [int(d.split(":")[1]) for d in dims.split(", ")]
            py_args += ["--arg", "%s=%s[%s]" % (name, dtype, ",".join(map(str, shape)))]
            if not timing_only:
                path = "%s.%s.npy" % (tag, name)
                write_npy(path, shape, i)
                tsl_args += ["--input", "%s=%s" % (name, path)]
                py_args[-1] = "%s=%s" % (name, dtype)
                py_args += ["--input", "%s=%s" % (name, path)]
        common = ["--report=json"] + (["--timing-only"] if timing_only else [])
        out_tsl, out_py = tag + ".tsl.out", tag + ".py.out"
        outs_tsl = [] if timing_only else ["--output-dir", out_tsl]
        outs_py = [] if timing_only else ["--output-dir", out_py]
        rep_tsl = json.loads(run(["tessel", "run", example, "-D", "M=" + m] + outs_tsl + tsl_args + common + flags))
        rep_py = json.loads(run(["tessel", "run", py] + outs_py + py_args + common + targets))
        la, lb = rep_tsl["latency_us"], rep_py["latency_us"]
        same = "not compared (timing only)"
        if not timing_only:
            same = "identical"
            for f in sorted(os.listdir(out_tsl)):
                with open(os.path.join(out_tsl, f), "rb") as a, open(os.path.join(out_py, f), "rb") as b:
                    if a.read() != b.read():
                        same = "DIFFERENT (%s)" % f
                        failed = True
        close = abs(lb - la) <= 0.01 * la
        failed = failed or (check_latency and not close)
        print("M=%s: outputs %s; latency %s (tsl %.2f us, nki %.2f us)"
              % (m, same, "within 1%" if close else "OFF BY MORE THAN 1%", la, lb))
    sys.exit(1 if failed else 0)


main()
