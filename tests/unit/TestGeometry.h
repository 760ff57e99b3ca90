//===- tests/unit/TestGeometry.h - The built-in trn1 target's tile geometry -===//
#ifndef TESSEL_TESTS_UNIT_TESTGEOMETRY_H
#define TESSEL_TESTS_UNIT_TESTGEOMETRY_H

#include "passes/TargetGeometry.h"
#include "runtime/Target.h"

namespace tessel::test {

/// The geometry kernels of the built-in trn1 target carry (what the driver
/// gives TileGen and the IR parser by default).
inline ir::TileGeometry trn1Geometry() { return passes::geometryFor(runtime::trn1Target()); }

} // namespace tessel::test

#endif
