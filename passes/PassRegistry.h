//===- passes/PassRegistry.h - Pass names to factories ----------*- C++ -*-===//
//
// Built from passes/PassRegistry.def: look a pass up by name, list every
// pass (--list-passes), and parse a --passes=a,b,c list (an unknown name is an
// error that lists the known ones and suggests the closest).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_PASSREGISTRY_H
#define TESSEL_PASSES_PASSREGISTRY_H

#include "passes/Pass.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel::passes {

struct PassInfo {
  llvm::StringRef name;
  std::unique_ptr<Pass> (*create)();
};

/// Every registered pass, in registry (alphabetical) order.
llvm::ArrayRef<PassInfo> registeredPasses();

/// The pass called `name`, or null.
const PassInfo *lookupPass(llvm::StringRef name);

/// "unknown pass 'alocate' (did you mean 'allocate'?); known passes: a, b".
std::string unknownPassMessage(llvm::StringRef name);

/// Splits "a,b,c" (spaces around names allowed, empty = no passes) and checks
/// every name against the registry.
llvm::Expected<std::vector<std::string>> parsePassList(llvm::StringRef text);

/// Joins names with commas: the inverse of parsePassList.
std::string joinPassList(llvm::ArrayRef<std::string> names);

/// One line per pass: name, padded, and its description (--list-passes).
void printPassList(llvm::raw_ostream &os);

} // namespace tessel::passes

#endif
