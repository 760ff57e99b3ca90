//===- driver/FactorizeCommand.cpp - `tessel factorize` -------------------===//
//
// tessel factorize W.npy --ratio R -o DIR [--activations X.npy] [--tile T]
//                  [--threshold F] [--damping D] [--sigma=split|v]
//                  [--emit-kernel] [--json] [--force] [--target NAME]
//
// 1. Read W (float32/float16 .npy, 2-D) and the activations if given.
// 2. Choose the tile-aligned rank for the ratio (factorize::chooseRank; the
//    tile defaults to the target's PE rows).
// 3. Factorise (whitened when activations are given), showing the stage and
//    the elapsed time on a terminal.
// 4. Write DIR/U.npy, DIR/V.npy (float32) and, with --emit-kernel,
//    DIR/kernel.tsl; existing files are kept unless --force; each file is
//    written to a temporary name and renamed, so a failed run leaves nothing
//    half-written.
// 5. Print the report: rank, ratio, errors, time (text, or JSON with --json).
//
//===----------------------------------------------------------------------===//
#include "driver/Commands.h"
#include "support/AtomicFile.h"
#include "driver/CommonOptions.h"
#include "driver/OptionChecks.h"
#include "support/Progress.h"

#include "factorize/Factorize.h"
#include "runtime/Npy.h"
#include "runtime/Target.h"

#include "fmt/format.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

namespace cl = llvm::cl;
using namespace tessel;

namespace tessel::driver {
using namespace support;
namespace {

bool fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tessel factorize") << message << "\n";
  return false;
}

/// Reads a 2-D .npy as a factorize::Matrix.
std::optional<factorize::Matrix> readMatrix(llvm::StringRef path, llvm::StringRef role) {
  llvm::Expected<runtime::NpyArray> npy = runtime::readNpy(path);
  if (!npy) {
    fail(llvm::toString(npy.takeError()));
    return std::nullopt;
  }
  if (npy->shape.size() != 2) {
    fail(llvm::Twine(path) + ": " + role + " must be a 2-D array, found shape " +
         runtime::formatShape(npy->shape));
    return std::nullopt;
  }
  if (npy->shape[0] == 0 || npy->shape[1] == 0) {
    fail(llvm::Twine(path) + ": " + role + " is empty (shape " + runtime::formatShape(npy->shape) + ")");
    return std::nullopt;
  }
  for (float v : npy->data)
    if (!std::isfinite(v)) {
      fail(llvm::Twine(path) + ": " + role + " holds Inf or NaN");
      return std::nullopt;
    }
  factorize::Matrix m;
  m.rows = npy->shape[0];
  m.cols = npy->shape[1];
  m.data = std::move(npy->data);
  return m;
}

std::string kernelSource(llvm::StringRef weightPath, double ratio, const factorize::Matrix &W,
                         int64_t rank) {
  return fmt::format(
      "# Written by `tessel factorize {} --ratio {}`: W [{}, {}] ~ U [{}, {}] @ V [{}, {}].\n"
      "# Run it with the factors: tessel run kernel.tsl --input U=U.npy --input V=V.npy -D M=...\n"
      "const M = 1024\n"
      "\n"
      "kernel factorized(X: bf16[M, {}], U: bf16[{}, {}], V: bf16[{}, {}]) -> bf16[M, {}] {{\n"
      "  return X @ U @ V\n"
      "}}\n",
      llvm::sys::path::filename(weightPath).str(), ratio, W.rows, W.cols, W.rows, rank, rank, W.cols,
      W.rows, W.rows, rank, rank, W.cols, W.cols);
}

/// The options of `tessel factorize` and their checks (validate).
struct FactorizeOptions {
  cl::opt<std::string> input{cl::Positional, cl::desc("<W.npy>"), cl::Required, cl::cat(toolCategory())};
  SharedOptions shared{"tessel factorize"};
  cl::opt<double> ratio{"ratio",
                        cl::desc("Fraction of W's parameters the factors remove, in (0, 1) (paper "
                                 "eq. 4: 1 - params(U, V) / params(W); 0.2 keeps 80%)"),
                        cl::value_desc("R"), cl::Required, cl::cat(toolCategory())};
  cl::opt<std::string> activations{
      "activations",
      cl::desc("Calibration activations X [N, rows of W]: whiten by the Cholesky factor of X^T X so "
               "the truncation minimises the error of X @ W (paper eq. 2-3)"),
      cl::value_desc("X.npy"), cl::cat(toolCategory())};
  cl::opt<int64_t> tile{"tile",
                        cl::desc("Align the rank to a multiple of this (default: the target's "
                                 "tensor-engine rows, 128 on trn1/trn2)"),
                        cl::value_desc("N"), cl::init(0), cl::cat(toolCategory())};
  cl::opt<double> threshold{
      "threshold",
      cl::desc("Round the rank up to the next whole tile when its fractional part in tiles is at "
               "least this (paper eq. 5; 0.5 = ordinary rounding, 1 = always down, 0 = always up)"),
      cl::value_desc("F"), cl::init(0.5), cl::cat(toolCategory())};
  cl::opt<double> damping{"damping",
                          cl::desc("Add D * mean(diag) to the activation covariance's diagonal "
                                   "before its Cholesky factorisation (for a singular covariance)"),
                          cl::value_desc("D"), cl::init(0.0), cl::cat(toolCategory())};
  cl::opt<factorize::SigmaPlacement> sigma{
      "sigma", cl::desc("Where the singular values go"),
      cl::values(clEnumValN(factorize::SigmaPlacement::Split, "split",
                            "sqrt(Sigma) into both U and V, as the paper does (default)"),
                 clEnumValN(factorize::SigmaPlacement::IntoV, "v", "Sigma wholly into V")),
      cl::init(factorize::SigmaPlacement::Split), cl::cat(toolCategory())};
  cl::opt<bool> emitKernel{"emit-kernel",
                           cl::desc("Also write DIR/kernel.tsl: X @ U @ V with the factors' shapes"),
                           cl::cat(toolCategory())};
  cl::opt<bool> json{"json", cl::desc("Print the report as JSON"), cl::cat(toolCategory())};
  cl::opt<bool> force{"force", cl::desc("Replace U.npy, V.npy, kernel.tsl if DIR already has them"),
                      cl::cat(toolCategory())};

