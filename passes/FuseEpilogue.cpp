//===- passes/FuseEpilogue.cpp - Elementwise ops as results leave PSUM ----===//
//
// `fuse-epilogue` folds an elementwise nest D = f(A, B, ...) into the nests
// producing its operands: where the producer stores a tile of A to HBM, it
// computes the tile of D instead (activations on the scalar engine, binary
// ops on the vector engine, as TileGen chose) and stores that. An operand
// that is a kernel input is loaded beside. When the tile stored was just
// evacuated from PSUM (`copy t <- acc`), the op reads the accumulator
// directly: SiLU and the gating product run as the accumulators leave PSUM.
// Two scratch operands must be stored by one block at the same region
// (after `fuse-siblings` merged their nests); A and B must have no other
// reader. A and the elementwise nest disappear: nothing goes through HBM.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// Where each HBM tensor is stored, and how often it is read.
struct TensorUses {
  struct Store {
    DmaOp *op;
    Block *block;
  };
  llvm::DenseMap<const Value *, llvm::SmallVector<Store, 1>> stores;
  llvm::DenseMap<const Value *, unsigned> reads, otherWrites;
};

void collect(Block &block, TensorUses &u) {
  for (auto &op : block.ops) {
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      collect(loop->body, u);
      continue;
    }
    for (Access *a : op->reads())
      if (a->base->type.space == MemSpace::HBM)
        ++u.reads[a->base];
    Access *w = op->write();
    if (!w || w->base->type.space != MemSpace::HBM)
      continue;
    auto *dma = llvm::dyn_cast<DmaOp>(op.get());
    if (dma && !dma->transpose && dma->tag == DmaTag::None && dma->src.base->type.space == MemSpace::SBUF)
      u.stores[w->base].push_back({dma, &block});
    else
      ++u.otherWrites[w->base];
  }
}

size_t indexIn(Block &b, const Op *op) {
  for (size_t i = 0; i < b.ops.size(); ++i)
    if (b.ops[i].get() == op)
      return i;
  return b.ops.size();
}

/// A compute op reading a tile that was just copied out of PSUM reads the
/// accumulator instead; the copy (and the tile, when unused) goes away.
/// A tensor_tensor reads at most one input from PSUM (nisa.tensor_tensor), so
/// its second accumulator keeps its copy.
void readAccumulators(Block &block, Op &compute) {
  bool binary = llvm::isa<TensorTensorOp>(compute);
  for (Access *r : compute.reads()) {
    if (r->base->type.space != MemSpace::SBUF)
      continue;
    if (binary && llvm::any_of(compute.reads(), [](Access *a) { return a->base->type.space == MemSpace::PSUM; }))
      continue;
    size_t copyAt = block.ops.size(), uses = 0;
    for (size_t i = 0; i < block.ops.size(); ++i) {
      Op &o = *block.ops[i];
      bool reads = false;
      walkOp(o, [&](Op &x) {
        for (Access *a : x.reads())
          reads |= a->base == r->base;
      });
      uses += reads;
      auto *copy = llvm::dyn_cast<CopyOp>(&o);
      if (copy && copy->dst.base == r->base && copy->src.base->type.space == MemSpace::PSUM &&
          sameIndices(copy->dst, *r))
        copyAt = i;
    }
    if (copyAt == block.ops.size() || uses != 1)
      continue;
    *r = llvm::cast<CopyOp>(block.ops[copyAt].get())->src;
    block.ops.erase(block.ops.begin() + copyAt);
  }
  // Tiles no longer used at all lose their alloc.
  eraseUnusedTiles(block);
}

/// The stores of a nest's scratch operands that one block makes at one
/// region: the elementwise op runs there, on those tiles.
using StoreGroup = llvm::SmallVector<TensorUses::Store, 2>;

/// Groups the stores of `e`'s scratch operands by block (one group per row
/// nest: TileGen peels a partial last row strip into a nest of its own).
/// Empty when `e` cannot be folded: an operand stored other than by plain
/// stores, read elsewhere, or stored in a block where another is not.
std::vector<StoreGroup> storeGroups(const ElementwiseNest &e, const TensorUses &u) {
  llvm::SmallVector<llvm::ArrayRef<TensorUses::Store>, 2> perOperand;
  for (DmaOp *load : e.loads) {
    const Value *a = load->src.base;
    if (a->role != TensorRole::Scratch) {
      if (u.stores.count(a) || u.otherWrites.lookup(a))
        return {}; // an output or a tensor written in the kernel
      continue;
    }
    auto it = u.stores.find(a);
    if (it == u.stores.end() || u.otherWrites.lookup(a) || u.reads.lookup(a) != 1 || !a->def)
      return {};
    perOperand.push_back(it->second);
  }
  if (perOperand.empty())
    return {};
  std::vector<StoreGroup> groups;
  for (const TensorUses::Store &first : perOperand.front()) {
    StoreGroup g;
    for (llvm::ArrayRef<TensorUses::Store> stores : perOperand) {
      auto same = llvm::make_filter_range(stores, [&](const TensorUses::Store &s) {
        return s.block == first.block && sameIndices(s.op->dst, first.op->dst);
      });
      if (std::distance(same.begin(), same.end()) != 1)
        return {};
      g.push_back(*same.begin());
    }
    groups.push_back(std::move(g));
  }
  for (llvm::ArrayRef<TensorUses::Store> stores : perOperand)
    if (stores.size() != groups.size())
      return {};
  return groups;
}

