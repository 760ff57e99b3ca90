//===- passes/ImplicitTranspose.cpp - Layouts without transposes ----------===//
//
// `implicit-transpose` removes the tensor-engine transposes of the
// straightforward form (the paper's "implicit transposition"):
//
// 1. A tile loaded from HBM only to be transposed on the tensor engine and
//    copied into SBUF (dma; transpose; copy) becomes one transposing DMA
//    (nl.load_transpose2d): the I/O transposes move to the DMA engines.
// 2. A matmul nest whose HBM result C is read only through transposing DMAs
//    (its consumers want C^T on the partitions) computes C^T = B^T A^T
//    instead: B's tile becomes the stationary operand and the transposed
//    row strip A^T the moving one, so the result lands with C's columns on
//    the partitions; it is stored to a scratch tensor C^T and the consumers'
//    loads become plain DMAs. No transpose remains on that edge.
// 3. An elementwise nest (silu(a) * b, ...) whose result is wanted
//    transposed computes it from transposed operands (passes/Elementwise.h),
//    so rewrite 2 reaches the matmuls behind it: an MLP's gated result is
//    produced in the layout its down projection reads.
// 4. An input's transpose that TileGen wrote to an HBM scratch is read in
//    place: its readers load the input with the indices swapped and the
//    opposite transpose flag (passes/InputTransposes.cpp), and the scratch
//    goes. Where the input is read again by every row strip (a weight
//    used as W.T), the scratch becomes an SBUF buffer filled once at the
//    kernel's start (passes/ResidentTransposes.cpp).
// All four rewrites keep the kernel's numbers: every value is computed by the
// same products and sums, only operand roles and layouts change.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/InputTransposes.h"
#include "passes/KBlockedTranspose.h"
#include "passes/Passes.h"

#include "ir/Builder.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace tessel::passes {
namespace {

using namespace ir;

/// Counts the accesses that name each value.
llvm::DenseMap<const Value *, unsigned> countUses(Kernel &kernel) {
  llvm::DenseMap<const Value *, unsigned> uses;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    for (Access *a : op.reads())
      ++uses[a->base];
    for (Access *w : op.writes())
      ++uses[w->base];
  });
  return uses;
}

/// The same region of the same buffer.
bool sameAccess(const Access &a, const Access &b) { return a.base == b.base && sameIndices(a, b); }

// ---- 1. load + tensor-engine transpose + copy -> transposing DMA ----------

bool foldLoadTransposes(Block &block, llvm::DenseMap<const Value *, unsigned> &uses) {
  bool changed = false;
  for (auto &op : block.ops)
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      changed |= foldLoadTransposes(loop->body, uses);
  for (size_t i = 0; i + 4 < block.ops.size(); ++i) {
    auto *tileAlloc = opAt<AllocOp>(block, i);
    auto *load = opAt<DmaOp>(block, i + 1);
    auto *psumAlloc = opAt<AllocOp>(block, i + 2);
    auto *tr = opAt<TransposeOp>(block, i + 3);
    auto *copy = opAt<CopyOp>(block, i + 4);
    if (!tileAlloc || !load || !psumAlloc || !tr || !copy)
      continue;
    Value *tile = tileAlloc->result, *psum = psumAlloc->result;
    if (load->transpose || load->tag != DmaTag::None || load->dst.base != tile ||
        load->src.base->type.space != MemSpace::HBM || tr->dst.base != psum ||
        !sameAccess(tr->src, load->dst) || !sameAccess(copy->src, tr->dst) ||
        uses[tile] != 2 || uses[psum] != 2 ||
        copy->dst.base->type.dtype != load->src.base->type.dtype)
      continue;
    auto dma = std::make_unique<DmaOp>();
    dma->loc = load->loc;
    dma->transpose = true;
    dma->dst = copy->dst;
    dma->src = load->src;
    block.ops.erase(block.ops.begin() + i, block.ops.begin() + i + 5);
    block.ops.insert(block.ops.begin() + i, std::move(dma));
    changed = true;
  }
  return changed;
}

