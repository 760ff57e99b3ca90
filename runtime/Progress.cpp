//===- runtime/Progress.cpp - How much a run will do, how far it is --------===//
#include "runtime/Simulator.h"

#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <memory>

namespace tessel::runtime {

namespace {

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

uint64_t countBody(const Program &P, const std::vector<Stmt> &body) {
  uint64_t n = 0;
  for (const Stmt &s : body) {
    if (s.kind == Stmt::Kind::Instr)
      n = saturatingAdd(n, 1);
    else if (s.kind == Stmt::Kind::For)
      n = saturatingAdd(n, saturatingMul(uint64_t(P.loops[s.id].tripCount()), countBody(P, P.loops[s.id].body)));
  }
  return n;
}

std::string duration(double s) {
  if (s < 120)
    return fmt::format("{:.0f} s", s);
  if (s < 7200)
    return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

} // namespace

uint64_t dynamicInstructionCount(const Program &prog) { return countBody(prog, prog.body); }

std::function<void(uint64_t, uint64_t)> terminalProgress(llvm::raw_ostream &os, std::string what,
                                                          double afterSeconds) {
  using Clock = std::chrono::steady_clock;
  struct State {
    Clock::time_point start = Clock::now(), last;
    bool shown = false;
  };
  auto st = std::make_shared<State>();
  return [&os, what = std::move(what), afterSeconds, st](uint64_t done, uint64_t total) {
    Clock::time_point now = Clock::now();
    double spent = std::chrono::duration<double>(now - st->start).count();
    if (done >= total) {
      if (st->shown)
        os << "\r\x1b[K"; // clear the line
      os.flush();
      return;
    }
    if (spent < afterSeconds || std::chrono::duration<double>(now - st->last).count() < 0.25)
      return;
    st->last = now;
    st->shown = true;
    double share = total ? double(done) / double(total) : 0.0;
    double left = done ? spent * double(total - done) / double(done) : 0.0;
    os << fmt::format("\r\x1b[Ktessel: simulating {}: {:.1f}% of {} instructions, {} spent, ~{} left", what,
                      100.0 * share, total, duration(spent), duration(left));
    os.flush();
  };
}

} // namespace tessel::runtime