/// Computes `e`'s result where group `g` stores its operands, and stores it.
void foldInto(Kernel &kernel, const ElementwiseNest &e, const StoreGroup &g) {
  Value *d = e.dest();
  Block &block = *g.front().block;
  const Access &region = g.front().op->dst;
  size_t at = 0;
  for (auto &s : g)
    at = std::max(at, indexIn(block, s.op));

  // Built after the last operand's store: operands, the op, the store of D.
  llvm::SMLoc loc = e.compute->loc;
  std::vector<std::unique_ptr<Op>> built;
  const Access &anchorTile = g.front().op->src;
  llvm::DenseMap<const Value *, Access> operandOf; // e's tile -> the producer's tile
  for (size_t i = 0, s = 0; i < e.loads.size(); ++i) {
    DmaOp *load = e.loads[i];
    if (load->src.base->role == TensorRole::Scratch) {
      operandOf[load->dst.base] = g[s++].op->src;
      continue;
    }
    // A kernel input (a bias, a residual): its tile of the region, loaded here.
    Block holder;
    Value *tile = appendAlloc(kernel, holder, load->src.base->name + "_tile", MemSpace::SBUF,
                              load->src.base->type.dtype, anchorTile.base->type.dims, 2, load->loc);
    auto dma = std::make_unique<DmaOp>();
    dma->loc = load->loc;
    dma->dst = anchorTile;
    dma->dst.base = tile;
    dma->src = region;
    dma->src.base = load->src.base;
    operandOf[load->dst.base] = dma->dst;
    built.push_back(std::move(holder.ops.front()));
    built.push_back(std::move(dma));
  }
  Block holder;
  Value *out = appendAlloc(kernel, holder, d->name + "_tile", MemSpace::SBUF, d->type.dtype,
                           anchorTile.base->type.dims, 2, loc);
  built.push_back(std::move(holder.ops.front()));
  ValueMap none;
  std::unique_ptr<Op> compute = cloneOp(*e.compute, kernel, none);
  for (Access *r : compute->reads())
    *r = operandOf.find(r->base)->second;
  *compute->write() = anchorTile;
  compute->write()->base = out;
  Op *computeOp = compute.get();
  built.push_back(std::move(compute));
  auto store = std::make_unique<DmaOp>();
  store->loc = e.store->loc;
  store->dst = region;
  store->dst.base = d;
  store->src = anchorTile;
  store->src.base = out;
  built.push_back(std::move(store));

  block.ops.insert(block.ops.begin() + at + 1, std::make_move_iterator(built.begin()),
                   std::make_move_iterator(built.end()));
  llvm::SmallPtrSet<Op *, 4> dead;
  for (auto &s : g)
    dead.insert(s.op);
  llvm::erase_if(block.ops, [&](const std::unique_ptr<Op> &op) { return dead.count(op.get()); });
  readAccumulators(block, *computeOp);
}

/// Folds `e` into its operands' producers; false when it cannot.
bool foldNest(Kernel &kernel, const ElementwiseNest &e, const TensorUses &u) {
  std::vector<StoreGroup> groups = storeGroups(e, u);
  if (groups.empty())
    return false;
  for (const StoreGroup &g : groups)
    foldInto(kernel, e, g);
  // D is now written by the producers' nests: its alloc goes to the front;
  // the operands' scratch tensors and the nest itself go away.
  Value *d = e.dest();
  for (size_t i = 0; i < kernel.body.ops.size(); ++i)
    if (kernel.body.ops[i].get() == d->def) {
      std::unique_ptr<Op> alloc = std::move(kernel.body.ops[i]);
      kernel.body.ops.erase(kernel.body.ops.begin() + i);
      kernel.body.ops.insert(kernel.body.ops.begin(), std::move(alloc));
      break;
    }
  llvm::SmallPtrSet<Op *, 4> gone;
  gone.insert(e.outer);
  for (DmaOp *load : e.loads)
    if (load->src.base->role == TensorRole::Scratch)
      gone.insert(load->src.base->def);
  llvm::erase_if(kernel.body.ops, [&](const std::unique_ptr<Op> &op) { return gone.count(op.get()); });
  return true;
}

class FuseEpiloguePass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-epilogue"; }
  llvm::StringRef description() const override {
    return "apply elementwise ops (silu, gelu, *, +, ...) where their operands' producers store "
           "them, reading the accumulators as they leave PSUM: no HBM round trip";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      TensorUses uses;
      collect(kernel.body, uses);
      for (auto &op : kernel.body.ops) {
        auto e = matchElementwiseNest(*op);
        if (e && foldNest(kernel, *e, uses)) {
          changed = again = true;
          break;
        }
      }
    }
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseEpiloguePass() { return std::make_unique<FuseEpiloguePass>(); }

} // namespace tessel::passes