// ---- 2. matmul nests that produce their consumers' transposed operand -----

/// The pieces of a TileGen matmul column loop (see frontend/TileGen.cpp), in
/// either of its two forms. Streamed B (a row strip's accumulators fit PSUM):
///   for %n { %acc = alloc psum
///            for %k { %B_tile = alloc; dma %B_tile <- %B; for %mi { matmul } }
///            for %mi { %C_tile = alloc; copy %C_tile <- %acc; dma %C <- %C_tile } }
/// Held B (taller row strips):
///   for %n { %B_blk = alloc; for %k { dma %B_blk[k] <- %B }
///            for %mi { %acc = alloc psum; for %k { matmul }
///                      %C_tile = alloc; copy %C_tile <- %acc; dma %C <- %C_tile } }
struct MatmulColumnLoop {
  ForOp *rowStrip, *column, *kLoop;
  DmaOp *loadB;
  MatmulOp *matmul;
  bool heldB = false;
  int64_t rows = 0; // the row strip's height (m)
};

std::optional<MatmulColumnLoop> matchStreamedColumn(DmaOp &store, ForOp *rowStrip, ForOp *column,
                                                    ForOp *storeLoop) {
  Block &nb = column->body, &sb = storeLoop->body;
  auto *acc = opAt<AllocOp>(nb, 0);
  auto *kLoop = opAt<ForOp>(nb, 1);
  if (nb.ops.size() != 3 || !acc || !kLoop || opAt<ForOp>(nb, 2) != storeLoop || sb.ops.size() != 3 ||
      opAt<DmaOp>(sb, 2) != &store)
    return std::nullopt;
  Block &kb = kLoop->body;
  auto *bAlloc = opAt<AllocOp>(kb, 0);
  auto *loadB = opAt<DmaOp>(kb, 1);
  auto *miLoop = opAt<ForOp>(kb, 2);
  if (kb.ops.size() != 3 || !bAlloc || !loadB || !miLoop || miLoop->body.ops.size() != 1)
    return std::nullopt;
  auto *mm = opAt<MatmulOp>(miLoop->body, 0);
  if (!mm || mm->dst.base != acc->result || mm->moving.base != bAlloc->result ||
      loadB->dst.base != bAlloc->result || loadB->transpose)
    return std::nullopt;
  return MatmulColumnLoop{rowStrip, column, kLoop, loadB, mm, false, acc->result->type.dims[0].size};
}

std::optional<MatmulColumnLoop> matchHeldColumn(DmaOp &store, ForOp *rowStrip, ForOp *column,
                                                ForOp *miLoop) {
  Block &nb = column->body, &mb = miLoop->body;
  auto *bAlloc = opAt<AllocOp>(nb, 0);
  auto *fill = opAt<ForOp>(nb, 1);
  if (nb.ops.size() != 3 || !bAlloc || !fill || opAt<ForOp>(nb, 2) != miLoop ||
      fill->body.ops.size() != 1 || mb.ops.size() != 5 || opAt<DmaOp>(mb, 4) != &store)
    return std::nullopt;
  auto *loadB = opAt<DmaOp>(fill->body, 0);
  auto *acc = opAt<AllocOp>(mb, 0);
  auto *kLoop = opAt<ForOp>(mb, 1);
  if (!loadB || !acc || !kLoop || kLoop->body.ops.size() != 1)
    return std::nullopt;
  auto *mm = opAt<MatmulOp>(kLoop->body, 0);
  if (!mm || mm->dst.base != acc->result || mm->moving.base != bAlloc->result ||
      loadB->dst.base != bAlloc->result || loadB->transpose)
    return std::nullopt;
  return MatmulColumnLoop{rowStrip, column, kLoop, loadB, mm, true, miLoop->hi.constValue()};
}

