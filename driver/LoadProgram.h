//===- driver/LoadProgram.h - The input of every command ---------*- C++ -*-===//
//
// Every command that reads a program reads it here and learns its kind: a
// .tsl kernel source, .tir tile IR, a .tasm simulator program or an NKI
// kernel (.py), from a file or stdin ('-'). A command then takes the kinds
// it can use and refuses the others with one message per kind (as MLIR's
// Toy tutorial reads every input through loadMLIR).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_LOADPROGRAM_H
#define TESSEL_DRIVER_LOADPROGRAM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace tessel::driver {

enum class ProgramKind { Tsl, Tir, Tasm, Nki };

/// ".tsl", ".tir", ".tasm", ".py".
llvm::StringRef kindExtension(ProgramKind kind);
/// "a .tsl kernel source", ".tir tile IR", "a .tasm program", "an NKI kernel (Python)".
llvm::StringRef kindName(ProgramKind kind);

/// A command's input and its kind.
struct LoadedProgram {
  ProgramKind kind;
  std::string path;
  /// The text, named after the path ("<stdin>" for '-'); null for an NKI
  /// kernel, which python reads (docs/nki.md).
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  /// An NKI kernel read from stdin is held in a temporary .py (`path`),
  /// removed with this.
  std::unique_ptr<llvm::FileRemover> removeAtEnd = nullptr;
};

/// Reads `path` ('-' for stdin): a .py file is an NKI kernel; .tsl, .tir and
/// .tasm are told by extension, anything else by its first significant line
/// (Python there is an NKI kernel: from stdin it is held in a temporary
/// .py, `path` then). A file whose extension names one kind and whose first
/// line is another's is an error saying which kind it looks like.
/// An input of no known kind is an error naming the kinds accepted, unless
/// `unknownAs` gives one (tessel opt parses any text as tile IR, so that the
/// parser locates what is wrong).
llvm::Expected<LoadedProgram> loadProgram(llvm::StringRef path,
                                          std::optional<ProgramKind> unknownAs = std::nullopt);

} // namespace tessel::driver

#endif
