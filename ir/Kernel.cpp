#include "ir/Kernel.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>
#include <atomic>
#include <functional>

namespace tessel::ir {

llvm::StringRef roleName(TensorRole r) {
  switch (r) {
  case TensorRole::Input: return "input";
  case TensorRole::Output: return "output";
  case TensorRole::Scratch: return "scratch";
  case TensorRole::Spill: return "spill";
  }
  return "?";
}

std::optional<Opcode> opcodeOf(OpKind kind) {
  if (kind <= OpKind::For)
    return std::nullopt;
  // Instruction kinds follow the structural ones, in Ops.def order.
  return Opcode(unsigned(kind) - unsigned(OpKind::For) - 1);
}

llvm::StringRef Op::mnemonic() const {
  if (auto op = opcodeOf(kind))
    return opcodeName(*op);
  return kind == OpKind::Alloc ? "alloc" : kind == OpKind::View ? "view" : "for";
}

llvm::SmallVector<llvm::StringRef, 3> Op::readRoles() const {
  llvm::SmallVector<llvm::StringRef, 3> roles;
  if (auto op = opcodeOf(kind))
    roles.append(opInfo(*op).srcRoles.begin(), opInfo(*op).srcRoles.end());
  return roles;
}

AffineIndex *affineIndexOf(Op &op) {
  if (auto *iota = llvm::dyn_cast<IotaOp>(&op))
    return &iota->index;
  if (auto *select = llvm::dyn_cast<AffineSelectOp>(&op))
    return &select->index;
  return nullptr;
}

llvm::SmallVector<unsigned, 3> Access::rangeDims() const {
  llvm::SmallVector<unsigned, 3> dims;
  for (unsigned i = 0; i < indices.size(); ++i)
    if (indices[i].isRange())
      dims.push_back(i);
  return dims;
}

IndexExpr Index::span() const {
  if (!isPatterned())
    return extent ? *extent : IndexExpr(int64_t(1));
  int64_t last = (extent->constValue() - 1) * step;
  for (const SubRange &r : more)
    last += (r.extent - 1) * r.step;
  return IndexExpr(last + 1);
}

llvm::SmallVector<TileDim, 4> Access::tileDims() const {
  llvm::SmallVector<TileDim, 4> written;
  for (unsigned i = 0; i < indices.size(); ++i) {
    const Index &idx = indices[i];
    if (!idx.extent)
      continue;
    written.push_back({i, *idx.extent, idx.step});
    for (const SubRange &r : idx.more)
      written.push_back({i, IndexExpr(r.extent), r.step});
  }
  if (order.empty())
    return written;
  llvm::SmallVector<TileDim, 4> out;
  for (unsigned o : order)
    if (o < written.size())
      out.push_back(written[o]);
  return out;
}

bool Access::isPattern() const {
  return !order.empty() || llvm::any_of(indices, [](const Index &i) { return i.isPatterned(); });
}

void Access::print(llvm::raw_ostream &os) const {
  os << '%' << base->name << '[';
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i)
      os << ", ";
    const Index &idx = indices[i];
    os << idx.start;
    if (!idx.extent)
      continue;
    os << " +: " << *idx.extent;
    if (idx.step != 1)
      os << " step " << idx.step;
    for (const SubRange &r : idx.more) {
      os << " +: " << r.extent;
      if (r.step != 1)
        os << " step " << r.step;
    }
  }
  os << ']';
  if (!order.empty()) {
    os << " order (";
    for (size_t i = 0; i < order.size(); ++i)
      os << (i ? ", " : "") << order[i];
    os << ')';
  }
}

Value *Kernel::newValue(ValueKind kind, std::string valueName) {
  values.push_back(std::make_unique<Value>());
  Value *v = values.back().get();
  v->kind = kind;
  v->name = std::move(valueName);
  v->id = values.size() - 1;
  usedNames.insert(v->name);
  return v;
}

std::string Kernel::uniqueName(llvm::StringRef hint) const {
  if (!usedNames.count(hint))
    return hint.str();
  unsigned &suffix = firstFreeSuffix[hint];
  for (suffix = std::max(suffix, 1u);; ++suffix) {
    std::string candidate = (hint + llvm::Twine(suffix)).str();
    if (!usedNames.count(candidate))
      return candidate;
  }
}

std::string shorterRowStripAdvice(const Kernel &kernel, llvm::StringRef otherwise) {
  int64_t m = kernel.blockParams.lookup(BlockConfig::kRowStrip);
  int64_t tile = kernel.geometry.partitions;
  if (m <= tile)
    return otherwise.str();
  return llvm::formatv("use a shorter row strip, e.g. --block m={0}",
                       std::max<int64_t>(tile, llvm::alignDown(m / 2, tile)))
      .str();
}

uint64_t ForOp::nextSerial(bool peek) {
  static std::atomic<uint64_t> next{0};
  return peek ? next.load() : next++;
}

void walkOp(Op &op, const std::function<void(Op &)> &fn) {
  fn(op);
  if (auto *loop = llvm::dyn_cast<ForOp>(&op))
    for (auto &inner : loop->body.ops)
      walkOp(*inner, fn);
}

static void walkImpl(Block &block, llvm::SmallVectorImpl<ForOp *> &loops,
                     const std::function<void(Op &, llvm::ArrayRef<ForOp *>)> &fn) {
  for (auto &op : block.ops) {
    fn(*op, loops);
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      loops.push_back(loop);
      walkImpl(loop->body, loops, fn);
      loops.pop_back();
    }
  }
}

void walk(Block &block, const std::function<void(Op &, llvm::ArrayRef<ForOp *>)> &fn) {
  llvm::SmallVector<ForOp *, 8> loops;
  walkImpl(block, loops, fn);
}

} // namespace tessel::ir
