//===- runtime/FastForward.cpp - Skipping a loop's steady state ------------===//
#include "runtime/FastForward.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tessel::runtime {

namespace {

bool mentions(const AffineExpr &e, uint32_t var) {
  return llvm::any_of(e.terms, [&](const auto &t) { return t.first == var; });
}

struct Collector {
  const Program &P;
  LoopShapes::Info &info;
  uint32_t var;
  /// Per buffer allocated in the body, and per DMA instruction of it: how
  /// many times one iteration allocates or runs it.
  std::map<uint32_t, uint64_t> allocs, dmaRuns;

  void extent(const Extent &x) {
    if (mentions(x.size, var)) {
      info.skippable = false; // the shape changes every iteration
    } else if (x.hasMin && mentions(x.bound, var)) {
      AffineExpr diff = x.bound;
      diff.add(x.size, -1);
      info.switches.push_back(diff);
    }
  }
  void access(const Access &a) {
    for (const DimAccess &d : a.dims)
      if (!d.isIndex)
        extent(d.extent);
  }
  /// Returns the dynamic instruction count of one pass over `body`, which
  /// one iteration of the loop passes over `times` times.
  uint64_t walk(const std::vector<Stmt> &body, uint64_t times) {
    uint64_t n = 0;
    for (const Stmt &s : body) {
      switch (s.kind) {
      case Stmt::Kind::Instr: {
        const Instr &in = P.instrs[s.id];
        info.body.push_back(s.id);
        access(in.dst);
        for (const Access &a : in.srcs)
          access(a);
        if (in.op == Opcode::Dma)
          dmaRuns[s.id] += times;
        ++n;
        break;
      }
      case Stmt::Kind::Alloc:
        info.buffers.push_back(s.id);
        allocs[s.id] += times;
        break;
      case Stmt::Kind::For: {
        const Loop &l = P.loops[s.id];
        info.innerLoops.push_back(s.id);
        n += uint64_t(l.tripCount()) * walk(l.body, times * uint64_t(l.tripCount()));
        break;
      }
      }
    }
    return n;
  }
  /// The least p such that p iterations bring every rotation back: p * runs
  /// is a multiple of the rotation's length for each.
  int64_t period() const {
    int64_t p = 1;
    auto rotate = [&](uint64_t runs, uint64_t length) {
      p = std::lcm(p, int64_t(length / std::gcd(runs % length, length)));
    };
    for (const auto &[buffer, runs] : allocs)
      rotate(runs, uint64_t(P.buffers[buffer].bufs));
    for (const auto &[instr, runs] : dmaRuns)
      rotate(runs, P.instrs[instr].queueSpan);
    return p;
  }
};

} // namespace

LoopShapes::LoopShapes(const Program &P) : info(P.loops.size()) {
  for (uint32_t l = 0; l < P.loops.size(); ++l) {
    Info &i = info[l];
    i.skippable = true;
    Collector c{P, i, P.loops[l].var, {}, {}};
    i.instrsPerIteration = c.walk(P.loops[l].body, 1);
    i.period = c.period();
    i.skippable = i.skippable && i.period <= LoopWatch::MaxPeriod;
    llvm::sort(i.body);
    i.body.erase(std::unique(i.body.begin(), i.body.end()), i.body.end());
    llvm::sort(i.buffers);
    i.buffers.erase(std::unique(i.buffers.begin(), i.buffers.end()), i.buffers.end());
    for (size_t k = 0; k < i.body.size(); ++k) {
      const Instr &in = P.instrs[i.body[k]];
      if (in.engine == Engine::Dma)
        for (uint32_t q = 0; q < in.queueSpan; ++q)
          i.units.push_back(TimingScheduler::NumComputeUnits + in.queue + q);
      else
        i.units.push_back(uint32_t(in.engine));
    }
    llvm::sort(i.units);
    i.units.erase(std::unique(i.units.begin(), i.units.end()), i.units.end());
    for (size_t k = 0; k < i.body.size(); ++k)
      if (P.instrs[i.body[k]].op == Opcode::Dma) {
        i.bodyDma.push_back(i.body[k]);
        i.dmaPos.push_back(uint32_t(k));
      }
  }
}

LoopWatch::LoopWatch(const Program &P, const LoopShapes::Info &info, const Loop &loop, TimingScheduler &sched,
                     const LoopWatch *enclosing)
    : P(P), info(info), loop(loop), sched(sched), enclosing(enclosing), ownsLog(true),
      maxPeriod(MaxPeriod / info.period * info.period) {
  // An enclosing watch's done state changes only at its own boundaries,
  // while this one does not exist: ownership is settled here.
  for (const LoopWatch *w = enclosing; w; w = w->enclosing)
    ownsLog = ownsLog && w->done;
  if (ownsLog)
    sched.setLogging(true);
}

LoopWatch::~LoopWatch() { finish(); }

