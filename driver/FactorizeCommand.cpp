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

} // namespace

int runFactorizeCommand(int argc, char **argv) {
  cl::opt<std::string> input(cl::Positional, cl::desc("<W.npy>"), cl::Required,
                             cl::cat(toolCategory()));
  cl::opt<double> ratio("ratio",
                        cl::desc("Fraction of W's parameters the factors remove, in (0, 1) (paper "
                                 "eq. 4: 1 - params(U, V) / params(W); 0.2 keeps 80%)"),
                        cl::value_desc("R"), cl::Required, cl::cat(toolCategory()));
  cl::opt<std::string> outDir("o", cl::desc("Directory for U.npy, V.npy (and kernel.tsl); created if missing"),
                              cl::value_desc("DIR"), cl::Required, cl::cat(toolCategory()));
  cl::opt<std::string> activations(
      "activations",
      cl::desc("Calibration activations X [N, rows of W]: whiten by the Cholesky factor of X^T X so "
               "the truncation minimises the error of X @ W (paper eq. 2-3)"),
      cl::value_desc("X.npy"), cl::cat(toolCategory()));
  cl::opt<int64_t> tile("tile",
                        cl::desc("Align the rank to a multiple of this (default: the target's "
                                 "tensor-engine rows, 128 on trn1/trn2)"),
                        cl::value_desc("N"), cl::init(0), cl::cat(toolCategory()));
  cl::opt<double> threshold(
      "threshold",
      cl::desc("Round the rank up to the next whole tile when its fractional part in tiles is at "
               "least this (paper eq. 5; 0.5 = ordinary rounding, 1 = always down, 0 = always up)"),
      cl::value_desc("F"), cl::init(0.5), cl::cat(toolCategory()));
  cl::opt<double> damping("damping",
                          cl::desc("Add D * mean(diag) to the activation covariance's diagonal "
                                   "before its Cholesky factorisation (for a singular covariance)"),
                          cl::value_desc("D"), cl::init(0.0), cl::cat(toolCategory()));
  cl::opt<factorize::SigmaPlacement> sigma(
      "sigma", cl::desc("Where the singular values go"),
      cl::values(clEnumValN(factorize::SigmaPlacement::Split, "split",
                            "sqrt(Sigma) into both U and V, as the paper does (default)"),
                 clEnumValN(factorize::SigmaPlacement::IntoV, "v", "Sigma wholly into V")),
      cl::init(factorize::SigmaPlacement::Split), cl::cat(toolCategory()));
  cl::opt<bool> emitKernel("emit-kernel",
                           cl::desc("Also write DIR/kernel.tsl: X @ U @ V with the factors' shapes"),
                           cl::cat(toolCategory()));
  cl::opt<bool> json("json", cl::desc("Print the report as JSON"), cl::cat(toolCategory()));
  cl::opt<bool> force("force", cl::desc("Replace U.npy, V.npy, kernel.tsl if DIR already has them"),
                      cl::cat(toolCategory()));
  cl::opt<std::string> targetName("target",
                                  cl::desc("Target whose tensor-engine tile --tile defaults to"),
                                  cl::value_desc("NAME|FILE.json"), cl::init("trn1"),
                                  cl::cat(toolCategory()));
  if (!parseCommandLine(argc, argv,
                        "tessel factorize: low-rank factors U, V of a weight W (X @ W ~ X @ U @ V), "
                        "the rank aligned to the tensor engine's tile (docs/factorize.md)\n"))
    return 1;

  int64_t tileSize = tile;
  if (tile.getNumOccurrences() == 0) {
    llvm::Expected<runtime::Target> target = runtime::loadTarget(targetName);
    if (!target)
      return fail(llvm::toString(target.takeError())), 1;
    tileSize = target->pe_rows;
  }
  if (damping < 0 || !std::isfinite(damping))
    return fail(fmt::format("--damping {} must be a finite non-negative number", double(damping))), 1;
  if (damping.getNumOccurrences() && activations.empty())
    return fail("--damping applies to the activation covariance: give --activations too"), 1;

  const auto start = std::chrono::steady_clock::now();
  std::optional<factorize::Matrix> W = readMatrix(input, "the weight W");
  if (!W)
    return 1;
  // Its singular values are all 0: no share of their energy can be kept.
  if (llvm::all_of(W->data, [](float v) { return v == 0; }))
    return fail(input + ": the weight W is all zeros: it has no energy to keep and nothing to "
                        "factorise (X @ W is 0 for any X)"),
           1;
  std::optional<factorize::Matrix> X;
  if (!activations.empty() && !(X = readMatrix(activations, "the activations")))
    return 1;
  llvm::Expected<factorize::RankChoice> rank =
      factorize::chooseRank(W->rows, W->cols, ratio, tileSize, threshold);
  if (!rank)
    return fail(llvm::Twine(input) + " [" + llvm::Twine(W->rows) + ", " + llvm::Twine(W->cols) +
                "]: " + llvm::toString(rank.takeError())), 1;

  // Refuse before the long work, not after it.
  llvm::SmallString<128> uPath(outDir), vPath(outDir), kPath(outDir);
  llvm::sys::path::append(uPath, "U.npy");
  llvm::sys::path::append(vPath, "V.npy");
  llvm::sys::path::append(kPath, "kernel.tsl");
  for (llvm::StringRef p : {uPath.str(), vPath.str(), kPath.str()}) {
    if (p == kPath.str() && !emitKernel)
      continue;
    if (!force && llvm::sys::fs::exists(p))
      return fail("'" + p + "' exists; pass --force to replace it"), 1;
    if (!rejectInputAsOutput("-o", p, std::vector<std::string>{input.getValue(), activations.getValue()}))
      return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message()), 1;

  factorize::Options options;
  options.rank = rank->rank;
  options.sigma = sigma;
  options.damping = damping;
  options.activations = X ? &*X : nullptr;
  StageProgress progress(llvm::errs(), llvm::errs().is_displayed(), "factorize");
  auto onStage = [&](llvm::StringRef stage) {
    if (stage == "svd")
      progress.stage(fmt::format("SVD of [{}, {}]", W->rows, W->cols));
    else
      progress.stage(stage);
  };
  options.onStage = onStage;
  llvm::Expected<factorize::Factors> factors = factorize::factorize(*W, options);
  if (!factors)
    return progress.finish(), fail(llvm::toString(factors.takeError())), 1;
  auto finite = [](const factorize::Matrix &m) {
    return llvm::all_of(m.data, [](float v) { return std::isfinite(v); });
  };
  if (!finite(factors->U) || !finite(factors->V))
    return progress.finish(),
           fail(input + ": the factors overflow float32: W's values are too large for its SVD (scale W "
                        "down and the factors back up)"),
           1;
  progress.stage("errors");
  const double wError = factorize::relativeError(*W, *factors);
  std::optional<double> xError;
  if (X)
    xError = factorize::activationError(*X, *W, *factors);
  progress.stage("writing");
  std::vector<std::pair<std::string, std::string>> files = {
      {uPath.str().str(), runtime::serializeNpy({factors->U.rows, factors->U.cols}, factors->U.data)},
      {vPath.str().str(), runtime::serializeNpy({factors->V.rows, factors->V.cols}, factors->V.data)}};
  if (emitKernel)
    files.push_back({kPath.str().str(), kernelSource(input, ratio, *W, rank->rank)});
  if (llvm::Error e = writeFilesAtomically(files))
    return progress.finish(), fail(llvm::toString(std::move(e))), 1;
  progress.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double kept = 0, total = 0;
  for (size_t i = 0; i < factors->singularValues.size(); ++i) {
    const double s2 = double(factors->singularValues[i]) * factors->singularValues[i];
    total += s2;
    if (int64_t(i) < rank->rank)
      kept += s2;
  }
  const double energy = total > 0 ? kept / total : 1;
  if (json) {
    llvm::json::Object report{
        {"weight", std::string(input)},
        {"shape", llvm::json::Array{W->rows, W->cols}},
        {"ratio_requested", double(ratio)},
        {"ratio", rank->achievedRatio},
        {"tile", tileSize},
        {"exact_rank", rank->exactRank},
        {"rank", rank->rank},
        {"parameters", llvm::json::Array{W->rows * W->cols, rank->rank * (W->rows + W->cols)}},
        {"whitened", bool(X)},
        {"sigma", sigma == factorize::SigmaPlacement::Split ? "split" : "v"},
        {"energy_kept", energy},
        {"relative_error", wError},
        {"seconds", seconds},
        {"U", std::string(uPath)},
        {"V", std::string(vPath)}};
    if (xError)
      report["activation_error"] = *xError;
    if (emitKernel)
      report["kernel"] = std::string(kPath);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    return 0;
  }
  llvm::outs() << fmt::format(
      "factorize: {} [{}, {}] -> U [{}, {}] @ V [{}, {}]\n"
      "  rank:      {} = {} tiles of {} (exact {:.1f} for ratio {}; threshold {})\n"
      "  ratio:     {:.4f} of the parameters removed ({} -> {})\n"
      "  energy:    {:.2f}% of sum(sigma^2) kept{}\n"
      "  error:     ||W - UV|| / ||W|| = {:.4g}\n",
      input.getValue(), W->rows, W->cols, W->rows, rank->rank, rank->rank, W->cols, rank->rank,
      rank->rank / tileSize, tileSize, rank->exactRank, double(ratio), double(threshold),
      rank->achievedRatio, W->rows * W->cols, rank->rank * (W->rows + W->cols), 100 * energy,
      X ? " (of the whitened L^T W)" : "", wError);
  if (xError)
    llvm::outs() << fmt::format("  on X:      ||X(W - UV)|| / ||XW|| = {:.4g} (whitened by {})\n",
                                *xError, activations.getValue());
  llvm::outs() << fmt::format("  sigma:     {}\n  time:      {:.2f} s\n  wrote:     {}, {}{}\n",
                              sigma == factorize::SigmaPlacement::Split ? "sqrt split into U and V"
                                                                        : "into V",
                              seconds, uPath.str(), vPath.str(),
                              emitKernel ? ", " + kPath.str().str() : "");
  return 0;
}

} // namespace tessel::driver
