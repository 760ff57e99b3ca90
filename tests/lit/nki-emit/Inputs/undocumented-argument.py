# A kernel calling nisa.nc_matmul with an argument its documentation page does
# not list (the signature check must refuse it).
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a, b):
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=a, moving=b, transpose_x=True)
    return p
