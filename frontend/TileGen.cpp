//===- frontend/TileGen.cpp - Typed AST to the straightforward tile IR ----===//
//
// 1. Label dimensions: union-find over the (rows, cols) slots of every
//    expression, joined by matmul contraction, elementwise and transpose
//    rules. The returned value's rows are `M` (the row strip, block `m`), its
//    columns `N` (block `n`); other classes are K, R, R2, ... in order of
//    appearance. Should that put a tensor's rows and columns in one class
//    (X @ X), each use of an input but the first is labelled apart and
//    reads the input through a `view`.
// 2. Lower statements in order; each expression node becomes one loop nest
//    writing an HBM tensor (scratch, or the kernel output for the root).
//
//===----------------------------------------------------------------------===//
#include "frontend/TileGen.h"
#include "frontend/Heads.h"

#include "ir/Builder.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <limits>
#include <map>
#include <set>

namespace tessel {
namespace {

using namespace ir;

ir::DType toIR(ast::DType t) { return t == ast::DType::BF16 ? ir::DType::BF16 : ir::DType::F32; }

/// Union-find over dimension slots; slot 2*i is expression i's rows, 2*i+1 its cols.
class DimLabeler {
public:
  /// Labels every use of the names in `apart` but the first apart from the
  /// name (a tensor used in two roles, read through a view per role).
  explicit DimLabeler(std::set<std::string> apart = {}) : apart(std::move(apart)) {}

  /// Returns the slot pair of `e`, creating it and joining its operands.
  std::pair<unsigned, unsigned> visit(const ast::Expr &e) {
    auto [rows, cols] = fresh();
    switch (e.kind) {
    case ast::ExprKind::Ref: {
      const std::string &name = resolve(e.name);
      auto it = named.find(name);
      bool laterUse = apart.count(name) && !used.insert(name).second;
      if (laterUse)
        secondUses.emplace(name, &e);
      if (it != named.end() && !laterUse) {
        join(rows, it->second.first);
        join(cols, it->second.second);
      }
      break;
    }
    case ast::ExprKind::MatMul: {
      auto l = visit(*e.lhs), r = visit(*e.rhs);
      join(l.second, r.first);
      join(rows, l.first);
      join(cols, r.second);
      break;
    }
    case ast::ExprKind::Binary: {
      // A broadcast dimension (1 against the result's) and a number join
      // nothing.
      for (const ast::Expr *o : {e.lhs.get(), e.rhs.get()}) {
        auto s = visit(*o);
        if (o->kind == ast::ExprKind::Number)
          continue;
        if (o->type.rows == e.type.rows)
          join(rows, s.first);
        if (o->type.cols == e.type.cols)
          join(cols, s.second);
      }
      break;
    }
    case ast::ExprKind::Reduce: {
      auto o = visit(*e.lhs);
      join(rows, o.first);
      break;
    }
    case ast::ExprKind::MergeHeads: {
      // Each head's nests store into the merged tensor's columns: its
      // columns carry the label of a head's (H times as many of them).
      auto o = visit(*e.lhs);
      join(rows, o.first);
      join(cols, o.second);
      break;
    }
    case ast::ExprKind::Number:
    case ast::ExprKind::Call:
      break;
    case ast::ExprKind::Unary:
    case ast::ExprKind::Causal: {
      auto o = visit(*e.lhs);
      join(rows, o.first);
      join(cols, o.second);
      break;
    }
    case ast::ExprKind::Transpose: {
      auto o = visit(*e.lhs);
      join(rows, o.second);
      join(cols, o.first);
      break;
    }
    }
    slots[&e] = {rows, cols};
    return {rows, cols};
  }

  void bind(const std::string &name, std::pair<unsigned, unsigned> s) { named[name] = s; }
  /// `name = target`: every use of `name` is a use of `target` (so an input
  /// given another name is still read through a view per role).
  void bindAlias(const std::string &name, const std::string &target) { aliases[name] = resolve(target); }
  /// The second use of a name in `apart`, if it has one.
  const ast::Expr *secondUse(const std::string &name) const {
    auto it = secondUses.find(name);
    return it == secondUses.end() ? nullptr : it->second;
  }
  const std::string &resolve(const std::string &name) const {
    auto it = aliases.find(name);
    return it == aliases.end() ? name : it->second;
  }
  std::pair<unsigned, unsigned> slotsOfName(const std::string &name) const { return named.at(name); }
  std::pair<unsigned, unsigned> slotsOf(const ast::Expr &e) const { return slots.lookup(&e); }
  std::pair<unsigned, unsigned> fresh() {
    unsigned rows = classes.insert(numSlots++)->getData();
    unsigned cols = classes.insert(numSlots++)->getData();
    return {rows, cols};
  }
  unsigned find(unsigned s) const { return classes.getLeaderValue(s); }
  void join(unsigned a, unsigned b) { classes.unionSets(a, b); }

  /// Names every class: `rowsSlot` -> M, `colsSlot` -> N, others in order.
  bool isNamed(unsigned slot) const { return names.count(find(slot)) != 0; }
  std::string label(unsigned slot) {
    unsigned root = find(slot);
    auto it = names.find(root);
    if (it != names.end())
      return it->second;
    static const char *others[] = {"K", "R"};
    std::string name = nextOther < 2 ? others[nextOther] : "R" + std::to_string(nextOther);
    ++nextOther;
    names[root] = name;
    return name;
  }
  void nameClass(unsigned slot, const std::string &name) { names[find(slot)] = name; }

private:
  llvm::EquivalenceClasses<unsigned> classes; ///< slots of one dimension class
  unsigned numSlots = 0;
  llvm::DenseMap<const ast::Expr *, std::pair<unsigned, unsigned>> slots;
  std::map<std::string, std::pair<unsigned, unsigned>> named;
  std::map<unsigned, std::string> names;
  unsigned nextOther = 0;
  std::set<std::string> apart, used;
  std::map<std::string, std::string> aliases;
  std::map<std::string, const ast::Expr *> secondUses;
};

class TileGen {
public:
  TileGen(const ast::Kernel &ast, const TileGenOptions &opts, DiagnosticEngine &diags,
          std::map<std::string, int64_t> *projectionColumns)
      : ast(ast), opts(opts), diags(diags), projectionColumns(projectionColumns),
        kernel(std::make_unique<Kernel>()),
        rowTile(opts.geometry.partitions), movingTile(opts.geometry.maxMoving) {}

  std::unique_ptr<Kernel> run();

private:
  // ---- helpers building ops into the current block
  Block *cur = nullptr;
  template <typename T> T &emit(llvm::SMLoc loc) {
    auto op = std::make_unique<T>();
    op->loc = loc;
    T &ref = *op;
    cur->ops.push_back(std::move(op));
    return ref;
  }
  Value *alloc(llvm::StringRef hint, MemSpace space, ir::DType dt, llvm::ArrayRef<Dim> dims,
               int64_t bufs, llvm::SMLoc loc);
  Value *onesRow(ir::DType dt, const std::string &rowLabel, const std::string &colLabel, llvm::SMLoc loc);
  /// Opens `for %hint = lo to hi step step`, making its body current; returns the iv.
  Value *openLoop(llvm::StringRef hint, IndexExpr lo, IndexExpr hi, int64_t step, llvm::SMLoc loc);
  void closeLoop() { cur = loopStack.back(); loopStack.pop_back(); }
  static Access access(Value *base, llvm::ArrayRef<std::pair<IndexExpr, IndexExpr>> ranges) {
    return makeAccess(base, ranges);
  }
  /// The extent of the tile starting at `iv` along a dimension of `size`.
  static IndexExpr extent(int64_t size, int64_t tile, IndexExpr iv) {
    return size % tile == 0 ? IndexExpr(tile) : min(IndexExpr(tile), IndexExpr(size) - iv);
  }

