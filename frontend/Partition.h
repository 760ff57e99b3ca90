//===- frontend/Partition.h - Tensor-parallel sharding of a kernel -*- C++ -*-===//
//
// How a kernel splits over N NeuronCores (paper §4.2.2, Megatron-style), read
// off its AST after Sema:
//  * a chain X @ W1 @ W2 @ ...: the dimension between W1 and W2 (the rank of
//    a factorised weight: W1 column-wise, W2 row-wise, as the paper does);
//    a single product X @ W: its contraction (X column-wise, W row-wise);
//  * an MLP block E @ D1 @ ... where E is elementwise over products (SwiGLU
//    silu(X @ Wg) * (X @ Wu), GELU, ...): E's columns -- the last factor of
//    every product inside E column-wise (gate/up column-parallel), D1
//    row-wise (down row-parallel).
// Every other operand is replicated. In each form a core computes a partial
// sum of the whole result, so the cores' results are combined by one
// AllReduce. `shardKernel` rewrites the AST's types to one core's shard, so
// the normal compile path builds each core's kernel (the fused kernel on its
// shard); all cores run the same kernel on different slices.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_PARTITION_H
#define TESSEL_FRONTEND_PARTITION_H

#include "frontend/AST.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::frontend {

/// Which axis of a parameter the cores split; None = every core reads all of it.
enum class ShardAxis { None, Rows, Cols };

struct TensorParallelPlan {
  int cores = 1;
  std::vector<ShardAxis> params; ///< one per kernel parameter, in order
  std::string form;              ///< "chain", "matmul" or "mlp"
  std::string dimension;         ///< what is split, e.g. "the columns of U = the rows of V"
  int64_t dimSize = 0;           ///< its size before splitting

  /// "U column-wise, V row-wise (4096 = 2 x 2048); X replicated; AllReduce of [M, 18432]".
  std::string describe(const ast::Kernel &kernel) const;
};

/// A kernel that does not split, at the expression that stops it.
class TensorParallelError : public llvm::ErrorInfo<TensorParallelError> {
public:
  static char ID;
  TensorParallelError(llvm::SMLoc loc, std::string message) : loc(loc), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  llvm::SMLoc loc;
  std::string message;
};

/// The plan for `kernel` over `cores` cores. Errors (TensorParallelError):
/// a kernel of no supported form, a transposed operand on a split path, a
/// parameter split two ways, a dimension that does not divide by `cores`.
llvm::Expected<TensorParallelPlan> planTensorParallel(const ast::Kernel &kernel, int cores);

/// Rewrites `kernel`'s parameter and expression types to one core's shard
/// (the result type is unchanged: each core computes a partial sum of it).
void shardKernel(ast::Kernel &kernel, const TensorParallelPlan &plan);

} // namespace tessel::frontend

#endif