std::optional<MatmulColumnLoop> matchColumnLoop(DmaOp &store, llvm::ArrayRef<ForOp *> loops) {
  if (loops.size() < 3)
    return std::nullopt;
  ForOp *inner = loops[loops.size() - 1], *column = loops[loops.size() - 2];
  ForOp *rowStrip = loops[loops.size() - 3];
  if (!rowStrip->lo.isConst() || !rowStrip->hi.isConst() || !inner->hi.isConst())
    return std::nullopt;
  std::optional<MatmulColumnLoop> m = matchStreamedColumn(store, rowStrip, column, inner);
  if (!m)
    m = matchHeldColumn(store, rowStrip, column, inner);
  // The rebuilt nest reads B from row 0 to its size: a nest reading a part
  // of B's rows (one head's of a tensor with heads, frontend/Heads.h) is
  // left alone.
  if (m) {
    const ForOp &k = *m->kLoop;
    if (!k.lo.isConst() || !k.hi.isConst() ||
        k.hi.constValue() - k.lo.constValue() != m->loadB->src.base->type.dims[0].size)
      return std::nullopt;
  }
  // It writes C^T from row 0 to C's columns: a nest writing a part of C's
  // columns (one head's of merge_heads, frontend/Heads.h) is left alone.
  if (m) {
    const ForOp &n = *m->column;
    if (!n.lo.isConst() || !n.hi.isConst() || n.lo.constValue() != 0 ||
        n.hi.constValue() != store.dst.base->type.dims[1].size)
      return std::nullopt;
  }
  return m;
}

class TransposedColumnBuilder {
public:
  TransposedColumnBuilder(Kernel &k)
      : kernel(k), rowTile(k.geometry.partitions), movingMax(k.geometry.maxMoving) {}

  /// Replaces `m.column` with the loop computing C^T[n, rows of the block]:
  /// per column tile, B's tile [K, tile] is loaded once per k and each of its
  /// partition-wide column slices is a stationary operand against the row
  /// strip A^T.
  void rewrite(const MatmulColumnLoop &m, Value *ct) {
    std::vector<std::unique_ptr<ForOp>> columns;
    if (m.heldB)
      columns.push_back(buildHeld(m, ct));
    else
      columns = buildStreamed(m, ct);
    Block &body = m.rowStrip->body;
    for (size_t i = 0; i < body.ops.size(); ++i)
      if (body.ops[i].get() == m.column) {
        body.ops[i] = std::move(columns.front());
        for (size_t j = 1; j < columns.size(); ++j)
          body.ops.insert(body.ops.begin() + i + j, std::move(columns[j]));
        break;
      }
  }

private:
  /// Rows of the row strip at %mb: m, or what is left of the nest's range.
  static IndexExpr blockRows(const MatmulColumnLoop &m) {
    ForOp &rb = *m.rowStrip;
    int64_t span = rb.hi.constValue() - rb.lo.constValue();
    return span % rb.step == 0 ? IndexExpr(m.rows)
                               : min(IndexExpr(m.rows), rb.hi - IndexExpr::var(rb.iv));
  }

public:
  /// The rows of a held-form row strip: m, or the whole range of a
  /// one-iteration (peeled) nest; 0 when neither (not rewritten).
  static int64_t heldRows(const MatmulColumnLoop &m) {
    ForOp &rb = *m.rowStrip;
    int64_t span = rb.hi.constValue() - rb.lo.constValue();
    return span % rb.step == 0 ? m.rows : span <= rb.step ? span : 0;
  }

private:
  std::unique_ptr<ForOp> newLoop(Value *iv, int64_t hi, int64_t step, llvm::SMLoc loc) {
    auto loop = std::make_unique<ForOp>();
    loop->loc = loc;
    loop->iv = iv;
    iv->def = loop.get();
    loop->lo = 0;
    loop->hi = hi;
    loop->step = step;
    return loop;
  }

