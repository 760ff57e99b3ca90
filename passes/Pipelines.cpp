//===- passes/Pipelines.cpp - The named pipelines -------------------------===//
//
// Each pipeline is one function reading top to bottom. Only registered passes
// may appear (tests/unit/passes/RegistryTest.cpp checks every name).
// `select-blocks` comes first, not after strip-cache as the first design listed it:
// block sizes shape TileGen's loop nests, so it is the block planner's step
// before TileGen (compiler/Compile.cpp), measuring each candidate built through
// the passes after it. `schedule` runs before `allocate`, not
// last as the first design listed it: it sets prefetch depths (buffer counts), which
// allocation must then place; instruction order stays program order, since
// the engines run asynchronously and the simulator orders them by regions.
//
//===----------------------------------------------------------------------===//
#include "passes/Pipelines.h"

#include "llvm/ADT/StringExtras.h"

namespace tessel::passes {
namespace {

struct PassList {
  std::vector<std::string> names;
  void add(llvm::StringRef name) { names.push_back(name.str()); }
};

// -O0: the straightforward form as TileGen wrote it; the backend's scope-based
// stack allocator places the buffers.
PassList buildO0(const PipelineParams &) { return {}; }

// --pipeline=naive-fused: the paper's naive fused kernel (Algorithm 1), which
// recomputes the intermediate once per output column block of width `n`.
PassList buildNaiveFused(const PipelineParams &) {
  PassList pl;
  pl.add("implicit-transpose"); // before fuse: producers emit the layout consumers read
  pl.add("fuse");               // the strip is recomputed in every column block
  pl.add("schedule");           // prefetch depths: before allocate places the buffers
  pl.add("allocate");           // after every pass that creates or resizes buffers
  return pl;
}

// -O2: the NeuronMM fused kernel (docs/passes.md); an MLP's two-kernel form
// leaves its gated result in HBM.
PassList buildO2(const PipelineParams &params) {
  PassList pl;
  pl.add("select-blocks");      // first: candidates are built through the passes below
  pl.add("implicit-transpose"); // before fuse: producers emit the layout consumers read
  pl.add("fuse");
  pl.add("strip-cache");        // hoists what fuse placed in the column loop
  pl.add("strip-accumulate");   // K-blocked sums straight into the cached strip
  pl.add("fuse-siblings");      // after the chains are fused: nests reading one strip share it
  pl.add("fuse-epilogue");      // elementwise ops where the merged nests store their operands
  pl.add("fuse-rows");          // row-wise chains (softmax) per row strip, in SBUF
  if (params.mlpForm != MlpForm::TwoKernel)
    pl.add("fuse-handoff");     // the MLP's gated strip feeds the down projection in SBUF
  pl.add("forward-copies");     // after the fusions: ops write their strips without a tile
  pl.add("fold-activation-inputs"); // after forward-copies: the shift feeds the activation alone
  pl.add("defer-row-scale");    // softmax's 1 / sum on P @ V's result, not on P
  pl.add("fold-row-sums");      // after forward-copies: the activation writes the summed strip
  pl.add("io-transpose");       // the input's transposes on the cheaper engine, before loads widen
  pl.add("widen-columns");      // longer runs per partition, where the model finds it faster
  pl.add("widen-elementwise");  // elementwise loops in tiles wider than a PSUM bank
  pl.add("widen-loads");        // after the nests are final: several tiles per transfer
  pl.add("gather-row-partials"); // after the widenings: the row loops' blocks are final
  pl.add("narrow-row-max");     // partial row maxima in bf16, gathered ones too
  pl.add("balance-engines");    // last of the rewrites: the engines' loads are final
  pl.add("schedule");           // prefetch depths: before allocate places the buffers
  pl.add("allocate");           // after every pass that creates or resizes buffers
  return pl;
}

struct NamedPipeline {
  const char *name;
  PassList (*build)(const PipelineParams &);
};

const NamedPipeline kPipelines[] = {
    {"O0", buildO0},
    {"O2", buildO2},
    {"naive-fused", buildNaiveFused},
};

} // namespace

std::vector<std::string> pipelineNames() {
  std::vector<std::string> names;
  for (const NamedPipeline &p : kPipelines)
    names.push_back(p.name);
  return names;
}

llvm::Expected<std::vector<std::string>> buildPipeline(llvm::StringRef name,
                                                       const PipelineParams &params) {
  for (const NamedPipeline &p : kPipelines)
    if (name == p.name)
      return p.build(params).names;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown pipeline '" + name.str() +
                                     "'; known pipelines: " + llvm::join(pipelineNames(), ", "));
}

} // namespace tessel::passes
