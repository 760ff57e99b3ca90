//===- runtime/RowOps.cpp - The vector engine's per-row recurrences -------===//
#include "runtime/RowOps.h"

namespace tessel::runtime {

void scanRow(AluOp op0, AluOp op1, float *row, const float *second, int64_t F, float initial) {
  float prev = initial;
  for (int64_t f = 0; f < F; ++f) {
    prev = applyAluOp(op1, applyAluOp(op0, row[f], prev), second[f]);
    row[f] = prev;
  }
}

/// (count, mean, variance * count) of row[first], row[first + 2], ...: the
/// mean of their fp32 sum, then the sum of squared deviations from it.
static void halfStats(const float *row, int64_t F, int64_t first, float *out) {
  float sum = 0.0f;
  int64_t n = 0;
  for (int64_t f = first; f < F; f += 2, ++n)
    sum += row[f];
  const float mean = n ? sum / float(n) : 0.0f;
  float m2 = 0.0f;
  for (int64_t f = first; f < F; f += 2)
    m2 += (row[f] - mean) * (row[f] - mean);
  out[0] = float(n);
  out[1] = mean;
  out[2] = m2;
}

void bnStatsRow(const float *row, int64_t F, float *out) {
  halfStats(row, F, 0, out);
  halfStats(row, F, 1, out + 3);
}

void bnAggrRow(const float *row, int64_t F, float *out) {
  float count = 0.0f, weighted = 0.0f;
  for (int64_t i = 0; i + 2 < F; i += 3) {
    count += row[i];
    weighted += row[i] * row[i + 1];
  }
  if (count <= 0.0f) {
    out[0] = out[1] = 0.0f;
    return;
  }
  const float mean = weighted / count;
  // Chan et al.'s merge: the parts' squared deviations plus each part's
  // count times its mean's squared distance from the whole's.
  float m2 = 0.0f;
  for (int64_t i = 0; i + 2 < F; i += 3)
    m2 += row[i + 2] + row[i] * (row[i + 1] - mean) * (row[i + 1] - mean);
  out[0] = mean;
  out[1] = m2 / count;
}

} // namespace tessel::runtime
