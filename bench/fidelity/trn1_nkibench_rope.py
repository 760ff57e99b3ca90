"""trn1 NKIBench rope_single_freq_apply, B 1 x H 64 x N 4096 x D 128 fp32 (docs/measurements.md §6;
measured 4.333 ms, device profile total_time, mean of 10 runs).

Published schedule (zhang677/AccelOpt NKIBench/kernels/rope_single_freq_apply_B1_H64_N4096_D128_0.py,
the benchmark's initial kernel; measured in experiments/full_complete_local/profile_results.csv:
"latency": 4.33301 ms, min 4.332, max 4.334, hbm_read_bytes 268,435,456, hbm_write_bytes
134,217,728, no spill, vector engine active 71.6 %, scalar 14.1 %; trn1.32xlarge, nki.baremetal
"--disable-dge --logical-nc-config=1", mean of 10 profiles' total_time):
    x_in [d_head, S], cos and sin [d_head // 2, S]; "Tile along the S dimension", tile 512:
    for i_S_offset in range(0, S, 512):
        load x_in[0:d_head, tile] -> [128, 512]; load cos[0:64, tile], sin[0:64, tile] -> [64, 512]
        sb_e = x[0:64]; sb_o = nl.copy(x[64:128])   ("copy to make sure tensortensor have
                                                     both inputs with the same base partition")
        e_cos, o_cos, e_sin, o_sin = four nisa.tensor_tensor multiplies of [64, 512]
        out[0:64]   = tensor_tensor(e_cos, o_sin, subtract)
        out[64:128] = tensor_tensor(o_cos, e_sin, add)
        store x_out[0:d_head, tile] <- out
    (d_head 128; S = H * N = 262,144, as the task's 268 MB of reads say: x 134 MB, cos and
    sin 67 MB each.)

Written for tessel from the published schedule. Run:
  tessel run trn1_nkibench_rope.py --target trn1 --timing-only --latency=device
  --arg x_in=f32[128,262144] --arg cos=f32[64,262144] --arg sin=f32[64,262144]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_S = 512


@nki.jit
def rope(x_in, cos, sin):
    d_head, S = x_in.shape
    half = d_head // 2
    x_out = nl.ndarray((d_head, S), dtype=x_in.dtype, buffer=nl.shared_hbm)
    for s in range(S // TILE_S):
        x = nl.load(x_in[0:d_head, nl.ds(s * TILE_S, TILE_S)])
        c = nl.load(cos[0:half, nl.ds(s * TILE_S, TILE_S)])
        sn = nl.load(sin[0:half, nl.ds(s * TILE_S, TILE_S)])
        odd = nl.copy(x[half:d_head, 0:TILE_S])
        e_cos = nisa.tensor_tensor(x[0:half, 0:TILE_S], c, nl.multiply)
        o_cos = nisa.tensor_tensor(odd, c, nl.multiply)
        e_sin = nisa.tensor_tensor(x[0:half, 0:TILE_S], sn, nl.multiply)
        o_sin = nisa.tensor_tensor(odd, sn, nl.multiply)
        out = nl.ndarray((d_head, TILE_S), dtype=x_in.dtype, buffer=nl.sbuf)
        out[0:half, 0:TILE_S] = nisa.tensor_tensor(e_cos, o_sin, nl.subtract)
        out[half:d_head, 0:TILE_S] = nisa.tensor_tensor(o_cos, e_sin, nl.add)
        nl.store(x_out[0:d_head, nl.ds(s * TILE_S, TILE_S)], value=out)
    return x_out
