"""Writes the .npy inputs of the factorize tests.

  arrays.py weight OUT ROWS COLS   a weight with a decaying spectrum (float32)
  arrays.py acts OUT ROWS COLS     activations with a few dominant channels
  arrays.py int OUT                an int32 array
  arrays.py cube OUT               a 3-D float32 array
  arrays.py huge OUT               a 256x512 float32 array of 3e38 (finite)
  arrays.py zeros OUT ROWS COLS    a float32 array of zeros
"""
import sys
import numpy as np

kind, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(1)
if kind == "weight":
    rows, cols = int(sys.argv[3]), int(sys.argv[4])
    k = min(rows, cols)
    left = rng.standard_normal((rows, k)) / (1.0 + np.arange(k)) ** 0.8
    np.save(out, (left @ rng.standard_normal((k, cols))).astype(np.float32))
elif kind == "acts":
    rows, cols = int(sys.argv[3]), int(sys.argv[4])
    x = rng.standard_normal((rows, cols))
    x[:, ::8] *= 20
    np.save(out, x.astype(np.float32))
elif kind == "int":
    np.save(out, np.arange(12, dtype=np.int32).reshape(3, 4))
elif kind == "cube":
    np.save(out, np.zeros((2, 3, 4), dtype=np.float32))
elif kind == "huge":
    np.save(out, np.full((256, 512), 3e38, dtype=np.float32))
elif kind == "zeros":
    np.save(out, np.zeros((int(sys.argv[3]), int(sys.argv[4])), dtype=np.float32))
