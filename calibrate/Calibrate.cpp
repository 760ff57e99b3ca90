//===- calibrate/Calibrate.cpp - Fit a target's free parameters ---------------===//
#include "calibrate/Calibrate.h"

#include "runtime/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace llvm;
using tessel::runtime::Target;

namespace tessel::calibrate {

const std::vector<FreeParam> &freeParams() {
  static const std::vector<FreeParam> params{
#define CALIB_PARAM(FIELD, LOW, HIGH, WHY) {#FIELD, &Target::FIELD, LOW, HIGH, WHY, true},
#define CALIB_OPTIONAL_PARAM(FIELD, LOW, HIGH, WHY) {#FIELD, &Target::FIELD, LOW, HIGH, WHY, false},
#include "calibrate/CalibrationParams.def"
  };
  return params;
}

Expected<std::vector<FreeParam>> selectFreeParams(StringRef list) {
  if (list.trim().empty()) {
    std::vector<FreeParam> out;
    for (const FreeParam &p : freeParams())
      if (p.byDefault)
        out.push_back(p);
    return out;
  }
  std::vector<FreeParam> out;
  SmallVector<StringRef, 8> names;
  list.split(names, ',', -1, /*KeepEmpty=*/true);
  for (StringRef n : names) {
    n = n.trim();
    if (n.empty())
      return createStringError(inconvertibleErrorCode(), "--params=%s: an empty parameter name",
                               list.str().c_str());
    auto it = find_if(freeParams(), [&](const FreeParam &p) { return p.field == n; });
    if (it == freeParams().end()) {
      std::vector<std::string> known;
      for (const FreeParam &p : freeParams())
        known.push_back(p.field);
      return createStringError(inconvertibleErrorCode(), "'%s' is not a free parameter (free: %s)",
                               n.str().c_str(), join(known, ", ").c_str());
    }
    if (none_of(out, [&](const FreeParam &p) { return p.field == n; }))
      out.push_back(*it);
  }
  return out;
}

std::vector<size_t> Calibration::everyPoint() const {
  std::vector<size_t> v(points.size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

/// Whether two rows run the same program (kernel paths compared as files).
static bool sameProgram(const compiler::KernelSpec &a, const compiler::KernelSpec &b) {
  auto sameDefines = [](const auto &x, const auto &y) {
    return x.name == y.name && x.value == y.value;
  };
  if (a.kernel != b.kernel || a.pipeline != b.pipeline || a.defines.size() != b.defines.size() ||
      !std::equal(a.defines.begin(), a.defines.end(), b.defines.begin(), sameDefines))
    return false;
  return a.path == b.path || sys::fs::equivalent(a.path, b.path);
}

std::vector<size_t> Calibration::trainingSetWithout(size_t i) const {
  std::vector<size_t> rest;
  for (size_t j = 0; j < points.size(); ++j)
    if (j != i && !sameProgram(points[j].m.kernel, points[i].m.kernel))
      rest.push_back(j);
  return rest;
}

std::vector<std::pair<size_t, size_t>> Calibration::repeatedRows() const {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t j = 1; j < points.size(); ++j)
    for (size_t i = 0; i < j; ++i)
      if (points[i].m.measured == points[j].m.measured && sameProgram(points[i].m.kernel, points[j].m.kernel)) {
        out.push_back({i, j});
        break;
      }
  return out;
}

/// Whether two simulations of the same points differ in any quantity a
/// measurement can give (relative 1e-9: fast-forward is deterministic).
static bool differ(ArrayRef<Simulated> a, ArrayRef<Simulated> b) {
  auto near = [](double x, double y) { return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)); };
  for (size_t k = 0; k < a.size(); ++k) {
    if (!near(a[k].latencyUs, b[k].latencyUs))
      return true;
    for (const auto &[engine, us] : a[k].busyUs)
      if (!b[k].busyUs.count(engine) || !near(us, b[k].busyUs.at(engine)))
        return true;
  }
  return false;
}

Expected<std::vector<bool>> Calibration::exercised(const Target &t, ArrayRef<FreeParam> params,
                                                   ArrayRef<size_t> which) const {
  std::vector<bool> out;
  for (const FreeParam &p : params) {
    Target lo = t, hi = t;
    lo.*(p.member) = p.lo;
    hi.*(p.member) = p.hi;
    Expected<std::vector<Simulated>> a = simulate(lo, which);
    if (!a)
      return a.takeError();
    Expected<std::vector<Simulated>> b = simulate(hi, which);
    if (!b)
      return b.takeError();
    out.push_back(differ(*a, *b));
  }
  return out;
}

Expected<std::vector<Simulated>> Calibration::simulate(const Target &t, ArrayRef<size_t> which) const {
  std::vector<Simulated> out(which.size());
  std::vector<std::optional<std::string>> errors(which.size());
  auto one = [&](size_t k) {
    const CalibPoint &p = points[which[k]];
    runtime::SimOptions o;
    o.timingOnly = true;
    // Loop fast-forward (docs/simulator.md): counters exact, latency and busy
    // times within 0.1% of exact timing, far below what a fit resolves; the
    // leave-one-out error fits once per point.
    o.fastForward = true;
    o.latency = p.m.measured;
    Expected<runtime::SimResult> r = runtime::simulate(p.program, t, o);
    if (!r) {
      errors[k] = p.m.origin + ": " + toString(r.takeError());
      return;
    }
    Simulated &s = out[k];
    s.latencyUs = r->report.latencyNs / 1000.0;
    for (const runtime::EngineReport &e : r->report.engines)
      s.busyUs[e.name] = e.busyNs / 1000.0;
    s.dmaBytes = double(r->report.hbmReadBytes + r->report.hbmWriteBytes);
  };
  if (jobs <= 1 || which.size() <= 1) {
    for (size_t k = 0; k < which.size(); ++k)
      one(k);
  } else {
    ThreadPool pool(hardware_concurrency(jobs));
    for (size_t k = 0; k < which.size(); ++k)
      pool.async(one, k);
    pool.wait();
  }
  for (auto &e : errors)
    if (e)
      return createStringError(inconvertibleErrorCode(), *e);
  return out;
}

