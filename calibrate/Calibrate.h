//===- calibrate/Calibrate.h - Fit a target's free parameters to measurements -*- C++ -*-===//
//
// `tessel calibrate` (docs/calibration.md): every measured point's program is
// loaded once; a candidate target is scored by simulating all of them
// (timing only) and comparing with what was measured; a bounded compass
// search moves the free parameters of CalibrationParams.def one at a time
// within their bounds, halving its step when no move improves the score.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CALIBRATE_CALIBRATE_H
#define TESSEL_CALIBRATE_CALIBRATE_H

#include "calibrate/MeasuredPoints.h"

#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::calibrate {

struct FreeParam {
  std::string field;
  double runtime::Target::*member;
  double lo, hi;
  std::string why;
  bool byDefault = true; ///< fitted without --params (else only when named)
};

/// Every parameter calibrate may fit, in CalibrationParams.def order.
const std::vector<FreeParam> &freeParams();
/// The parameters named in `list` (comma-separated; empty: those fitted by
/// default, CALIB_PARAM in CalibrationParams.def); an unknown
/// name is an error listing the known ones.
llvm::Expected<std::vector<FreeParam>> selectFreeParams(llvm::StringRef list);

/// A measured point with its program.
struct CalibPoint {
  MeasuredPoint m;
  runtime::Program program;
};

/// What the simulator says about one point.
struct Simulated {
  double latencyUs = 0;
  std::map<std::string, double> busyUs;
  double dmaBytes = 0;
};

struct FitOptions {
  double initialStep = 0.25; ///< of each parameter's range
  double minStep = 1.0 / 256;
  unsigned maxEvaluations = 300;
};

struct FitResult {
  runtime::Target target;
  double score = 0;
  unsigned evaluations = 0;
};

class Calibration {
public:
  Calibration(std::vector<CalibPoint> points, unsigned jobs) : points(std::move(points)), jobs(jobs) {}
  const std::vector<CalibPoint> &all() const { return points; }
  std::vector<size_t> everyPoint() const;
  /// What the leave-one-out fit for point `i` is made on: every point but
  /// `i` and its duplicates, the points that run the same program (kernel
  /// file, kernel, defines, pipeline), whose measurements would tell the fit
  /// the left-out one's.
  std::vector<size_t> trainingSetWithout(size_t i) const;
  /// Rows given twice: (earlier, later) for each later row that runs the
  /// same program as an earlier one, measured the same way (device or
  /// benchmark). Each weighs twice in the fit.
  std::vector<std::pair<size_t, size_t>> repeatedRows() const;
  /// For each of `params`: whether any of the points `which` depends on it,
  /// i.e. some simulated quantity changes between the parameter's lower and
  /// upper bound (the others as in `t`).
  llvm::Expected<std::vector<bool>> exercised(const runtime::Target &t, llvm::ArrayRef<FreeParam> params,
                                              llvm::ArrayRef<size_t> which) const;

  /// Simulates the points `which` (timing only, each with its measured kind).
  llvm::Expected<std::vector<Simulated>> simulate(const runtime::Target &t, llvm::ArrayRef<size_t> which) const;
  /// What the search minimises: sum of |simulated - measured| over every
  /// latency and engine busy time the points give, over the sum of the
  /// measured values (a WMAPE over all measured quantities).
  double score(llvm::ArrayRef<size_t> which, llvm::ArrayRef<Simulated> sims) const;
  /// WMAPE of the latencies alone (of the points that measure one).
  double latencyWmape(llvm::ArrayRef<size_t> which, llvm::ArrayRef<Simulated> sims) const;

  /// The better of two compass searches: from `start` (clamped into the
  /// bounds) and from the centre of the bounds, which escapes a start that
  /// sits in another regime (e.g. fixed-cost- vs bandwidth-bound points).
  /// Parameters whose start value scores as well are put back to it.
  llvm::Expected<FitResult> fit(const runtime::Target &start, llvm::ArrayRef<FreeParam> params,
                                llvm::ArrayRef<size_t> which, const FitOptions &options) const;
  /// One compass search from `start` (options.maxEvaluations scorings at most).
  llvm::Expected<FitResult> search(const runtime::Target &start, llvm::ArrayRef<FreeParam> params,
                                   llvm::ArrayRef<size_t> which, const FitOptions &options) const;

private:
  std::vector<CalibPoint> points;
  unsigned jobs;
};

} // namespace tessel::calibrate

#endif
