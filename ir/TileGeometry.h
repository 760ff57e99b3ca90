//===- ir/TileGeometry.h - The hardware shape the IR's rules depend on -*- C++ -*-===//
//
// The few numbers of the target that the tile IR's rules and its producers
// (TileGen, the passes, the backend) depend on: how many partitions an
// on-chip tile spans, the tensor engine's shape limits and the on-chip memory
// sizes. A Kernel carries one (TileGen sets it from its options, the IR parser
// from a parameter); the driver builds it from the runtime target description
// (passes/TargetGeometry.h), since ir/ does not know the runtime. There are no
// defaults: a zero geometry is "not set", and the verifier rejects it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_TILEGEOMETRY_H
#define TESSEL_IR_TILEGEOMETRY_H

#include <cstdint>

namespace tessel::ir {

struct TileGeometry {
  /// SBUF/PSUM partitions: the most rows an on-chip tile spans (a larger
  /// first dimension folds over groups of this many).
  int64_t partitions = 0;
  /// Tensor engine limits per matmul: contraction K (partitions read),
  /// stationary free size M and moving free size N.
  int64_t maxContraction = 0;
  int64_t maxStationary = 0;
  int64_t maxMoving = 0;
  /// PSUM bytes per partition of one bank (an accumulator tile must fit one)
  /// and of the whole PSUM.
  int64_t psumBankBytes = 0;
  int64_t psumBytes = 0;
  /// SBUF bytes per partition, and the alignment of SBUF buffer addresses.
  int64_t sbufBytes = 0;
  int64_t sbufAlignBytes = 0;

  bool isSet() const {
    return partitions > 0 && maxContraction > 0 && maxStationary > 0 && maxMoving > 0 &&
           psumBankBytes > 0 && psumBytes > 0 && sbufBytes > 0 && sbufAlignBytes > 0;
  }
};

} // namespace tessel::ir

#endif
