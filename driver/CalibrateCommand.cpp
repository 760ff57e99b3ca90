//===- driver/CalibrateCommand.cpp - `tessel calibrate` --------------------===//
//
// Fits the free parameters of a target (calibrate/CalibrationParams.def) to
// measured kernel latencies (calibrate/MeasuredPoints.h), prints the error per
// point before and after, and the leave-one-out error, and writes the fitted
// target as JSON that --target=FILE.json accepts. docs/calibration.md.
//
//===----------------------------------------------------------------------===//
#include "support/AtomicFile.h"
#include "calibrate/Calibrate.h"
#include "driver/Commands.h"
#include "driver/CommonOptions.h"
#include "driver/OptionChecks.h"

#include "runtime/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cmath>

namespace cl = llvm::cl;
using namespace tessel::runtime;

namespace tessel::driver {
using namespace calibrate;
using namespace support;

static void calibError(llvm::StringRef msg) {
  if (msg.contains(": error: "))
    llvm::errs() << msg << "\n";
  else
    llvm::WithColor::error(llvm::errs(), "tessel calibrate") << msg << "\n";
}

static std::string pct(double sim, double measured) {
  return llvm::formatv("{0,7:f1}%", 100.0 * (sim - measured) / measured).str();
}

static void printPoints(const Calibration &c, llvm::ArrayRef<size_t> which, llvm::ArrayRef<Simulated> before,
                        llvm::ArrayRef<Simulated> after, llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-34} {1,-9} {2,12} {3,12} {4,8} {5,12} {6,8}\n", "point", "measured", "measured_us",
                      "before_us", "err", "after_us", "err");
  for (size_t k = 0; k < which.size(); ++k) {
    const MeasuredPoint &m = c.all()[which[k]].m;
    std::string label = m.name + " (" + llvm::sys::path::filename(m.origin).str() + ")";
    if (m.hasLatency())
      os << llvm::formatv("{0,-34} {1,-9} {2,12:f1} {3,12:f1} {4} {5,12:f1} {6}\n", label,
                          latencyKindName(m.measured), m.latencyUs, before[k].latencyUs,
                          pct(before[k].latencyUs, m.latencyUs), after[k].latencyUs,
                          pct(after[k].latencyUs, m.latencyUs));
    else
      os << llvm::formatv("{0,-34} {1,-9} {2,12} {3,12:f1} {4,8} {5,12:f1}\n", label, "-", "-",
                          before[k].latencyUs, "", after[k].latencyUs);
    for (const auto &[engine, us] : m.busyUs) {
      double b = before[k].busyUs.count(engine) ? before[k].busyUs.at(engine) : 0.0;
      double a = after[k].busyUs.count(engine) ? after[k].busyUs.at(engine) : 0.0;
      os << llvm::formatv("{0,-34} {1,-9} {2,12:f1} {3,12:f1} {4} {5,12:f1} {6}\n", "  " + engine + " busy", "",
                          us, b, pct(b, us), a, pct(a, us));
    }
  }
}

/// The fitted target as JSON text (TargetFields.def order) with a
/// "_calibration" record; `--target=FILE.json` ignores keys starting with '_'.
static std::string fittedJSON(const Target &fitted, const Target &start, llvm::ArrayRef<FreeParam> params,
                              llvm::json::Object record) {
  llvm::json::Array fits;
  for (const FreeParam &p : params)
    fits.push_back(llvm::json::Object{{"field", p.field},
                                      {"start", start.*(p.member)},
                                      {"fitted", fitted.*(p.member)},
                                      {"bounds", llvm::json::Array{p.lo, p.hi}}});
  record["parameters"] = std::move(fits);
  std::string text = targetToJSONText(fitted);
  size_t end = text.rfind('}');
  text.resize(end);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  std::string rec;
  llvm::raw_string_ostream os(rec);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(record)));
  os.flush();
  // Indent the record one level to sit inside the target object.
  llvm::SmallVector<llvm::StringRef, 64> lines;
  llvm::StringRef(rec).split(lines, '\n');
  std::string indented;
  for (llvm::StringRef line : lines)
    indented += (indented.empty() ? "" : "\n  ") + line.str();
  return text + ",\n  \"_calibration\": " + indented + "\n}\n";
}

/// Writes the fitted target (support/AtomicFile.h: a reader never sees half of it).
static bool writeAtomically(llvm::StringRef path, llvm::StringRef text) {
  if (llvm::Error e = writeFileAtomically(path, text)) {
    calibError(llvm::formatv("cannot write '{0}': {1}", path, llvm::toString(std::move(e))).str());
    return false;
  }
  return true;
}

