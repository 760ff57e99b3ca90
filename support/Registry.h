//===- support/Registry.h - Name lookups over a registry's enum --*- C++ -*-===//
#ifndef TESSEL_SUPPORT_REGISTRY_H
#define TESSEL_SUPPORT_REGISTRY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <vector>

namespace tessel {

/// The enumerator of `all` whose name is `text`: lookupName(allActFns(), actFnName, "gelu").
template <class E, class NameFn>
std::optional<E> lookupName(llvm::ArrayRef<E> all, NameFn name, llvm::StringRef text) {
  for (E e : all)
    if (name(e) == text)
      return e;
  return std::nullopt;
}

/// The names of every enumerator of a registry: namesOf(allActFns(), actFnName).
template <class E, class NameFn>
std::vector<llvm::StringRef> namesOf(llvm::ArrayRef<E> all, NameFn name) {
  std::vector<llvm::StringRef> names;
  for (E e : all)
    names.push_back(name(e));
  return names;
}

} // namespace tessel

#endif
