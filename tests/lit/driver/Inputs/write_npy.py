"""write_npy.py FILE ROWS COLS VALUE [INDEX=VALUE ...]: a float32 .npy of shape
[ROWS, COLS] filled with VALUE ('inf', 'nan' allowed), elements at flat
INDEX set to their VALUE; no numpy needed."""
import struct
import sys

path, rows, cols, fill = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
values = [fill] * (rows * cols)
for spec in sys.argv[5:]:
    index, value = spec.split("=")
    values[int(index)] = float(value)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(values), *values))
