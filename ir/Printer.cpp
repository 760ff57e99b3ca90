#include "ir/Printer.h"
#include "support/FloatText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tessel::ir {
namespace {

class Printer {
public:
  explicit Printer(llvm::raw_ostream &os) : os(os) {}

  void printKernel(const Kernel &k) {
    for (const std::string &note : k.notes)
      os << "// " << note << '\n';
    os << "kernel @" << k.name << '(';
    printArgs(k, TensorRole::Input);
    os << ") -> (";
    printArgs(k, TensorRole::Output);
    os << ')';
    printAttributes(k.blockParams);
    os << " {\n";
    printBlock(k.body, 1);
    os << "}\n";
  }

private:
  void printAttributes(const BlockConfig &block) {
    if (!block.empty())
      os << " attributes {block = {" << block.str() << "}}";
  }

  void printArgs(const Kernel &k, TensorRole role) {
    bool first = true;
    for (const Value *v : k.args) {
      if (v->role != role)
        continue;
      os << (first ? "" : ", ") << '%' << v->name << ": ";
      v->type.print(os);
      first = false;
    }
  }

  void printBlock(const Block &block, unsigned depth) {
    for (const auto &op : block.ops)
      printOp(*op, depth);
  }

  /// ` scale 2.0` or ` scale %s[...]`; nothing for the default number.
  void printOperand(llvm::StringRef key, const std::optional<Access> &tile, double value, double dflt) {
    if (tile) {
      os << key;
      tile->print(os);
    } else if (value != dflt || std::signbit(value) != std::signbit(dflt)) {
      os << key << shortestFloatText(value);
    }
  }

  void printAffineIndex(const AffineIndex &index) {
    os << " offset " << index.offset << " partition " << index.partition << " free " << index.free;
  }

  void printOp(const Op &op, unsigned depth) {
    os.indent(2 * depth);
    switch (op.kind) {
    case OpKind::Alloc: {
      const auto &a = llvm::cast<AllocOp>(op);
      os << '%' << a.result->name << " = alloc ";
      a.result->type.print(os);
      if (a.bufs != 1)
        os << " bufs " << a.bufs;
      if (a.address)
        os << " addr " << *a.address;
      if (a.result->role == TensorRole::Spill)
        os << " spill";
      break;
    }
    case OpKind::View: {
      const auto &v = llvm::cast<ViewOp>(op);
      os << '%' << v.result->name << " = view %" << v.source->name << " as ["
         << llvm::join(llvm::map_range(v.result->type.dims, [](const Dim &d) { return d.label; }), ", ")
         << ']';
      break;
    }
    case OpKind::For: {
      const auto &f = llvm::cast<ForOp>(op);
      os << "for %" << f.iv->name << " = " << f.lo << " to " << f.hi << " step " << f.step;
      if (f.parallel)
        os << " parallel";
      printAttributes(f.block);
      os << " {\n";
      printBlock(f.body, depth + 1);
      os.indent(2 * depth) << "}\n";
      return;
    }
    case OpKind::Dma: {
      const auto &d = llvm::cast<DmaOp>(op);
      os << op.mnemonic();
      if (d.transpose)
        os << " transpose";
      if (d.tag == DmaTag::SpillSave)
        os << " spill_save";
      else if (d.tag == DmaTag::SpillReload)
        os << " spill_reload";
      os << ' ';
      d.dst.print(os);
      os << " <- ";
      d.src.print(os);
      break;
    }
    case OpKind::Matmul: {
      const auto &m = llvm::cast<MatmulOp>(op);
      os << op.mnemonic() << ' ';
      m.dst.print(os);
      os << " <- ";
      m.stationary.print(os);
      os << ", ";
      m.moving.print(os);
      if (!m.resetOn.empty()) {
        os << " reset("
           << llvm::join(llvm::map_range(m.resetOn, [](const Value *v) { return "%" + v->name; }), ", ")
           << ')';
      }
      if (m.accumulate)
        os << " accumulate";
      break;
    }
    case OpKind::Transpose: {
      const auto &t = llvm::cast<TransposeOp>(op);
      os << op.mnemonic() << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      break;
    }
    case OpKind::Activation: {
      const auto &a = llvm::cast<ActivationOp>(op);
      os << op.mnemonic() << ' ' << actFnName(a.fn) << ' ';
      a.dst.print(os);
      os << " <- ";
      a.src.print(os);
      printOperand(" scale ", a.scaleTile, a.scale, 1.0);
      printOperand(" bias ", a.biasTile, a.bias, 0.0);
      if (a.accumulator) {
        os << " accumulate ";
        a.accumulator->print(os);
      }
      break;
    }
    case OpKind::TensorTensor: {
      const auto &t = llvm::cast<TensorTensorOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.alu) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.lhs.print(os);
      os << ", ";
      t.rhs.print(os);
      break;
    }
    case OpKind::TensorScalar: {
      const auto &t = llvm::cast<TensorScalarOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.alu) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      os << ", ";
      if (t.scalarTile)
        t.scalarTile->print(os);
      else
        os << shortestFloatText(t.scalar);
      if (t.reverse)
        os << " reverse";
      break;
    }
    case OpKind::TensorPartitionReduce: {
      const auto &t = llvm::cast<TensorPartitionReduceOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.alu) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      break;
    }
    case OpKind::TensorReduce: {
      const auto &t = llvm::cast<TensorReduceOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.alu) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      break;
    }
    case OpKind::TensorTensorScan: {
      const auto &t = llvm::cast<TensorTensorScanOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.op0) << ' ' << aluOpName(t.op1) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.first.print(os);
      os << ", ";
      t.second.print(os);
      os << " initial ";
      if (t.initialTile)
        t.initialTile->print(os);
      else
        os << shortestFloatText(t.initial);
      break;
    }
    case OpKind::BnStats:
    case OpKind::BnAggr: {
      const auto &t = llvm::cast<BnOp>(op);
      os << op.mnemonic() << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      break;
    }
    case OpKind::Iota: {
      const auto &t = llvm::cast<IotaOp>(op);
      os << op.mnemonic() << ' ';
      t.dst.print(os);
      printAffineIndex(t.index);
      break;
    }
    case OpKind::AffineSelect: {
      const auto &t = llvm::cast<AffineSelectOp>(op);
      os << op.mnemonic() << ' ' << aluOpName(t.cmp) << ' ';
      t.dst.print(os);
      os << " <- ";
      t.src.print(os);
      printAffineIndex(t.index);
      os << " fill " << shortestFloatText(t.fill);
      break;
    }
    case OpKind::Copy: {
      const auto &c = llvm::cast<CopyOp>(op);
      os << op.mnemonic() << ' ';
      c.dst.print(os);
      os << " <- ";
      c.src.print(os);
      break;
    }
    case OpKind::Memset: {
      const auto &m = llvm::cast<MemsetOp>(op);
      os << op.mnemonic() << ' ';
      m.dst.print(os);
      os << ", " << shortestFloatText(m.value);
      break;
    }
    }
    os << '\n';
  }

  llvm::raw_ostream &os;
};

} // namespace

void printKernel(const Kernel &kernel, llvm::raw_ostream &os) { Printer(os).printKernel(kernel); }

void printModule(const Module &module, llvm::raw_ostream &os) {
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    if (i)
      os << '\n';
    printKernel(*module.kernels[i], os);
  }
}

std::string toString(const Kernel &kernel) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printKernel(kernel, os);
  return os.str();
}

} // namespace tessel::ir
