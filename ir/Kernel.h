//===- ir/Kernel.h - The tile IR: values, ops, kernels ----------*- C++ -*-===//
//
// A structured, buffer-based loop-nest IR modelled on NKI:
//  - a Kernel's arguments are HBM tensors (inputs, then outputs);
//  - `alloc` declares a buffer in hbm (scratch/spill), sbuf or psum; inside a
//    loop every execution of the alloc yields a fresh tile, and `bufs` says how
//    many physical copies rotate (2 = double buffering);
//  - `view` reads an input argument under other dimension labels;
//  - `for` loops over element offsets with index-expression bounds;
//  - instructions (dma, matmul, transpose, activation, tensor_tensor,
//    tensor_scalar, copy, memset, tensor_reduce, iota, affine_select,
//    tensor_tensor_scan, bn_stats, bn_aggr, tensor_partition_reduce) each
//    read and write Accesses: a tensor or
//    buffer sliced by one `start +: extent` range (or a point) per dimension.
// Instruction semantics and the rules the verifier enforces are in
// docs/tile-ir.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_KERNEL_H
#define TESSEL_IR_KERNEL_H

#include "ir/BlockConfig.h"
#include "ir/IndexExpr.h"
#include "ir/TileGeometry.h"
#include "ir/Types.h"
#include "support/Activation.h"
#include "support/Ops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::ir {

struct Op;

enum class ValueKind { Argument, Buffer, LoopVar };
enum class TensorRole { Input, Output, Scratch, Spill };
llvm::StringRef roleName(TensorRole r);

/// A named value: a kernel argument, an allocated buffer or a loop variable.
/// `id` indexes evaluation environments (IndexExpr::eval).
struct Value {
  ValueKind kind;
  std::string name; // fixed at creation: Kernel::uniqueName indexes it
  unsigned id = 0;
  TensorType type;     // arguments and buffers
  TensorRole role = TensorRole::Input;
  Op *def = nullptr;   // the alloc or for that defines it (null for arguments)
  llvm::SMLoc loc;
};

/// A further range of a dimension of an access pattern: `+: extent step s`.
struct SubRange {
  int64_t extent = 1;
  int64_t step = 1;
};

/// One dimension of an access: `start +: extent`, or a point `start`. An
/// access pattern may stride a range (`start +: extent step s`) or split a
/// dimension into several ranges (`start +: 3 step 2 +: 2`: the index is
/// start + 2 i + j), each a dimension of the tile (docs/tile-ir.md, "Access
/// patterns").
struct Index {
  Index() = default;
  Index(IndexExpr start, std::optional<IndexExpr> extent = std::nullopt)
      : start(std::move(start)), extent(std::move(extent)) {}

  IndexExpr start;
  std::optional<IndexExpr> extent;
  int64_t step = 1;                   ///< of the first range
  llvm::SmallVector<SubRange, 0> more; ///< the dimension's further ranges
  bool isRange() const { return extent.has_value(); }
  /// A range of the constant extent `n`.
  bool hasExtent(int64_t n) const { return extent && extent->isConst() && extent->constValue() == n; }
  /// A strided range or several ranges.
  bool isPatterned() const { return step != 1 || !more.empty(); }
  unsigned numRanges() const { return extent ? 1 + unsigned(more.size()) : 0; }
  /// The extent of the elements the ranges cover, first to last (constant
  /// extents when patterned).
  IndexExpr span() const;
};

/// One dimension of the tile an access selects: a range of tensor dimension
/// `dim` (of `extent` elements `step` apart).
struct TileDim {
  unsigned dim;
  IndexExpr extent;
  int64_t step;
};

struct Access {
  Value *base = nullptr;
  llvm::SmallVector<Index, 3> indices;
  /// The tile's dimensions as a permutation of the ranges in the order they
  /// are written (`order (0, 2, 1)`); empty: as written.
  llvm::SmallVector<unsigned, 0> order;
  llvm::SMLoc loc;

  /// The dimensions that have ranges, in order.
  llvm::SmallVector<unsigned, 3> rangeDims() const;
  /// The tile's dimensions, in the tile's order.
  llvm::SmallVector<TileDim, 4> tileDims() const;
  /// Strided or split ranges, or an order: the runtime needs the pattern.
  bool isPattern() const;
  void print(llvm::raw_ostream &os) const;
};

/// The structural ops, then one kind per instruction of support/Ops.def.
enum class OpKind {
  Alloc,
  View,
  For,
#define TESSEL_OP(ENUM, MNEMONIC, ENGINE, OTHER_ENGINES, SRC_ROLES, FUNC) ENUM,
#include "support/Ops.def"
};
/// The instruction an op kind is, or none for alloc and for.
std::optional<Opcode> opcodeOf(OpKind kind);

