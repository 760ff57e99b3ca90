//===- passes/Policy.h - The compiler's policy numbers ----------*- C++ -*-===//
//
// Numbers that are the compiler's choices, not the hardware's (those are the
// target description's, runtime/TargetFields.def). Each says why it is what
// it is; change one here and every user follows.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_POLICY_H
#define TESSEL_PASSES_POLICY_H

#include "ir/Kernel.h"

#include <cstdint>

namespace tessel::passes::policy {

/// The block planner (select-blocks) keeps this fraction of SBUF free when it
/// picks the largest row strip that fits: room for the allocator's alignment,
/// so a chosen block never spills. Small, because `allocate` places exactly
/// the liveness peak on every compiled kernel the agreement tests cover
/// (tests/unit/analysis); only hand-written IR with odd-sized buffers
/// fragments.
constexpr double kSbufHeadroom = 0.02;

/// TileGen's straightforward form may give the transposed row strip of a
/// matmul's left operand this share of a partition's SBUF: the other half
/// holds the streamed operand tiles, the output tiles and their double
/// buffers.
constexpr double kStripSbufShare = 0.5;

/// implicit-transpose keeps an argument's transpose that every row strip
/// reads (a weight used as W.T) in SBUF, transposed once, while all such
/// buffers take at most this share of a partition's SBUF: the strips,
/// streamed tiles and accumulators the planner sizes need the rest.
constexpr double kResidentTransposeShare = 0.25;

/// The block planner builds row strips 128, 256, ... and stops after this
/// many in a row do not fit SBUF once one has. A taller strip can take less
/// SBUF than a shorter one: past TileGen's strip budget (kStripSbufShare) it
/// K-blocks a contraction it held whole (a factorised Gemma-2-27B MLP on
/// trn1 does not fit at m = 256 but does at m = 512, 2.7x faster than m = 128).
constexpr int kStripMissesBeforeStop = 2;

/// A K-blocked row strip adds each block's partial sums into its fp32 SBUF
/// accumulator on the vector engine. TileGen K-blocks a given row strip
/// whose strip does not fit only with K blocks deep enough that those adds
/// take at most this share of the tensor engine's time for the block (they
/// then overlap the matmuls); shallower, the vector engine would bound the
/// kernel and spilling the strip is no worse.
constexpr double kMaxAccumulateShare = 1.0 / 3;
/// strip-accumulate stores a K-blocked intermediate's running sum in the
/// strip's type (bf16) between K blocks only up to this many blocks: each
/// adds one rounding (unit roundoff 2^-8) where the fp32 accumulator has
/// none. Independent roundings add as a root sum of squares, so 16 of them
/// are typically 4 roundings' worth: half the 8x of one rounding that
/// `tessel run --check` allows (compiler/Reference.h), leaving the other half
/// to the rest of the chain.
constexpr int64_t kMaxStripRoundings = 16;
/// The row strip TileGen tries first when none is given, in partition tiles
/// (AWS's NKI matmul tutorial blocks 4 tiles; 512 rows on trn1); it is
/// halved until its strip fits kStripSbufShare.
constexpr int64_t kFirstBlockTiles = 4;

/// Loads in flight per streamed tile (schedule): the backend rotates each DMA
/// statement over ir::kDmaQueuesPerStatement queues, so more copies than
/// that cannot all be moving.
constexpr int64_t kMaxPrefetch = ir::kDmaQueuesPerStatement;

/// balance-engines moves a copy to the scalar engine only when the cost
/// model predicts the kernel this much faster: below it, the model's error
/// exceeds the gain (a DeepSeek-V3 up projection at M = 2048, trn1, predicted
/// 2.4% faster with its accumulator's evacuation moved, planned another K
/// block around it and ran 1.4% slower), and a kernel whose vector engine
/// is not clearly its bound keeps its form. Attention's row strip gains 25%.
constexpr double kMinEngineMoveGain = 0.10;

/// widen-loads merges a streamed tile's loads into transfers of g partition
/// groups, with g the smallest that sustains this share of the DMA
/// throughput of one transfer for the whole loop (the target's DMA model):
/// beyond it, wider tiles cost SBUF for little bandwidth.
constexpr double kWideLoadShare = 0.9;

/// The same share for a streamed fill (loads into a buffer that already
/// holds every group, widen-columns' K column): wider transfers there cost
/// no SBUF, only the wait of the first reader for its group, so they go
/// further.
constexpr double kWideFillShare = 0.97;

/// widen-loads merges a streamed fill's transfers only in a loop whose loads
/// keep the DMA engines this many times longer than its matmuls the tensor
/// engine (one group per transfer). The simulator: decode-sized MLP blocks
/// (matmuls of at most 128 columns) run 1-13% faster on trn1; a trn1
/// Llama-3.2-1B rank-1536 MLP at M = 1024 (1.8x) ran 4% slower, its first
/// readers waiting for the merged transfers.
constexpr double kFillBoundRatio = 2;

/// io-transpose moves a kernel input's transposing loads to the tensor
/// engine only when the cost model predicts the kernel at least this much
/// faster: below it the two forms are within the model's own error, and the
/// DMA form keeps the tensor engine free and transpose_flops 0.
constexpr double kMinIoTransposeGain = 0.02;

/// widen-columns loads a weight two column blocks at a time only when the
/// cost model predicts the kernel at least this much faster: the wide form
/// holds the blocks' whole K column in SBUF and runs the two blocks in turn,
/// which the model's own error could make a loss. The model under-predicts
/// the gain of longer DMA runs on bandwidth-bound kernels (the factorised
/// Qwen3-8B MLP at M = 128 on trn2: 0.8% predicted, 3.5% simulated), and at
/// 0.5% no MLP-table shape got slower (at 2% 25 decode shapes kept
/// narrower loads that the simulator finds 0.2-3.5% slower).
constexpr double kMinWideColumnGain = 0.005;

/// The block planner takes a shallower K block than a deeper one that also
/// fits only when its predicted latency is at least this much lower: each K
/// block adds one partial sum (one more bf16 rounding of a cached strip,
/// strip-accumulate) and one more fill, and differences below this are
/// within the cost model's own resolution.
constexpr double kShallowerKBlockGain = 0.01;

/// select-blocks gives a projection a column block of its own (narrower
/// than `n`) only when predicted this much faster: the kernel then differs
/// from the one `n` alone builds, and smaller differences are within the
/// cost model's own resolution.
constexpr double kColumnBlockGain = 0.02;

/// select-blocks prices a row strip that does not fit SBUF (built through
/// `allocate`, which spills what does not fit) only when its static bound is
/// this much below the fastest strip that fits, and takes it only when its
/// predicted latency is: the spill's saves and reloads are predicted less
/// closely than resident buffers, and a spilling kernel moves more traffic.
/// On a Llama-3.1-405B SwiGLU MLP at M = 2707 (trn1) the spilling m = 512
/// runs 264 ms against 585 ms for the two-kernel m = 128 that fits.
constexpr double kSpillingStripGain = 0.05;

/// The largest block `tessel tune`'s default space tries for a parameter:
/// the paper's sweeps stop there (Table 3), and past it a strip no longer
/// fits SBUF on trn1; --space may name larger values.
constexpr int64_t kMaxDefaultTuneBlock = 4096;

/// When no K block makes a row strip fit (the strip is then partly spilled
/// by `allocate`), the planner takes the deepest K block whose SBUF peak is
/// within this share of SBUF of the smallest K-blocked peak: every K block
/// saves and reloads the spilled part of the strip once more, while SBUF
/// given to a deeper X block is taken from the strip's resident part. On
/// DeepSeek-V3 up_proj at m = 4096 (trn1) k = 1024 (+14 KiB, 7 blocks) runs
/// 12.5 ms against 14.2 ms for k = 512 (14 blocks) and 15.0 ms for k = 2048
/// (+94 KiB).
constexpr double kSpillDeeperKBlockSbufShare = 1.0 / 12;

/// A spill reload that walks a strip's rows one partition tile per loop
/// iteration is widened to the whole loop's rows (one DMA instead of one per
/// tile) when its staging tile, per copy, takes at most this share of a
/// partition's SBUF: on trn1 a [4096, 128] bf16 slice of an up_proj strip
/// (8 KiB of 192) is, so the rest of SBUF stays for the strip's resident part.
constexpr double kSpillReloadSbufShare = 1.0 / 16;

/// gather-row-partials: the most per-block partials gathered into one row of a
/// tile (a longer row is left to the per-block combines).
constexpr int64_t kMaxGatheredPartials = 512;

} // namespace tessel::passes::policy

#endif
