//===- compiler/RandomInputs.h - How large a kernel's random inputs are -*- C++ -*-===//
//
// `tessel run` feeds inputs not given with --input seeded random values,
// uniform in [-s, s). For a .tsl kernel the source says which input is a
// weight: the right operand of a matmul (through any .T). A weight gets
// s = sqrt(3 / fan-in), its contracted dimension, so that a matmul keeps its
// operand's scale; every other input (an activation) is unit-variance,
// s = sqrt(3), so that activations such as silu see O(1) arguments whatever
// the number of rows.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_RANDOMINPUTS_H
#define TESSEL_COMPILER_RANDOMINPUTS_H

#include "frontend/AST.h"

#include <map>
#include <string>

namespace tessel::compiler {

/// The half-width s of every parameter of `kernel` (which Sema has typed).
std::map<std::string, double> randomInputHalfWidths(const ast::Kernel &kernel);

} // namespace tessel::compiler

#endif