  /// Held B, transposed: B's column block [K, partitions] is loaded once;
  /// each partition-wide column slice of it is stationary against moving-wide
  /// row chunks of the strip A^T, accumulating over k in one PSUM bank.
  std::unique_ptr<ForOp> buildHeld(const MatmulColumnLoop &m, Value *ct) {
    Value *aT = m.matmul->stationary.base, *b = m.loadB->src.base;
    const Dim &kDim = b->type.dims[0], &nDim = b->type.dims[1], &rowDim = aT->type.dims[1];
    int64_t n = nDim.size, kSize = kDim.size;
    // TileGen peels a partial row strip into a one-iteration nest, so the
    // rows are a constant here (the matcher checked) and so are the chunks
    // but the last.
    int64_t rows = heldRows(m);
    IndexExpr mbStart = IndexExpr::var(m.rowStrip->iv);
    llvm::SMLoc loc = m.column->loc;
    // The K tile extent at offset `k`: TileGen's B load sits in its own fill
    // loop, so its extent names that loop's variable, not the matmul's %k.
    auto kExtent = [&](Value *iv) {
      return kSize % rowTile == 0 ? IndexExpr(rowTile)
                                  : min(IndexExpr(rowTile), IndexExpr(kSize) - IndexExpr::var(iv));
    };

    auto column = newLoop(m.column->iv, n, rowTile, loc);
    IndexExpr nStart = IndexExpr::var(column->iv);
    IndexExpr colExt = n % rowTile == 0 ? IndexExpr(rowTile) : min(IndexExpr(rowTile), IndexExpr(n) - nStart);
    Block &body = column->body;
    int64_t kRounded = llvm::alignTo(kSize, rowTile);
    Value *bBlk = alloc(body, b->name + "_blk", MemSpace::SBUF, b->type.dtype, {{kDim.label, kRounded}, {nDim.label, rowTile}}, 2, loc);
    ForOp &fill = openLoop(body, "k", kSize, loc);
    IndexExpr fk = IndexExpr::var(fill.iv);
    IndexExpr fek = kExtent(fill.iv);
    auto load = std::make_unique<DmaOp>();
    load->loc = m.loadB->loc;
    load->dst = access(bBlk, {{fk, fek}, {0, colExt}});
    load->src = access(b, {{fk, fek}, {nStart, colExt}});
    fill.body.ops.push_back(std::move(load));

    ForOp &chunks = appendLoop(kernel, body, "mc", 0, rows, movingMax, loc);
    IndexExpr mc = IndexExpr::var(chunks.iv);
    IndexExpr chunkRows = rows % movingMax == 0 ? IndexExpr(movingMax)
                                                : min(IndexExpr(movingMax), IndexExpr(rows) - mc);
    Value *acc = alloc(chunks.body, "accT", MemSpace::PSUM, DType::F32, {{nDim.label, rowTile}, {rowDim.label, movingMax}}, 2, loc);
    auto kLoop = newLoop(m.kLoop->iv, kSize, rowTile, m.kLoop->loc);
    IndexExpr k = IndexExpr::var(kLoop->iv), ek = kExtent(kLoop->iv);
    auto mm = std::make_unique<MatmulOp>();
    mm->loc = m.matmul->loc;
    mm->dst = access(acc, {{0, colExt}, {0, chunkRows}});
    mm->stationary = access(bBlk, {{k, ek}, {0, colExt}});
    mm->moving = access(aT, {{k, ek}, {mc, chunkRows}});
    mm->resetOn.push_back(kLoop->iv);
    kLoop->body.ops.push_back(std::move(mm));
    chunks.body.ops.push_back(std::move(kLoop));
    appendStore(chunks.body, access(acc, {{0, colExt}, {0, chunkRows}}),
                access(ct, {{nStart, colExt}, {mbStart + mc, chunkRows}}), movingMax, loc);
    return column;
  }