  FactorizeOptions() {
    shared.addTarget("The one whose tensor-engine tile --tile defaults to (default: trn1)");
    shared.addOutput("Directory for U.npy, V.npy (and kernel.tsl); created if missing", "DIR", "",
                     /*required=*/true);
  }

  /// Returns false after reporting.
  bool validate() const {
    if (!shared.validate())
      return false;
    if (damping < 0 || !std::isfinite(damping))
      return fail(fmt::format("--damping {} must be a finite non-negative number", double(damping)));
    if (damping.getNumOccurrences() && activations.empty())
      return fail("--damping applies to the activation covariance: give --activations too");
    return true;
  }
};

/// What is factorised: W, the activations, the rank for the ratio.
struct Problem {
  int64_t tile = 0;
  factorize::Matrix W;
  std::optional<factorize::Matrix> X;
  factorize::RankChoice rank;
};

bool readProblem(const FactorizeOptions &o, Problem &p) {
  p.tile = o.tile;
  if (o.tile.getNumOccurrences() == 0) {
    llvm::Expected<runtime::Target> target = o.shared.loadTarget();
    if (!target)
      return fail(llvm::toString(target.takeError()));
    p.tile = target->pe_rows;
  }
  std::optional<factorize::Matrix> W = readMatrix(o.input, "the weight W");
  if (!W)
    return false;
  p.W = std::move(*W);
  // Its singular values are all 0: no share of their energy can be kept.
  if (llvm::all_of(p.W.data, [](float v) { return v == 0; }))
    return fail(o.input + ": the weight W is all zeros: it has no energy to keep and nothing to "
                          "factorise (X @ W is 0 for any X)");
  if (!o.activations.empty() && !(p.X = readMatrix(o.activations, "the activations")))
    return false;
  llvm::Expected<factorize::RankChoice> rank =
      factorize::chooseRank(p.W.rows, p.W.cols, o.ratio, p.tile, o.threshold);
  if (!rank)
    return fail(llvm::Twine(o.input) + " [" + llvm::Twine(p.W.rows) + ", " + llvm::Twine(p.W.cols) +
                "]: " + llvm::toString(rank.takeError()));
  p.rank = *rank;
  return true;
}

/// DIR/U.npy, DIR/V.npy, DIR/kernel.tsl.
struct OutputPaths {
  std::string U, V, kernel;
};

/// The files to write, refused before the long work (not after it) when
/// they exist (without --force) or are inputs.
bool prepareOutputs(const FactorizeOptions &o, OutputPaths &paths) {
  auto inDir = [&](const char *name) {
    llvm::SmallString<128> path(o.shared.output());
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  paths = {inDir("U.npy"), inDir("V.npy"), inDir("kernel.tsl")};
  for (const std::string &p : {paths.U, paths.V, paths.kernel}) {
    if (p == paths.kernel && !o.emitKernel)
      continue;
    if (!o.force && llvm::sys::fs::exists(p))
      return fail("'" + p + "' exists; pass --force to replace it");
    if (!rejectInputAsOutput("-o", p, std::vector<std::string>{o.input.getValue(), o.activations.getValue()}))
      return false;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(o.shared.output()))
    return fail("cannot create '" + o.shared.output() + "': " + ec.message());
  return true;
}

/// The factors and their errors.
struct Result {
  factorize::Factors factors;
  double wError = 0;
  std::optional<double> xError;
  double seconds = 0;
};

/// Factorises, measures the errors and writes the files, showing the stage
/// on a terminal. False after reporting.
bool factorizeAndWrite(const FactorizeOptions &o, const Problem &p, const OutputPaths &paths, Result &r) {
  factorize::Options options;
  options.rank = p.rank.rank;
  options.sigma = o.sigma;
  options.damping = o.damping;
  options.activations = p.X ? &*p.X : nullptr;
  StageProgress progress(llvm::errs(), llvm::errs().is_displayed(), "factorize");
  auto onStage = [&](llvm::StringRef stage) {
    if (stage == "svd")
      progress.stage(fmt::format("SVD of [{}, {}]", p.W.rows, p.W.cols));
    else
      progress.stage(stage);
  };
  options.onStage = onStage;
  llvm::Expected<factorize::Factors> factors = factorize::factorize(p.W, options);
  if (!factors)
    return progress.finish(), fail(llvm::toString(factors.takeError()));
  r.factors = std::move(*factors);
  auto finite = [](const factorize::Matrix &m) {
    return llvm::all_of(m.data, [](float v) { return std::isfinite(v); });
  };
  if (!finite(r.factors.U) || !finite(r.factors.V))
    return progress.finish(),
           fail(o.input + ": the factors overflow float32: W's values are too large for its SVD (scale W "
                          "down and the factors back up)");
  progress.stage("errors");
  r.wError = factorize::relativeError(p.W, r.factors);
  if (p.X)
    r.xError = factorize::activationError(*p.X, p.W, r.factors);
  progress.stage("writing");
  const factorize::Matrix &U = r.factors.U, &V = r.factors.V;
  std::vector<std::pair<std::string, std::string>> files = {
      {paths.U, runtime::serializeNpy({U.rows, U.cols}, U.data)},
      {paths.V, runtime::serializeNpy({V.rows, V.cols}, V.data)}};
  if (o.emitKernel)
    files.push_back({paths.kernel, kernelSource(o.input, o.ratio, p.W, p.rank.rank)});
  llvm::Error written = writeFilesAtomically(files);
  progress.finish();
  return written ? fail(llvm::toString(std::move(written))) : true;
}

/// The share of sum(sigma^2) the rank keeps.
double energyKept(const factorize::Factors &factors, int64_t rank) {
  double kept = 0, total = 0;
  for (size_t i = 0; i < factors.singularValues.size(); ++i) {
    const double s2 = double(factors.singularValues[i]) * factors.singularValues[i];
    total += s2;
    if (int64_t(i) < rank)
      kept += s2;
  }
  return total > 0 ? kept / total : 1;
}

/// Below this share of sum(sigma^2) kept, X @ U @ V is far from X @ W.
constexpr double kLowEnergy = 0.9;

/// What the user should know before using the factors: a rank that rounds
/// away most of the compression asked for, or keeps little of W's energy.
std::vector<std::string> factorizeWarnings(const FactorizeOptions &o, const Problem &p, const Result &r) {
  std::vector<std::string> out;
  const double asked = o.ratio, got = p.rank.achievedRatio;
  if (got < asked / 2) {
    // Rounded up past a whole tile: one tile fewer removes more.
    const bool roundedUp = p.rank.rank > p.rank.exactRank && p.rank.rank > p.tile;
    out.push_back(fmt::format("the rank rounds to {} (exact {:.1f}, {} tiles of {}): {:.1f}% of the parameters are "
                              "removed, not the {:.1f}% asked for; {}",
                              p.rank.rank, p.rank.exactRank, p.rank.rank / p.tile, p.tile, 100 * got, 100 * asked,
                              roundedUp ? fmt::format("--threshold 1 rounds down to {}", p.rank.rank - p.tile)
                                        : std::string("a smaller --tile comes closer")));
  }
  const double energy = energyKept(r.factors, p.rank.rank);
  if (energy < kLowEnergy)
    out.push_back(fmt::format("rank {} keeps {:.1f}% of sum(sigma^2){}, under {:.0f}%: X @ U @ V may be far from "
                              "X @ W{}; a lower --ratio keeps more",
                              p.rank.rank, 100 * energy, p.X ? " of the whitened L^T W" : "", 100 * kLowEnergy,
                              r.xError ? fmt::format(" (here {:.3g} relative error)", *r.xError) : ""));
  return out;
}

void printJSON(const FactorizeOptions &o, const Problem &p, const OutputPaths &paths, const Result &r) {
  const factorize::Matrix &W = p.W;
  llvm::json::Object report{
      {"weight", std::string(o.input)},
      {"shape", llvm::json::Array{W.rows, W.cols}},
      {"ratio_requested", double(o.ratio)},
      {"ratio", p.rank.achievedRatio},
      {"tile", p.tile},
      {"exact_rank", p.rank.exactRank},
      {"rank", p.rank.rank},
      {"parameters", llvm::json::Array{W.rows * W.cols, p.rank.rank * (W.rows + W.cols)}},
      {"whitened", bool(p.X)},
      {"sigma", o.sigma == factorize::SigmaPlacement::Split ? "split" : "v"},
      {"energy_kept", energyKept(r.factors, p.rank.rank)},
      {"relative_error", r.wError},
      {"seconds", r.seconds},
      {"U", paths.U},
      {"V", paths.V}};
  if (r.xError)
    report["activation_error"] = *r.xError;
  llvm::json::Array warnings;
  for (std::string &w : factorizeWarnings(o, p, r))
    warnings.push_back(std::move(w));
  report["warnings"] = std::move(warnings);
  if (o.emitKernel)
    report["kernel"] = paths.kernel;
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

void printText(const FactorizeOptions &o, const Problem &p, const OutputPaths &paths, const Result &r) {
  const factorize::Matrix &W = p.W;
  const int64_t rank = p.rank.rank;
  llvm::outs() << fmt::format(
      "factorize: {} [{}, {}] -> U [{}, {}] @ V [{}, {}]\n"
      "  rank:      {} = {} tiles of {} (exact {:.1f} for ratio {}; threshold {})\n"
      "  ratio:     {:.4f} of the parameters removed ({} -> {})\n"
      "  energy:    {:.2f}% of sum(sigma^2) kept{}\n"
      "  error:     ||W - UV|| / ||W|| = {:.4g}\n",
      o.input.getValue(), W.rows, W.cols, W.rows, rank, rank, W.cols, rank, rank / p.tile, p.tile,
      p.rank.exactRank, double(o.ratio), double(o.threshold), p.rank.achievedRatio, W.rows * W.cols,
      rank * (W.rows + W.cols), 100 * energyKept(r.factors, rank), p.X ? " (of the whitened L^T W)" : "",
      r.wError);
  if (r.xError)
    llvm::outs() << fmt::format("  on X:      X @ U @ V against X @ W: ||X(W - UV)|| / ||XW|| = {:.4g} (whitened by {})\n", *r.xError,
                                o.activations.getValue());
  llvm::outs() << fmt::format("  sigma:     {}\n  time:      {:.2f} s\n  wrote:     {}, {}{}\n",
                              o.sigma == factorize::SigmaPlacement::Split ? "sqrt split into U and V"
                                                                          : "into V",
                              r.seconds, paths.U, paths.V, o.emitKernel ? ", " + paths.kernel : "");
}

} // namespace

int runFactorizeCommand(int argc, char **argv) {
  FactorizeOptions o;
  if (!parseCommandLine(argc, argv,
                        "tessel factorize: low-rank factors U, V of a weight W (X @ W ~ X @ U @ V), "
                        "the rank aligned to the tensor engine's tile (docs/factorize.md)\n") ||
      !o.validate())
    return 1;
  const auto start = std::chrono::steady_clock::now();
  Problem p;
  OutputPaths paths;
  Result r;
  if (!readProblem(o, p) || !prepareOutputs(o, paths) || !factorizeAndWrite(o, p, paths, r))
    return 1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json)
    printJSON(o, p, paths, r);
  else
    printText(o, p, paths, r);
  for (const std::string &w : factorizeWarnings(o, p, r))
    llvm::WithColor::warning(llvm::errs(), "tessel factorize") << w << "\n";
  return 0;
}

} // namespace tessel::driver
