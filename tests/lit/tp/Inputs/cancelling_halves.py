"""Inputs for cancelling-partials.test: X = ones [128, 256] and W [256, 128]
whose two row halves cancel but for 1/64 per column, so that with W split
row-wise over 2 cores each core's partial is about 190 and the sum 1/64.
Usage: cancelling_halves.py X.npy W.npy"""
import sys

import numpy as np

rng = np.random.default_rng(1)
half = 1 + np.round(rng.random((128, 128)) * 64) / 64  # exact in bf16
w = np.concatenate([half, -half])
w[-1] += 1 / 64
np.save(sys.argv[1], np.ones((128, 256), np.float32))
np.save(sys.argv[2], w.astype(np.float32))
