//===- compiler/Compile.cpp - The one compile path --------------------------===//
#include "compiler/Compile.h"

#include "backend/Backend.h"
#include "frontend/TileGen.h"
#include "ir/Verifier.h"
#include "passes/BlockParams.h"
#include "compiler/BlockPlanner.h"
#include "passes/Pipelines.h"
#include "passes/Policy.h"
#include "passes/TargetGeometry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>
#include <functional>

namespace tessel::compiler {
namespace {

constexpr llvm::StringLiteral kPlannerStep = "select-blocks";

/// TileGen's options for `target`: its tile geometry, and the policy's share
/// of a partition's SBUF for the transposed strip and first row block.
TileGenOptions tileGenOptionsFor(const runtime::Target &target) {
  TileGenOptions options;
  options.geometry = passes::geometryFor(target);
  options.stripBudgetBytes =
      int64_t(double(options.geometry.sbufBytes) * passes::policy::kStripSbufShare);
  options.firstBlockM = passes::policy::kFirstBlockTiles * options.geometry.partitions;
  // Per K block of depth k, the tensor engine spends m N k / (rows cols)
  // cycles on a row block's matmuls, the vector engine m N / partitions /
  // elements-per-cycle adding them up; the K block at which the adds take
  // kMaxAccumulateShare of the matmuls' time, in whole tiles.
  double peCyclesPerK = 1.0 / (double(target.pe_rows) * target.pe_cols * target.tensor_clock_ghz);
  double addCycles = 1.0 / (double(options.geometry.partitions) * target.vector_elems_per_cycle *
                            target.vector_clock_ghz);
  double minK = addCycles / peCyclesPerK / passes::policy::kMaxAccumulateShare;
  options.minKBlock = int64_t(llvm::alignTo(int64_t(std::ceil(minK)), options.geometry.partitions));
  return options;
}

/// TileGen with `blocks`, verified: a kernel TileGen builds wrong is a bug
/// of tessel's, not the user's.
std::unique_ptr<ir::Kernel> generateKernel(Frontend &fe, const ir::BlockConfig &blocks,
                                           const runtime::Target &target,
                                           DiagnosticEngine &diags) {
  TileGenOptions options = tileGenOptionsFor(target);
  options.blocks = blocks;
  auto kernel = generateTileIR(*fe.kernel, options, diags);
  if (!kernel)
    return nullptr;
  if (!ir::verifyKernel(*kernel, diags)) {
    diags.error(llvm::SMLoc(), "internal error: TileGen produced invalid tile IR for kernel '" +
                                   kernel->name + "' (please report this)");
    return nullptr;
  }
  return kernel;
}

/// The returned expression under any transposes: the one whose rows the
/// row strip `m` tiles and whose columns the block `n` tiles.
const ast::Expr &stripExpr(const ast::Kernel &kernel) {
  const ast::Expr *e = kernel.returnStmt().value.get();
  while (e->kind == ast::ExprKind::Transpose)
    e = e->lhs.get();
  return *e;
}

int64_t resultColumns(const ast::Kernel &kernel) { return stripExpr(kernel).type.cols; }

/// Fills `shape`'s chain widths when the kernel returns X @ W1 @ ... @ Wn
/// (left-associated, every operand a parameter of one dtype, maybe
/// transposed); leaves them empty otherwise.
void chainShape(const ast::Kernel &kernel, PlanShape &shape) {
  const ast::Expr &e = stripExpr(kernel);
  auto isParam = [&](const ast::Expr &x) {
    return x.kind == ast::ExprKind::Ref && x.type.dtype == e.type.dtype &&
           llvm::any_of(kernel.params, [&](const ast::Param &p) { return p.name == x.name; });
  };
  std::vector<int64_t> widths;
  const ast::Expr *cur = &e;
  for (; cur->kind == ast::ExprKind::MatMul; cur = cur->lhs.get()) {
    if (!isParam(*cur->rhs))
      return;
    widths.push_back(cur->rhs->type.cols);
  }
  if (widths.empty() || !isParam(*cur))
    return;
  widths.push_back(cur->type.cols);
  shape.chainDims.assign(widths.rbegin(), widths.rend());
  shape.contraction = shape.chainDims.front();
  shape.elementBytes = e.type.dtype == ast::DType::BF16 ? 2 : 4;
}

/// True when the kernel is an MLP block with a down projection: a matmul
/// whose left operand is an elementwise combination (activation, product,
/// sum) of matmuls, through assignments and transposes.
bool hasMlpHandoff(const ast::Kernel &kernel) {
  std::function<const ast::Expr *(const ast::Expr *)> resolve = [&](const ast::Expr *e) {
    while (e->kind == ast::ExprKind::Transpose)
      e = e->lhs.get();
    if (e->kind == ast::ExprKind::Ref)
      for (const ast::Stmt &s : kernel.body)
        if (s.name == e->name)
          return resolve(s.value.get());
    return e;
  };
  // Statements share values (`h = silu(g) * g`), so the expressions form a
  // DAG: each walk visits a node once, or it takes exponential time.
  llvm::DenseMap<const ast::Expr *, bool> matmulBelow;
  std::function<bool(const ast::Expr *)> hasMatmul = [&](const ast::Expr *e) {
    e = resolve(e);
    if (auto it = matmulBelow.find(e); it != matmulBelow.end())
      return it->second;
    bool found = e->kind == ast::ExprKind::MatMul || (e->lhs && hasMatmul(e->lhs.get())) ||
                 (e->rhs && hasMatmul(e->rhs.get()));
    return matmulBelow[e] = found;
  };
  llvm::DenseSet<const ast::Expr *> searched;
  std::function<bool(const ast::Expr *)> search = [&](const ast::Expr *e) {
    e = resolve(e);
    if (!searched.insert(e).second)
      return false; // already searched, and found nothing then
    if (e->kind == ast::ExprKind::MatMul) {
      const ast::Expr *lhs = resolve(e->lhs.get());
      if ((lhs->kind == ast::ExprKind::Binary || lhs->kind == ast::ExprKind::Unary) && hasMatmul(lhs))
        return true;
    }
    return (e->lhs && search(e->lhs.get())) || (e->rhs && search(e->rhs.get()));
  };
  return search(kernel.returnStmt().value.get());
}

/// --mlp-form=one-kernel on a built kernel: the hand-off left in HBM (the
/// strip did not fit, so TileGen K-blocked the down projection), or null.
const ir::AllocOp *hbmHandoff(const ir::Kernel &kernel) {
  for (const auto &op : kernel.body.ops)
    if (const auto *alloc = llvm::dyn_cast<ir::AllocOp>(op.get());
        alloc && alloc->result->type.space == ir::MemSpace::HBM &&
        alloc->result->role == ir::TensorRole::Scratch)
      return alloc;
  return nullptr;
}

/// The planner's step: every candidate is built through `passes` up to
/// `allocate` (which would place or spill it) and measured by the cost
/// model; its trial builds report nothing.
llvm::Expected<BlockPlan> planBlocks(Frontend &fe,
                                                       const ir::BlockConfig &given,
                                                       llvm::ArrayRef<std::string> passes,
                                                       const runtime::Target &target,
                                                       std::map<std::string, int64_t> projectionColumns,
                                                       unsigned &builds, bool oneKernel) {
  auto allocate = llvm::find(passes, "allocate");
  llvm::ArrayRef<std::string> upToAllocate(passes.begin(), allocate);
  passes::InstrumentationOptions trial;
  trial.verifyEach = false;
  std::vector<std::string> twoKernel = tessel::passes::twoKernelForm(upToAllocate);
  auto buildAndMeasure =
      [&](const ir::BlockConfig &request) -> std::optional<BuiltCandidate> {
    ++builds;
    ir::BlockConfig blocks = request;
    bool two = blocks.has(kTwoKernelKey);
    blocks.erase(kTwoKernelKey);
    DiagnosticEngine quiet = DiagnosticEngine::quiet(fe.sourceMgr);
    auto kernel = buildKernel(fe, blocks, two ? llvm::ArrayRef<std::string>(twoKernel) : upToAllocate,
                              target, quiet, trial);
    if (!kernel)
      return std::nullopt;
    BuiltCandidate built{kernel->blockParams,
                                           passes::analysis::analyzeKernel(*kernel, target)};
    if (two)
      built.blocks.set(kTwoKernelKey, 1);
    return built;
  };
  PlanShape shape{resultRows(*fe.kernel), resultColumns(*fe.kernel)};
  chainShape(*fe.kernel, shape);
  shape.projectionColumns = std::move(projectionColumns);
  shape.oneKernel = oneKernel;
  shape.splittable = !oneKernel && twoKernel.size() < upToAllocate.size() && hasMlpHandoff(*fe.kernel);
  return compiler::planBlocks(given, shape, target, buildAndMeasure);
}

} // namespace

bool loadSourceFile(llvm::SourceMgr &sm, const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "cannot read '" << path << "': " << buffer.getError().message() << "\n";
    return false;
  }
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return true;
}

