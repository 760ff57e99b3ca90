//===- passes/WideTransposeNest.cpp - An argument's transpose in wide DMAs -===//
//
// TileGen writes an argument's transpose to its HBM scratch one 128 x 128
// tile per load and per store: each partition's bytes are one 256-byte run,
// which the DMA engines serve at about half their rate, and a weight of
// 14336 x 4096 is 3584 such loads and stores. Where the scratch stays (a
// weight too large to hold in SBUF), its nest is rebuilt in blocks of
// g x g partition tiles (g tiles: one PSUM bank's moving width):
//
//   for %n = 0 to N' step 512 { for %k = 0 to K' step 512 {
//     %blk = alloc sbuf<[K:512, N:512]>
//     for %nj = 0 to 512 step 128 {
//       dma %rows <- %W[%n + %nj +: 128, %k +: 512]            (1 KiB runs)
//       for %kj = 0 to 512 step 128 {
//         transpose %ps <- %rows[0 +: 128, %kj +: 128]; copy %blk[%kj +: 128, %nj +: 128] <- %ps } }
//     for %kj2 = 0 to 512 step 128 {
//       dma %WT[%k + %kj2 +: 128, %n +: 512] <- %blk[%kj2 +: 128, 0 +: 512] } } }   (1 KiB runs)
//
// over the whole blocks (N', K': N and K rounded down to 512), and TileGen's
// tile-by-tile nest over the rows and columns left. Every element of the
// scratch is written once with the same value.
//
//===----------------------------------------------------------------------===//
#include "passes/WideTransposeNest.h"

#include "ir/Builder.h"

namespace tessel::passes {
namespace {

using namespace ir;

struct NestBuilder {
  Kernel &kernel;
  Value *w, *wt;
  int64_t P;
  llvm::SMLoc loc;

  template <typename T> T &append(Block &b, std::unique_ptr<T> op) {
    op->loc = loc;
    T &ref = *op;
    b.ops.push_back(std::move(op));
    return ref;
  }
  void dma(Block &b, Access dst, Access src) {
    auto op = std::make_unique<DmaOp>();
    op->dst = std::move(dst);
    op->src = std::move(src);
    append(b, std::move(op));
  }
  void transposeAndCopy(Block &b, const Access &src, const IndexExpr &rows, const IndexExpr &cols, Access dst) {
    Value *ps = appendAlloc(kernel, b, w->name + "_Tpsum", MemSpace::PSUM, DType::F32,
                            {{w->type.dims[1].label, P}, {w->type.dims[0].label, P}}, 2, loc);
    auto tr = std::make_unique<TransposeOp>();
    tr->dst = makeAccess(ps, {{0, cols}, {0, rows}});
    tr->src = src;
    auto copy = std::make_unique<CopyOp>();
    copy->dst = std::move(dst);
    copy->src = tr->dst;
    append(b, std::move(tr));
    append(b, std::move(copy));
  }
  Value *sbuf(Block &b, llvm::StringRef hint, const Dim &d0, int64_t s0, const Dim &d1, int64_t s1) {
    return appendAlloc(kernel, b, hint, MemSpace::SBUF, w->type.dtype, {{d0.label, s0}, {d1.label, s1}}, 2, loc);
  }

  /// TileGen's nest over rows [r0, r1) and columns [c0, c1) of W.
  void tiles(Block &out, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    if (r1 <= r0 || c1 <= c0)
      return;
    const Dim &dn = w->type.dims[0], &dk = w->type.dims[1];
    ForOp &ra = appendLoop(kernel, out, "a", r0, r1, P, loc);
    ForOp &cb = appendLoop(kernel, ra.body, "b", c0, c1, P, loc);
    IndexExpr a = IndexExpr::var(ra.iv), b = IndexExpr::var(cb.iv);
    IndexExpr rows = (r1 - r0) % P == 0 ? IndexExpr(P) : min(IndexExpr(P), IndexExpr(r1) - a);
    IndexExpr cols = (c1 - c0) % P == 0 ? IndexExpr(P) : min(IndexExpr(P), IndexExpr(c1) - b);
    Value *t = sbuf(cb.body, w->name + "_tile", dn, P, dk, P);
    dma(cb.body, makeAccess(t, {{0, rows}, {0, cols}}), makeAccess(w, {{a, rows}, {b, cols}}));
    Value *u = sbuf(cb.body, wt->name + "_tile", dk, P, dn, P);
    transposeAndCopy(cb.body, makeAccess(t, {{0, rows}, {0, cols}}), rows, cols, makeAccess(u, {{0, cols}, {0, rows}}));
    dma(cb.body, makeAccess(wt, {{b, cols}, {a, rows}}), makeAccess(u, {{0, cols}, {0, rows}}));
  }

  /// The blocked nest over rows [0, rows) and columns [0, cols) of W, both
  /// multiples of `g` partition tiles.
  void blocks(Block &out, int64_t rows, int64_t cols, int64_t g) {
    const Dim &dn = w->type.dims[0], &dk = w->type.dims[1];
    const int64_t G = g * P;
    ForOp &nl = appendLoop(kernel, out, "n", 0, rows, G, loc);
    ForOp &kl = appendLoop(kernel, nl.body, "k", 0, cols, G, loc);
    IndexExpr n = IndexExpr::var(nl.iv), k = IndexExpr::var(kl.iv);
    Value *blk = sbuf(kl.body, wt->name + "_blk", dk, G, dn, G);
    ForOp &nj = appendLoop(kernel, kl.body, "nj", 0, G, P, loc);
    IndexExpr j = IndexExpr::var(nj.iv);
    Value *r = sbuf(nj.body, w->name + "_rows", dn, P, dk, G);
    dma(nj.body, makeAccess(r, {{0, P}, {0, G}}), makeAccess(w, {{(n + j).simplified(), P}, {k, G}}));
    ForOp &kj = appendLoop(kernel, nj.body, "kj", 0, G, P, loc);
    IndexExpr i = IndexExpr::var(kj.iv);
    transposeAndCopy(kj.body, makeAccess(r, {{0, P}, {i, P}}), P, P, makeAccess(blk, {{i, P}, {j, P}}));
    ForOp &st = appendLoop(kernel, kl.body, "kj", 0, G, P, loc);
    IndexExpr s = IndexExpr::var(st.iv);
    dma(st.body, makeAccess(wt, {{(k + s).simplified(), P}, {n, G}}), makeAccess(blk, {{s, P}, {0, G}}));
  }
};

} // namespace

bool buildWideTransposeNest(Kernel &kernel, Value *w, Value *wt, llvm::SMLoc loc, Block &out) {
  const int64_t P = kernel.geometry.partitions;
  const int64_t g = std::max<int64_t>(1, kernel.geometry.maxMoving / P);
  const int64_t N = w->type.dims[0].size, K = w->type.dims[1].size;
  const int64_t Nb = N / (g * P) * (g * P), Kb = K / (g * P) * (g * P);
  if (g < 2 || Nb == 0 || Kb == 0)
    return false;
  NestBuilder b{kernel, w, wt, P, loc};
  b.blocks(out, Nb, Kb, g);
  b.tiles(out, 0, Nb, Kb, K);
  b.tiles(out, Nb, N, 0, K);
  return true;
}

} // namespace tessel::passes
