//===- driver/CompileOptions.h - The command line's compile options -*- C++ -*-===//
//
// The flags of PipelineOptions turned into compiler::CompileOptions: the
// passes (-O, --pipeline, --passes, --mlp-form), the instrumentation, the
// blocks of --block or, under --tuned, the tune cache's. The compiler never
// sees the tune cache: --tuned becomes blocks here.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DRIVER_COMPILEOPTIONS_H
#define TESSEL_DRIVER_COMPILEOPTIONS_H

#include "compiler/Compile.h"
#include "driver/CommonOptions.h"
#include "runtime/Target.h"

namespace tessel::driver {

/// For a kernel compiled from source (`fe`); `defaultPipeline` when no -O,
/// --pipeline, --passes or --tuned is given. Returns false after reporting.
bool resolveCompileOptions(compiler::Frontend &fe, const PipelineOptions &options,
                           const runtime::Target &target, compiler::CompileOptions &out,
                           llvm::StringRef defaultPipeline = "O0");

/// For tile IR, which has no source to re-tile or tune: --tuned is an error.
/// Returns false after reporting.
bool resolveTirOptions(const PipelineOptions &options, compiler::CompileOptions &out);

} // namespace tessel::driver

#endif
