//===- runtime/RowOps.h - The vector engine's per-row recurrences -*- C++ -*-===//
//
// The instructions whose result at one element depends on the others of its
// partition: tensor_tensor_scan's recurrence and bn_stats / bn_aggr's
// statistics (docs/ops.md). Each works on one partition's row, in fp32 as the
// vector engine computes (it casts its inputs to fp32 and its results to the
// destination's dtype).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_ROWOPS_H
#define TESSEL_RUNTIME_ROWOPS_H

#include "support/Activation.h"

#include <cstdint>

namespace tessel::runtime {

/// row[f] = op1(op0(row[f], row[f - 1]'s result), second[f]) for f = 0..F-1,
/// the result before the first element being `initial`; in place over `row`
/// (nisa.tensor_tensor_scan's data0 in, its result out).
void scanRow(AluOp op0, AluOp op1, float *row, const float *second, int64_t F, float initial);

/// out[0:6] = (count, mean, variance * count) of row[0], row[2], ..., then of
/// row[1], row[3], ... (nisa.bn_stats); an empty half is (0, 0, 0).
void bnStatsRow(const float *row, int64_t F, float *out);

/// out[0:2] = (mean, variance) of the population the (count, mean,
/// variance * count) triples of row[0:F] describe, F a multiple of 3
/// (nisa.bn_aggr); (0, 0) when they count nothing.
void bnAggrRow(const float *row, int64_t F, float *out);

} // namespace tessel::runtime

#endif
