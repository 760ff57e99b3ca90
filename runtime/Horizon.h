//===- runtime/Horizon.h - Which units may still run ------------*- C++ -*-===//
//
// Internal to the runtime. From an instruction on, only the units of the
// instructions that may still execute (the rest of its body, the whole body of
// every enclosing loop, and what follows them) can start work, and each starts
// no earlier than it is free now. The least free time among them is a horizon:
// timing records that end before it can delay nothing any more and may be
// forgotten, which bounds the simulator's memory by the live state. (A unit
// that has not started yet is free at 0 and holds the horizon there.)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_HORIZON_H
#define TESSEL_RUNTIME_HORIZON_H

#include "runtime/Program.h"

#include <cstdint>
#include <vector>

namespace tessel::runtime {

class UnitHorizon {
public:
  /// Units are numbered as in the simulator: compute engines first, then DMA
  /// queue q is unit numComputeUnits + q.
  UnitHorizon(const Program &P, unsigned numComputeUnits);
  /// The least `unitFree` among the units numbered `firstUnit` or more that
  /// may execute `instr` or an instruction after it (infinity if none may).
  double at(uint32_t instr, const std::vector<double> &unitFree, unsigned firstUnit = 0) const;
  /// Whether `unit` may execute `instr` or an instruction after it.
  bool mayRun(uint32_t instr, unsigned unit) const;

private:
  std::vector<uint32_t> setOf;              ///< instruction -> index into sets
  std::vector<std::vector<uint32_t>> sets;  ///< distinct unit sets
};

} // namespace tessel::runtime

#endif