void LoopWatch::finish() {
  if (done)
    return;
  done = true;
  history.clear();
  if (ownsLog)
    sched.setLogging(false);
}

bool LoopWatch::sameRotation(const Boundary &b, const Boundary &c) const {
  for (size_t i = 0; i < info.buffers.size(); ++i) {
    int64_t bufs = P.buffers[info.buffers[i]].bufs;
    if ((c.allocs[i] - b.allocs[i]) % bufs)
      return false;
  }
  for (size_t i = 0; i < info.bodyDma.size(); ++i) {
    uint64_t span = P.instrs[info.bodyDma[i]].queueSpan;
    uint32_t at = info.dmaPos[i];
    if ((c.timing.body[at].count - b.timing.body[at].count) % span)
      return false;
  }
  return true;
}

bool LoopWatch::sameShapes(int64_t from, int64_t to, const std::vector<int64_t> &vars) const {
  auto lastValue = [](const Loop &l, int64_t it) { return l.lo + it * l.step; };
  for (const AffineExpr &e : info.switches) {
    // The least value of an affine expression over the box of the variables'
    // ranges: the size is taken wherever it is not negative.
    int64_t least = e.constant;
    for (const auto &[var, coeff] : e.terms) {
      int64_t lo, hi;
      if (var == loop.var) {
        lo = lastValue(loop, from);
        hi = lastValue(loop, to - 1);
      } else if (const Loop &inner = P.loops[P.varLoop[var]];
                 llvm::is_contained(info.innerLoops, P.varLoop[var])) {
        lo = inner.lo;
        hi = lastValue(inner, inner.tripCount() - 1);
      } else {
        lo = hi = vars[var];
      }
      least += coeff * (coeff > 0 ? std::min(lo, hi) : std::max(lo, hi));
    }
    if (least < 0)
      return false;
  }
  return true;
}

int64_t LoopWatch::boundary(int64_t it, const std::vector<int64_t> &vars, std::vector<int64_t> &allocCount,
                            uint64_t &instrsDone) {
  if (done)
    return 0;
  const int64_t trip = loop.tripCount();
  if (it > GiveUpAfter) {
    finish();
    return 0;
  }
  Boundary now;
  while (int64_t(history.size()) >= 2 * maxPeriod + 1) {
    now = std::move(history.front()); // its storage is reused
    history.pop_front();
    ++first;
  }
  sched.mark(now.timing, info.body, info.bodyDma, info.units, maxTail());
  now.instrsDone = instrsDone;
  now.allocs.clear();
  for (uint32_t b : info.buffers)
    now.allocs.push_back(allocCount[b]);
  history.push_back(std::move(now));
  if (ownsLog && history.size() >= 2) {
    // The log holds 2 * maxPeriod iterations' records: past the budget, the
    // longer periods are not tried, and a loop whose shortest period does
    // not fit is left alone.
    uint64_t perIteration = history.back().timing.logPos - history[history.size() - 2].timing.logPos;
    while (maxPeriod > info.period && uint64_t(2 * maxPeriod) * perIteration > LogBudget)
      maxPeriod -= info.period;
    if (uint64_t(2 * maxPeriod) * perIteration > LogBudget) {
      finish();
      return 0;
    }
  }
  if (ownsLog)
    sched.trimLog(history.front().timing.logPos);
  auto at = [&](int64_t i) -> const Boundary & { return history[size_t(i - first)]; };
  for (int64_t p = info.period; p <= maxPeriod; p += info.period) {
    // Iteration 0 is a warm-up; the period [it - p, it) is repeated k times.
    if (it - 2 * p < 1)
      break;
    int64_t k = (trip - it - (p + 1)) / p;
    if (k < 1) {
      if (p == info.period)
        finish(); // fewer iterations remain than any skip would leave
      break;
    }
    const Boundary &a = at(it - 2 * p), &b = at(it - p), &c = at(it);
    double delta;
    if (!sameRotation(b, c) || !sameShapes(it - p, it + k * p, vars) || !sched.samePeriods(a.timing, b.timing, c.timing, delta) ||
        !sched.futureClear(a.timing, b.timing, c.timing, delta, uint64_t(k)))
      continue;
    // The owner of the log finishes right after the skip, and no enclosing
    // watch may skip: the skip's own records (some per skipped iteration)
    // would only grow the log with the loop's trip count.
    if (ownsLog)
      sched.pauseLogging();
    sched.skipPeriods(a.timing, b.timing, c.timing, info.body, info.bodyDma, delta, uint64_t(k));
    for (size_t i = 0; i < info.buffers.size(); ++i)
      allocCount[info.buffers[i]] += k * (c.allocs[i] - b.allocs[i]);
    instrsDone += uint64_t(k) * (c.instrsDone - b.instrsDone);
    didSkip = true;
    finish();
    return k * p;
  }
  return 0;
}

} // namespace tessel::runtime
