//===- passes/InputTransposes.h - A transposed input read in place -*- C++ -*-===//
#ifndef TESSEL_PASSES_INPUTTRANSPOSES_H
#define TESSEL_PASSES_INPUTTRANSPOSES_H

#include "ir/Kernel.h"

namespace tessel::passes {

/// implicit-transpose's rewrite of an argument's transpose that TileGen
/// wrote to an HBM scratch: its readers read the argument with the indices
/// swapped (passes/InputTransposes.cpp). True if any scratch went.
bool absorbInputTransposes(ir::Kernel &kernel);

} // namespace tessel::passes

#endif
