//===- driver/LoadProgram.cpp - The input of every command ----------------===//
#include "driver/LoadProgram.h"

#include "compiler/InputFormat.h"
#include "compiler/NkiInput.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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

llvm::StringRef kindName(ProgramKind kind) {
  switch (kind) {
  case ProgramKind::Tsl: return "a .tsl kernel source";
  case ProgramKind::Tir: return ".tir tile IR";
  case ProgramKind::Tasm: return "a .tasm program";
  case ProgramKind::Nki: return "an NKI kernel (Python)";
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

/// The first line that is neither blank nor a comment ('#', '//'), trimmed.
static llvm::StringRef firstLine(llvm::StringRef text) {
  text.consume_front("\xEF\xBB\xBF");
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    line = line.trim();
    text = rest;
    if (!line.empty() && !line.startswith("#") && !line.startswith("//"))
      return line;
  }
  return "";
}

/// Python, as an NKI kernel starts: imports, a docstring, a decorator or a def.
static bool looksLikePython(llvm::StringRef text) {
  llvm::StringRef line = firstLine(text);
  for (llvm::StringRef start : {"import ", "from ", "def ", "@", "\"\"\"", "'''"})
    if (line.startswith(start))
      return true;
  return false;
}

/// The kind `text` looks like, when its first line says so.
static std::optional<ProgramKind> lookedUpKind(llvm::StringRef text) {
  if (looksLikePython(text))
    return ProgramKind::Nki;
  if (llvm::Optional<compiler::InputFormat> f = compiler::sniffFormat(text))
    return kindOf(*f);
  return std::nullopt;
}

/// An error when `path`'s extension names one kind and its text looks like
/// another: parsed as the wrong kind, it would fail far from the cause.
static llvm::Error checkContentMatches(llvm::StringRef path, ProgramKind named, llvm::StringRef text) {
  std::optional<ProgramKind> looks = lookedUpKind(text);
  if (!looks || *looks == named)
    return llvm::Error::success();
  llvm::SmallString<128> renamed(path);
  llvm::sys::path::replace_extension(renamed, kindExtension(*looks));
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument),
      llvm::formatv("'{0}' is named as {1} ({2}) but its content looks like {3} (its first line: '{4}'); "
                    "rename it to '{5}'",
                    path, kindName(named), kindExtension(named), kindName(*looks), firstLine(text).take_front(60),
                    renamed)
          .str());
}

/// NKI from stdin: python reads a file, so the text goes to a temporary .py.
static llvm::Expected<LoadedProgram> stdinAsNki(std::unique_ptr<llvm::MemoryBuffer> text) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tessel-stdin", "py", fd, path))
    return llvm::createStringError(ec, "cannot hold the NKI kernel read from stdin: %s", ec.message().c_str());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text->getBuffer();
  }
  LoadedProgram out{ProgramKind::Nki, std::string(path), nullptr};
  out.removeAtEnd = std::make_unique<llvm::FileRemover>(path);
  return out;
}

llvm::Expected<LoadedProgram> loadProgram(llvm::StringRef path, std::optional<ProgramKind> unknownAs) {
  using compiler::InputFormat;
  if (compiler::isNkiSource(path)) {
    // Read here only to tell a misnamed file; python reads the kernel itself.
    if (auto text = llvm::MemoryBuffer::getFile(path, /*IsText=*/true))
      if (llvm::Error e = checkContentMatches(path, ProgramKind::Nki, (*text)->getBuffer()))
        return e;
    return LoadedProgram{ProgramKind::Nki, path.str(), nullptr};
  }
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  llvm::StringRef text = (*buffer)->getBuffer();
  llvm::Optional<InputFormat> format;
  for (InputFormat f : {InputFormat::Tsl, InputFormat::Tir, InputFormat::Tasm})
    if (llvm::sys::path::extension(path) == compiler::formatExtension(f))
      format = f;
  if (format) {
    if (llvm::Error e = checkContentMatches(path, kindOf(*format), text))
      return e;
    return LoadedProgram{kindOf(*format), path.str(), std::move(*buffer)};
  }
  if (!unknownAs && looksLikePython(text)) {
    if (path == "-")
      return stdinAsNki(std::move(*buffer));
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   "'%s' looks like an NKI kernel (Python); name it .py", path.str().c_str());
  }
  format = compiler::sniffFormat(text);
  if (!format && !unknownAs) {
    if (path != "-") // its error says why (not text, or no first line it knows)
      return compiler::readProgramInput(path).takeError();
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   llvm::formatv("'<stdin>' is not a program tessel reads: expected {0}, or an "
                                                 "NKI kernel (Python) (recognised by its first line)",
                                                 compiler::acceptedFormats())
                                       .str());
  }
  return LoadedProgram{format ? kindOf(*format) : *unknownAs, path.str(), std::move(*buffer)};
}

} // namespace tessel::driver
