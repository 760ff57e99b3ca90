"""access-patterns.tir: `make DIR` writes its input X.npy; `check DIR` compares DIR/out/P.npy (sums over
2 x 2 windows) and DIR/out/T.npy (each row's 2 x 3 matrix transposed) with numpy."""
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
if mode == "make":
    rng = np.random.default_rng(7)
    np.save(d + "/X.npy", rng.standard_normal((128, 4, 6)).astype(np.float32))
    sys.exit(0)
x = np.load(d + "/X.npy")
pool = x.reshape(128, 2, 2, 3, 2).sum(axis=(2, 4))
rows = x[:, 0, :].reshape(128, 2, 3).transpose(0, 2, 1).reshape(128, 6)
got_p, got_t = np.load(d + "/out/P.npy"), np.load(d + "/out/T.npy")
assert np.allclose(got_p, pool, rtol=1e-6, atol=1e-6), np.abs(got_p - pool).max()
assert np.array_equal(got_t, rows), (got_t[0], rows[0])
print("ok")
