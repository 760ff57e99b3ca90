//===- tests/unit/ir/CloneTest.cpp - Deep copies with value remapping -----===//
#include "ir/Builder.h"
#include "ir/Clone.h"
#include "ir/Printer.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

using namespace tessel::ir;

namespace {

/// Adds the input argument %X [M:256, K:cols] to `k`.
Value *addInput(Kernel &k, int64_t cols) {
  k.name = "k";
  Value *x = k.newValue(ValueKind::Argument, "X");
  x->type = TensorType{MemSpace::HBM, DType::BF16, {Dim{"M", 256}, Dim{"K", cols}}};
  k.args.push_back(x);
  return x;
}

TEST(Clone, LoopsAndAllocsGetFreshValuesAndUsesFollowTheMap) {
  Kernel k;
  Value *x = addInput(k, 128);
  ForOp &outer = appendLoop(k, k.body, "mb", 0, 256, 128, {});
  ForOp &inner = appendLoop(k, outer.body, "kt", 0, 128, 128, {});
  Value *t = appendAlloc(k, inner.body, "t", MemSpace::SBUF, DType::BF16, {Dim{"M", 128}, Dim{"K", 128}}, 2, {});
  auto dma = std::make_unique<DmaOp>();
  dma->dst = makeAccess(t, {{0, 128}, {0, 128}});
  dma->src = makeAccess(x, {{IndexExpr::var(outer.iv), 128}, {IndexExpr::var(inner.iv), 128}});
  inner.body.ops.push_back(std::move(dma));

  // Clone the inner loop into another row loop: %mb is remapped to %mb2.
  ForOp &other = appendLoop(k, k.body, "mb", 0, 256, 128, {});
  ValueMap map;
  map[outer.iv] = other.iv;
  other.body.ops.push_back(cloneOp(inner, k, map));

  auto &copy = llvm::cast<ForOp>(*other.body.ops.front());
  EXPECT_NE(copy.iv, inner.iv);
  auto &alloc = llvm::cast<AllocOp>(*copy.body.ops[0]);
  EXPECT_NE(alloc.result, t);
  EXPECT_EQ(alloc.bufs, 2);
  auto &load = llvm::cast<DmaOp>(*copy.body.ops[1]);
  EXPECT_EQ(load.dst.base, alloc.result);
  EXPECT_EQ(load.src.base, x);
  EXPECT_TRUE(load.src.indices[0].start.structurallyEqual(IndexExpr::var(other.iv)));
  EXPECT_TRUE(load.src.indices[1].start.structurallyEqual(IndexExpr::var(copy.iv)));
  // Names stay unique, so the kernel still prints and reads back.
  EXPECT_NE(toString(k).find("for %mb1 = 0 to 256 step 128"), std::string::npos);
  EXPECT_NE(toString(k).find("%t1 = alloc sbuf<bf16, [M:128, K:128]> bufs 2"), std::string::npos);
}

TEST(Clone, ViewsAndLoopBlocksAreCopied) {
  Kernel k;
  Value *x = addInput(k, 256);
  ViewOp view;
  view.source = x;
  view.result = k.newValue(ValueKind::Buffer, "X_KN");
  view.result->type = TensorType{MemSpace::HBM, DType::BF16, {Dim{"K", 256}, Dim{"N", 256}}};
  view.result->role = TensorRole::Input;
  view.result->def = &view;
  ForOp &rows = appendLoop(k, k.body, "mb", 0, 256, 256, {});
  rows.block.set(BlockConfig::kRowStrip, 256);

  ValueMap map;
  auto viewCopy = cloneOp(view, k, map);
  auto &v = llvm::cast<ViewOp>(*viewCopy);
  EXPECT_EQ(v.source, x);
  EXPECT_NE(v.result, view.result);
  EXPECT_EQ(v.result->def, &v);
  EXPECT_EQ(v.result->type.dims, view.result->type.dims);
  EXPECT_EQ(v.result->role, TensorRole::Input);
  auto loopCopy = cloneOp(rows, k, map);
  EXPECT_EQ(llvm::cast<ForOp>(*loopCopy).block, rows.block);
}

} // namespace
