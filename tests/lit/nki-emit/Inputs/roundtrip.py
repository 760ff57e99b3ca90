"""The --emit=nki round trip: for each M, compile a .tsl kernel to NKI, run the
.tsl and the emitted kernel on the same --input files, and require
bit-identical outputs and predicted latencies within 1%.

usage: roundtrip.py WORKDIR EXAMPLE.tsl M[,M...] [tessel compile flags...] [--timing-only] [--latency=report]

With `--tp N` among the flags, the per-core round trip (docs/nki.md, "Tensor
parallelism"): the whole inputs are sliced as the split says (the
`[tensor-parallel] split:` line), and for each core the emitted kernel
(`tessel run emitted.py --check`) must give outputs bit-identical to that
core's shard of the .tsl kernel (`tessel compile --tp N --emit=tir`, run on
the core's slices); the cores' partials, summed in fp32 and rounded once to
bf16, must equal `tessel run EXAMPLE.tsl --tp N` on the whole inputs.

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


def pseudo_random(shape, seed):
    rng = random.Random(seed)
    period = array.array("f", (rng.uniform(-1.0, 1.0) for _ in range(4099)))
    n = 1
    for s in shape:
        n *= s
    return (period * (n // 4099 + 1))[:n]


def write_npy(path, shape, data):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % s for s in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data.tobytes())


def read_npy(path):
    """The float32 data of a .npy file tessel wrote (--output-dir)."""
    with open(path, "rb") as f:
        raw = f.read()
    start = 10 + struct.unpack("<H", raw[8:10])[0]
    return array.array("f", raw[start:])


def tensor_args(header):
    """(name, dtype, shape) of each input of a `kernel @...` line of .tir."""
    inputs = re.findall(r"%(\w+): hbm<(\w+), \[([^\]]*)\]>", header.split("->")[0])
    return [(n, t, [int(d.split(":")[1]) for d in dims.split(", ")]) for n, t, dims in inputs]


def cores_of(flags):
    for i, f in enumerate(flags):
        if f == "--tp":
            return int(flags[i + 1])
        if f.startswith("--tp="):
            return int(f[5:])
    return 0


def shard(data, shape, axis, c, cores):
    """Core c's slice of a [rows, cols] row-major tensor (compiler/TensorParallel.cpp)."""
    rows, cols = shape
    if axis == "row":
        n = rows // cores
        return data[c * n * cols:(c + 1) * n * cols], [n, cols]
    if axis == "column":
        n = cols // cores
        out = array.array("f")
        for r in range(rows):
            out.extend(data[r * cols + c * n:r * cols + (c + 1) * n])
        return out, [rows, n]
    return data, shape


def bf16(x):
    """x rounded to bf16, to nearest even (runtime/BF16.h)."""
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", u))[0]


def f32_sum(values):
    """The values added one by one in fp32, as the --tp run adds the cores' partials."""
    acc = 0.0
    for v in values:
        acc = struct.unpack("<f", struct.pack("<f", acc + v))[0]
    return acc


def same_files(dir_a, dir_b):
    for f in sorted(os.listdir(dir_a)):
        with open(os.path.join(dir_a, f), "rb") as a, open(os.path.join(dir_b, f), "rb") as b:
            if a.read() != b.read():
                return "DIFFERENT (%s)" % f
    return "identical"


