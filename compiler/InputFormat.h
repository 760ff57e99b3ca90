//===- compiler/InputFormat.h - Which kind of program a file holds -*- C++ -*-===//
//
// `run` and `compile` take a program in any of its forms: a .tsl kernel
// source, tile IR (.tir) or a simulator program (.tasm). The extension
// decides; stdin ('-') and other extensions are recognised by their first
// significant line. An input that is none of them is an error naming the
// accepted formats.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_INPUTFORMAT_H
#define TESSEL_COMPILER_INPUTFORMAT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace tessel::compiler {

enum class InputFormat { Tsl, Tir, Tasm };

/// ".tsl", ".tir", ".tasm".
llvm::StringRef formatExtension(InputFormat format);

/// "a .tsl kernel source, .tir tile IR or a .tasm program": for errors.
llvm::StringRef acceptedFormats();

/// The format of `text` from its first line that is not blank or a comment
/// (`kernel @name(` is tile IR, `kernel name(` and `const` a source,
/// `kernel name`/`target`/`tensor`/`buffer` a program); None when unclear.
llvm::Optional<InputFormat> sniffFormat(llvm::StringRef text);

/// A program input read into memory, with its format.
struct ProgramInput {
  InputFormat format;
  std::unique_ptr<llvm::MemoryBuffer> buffer; ///< named after the path ("<stdin>" for '-')
};

/// Reads `path` ('-' for stdin) and decides its format: by extension, else by
/// its content. Errors name the file and the accepted formats.
llvm::Expected<ProgramInput> readProgramInput(llvm::StringRef path);

} // namespace tessel::compiler

#endif
