//===- tune/TunePlot.h - tessel tune --plot=FILE.svg ---------*- C++ -*-===//
#ifndef TESSEL_TUNE_TUNEPLOT_H
#define TESSEL_TUNE_TUNEPLOT_H

#include "tune/TuneReport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel::tune {

/// The gnuplot script plotting `dataPath` (written by writePlotData) to
/// `svgPath`: simulated latency against the row strip `m` on a log2 axis,
/// one line per value of the other block parameters, spilling
/// configurations marked.
std::string plotScript(const TuneReport &report, llvm::StringRef dataPath,
                       llvm::StringRef svgPath);

/// The data plotScript reads: one gnuplot data block per line (blank-line
/// separated), then one block of the spilling configurations. An error if
/// nothing was simulated.
llvm::Expected<std::string> plotData(const TuneReport &report);

/// Writes the data and the script to a temporary folder and runs gnuplot
/// (package gnuplot-nox) to make `svgPath`. An error if gnuplot is missing
/// or fails.
llvm::Error writeLatencyPlot(const TuneReport &report, llvm::StringRef svgPath);

} // namespace tessel::tune

#endif
