#include "passes/KBlockedTranspose.h"

#include "ir/Builder.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The one op of kind T in `root` (recursively), or null when there is
/// none or more than one.
template <typename T> T *onlyOp(Op &root, llvm::function_ref<bool(T &)> pred) {
  T *found = nullptr;
  unsigned count = 0;
  walkOp(root, [&](Op &o) {
    if (auto *t = llvm::dyn_cast<T>(&o); t && pred(*t)) {
      found = t;
      ++count;
    }
  });
  return count == 1 ? found : nullptr;
}

/// `step` over [0, size): the extent of the piece at `at`, constant when
/// `step` divides `size`.
IndexExpr pieceExtent(int64_t size, int64_t step, Value *at) {
  return size % step == 0 ? IndexExpr(step) : min(IndexExpr(step), IndexExpr(size) - IndexExpr::var(at));
}

class Rewriter {
public:
  Rewriter(Kernel &k, const KBlockedProducer &p, Value *ct)
      : kernel(k), p(p), ct(ct), tile(k.geometry.partitions), moving(k.geometry.maxMoving) {
    Value *accS = p.accAlloc->result;
    rowDim = accS->type.dims[0];
    nDim = accS->type.dims[1];
    stripRows = rowDim.size;
    ForOp &rb = *p.rowStrip;
    int64_t span = rb.hi.constValue() - rb.lo.constValue();
    rowsValid = span % rb.step == 0 ? rb.step : span;
    columns = ct->type.dims[0].size;
    loc = p.rowStrip->loc;
  }

  void run() {
    // accS^T in accS's place.
    Value *accS = p.accAlloc->result;
    accT = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(accS->name + "T"));
    accT->type = accS->type;
    accT->type.dims = {nDim, rowDim};
    accT->role = accS->role;
    accT->loc = accS->loc;
    accT->def = p.accAlloc;
    p.accAlloc->result = accT;

    Block &body = p.rowStrip->body;
    for (auto &op : body.ops) {
      if (op.get() == p.zeroLoop)
        op = buildZero();
      else if (op.get() == p.storeNest)
        op = buildStores();
    }
    for (auto &[kb, column] : p.kBlocks)
      for (auto &op : kb->body.ops)
        if (op.get() == column)
          op = buildColumns(*kb, *column);
  }