  Value *hbmTensor(const ast::Expr &e, llvm::StringRef hint);
  Value *lower(const ast::Expr &e, Value *dest, llvm::StringRef hint);
  void lowerMatMul(const ast::Expr &e, Value *a, Value *b, Value *c);
  /// Returns the row-strip loop.
  ForOp *lowerMatMulBlocks(const ast::Expr &e, Value *a, Value *b, Value *c, int64_t rowLo,
                           int64_t rowHi, int64_t stripRows, int64_t kBlock);
  struct RowStrip;
  void lowerKBlock(RowStrip &r, int64_t kLo, int64_t kHi, int64_t kBlock);
  void lowerColumnLoop(const RowStrip &r);
  void lowerStreamedColumn(const RowStrip &r, Value *n);
  void lowerHeldColumn(const RowStrip &r, Value *n);
  void finishRowTile(const RowStrip &r, Value *n, Value *mi, Value *acc, IndexExpr accRow);
  void storeRowTile(const RowStrip &r, IndexExpr col, Value *mi, Value *acc, IndexExpr accRow,
                    IndexExpr accCol);
  /// The K index of `k` (a loop over one K block) in the whole contraction.
  static IndexExpr kIndex(const RowStrip &r, Value *k);
  /// SBUF bytes per partition of a K-blocked row strip's fp32 accumulator.
  int64_t accumulatorBytes(int64_t stripRows, int64_t N) const;
  /// The column block of a matmul whose result columns span `nDim`: its
  /// projection's own (named after the dimension) when given, else `n`.
  int64_t columnBlockFor(const Dim &nDim);
  void lowerElementwise(const ast::Expr &e, Value *a, Value *b, Value *c);
  /// How an operand of an elementwise node meets the result's tiles.
  enum class Operand { Full, Column, Row, Number, Single };
  static Operand operandKind(const ast::Expr &o, const ast::Expr &e);
  /// An operand's tile at the elementwise loop's (m, n): its SBUF tile, its
  /// [P, 1] column tile, or (a row vector) its rows broadcast over the
  /// partitions in PSUM; `ones` is the [1, P] stationary of that broadcast.
  Access operandTile(Operand kind, Value *src, Value *ones, Value *c, Value *m, Value *n, IndexExpr em,
                     IndexExpr en, llvm::SMLoc loc);
  void emitBinary(const ast::Expr &e, const Access &dst, Operand ka, const Access &ta, Operand kb,
                  const Access &tb, llvm::SMLoc loc);
  void lowerReduce(const ast::Expr &e, Value *a, Value *c);
  /// Names the size-1 dimensions of broadcasts and reductions B, B2, ...
  void nameUnitDimensions();
  void lowerTranspose(const ast::Expr &e, Value *a, Value *c);
  void lowerMergeHeads(const ast::Expr &e, Value *c);
  std::string labelOf(unsigned slot) { return labeler.label(slot); }
  int64_t roundToTile(int64_t v) const { return llvm::alignTo(v, rowTile); }
  TensorType hbmType(const ast::Expr &e);
  /// The tensor `e` (a Ref) names, under `e`'s labels: an input in a second
  /// role is read through a view.
  Value *tensorOf(const ast::Expr &e);
  void labelDimensions(std::set<std::string> apart);
  const ast::Expr *firstMergedExpr() const;
  /// Step 1 of run(): labels every tensor dimension with its class; false
  /// (after a located error) when a local in two roles merges a tensor's rows
  /// and columns into one dimension.
  bool labelAllDimensions();
  /// Step 3 of run(): the statements, those with heads head by head.
  bool lowerStatements(Value *out);
  /// Lowers statements [first, last), all with heads, head by head.
  void lowerHeadRun(size_t first, size_t last);
  void lowerStatement(const ast::Stmt &s);
  /// The kernel's heads: its result's, else the most of any value's (0: none).
  int64_t kernelHeads() const;
  /// Makes the locals with heads name their tensors of kernel head `h`.
  void selectHead(int64_t h);
  /// Where kernel head `h` (of H) finds its rows in the tensors with heads.
  std::map<const Value *, frontend::HeadOffset> headOffsets(int64_t h, int64_t H) const;
  /// The heads of the parameter `arg` is (0: none, or not a parameter).
  int64_t paramHeads(const Value *arg) const;