  /// Streamed B, transposed: per column tile, B's tile [K, tile] is loaded
  /// once per k and each of its partition-wide column slices is a stationary
  /// operand against the row strip A^T. TileGen's column tile is kept when
  /// it is a multiple of the partitions (one transfer then moves its whole
  /// width per partition); a shorter last tile becomes a loop of its own with
  /// one tile of the remaining width (not a multiple of the partitions when
  /// the columns are not: its last slice is partial), so every loop keeps
  /// constant bounds and each transfer still moves whole rows of its tile
  /// (partition-wide tiles would move 256 B runs per partition, which the DMA
  /// engines serve at half their rate, each transfer paying the fixed cost).
  std::vector<std::unique_ptr<ForOp>> buildStreamed(const MatmulColumnLoop &m, Value *ct) {
    int64_t n = m.loadB->src.base->type.dims[1].size;
    int64_t step = m.column->step;
    std::optional<IndexExpr> origExtent = m.loadB->src.indices[1].extent;
    bool wholeTiles = origExtent && origExtent->isConst() && origExtent->constValue() % rowTile == 0 &&
                      step == origExtent->constValue();
    std::vector<std::unique_ptr<ForOp>> loops;
    if (wholeTiles || step % rowTile != 0) {
      loops.push_back(buildStreamedRange(m, ct, 0, n, wholeTiles ? step : rowTile, wholeTiles, true));
      return loops;
    }
    int64_t full = n / step * step;
    if (full > 0)
      loops.push_back(buildStreamedRange(m, ct, 0, full, step, true, true));
    if (full < n)
      loops.push_back(buildStreamedRange(m, ct, full, n, n - full, true, full == 0));
    return loops;
  }

  /// The transposed streamed column loop over columns [lo, hi) in tiles of
  /// `tileN` (all whole when `whole`); `reuse` keeps the matched loops'
  /// variables (the first loop built), else fresh ones.
  std::unique_ptr<ForOp> buildStreamedRange(const MatmulColumnLoop &m, Value *ct, int64_t lo, int64_t hi,
                                            int64_t tileN, bool whole, bool reuse) {
    Value *aT = m.matmul->stationary.base, *b = m.loadB->src.base;
    int64_t stripRows = m.rows;
    const Dim &rowDim = aT->type.dims[1];
    int64_t n = b->type.dims[1].size, kSize = b->type.dims[0].size;
    const Dim &nDim = b->type.dims[1], &kDim = b->type.dims[0];
    Value *mb = m.rowStrip->iv;
    IndexExpr rows = blockRows(m);
    llvm::SMLoc loc = m.column->loc;
    auto loopVar = [&](Value *old) {
      if (reuse)
        return old;
      Value *v = kernel.newValue(ValueKind::LoopVar, kernel.uniqueName(old->name));
      v->loc = old->loc;
      return v;
    };

    auto column = std::make_unique<ForOp>();
    column->loc = loc;
    column->iv = loopVar(m.column->iv);
    column->iv->def = column.get();
    column->lo = lo;
    column->hi = hi;
    // A last tile narrower than the partitions' multiple still steps by
    // whole partition groups, so its offset is known to be group-aligned.
    column->step = llvm::alignTo(tileN, rowTile);
    IndexExpr nStart = IndexExpr::var(column->iv);
    IndexExpr colExt = whole || n % rowTile == 0 ? IndexExpr(tileN) : min(IndexExpr(rowTile), IndexExpr(n) - nStart);
    // A whole tile wider than the partitions is cut into partition-wide
    // slices, the last one partial when the tile is not a multiple of them.
    auto sliceExtent = [&](const IndexExpr &ni) {
      if (tileN <= rowTile)
        return colExt;
      return tileN % rowTile == 0 ? IndexExpr(rowTile) : min(IndexExpr(rowTile), IndexExpr(tileN) - ni);
    };
    int64_t foldedN = llvm::alignTo(tileN, rowTile);
    Block &body = column->body;
    // Whole-bank folds (maxMoving fp32), so no accumulation tile straddles banks.
    Value *acc = alloc(body, "accT", MemSpace::PSUM, DType::F32, {{nDim.label, foldedN}, {rowDim.label, movingMax}}, 2, loc);

    auto kLoop = std::make_unique<ForOp>();
    kLoop->loc = m.kLoop->loc;
    kLoop->iv = loopVar(m.kLoop->iv);
    kLoop->iv->def = kLoop.get();
    kLoop->lo = 0;
    kLoop->hi = kSize;
    kLoop->step = rowTile;
    IndexExpr ek = m.loadB->src.indices[0].extent.value_or(IndexExpr(rowTile));
    if (!reuse)
      ek = kSize % rowTile == 0 ? IndexExpr(rowTile)
                                : min(IndexExpr(rowTile), IndexExpr(kSize) - IndexExpr::var(kLoop->iv));
    IndexExpr kStart = IndexExpr::var(kLoop->iv);
    Value *bTile = alloc(kLoop->body, b->name + "_tile", MemSpace::SBUF, b->type.dtype, {{kDim.label, rowTile}, {nDim.label, tileN}}, 2, loc);
    auto load = std::make_unique<DmaOp>();
    load->loc = m.loadB->loc;
    load->dst = access(bTile, {{0, ek}, {0, colExt}});
    load->src = access(b, {{kStart, ek}, {nStart, colExt}});
    kLoop->body.ops.push_back(std::move(load));
    ForOp &slices = openLoop(kLoop->body, "ni", tileN, loc);
    IndexExpr ni = IndexExpr::var(slices.iv);
    IndexExpr sliceExt = sliceExtent(ni);
    auto mm = std::make_unique<MatmulOp>();
    mm->loc = m.matmul->loc;
    mm->dst = access(acc, {{ni, sliceExt}, {0, rows}});
    mm->stationary = access(bTile, {{0, ek}, {ni, sliceExt}});
    mm->moving = access(aT, {{kStart, ek}, {0, rows}});
    mm->resetOn.push_back(kLoop->iv);
    slices.body.ops.push_back(std::move(mm));
    body.ops.push_back(std::move(kLoop));

    ForOp &stores = openLoop(body, "ni", tileN, loc);
    IndexExpr si = IndexExpr::var(stores.iv);
    IndexExpr storeExt = sliceExtent(si);
    appendStore(stores.body, access(acc, {{si, storeExt}, {0, rows}}),
                access(ct, {{nStart + si, storeExt}, {IndexExpr::var(mb), rows}}), stripRows, loc);
    return column;
  }