private:
  std::unique_ptr<Op> takeFront(Block &holder) { return std::move(holder.ops.front()); }

  /// for %r { memset %accT[%r +: P, 0 +: m], 0.0 }
  std::unique_ptr<Op> buildZero() {
    Block holder;
    ForOp &rows = appendLoop(kernel, holder, "r", 0, nDim.size, tile, loc);
    auto zero = std::make_unique<MemsetOp>();
    zero->loc = loc;
    zero->dst = makeAccess(accT, {{IndexExpr::var(rows.iv), tile}, {0, stripRows}});
    rows.body.ops.push_back(std::move(zero));
    return takeFront(holder);
  }

  /// Per column block of C^T: B's block of this K block, then per chunk of
  /// the strip's rows the partial sums in PSUM, added into accS^T.
  std::unique_ptr<Op> buildColumns(ForOp &kb, ForOp &oldColumn) {
    auto *mm = onlyOp<MatmulOp>(oldColumn, [](MatmulOp &) { return true; });
    auto *load = onlyOp<DmaOp>(oldColumn, [](DmaOp &d) { return d.src.base->type.space == MemSpace::HBM; });
    Value *aT = mm->stationary.base, *b = load->src.base;
    const Dim &kDim = b->type.dims[0];
    int64_t kLen = kb.step;
    // B's block is as wide as one PSUM bank's moving columns when they
    // divide C^T's rows (each transfer moves that width per partition),
    // whatever column block the output uses.
    int64_t tileN = columns % moving == 0 ? moving : oldColumn.step;
    bool whole = columns % tileN == 0 && tileN % tile == 0;
    if (!whole)
      tileN = tile;
    IndexExpr kbStart = IndexExpr::var(kb.iv);

    Block holder;
    ForOp &column = appendLoop(kernel, holder, "n", 0, columns, tileN, loc);
    IndexExpr n = IndexExpr::var(column.iv);
    IndexExpr colExt = whole ? IndexExpr(tileN) : pieceExtent(columns, tile, column.iv);
    IndexExpr sliceExt = tileN > tile ? IndexExpr(tile) : colExt;
    Value *bBlk = appendAlloc(kernel, column.body, b->name + "_blk", MemSpace::SBUF, b->type.dtype,
                              {Dim{kDim.label, aT->type.dims[0].size}, Dim{nDim.label, tileN}}, 2, loc);
    ForOp &fill = appendLoop(kernel, column.body, "k", 0, kLen, tile, loc);
    IndexExpr ek = pieceExtent(kLen, tile, fill.iv);
    auto dma = std::make_unique<DmaOp>();
    dma->loc = load->loc;
    dma->dst = makeAccess(bBlk, {{IndexExpr::var(fill.iv), ek}, {0, colExt}});
    dma->src = makeAccess(b, {{kbStart + IndexExpr::var(fill.iv), ek}, {n, colExt}});
    fill.body.ops.push_back(std::move(dma));

    ForOp &chunks = appendLoop(kernel, column.body, "mc", 0, rowsValid, moving, loc);
    IndexExpr mc = IndexExpr::var(chunks.iv);
    IndexExpr cr = pieceExtent(rowsValid, moving, chunks.iv);
    Value *acc = appendAlloc(kernel, chunks.body, "accT", MemSpace::PSUM, DType::F32,
                             {Dim{nDim.label, tileN}, Dim{rowDim.label, moving}}, 2, loc);
    ForOp &kLoop = appendLoop(kernel, chunks.body, "k", 0, kLen, tile, loc);
    IndexExpr k = IndexExpr::var(kLoop.iv), ek2 = pieceExtent(kLen, tile, kLoop.iv);
    ForOp &slices = appendLoop(kernel, kLoop.body, "ni", 0, tileN, tile, loc);
    IndexExpr ni = IndexExpr::var(slices.iv);
    auto matmul = std::make_unique<MatmulOp>();
    matmul->loc = mm->loc;
    matmul->dst = makeAccess(acc, {{ni, sliceExt}, {0, cr}});
    matmul->stationary = makeAccess(bBlk, {{k, ek2}, {ni, sliceExt}});
    matmul->moving = makeAccess(aT, {{k, ek2}, {mc, cr}});
    matmul->resetOn.push_back(kLoop.iv);
    slices.body.ops.push_back(std::move(matmul));

    ForOp &adds = appendLoop(kernel, chunks.body, "ni", 0, tileN, tile, loc);
    IndexExpr ai = IndexExpr::var(adds.iv);
    auto add = std::make_unique<TensorTensorOp>();
    add->loc = loc;
    add->alu = AluOp::Add;
    add->dst = makeAccess(accT, {{n + ai, sliceExt}, {mc, cr}});
    add->lhs = add->dst;
    add->rhs = makeAccess(acc, {{ai, sliceExt}, {0, cr}});
    adds.body.ops.push_back(std::move(add));
    return takeFront(holder);
  }

  /// for %r { for %mc { %t <- %accT[%r, %mc]; dma %ct[%r, %mb + %mc] <- %t } }
  std::unique_ptr<Op> buildStores() {
    Block holder;
    ForOp &rows = appendLoop(kernel, holder, "r", 0, columns, tile, loc);
    IndexExpr r = IndexExpr::var(rows.iv), er = pieceExtent(columns, tile, rows.iv);
    ForOp &chunks = appendLoop(kernel, rows.body, "mc", 0, rowsValid, moving, loc);
    IndexExpr mc = IndexExpr::var(chunks.iv), cr = pieceExtent(rowsValid, moving, chunks.iv);
    Value *t = appendAlloc(kernel, chunks.body, ct->name + "_tile", MemSpace::SBUF, ct->type.dtype,
                           {Dim{nDim.label, tile}, Dim{rowDim.label, moving}}, 2, loc);
    auto copy = std::make_unique<CopyOp>();
    copy->loc = loc;
    copy->dst = makeAccess(t, {{0, er}, {0, cr}});
    copy->src = makeAccess(accT, {{r, er}, {mc, cr}});
    chunks.body.ops.push_back(std::move(copy));
    auto store = std::make_unique<DmaOp>();
    store->loc = loc;
    store->dst = makeAccess(ct, {{r, er}, {IndexExpr::var(p.rowStrip->iv) + mc, cr}});
    store->src = makeAccess(t, {{0, er}, {0, cr}});
    chunks.body.ops.push_back(std::move(store));
    return takeFront(holder);
  }

  Kernel &kernel;
  const KBlockedProducer &p;
  Value *ct, *accT = nullptr;
  const int64_t tile, moving;
  Dim rowDim, nDim;
  int64_t stripRows = 0, rowsValid = 0, columns = 0;
  llvm::SMLoc loc;
};

} // namespace

