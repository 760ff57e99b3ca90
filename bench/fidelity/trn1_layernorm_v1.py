"""trn1 LayerNorm, version 1 "nki.language APIs only" (docs/measurements.md §6;
measured P99 2,314 us).

Published schedule (aws-neuron-sdk general/nki/tutorials/layernorm.rst, "Version 1:
nki.language APIs only", kernel nki_layernorm_kernel_v1 in aws-neuron/nki-samples
src/nki_samples/tutorials/layernorm/layernorm_nki_kernel.py):
    "Load gamma and beta, and perform the partition-axis broadcast"
      (broadcast_to((nl.tile_size.pmax, D)), once, before the loop)
    "The trip count of the compute loop is math.ceil(input_tensor.shape[0]/nl.tile_size.pmax)"
    "Within the compute loop:
      We load one tile of input_tensor with shape (nl.tile_size.pmax, input_tensor.shape[1])
      Compute the mean and variance using nki.language.mean
        (var = mean(square(x)) - mean * mean)
      Normalize one tile of input_tensor using mean and variance. The variance is
        preprocessed using nki.language.rsqrt   ((x - mean) * rsqrt(var + epsilon))
      Scale the normalized tile using gamma and add beta
      Finally, we store the normalized tile back into HBM"
    Measurement: "The latency measured on trn1 ... shows a 14.9% improvement"
      ">>>> Running version v1. ... NCLatency: ... p50 = 2311us ... p99 = 2314us"
    The perf mode of the script (`--mode perf`, nki.benchmark) runs float32
    input of --nrows 4096 (default 4*1024) x --ncols 8192 (default 8*1024).

Size: the tutorial's text says "(300, 1000)", but 2.3 ms cannot be that size
on trn1: 300 x 1000 fp32 moves 2.4 MB (about 1 GB/s at 2.3 ms) and does about
six vector passes over three 1,000-element tiles (tens of microseconds), well
under the 19-55 us benchmark floor of a tiny kernel (docs/measurements.md §5).
The script's default 4096 x 8192 moves 268 MB (116 GB/s at 2.3 ms), so this
point is run at that size; which size was timed is not certain (decided from
the arithmetic above, before simulating).

Deviation, as tessel runs no reshape: gamma and beta are [1, D] parameters
(the tutorial reshapes 1-D [D] vectors to [1, D]: the same bytes). 4096 is a
multiple of 128, so the tutorial's row masks hold everywhere and are left out.
Written for tessel from the published schedule. Run:
  tessel run trn1_layernorm_v1.py --target trn1 --timing-only --latency=benchmark
  --arg x=f32[4096,8192] --arg gamma=f32[1,8192] --arg beta=f32[1,8192]
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def layernorm_v1(x, gamma, beta, epsilon=1e-5):
    rows, d = x.shape
    P = nl.tile_size.pmax
    y = nl.ndarray((rows, d), dtype=x.dtype, buffer=nl.shared_hbm)
    gamma_b = nl.load(gamma[0:1, 0:d]).broadcast_to((P, d))
    beta_b = nl.load(beta[0:1, 0:d]).broadcast_to((P, d))
    for i in nl.affine_range(math.ceil(rows / P)):
        tile = nl.load(x[i * P:(i + 1) * P, 0:d])
        mean = nl.mean(tile, axis=1)
        var = nl.mean(nl.square(tile), axis=1) - mean * mean
        normed = (tile - mean) * nl.rsqrt(var + epsilon)
        nl.store(y[i * P:(i + 1) * P, 0:d], value=normed * gamma_b + beta_b)
    return y
