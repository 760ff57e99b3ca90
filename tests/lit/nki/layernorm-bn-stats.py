# LayerNorm after the schedule of the second kernel of AWS's layernorm tutorial: per 128-row tile,
# nisa.bn_stats per 512-column slice (nl.tile_size.bn_stats_fmax) into one [P, 6 * slices] fp32
# tile, one nisa.bn_aggr of it for the mean and variance, rsqrt(var + epsilon), the shift and
# scale, then gamma and beta (1-D, reshaped and broadcast as the tutorial does, indexed with slices
# where the tutorial uses nl.mgrid indices, which tessel takes on a reshaped tensor). The tutorial's
# tensor_scalar with two ops (op1=) is written as two tensor_scalar calls (tessel's tile IR has one
# op per instruction). Checked against numpy on trn1 and trn2, timed with the tutorial's 4096 x 8192
# in bf16 and 4096 x 4096 in f32 (its f32 8192 columns need 290 KiB of SBUF per partition as tessel
# allocates it: input, gamma, beta and the results, double-buffered). Each broadcast_to takes two
# PSUM banks in turn (it took one per 512 columns, and 2 x 8 did not fit PSUM's 8 banks).
# Aggregating the first slice's statistics only fails the reference.
# REQUIRES: numpy
# RUN: tessel compile %s -k layernorm_bn --arg input_tensor=f32[256,1024] --arg gamma_vector=f32[1024] --arg beta_vector=f32[1024] | FileCheck %s
# RUN: tessel run %s -k layernorm_bn --arg input_tensor=f32[256,1536] --arg gamma_vector=f32[1536] --arg beta_vector=f32[1536] --check --reference %S/Inputs/refs.py:layernorm_tutorial --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k layernorm_bn --arg input_tensor=bf16[256,1024] --arg gamma_vector=bf16[1024] --arg beta_vector=bf16[1024] --arg epsilon=0.5 --check --reference %S/Inputs/refs.py:layernorm_tutorial --target trn2 | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k layernorm_bn --arg input_tensor=f32[4096,4096] --arg gamma_vector=f32[4096] --arg beta_vector=f32[4096] --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k layernorm_bn --arg input_tensor=bf16[4096,8192] --arg gamma_vector=bf16[8192] --arg beta_vector=bf16[8192] --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k layernorm_bn --arg input_tensor=f32[256,2560] --arg gamma_vector=f32[2560] --arg beta_vector=f32[2560] --check --reference %S/Inputs/refs.py:layernorm_tutorial --target trn1 | FileCheck %s --check-prefix=PASS
# RUN: not tessel run %s -k layernorm_bn_first_slice --arg input_tensor=f32[128,1024] --arg gamma_vector=f32[1024] --arg beta_vector=f32[1024] --check --reference %S/Inputs/refs.py:layernorm_tutorial > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: for %j = 0 to 2 step 1 parallel {
# CHECK: bn_stats %stats_results[0 +: 128, %j*6 +: 6] <- %input_sb[0 +: 128, %j*512 +: 512]
# CHECK: bn_aggr %mean_var[0 +: 128, 0 +: 2] <- %stats_results[0 +: 128, 0 +: 12]
# PASS: check: PASSED
# TIME: latency
# TIME: bn_stats
# FAIL: check: FAILED
# FAILERR: error: check failed
import math

import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _layernorm(input_tensor, epsilon, gamma_vector, beta_vector, slices_aggregated=None):
    out = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = input_tensor.shape
    P, fmax = nl.tile_size.pmax, nl.tile_size.bn_stats_fmax
    ip, jf = nl.mgrid[0:P, 0:cols]
    gamma = nl.load(gamma_vector.reshape((1, cols))[0:1, 0:cols]).broadcast_to((P, cols))
    beta = nl.load(beta_vector.reshape((1, cols))[0:1, 0:cols]).broadcast_to((P, cols))
    slices = math.ceil(cols / fmax)
    used = slices if slices_aggregated is None else slices_aggregated
    for t in nl.affine_range(math.ceil(rows / P)):
        input_sb = nl.load(input_tensor[t * P + ip, jf], mask=(t * P + ip < rows))
        ib, istat = nl.mgrid[0:fmax, 0:6]
        stats_results = nl.ndarray((P, 6 * slices), dtype=np.float32, buffer=nl.sbuf)
        for j in nl.affine_range(slices):
            stats_results[ip, j * 6 + istat] = nisa.bn_stats(input_sb[ip, j * fmax + ib],
                                                             mask=(j * fmax + ib < cols), dtype=np.float32)
        mean_var = nisa.bn_aggr(stats_results[ip, nl.arange(6 * used)[None, :]])
        mean, var = mean_var[ip, 0], mean_var[ip, 1]
        scale = nl.rsqrt(var + epsilon)
        shifted = nisa.tensor_scalar(data=input_sb, op0=np.subtract, operand0=mean)
        normed = nisa.tensor_scalar(data=shifted, op0=np.multiply, operand0=scale)
        nl.store(out[t * P + ip, jf], value=normed * gamma + beta, mask=(t * P + ip < rows))
    return out


@nki.jit
def layernorm_bn(input_tensor, epsilon=1e-5, gamma_vector=None, beta_vector=None):
    return _layernorm(input_tensor, epsilon, gamma_vector, beta_vector)


@nki.jit
def layernorm_bn_first_slice(input_tensor, epsilon=1e-5, gamma_vector=None, beta_vector=None):
    return _layernorm(input_tensor, epsilon, gamma_vector, beta_vector, slices_aggregated=1)