  const ast::Kernel &ast;
  const TileGenOptions &opts;
  DiagnosticEngine &diags;
  /// Where the projections' own column blocks are reported (may be null).
  std::map<std::string, int64_t> *projectionColumns;
  std::unique_ptr<Kernel> kernel;
  DimLabeler labeler;
  /// Rows and contraction per tensor-engine pass (the partitions), and the
  /// moving free size (one fp32 PSUM bank).
  const int64_t rowTile, movingTile;
  std::map<std::string, Value *> tensors; // params and lowered locals
  /// The locals with heads: per kernel head h, the tensor of its head h / (H / G).
  std::map<std::string, std::vector<Value *>> headTensors;
  Value *outTensor = nullptr;
  /// The [1, P] rows of ones that broadcast row vectors, one per dtype and labels.
  std::map<std::pair<ir::DType, std::string>, Value *> onesRows;
  std::map<std::pair<Value *, std::string>, Value *> views; // (input, labels) -> view
  std::vector<Block *> loopStack;
  /// The row strip and column block asked for (given, or the defaults).
  int64_t wantedStripRows = 0, wantedBlockCols = 0;
  /// Whether the row strip was given (kept) rather than chosen (halved to fit).
  bool rowStripGiven = false;
  /// Each matmul nest's row-strip loop (its last, shorter block peeled aside).
  std::vector<ForOp *> rowStripLoops;
  bool failed = false;
};

Value *TileGen::alloc(llvm::StringRef hint, MemSpace space, ir::DType dt, llvm::ArrayRef<Dim> dims,
                      int64_t bufs, llvm::SMLoc loc) {
  return appendAlloc(*kernel, *cur, hint, space, dt, dims, bufs, loc);
}

Value *TileGen::onesRow(ir::DType dt, const std::string &rowLabel, const std::string &colLabel,
                        llvm::SMLoc loc) {
  Value *&ones = onesRows[{dt, rowLabel + ":" + colLabel}];
  if (ones)
    return ones;
  // At the kernel's start, not before the nest that first needs it: a
  // constant between two row-strip loops would keep fuse-rows from merging them.
  Block prologue;
  ones = appendAlloc(*kernel, prologue, "ones", MemSpace::SBUF, dt, {{rowLabel, 1}, {colLabel, rowTile}}, 1, loc);
  auto fill = std::make_unique<MemsetOp>();
  fill->loc = loc;
  fill->dst = access(ones, {{0, 1}, {0, rowTile}});
  fill->value = 1.0;
  prologue.ops.push_back(std::move(fill));
  auto &body = kernel->body.ops;
  body.insert(body.begin(), std::make_move_iterator(prologue.ops.begin()), std::make_move_iterator(prologue.ops.end()));
  return ones;
}

Value *TileGen::openLoop(llvm::StringRef hint, IndexExpr lo, IndexExpr hi, int64_t step,
                         llvm::SMLoc loc) {
  ForOp &loop = appendLoop(*kernel, *cur, hint, lo, hi, step, loc);
  loopStack.push_back(cur);
  cur = &loop.body;
  return loop.iv;
}

TensorType TileGen::hbmType(const ast::Expr &e) {
  auto [rows, cols] = labeler.slotsOf(e);
  TensorType t;
  t.space = MemSpace::HBM;
  t.dtype = toIR(e.type.dtype);
  t.dims = {Dim{labelOf(rows), e.type.rows}, Dim{labelOf(cols), e.type.cols}};
  return t;
}

Value *TileGen::tensorOf(const ast::Expr &e) {
  Value *t = tensors.at(e.name);
  TensorType use = hbmType(e);
  if (use.dims == t->type.dims)
    return t;
  std::string labels;
  for (const Dim &d : use.dims)
    labels += d.label;
  Value *&view = views[{t, labels}];
  if (!view) {
    auto op = std::make_unique<ViewOp>();
    op->loc = e.loc;
    op->source = t;
    view = kernel->newValue(ValueKind::Buffer, kernel->uniqueName(t->name + "_" + labels));
    view->type = use;
    view->role = TensorRole::Input;
    view->loc = e.loc;
    view->def = op.get();
    op->result = view;
    // Views open the body, so every nest can read them.
    kernel->body.ops.insert(kernel->body.ops.begin() + views.size() - 1, std::move(op));
  }
  return view;
}

Value *TileGen::hbmTensor(const ast::Expr &e, llvm::StringRef hint) {
  return alloc(hint, MemSpace::HBM, toIR(e.type.dtype), hbmType(e).dims, 1, e.loc);
}

/// A readable name for the tensor holding `e`: `XU` for X @ U, else `t`.
std::string nameHint(const ast::Expr &e) {
  std::string name;
  switch (e.kind) {
  case ast::ExprKind::Ref: return e.name;
  case ast::ExprKind::MatMul: name = nameHint(*e.lhs) + nameHint(*e.rhs); break;
  case ast::ExprKind::Transpose: name = nameHint(*e.lhs) + "T"; break;
  default: return "t";
  }
  return name.size() <= 8 ? name : "t";
}

/// Lowers `e` into `dest` (a fresh scratch tensor when null); returns the tensor holding it.
Value *TileGen::lower(const ast::Expr &e, Value *dest, llvm::StringRef hint) {
  if (failed)
    return nullptr;
  switch (e.kind) {
  case ast::ExprKind::Ref: {
    Value *src = tensorOf(e);
    if (!dest)
      return src;
    // `return X` or returning a local: copy through the scalar engine.
    ast::Expr copy(ast::ExprKind::Unary, e.loc);
    copy.opLoc = e.loc;
    copy.type = e.type;
    lowerElementwise(copy, src, nullptr, dest);
    return dest;
  }
  case ast::ExprKind::MatMul: {
    Value *a = lower(*e.lhs, nullptr, nameHint(*e.lhs));
    Value *b = lower(*e.rhs, nullptr, nameHint(*e.rhs));
    if (failed)
      return nullptr;
    Value *c = dest ? dest : hbmTensor(e, hint);
    lowerMatMul(e, a, b, c);
    return c;
  }
  case ast::ExprKind::Binary:
  case ast::ExprKind::Unary:
  case ast::ExprKind::Causal: {
    // A number is an immediate of the instruction, not a tensor.
    auto operand = [&](const ast::Expr *o) {
      return o && o->kind != ast::ExprKind::Number ? lower(*o, nullptr, nameHint(*o)) : nullptr;
    };
    Value *a = operand(e.lhs.get());
    Value *b = e.kind == ast::ExprKind::Binary ? operand(e.rhs.get()) : nullptr;
    if (failed)
      return nullptr;
    Value *c = dest ? dest : hbmTensor(e, hint);
    lowerElementwise(e, a, b, c);
    return c;
  }
  case ast::ExprKind::Reduce: {
    // sum(f(x)): the scalar engine sums f's results as it computes them
    // (activation accumulate); f(x) is never stored.
    const ast::Expr *arg = e.lhs.get();
    if (e.reduceOp != ast::ReduceOp::Max && e.reduceOp != ast::ReduceOp::Min &&
        arg->kind == ast::ExprKind::Unary)
      arg = arg->lhs.get();
    Value *a = lower(*arg, nullptr, nameHint(*arg));
    if (failed)
      return nullptr;
    Value *c = dest ? dest : hbmTensor(e, hint);
    lowerReduce(e, a, c);
    return c;
  }
  case ast::ExprKind::Number:
  case ast::ExprKind::Call:
    diags.error(e.loc, "TileGen: a number or call where a tensor is expected");
    failed = true;
    return nullptr;
  case ast::ExprKind::Transpose: {
    Value *a = lower(*e.lhs, nullptr, nameHint(*e.lhs));
    if (failed)
      return nullptr;
    Value *c = dest ? dest : hbmTensor(e, hint);
    lowerTranspose(e, a, c);
    return c;
  }
  case ast::ExprKind::MergeHeads: {
    Value *c = dest ? dest : hbmTensor(e, hint);
    lowerMergeHeads(e, c);
    return failed ? nullptr : c;
  }
  }
  return nullptr;
}

// merge_heads(x), x of G heads: each head g of x lowered into c (writing
// its columns g * D ..), as a statement with heads lowers head g's: kernel
// head h = g * (H / G) of the values with heads.
void TileGen::lowerMergeHeads(const ast::Expr &e, Value *c) {
  const int64_t G = e.lhs->type.heads, D = e.lhs->type.cols, H = kernelHeads();
  for (int64_t g = 0; g < G && !failed; ++g) {
    int64_t h = g * (H / G);
    selectHead(h);
    size_t opsBefore = kernel->body.ops.size(), viewsBefore = views.size();
    lower(*e.lhs, c, "merged");
    size_t added = kernel->body.ops.size() - opsBefore - (views.size() - viewsBefore);
    std::map<const Value *, frontend::HeadOffset> offsets = headOffsets(h, H);
    offsets[c].cols += g * D;
    llvm::MutableArrayRef<std::unique_ptr<Op>> nests(kernel->body.ops);
    frontend::shiftHeads(nests.take_back(added), offsets);
  }
}

// C[M', N'] = A[M', K'] @ B[K', N'], blocked like AWS's NKI matmul tutorial:
// per row strip of `m` rows, A's block is transposed once into an SBUF strip
// A^T[K', m] (K' on partitions); then each column tile of C is computed from
// the strip and B (see the two column-loop forms below). When `m` does not
// divide M', the last (shorter) block is peeled into its own nest, so every
// loop has constant bounds and only the last row tile is partial.
void TileGen::lowerMatMul(const ast::Expr &e, Value *a, Value *b, Value *c) {
  const int64_t M = e.type.rows, K = e.lhs->type.cols, N = e.type.cols;
  ir::DType dt = a->type.dtype;
  int64_t stripRows = std::min(wantedStripRows, roundToTile(M));
  auto stripBytes = [&](int64_t rows, int64_t k) { return roundToTile(k) / rowTile * rows * dtypeBytes(dt); };
  // The contraction block, named after its dimension (`k` for K): given,
  // else the whole contraction unless no row strip's strip fits (below).
  const std::string kName = ir::BlockConfig::contractionBlockName(a->type.dims[1].label);
  std::optional<int64_t> kGiven = opts.blocks.get(kName);
  int64_t kBlock = kGiven ? std::min(*kGiven, K) : K;
  // A default row strip is halved until its strip fits; a given one is kept.
  // Halving counts whole row tiles, rounding up (3 tiles become 2): the
  // block of M = 130 rows, 3 tiles of 64, halved to 96 rows would be no
  // multiple of the partitions.
  while (!rowStripGiven && stripRows > rowTile && stripBytes(stripRows, kBlock) > opts.stripBudgetBytes)
    stripRows = llvm::alignTo(stripRows / 2, rowTile);
  if (!kGiven && stripBytes(stripRows, kBlock) > opts.stripBudgetBytes) {
    // The strip does not fit (a given row strip, or even one row tile):
    // K-block the contraction, so the strip holds one K block and the
    // partial sums accumulate in an fp32 SBUF accumulator of the row strip's
    // outputs [m, N], with the largest K block that fits beside it twice
    // (`schedule` double-buffers it, so the next block loads during this one).
    int64_t accBytes = accumulatorBytes(stripRows, N);
    int64_t room = (opts.stripBudgetBytes - accBytes) / 2;
    int64_t fit = room <= 0 ? 0 : std::min(K, room / (stripRows * dtypeBytes(dt)) * rowTile);
    if (fit >= std::max(rowTile, rowStripGiven ? opts.minKBlock : 0))
      kBlock = fit;
    else if (!rowStripGiven) {
      diags.error(e.opLoc, llvm::formatv("result of {0} columns is too wide for the K-blocked form: "
                                         "its fp32 accumulator needs {1} bytes per partition, over "
                                         "the {2} available for a strip",
                                         N, accBytes, opts.stripBudgetBytes));
      failed = true;
      return;
    }
    // A given row strip whose accumulator leaves too little room (K blocks
    // so shallow that the vector engine's adds would bound the kernel,
    // TileGenOptions::minKBlock) keeps the whole strip: allocation spills it
    // or reports that it does not fit.
  }
  // Record the blocks actually used (the row strip may have been halved to
  // fit); `k` appears only on kernels whose contraction is K-blocked or was
  // given one (so a rebuild from the attribute keeps it).
  kernel->blockParams.set(ir::BlockConfig::kRowStrip,
                          std::min(kernel->blockParams.lookup(ir::BlockConfig::kRowStrip), stripRows));
  if (kBlock < K || kGiven)
    kernel->blockParams.set(kName, kBlock);
  // A last block as tall as the others (a one-tile strip, or a tail that
  // rounds up to the strip) stays in the loop: its partial tile is the only
  // one, and the nest walks the rows as the row-wise nests beside it do.
  int64_t fullRows = roundToTile(M - M / stripRows * stripRows) == stripRows ? M : M / stripRows * stripRows;
  ForOp *rowLoop = nullptr;
  if (fullRows > 0)
    rowLoop = lowerMatMulBlocks(e, a, b, c, 0, fullRows, stripRows, kBlock);
  if (fullRows < M) {
    ForOp *peeled = lowerMatMulBlocks(e, a, b, c, fullRows, M, roundToTile(M - fullRows), kBlock);
    rowLoop = rowLoop ? rowLoop : peeled;
  }
  rowStripLoops.push_back(rowLoop);
}

/// The operands of one row strip's column loop.
struct TileGen::RowStrip {
  Value *a = nullptr, *b = nullptr, *c = nullptr, *aT = nullptr, *mb = nullptr;
  int64_t stripRows = 0, blockCols = 0, K = 0, N = 0;
  std::function<IndexExpr(Value *)> rowExtent;
  llvm::SMLoc loc;
  /// The K block this column loop contracts: [kb + 0, kb + kLen) with `kb`
  /// its loop variable, or the whole of K (kb null, kLen = K).
  Value *kb = nullptr;
  int64_t kLen = 0;
  /// K-blocked: the fp32 SBUF accumulator [m, N] the blocks' partial sums
  /// are added into; null when the whole contraction accumulates in PSUM.
  Value *accS = nullptr;
  /// The column loop's variable and its tile's extent.
  Value *n = nullptr;
  IndexExpr en;
};

int64_t TileGen::columnBlockFor(const Dim &nDim) {
  if (!ir::BlockConfig::hasOwnColumnBlock(nDim.label))
    return wantedBlockCols;
  std::string name = ir::BlockConfig::columnBlockName(nDim.label);
  if (projectionColumns)
    (*projectionColumns)[name] = nDim.size;
  std::optional<int64_t> given = opts.blocks.get(name);
  if (!given)
    return wantedBlockCols;
  // Recorded only when given, so kernels built at `n` alone print as before.
  kernel->blockParams.set(name, std::min(*given, movingTile));
  return *given;
}

IndexExpr TileGen::kIndex(const RowStrip &r, Value *k) {
  return r.kb ? IndexExpr::var(r.kb) + IndexExpr::var(k) : IndexExpr::var(k);
}

int64_t TileGen::accumulatorBytes(int64_t stripRows, int64_t N) const {
  return stripRows / rowTile * roundToTile(N) * dtypeBytes(ir::DType::F32);
}

// One row strip: A's block transposed into an SBUF strip A^T[K, m], then the
// output column loop. K-blocked (kBlock < K), the strip holds one K block at
// a time, each block's partial sums leave PSUM and the vector engine adds
// them in fp32 into an SBUF accumulator accS[m, N]; A is still read once per
// row strip and B once per row strip:
//   accS <- 0
//   for %kb { A_T <- A[mb, kb]^T; for %n { psum = A_T x B[kb, n]; accS[:, n] += psum } }
//   for %n { for %mi { C_tile <- accS[mi, n]; C[mb + mi, n] <- C_tile } }
ForOp *TileGen::lowerMatMulBlocks(const ast::Expr &e, Value *a, Value *b, Value *c, int64_t rowLo,
                                  int64_t rowHi, int64_t stripRows, int64_t kBlock) {
  const int64_t M = e.type.rows, K = e.lhs->type.cols, N = e.type.cols;
  // Column tiles no wider than the (partition-rounded) columns, so a narrow
  // N gets one exact tile rather than a clamped moving-wide one.
  int64_t blockCols = std::min({columnBlockFor(b->type.dims[1]), movingTile, roundToTile(N)});
  llvm::SMLoc loc = e.opLoc;

  Value *mb = openLoop("mb", rowLo, rowHi, stripRows, loc);
  // Rows of the tile at offset %mi inside the block; only a block that ends
  // at M can hold a partial tile.
  auto rowExtent = [mb, rowHi, M, tile = rowTile](Value *mi) {
    IndexExpr row = IndexExpr::var(mb) + IndexExpr::var(mi);
    return rowHi == M && M % tile != 0 ? min(IndexExpr(tile), IndexExpr(M) - row) : IndexExpr(tile);
  };
  RowStrip rb;
  rb.a = a;
  rb.b = b;
  rb.c = c;
  rb.mb = mb;
  rb.stripRows = stripRows;
  rb.blockCols = blockCols;
  rb.K = K;
  rb.N = N;
  rb.rowExtent = rowExtent;
  rb.loc = loc;
  if (kBlock >= K) {
    lowerKBlock(rb, 0, K, K);
  } else {
    const Dim &rowDim = a->type.dims[0], &nDim = b->type.dims[1];
    rb.accS = alloc("accS", MemSpace::SBUF, ir::DType::F32, {{rowDim.label, stripRows}, {nDim.label, roundToTile(N)}}, 1, loc);
    {
      Value *mi = openLoop("mi", 0, stripRows, rowTile, loc);
      auto &zero = emit<MemsetOp>(loc);
      zero.dst = access(rb.accS, {{IndexExpr::var(mi), rowTile}, {0, roundToTile(N)}});
      closeLoop();
    }
    // Whole K blocks, then the shorter last one in its own loop, so every
    // loop has constant bounds.
    int64_t fullK = K / kBlock * kBlock;
    lowerKBlock(rb, 0, fullK, kBlock);
    if (fullK < K)
      lowerKBlock(rb, fullK, K, K - fullK);
    Value *n = openLoop("n", 0, N, blockCols, loc);
    IndexExpr en = extent(N, blockCols, IndexExpr::var(n));
    rb.en = en;
    Value *mi = openLoop("mi", 0, stripRows, rowTile, loc);
    storeRowTile(rb, IndexExpr::var(n), mi, rb.accS, IndexExpr::var(mi), IndexExpr::var(n));
    closeLoop();
    closeLoop();
  }
  closeLoop();
  return llvm::cast<ForOp>(mb->def);
}

// The strip A^T of one K block [kLo + kb, +kLen) for every kb in [kLo, kHi)
// (a loop of step kLen, or straight-line code when the block is all of K),
// then the column loop contracting it.
void TileGen::lowerKBlock(RowStrip &r, int64_t kLo, int64_t kHi, int64_t kLen) {
  const Dim &rowDim = r.a->type.dims[0], &kDim = r.a->type.dims[1];
  ir::DType dt = r.a->type.dtype;
  llvm::SMLoc loc = r.loc;
  std::string aName = r.a->name;
  bool blocked = kLen < r.K;
  r.kb = blocked ? openLoop("kb", kLo, kHi, kLen, loc) : nullptr;
  r.kLen = kLen;
  r.aT = alloc(aName + "_T", MemSpace::SBUF, dt, {{kDim.label, roundToTile(kLen)}, {rowDim.label, r.stripRows}}, 1, loc);
  {
    Value *mi = openLoop("mi", 0, r.stripRows, rowTile, loc);
    IndexExpr em = r.rowExtent(mi);
    Value *kt = openLoop("kt", 0, kLen, rowTile, loc);
    IndexExpr ek = extent(kLen, rowTile, IndexExpr::var(kt));
    Value *tile = alloc(aName + "_tile", MemSpace::SBUF, dt, {{rowDim.label, rowTile}, {kDim.label, rowTile}}, 2, loc);
    auto &load = emit<DmaOp>(loc);
    load.dst = access(tile, {{0, em}, {0, ek}});
    load.src = access(r.a, {{IndexExpr::var(r.mb) + IndexExpr::var(mi), em}, {kIndex(r, kt), ek}});
    Value *tp = alloc(aName + "_Tpsum", MemSpace::PSUM, ir::DType::F32, {{kDim.label, rowTile}, {rowDim.label, rowTile}}, 2, loc);
    auto &tr = emit<TransposeOp>(loc);
    tr.dst = access(tp, {{0, ek}, {0, em}});
    tr.src = access(tile, {{0, em}, {0, ek}});
    auto &cp = emit<CopyOp>(loc);
    cp.dst = access(r.aT, {{IndexExpr::var(kt), ek}, {IndexExpr::var(mi), em}});
    cp.src = access(tp, {{0, ek}, {0, em}});
    closeLoop();
    closeLoop();
  }
  lowerColumnLoop(r);
  if (blocked)
    closeLoop();
}

void TileGen::lowerColumnLoop(const RowStrip &rb) {
  RowStrip r = rb;
  r.n = openLoop("n", 0, r.N, r.blockCols, r.loc);
  r.en = extent(r.N, r.blockCols, IndexExpr::var(r.n));
  // The whole block's accumulators for one column tile, double-buffered,
  // fit PSUM only up to a point (4 banks x 2 on trn1, m <= 4 row tiles); past
  // it B's column block is held in SBUF so B is still read once per row strip.
  int64_t accBytes = r.stripRows / rowTile * movingTile * dtypeBytes(ir::DType::F32);
  if (2 * accBytes <= opts.geometry.psumBytes)
    lowerStreamedColumn(r, r.n);
  else
    lowerHeldColumn(r, r.n);
  closeLoop();
}

// Streamed B: acc[M:m, N:moving] holds every row tile of the block; B's tiles
// stream past the strip once each:
//   for %k { B_tile <- B[k, n]; for %mi { matmul acc[mi] += A_T[k, mi] x B_tile } }
//   for %mi { C_tile <- acc[mi]; C[mb + mi, n] <- C_tile }
void TileGen::lowerStreamedColumn(const RowStrip &r, Value *n) {
  const Dim &rowDim = r.a->type.dims[0], &kDim = r.a->type.dims[1], &nDim = r.b->type.dims[1];
  llvm::SMLoc loc = r.loc;
  // Each partition fold of the accumulator is a whole PSUM bank (moving fp32), so
  // no accumulation group straddles two banks whatever the tile width.
  Value *acc = alloc("acc", MemSpace::PSUM, ir::DType::F32, {{rowDim.label, r.stripRows}, {nDim.label, movingTile}}, 2, loc);
  {
    Value *k = openLoop("k", 0, r.kLen, rowTile, loc);
    IndexExpr ek = extent(r.kLen, rowTile, IndexExpr::var(k));
    Value *btile = alloc(r.b->name + "_tile", MemSpace::SBUF, r.b->type.dtype, {{kDim.label, rowTile}, {nDim.label, r.blockCols}}, 2, loc);
    auto &load = emit<DmaOp>(loc);
    load.dst = access(btile, {{0, ek}, {0, r.en}});
    load.src = access(r.b, {{kIndex(r, k), ek}, {IndexExpr::var(n), r.en}});
    Value *mi = openLoop("mi", 0, r.stripRows, rowTile, loc);
    IndexExpr em = r.rowExtent(mi);
    auto &mm = emit<MatmulOp>(loc);
    mm.dst = access(acc, {{IndexExpr::var(mi), em}, {0, r.en}});
    mm.stationary = access(r.aT, {{IndexExpr::var(k), ek}, {IndexExpr::var(mi), em}});
    mm.moving = access(btile, {{0, ek}, {0, r.en}});
    mm.resetOn.push_back(k);
    closeLoop();
    closeLoop();
  }
  Value *mi = openLoop("mi", 0, r.stripRows, rowTile, loc);
  finishRowTile(r, n, mi, acc, IndexExpr::var(mi));
  closeLoop();
}

// Held B: B's column block [K', n] is loaded into SBUF once, then each row
// tile accumulates over k in its own PSUM bank:
//   for %k { B_blk[k] <- B[k, n] }
//   for %mi { acc <- 0; for %k { matmul acc += A_T[k, mi] x B_blk[k] }; C[mb + mi, n] <- acc }
void TileGen::lowerHeldColumn(const RowStrip &r, Value *n) {
  const Dim &rowDim = r.a->type.dims[0], &kDim = r.a->type.dims[1], &nDim = r.b->type.dims[1];
  llvm::SMLoc loc = r.loc;
  Value *bblk = alloc(r.b->name + "_blk", MemSpace::SBUF, r.b->type.dtype, {{kDim.label, roundToTile(r.kLen)}, {nDim.label, r.blockCols}}, 2, loc);
  {
    Value *k = openLoop("k", 0, r.kLen, rowTile, loc);
    IndexExpr ek = extent(r.kLen, rowTile, IndexExpr::var(k));
    auto &load = emit<DmaOp>(loc);
    load.dst = access(bblk, {{IndexExpr::var(k), ek}, {0, r.en}});
    load.src = access(r.b, {{kIndex(r, k), ek}, {IndexExpr::var(n), r.en}});
    closeLoop();
  }
  Value *mi = openLoop("mi", 0, r.stripRows, rowTile, loc);
  IndexExpr em = r.rowExtent(mi);
  Value *acc = alloc("acc", MemSpace::PSUM, ir::DType::F32, {{rowDim.label, rowTile}, {nDim.label, movingTile}}, 2, loc);
  {
    Value *k = openLoop("k", 0, r.kLen, rowTile, loc);
    IndexExpr ek = extent(r.kLen, rowTile, IndexExpr::var(k));
    auto &mm = emit<MatmulOp>(loc);
    mm.dst = access(acc, {{0, em}, {0, r.en}});
    mm.stationary = access(r.aT, {{IndexExpr::var(k), ek}, {IndexExpr::var(mi), em}});
    mm.moving = access(bblk, {{IndexExpr::var(k), ek}, {0, r.en}});
    mm.resetOn.push_back(k);
    closeLoop();
  }
  finishRowTile(r, n, mi, acc, IndexExpr(0));
  closeLoop();
}

/// One row tile of a column tile is complete in PSUM (at row `accRow`): store
/// it to C, or, K-blocked, add it into the SBUF accumulator (fp32 on the
/// vector engine).
void TileGen::finishRowTile(const RowStrip &r, Value *n, Value *mi, Value *acc, IndexExpr accRow) {
  if (!r.accS) {
    storeRowTile(r, IndexExpr::var(n), mi, acc, accRow, IndexExpr(0));
    return;
  }
  IndexExpr em = r.rowExtent(mi);
  Access sum = access(r.accS, {{IndexExpr::var(mi), em}, {IndexExpr::var(n), r.en}});
  auto &add = emit<TensorTensorOp>(r.loc);
  add.alu = AluOp::Add;
  add.dst = sum;
  add.lhs = sum;
  add.rhs = access(acc, {{accRow, em}, {0, r.en}});
}

/// Evacuates one row tile of an accumulator (at `accRow`, `accCol`) through
/// SBUF to C's columns from `col`.
void TileGen::storeRowTile(const RowStrip &r, IndexExpr col, Value *mi, Value *acc, IndexExpr accRow,
                           IndexExpr accCol) {
  const Dim &rowDim = r.a->type.dims[0], &nDim = r.b->type.dims[1];
  IndexExpr em = r.rowExtent(mi);
  Value *ctile = alloc(r.c->name + "_tile", MemSpace::SBUF, r.c->type.dtype, {{rowDim.label, rowTile}, {nDim.label, r.blockCols}}, 2, r.loc);
  auto &cp = emit<CopyOp>(r.loc);
  cp.dst = access(ctile, {{0, em}, {0, r.en}});
  cp.src = access(acc, {{accRow, em}, {accCol, r.en}});
  auto &store = emit<DmaOp>(r.loc);
  store.dst = access(r.c, {{IndexExpr::var(r.mb) + IndexExpr::var(mi), em}, {col, r.en}});
  store.src = access(ctile, {{0, em}, {0, r.en}});
}

TileGen::Operand TileGen::operandKind(const ast::Expr &o, const ast::Expr &e) {
  if (o.kind == ast::ExprKind::Number)
    return Operand::Number;
  if (o.type.cols != e.type.cols)
    return o.type.rows != e.type.rows ? Operand::Single : Operand::Column;
  if (o.type.rows != e.type.rows)
    return Operand::Row;
  return Operand::Full;
}

Access TileGen::operandTile(Operand kind, Value *src, Value *ones, Value *c, Value *m, Value *n,
                            IndexExpr em, IndexExpr en, llvm::SMLoc loc) {
  const Dim &rowDim = c->type.dims[0], &colDim = c->type.dims[1];
  const Dim &srcRows = src->type.dims[0], &srcCols = src->type.dims[1];
  if (kind == Operand::Column) {
    Value *t = alloc(src->name + "_col", MemSpace::SBUF, src->type.dtype, {{rowDim.label, rowTile}, {srcCols.label, 1}}, 2, loc);
    auto &load = emit<DmaOp>(loc);
    load.dst = access(t, {{0, em}, {0, 1}});
    load.src = access(src, {{IndexExpr::var(m), em}, {0, 1}});
    return access(t, {{0, em}, {0, 1}});
  }
  if (kind == Operand::Row || kind == Operand::Single) {
    // ones[1, P]^T @ row[1, n] on the tensor engine: the row on every
    // partition (a 1 x 1 tensor: a [P, 1] column of it, the scalar tile).
    bool single = kind == Operand::Single;
    const std::string &cols = single ? srcCols.label : colDim.label;
    int64_t width = single ? 1 : movingTile;
    IndexExpr ew = single ? IndexExpr(1) : en;
    Value *t = alloc(src->name + "_row", MemSpace::SBUF, src->type.dtype, {{srcRows.label, 1}, {cols, width}}, 2, loc);
    auto &load = emit<DmaOp>(loc);
    load.dst = access(t, {{0, 1}, {0, ew}});
    load.src = access(src, {{0, 1}, {single ? IndexExpr(0) : IndexExpr::var(n), ew}});
    Value *p = alloc(src->name + "_bcast", MemSpace::PSUM, ir::DType::F32, {{rowDim.label, rowTile}, {cols, width}}, 2, loc);
    auto &mm = emit<MatmulOp>(loc);
    mm.dst = access(p, {{0, em}, {0, ew}});
    mm.stationary = access(ones, {{0, 1}, {0, em}});
    mm.moving = access(t, {{0, 1}, {0, ew}});
    return access(p, {{0, em}, {0, ew}});
  }
  Value *t = alloc(src->name + "_tile", MemSpace::SBUF, src->type.dtype, {{rowDim.label, rowTile}, {colDim.label, movingTile}}, 2, loc);
  auto &load = emit<DmaOp>(loc);
  load.dst = access(t, {{0, em}, {0, en}});
  load.src = access(src, {{IndexExpr::var(m), em}, {IndexExpr::var(n), en}});
  return access(t, {{0, em}, {0, en}});
}

static AluOp aluOf(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Mul: return AluOp::Mul;
  case ast::BinaryOp::Add: return AluOp::Add;
  case ast::BinaryOp::Sub: return AluOp::Sub;
  case ast::BinaryOp::Div: return AluOp::Divide;
  case ast::BinaryOp::Lt: return AluOp::IsLt;
  case ast::BinaryOp::Le: return AluOp::IsLe;
  case ast::BinaryOp::Gt: return AluOp::IsGt;
  case ast::BinaryOp::Ge: return AluOp::IsGe;
  case ast::BinaryOp::Eq: return AluOp::IsEqual;
  case ast::BinaryOp::Ne: return AluOp::NotEqual;
  }
  return AluOp::Add;
}

// Two tiles: tensor_tensor. A column or a number against a tile:
// tensor_scalar (its scalar the [P, 1] tile or the immediate; `reverse` when
// it is the left operand).
void TileGen::emitBinary(const ast::Expr &e, const Access &dst, Operand ka, const Access &ta, Operand kb,
                         const Access &tb, llvm::SMLoc loc) {
  AluOp alu = aluOf(e.binOp);
  auto isTile = [](Operand k) { return k == Operand::Full || k == Operand::Row; }; // else [P, 1] or a number
  if (isTile(ka) && isTile(kb)) {
    auto &tt = emit<TensorTensorOp>(loc);
    tt.alu = alu;
    tt.dst = dst;
    tt.lhs = ta;
    tt.rhs = tb;
    return;
  }
  bool scalarLeft = !isTile(ka);
  auto &ts = emit<TensorScalarOp>(loc);
  ts.alu = alu;
  ts.dst = dst;
  ts.src = scalarLeft ? tb : ta;
  ts.reverse = scalarLeft;
  Operand scalarKind = scalarLeft ? ka : kb;
  if (scalarKind == Operand::Number)
    ts.scalar = scalarLeft ? e.lhs->number : e.rhs->number;
  else
    ts.scalarTile = scalarLeft ? ta : tb;
}

// C = A op B (Binary), fn(A) (Unary) or a copy of A (Ref): partitions x
// moving tiles. An operand may broadcast (operandKind): a column [M, 1], a
// row vector [1, N] or a number.
void TileGen::lowerElementwise(const ast::Expr &e, Value *a, Value *b, Value *c) {
  const int64_t M = e.type.rows, N = e.type.cols;
  const Dim &rowDim = c->type.dims[0], &colDim = c->type.dims[1];
  llvm::SMLoc loc = e.kind == ast::ExprKind::Ref ? e.loc : e.opLoc;
  bool binary = e.kind == ast::ExprKind::Binary;
  Operand ka = binary ? operandKind(*e.lhs, e) : Operand::Full;
  Operand kb = binary ? operandKind(*e.rhs, e) : Operand::Number;
  // A row vector's broadcast multiplies it by a [1, P] row of ones.
  Value *ones = nullptr;
  auto broadcastsRows = [](Operand k) { return k == Operand::Row || k == Operand::Single; };
  if (Value *row = broadcastsRows(ka) ? a : broadcastsRows(kb) ? b : nullptr) {
    ones = onesRow(row->type.dtype, row->type.dims[0].label, rowDim.label, loc);
  }
  Value *m = openLoop("m", 0, M, rowTile, loc);
  IndexExpr em = extent(M, rowTile, IndexExpr::var(m));
  Value *n = openLoop("n", 0, N, movingTile, loc);
  IndexExpr en = extent(N, movingTile, IndexExpr::var(n));
  Access ta, tb;
  if (ka != Operand::Number)
    ta = operandTile(ka, a, ones, c, m, n, em, en, loc);
  // x * x loads its tile once.
  if (binary && kb == ka && b == a)
    tb = ta;
  else if (binary && kb != Operand::Number)
    tb = operandTile(kb, b, ones, c, m, n, em, en, loc);
  Value *out = alloc(c->name + "_tile", MemSpace::SBUF, c->type.dtype, {{rowDim.label, rowTile}, {colDim.label, movingTile}}, 2, loc);
  Access dst = access(out, {{0, em}, {0, en}});
  if (binary) {
    emitBinary(e, dst, ka, ta, kb, tb, loc);
  } else if (e.kind == ast::ExprKind::Causal) {
    // Element [p, f] of the tile is row m + p, column n + f: kept where
    // m + p - (n + f) + offset >= 0 (GpSimd's affine_select; no mask tensor).
    auto &sel = emit<AffineSelectOp>(loc);
    sel.cmp = AluOp::IsGe;
    sel.dst = dst;
    sel.src = ta;
    sel.index.offset = IndexExpr::var(m) - IndexExpr::var(n) + IndexExpr(e.offset);
    sel.index.partition = 1;
    sel.index.free = -1;
    sel.fill = e.number;
  } else {
    auto &act = emit<ActivationOp>(loc);
    act.fn = ActFn::Copy;
    if (e.kind == ast::ExprKind::Unary && e.lhs) {
      act.fn = e.unaryFn; // the DSL's functions are the registry's activations
    }
    act.dst = dst;
    act.src = ta;
  }
  auto &store = emit<DmaOp>(loc);
  store.dst = access(c, {{IndexExpr::var(m), em}, {IndexExpr::var(n), en}});
  store.src = access(out, {{0, em}, {0, en}});
  closeLoop();
  closeLoop();
}

// C[M', 1] = the rows of A[M', N'] folded over their columns: per row tile,
// each column tile's tensor_reduce [P, 1] is folded into an fp32 running
// [P, 1] (started at the fold's identity), so the reduction covers the whole
// row; `mean` scales it by 1 / N' as it is written out. A sum of a function
// f(x) (A is then x) takes each tile's partial sum from f's activation
// (its accumulate output) instead of a tensor_reduce.
void TileGen::lowerReduce(const ast::Expr &e, Value *a, Value *c) {
  const int64_t M = e.lhs->type.rows, N = e.lhs->type.cols;
  const bool fused = e.reduceOp != ast::ReduceOp::Max && e.reduceOp != ast::ReduceOp::Min &&
                     e.lhs->kind == ast::ExprKind::Unary;
  const Dim &rowDim = a->type.dims[0], &colDim = a->type.dims[1], &unit = c->type.dims[1];
  llvm::SMLoc loc = e.opLoc;
  AluOp fold = e.reduceOp == ast::ReduceOp::Max   ? AluOp::Max
               : e.reduceOp == ast::ReduceOp::Min ? AluOp::Min
                                                  : AluOp::Add;
  double identity = fold == AluOp::Max   ? -double(std::numeric_limits<float>::max())
                    : fold == AluOp::Min ? double(std::numeric_limits<float>::max())
                                         : 0.0;
  Value *m = openLoop("m", 0, M, rowTile, loc);
  IndexExpr em = extent(M, rowTile, IndexExpr::var(m));
  Value *acc = alloc("acc", MemSpace::SBUF, ir::DType::F32, {{rowDim.label, rowTile}, {unit.label, 1}}, 2, loc);
  Access accTile = access(acc, {{0, em}, {0, 1}});
  auto &init = emit<MemsetOp>(loc);
  init.dst = accTile;
  init.value = identity;
  {
    Value *n = openLoop("n", 0, N, movingTile, loc);
    IndexExpr en = extent(N, movingTile, IndexExpr::var(n));
    Value *t = alloc(a->name + "_tile", MemSpace::SBUF, a->type.dtype, {{rowDim.label, rowTile}, {colDim.label, movingTile}}, 2, loc);
    auto &load = emit<DmaOp>(loc);
    load.dst = access(t, {{0, em}, {0, en}});
    load.src = access(a, {{IndexExpr::var(m), em}, {IndexExpr::var(n), en}});
    Value *part = alloc("part", MemSpace::SBUF, ir::DType::F32, {{rowDim.label, rowTile}, {unit.label, 1}}, 2, loc);
    if (fused) {
      Value *f = alloc("f_tile", MemSpace::SBUF, a->type.dtype, {{rowDim.label, rowTile}, {colDim.label, movingTile}}, 2, loc);
      auto &act = emit<ActivationOp>(loc);
      act.fn = e.lhs->unaryFn;
      act.dst = access(f, {{0, em}, {0, en}});
      act.src = access(t, {{0, em}, {0, en}});
      act.accumulator = access(part, {{0, em}, {0, 1}});
    } else {
      auto &red = emit<TensorReduceOp>(loc);
      red.alu = fold;
      red.dst = access(part, {{0, em}, {0, 1}});
      red.src = access(t, {{0, em}, {0, en}});
    }
    auto &into = emit<TensorTensorOp>(loc);
    into.alu = fold;
    into.dst = accTile;
    into.lhs = accTile;
    into.rhs = access(part, {{0, em}, {0, 1}});
    closeLoop();
  }
  Value *out = alloc(c->name + "_tile", MemSpace::SBUF, c->type.dtype, {{rowDim.label, rowTile}, {unit.label, 1}}, 2, loc);
  Access outTile = access(out, {{0, em}, {0, 1}});
  if (e.reduceOp == ast::ReduceOp::Mean) {
    auto &scale = emit<TensorScalarOp>(loc);
    scale.alu = AluOp::Mul;
    scale.dst = outTile;
    scale.src = accTile;
    scale.scalar = 1.0 / double(N);
  } else {
    auto &cp = emit<CopyOp>(loc);
    cp.dst = outTile;
    cp.src = accTile;
  }
  auto &store = emit<DmaOp>(loc);
  store.dst = access(c, {{IndexExpr::var(m), em}, {0, 1}});
  store.src = outTile;
  closeLoop();
}

// C[N', M'] = A[M', N']^T through the tensor engine, partitions x partitions tiles.
void TileGen::lowerTranspose(const ast::Expr &e, Value *a, Value *c) {
  const int64_t M = a->type.dims[0].size, N = a->type.dims[1].size;
  const Dim &rowDim = a->type.dims[0], &colDim = a->type.dims[1];
  llvm::SMLoc loc = e.opLoc;
  Value *m = openLoop("m", 0, M, rowTile, loc);
  IndexExpr em = extent(M, rowTile, IndexExpr::var(m));
  Value *n = openLoop("n", 0, N, rowTile, loc);
  IndexExpr en = extent(N, rowTile, IndexExpr::var(n));
  Value *tile = alloc(a->name + "_tile", MemSpace::SBUF, a->type.dtype, {{rowDim.label, rowTile}, {colDim.label, rowTile}}, 2, loc);
  auto &load = emit<DmaOp>(loc);
  load.dst = access(tile, {{0, em}, {0, en}});
  load.src = access(a, {{IndexExpr::var(m), em}, {IndexExpr::var(n), en}});
  Value *tp = alloc(a->name + "_Tpsum", MemSpace::PSUM, ir::DType::F32, {{colDim.label, rowTile}, {rowDim.label, rowTile}}, 2, loc);
  auto &tr = emit<TransposeOp>(loc);
  tr.dst = access(tp, {{0, en}, {0, em}});
  tr.src = access(tile, {{0, em}, {0, en}});
  Value *out = alloc(c->name + "_tile", MemSpace::SBUF, c->type.dtype, {{colDim.label, rowTile}, {rowDim.label, rowTile}}, 2, loc);
  auto &cp = emit<CopyOp>(loc);
  cp.dst = access(out, {{0, en}, {0, em}});
  cp.src = access(tp, {{0, en}, {0, em}});
  auto &store = emit<DmaOp>(loc);
  store.dst = access(c, {{IndexExpr::var(n), en}, {IndexExpr::var(m), em}});
  store.src = access(out, {{0, en}, {0, em}});
  closeLoop();
  closeLoop();
}

/// `h = X`: a local that is another name for a tensor.
bool isAlias(const ast::Stmt &s) { return !s.isReturn() && s.value->kind == ast::ExprKind::Ref; }

void TileGen::labelDimensions(std::set<std::string> apart) {
  labeler = DimLabeler(std::move(apart));
  for (const ast::Param &p : ast.params)
    labeler.bind(p.name, labeler.fresh());
  for (const ast::Stmt &s : ast.body) {
    if (isAlias(s)) {
      labeler.bindAlias(s.name, s.value->name); // not a use of its own
      continue;
    }
    auto slots = labeler.visit(*s.value);
    if (!s.isReturn())
      labeler.bind(s.name, slots);
  }
}

/// The first expression whose rows and columns fall in one class, if any.
const ast::Expr *TileGen::firstMergedExpr() const {
  std::function<const ast::Expr *(const ast::Expr &)> firstMerged = [&](const ast::Expr &e) -> const ast::Expr * {
    for (const ast::Expr *o : {e.lhs.get(), e.rhs.get()})
      if (o)
        if (const ast::Expr *m = firstMerged(*o))
          return m;
    auto [rows, cols] = labeler.slotsOf(e);
    return labeler.find(rows) == labeler.find(cols) ? &e : nullptr;
  };
  for (const ast::Stmt &s : ast.body)
    if (!isAlias(s))
      if (const ast::Expr *e = firstMerged(*s.value))
        return e;
  return nullptr;
}

bool TileGen::labelAllDimensions() {
  // Dimension classes. A tensor used in two roles (X @ X, X.T @ X,
  // h = X @ W; h @ W) puts one dimension in two classes, or a tensor's rows
  // and columns in one; each use of an input but its first then gets labels
  // of its own and reads the input through a view (issue 15, item 4).
  labelDimensions({});
  std::set<std::string> inputs;
  for (const ast::Param &p : ast.params)
    inputs.insert(p.name);
  if (firstMergedExpr())
    labelDimensions(inputs);
  // Inputs labelled per use never merge; a local in two roles still may.
  if (const ast::Expr *e = firstMergedExpr()) {
    std::string what = e->kind == ast::ExprKind::Ref ? "'" + e->name + "'" : "this result";
    for (const ast::Stmt &s : ast.body)
      if (s.value.get() == e && !s.isReturn())
        what = "'" + s.name + "'";
    llvm::SMLoc at = e->kind == ast::ExprKind::Ref ? e->loc : e->opLoc;
    // The merge shows first where it propagated to; name the local whose
    // uses, labelled apart, would undo it, at its second use.
    std::string culprit;
    for (const ast::Stmt &s : ast.body) {
      if (s.isReturn() || isAlias(s))
        continue;
      std::set<std::string> apart = inputs;
      apart.insert(s.name);
      labelDimensions(apart);
      if (const ast::Expr *use = labeler.secondUse(s.name); use && !firstMergedExpr()) {
        culprit = "'" + s.name + "'";
        at = use->loc;
        break;
      }
    }
    const char *advice = "the tile IR views only inputs under other labels; write the local's "
                         "expression in place of each use instead, as in (X @ W) @ (X @ W)";
    if (culprit.empty() || culprit == what)
      diags.error(at, llvm::formatv("not supported yet: {0} is used so that its rows and columns are "
                                    "one dimension (a local in two roles, as in h = X @ W; h @ h): {1}",
                                    culprit.empty() ? what : culprit, advice));
    else
      diags.error(at, llvm::formatv("not supported yet: the uses of {0} put the rows and columns of "
                                    "{1} in one dimension (a local in two roles, as in h = silu(X); "
                                    "h + h @ W): {2}",
                                    culprit, what, advice));
    return false;
  }
  return true;
}

void TileGen::nameUnitDimensions() {
  unsigned count = 0;
  auto name = [&](unsigned slot, int64_t size) {
    if (size == 1 && !labeler.isNamed(slot))
      labeler.nameClass(slot, ++count == 1 ? "B" : "B" + std::to_string(count));
  };
  for (const ast::Param &p : ast.params) {
    auto s = labeler.slotsOfName(p.name);
    name(s.first, p.type.rows);
    name(s.second, p.type.cols);
  }
  std::function<void(const ast::Expr &)> walk = [&](const ast::Expr &e) {
    if (e.kind != ast::ExprKind::Number) {
      auto s = labeler.slotsOf(e);
      name(s.first, e.type.rows);
      name(s.second, e.type.cols);
    }
    for (const ast::Expr *o : {e.lhs.get(), e.rhs.get()})
      if (o)
        walk(*o);
  };
  for (const ast::Stmt &st : ast.body)
    if (!isAlias(st))
      walk(*st.value);
}

std::unique_ptr<Kernel> TileGen::run() {
  if (!opts.geometry.isSet() || opts.firstBlockM <= 0 || opts.stripBudgetBytes <= 0) {
    diags.error(ast.loc, "TileGen needs the target's tile geometry, a first row strip and a "
                         "strip budget (TileGenOptions)");
    return nullptr;
  }
  kernel->geometry = opts.geometry;
  // 1. Dimension classes.
  if (!labelAllDimensions())
    return nullptr;
  const ast::Expr *root = ast.returnStmt().value.get();
  const ast::Expr *strip = root;
  while (strip->kind == ast::ExprKind::Transpose)
    strip = strip->lhs.get();
  auto [rows, cols] = labeler.slotsOf(*strip);
  labeler.nameClass(rows, "M");
  if (labeler.find(cols) != labeler.find(rows))
    labeler.nameClass(cols, "N");
  nameUnitDimensions();

  // 2. Signature and block parameters.
  kernel->name = ast.name;
  kernel->loc = ast.loc;
  for (const ast::Param &p : ast.params) {
    Value *v = kernel->newValue(ValueKind::Argument, p.name);
    v->loc = p.loc;
    v->role = TensorRole::Input;
    kernel->args.push_back(v);
    tensors[p.name] = v;
  }
  for (size_t i = 0; i < ast.params.size(); ++i) {
    const ast::Param &p = ast.params[i];
    auto s = labeler.slotsOfName(p.name);
    Value *v = kernel->args[i];
    v->type.space = MemSpace::HBM;
    v->type.dtype = toIR(p.type.dtype);
    v->type.dims = {Dim{labelOf(s.first), p.type.rows}, Dim{labelOf(s.second), p.type.cols}};
  }
  Value *out = kernel->newValue(ValueKind::Argument, kernel->uniqueName("out"));
  out->role = TensorRole::Output;
  out->type = hbmType(*root);
  out->loc = ast.returnStmt().loc;
  kernel->args.push_back(out);

  wantedStripRows = opts.blocks.get(ir::BlockConfig::kRowStrip).value_or(opts.firstBlockM);
  wantedBlockCols = opts.blocks.get(ir::BlockConfig::kColumnBlock).value_or(movingTile);
  rowStripGiven = opts.blocks.has(ir::BlockConfig::kRowStrip);
  kernel->blockParams.set(ir::BlockConfig::kRowStrip, std::min(wantedStripRows, roundToTile(strip->type.rows)));
  kernel->blockParams.set(ir::BlockConfig::kColumnBlock, std::min(wantedBlockCols, movingTile));

  // 3. Statements in order; the return writes the output argument.
  if (!lowerStatements(out))
    return nullptr;
  // The kernel's `m` is the smallest row strip of its matmul nests; a nest
  // with a larger one (its strip fit where another's was halved) says so.
  int64_t m = kernel->blockParams.lookup(ir::BlockConfig::kRowStrip);
  for (ForOp *loop : rowStripLoops)
    if (loop->step != m)
      loop->block.set(ir::BlockConfig::kRowStrip, loop->step);
  return std::move(kernel);
}

/// Lowers the statements in order: a run of statements with heads once per
/// head of the kernel, moving each head's accesses onto its rows
/// (frontend/Heads.h); a statement without heads once.
bool TileGen::lowerStatements(Value *out) {
  const ast::Expr &root = *ast.returnStmt().value;
  int64_t heads = kernelHeads();
  if (heads > frontend::kMaxLoweredHeads) {
    diags.error(ast.returnStmt().loc,
                llvm::formatv("kernel '{0}' {1} {2} heads; each head is lowered to its own nests "
                              "(frontend/Heads.h), and at most {3} heads are",
                              ast.name, root.type.heads > 0 ? "returns" : "computes", heads,
                              frontend::kMaxLoweredHeads));
    return false;
  }
  outTensor = out;
  cur = &kernel->body;
  auto hasHeads = [&](size_t i) { return ast.body[i].value->type.heads > 0; };
  for (size_t i = 0; i < ast.body.size() && !failed;) {
    if (!hasHeads(i)) {
      lowerStatement(ast.body[i++]);
      continue;
    }
    size_t last = i;
    while (last < ast.body.size() && hasHeads(last))
      ++last;
    lowerHeadRun(i, last);
    i = last;
  }
  if (failed)
    return false;
  if (heads == 0)
    return true;
  if (root.type.heads > 0)
    frontend::widenToHeads(*out, root.type.heads);
  for (size_t i = 0; i < ast.params.size(); ++i)
    if (int64_t g = ast.params[i].type.heads)
      frontend::widenToHeads(*kernel->args[i], g);
  for (auto &[key, view] : views)
    if (int64_t g = paramHeads(key.first))
      frontend::widenToHeads(*view, g);
  return true;
}

void TileGen::lowerStatement(const ast::Stmt &s) {
  if (s.isReturn())
    lower(*s.value, outTensor, "out");
  else if (isAlias(s))
    tensors[s.name] = tensors.at(s.value->name); // its uses take their own views
  else
    tensors[s.name] = lower(*s.value, nullptr, s.name);
}

void TileGen::lowerHeadRun(size_t first, size_t last) {
  const int64_t H = kernelHeads();
  for (int64_t h = 0; h < H && !failed; ++h) {
    selectHead(h);
    size_t opsBefore = kernel->body.ops.size(), viewsBefore = views.size();
    for (size_t i = first; i < last && !failed; ++i) {
      const ast::Stmt &s = ast.body[i];
      lowerStatement(s);
      if (!s.isReturn()) {
        std::vector<Value *> &perHead = headTensors[s.name];
        perHead.resize(size_t(H));
        perHead[size_t(h)] = tensors[s.name];
      }
    }
    // Views open the body; this head's nests are the ops after them.
    size_t added = kernel->body.ops.size() - opsBefore - (views.size() - viewsBefore);
    llvm::MutableArrayRef<std::unique_ptr<Op>> nests(kernel->body.ops);
    frontend::shiftHeads(nests.take_back(added), headOffsets(h, H));
  }
}

int64_t TileGen::kernelHeads() const {
  int64_t heads = ast.returnStmt().value->type.heads;
  if (heads > 0)
    return heads;
  for (const ast::Param &p : ast.params)
    heads = std::max(heads, p.type.heads);
  for (const ast::Stmt &s : ast.body)
    heads = std::max(heads, s.value->type.heads);
  return heads;
}

void TileGen::selectHead(int64_t h) {
  for (const auto &[name, perHead] : headTensors)
    tensors[name] = perHead[size_t(h)];
}

std::map<const Value *, frontend::HeadOffset> TileGen::headOffsets(int64_t h, int64_t H) const {
  std::map<const Value *, frontend::HeadOffset> offsets;
  const ast::Expr &root = *ast.returnStmt().value;
  if (root.type.heads > 0)
    offsets[outTensor].rows = h * root.type.rows;
  for (size_t i = 0; i < ast.params.size(); ++i) {
    const ast::TensorType &t = ast.params[i].type;
    if (t.heads > 0)
      offsets[kernel->args[i]].rows = h / (H / t.heads) * t.rows;
  }
  for (const auto &[key, view] : views) {
    auto it = offsets.find(key.first);
    if (it != offsets.end())
      offsets[view] = it->second;
  }
  return offsets;
}

int64_t TileGen::paramHeads(const Value *arg) const {
  for (size_t i = 0; i < ast.params.size(); ++i)
    if (kernel->args[i] == arg)
      return ast.params[i].type.heads;
  return 0;
}

} // namespace

std::unique_ptr<ir::Kernel> generateTileIR(const ast::Kernel &kernel, const TileGenOptions &options,
                                           DiagnosticEngine &diags,
                                           std::map<std::string, int64_t> *projectionColumns) {
  return TileGen(kernel, options, diags, projectionColumns).run();
}

} // namespace tessel
