#include "tune/TunePlot.h"
#include "tune/PlotMarkers.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessel::tune {
namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

/// The parameter on the x axis: the row strip when the kernel has one.
std::string xParam(const TuneReport &report) {
  for (const std::string &p : report.params)
    if (p == "m")
      return p;
  return report.params.empty() ? "m" : report.params.front();
}

/// Simulated results by line (the other parameters), each sorted by x.
std::map<BlockConfig, std::vector<const ConfigResult *>> lines(const TuneReport &report) {
  std::string x = xParam(report);
  std::map<BlockConfig, std::vector<const ConfigResult *>> out;
  for (const ConfigResult &r : report.results) {
    if (!r.sim || !r.block.has(x))
      continue;
    BlockConfig rest = r.block;
    rest.erase(x);
    out[rest].push_back(&r);
  }
  for (auto &kv : out)
    std::sort(kv.second.begin(), kv.second.end(), [&](const ConfigResult *a, const ConfigResult *b) {
      return a->block.lookup(x) < b->block.lookup(x);
    });
  return out;
}

/// A gnuplot single-quoted string ('' stands for a quote).
std::string quoted(llvm::StringRef s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

/// The plot gnuplot wrote, its markers made plain shapes (tune/PlotMarkers.h).
llvm::Error rewriteMarkers(llvm::StringRef svgPath) {
  auto svg = llvm::MemoryBuffer::getFile(svgPath, /*IsText=*/true);
  if (!svg)
    return fail("--plot: cannot read back '" + svgPath + "': " + svg.getError().message());
  std::string text = inlinePlotMarkers((*svg)->getBuffer());
  std::error_code ec;
  llvm::raw_fd_ostream os(svgPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("--plot: cannot write '" + svgPath + "': " + ec.message());
  os << text;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::string> plotData(const TuneReport &report) {
  std::string x = xParam(report);
  auto byLine = lines(report);
  if (byLine.empty())
    return fail("--plot: nothing to plot, no configuration was simulated");
  std::string data;
  llvm::raw_string_ostream os(data);
  for (const auto &[rest, points] : byLine) {
    os << "# " << (rest.empty() ? "all" : formatBlock(rest)) << "\n";
    for (const ConfigResult *r : points)
      os << r->block.lookup(x) << " " << llvm::formatv("{0}", r->sim->latencyUs) << "\n";
    os << "\n\n";
  }
  os << "# spilling configurations\n";
  for (const auto &kv : byLine)
    for (const ConfigResult *r : kv.second)
      if (r->sim->spillBytes > 0)
        os << r->block.lookup(x) << " " << llvm::formatv("{0}", r->sim->latencyUs) << "\n";
  return os.str();
}

std::string plotScript(const TuneReport &report, llvm::StringRef dataPath,
                       llvm::StringRef svgPath) {
  std::string x = xParam(report);
  auto byLine = lines(report);
  std::set<int64_t> xs;
  bool spills = false;
  for (const auto &kv : byLine)
    for (const ConfigResult *r : kv.second) {
      xs.insert(r->block.lookup(x));
      spills |= r->sim->spillBytes > 0;
    }
  std::string tics;
  for (int64_t v : xs)
    tics += (tics.empty() ? "" : ", ") + std::to_string(v);

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "set terminal svg size 900,560 dynamic noenhanced font 'sans,12' background rgb 'white'\n"
     << "set output " << quoted(svgPath) << "\n"
     << "set title " << quoted(report.key.kernel + " (" + report.key.shapes + ") on " +
                               report.key.target + ": simulated latency by block")
     << "\n"
     << "set xlabel " << quoted(x == "m" ? "row strip m (log2 scale)" : x + " (log2 scale)")
     << "\n"
     << "set ylabel 'simulated latency (us)'\n"
     << "set logscale x 2\n"
     // A margin around the first and last block, so their tics show.
     << llvm::formatv("set xrange [{0}:{1}]\n", *xs.begin() / 1.25, *xs.rbegin() * 1.25)
     << "set xtics (" << tics << ")\n"
     << "set grid\n"
     << "set key outside right top\n"
     << "plot ";
  unsigned index = 0;
  for (const auto &kv : byLine) {
    std::string title = kv.first.empty() ? "latency" : formatBlock(kv.first);
    os << (index ? ", \\\n     " : "") << quoted(dataPath) << " index " << index
       << " using 1:2 with linespoints lw 2 pt 7 title " << quoted(title);
    ++index;
  }
  if (spills)
    os << ", \\\n     " << quoted(dataPath) << " index " << index
       << " using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb 'red' title 'spills'";
  os << "\n";
  return os.str();
}

llvm::Error writeLatencyPlot(const TuneReport &report, llvm::StringRef svgPath) {
  llvm::Expected<std::string> data = plotData(report);
  if (!data)
    return data.takeError();
  llvm::ErrorOr<std::string> gnuplot = llvm::sys::findProgramByName("gnuplot");
  if (!gnuplot)
    return fail("--plot needs gnuplot, which is not on PATH (install the gnuplot-nox package, "
                "e.g. with scripts/setup.sh); the results above were still printed and cached");

  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tessel-plot", dir))
    return fail("--plot: cannot create a temporary folder: " + ec.message());
  auto path = [&](llvm::StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::string dataPath = path("latency.dat"), scriptPath = path("plot.gp"),
              logPath = path("gnuplot.log");
  auto cleanup = [&] {
    for (const std::string &p : {dataPath, scriptPath, logPath})
      llvm::sys::fs::remove(p);
    llvm::sys::fs::remove(dir);
  };
  for (auto [file, text] : {std::pair{dataPath, *data},
                            std::pair{scriptPath, plotScript(report, dataPath, svgPath)}}) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      cleanup();
      return fail("--plot: cannot write '" + file + "': " + ec.message());
    }
    os << text;
  }
  llvm::StringRef args[] = {*gnuplot, scriptPath};
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(), llvm::StringRef(logPath),
                                                 llvm::StringRef(logPath)};
  std::string execError;
  int status = llvm::sys::ExecuteAndWait(*gnuplot, args, llvm::None, redirects, 0, 0, &execError);
  std::string log;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().trim().str();
  cleanup();
  if (status != 0)
    return fail("--plot: gnuplot failed (" + (execError.empty() ? "exit " + std::to_string(status)
                                                                : execError) +
                ")" + (log.empty() ? "" : ": " + log));
  return rewriteMarkers(svgPath);
}

} // namespace tessel::tune