namespace {

bool fail(const std::string &msg) {
  calibError(msg);
  return false;
}

/// The options of `tessel calibrate` and their checks (validate).
struct CalibrateOptions {
  cl::list<std::string> inputs{cl::Positional, cl::desc("<MEASURED.csv>..."), cl::OneOrMore,
                               cl::cat(toolCategory())};
  SharedOptions shared{"tessel calibrate"};
  cl::opt<bool> force{"force", cl::desc("Replace an existing -o file"), cl::cat(toolCategory())};
  cl::opt<std::string> paramList{
      "params",
      cl::desc("Fit only these free parameters (default: those docs/calibration.md fits by default; the "
               "TensorE throttle ones only when named)"),
      cl::value_desc("a,b,..."), cl::cat(toolCategory())};
  cl::opt<unsigned> maxEvals{"max-evaluations",
                             cl::desc("Stop the search after this many scorings of the points (default 300)"),
                             cl::init(300), cl::cat(toolCategory())};
  cl::opt<bool> loo{"leave-one-out",
                    cl::desc("Also predict each point from a fit to the others (default on; "
                             "--leave-one-out=false skips it)"),
                    cl::init(true), cl::cat(toolCategory())};
  cl::opt<bool> strict{"strict",
                       cl::desc("Make the warnings about the points errors: fewer measured quantities than "
                                "free parameters, a row given twice, a parameter no point exercises"),
                       cl::cat(toolCategory())};
  /// The parameters to fit, filled by validate().
  std::vector<FreeParam> params;

  CalibrateOptions() {
    shared.addTarget("The one to start from (default: trn1)");
    shared.addOutput("Write the fitted target here (refuses to replace a file without --force)", "FILE.json", "");
    shared.addJobs("Simulate this many points at once (default: the number of hardware threads)");
  }
  const std::string &output() const { return shared.output(); }