  /// Appends to `b` the evacuation of an accumulator region `accRegion`
  /// into a fresh SBUF tile [partitions, width] and its store to `dst` (an HBM
  /// region of the same extents).
  void appendStore(Block &b, const Access &accRegion, const Access &dst, int64_t width, llvm::SMLoc loc) {
    Value *ct = dst.base;
    const Index &rowsIdx = accRegion.indices[0], &colsIdx = accRegion.indices[1];
    Value *tile = alloc(b, ct->name + "_tile", MemSpace::SBUF, ct->type.dtype,
                        {{ct->type.dims[0].label, rowTile}, {ct->type.dims[1].label, width}}, 2, loc);
    Access staged = access(tile, {{0, *rowsIdx.extent}, {0, *colsIdx.extent}});
    auto copy = std::make_unique<CopyOp>();
    copy->loc = loc;
    copy->dst = staged;
    copy->src = accRegion;
    b.ops.push_back(std::move(copy));
    auto store = std::make_unique<DmaOp>();
    store->loc = loc;
    store->dst = dst;
    store->src = staged;
    b.ops.push_back(std::move(store));
  }

  ForOp &openLoop(Block &b, const std::string &hint, int64_t hi, llvm::SMLoc loc) {
    return appendLoop(kernel, b, hint, 0, hi, rowTile, loc);
  }
  Value *alloc(Block &b, const std::string &hint, MemSpace space, DType dt,
               std::initializer_list<Dim> dims, int64_t bufs, llvm::SMLoc loc) {
    return appendAlloc(kernel, b, hint, space, dt, dims, bufs, loc);
  }
  static Access access(Value *base, std::initializer_list<std::pair<IndexExpr, IndexExpr>> ranges) {
    return makeAccess(base, ranges);
  }

  Kernel &kernel;
  /// Partitions (rows of a tile, stationary columns), and the moving free
  /// elements of one matmul (one fp32 PSUM bank).
  const int64_t rowTile, movingMax;
};

/// An explicit transpose nest of the straightforward form, D = C^T:
///   for %m { for %n { %t = alloc; dma %t <- %C; %p = alloc psum;
///                     transpose %p <- %t; %o = alloc; copy %o <- %p; dma %D <- %o } }
struct TransposeNest {
  ForOp *outer;
  Value *source, *dest;
};

