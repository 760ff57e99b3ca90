//===- driver/LoadProgram.cpp - The input of every command ----------------===//
#include "driver/LoadProgram.h"

#include "compiler/InputFormat.h"
#include "compiler/NkiInput.h"

namespace tessel::driver {

llvm::StringRef kindExtension(ProgramKind kind) {
  switch (kind) {
  case ProgramKind::Tsl: return ".tsl";
  case ProgramKind::Tir: return ".tir";
  case ProgramKind::Tasm: return ".tasm";
  case ProgramKind::Nki: return ".py";
  }
  return "";
}

static ProgramKind kindOf(compiler::InputFormat format) {
  switch (format) {
  case compiler::InputFormat::Tsl: return ProgramKind::Tsl;
  case compiler::InputFormat::Tir: return ProgramKind::Tir;
  case compiler::InputFormat::Tasm: return ProgramKind::Tasm;
  }
  return ProgramKind::Tsl;
}

llvm::Expected<LoadedProgram> loadProgram(llvm::StringRef path, std::optional<ProgramKind> unknownAs) {
  using compiler::InputFormat;
  if (compiler::isNkiSource(path))
    return LoadedProgram{ProgramKind::Nki, path.str(), nullptr};
  if (!unknownAs) {
    llvm::Expected<compiler::ProgramInput> input = compiler::readProgramInput(path);
    if (!input)
      return input.takeError();
    return LoadedProgram{kindOf(input->format), path.str(), std::move(input->buffer)};
  }
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  llvm::Optional<InputFormat> format;
  for (InputFormat f : {InputFormat::Tsl, InputFormat::Tir, InputFormat::Tasm})
    if (path.endswith(compiler::formatExtension(f)))
      format = f;
  if (!format)
    format = compiler::sniffFormat((*buffer)->getBuffer());
  return LoadedProgram{format ? kindOf(*format) : *unknownAs, path.str(), std::move(*buffer)};
}

} // namespace tessel::driver
