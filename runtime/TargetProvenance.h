//===- runtime/TargetProvenance.h - Where each target value comes from -*- C++ -*-===//
//
// Every field of a target has a provenance: published (a document says it),
// derived (arithmetic on documents), derived from a measured point of the
// fidelity set, assumed (no source), or fitted by `tessel calibrate`. The
// built-in targets' provenance is runtime/TargetProvenance.def; a target file
// carries its own in "_provenance" (what --dump-target writes) and
// "_calibration" (what calibrate writes). docs/targets.md lists them.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TARGETPROVENANCE_H
#define TESSEL_RUNTIME_TARGETPROVENANCE_H

#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::runtime {

enum class ProvenanceKind { Published, Derived, DerivedFromPoint, Assumed, Fitted, Unrecorded };

/// "published", "derived", "derived-from-point", "assumed", "fitted", "unrecorded".
llvm::StringRef provenanceKindName(ProvenanceKind k);
std::optional<ProvenanceKind> parseProvenanceKind(llvm::StringRef name);

struct FieldProvenance {
  ProvenanceKind kind = ProvenanceKind::Unrecorded;
  /// Document and quote, documents and arithmetic, the point and how, why
  /// assumed, or the calibration that fitted it.
  std::string source;
  /// Fidelity points (bench/fidelity/measured.csv names) whose residuals this
  /// value or the rule it feeds was introduced or chosen while looking at.
  std::vector<std::string> shapedBy;
};

/// Field name -> provenance, one entry for every field of TargetFields.def.
using TargetProvenance = std::map<std::string, FieldProvenance>;

/// The provenance of the built-in target `name` (trn1, trn2), or none.
std::optional<TargetProvenance> builtinTargetProvenance(llvm::StringRef name);

/// The provenance of `t` loaded from `nameOrPath` (as loadTarget reads it):
/// a built-in target's table; for a file, its "_calibration" parameters
/// (fitted), "_provenance" entries whose recorded value is still the field's
/// value, and its "base"'s provenance for the fields it does not give; every
/// other field unrecorded.
llvm::Expected<TargetProvenance> loadTargetProvenance(llvm::StringRef nameOrPath, const Target &t);

/// Adds a "_provenance" member ({"field": {"kind", "value", "source",
/// "shaped_by"}}, TargetFields.def order) to a target's JSON text as
/// targetToJSONText writes it.
std::string withProvenanceJSON(llvm::StringRef targetJson, const Target &t, const TargetProvenance &p);

} // namespace tessel::runtime

#endif
