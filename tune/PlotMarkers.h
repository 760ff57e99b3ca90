//===- tune/PlotMarkers.h - Point markers as plain SVG shapes ---*- C++ -*-===//
//
// gnuplot's SVG terminal defines its point markers once (<defs>, ids
// gpPt0..gpPt14, some as <use> of others) and places each with
// `<use xlink:href='#gpPtN' transform=... color=...>`. Renderers that drop
// <use> (ImageMagick's own) then draw a plot with no markers and a legend
// whose entries have no mark. The plot is rewritten so every marker is the
// shape itself, its color written out.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_PLOTMARKERS_H
#define TESSEL_TUNE_PLOTMARKERS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tessel::tune {

/// `svg` with every <use> of a gpPt marker replaced by the marker's shape
/// (<path>, <circle> or <rect>, transformed where the <use> put it, with
/// `currentColor` replaced by the color it was given) and the marker
/// definitions dropped. Other text is kept as it is.
std::string inlinePlotMarkers(llvm::StringRef svg);

} // namespace tessel::tune

#endif
