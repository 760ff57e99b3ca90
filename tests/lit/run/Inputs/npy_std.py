"""npy_std.py FILE.npy: prints the standard deviation of a float32 .npy (no numpy)."""
import ast
import math
import struct
import sys

data = open(sys.argv[1], "rb").read()
header_len = struct.unpack("<H", data[8:10])[0]
header = ast.literal_eval(data[10:10 + header_len].decode())
assert header["descr"] == "<f4", header
count = math.prod(header["shape"])
values = struct.unpack("<%df" % count, data[10 + header_len:10 + header_len + 4 * count])
mean = sum(values) / count
print("std %.1f" % math.sqrt(sum((v - mean) ** 2 for v in values) / count))