bool runFrontend(Frontend &fe, const std::string &path, const std::vector<Define> &defines,
                 const std::string &kernelName) {
  // A caller that read the input already (stdin, to tell its format) loaded it.
  if (fe.sourceMgr.getNumBuffers() == 0 && !loadSourceFile(fe.sourceMgr, path))
    return false;
  fe.diags = std::make_unique<DiagnosticEngine>(fe.sourceMgr);
  fe.module = parseAndCheck(*fe.diags, defines);
  if (!fe.module || fe.diags->hadError())
    return false;
  auto names = [&] {
    return llvm::join(llvm::map_range(fe.module->kernels, [](const ast::Kernel &k) { return k.name; }),
                      ", ");
  };
  if (kernelName.empty()) {
    if (fe.module->kernels.size() != 1) {
      fe.diags->error(llvm::SMLoc(), "'" + path + "' holds " +
                                         std::to_string(fe.module->kernels.size()) + " kernels (" +
                                         names() + "); choose one with -k KERNEL");
      return false;
    }
    fe.kernel = &fe.module->kernels.front();
    return true;
  }
  fe.kernel = fe.module->findKernel(kernelName);
  if (!fe.kernel) {
    fe.diags->error(llvm::SMLoc(), "no kernel named '" + kernelName + "' in '" + path +
                                       "'; it defines: " + names());
    return false;
  }
  return true;
}