std::optional<TransposeNest> matchTransposeNest(Op &op) {
  auto *outer = llvm::dyn_cast<ForOp>(&op);
  if (!outer || outer->body.ops.size() != 1)
    return std::nullopt;
  auto *inner = opAt<ForOp>(outer->body, 0);
  if (!inner || inner->body.ops.size() != 7)
    return std::nullopt;
  Block &b = inner->body;
  auto *load = opAt<DmaOp>(b, 1);
  auto *tr = opAt<TransposeOp>(b, 3);
  auto *copy = opAt<CopyOp>(b, 5);
  auto *store = opAt<DmaOp>(b, 6);
  if (!opAt<AllocOp>(b, 0) || !load || !opAt<AllocOp>(b, 2) || !tr || !opAt<AllocOp>(b, 4) ||
      !copy || !store || load->transpose || store->transpose ||
      load->src.base->type.space != MemSpace::HBM || store->dst.base->type.space != MemSpace::HBM ||
      tr->src.base != load->dst.base || copy->src.base != tr->dst.base ||
      store->src.base != copy->dst.base)
    return std::nullopt;
  return TransposeNest{outer, load->src.base, store->dst.base};
}

/// How an HBM tensor is read and written: the DMAs that load it transposed,
/// the DMA stores into it (with the loops around each), and a count of every
/// other access.
struct HbmUses {
  llvm::SmallVector<DmaOp *, 4> transposedLoads;
  unsigned otherReads = 0;
  llvm::SmallVector<std::pair<DmaOp *, llvm::SmallVector<ForOp *, 4>>, 2> stores;
  unsigned otherWrites = 0;
};

llvm::DenseMap<Value *, HbmUses> collectHbmUses(Kernel &kernel) {
  llvm::DenseMap<Value *, HbmUses> uses;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
    auto *dma = llvm::dyn_cast<DmaOp>(&op);
    for (Access *a : op.reads()) {
      if (a->base->type.space != MemSpace::HBM)
        continue;
      if (dma && dma->transpose)
        uses[a->base].transposedLoads.push_back(dma);
      else
        ++uses[a->base].otherReads;
    }
    if (Access *w = op.write(); w && w->base->type.space == MemSpace::HBM) {
      if (dma)
        uses[w->base].stores.push_back({dma, llvm::SmallVector<ForOp *, 4>(loops.begin(), loops.end())});
      else
        ++uses[w->base].otherWrites;
    }
  });
  return uses;
}

/// The explicit transpose nests D = C^T at the top level, by their source C;
/// a source two nests read maps to a nest with no `outer` (left alone).
llvm::DenseMap<Value *, TransposeNest> transposeNestsBySource(Kernel &kernel) {
  llvm::DenseMap<Value *, TransposeNest> nests;
  for (auto &op : kernel.body.ops) {
    auto nest = matchTransposeNest(*op);
    if (!nest)
      continue;
    if (!nests.count(nest->source))
      nests[nest->source] = *nest;
    else
      nests[nest->source].outer = nullptr;
  }
  return nests;
}

