//===- model/EmitKernels.h - --emit-kernels DIR ------------------*- C++ -*-===//
//
// Writes each generated kernel as DIR/<fileName> so it can be inspected,
// tuned or run alone. A file already there with other contents is the
// user's: it is never replaced (an error, checked before any work); one with
// the same contents is left as it is.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_EMITKERNELS_H
#define TESSEL_MODEL_EMITKERNELS_H

#include "model/LayerKernels.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace tessel::model {

/// An error naming the first file of `dir` that holds something else.
llvm::Error checkKernelFiles(llvm::StringRef dir, llvm::ArrayRef<LayerKernel> kernels);

/// Creates `dir` if needed and writes the kernels (checkKernelFiles first).
llvm::Error emitKernelFiles(llvm::StringRef dir, llvm::ArrayRef<LayerKernel> kernels);

} // namespace tessel::model

#endif
