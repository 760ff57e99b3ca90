# A PSUM result assigned into SBUF (`s[...] = nl.matmul(...)`, `s[...] += nisa.nc_matmul(...)`) goes
# through its own PSUM tile, then a copy or a vector add.
# RUN: tessel compile %s --arg a=bf16[128,128] --arg b=bf16[128,512] | FileCheck %s
# RUN: tessel run %s --arg a=bf16[128,128] --arg b=bf16[128,512] --check | FileCheck %s --check-prefix=SIM
# CHECK: matmul %matmul[0 +: 128, 0 +: 512] <- %at[0 +: 128, 0 +: 128], %bt[0 +: 128, 0 +: 512]{{$}}
# CHECK-NEXT: copy %s[0 +: 128, 0 +: 512] <- %matmul[0 +: 128, 0 +: 512]
# CHECK: matmul %matmul1[0 +: 128, 0 +: 512] <- %at[0 +: 128, 0 +: 128], %bt[0 +: 128, 0 +: 512]{{$}}
# CHECK-NEXT: tensor_tensor add %s[0 +: 128, 0 +: 512] <- %s[0 +: 128, 0 +: 512], %matmul1[0 +: 128, 0 +: 512]
# SIM: check: PASSED
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def into_sbuf(a, b):
    y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.load(a)
    bt = nl.load(b)
    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    s[...] = nl.matmul(at, bt, transpose_x=True)
    s[...] += nisa.nc_matmul(at, bt)
    nl.store(y, value=s)
    return y
