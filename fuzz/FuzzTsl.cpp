//===- fuzz/FuzzTsl.cpp - .tsl source: lexer, parser and Sema -------------===//
#include "fuzz/FuzzUtil.h"

#include "frontend/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(tessel::fuzz::asText(data, size), "fuzz.tsl"),
                        llvm::SMLoc());
  tessel::DiagnosticEngine diags = tessel::DiagnosticEngine::quiet(sm);
  tessel::parseAndCheck(diags, {});
  return 0;
}
