//===- passes/TargetGeometry.h - The IR's tile geometry of a target -*- C++ -*-===//
//
// The one place a runtime::Target becomes the ir::TileGeometry that kernels
// carry (ir/ does not know the runtime, DESIGN §1).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_TARGETGEOMETRY_H
#define TESSEL_PASSES_TARGETGEOMETRY_H

#include "ir/TileGeometry.h"
#include "runtime/Target.h"

namespace tessel::passes {

ir::TileGeometry geometryFor(const runtime::Target &target);

} // namespace tessel::passes

#endif
