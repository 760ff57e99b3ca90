"""Reads a 2-D float32 .npy (as `tessel run --output-dir` writes) and prints
the largest distance of a row sum from 1: 'max |row sum - 1| = X (N rows)'.
usage: row_sums.py FILE.npy"""
import ast
import struct
import sys

data = open(sys.argv[1], "rb").read()
assert data[:6] == b"\x93NUMPY", "not an .npy file"
header_len = struct.unpack("<H", data[8:10])[0]
header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
assert header["descr"] == "<f4" and not header["fortran_order"], header
rows, cols = header["shape"]
values = struct.unpack(f"<{rows * cols}f", data[10 + header_len:])
worst = max(abs(sum(values[r * cols:(r + 1) * cols]) - 1) for r in range(rows))
print(f"max |row sum - 1| = {worst:.6f} ({rows} rows)")
print("within one bf16 ulp of 1 (2^-7)" if worst <= 2 ** -7 else "NOT within one bf16 ulp of 1")
