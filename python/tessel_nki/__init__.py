"""A tracing stand-in for the NKI Python modules (docs/nki.md).

Executes an `nki.jit` kernel under python3 with symbolic tensors and loop
variables and records what it does as tessel tile IR (docs/tile-ir.md):
`neuronxcc.nki`, `nki` and their `language` / `isa` submodules are replaced
by the modules of this package (modules.py), each API call appends ops to
the trace (tracer.py), and emit.py prints the trace as .tir text. The
reference of `tessel run --check` executes the same trace with numpy
(reference.py). The entry point is ../nki_trace.py, run by the tessel
driver (compiler/NkiInput.cpp).
"""