/// Finds scratch tensors read only through transposing DMAs and written by
/// one recognised matmul store; swaps those producers to compute C^T.
bool transposeProducers(Kernel &kernel) {
  llvm::DenseMap<Value *, HbmUses> uses = collectHbmUses(kernel);
  // A scratch tensor read only by one explicit transpose nest D = C^T can be
  // produced as D directly: the nest disappears.
  llvm::DenseMap<Value *, TransposeNest> transposeNests = transposeNestsBySource(kernel);
  llvm::SmallVector<Op *, 4> deadOps; // erased after the walk over kernel.body
  bool changed = false;
  for (auto &op : kernel.body.ops) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    if (!alloc || alloc->result->type.space != MemSpace::HBM || alloc->result->role != TensorRole::Scratch ||
        llvm::is_contained(deadOps, alloc)) // a C whose alloc traded places below
      continue;
    Value *c = alloc->result;
    HbmUses &u = uses[c];
    auto nestIt = transposeNests.find(c);
    // The producers then write all of the destination from its row 0: not
    // one head's rows of a tensor with heads (frontend/Heads.h).
    bool viaNest = nestIt != transposeNests.end() && nestIt->second.outer && u.otherReads == 1 &&
                   u.transposedLoads.empty() &&
                   nestIt->second.dest->type.dims[0].size == c->type.dims[1].size;
    if ((u.transposedLoads.empty() || u.otherReads) && !viaNest)
      continue;
    if (u.otherWrites || u.stores.empty())
      continue;
    llvm::SmallVector<MatmulColumnLoop, 2> producers;
    llvm::SmallVector<KBlockedProducer, 2> kBlocked;
    for (auto &[store, loops] : u.stores)
      if (auto m = matchColumnLoop(*store, loops); m && (!m->heldB || TransposedColumnBuilder::heldRows(*m)))
        producers.push_back(*m);
      else if (auto kp = matchKBlockedProducer(*store, loops))
        kBlocked.push_back(*kp);
    if (producers.size() + kBlocked.size() != u.stores.size())
      continue;

    TransposedColumnBuilder builder(kernel);
    auto rewriteAll = [&](Value *dest) {
      for (const MatmulColumnLoop &m : producers)
        builder.rewrite(m, dest);
      for (const KBlockedProducer &kp : kBlocked)
        transposeKBlockedProducer(kernel, kp, dest);
    };
    if (viaNest) {
      // The producers write the nest's destination; the nest and C go away.
      // The destination's alloc follows the producers (it was the nest's):
      // it trades places with C's (dead) alloc, which keeps every other op's
      // position, as the matches of the allocs still to visit hold them.
      Value *dest = nestIt->second.dest;
      auto &ops = kernel.body.ops;
      auto at = [&](const Op *op) {
        return llvm::find_if(ops, [&](const std::unique_ptr<Op> &o) { return o.get() == op; });
      };
      if (auto destAlloc = at(dest->def), cAlloc = at(alloc);
          destAlloc != ops.end() && cAlloc != ops.end() && destAlloc > cAlloc)
        std::iter_swap(destAlloc, cAlloc);
      rewriteAll(dest);
      deadOps.push_back(nestIt->second.outer);
      deadOps.push_back(alloc);
      changed = true;
      continue;
    }
    // C^T: the scratch tensor with C's dimensions swapped, in C's place.
    Value *ct = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(c->name + "T"));
    ct->type = c->type;
    std::swap(ct->type.dims[0], ct->type.dims[1]);
    ct->role = TensorRole::Scratch;
    ct->loc = c->loc;
    alloc->result = ct;
    ct->def = alloc;
    rewriteAll(ct);
    for (DmaOp *load : u.transposedLoads) {
      load->transpose = false;
      load->src.base = ct;
      std::swap(load->src.indices[0], load->src.indices[1]);
    }
    changed = true;
  }
  llvm::erase_if(kernel.body.ops, [&](const std::unique_ptr<Op> &o) {
    return llvm::is_contained(deadOps, o.get());
  });
  return changed;
}

class ImplicitTransposePass : public Pass {
public:
  llvm::StringRef name() const override { return "implicit-transpose"; }
  llvm::StringRef description() const override {
    return "choose stationary/moving operands so intermediates are produced in the layout their "
           "consumer needs; remaining I/O transposes become DMA transposes";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    auto uses = countUses(kernel);
    bool changed = foldLoadTransposes(kernel.body, uses);
    changed |= absorbInputTransposes(kernel);
    changed |= transposeProducers(kernel);
    // Through elementwise nests: a pointwise result wanted transposed is
    // computed from transposed operands, whose producers then turn in turn.
    while (transposeElementwiseNests(kernel)) {
      transposeProducers(kernel);
      changed = true;
    }
    // Last: the producers above match the scratch's tile loads.
    changed |= keepArgumentTransposesResident(kernel);
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createImplicitTransposePass() { return std::make_unique<ImplicitTransposePass>(); }

} // namespace tessel::passes
