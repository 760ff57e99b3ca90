//===- ir/Parser.h - Reads the text form of the tile IR ---------*- C++ -*-===//
//
// A hand-written lexer and recursive-descent parser for the text the Printer
// emits (grammar in docs/tile-ir.md). Every Value, Op and Access gets the
// SMLoc of its first token, every error is reported through the
// DiagnosticEngine with a location, and no input (binary garbage, deep
// nesting, huge integers) crashes it. The parser enforces the lexical rules
// of names: a value is used only after its definition and inside the block
// that defines it, and names are unique per kernel. Everything else (types,
// shapes, memory spaces, bounds) is the Verifier's job, so that invalid IR
// can still be written down and tested.
//
// Round trip: print(parse(print(x))) == print(x).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IR_PARSER_H
#define TESSEL_IR_PARSER_H

#include "ir/Diagnostics.h"
#include "ir/Kernel.h"

#include <memory>

namespace tessel::ir {

// Every parsed kernel gets `geometry` (the target's, which the text does not
// carry): the verifier checks the kernel against it.

/// Parses the main buffer of diags.sourceMgr(). Returns null (after reporting)
/// on any error.
std::unique_ptr<Module> parseModule(DiagnosticEngine &diags, const TileGeometry &geometry);

/// Parses buffer `bufferId` of diags.sourceMgr().
std::unique_ptr<Module> parseBuffer(unsigned bufferId, DiagnosticEngine &diags,
                                    const TileGeometry &geometry);

/// Adds `text` as a new buffer named `bufferName` to diags.sourceMgr() and
/// parses it (tests, round trips).
std::unique_ptr<Module> parseModuleString(llvm::StringRef text, llvm::StringRef bufferName,
                                          DiagnosticEngine &diags,
                                          const TileGeometry &geometry);

/// Parses the main buffer, which must hold exactly one kernel.
std::unique_ptr<Kernel> parseKernel(DiagnosticEngine &diags, const TileGeometry &geometry);

} // namespace tessel::ir

#endif
