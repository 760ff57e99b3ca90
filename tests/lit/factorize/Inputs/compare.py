"""compare.py W U V: U @ V against numpy's rank-r truncated SVD of W."""
import sys
import numpy as np

w, u, v = (np.load(p).astype(np.float64) for p in sys.argv[1:4])
r = u.shape[1]
p, s, qt = np.linalg.svd(w, full_matrices=False)
best = (p[:, :r] * s[:r]) @ qt[:r]
err = np.linalg.norm(u @ v - best) / np.linalg.norm(best)
print(f"rank {r} dtype {np.load(sys.argv[2]).dtype} vs numpy: {'OK' if err < 1e-4 else 'MISMATCH'}")
print(f"relative difference {err:.2e}", file=sys.stderr)
