//===- runtime/Horizon.cpp - Which units may still run ---------------------===//
#include "runtime/Horizon.h"

#include "llvm/ADT/BitVector.h"

#include <algorithm>
#include <limits>
#include <map>

namespace tessel::runtime {

namespace {

struct Builder {
  const Program &P;
  unsigned nCompute, nUnits;
  std::vector<llvm::BitVector> future; ///< per instruction

  llvm::BitVector unitsOf(const Stmt &s) const {
    llvm::BitVector u(nUnits);
    if (s.kind == Stmt::Kind::Instr) {
      const Instr &in = P.instrs[s.id];
      if (in.engine == Engine::Dma)
        u.set(nCompute + in.queue, nCompute + in.queue + in.queueSpan);
      else
        u.set(unsigned(in.engine));
    } else if (s.kind == Stmt::Kind::For && P.loops[s.id].tripCount() > 0) {
      for (const Stmt &b : P.loops[s.id].body)
        u |= unitsOf(b);
    }
    return u;
  }

  /// `after`: the units that may run once this body is left (or repeated).
  void walk(const std::vector<Stmt> &body, const llvm::BitVector &after) {
    std::vector<llvm::BitVector> suffix(body.size() + 1, after);
    for (size_t i = body.size(); i-- > 0;) {
      suffix[i] = suffix[i + 1];
      suffix[i] |= unitsOf(body[i]);
    }
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i].kind == Stmt::Kind::Instr)
        future[body[i].id] = suffix[i];
      else if (body[i].kind == Stmt::Kind::For)
        walk(P.loops[body[i].id].body, suffix[i]); // suffix[i] holds the whole loop body
    }
  }
};

} // namespace

UnitHorizon::UnitHorizon(const Program &P, unsigned numComputeUnits) {
  unsigned nUnits = numComputeUnits;
  for (const Instr &in : P.instrs)
    if (in.engine == Engine::Dma)
      nUnits = std::max(nUnits, numComputeUnits + in.queue + in.queueSpan);
  Builder b{P, numComputeUnits, nUnits, std::vector<llvm::BitVector>(P.instrs.size(), llvm::BitVector(nUnits))};
  b.walk(P.body, llvm::BitVector(nUnits));
  std::map<std::vector<uint32_t>, uint32_t> index;
  setOf.resize(P.instrs.size());
  for (size_t i = 0; i < P.instrs.size(); ++i) {
    std::vector<uint32_t> units;
    for (unsigned u : b.future[i].set_bits())
      units.push_back(u);
    auto [it, inserted] = index.try_emplace(units, uint32_t(sets.size()));
    if (inserted)
      sets.push_back(units);
    setOf[i] = it->second;
  }
}

double UnitHorizon::at(uint32_t instr, const std::vector<double> &unitFree, unsigned firstUnit) const {
  double h = std::numeric_limits<double>::infinity();
  for (uint32_t u : sets[setOf[instr]])
    if (u >= firstUnit)
      h = std::min(h, unitFree[u]);
  return h;
}

bool UnitHorizon::mayRun(uint32_t instr, unsigned unit) const {
  const std::vector<uint32_t> &units = sets[setOf[instr]];
  return std::binary_search(units.begin(), units.end(), unit);
}

} // namespace tessel::runtime