std::optional<KBlockedProducer> matchKBlockedProducer(DmaOp &store, llvm::ArrayRef<ForOp *> loops) {
  if (loops.size() < 3 || store.transpose)
    return std::nullopt;
  ForOp *mi = loops[loops.size() - 1], *n = loops[loops.size() - 2], *rb = loops[loops.size() - 3];
  if (n->body.ops.size() != 1 || n->body.ops[0].get() != mi || mi->body.ops.size() != 3 ||
      opAt<DmaOp>(mi->body, 2) != &store || !rb->lo.isConst() || !rb->hi.isConst())
    return std::nullopt;
  // A partial row strip is a one-iteration nest of its own (TileGen peels it).
  int64_t span = rb->hi.constValue() - rb->lo.constValue();
  if (span % rb->step != 0 && span > rb->step)
    return std::nullopt;
  auto *copy = opAt<CopyOp>(mi->body, 1);
  if (!opAt<AllocOp>(mi->body, 0) || !copy || store.src.base != copy->dst.base)
    return std::nullopt;
  Value *accS = copy->src.base;
  if (accS->type.space != MemSpace::SBUF || accS->type.dtype != DType::F32 || accS->type.dims.size() != 2)
    return std::nullopt;

  KBlockedProducer p;
  p.rowStrip = rb;
  p.storeNest = n;
  Block &body = rb->body;
  if (body.ops.empty() || body.ops.back().get() != n)
    return std::nullopt;
  for (size_t i = 0; i + 1 < body.ops.size(); ++i) {
    Op *op = body.ops[i].get();
    if (auto *a = llvm::dyn_cast<AllocOp>(op); a && a->result == accS && a->bufs == 1 && i == 0) {
      p.accAlloc = a;
      continue;
    }
    auto *loop = llvm::dyn_cast<ForOp>(op);
    if (!loop)
      return std::nullopt;
    if (i == 1) {
      auto *zero = opAt<MemsetOp>(loop->body, 0);
      if (loop->body.ops.size() != 1 || !zero || zero->dst.base != accS || zero->value != 0.0)
        return std::nullopt;
      p.zeroLoop = loop;
      continue;
    }
    // A K-block loop: the strip A^T of the block, its fill, the column loop.
    auto *column = loop->body.ops.empty() ? nullptr : llvm::dyn_cast<ForOp>(loop->body.ops.back().get());
    if (!column || !loop->lo.isConst() || !loop->hi.isConst())
      return std::nullopt;
    auto *mm = onlyOp<MatmulOp>(*column, [](MatmulOp &) { return true; });
    auto *load = onlyOp<DmaOp>(*column, [](DmaOp &d) { return d.src.base->type.space == MemSpace::HBM; });
    auto *add = onlyOp<TensorTensorOp>(*column, [](TensorTensorOp &) { return true; });
    unsigned dmas = 0;
    walkOp(*column, [&](Op &o) { dmas += llvm::isa<DmaOp>(o); });
    if (!mm || !load || load->transpose || !add || dmas != 1 || add->alu != AluOp::Add ||
        add->dst.base != accS || add->rhs.base != mm->dst.base || mm->moving.base != load->dst.base ||
        load->src.base->type.dims.size() != 2)
      return std::nullopt;
    Value *aT = mm->stationary.base;
    auto *aAlloc = llvm::dyn_cast_or_null<AllocOp>(aT->def);
    if (!aAlloc || aT->type.space != MemSpace::SBUF ||
        !llvm::any_of(loop->body.ops, [&](const std::unique_ptr<Op> &o) { return o.get() == aAlloc; }))
      return std::nullopt;
    p.kBlocks.push_back({loop, column});
  }
  if (!p.accAlloc || !p.zeroLoop || p.kBlocks.empty())
    return std::nullopt;
  // accS is read by nothing but the adds and the store nest's copy.
  bool otherReads = false;
  walkOp(*rb, [&](Op &o) {
    for (Access *a : o.reads())
      otherReads |= a->base == accS && !llvm::isa<TensorTensorOp>(o) && &o != copy;
  });
  if (otherReads)
    return std::nullopt;
  return p;
}

void transposeKBlockedProducer(Kernel &kernel, const KBlockedProducer &p, Value *ct) {
  Rewriter(kernel, p, ct).run();
}

} // namespace tessel::passes
