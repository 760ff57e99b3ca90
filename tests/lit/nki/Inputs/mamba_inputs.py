"""Writes mamba's inputs as a model gives them to the scan, into DIR/{delta,u,A,B,C}.npy (float32):
delta > 0 (a softplus output), A < 0 (so exp(delta * A) decays, slowly: the state carries far along
the sequence), u, B and C of either sign. Usage: mamba_inputs.py DIR BATCH CHANNELS SEQ STATES."""
import os
import sys

import numpy as np

out, batch, channels, seq, states = sys.argv[1], *map(int, sys.argv[2:6])
rng = np.random.default_rng(34)
arrays = {
    "delta": rng.uniform(0.01, 0.2, (batch, channels, seq)),
    "u": rng.uniform(-1.0, 1.0, (batch, channels, seq)),
    "A": -rng.uniform(0.05, 1.0, (channels, states)),
    "B": rng.uniform(-1.0, 1.0, (batch, states, seq)),
    "C": rng.uniform(-1.0, 1.0, (batch, states, seq)),
}
os.makedirs(out, exist_ok=True)
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a.astype(np.float32))
