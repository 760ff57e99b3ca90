# The schedule of AWS's average pool tutorial, written for tessel: C x H x W in tiles of 128 channels
# (the partitions), each loaded whole, viewed as [C, H/k, k, W/k, k] windows and summed over the two
# window axes in one reduction, then scaled by 1 / k^2 and stored. `avgpool` indexes the tile with five
# nl.mgrid indices (`k * i_h + i_kh`: the tutorial's first version) and reduces axes 2 and 4;
# `avgpool_ap` writes the same view as an access pattern, `.ap([[H*W, C], [k*W, H/k], [k, W/k], [W, k],
# [1, k]])`, and reduces its trailing axes 3 and 4 (the current version); `avgpool_arange` uses strided
# nl.arange indices (`nl.arange(0, H, k)` plus an in-window offset).
# REQUIRES: numpy
# RUN: tessel compile %s -k avgpool --arg in_tensor=bf16[128,8,12] --arg pool_size=2 | FileCheck %s
# RUN: tessel run %s -k avgpool --arg in_tensor=f32[256,8,12] --arg pool_size=2 --check --reference %S/Inputs/refs.py:average_pool | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k avgpool --arg in_tensor=bf16[128,12,12] --arg pool_size=3 --check --reference %S/Inputs/refs.py:average_pool | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k avgpool_ap --arg in_tensor=f32[128,8,12] --arg pool_size=2 --check --reference %S/Inputs/refs.py:average_pool | FileCheck %s --check-prefix=PASS
# RUN: tessel run %s -k avgpool_arange --arg in_tensor=f32[128,8,12] --arg pool_size=2 --check --reference %S/Inputs/refs.py:average_pool | FileCheck %s --check-prefix=PASS
# The trace replayed in Python (--check without --reference) reads the same patterns.
# RUN: tessel run %s -k avgpool_ap --arg in_tensor=bf16[128,8,12] --arg pool_size=2 --check | FileCheck %s --check-prefix=PASS
# RUN: tessel compile %s -k avgpool_ap --arg in_tensor=bf16[128,8,12] --arg pool_size=2 | FileCheck %s --check-prefix=AP
# RUN: tessel run %s -k avgpool --arg in_tensor=bf16[512,64,64] --arg pool_size=2 --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k avgpool --arg in_tensor=bf16[512,64,64] --arg pool_size=2 --target trn2 --timing-only | FileCheck %s --check-prefix=TIME
# RUN: tessel run %s -k avgpool_ap --arg in_tensor=bf16[512,64,64] --arg pool_size=2 --target trn1 --timing-only | FileCheck %s --check-prefix=TIME
# Windows that overlap (k * i_h written i_h: a stride of 1) fail the reference.
# RUN: not tessel run %s -k avgpool_overlapping --arg in_tensor=f32[128,8,12] --arg pool_size=2 --check --reference %S/Inputs/refs.py:average_pool > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=FAIL < %t.out
# RUN: FileCheck %s --check-prefix=FAILERR < %t.err
# CHECK: dma %[[X:[a-z_0-9]+]][0 +: 128, 0 +: 8, 0 +: 12] <- %in_tensor[%{{.*}}*128 +: 128, 0 +: 8, 0 +: 12]
# CHECK: tensor_reduce add %[[S:[a-z_0-9]+]][0 +: 128, 0 +: 4, 0 +: 6] <- %[[X]][0 +: 128, 0 +: 4 step 2 +: 2, 0 +: 6 step 2 +: 2] order (0, 1, 3, 2, 4)
# CHECK: tensor_scalar mul %{{.*}}[0 +: 128, 0 +: 4, 0 +: 6] <- %[[S]][0 +: 128, 0 +: 4, 0 +: 6], 0.25
# AP: tensor_reduce add %{{.*}}[0 +: 128, 0 +: 4, 0 +: 6] <- %{{.*}}[0 +: 128, 0 +: 4 step 2 +: 2, 0 +: 6 step 2 +: 2] order (0, 1, 3, 2, 4)
# PASS: check: PASSED
# TIME: latency
# FAIL: check: FAILED
# FAILERR: error: check failed
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def _pool(in_tensor, k, window_step, spelling="mgrid"):
    c, h, w = in_tensor.shape
    ho, wo = h // k, w // k
    out = nl.ndarray((c, ho, wo), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    for ct in nl.affine_range(c // 128):
        x = nl.ndarray((128, h, w), dtype=in_tensor.dtype, buffer=nl.sbuf)
        x[...] = nl.load(in_tensor[ct * 128:(ct + 1) * 128, :, :])
        if spelling == "ap":
            windows = x.ap([[h * w, 128], [k * w, ho], [k, wo], [w, k], [1, k]])
            total = nl.sum(windows, axis=[3, 4])
        elif spelling == "arange":
            i_p = nl.arange(128)[:, None, None, None, None]
            i_h = nl.arange(0, h, k)[None, :, None, None, None]
            i_kh = nl.arange(k)[None, None, :, None, None]
            i_w = nl.arange(0, w, k)[None, None, None, :, None]
            i_kw = nl.arange(k)[None, None, None, None, :]
            total = nl.sum(x[i_p, i_h + i_kh, i_w + i_kw], axis=[2, 4])
        else:
            i_p, i_h, i_kh, i_w, i_kw = nl.mgrid[0:128, 0:ho, 0:k, 0:wo, 0:k]
            total = nl.sum(x[i_p, window_step * i_h + i_kh, window_step * i_w + i_kw], axis=[2, 4])
        mean = nl.multiply(total, 1.0 / (k * k))
        nl.store(out[ct * 128:(ct + 1) * 128, :, :], value=mean)
    return out


@nki.jit
def avgpool(in_tensor, pool_size):
    return _pool(in_tensor, pool_size, pool_size)


@nki.jit
def avgpool_ap(in_tensor, pool_size):
    return _pool(in_tensor, pool_size, pool_size, "ap")


@nki.jit
def avgpool_arange(in_tensor, pool_size):
    return _pool(in_tensor, pool_size, pool_size, "arange")


@nki.jit
def avgpool_overlapping(in_tensor, pool_size):
    """Wrong: the windows start one element apart."""
    return _pool(in_tensor, pool_size, 1)