struct Op {
  OpKind kind;
  llvm::SMLoc loc;
  explicit Op(OpKind k) : kind(k) {}
  virtual ~Op() = default;

  /// The accesses this op reads and writes (instructions only).
  virtual llvm::SmallVector<Access *, 3> reads() { return {}; }
  virtual Access *write() { return nullptr; }
  /// What each of reads() is, in order, for messages: the roles of
  /// support/Ops.def, then the optional per-partition tiles an op has.
  virtual llvm::SmallVector<llvm::StringRef, 3> readRoles() const;
  /// Every access the op writes: write(), then an activation's accumulator.
  virtual llvm::SmallVector<Access *, 2> writes() {
    if (Access *w = write())
      return {w};
    return {};
  }
  llvm::StringRef mnemonic() const;
};

struct Block {
  std::vector<std::unique_ptr<Op>> ops;
};

struct AllocOp : Op {
  Value *result = nullptr;
  int64_t bufs = 1;
  std::optional<int64_t> address; // byte offset per partition, set by allocation
  AllocOp() : Op(OpKind::Alloc) {}
  static bool classof(const Op *op) { return op->kind == OpKind::Alloc; }
};

/// `%X_KN = view %X as [K, N]`: the input argument %X read under other
/// dimension labels (same dtype and sizes, row-major); no data moves. A
/// tensor used in two roles (`X @ X`, `X.T @ X`) plays two logical
/// dimensions with one physical one, and each role needs its own label.
/// Views are read only.
struct ViewOp : Op {
  Value *result = nullptr;
  Value *source = nullptr;
  ViewOp() : Op(OpKind::View) {}
  static bool classof(const Op *op) { return op->kind == OpKind::View; }
};

struct ForOp : Op {
  Value *iv = nullptr;
  IndexExpr lo, hi;
  int64_t step = 1;
  bool parallel = false; // NKI affine_range (iterations independent) vs sequential_range
  /// The pass that created this loop (passes::PassManager records it; empty
  /// for loops TileGen or the IR text made): the emitted NKI names it.
  std::string madeBy;
  /// Creation order, unique per process: a loop made after serial S was
  /// taken is newer than everything before it (how the PassManager tells
  /// the loops a pass made).
  const uint64_t serial = nextSerial();
  /// A matmul nest's row-strip loop whose row strip is not the kernel's `m`
  /// (TileGen's strip budget halved another nest's) says so: `m` = its step.
  BlockConfig block;
  Block body;
  ForOp() : Op(OpKind::For) {}
  static bool classof(const Op *op) { return op->kind == OpKind::For; }
  /// The serial the next loop created gets.
  static uint64_t nextSerial(bool peek = false);

  /// Iterations of a loop from `lo` to `hi` by `step` (0 when empty).
  static int64_t tripCount(int64_t lo, int64_t hi, int64_t step) {
    return hi > lo ? int64_t(llvm::divideCeil(hi - lo, step)) : 0;
  }
  /// Iterations of this loop; 0 when its bounds are not constant.
  int64_t constTripCount() const {
    return lo.isConst() && hi.isConst() ? tripCount(lo.constValue(), hi.constValue(), step) : 0;
  }
};

enum class DmaTag { None, SpillSave, SpillReload };

/// The backend gives each DMA statement its own group of this many queues
/// and rotates its transfers over them (docs/tasm.md); the cost model's DMA
/// bound assumes the same.
constexpr int64_t kDmaQueuesPerStatement = 4;

struct DmaOp : Op {
  Access dst, src;
  bool transpose = false; // 2-D transpose in transit (nl.load_transpose2d)
  DmaTag tag = DmaTag::None;
  DmaOp() : Op(OpKind::Dma) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Dma; }
};

/// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]; K on partitions of both.
/// The accumulator is reset (overwritten) when every loop var in `resetOn`
/// is at its first iteration; otherwise the product accumulates. With
/// `accumulate` (and no resetOn) it always accumulates (NKI accumulate=True).
struct MatmulOp : Op {
  Access dst, stationary, moving;
  llvm::SmallVector<Value *, 2> resetOn;
  bool accumulate = false;
  MatmulOp() : Op(OpKind::Matmul) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&stationary, &moving}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Matmul; }
};

/// Tensor-engine transpose (matmul against identity): dst[F, P] = src[P, F]^T.
struct TransposeOp : Op {
  Access dst, src;
  TransposeOp() : Op(OpKind::Transpose) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Transpose; }
};

// Activation functions are registered in support/Activations.def.
using tessel::ActFn;
using tessel::actFnName;
using tessel::parseActFn;