double Calibration::score(ArrayRef<size_t> which, ArrayRef<Simulated> sims) const {
  double err = 0, sum = 0;
  for (size_t k = 0; k < which.size(); ++k) {
    const MeasuredPoint &m = points[which[k]].m;
    if (m.hasLatency()) {
      err += std::fabs(sims[k].latencyUs - m.latencyUs);
      sum += m.latencyUs;
    }
    for (const auto &[engine, us] : m.busyUs) {
      auto it = sims[k].busyUs.find(engine);
      err += std::fabs((it == sims[k].busyUs.end() ? 0.0 : it->second) - us);
      sum += us;
    }
  }
  return sum > 0 ? err / sum : 0.0;
}

double Calibration::latencyWmape(ArrayRef<size_t> which, ArrayRef<Simulated> sims) const {
  double err = 0, sum = 0;
  for (size_t k = 0; k < which.size(); ++k) {
    const MeasuredPoint &m = points[which[k]].m;
    if (!m.hasLatency())
      continue;
    err += std::fabs(sims[k].latencyUs - m.latencyUs);
    sum += m.latencyUs;
  }
  return sum > 0 ? err / sum : 0.0;
}

// Compass search on the unit cube of the parameters' ranges: try a step up
// and down along each parameter in turn, keep the first that lowers the
// score, halve the step after a sweep without improvement. Deterministic,
// needs no gradient (the simulator's latency is piecewise smooth in the
// parameters), and never leaves the bounds.
Expected<FitResult> Calibration::fit(const Target &start, ArrayRef<FreeParam> params, ArrayRef<size_t> which,
                                     const FitOptions &options) const {
  Expected<FitResult> a = search(start, params, which, options);
  if (!a)
    return a.takeError();
  Target centre = start;
  for (const FreeParam &p : params)
    centre.*(p.member) = (p.lo + p.hi) / 2;
  Expected<FitResult> b = search(centre, params, which, options);
  if (!b)
    return b.takeError();
  FitResult &best = b->score < a->score - 1e-12 ? *b : *a;
  best.evaluations = a->evaluations + b->evaluations;
  // A parameter the points do not depend on goes back to where it started
  // (the centre start moved it for nothing).
  for (const FreeParam &p : params) {
    double v = std::clamp(start.*(p.member), p.lo, p.hi);
    if (best.target.*(p.member) == v)
      continue;
    Target t = best.target;
    t.*(p.member) = v;
    ++best.evaluations;
    Expected<std::vector<Simulated>> sims = simulate(t, which);
    if (!sims)
      return sims.takeError();
    if (double s = score(which, *sims); s <= best.score + 1e-12) {
      best.target = t;
      best.score = std::min(best.score, s);
    }
  }
  return best;
}

Expected<FitResult> Calibration::search(const Target &start, ArrayRef<FreeParam> params, ArrayRef<size_t> which,
                                        const FitOptions &options) const {
  FitResult best;
  best.target = start;
  std::vector<double> u(params.size());
  auto apply = [&](Target &t, size_t j, double uj) {
    const FreeParam &p = params[j];
    t.*(p.member) = p.lo + uj * (p.hi - p.lo);
  };
  for (size_t j = 0; j < params.size(); ++j) {
    const FreeParam &p = params[j];
    u[j] = std::clamp((start.*(p.member) - p.lo) / (p.hi - p.lo), 0.0, 1.0);
    apply(best.target, j, u[j]);
  }
  auto evaluate = [&](const Target &t) -> Expected<double> {
    ++best.evaluations;
    Expected<std::vector<Simulated>> sims = simulate(t, which);
    if (!sims)
      return sims.takeError();
    return score(which, *sims);
  };
  Expected<double> f0 = evaluate(best.target);
  if (!f0)
    return f0.takeError();
  best.score = *f0;
  double step = options.initialStep;
  while (step >= options.minStep && best.evaluations < options.maxEvaluations) {
    bool improved = false;
    for (size_t j = 0; j < params.size() && best.evaluations < options.maxEvaluations; ++j) {
      for (double dir : {1.0, -1.0}) {
        double uj = std::clamp(u[j] + dir * step, 0.0, 1.0);
        if (uj == u[j])
          continue;
        Target t = best.target;
        apply(t, j, uj);
        Expected<double> f = evaluate(t);
        if (!f)
          return f.takeError();
        if (*f < best.score - 1e-12) {
          best.score = *f;
          best.target = t;
          u[j] = uj;
          improved = true;
          break;
        }
      }
    }
    if (!improved)
      step /= 2;
  }
  return best;
}

} // namespace tessel::calibrate
