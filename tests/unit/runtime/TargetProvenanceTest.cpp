//===- tests/unit/runtime/TargetProvenanceTest.cpp - Every value's source ===//
#include "runtime/TargetProvenance.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tessel::runtime;

namespace {

const char *const allFields[] = {
#define TARGET_FIELD(TYPE, NAME, CONSTRAINT, UNIT, DESC) #NAME,
#include "runtime/TargetFields.def"
};

// docs/targets.md: every field of every built-in target says where its value
// comes from; a new field without a provenance line fails here.
TEST(TargetProvenance, EveryFieldOfTheBuiltinTargetsHasOne) {
  for (const std::string &name : builtinTargetNames()) {
    SCOPED_TRACE(name);
    std::optional<TargetProvenance> p = builtinTargetProvenance(name);
    ASSERT_TRUE(p) << "no provenance table for built-in target " << name;
    for (const char *field : allFields) {
      auto it = p->find(field);
      ASSERT_NE(it, p->end()) << field;
      EXPECT_NE(it->second.kind, ProvenanceKind::Unrecorded) << field;
      EXPECT_NE(it->second.kind, ProvenanceKind::Fitted) << field << ": a built-in value is never fitted";
      EXPECT_FALSE(it->second.source.empty()) << field;
    }
    EXPECT_EQ(p->size(), std::size(allFields)) << "a provenance line names a field TargetFields.def lacks";
  }
}

// A value derived from a measured point names that point among those it was
// shaped by, so that bench/fidelity.py can hold the point in-sample.
TEST(TargetProvenance, ValuesFromAPointNameIt) {
  for (const std::string &name : builtinTargetNames()) {
    std::optional<TargetProvenance> p = builtinTargetProvenance(name);
    ASSERT_TRUE(p) << name;
    for (const auto &[field, f] : *p)
      if (f.kind == ProvenanceKind::DerivedFromPoint)
        EXPECT_FALSE(f.shapedBy.empty()) << name << " " << field;
  }
}

TEST(TargetProvenance, KindNamesRoundTrip) {
  for (ProvenanceKind k : {ProvenanceKind::Published, ProvenanceKind::Derived, ProvenanceKind::DerivedFromPoint,
                           ProvenanceKind::Assumed, ProvenanceKind::Fitted, ProvenanceKind::Unrecorded})
    EXPECT_EQ(parseProvenanceKind(provenanceKindName(k)), k);
  EXPECT_FALSE(parseProvenanceKind("documented"));
}

std::string writeTemp(const std::string &text) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("provenance", "json", path));
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << text;
  return std::string(path);
}

// A file written by --dump-target keeps its provenance where the value is
// unchanged; an edited value is unrecorded, saying what it was.
TEST(TargetProvenance, AFileKeepsTheProvenanceOfUnchangedValuesOnly) {
  Target t = trn1Target();
  std::string text = withProvenanceJSON(targetToJSONText(t), t, *builtinTargetProvenance("trn1"));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError()) << text;
  t.hbm_bandwidth_gbs = 300;
  std::string path = writeTemp(text);
  llvm::Expected<TargetProvenance> p = loadTargetProvenance(path, t);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->at("pe_rows").kind, ProvenanceKind::Published);
  EXPECT_EQ(p->at("dma_transfer_overhead_ns").kind, ProvenanceKind::Derived);
  EXPECT_EQ(p->at("launch_device_ns").shapedBy, std::vector<std::string>{"tiny_copy"});
  EXPECT_EQ(p->at("hbm_bandwidth_gbs").kind, ProvenanceKind::Unrecorded);
  EXPECT_NE(p->at("hbm_bandwidth_gbs").source.find("changed from 410"), std::string::npos);
  llvm::sys::fs::remove(path);
}

// What `tessel calibrate` writes: the fitted parameters are "fitted", the
// rest of a file without "_provenance" unrecorded.
TEST(TargetProvenance, CalibratedParametersAreFitted) {
  Target t = trn1Target();
  t.dma_fixed_latency_ns = 1234;
  std::string text = targetToJSONText(t);
  text = text.substr(0, text.rfind('}')) +
         ", \"_calibration\": {\"parameters\": [{\"field\": \"dma_fixed_latency_ns\", \"start\": 1300, "
         "\"fitted\": 1234, \"bounds\": [600, 2000]}]}}";
  std::string path = writeTemp(text);
  llvm::Expected<TargetProvenance> p = loadTargetProvenance(path, t);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->at("dma_fixed_latency_ns").kind, ProvenanceKind::Fitted);
  EXPECT_NE(p->at("dma_fixed_latency_ns").source.find("within [600, 2000]"), std::string::npos);
  EXPECT_EQ(p->at("pe_rows").kind, ProvenanceKind::Unrecorded);
  llvm::sys::fs::remove(path);
}

TEST(TargetProvenance, ABadRecordIsAnErrorNamingTheFile) {
  Target t = trn1Target();
  std::string text = targetToJSONText(t);
  text = text.substr(0, text.rfind('}')) + ", \"_provenance\": {\"pe_rows\": {\"kind\": \"documented\"}}}";
  std::string path = writeTemp(text);
  llvm::Expected<TargetProvenance> p = loadTargetProvenance(path, t);
  ASSERT_FALSE(bool(p));
  std::string msg = llvm::toString(p.takeError());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("'pe_rows' needs a \"kind\""), std::string::npos) << msg;
  llvm::sys::fs::remove(path);
}

} // namespace
