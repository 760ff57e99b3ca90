//===- compiler/CompileSession.cpp - One kernel, one target, one build path --===//
#include "compiler/CompileSession.h"

#include "backend/Backend.h"
#include "compiler/BlockPlanner.h"
#include "frontend/TileGen.h"
#include "ir/Verifier.h"
#include "passes/BlockParams.h"
#include "passes/Pipelines.h"
#include "passes/Policy.h"
#include "passes/TargetGeometry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <functional>

namespace tessel::compiler {
namespace {

constexpr llvm::StringLiteral kPlannerStep = "select-blocks";

/// TileGen's options for `target`: its tile geometry, and the policy's share
/// of a partition's SBUF for the transposed strip and first row strip.
TileGenOptions tileGenOptionsFor(const runtime::Target &target) {
  TileGenOptions options;
  options.geometry = passes::geometryFor(target);
  options.stripBudgetBytes =
      int64_t(double(options.geometry.sbufBytes) * passes::policy::kStripSbufShare);
  options.firstBlockM = passes::policy::kFirstBlockTiles * options.geometry.partitions;
  // Per K block of depth k, the tensor engine spends m N k / (rows cols)
  // cycles on a row strip's matmuls, the vector engine m N / partitions /
  // elements-per-cycle adding them up; the K block at which the adds take
  // kMaxAccumulateShare of the matmuls' time, in whole tiles.
  double peCyclesPerK = 1.0 / (double(target.pe_rows) * target.pe_cols * target.tensor_clock_ghz);
  double addCycles = 1.0 / (double(options.geometry.partitions) * target.vector_elems_per_cycle *
                            target.vector_clock_ghz);
  double minK = addCycles / peCyclesPerK / passes::policy::kMaxAccumulateShare;
  options.minKBlock = int64_t(llvm::alignTo(int64_t(std::ceil(minK)), options.geometry.partitions));
  return options;
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

/// The size of the dimension labelled `label` in `kernel`'s HBM tensors (its
/// SBUF tiles hold it rounded up to whole tiles); 0 when none has it.
int64_t hbmDimSize(const ir::Kernel &kernel, llvm::StringRef label) {
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

/// --time-passes: the planner's time and measurements, and each step's.
void printPlanTimes(const BlockPlan *plan, std::chrono::steady_clock::time_point start,
                    unsigned measured) {
  llvm::errs() << llvm::formatv(
      "// select-blocks (the block planner, before TileGen): {0:F3} ms, {1} candidates "
      "measured\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
      measured);
  if (plan)
    for (const PlanStep &s : plan->steps)
      llvm::errs() << llvm::formatv("//   {0,-12} {1,10:F3} ms, {2} measured, {3} ranked by the "
                                    "static model unmeasured\n",
                                    s.name, s.ms, s.measured, s.ranked);
}

} // namespace

CompileSession::CompileSession(Frontend &fe, const runtime::Target &target, CompileOptions options)
    : fe(fe), tgt(target), opts(std::move(options)) {}

std::unique_ptr<ir::Kernel> CompileSession::fail(const llvm::Twine &message) {
  fe.diags->error(fe.kernel->loc, message);
  return nullptr;
}

const BlockNames &CompileSession::blockNames() {
  TileGenOptions options = tileGenOptionsFor(tgt);
  const ir::TileGeometry &g = options.geometry;
  std::vector<int64_t> geometry{g.partitions,    g.maxContraction, g.maxStationary,
                                g.maxMoving,     g.psumBankBytes,  g.psumBytes,
                                g.sbufBytes,     g.sbufAlignBytes, options.stripBudgetBytes,
                                options.firstBlockM, options.minKBlock};
  auto [it, inserted] = fe.blockNames.try_emplace({fe.kernel, std::move(geometry)});
  BlockNames &names = it->second;
  if (!inserted)
    return names;
  names.params = ir::BlockConfig{{ir::BlockConfig::kRowStrip.str(), 0},
                                 {ir::BlockConfig::kColumnBlock.str(), 0},
                                 {ir::BlockConfig::kContraction.str(), 0}};
  // The projections' dimension labels are TileGen's: build the kernel once
  // at the defaults (a kernel that fails here fails again, with its error,
  // when built for real).
  ++fe.tileGenDefaultRuns;
  DiagnosticEngine quiet = DiagnosticEngine::quiet(fe.sourceMgr);
  std::unique_ptr<ir::Kernel> kernel =
      generateTileIR(*fe.kernel, options, quiet, &names.projectionColumns);
  for (const auto &entry : names.projectionColumns)
    names.params.set(entry.first, 0);
  names.contraction = kernel ? hbmDimSize(*kernel, ir::BlockConfig::kContraction.upper()) : 0;
  return names;
}

std::unique_ptr<ir::Kernel> CompileSession::generate(const ir::BlockConfig &blocks,
                                                     DiagnosticEngine &diags) {
  TileGenOptions options = tileGenOptionsFor(tgt);
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

std::optional<Measurement> CompileSession::measure(const ir::BlockConfig &blocks,
                                                   llvm::ArrayRef<std::string> passes,
                                                   const passes::PipelineParams &params) {
  ++numMeasured;
  passes::InstrumentationOptions quietly;
  quietly.verifyEach = false;
  DiagnosticEngine quiet = DiagnosticEngine::quiet(fe.sourceMgr);
  auto kernel = generate(blocks, quiet);
  if (!kernel || !runPasses(*kernel, passes, tgt, quiet, quietly, params))
    return std::nullopt;
  Measurement m;
  m.blocks = kernel->blockParams;
  m.cost = passes::analysis::analyzeKernel(*kernel, tgt);
  m.kernel = std::move(kernel);
  return m;
}

std::optional<Measurement> CompileSession::measure(const ir::BlockConfig &blocks) {
  ++numMeasured;
  Measurement m;
  m.kernel = compile(blocks);
  if (!m.kernel)
    return std::nullopt;
  llvm::Expected<runtime::Program> program = emitProgram(*m.kernel, tgt);
  if (!program) {
    fail(llvm::toString(program.takeError()));
    return std::nullopt;
  }
  m.program = std::move(*program);
  m.blocks = m.kernel->blockParams;
  m.cost = passes::analysis::analyzeKernel(*m.kernel, tgt);
  return m;
}

/// The planner's step: every candidate is measured through `passes` up to
/// `allocate` (which would place or spill it); one that asks for it, through
/// `allocate` (its spill priced), which a pipeline without it cannot build.
llvm::Expected<BlockPlan> CompileSession::plan(const ir::BlockConfig &given,
                                               llvm::ArrayRef<std::string> passes) {
  auto allocate = llvm::find(passes, "allocate");
  llvm::ArrayRef<std::string> upToAllocate(passes.begin(), allocate);
  auto measureCandidate = [&](const BuildRequest &request) -> std::optional<MeasuredCandidate> {
    if (request.throughAllocate && allocate == passes.end())
      return std::nullopt;
    llvm::ArrayRef<std::string> built =
        request.throughAllocate ? llvm::ArrayRef<std::string>(passes.begin(), allocate + 1)
                                : upToAllocate;
    std::optional<Measurement> m = measure(request.blocks, built, request.params);
    if (!m)
      return std::nullopt;
    return MeasuredCandidate{{m->blocks, request.params, request.throughAllocate}, m->cost};
  };
  bool oneKernel = opts.params.mlpForm == passes::MlpForm::OneKernel;
  PlanShape shape{resultRows(*fe.kernel), resultColumns(*fe.kernel)};
  chainShape(*fe.kernel, shape);
  shape.projectionColumns = blockNames().projectionColumns;
  shape.oneKernel = oneKernel;
  shape.splittable = opts.params.mlpForm == passes::MlpForm::Auto &&
                    llvm::is_contained(upToAllocate, "fuse-handoff") && hasMlpHandoff(*fe.kernel);
  return planBlocks({given, opts.params}, shape, tgt, measureCandidate);
}

std::unique_ptr<ir::Kernel> CompileSession::compile(const ir::BlockConfig &given) {
  if (llvm::Error err = passes::checkCodegenGeometry(tgt))
    return fail(llvm::toString(std::move(err)));

  // 1. The blocks given, checked once against the kernel and the target.
  if (llvm::Error err = passes::validateBlockConfig(given, blockNames().params,
                                                    resultRows(*fe.kernel), tgt))
    return fail(llvm::toString(std::move(err)));
  const char *form = opts.params.mlpForm == passes::MlpForm::OneKernel ? "one-kernel" : "two-kernel";
  if (opts.params.mlpForm != passes::MlpForm::Auto && !hasMlpHandoff(*fe.kernel))
    return fail(llvm::Twine("--mlp-form=") + form + ": kernel @" + fe.kernel->name +
                " has no down projection to fuse or split: its matmuls read no elementwise "
                "result of matmuls (an MLP block is h = silu(X @ Wg) * (X @ Wu); return h @ Wd)");

  // 2. The passes; a leading select-blocks is the planner's step, taken here.
  llvm::ArrayRef<std::string> passes = opts.passes;
  bool planned = !passes.empty() && passes.front() == kPlannerStep;
  if (planned)
    passes = passes.drop_front();
  if (llvm::is_contained(passes, kPlannerStep))
    return fail("select-blocks chooses the blocks TileGen builds the kernel with, so it comes "
                "before every other pass: list it first (e.g. "
                "--passes=select-blocks,implicit-transpose,fuse)");

  // 3. The other blocks: planned from the cost model, or TileGen's defaults.
  ir::BlockConfig blocks = given;
  std::vector<std::string> notes;
  passes::PipelineParams params = opts.params; // the planner may choose an MLP's form
  if (planned) {
    unsigned before = numMeasured;
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<BlockPlan> plan = this->plan(blocks, passes);
    if (opts.instrumentation.timePasses)
      printPlanTimes(plan ? &*plan : nullptr, start, numMeasured - before);
    if (!plan) {
      // The candidates were built quietly: build once more to say why.
      std::string why = llvm::toString(plan.takeError());
      if (!generate(blocks, *fe.diags))
        return nullptr;
      return fail("select-blocks: kernel @" + fe.kernel->name + " on target '" + tgt.name +
                  "': " + why);
    }
    blocks = plan->chosen.blocks;
    params = plan->chosen.params;
    notes = std::move(plan->notes);
  }

  // 4. TileGen with those blocks, then the passes.
  auto kernel = generate(blocks, *fe.diags);
  if (!kernel)
    return nullptr;
  kernel->notes = std::move(notes);
  if (!runPasses(*kernel, passes, tgt, *fe.diags, opts.instrumentation, params))
    return nullptr;
  return checkOneKernel(std::move(kernel));
}

/// --mlp-form=one-kernel: the hand-off must have stayed in SBUF.
std::unique_ptr<ir::Kernel> CompileSession::checkOneKernel(std::unique_ptr<ir::Kernel> kernel) {
  if (opts.params.mlpForm != passes::MlpForm::OneKernel)
    return kernel;
  const ir::AllocOp *handoff = hbmHandoff(*kernel);
  if (!handoff)
    return kernel;
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
                            bytes, tgt.sbuf_bytes_per_partition, tgt.name,
                            smallest ? "" : "a smaller --block m or ")
                  .str());
}

int64_t resultRows(const ast::Kernel &kernel) { return stripExpr(kernel).type.rows; }

} // namespace tessel::compiler
