# SPMD launches tessel refuses, each an error at its line: nl.program_id without a grid, an axis the
# grid does not have, a grid both launched in the file and given with --grid, a second launch, a
# launch grid over physical NeuronCores (nl.nc), a bad --grid, a launcher that launches nothing.
# RUN: not tessel compile %s -k tile_add --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=NOGRID
# RUN: not tessel compile %s -k tile_add --grid 1 --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=AXIS
# RUN: not tessel compile %s -k launch --grid 1,1 --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=TWICE
# RUN: not tessel compile %s -k launch_two --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=SECOND
# RUN: not tessel compile %s -k launch_nc --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=NC
# RUN: not tessel compile %s -k tile_add --grid 2,x --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=MALFORMED
# RUN: not tessel compile %s -k launch_none --arg a=f32[128,512] --arg b=f32[128,512] 2>&1 | FileCheck %s --check-prefix=NONE
# RUN: not tessel compile %S/tensor-add.py --grid 2 --arg a=f32[128,512] --arg b=f32[128,512] -D M=1 2>&1 | FileCheck %s --check-prefix=FLAGS
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def tile_add(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    # NOGRID: err-spmd.py:[[@LINE+1]]: error: the kernel is not launched on an SPMD grid: give --grid G0,G1,... or run (-k) a function that launches it as kernel[G0, G1](...)
    row0 = nl.program_id(0) * 128
    # AXIS: err-spmd.py:[[@LINE+1]]: error: nl.program_id(1): the launch grid [1] has axes 0 to 0
    col0 = nl.program_id(1) * 512
    x = nl.load(a[row0:row0 + 128, col0:col0 + 512])
    y = nl.load(b[row0:row0 + 128, col0:col0 + 512])
    nl.store(c[row0:row0 + 128, col0:col0 + 512], value=x + y)
    return c


def launch(a, b):
    # TWICE: err-spmd.py:[[@LINE+1]]: error: the kernel is launched on the grid [1, 1] and --grid is given too; give one
    return tile_add[1, 1](a, b)


def launch_two(a, b):
    tile_add[1, 1](a, b)
    # SECOND: err-spmd.py:[[@LINE+1]]: error: a second kernel launch: tessel runs one kernel launch per trace (the first was at {{.*}}err-spmd.py:[[@LINE-1]])
    return tile_add[1, 1](a, b)


def launch_nc(a, b):
    # NC: err-spmd.py:[[@LINE+1]]: error: nl.nc: distributing a launch grid over physical NeuronCores is not supported (tessel simulates one NeuronCore; launch kernel[G0, G1])
    return tile_add[nl.nc(2), 1](a, b)


# NONE: err-spmd.py:[[@LINE+1]]: error: function 'launch_none' launched no nki.jit kernel
def launch_none(a, b):
    return a


# MALFORMED: error: malformed --grid '2,x': expected positive integers G0,G1,... (e.g. --grid 2,2)
# FLAGS: error: -D, --tp, compile flags and --emit=ast do not apply to NKI kernels
