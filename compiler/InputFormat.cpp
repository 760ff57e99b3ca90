//===- compiler/InputFormat.cpp - Which kind of program a file holds --------===//
#include "compiler/InputFormat.h"

#include "support/Scan.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

namespace tessel::compiler {

llvm::StringRef formatExtension(InputFormat format) {
  switch (format) {
  case InputFormat::Tsl:
    return ".tsl";
  case InputFormat::Tir:
    return ".tir";
  case InputFormat::Tasm:
    return ".tasm";
  }
  return "";
}

llvm::StringRef acceptedFormats() { return "a .tsl kernel source, .tir tile IR or a .tasm program"; }

namespace {

/// The first line of `text` that is neither blank nor a comment ('#' in .tsl
/// and .tasm, '//' in .tir), trimmed; `comment` says which comment was seen.
llvm::StringRef firstSignificantLine(llvm::StringRef text, llvm::StringRef &comment) {
  text.consume_front("\xEF\xBB\xBF");
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    line = line.trim();
    text = rest;
    if (line.startswith("#") || line.startswith("//")) {
      if (comment.empty())
        comment = line.take_front(line.startswith("#") ? 1 : 2);
      continue;
    }
    if (!line.empty())
      return line;
  }
  return "";
}

} // namespace

llvm::Optional<InputFormat> sniffFormat(llvm::StringRef text) {
  llvm::StringRef comment;
  llvm::StringRef line = firstSignificantLine(text, comment);
  llvm::StringRef word = line.take_while(scan::isIdentChar);
  llvm::StringRef rest = line.drop_front(word.size()).ltrim();
  if (word == "kernel") {
    if (rest.startswith("@"))
      return InputFormat::Tir;
    llvm::StringRef after = rest.drop_while(scan::isNameChar).ltrim();
    if (after.startswith("("))
      return InputFormat::Tsl;
    if (after.empty() || after.startswith("#"))
      return InputFormat::Tasm;
    return llvm::None;
  }
  if (word == "const")
    return InputFormat::Tsl;
  if (word == "target" || word == "tensor" || word == "buffer")
    return InputFormat::Tasm;
  // Only comments (or nothing): the comment style still tells tile IR apart.
  if (line.empty() && comment == "//")
    return InputFormat::Tir;
  return llvm::None;
}

llvm::Expected<ProgramInput> readProgramInput(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  std::unique_ptr<llvm::MemoryBuffer> buf = std::move(*buffer);
  llvm::StringRef ext = llvm::sys::path::extension(path);
  llvm::Optional<InputFormat> format;
  for (InputFormat f : {InputFormat::Tsl, InputFormat::Tir, InputFormat::Tasm})
    if (ext == formatExtension(f))
      format = f;
  if (!format)
    format = sniffFormat(buf->getBuffer());
  if (!format) {
    llvm::StringRef name = path == "-" ? llvm::StringRef("<stdin>") : path;
    llvm::StringRef text = buf->getBuffer();
    const llvm::UTF8 *begin = reinterpret_cast<const llvm::UTF8 *>(text.begin());
    bool binary = text.contains('\0') ||
                  !llvm::isLegalUTF8String(&begin, reinterpret_cast<const llvm::UTF8 *>(text.end()));
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        llvm::formatv("'{0}' is not a program tessel reads{1}: expected {2} (by extension, or "
                      "recognised by its first line)",
                      name, binary ? " (it is not text; a binary file?)" : "", acceptedFormats())
            .str());
  }
  return ProgramInput{*format, std::move(buf)};
}

} // namespace tessel::compiler