std::unique_ptr<ir::Kernel> compileKernel(Frontend &fe, const CompileOptions &options,
                                          const runtime::Target &target) {
  DiagnosticEngine &diags = *fe.diags;
  auto fail = [&](const llvm::Twine &message) -> std::unique_ptr<ir::Kernel> {
    diags.error(fe.kernel->loc, message);
    return nullptr;
  };

  if (llvm::Error err = passes::checkCodegenGeometry(target))
    return fail(llvm::toString(std::move(err)));

  // 1. The blocks given, checked once against the kernel and the target.
  std::map<std::string, int64_t> projectionColumns;
  ir::BlockConfig known = tileGenBlockParams(fe, target, &projectionColumns);
  if (llvm::Error err = passes::validateBlockConfig(options.blocks, known,
                                                    resultRows(*fe.kernel), target))
    return fail(llvm::toString(std::move(err)));

  const char *form = options.mlpForm == passes::MlpForm::OneKernel ? "one-kernel" : "two-kernel";
  if (options.mlpForm != passes::MlpForm::Auto && !hasMlpHandoff(*fe.kernel))
    return fail(llvm::Twine("--mlp-form=") + form + ": kernel @" + fe.kernel->name +
                " has no down projection to fuse or split: its matmuls read no elementwise "
                "result of matmuls (an MLP block is h = silu(X @ Wg) * (X @ Wu); return h @ Wd)");

  // 2. The passes; a leading select-blocks is the planner's step, taken here.
  llvm::ArrayRef<std::string> passes = options.passes;
  bool plan = !passes.empty() && passes.front() == kPlannerStep;
  if (plan)
    passes = passes.drop_front();
  if (llvm::is_contained(passes, kPlannerStep))
    return fail("select-blocks chooses the blocks TileGen builds the kernel with, so it comes "
                "before every other pass: list it first (e.g. "
                "--passes=select-blocks,implicit-transpose,fuse)");

  // 3. The other blocks: planned from the cost model, or TileGen's defaults.
  ir::BlockConfig blocks = options.blocks;
  std::vector<std::string> notes;
  std::vector<std::string> twoKernelPasses; // the planner chose an MLP's two-kernel form
  if (plan) {
    unsigned builds = 0;
    auto start = std::chrono::steady_clock::now();
    auto planned = planBlocks(fe, blocks, passes, target, std::move(projectionColumns), builds,
                              options.mlpForm == passes::MlpForm::OneKernel);
    if (options.instrumentation.timePasses) {
      llvm::errs() << llvm::formatv(
          "// select-blocks (the block planner, before TileGen): {0:F3} ms, {1} configurations "
          "built\n",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count(),
          builds);
      if (planned)
        for (const PlanStep &s : planned->steps)
          llvm::errs() << llvm::formatv("//   {0,-12} {1,10:F3} ms, {2} built, {3} ranked by the "
                                        "static model without a build\n",
                                        s.name, s.ms, s.built, s.ranked);
    }
    if (!planned) {
      // The candidates were built quietly: build once more to say why.
      std::string why = llvm::toString(planned.takeError());
      if (!generateKernel(fe, blocks, target, diags))
        return nullptr;
      return fail("select-blocks: kernel @" + fe.kernel->name + " on target '" + target.name +
                  "': " + why);
    }
    blocks = planned->blocks;
    notes = std::move(planned->notes);
    if (planned->twoKernel) {
      twoKernelPasses = tessel::passes::twoKernelForm(passes);
      passes = twoKernelPasses;
    }
  }

  // 4. TileGen with those blocks, then the passes.
  auto kernel = generateKernel(fe, blocks, target, diags);
  if (!kernel)
    return nullptr;
  kernel->notes = std::move(notes);
  if (!runPasses(*kernel, passes, target, diags, options.instrumentation))
    return nullptr;
  if (options.mlpForm == passes::MlpForm::OneKernel)
    if (const ir::AllocOp *handoff = hbmHandoff(*kernel)) {
      const ir::TensorType &t = handoff->result->type;
      int64_t m = kernel->blockParams.lookup(ir::BlockConfig::kRowStrip);
      int64_t groups = (t.dims[0].size + kernel->geometry.partitions - 1) / kernel->geometry.partitions;
      int64_t bytes = groups * m * ir::dtypeBytes(t.dtype);
      bool smallest = m <= kernel->geometry.partitions;
      return fail(llvm::formatv("--mlp-form=one-kernel: the strip of %{0} ([{1}, {2}] {3} at m = "
                                "{2}) needs {4} bytes per partition, which does not fit SBUF ({5} "
                                "bytes per partition on target '{6}') beside the kernel's other "
                                "buffers, so it stays in HBM; use {7}--mlp-form=two-kernel",
                                handoff->result->name, t.dims[0].size, m, ir::dtypeName(t.dtype),
                                bytes, target.sbuf_bytes_per_partition, target.name,
                                smallest ? "" : "a smaller --block m or ")
                      .str());
    }
  return kernel;
}

