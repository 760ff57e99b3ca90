//===- passes/PassRegistry.cpp - The registry, from PassRegistry.def ------===//
#include "passes/PassRegistry.h"

#include "passes/Passes.h"
#include "support/Suggest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatAdapters.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessel::passes {

llvm::ArrayRef<PassInfo> registeredPasses() {
  static const PassInfo passes[] = {
#define TILE_PASS(NAME, FACTORY) {NAME, FACTORY},
#include "passes/PassRegistry.def"
  };
  return passes;
}

const PassInfo *lookupPass(llvm::StringRef name) {
  for (const PassInfo &p : registeredPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string unknownPassMessage(llvm::StringRef name) {
  std::string msg = ("unknown pass '" + name + "'").str();
  std::vector<llvm::StringRef> names;
  for (const PassInfo &p : registeredPasses())
    names.push_back(p.name);
  std::string best = closestName(name, names);
  if (!best.empty())
    msg += " (did you mean '" + best + "'?)";
  return msg + "; known passes: " + llvm::join(names, ", ");
}

llvm::Expected<std::vector<std::string>> parsePassList(llvm::StringRef text) {
  std::vector<std::string> names;
  if (text.trim().empty())
    return names;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, ',');
  for (llvm::StringRef part : parts) {
    llvm::StringRef name = part.trim();
    if (name.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "empty pass name in pass list '%s'", text.str().c_str());
    if (!lookupPass(name))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), unknownPassMessage(name));
    names.push_back(name.str());
  }
  return names;
}

std::string joinPassList(llvm::ArrayRef<std::string> names) { return llvm::join(names, ","); }

void printPassList(llvm::raw_ostream &os) {
  size_t width = 0;
  for (const PassInfo &p : registeredPasses())
    width = std::max(width, p.name.size());
  os << "Tile IR passes (use with --passes=a,b,c):\n";
  for (const PassInfo &p : registeredPasses())
    os << llvm::formatv("  {0}  {1}\n", llvm::fmt_align(p.name, llvm::AlignStyle::Left, width),
                        p.create()->description());
}

} // namespace tessel::passes