/// Scalar engine (nisa.activation): dst = fn(src * scale + bias), where
/// scale and bias are numbers or [P, 1] tiles (one value per partition,
/// broadcast along the free dimension). With an accumulator, the sums of
/// each partition's results along the free dimension are also written to
/// it, a [P, 1] tile (NKI's reduce_res with reduce_op add).
struct ActivationOp : Op {
  ActFn fn = ActFn::Copy;
  Access dst, src;
  double scale = 1.0, bias = 0.0;
  std::optional<Access> scaleTile, biasTile, accumulator;
  ActivationOp() : Op(OpKind::Activation) {}
  llvm::SmallVector<Access *, 3> reads() override {
    llvm::SmallVector<Access *, 3> r{&src};
    if (biasTile)
      r.push_back(&*biasTile);
    if (scaleTile)
      r.push_back(&*scaleTile);
    return r;
  }
  llvm::SmallVector<llvm::StringRef, 3> readRoles() const override {
    llvm::SmallVector<llvm::StringRef, 3> r{"source"};
    if (biasTile)
      r.push_back("bias");
    if (scaleTile)
      r.push_back("scale");
    return r;
  }
  Access *write() override { return &dst; }
  llvm::SmallVector<Access *, 2> writes() override {
    if (accumulator)
      return {&dst, &*accumulator};
    return {&dst};
  }
  static bool classof(const Op *op) { return op->kind == OpKind::Activation; }
};

// ALU operations are registered in support/AluOps.def.
using tessel::AluOp;
using tessel::aluOpName;
using tessel::parseAluOp;

/// Vector engine: dst = lhs op rhs, elementwise.
struct TensorTensorOp : Op {
  AluOp alu = AluOp::Mul;
  Access dst, lhs, rhs;
  TensorTensorOp() : Op(OpKind::TensorTensor) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&lhs, &rhs}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::TensorTensor; }
};

/// Vector engine (nisa.tensor_scalar): dst = src op scalar, where the
/// scalar is a number or a [P, 1] tile (one value per partition, broadcast
/// along the free dimension); `reverse`: dst = scalar op src.
struct TensorScalarOp : Op {
  AluOp alu = AluOp::Mul;
  Access dst, src;
  double scalar = 0.0;
  std::optional<Access> scalarTile;
  bool reverse = false;
  TensorScalarOp() : Op(OpKind::TensorScalar) {}
  llvm::SmallVector<Access *, 3> reads() override {
    if (scalarTile)
      return {&src, &*scalarTile};
    return {&src};
  }
  llvm::SmallVector<llvm::StringRef, 3> readRoles() const override {
    if (scalarTile)
      return {"source", "scalar"};
    return {"source"};
  }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::TensorScalar; }
};

/// Vector engine (nisa.tensor_reduce along the free axis): dst[P, 1] = the
/// elements of each partition of src[P, F] folded by `alu` (add, max or
/// min), in fp32.
struct TensorReduceOp : Op {
  AluOp alu = AluOp::Add;
  Access dst, src;
  TensorReduceOp() : Op(OpKind::TensorReduce) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::TensorReduce; }
};

/// Vector engine (nisa.tensor_tensor_scan): along the free dimension,
/// dst[p, f] = op1(op0(first[p, f], dst[p, f - 1]), second[p, f]), where
/// dst[p, -1] is the initial value, a number or a [P, 1] tile; in fp32.
struct TensorTensorScanOp : Op {
  AluOp op0 = AluOp::Mul, op1 = AluOp::Add;
  Access dst, first, second;
  double initial = 0.0;
  std::optional<Access> initialTile;
  TensorTensorScanOp() : Op(OpKind::TensorTensorScan) {}
  llvm::SmallVector<Access *, 3> reads() override {
    if (initialTile)
      return {&first, &second, &*initialTile};
    return {&first, &second};
  }
  llvm::SmallVector<llvm::StringRef, 3> readRoles() const override {
    if (initialTile)
      return {"first operand", "second operand", "initial"};
    return {"first operand", "second operand"};
  }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::TensorTensorScan; }
};

/// Vector engine batch-norm statistics, in fp32 (docs/ops.md): `bn_stats`
/// writes dst[P, 6] = (count, mean, variance * count) of the even, then the
/// odd elements of each partition of src[P, F]; `bn_aggr` folds the
/// (count, mean, variance * count) triples of src[P, 3k] into dst[P, 2] =
/// (mean, variance).
struct BnOp : Op {
  Access dst, src;
  explicit BnOp(OpKind k) : Op(k) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::BnStats || op->kind == OpKind::BnAggr; }
};
struct BnStatsOp : BnOp {
  BnStatsOp() : BnOp(OpKind::BnStats) {}
  static bool classof(const Op *op) { return op->kind == OpKind::BnStats; }
};
struct BnAggrOp : BnOp {
  BnAggrOp() : BnOp(OpKind::BnAggr) {}
  static bool classof(const Op *op) { return op->kind == OpKind::BnAggr; }
};