std::unique_ptr<ir::Kernel> buildKernel(Frontend &fe, const ir::BlockConfig &blocks,
                                        llvm::ArrayRef<std::string> passes,
                                        const runtime::Target &target, DiagnosticEngine &diags,
                                        const passes::InstrumentationOptions &instrumentation) {
  auto kernel = generateKernel(fe, blocks, target, diags);
  if (!kernel || !runPasses(*kernel, passes, target, diags, instrumentation))
    return nullptr;
  return kernel;
}

int64_t resultRows(const ast::Kernel &kernel) { return stripExpr(kernel).type.rows; }

/// The size of the dimension labelled `label` in `kernel`'s HBM tensors (its
/// SBUF tiles hold it rounded up to whole tiles); 0 when none has it.
static int64_t hbmDimSize(const ir::Kernel &kernel, llvm::StringRef label) {
  for (unsigned id = 0; id < kernel.numValues(); ++id) {
    const ir::TensorType &type = kernel.valueById(id)->type;
    if (type.space != ir::MemSpace::HBM)
      continue;
    for (const ir::Dim &dim : type.dims)
      if (dim.label == label)
        return dim.size;
  }
  return 0;
}

ir::BlockConfig tileGenBlockParams(Frontend &fe, const runtime::Target &target,
                                   std::map<std::string, int64_t> *projectionColumns,
                                   int64_t *contraction) {
  ir::BlockConfig params{{ir::BlockConfig::kRowStrip.str(), 0},
                         {ir::BlockConfig::kColumnBlock.str(), 0},
                         {ir::BlockConfig::kContraction.str(), 0}};
  // The projections' dimension labels are TileGen's: build the kernel once
  // at the defaults (a kernel that fails here fails again, with its error,
  // when built for real).
  std::map<std::string, int64_t> columns;
  DiagnosticEngine quiet = DiagnosticEngine::quiet(fe.sourceMgr);
  std::unique_ptr<ir::Kernel> kernel = generateTileIR(*fe.kernel, tileGenOptionsFor(target), quiet, &columns);
  for (const auto &entry : columns)
    params.set(entry.first, 0);
  if (projectionColumns)
    *projectionColumns = std::move(columns);
  if (contraction)
    *contraction = kernel ? hbmDimSize(*kernel, ir::BlockConfig::kContraction.upper()) : 0;
  return params;
}

