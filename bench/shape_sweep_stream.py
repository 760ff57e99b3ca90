#!/usr/bin/env python3
"""Whether the shape sweep's streaming bound is reachable in the simulator.

The sweep's bound (bench/shape_sweep.py) moves the minimal traffic at the
streaming rate, min(HBM share, DMA engines x dma_engine_bandwidth_gbs). This
writes a .tasm kernel that does nothing but load a 64 MiB tensor into SBUF,
one [128, F] transfer per step rotating over the 16 queues, several copies
of the buffer so no load waits for a reader, and runs it timing-only for
several transfer widths F on trn1 and trn2: the simulated time against
bytes / rate (docs/cost-models.md, "What the shape sweep shows").

  python3 bench/shape_sweep_stream.py [--tessel build/bin/tessel]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from shape_sweep import call, streaming  # noqa: E402

TOTAL_BYTES = 64 << 20
PARTITIONS = 128
WIDTHS = [512, 2048, 4096, 8192, 16384]  # bf16 columns per partition per transfer


def kernel_text(target, cols):
    total_cols = TOTAL_BYTES // 2 // PARTITIONS
    bufs = max(2, min(16, (160 << 10) // (cols * 2)))
    return f"""kernel stream
target {target}

tensor %X : bf16[{PARTITIONS}, {total_cols}] input

buffer %x : sbuf bf16[{PARTITIONS}, {cols}] bufs={bufs} addr=0

for %i = 0 to {total_cols // cols} {{
  alloc %x
  dma %x[0:{PARTITIONS}, 0:{cols}] <- %X[0:{PARTITIONS}, %i*{cols} : {cols}] queue=0 queues=16
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(os.path.dirname(HERE), "build", "bin", "tessel"))
    args = ap.parse_args()
    print("| target | rate | bound us | " + " | ".join(f"{c * 2} B/partition" for c in WIDTHS) + " |")
    print("|---|---|---:|" + "---:|" * len(WIDTHS))
    with tempfile.TemporaryDirectory() as tmp:
        for target in ["trn1", "trn2"]:
            gbs, limit, _ = streaming(args.tessel, target)
            bound_us = TOTAL_BYTES / (gbs * 1e9) * 1e6
            cells = []
            for cols in WIDTHS:
                path = os.path.join(tmp, f"stream_{target}_{cols}.tasm")
                with open(path, "w") as f:
                    f.write(kernel_text(target, cols))
                out, err = call([args.tessel, "run", path, "--timing-only", "--report=json"], 300)
                if err:
                    sys.exit(f"shape_sweep_stream: {path}: {err}")
                us = json.loads(out)["latency_us"]
                cells.append(f"{us:.1f} ({bound_us / us * 100:.1f} %)")
            print(f"| {target} | {gbs:g} GB/s ({limit}) | {bound_us:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