  /// Returns false after reporting.
  bool validate();
};

bool CalibrateOptions::validate() {
  if (!shared.validate() || !rejectEmptyValue(paramList))
    return false;
  llvm::Expected<std::vector<FreeParam>> selected = selectFreeParams(paramList);
  if (!selected)
    return fail(llvm::toString(selected.takeError()));
  params = std::move(*selected);
  if (!output().empty() && llvm::sys::fs::is_directory(output()))
    return fail(llvm::formatv("-o {0} is a directory; name the target file to write", output()));
  if (llvm::StringRef dir = llvm::sys::path::parent_path(output()); !dir.empty() && !llvm::sys::fs::is_directory(dir))
    return fail(llvm::formatv("-o {0}: the directory '{1}' does not exist", output(), dir));
  return true;
}

/// The measured points for `start`'s target, their programs loaded; `read`
/// gets every file the fit reads, which -o may not replace (not even with
/// --force). False after reporting.
bool readPoints(const CalibrateOptions &o, const Target &start, std::vector<CalibPoint> &points,
                std::vector<std::string> &read) {
  read.assign(o.inputs.begin(), o.inputs.end());
  read.push_back(o.shared.targetFile());
  for (const std::string &in : o.inputs) {
    llvm::Expected<std::vector<MeasuredPoint>> rows = readMeasuredPoints(in);
    if (!rows)
      return fail(llvm::toString(rows.takeError()));
    for (MeasuredPoint &m : *rows) {
      if (!m.target.empty() && m.target != start.name) {
        llvm::errs() << llvm::formatv("note: {0}: measured on {1}, not {2}; skipped\n", m.origin, m.target,
                                      start.name);
        continue;
      }
      read.push_back(m.kernel.path);
      read.push_back(m.profile);
      llvm::Expected<Program> prog = loadKernelProgram(m.kernel, start);
      if (!prog)
        return fail(m.origin + ": error: " + llvm::toString(prog.takeError()));
      points.push_back({std::move(m), std::move(*prog)});
    }
  }
  if (points.empty())
    return fail(llvm::formatv("no measured point is for target {0}", start.name));
  if (!rejectInputAsOutput("-o", o.output(), read))
    return false;
  if (!o.output().empty() && llvm::sys::fs::exists(o.output()) && !o.force)
    return fail(llvm::formatv("'{0}' exists; pass --force to replace it", o.output()));
  return true;
}

/// A warning, or under --strict an error (false); kept for the JSON record.
bool caution(const CalibrateOptions &o, const std::string &msg, llvm::json::Array &said) {
  said.push_back(msg);
  if (o.strict)
    return fail(msg + " (an error under --strict)");
  llvm::WithColor::warning(llvm::errs(), "tessel calibrate") << msg << "\n";
  return true;
}

/// Rows given twice, and fewer measured quantities than free parameters.
/// False after an error (--strict).
bool checkPoints(const CalibrateOptions &o, const Calibration &calib, llvm::json::Array &said) {
  std::vector<bool> repeat(calib.all().size(), false);
  for (const auto &[first, again] : calib.repeatedRows()) {
    repeat[again] = true;
    const MeasuredPoint &m = calib.all()[again].m;
    if (!caution(o,
                 llvm::formatv("{0}: row given twice: it runs the same program as {1}, measured as {2}, so it "
                               "weighs twice in the fit (leave-one-out leaves both out)",
                               m.origin, calib.all()[first].m.origin, latencyKindName(m.measured)),
                 said))
      return false;
  }
  size_t quantities = 0, rows = 0;
  for (size_t i = 0; i < calib.all().size(); ++i)
    if (!repeat[i]) {
      ++rows;
      quantities += calib.all()[i].m.hasLatency() + calib.all()[i].m.busyUs.size();
    }
  if (quantities < o.params.size())
    return caution(o,
                   llvm::formatv("{0} measured quantities (the latencies and engine busy times of {1} distinct "
                                 "points) for {2} free parameters: the fit cannot determine them all; give "
                                 "more points or name fewer parameters with --params",
                                 quantities, rows, o.params.size()),
                   said);
  return true;
}

/// A parameter no point exercises (no simulated quantity changes across its
/// bounds) is left at its start value, with a warning: the points say
/// nothing about it. False after an error (--strict) or a failed simulation.
bool keepUnexercised(const CalibrateOptions &o, const Calibration &calib, const Target &start, FitResult &fit,
                     llvm::json::Array &said) {
  llvm::Expected<std::vector<bool>> used = calib.exercised(fit.target, o.params, calib.everyPoint());
  if (!used)
    return fail(llvm::toString(used.takeError()));
  for (size_t j = 0; j < o.params.size(); ++j) {
    const FreeParam &p = o.params[j];
    if ((*used)[j])
      continue;
    double moved = fit.target.*(p.member), was = start.*(p.member);
    fit.target.*(p.member) = was;
    std::string by = moved == was ? "" : fmt::format(" (the fit had moved it to {:.6g})", moved);
    if (!caution(o,
                 fmt::format("no point exercises {} (no simulated latency or busy time changes over [{}, {}]): "
                             "left at its start value {:.6g}{}",
                             p.field, p.lo, p.hi, was, by),
                 said))
      return false;
  }
  return true;
}

/// Fits the parameters to every point and prints each point's error before
/// and after. False after reporting.
bool fitAll(const CalibrateOptions &o, Calibration &calib, const Target &start, FitResult &fit,
            llvm::json::Object &record, llvm::json::Array said) {
  std::vector<size_t> all = calib.everyPoint();
  std::vector<std::string> names;
  for (const FreeParam &p : o.params)
    names.push_back(p.field);
  llvm::outs() << llvm::formatv("calibrating {0} on {1} points; free: {2}\n", start.name, all.size(),
                                llvm::join(names, ", "));
  llvm::Expected<std::vector<Simulated>> before = calib.simulate(start, all);
  if (!before)
    return fail(llvm::toString(before.takeError()));
  FitOptions options;
  options.maxEvaluations = o.maxEvals;
  llvm::Expected<FitResult> fitted = calib.fit(start, o.params, all, options);
  if (!fitted)
    return fail(llvm::toString(fitted.takeError()));
  fit = std::move(*fitted);
  if (!keepUnexercised(o, calib, start, fit, said))
    return false;
  llvm::Expected<std::vector<Simulated>> after = calib.simulate(fit.target, all);
  if (!after)
    return fail(llvm::toString(after.takeError()));
  printPoints(calib, all, *before, *after, llvm::outs());
  double wBefore = calib.latencyWmape(all, *before), wAfter = calib.latencyWmape(all, *after);
  size_t timed = llvm::count_if(all, [&](size_t i) { return calib.all()[i].m.hasLatency(); });
  llvm::outs() << llvm::formatv("WMAPE before {0:f1}% after {1:f1}% over {2} points (score over every "
                                "measured quantity: {3:f1}% -> {4:f1}%, {5} evaluations)\n",
                                100 * wBefore, 100 * wAfter, timed, 100 * calib.score(all, *before),
                                100 * fit.score, fit.evaluations);
  record = llvm::json::Object{
      {"points", int64_t(all.size())},
      {"wmape_before", wBefore},
      {"wmape_after", wAfter},
      {"inputs", llvm::json::Array(std::vector<std::string>(o.inputs.begin(), o.inputs.end()))},
      {"warnings", std::move(said)}};
  return true;
}

/// Each point predicted by a fit to the others made exactly as the full fit
/// is (same start, same searches): starting it from the full fit, which has
/// seen the left-out point, would leak that point into its own prediction
/// wherever the other points leave a parameter free. False after reporting.
bool leaveOneOut(const CalibrateOptions &o, Calibration &calib, const Target &start, llvm::json::Object &record) {
  std::vector<size_t> all = calib.everyPoint();
  FitOptions options;
  options.maxEvaluations = o.maxEvals;
  double err = 0, sum = 0;
  size_t predicted = 0;
  for (size_t i : all) {
    if (!calib.all()[i].m.hasLatency())
      continue; // only latencies are predicted
    std::vector<size_t> rest = calib.trainingSetWithout(i);
    llvm::Expected<FitResult> f = calib.fit(start, o.params, rest, options);
    if (!f)
      return fail(llvm::toString(f.takeError()));
    size_t one[] = {i};
    llvm::Expected<std::vector<Simulated>> pred = calib.simulate(f->target, one);
    if (!pred)
      return fail(llvm::toString(pred.takeError()));
    double m = calib.all()[i].m.latencyUs;
    size_t twins = all.size() - 1 - rest.size();
    llvm::outs() << llvm::formatv("  left out {0,-30} predicted {1,12:f1} us, measured {2,12:f1} us {3}{4}\n",
                                  calib.all()[i].m.name, (*pred)[0].latencyUs, m, pct((*pred)[0].latencyUs, m),
                                  twins ? llvm::formatv(" (and {0} duplicate(s) of it)", twins).str() : "");
    err += std::fabs((*pred)[0].latencyUs - m);
    sum += m;
    ++predicted;
  }
  if (predicted) {
    llvm::outs() << llvm::formatv("leave-one-out WMAPE {0:f1}% over {1} points\n", 100 * err / sum, predicted);
    record["wmape_leave_one_out"] = err / sum;
  }
  return true;
}

/// Prints the fitted parameters and writes the fitted target to -o.
int writeFitted(const CalibrateOptions &o, const Target &start, const FitResult &fit, size_t points,
                llvm::json::Object record) {
  llvm::outs() << llvm::formatv("{0,-34} {1,12} {2,12}   {3}\n", "parameter", "start", "fitted", "bounds");
  for (const FreeParam &p : o.params)
    llvm::outs() << llvm::formatv("{0,-34} {1,12} {2,12}   [{3}, {4}]\n", p.field,
                                  fmt::format("{:.6g}", start.*(p.member)),
                                  fmt::format("{:.6g}", fit.target.*(p.member)), fmt::format("{}", p.lo),
                                  fmt::format("{}", p.hi));
  if (o.output().empty())
    return 0;
  Target fitted = fit.target;
  fitted.name = llvm::sys::path::stem(o.output()).str();
  fitted.description = llvm::formatv("{0} calibrated by tessel calibrate to {1} measured points ({2})",
                                     start.name, points, llvm::join(o.inputs, ", "))
                           .str();
  std::string text = fittedJSON(fitted, start, o.params, std::move(record));
  if (llvm::Expected<Target> check = parseTargetJSON(text, o.output()); !check)
    return fail(llvm::toString(check.takeError())), 1;
  if (!writeAtomically(o.output(), text))
    return 1;
  llvm::outs() << llvm::formatv("wrote {0} (use: tessel run --target={0})\n", o.output());
  return 0;
}

} // namespace

int runCalibrateCommand(int argc, char **argv) {
  CalibrateOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel calibrate: fit a target's free parameters to measured latencies\n\n"
                        "Reads measured points (CSV, docs/calibration.md), simulates each kernel on the\n"
                        "target, fits the bounded free parameters by compass search, prints the error\n"
                        "per point before and after and the leave-one-out error, and writes the\n"
                        "fitted target (accepted by --target=FILE.json).\n") ||
      !o.validate())
    return 1;
  llvm::Expected<Target> start = o.shared.loadTarget();
  if (!start)
    return fail(llvm::toString(start.takeError())), 1;
  std::vector<CalibPoint> points;
  std::vector<std::string> read;
  if (!readPoints(o, *start, points, read))
    return 1;
  Calibration calib(std::move(points), o.shared.jobs());
  FitResult fit;
  llvm::json::Object record;
  llvm::json::Array said;
  if (!checkPoints(o, calib, said) || !fitAll(o, calib, *start, fit, record, std::move(said)))
    return 1;
  if (o.loo && calib.everyPoint().size() >= 2 && !leaveOneOut(o, calib, *start, record))
    return 1;
  return writeFitted(o, *start, fit, calib.everyPoint().size(), std::move(record));
}

} // namespace tessel::driver