bool runPipeline(ir::Kernel &kernel, const CompileOptions &options,
                 const runtime::Target &target, DiagnosticEngine &diags,
                 llvm::StringRef dumpSubdir) {
  if (llvm::Error err =
          passes::validateBlockConfig(options.blocks, kernel.blockParams, /*rows=*/0, target)) {
    diags.error(kernel.loc, llvm::toString(std::move(err)));
    return false;
  }
  for (const auto &[name, value] : options.blocks)
    if (kernel.blockParams.lookup(name) != value) {
      diags.error(kernel.loc, "--block " + name + "=" + std::to_string(value) +
                                  ": tile IR cannot be re-tiled (kernel @" + kernel.name +
                                  "'s loop nests are built for " + kernel.blockParams.str() +
                                  "); give --block to tessel compile or tessel run with the "
                                  "kernel's .tsl source");
      return false;
    }
  passes::InstrumentationOptions instr = options.instrumentation;
  if (!instr.dumpDir.empty() && !dumpSubdir.empty()) {
    llvm::SmallString<128> dir(instr.dumpDir);
    llvm::sys::path::append(dir, dumpSubdir);
    instr.dumpDir = std::string(dir);
  }
  return runPasses(kernel, options.passes, target, diags, instr);
}

bool runPasses(ir::Kernel &kernel, llvm::ArrayRef<std::string> names,
               const runtime::Target &target, DiagnosticEngine &diags,
               const passes::InstrumentationOptions &instrumentation) {
  passes::PassManager pm(instrumentation);
  for (const std::string &name : names)
    pm.addPass(name); // the command line's names were checked against the registry
  passes::PassContext ctx{target, diags};
  bool ok = pm.run(kernel, ctx);
  if (instrumentation.timePasses)
    pm.printTimings(llvm::errs());
  if (instrumentation.stats)
    pm.statistics().print(llvm::errs());
  return ok;
}

llvm::Expected<runtime::Program> emitProgram(ir::Kernel &kernel, const runtime::Target &target,
                                             const llvm::SourceMgr *sources) {
  if (auto err = backend::assignStackAddresses(kernel, target, sources))
    return std::move(err);
  return backend::lowerToProgram(kernel, target, sources);
}

} // namespace tessel::compiler
