//===- ir/Printer.h - Canonical text form of the tile IR --------*- C++ -*-===//
#ifndef TESSEL_IR_PRINTER_H
#define TESSEL_IR_PRINTER_H

#include "ir/Kernel.h"

namespace tessel::ir {

/// Prints the canonical text form; `Parser` reads it back, and
/// print(parse(print(k))) == print(k).
void printKernel(const Kernel &kernel, llvm::raw_ostream &os);
void printModule(const Module &module, llvm::raw_ostream &os);
std::string toString(const Kernel &kernel);

} // namespace tessel::ir

#endif