def tp_round_trip(work, example, m, flags, targets):
    """Each core's emitted kernel against its shard of the .tsl kernel, and the summed
    partials against `tessel run --tp`; returns whether everything matched."""
    cores = cores_of(flags)
    tag = os.path.join(work, "M%s" % m)
    py, tir = tag + ".py", tag + ".tir"
    run(["tessel", "compile", example, "-D", "M=" + m, "--emit=nki", "-o", py] + flags)
    text = run(["tessel", "compile", example, "-D", "M=" + m, "--emit=tir", "-o", "-"] + flags)
    with open(tir, "w") as f:
        f.write(text)
    axes = dict((n, a) for n, a in re.findall(r"(\w+) (row|column)-wise", text.split("split:")[1].split(";")[0]))
    header = next(l for l in text.splitlines() if l.startswith("kernel @"))
    whole, whole_args = {}, []
    for i, (name, dtype, shape) in enumerate(tensor_args(header)):
        full = list(shape)
        if name in axes:
            full[0 if axes[name] == "row" else 1] *= cores
        whole[name] = (pseudo_random(full, i), full)
        write_npy("%s.%s.npy" % (tag, name), full, whole[name][0])
        whole_args += ["--input", "%s=%s.%s.npy" % (name, tag, name)]
    ok, partials = True, []
    for c in range(cores):
        core_tag = "%s.core%d" % (tag, c)
        tir_args, py_args = [], []
        for name, dtype, _ in tensor_args(header):
            data, shape = shard(whole[name][0], whole[name][1], axes.get(name), c, cores)
            path = "%s.%s.npy" % (core_tag, name)
            write_npy(path, shape, data)
            tir_args += ["--input", "%s=%s" % (name, path)]
            py_args += ["--arg", "%s=%s" % (name, dtype), "--input", "%s=%s" % (name, path)]
        run(["tessel", "run", tir, "--output-dir", core_tag + ".tir.out"] + tir_args + targets)
        run(["tessel", "run", py, "--check", "--output-dir", core_tag + ".py.out"] + py_args + targets)
        same = same_files(core_tag + ".tir.out", core_tag + ".py.out")
        ok = ok and same == "identical"
        print("M=%s core %d: outputs %s" % (m, c, same))
        partials.append([read_npy(os.path.join(core_tag + ".py.out", f))
                         for f in sorted(os.listdir(core_tag + ".py.out"))])
    run(["tessel", "run", example, "-D", "M=" + m, "--output-dir", tag + ".tp.out"] + whole_args + flags)
    for k, f in enumerate(sorted(os.listdir(tag + ".tp.out"))):
        summed = array.array("f", (bf16(f32_sum(p[k][i] for p in partials)) for i in range(len(partials[0][k]))))
        same = "identical" if summed.tobytes() == read_npy(os.path.join(tag + ".tp.out", f)).tobytes() else "DIFFERENT"
        ok = ok and same == "identical"
        print("M=%s: summed partials %s to --tp %d (%s)" % (m, same, cores, f))
    return ok


def main():
    work, example, ms = sys.argv[1], sys.argv[2], sys.argv[3]
    own = ("--timing-only", "--latency=report")
    flags = [a for a in sys.argv[4:] if a not in own]
    timing_only = "--timing-only" in sys.argv[4:]
    check_latency = "--latency=report" not in sys.argv[4:]
    targets = [f for f in flags if f.startswith("--target")]
    os.makedirs(work, exist_ok=True)
    failed = False
    if cores_of(flags):
        sys.exit(0 if all([tp_round_trip(work, example, m, flags, targets) for m in ms.split(",")]) else 1)
    for m in ms.split(","):
        tag = os.path.join(work, "M%s" % m)
        py = tag + ".py"
        run(["tessel", "compile", example, "-D", "M=" + m, "--emit=nki", "-o", py] + flags)
        header = next(l for l in run(["tessel", "compile", example, "-D", "M=" + m, "--emit=tir"] + flags)
                      .splitlines() if l.startswith("kernel @"))
        tsl_args, py_args = [], []
        for i, (name, dtype, shape) in enumerate(tensor_args(header)):
            py_args += ["--arg", "%s=%s[%s]" % (name, dtype, ",".join(map(str, shape)))]
            if not timing_only:
                path = "%s.%s.npy" % (tag, name)
                write_npy(path, shape, pseudo_random(shape, i))
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
            same = same_files(out_tsl, out_py)
            failed = failed or same != "identical"
        close = abs(lb - la) <= 0.01 * la
        failed = failed or (check_latency and not close)
        print("M=%s: outputs %s; latency %s (tsl %.2f us, nki %.2f us)"
              % (m, same, "within 1%" if close else "OFF BY MORE THAN 1%", la, lb))
    sys.exit(1 if failed else 0)


main()
