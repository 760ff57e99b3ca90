//===- runtime/BlasThreads.h - OpenBLAS's idle thread pool ------*- C++ -*-===//
//
// OpenBLAS starts its worker threads when the library loads, and an idle
// worker spins (sched_yield) for about 2^28 cycles before it sleeps: some
// 0.1 CPU s per worker in every process, paid for nothing by a timing-only
// run (no BLAS call at all), a tune worker or a short lit test. Measured on
// DeepSeek-V3 up_proj at M=131072 -O0 timing-only: 0.29 CPU s, 0.16 of it
// the simulation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_BLASTHREADS_H
#define TESSEL_RUNTIME_BLASTHREADS_H

namespace tessel::runtime {

/// Stops BLAS's idle worker threads, if the BLAS has a pool it can stop
/// (OpenBLAS); the first later call that uses threads starts them again, so
/// results and parallelism of BLAS calls are unchanged. Call it once at
/// startup, before any thread of the program's own calls BLAS.
void releaseIdleBlasThreads();

} // namespace tessel::runtime

#endif
