//===- support/JsonLimits.cpp - JSON parsing with a nesting limit ---------===//
#include "support/JsonLimits.h"

#include "llvm/ADT/Twine.h"

namespace tessel {

static llvm::Error jsonError(llvm::StringRef what, const llvm::Twine &msg) {
  std::string text = what.empty() ? msg.str() : (what + ": " + msg).str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
}

llvm::Error checkJsonDepth(llvm::StringRef text, llvm::StringRef what, unsigned maxDepth) {
  unsigned depth = 0;
  size_t line = 1, lineStart = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (escaped)
        escaped = false; // \" and \\ neither end the string nor escape
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
    case '"':
      inString = true;
      break;
    case '[':
    case '{':
      if (++depth > maxDepth)
        return jsonError(what, llvm::Twine("JSON nested deeper than ") + llvm::Twine(maxDepth) +
                                   " levels (line " + llvm::Twine(line) + ", column " +
                                   llvm::Twine(i - lineStart + 1) + ")");
      break;
    case ']':
    case '}':
      if (depth > 0) // unbalanced closers are the parser's to report
        --depth;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::json::Value> parseJsonBounded(llvm::StringRef text, llvm::StringRef what,
                                                   unsigned maxDepth) {
  if (llvm::Error e = checkJsonDepth(text, what, maxDepth))
    return std::move(e);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return jsonError(what, "invalid JSON: " + llvm::toString(parsed.takeError()));
  return parsed;
}

} // namespace tessel