/// GpSimd (nisa.tensor_partition_reduce): dst[1, F] = the partitions of
/// src[P, F] folded by `alu` (add or max), column by column, in fp32.
struct TensorPartitionReduceOp : Op {
  AluOp alu = AluOp::Add;
  Access dst, src;
  TensorPartitionReduceOp() : Op(OpKind::TensorPartitionReduce) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::TensorPartitionReduce; }
};

/// The affine form iota and affine_select evaluate at tile element [p, f]
/// (p: partition, f: free index within the tile): offset + partition * p +
/// free * f. The offset may use loop variables (a mask that moves with the
/// tile); the steps are constants (NKI's channel_multiplier and pattern).
struct AffineIndex {
  IndexExpr offset;
  int64_t partition = 0, free = 0;
};

/// GpSimd (nisa.iota): dst[p, f] = the affine index at [p, f].
struct IotaOp : Op {
  Access dst;
  AffineIndex index;
  IotaOp() : Op(OpKind::Iota) {}
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Iota; }
};

/// GpSimd (nisa.affine_select): dst = (index cmp 0) ? src : fill, with `cmp`
/// a comparison ALU op (is_ge, is_gt, ...). A causal mask is
/// `is_ge` of row - column: no S x S mask tensor.
struct AffineSelectOp : Op {
  AluOp cmp = AluOp::IsGe;
  Access dst, src;
  AffineIndex index;
  double fill = 0.0;
  AffineSelectOp() : Op(OpKind::AffineSelect) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::AffineSelect; }
};

/// Vector engine copy with dtype cast (PSUM -> SBUF, SBUF -> SBUF).
struct CopyOp : Op {
  Access dst, src;
  CopyOp() : Op(OpKind::Copy) {}
  llvm::SmallVector<Access *, 3> reads() override { return {&src}; }
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Copy; }
};

struct MemsetOp : Op {
  Access dst;
  double value = 0.0;
  MemsetOp() : Op(OpKind::Memset) {}
  Access *write() override { return &dst; }
  static bool classof(const Op *op) { return op->kind == OpKind::Memset; }
};

/// The affine index of an iota or affine_select (its offset names loop
/// variables, as accesses do), else null.
AffineIndex *affineIndexOf(Op &op);

/// The op at position `i` of `b` when it is a T (a pattern matcher's step),
/// else null.
template <typename T> T *opAt(Block &b, size_t i) {
  return i < b.ops.size() ? llvm::dyn_cast<T>(b.ops[i].get()) : nullptr;
}

class Kernel {
public:
  std::string name;
  llvm::SMLoc loc;
  std::vector<Value *> args; // inputs then outputs (role says which)
  /// Tiling parameters (`block = {m = 512, n = 512}`): those TileGen built
  /// the kernel with, plus any a pass adds.
  BlockConfig blockParams;
  /// What passes recorded for the reader ("[select-blocks] m = 1024: ..."):
  /// printed as `// [pass] text` lines above the kernel, kept by the parser.
  std::vector<std::string> notes;
  /// The target's tile geometry the verifier checks against and the passes
  /// tile with; not printed (TileGen and the IR parser set it).
  TileGeometry geometry;
  Block body;

  Value *newValue(ValueKind kind, std::string name);
  /// All values ever created, indexed by Value::id.
  unsigned numValues() const { return values.size(); }
  Value *valueById(unsigned id) const { return values[id].get(); }
  /// A name not used by any value yet: `hint`, else the first free of
  /// `hint1`, `hint2`, ... Amortised O(1) per call.
  std::string uniqueName(llvm::StringRef hint) const;

private:
  std::vector<std::unique_ptr<Value>> values;
  llvm::StringSet<> usedNames;
  /// Per hint, a suffix below which every `hint<i>` is known to be taken
  /// (valid because names are only ever added).
  mutable llvm::StringMap<unsigned> firstFreeSuffix;
};

struct Module {
  std::vector<std::unique_ptr<Kernel>> kernels;
};

/// The advice for a kernel whose buffers do not fit: the row strip `m` it was
/// built with, halved and rounded down to whole partition tiles (the values
/// `--block m=` accepts), as "use a shorter row strip, e.g. --block m=N"; or
/// `otherwise` when the strip is one tile already or the kernel has none (an
/// NKI kernel's buffers are its own).
std::string shorterRowStripAdvice(const Kernel &kernel, llvm::StringRef otherwise);

/// Calls `fn` on `op` and every op nested in it, in pre-order.
void walkOp(Op &op, const std::function<void(Op &)> &fn);

/// Calls `fn(op, enclosingLoops)` for every op in pre-order.
void walk(Block &block, const std::function<void(Op &, llvm::ArrayRef<ForOp *>)> &fn);

} // namespace tessel::ir

#endif
