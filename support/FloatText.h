//===- support/FloatText.h - Shortest round-trip float text -----*- C++ -*-===//
//
// The text the IR printer and the NKI emitter write for a constant: the
// shortest decimal that reads back as exactly the same double, so a printed
// kernel parses (or a generated kernel runs) with bit-identical constants.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_FLOATTEXT_H
#define TESSEL_SUPPORT_FLOATTEXT_H

#include <string>

namespace tessel {

/// The shortest text that reads back as exactly `d`, always with a '.' or an
/// exponent so it lexes as a float ("2.0", "0.125", "1e-05"); "inf", "-inf"
/// and "nan" for the values no decimal spells.
std::string shortestFloatText(double d);

} // namespace tessel

#endif
