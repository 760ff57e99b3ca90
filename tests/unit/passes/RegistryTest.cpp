//===- tests/unit/passes/RegistryTest.cpp - PassRegistry.def and pipelines -===//
#include "passes/PassRegistry.h"
#include "passes/Pipelines.h"

#include <gtest/gtest.h>

#include <set>

using namespace tessel::passes;

TEST(PassRegistry, NamesAreUniqueAlphabeticalAndMatchThePass) {
  llvm::StringRef prev;
  for (const PassInfo &info : registeredPasses()) {
    EXPECT_LT(prev, info.name) << "PassRegistry.def must stay alphabetical and unique";
    prev = info.name;
    auto pass = info.create();
    ASSERT_TRUE(pass);
    EXPECT_EQ(pass->name(), info.name) << "a pass's name() is its registry name";
    EXPECT_FALSE(pass->description().empty()) << info.name.str();
    EXPECT_EQ(info.name.lower(), info.name.str()) << "pass names are kebab-case";
    EXPECT_EQ(lookupPass(info.name), &info);
  }
  EXPECT_EQ(lookupPass("no-such-pass"), nullptr);
}

TEST(PassRegistry, ParsesPassLists) {
  auto names = parsePassList(" allocate , allocate");
  ASSERT_TRUE(bool(names)) << llvm::toString(names.takeError());
  EXPECT_EQ(*names, (std::vector<std::string>{"allocate", "allocate"}));
  EXPECT_EQ(joinPassList(*names), "allocate,allocate");

  auto empty = parsePassList("");
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->empty());

  auto hole = parsePassList("allocate,,allocate");
  ASSERT_FALSE(bool(hole));
  EXPECT_NE(llvm::toString(hole.takeError()).find("empty pass name"), std::string::npos);
}

TEST(PassRegistry, UnknownNameSuggestsTheClosestAndListsAll) {
  auto typo = parsePassList("allocate,alocate");
  ASSERT_FALSE(bool(typo));
  std::string msg = llvm::toString(typo.takeError());
  EXPECT_NE(msg.find("unknown pass 'alocate' (did you mean 'allocate'?); known passes: allocate"), std::string::npos) << msg;
  for (const PassInfo &info : registeredPasses())
    EXPECT_NE(msg.find(info.name.str()), std::string::npos) << msg;
  // Far from every name: no suggestion.
  EXPECT_EQ(unknownPassMessage("zzzzzzzzzzzzzzzz").find("did you mean"), std::string::npos);
}

TEST(Pipelines, EveryPipelineNamesOnlyRegisteredPasses) {
  for (const std::string &name : pipelineNames()) {
    auto passes = buildPipeline(name);
    ASSERT_TRUE(bool(passes)) << name;
    for (const std::string &pass : *passes)
      EXPECT_TRUE(lookupPass(pass)) << "pipeline " << name << " names unregistered pass " << pass;
  }
}

TEST(Pipelines, PresetsHaveTheDesignedShape) {
  EXPECT_TRUE(buildPipeline("O0")->empty()) << "-O0 is the straightforward form";
  for (const char *name : {"O2", "naive-fused"}) {
    std::vector<std::string> passes = *buildPipeline(name);
    std::set<std::string> unique(passes.begin(), passes.end());
    EXPECT_EQ(unique.size(), passes.size()) << name << " runs a pass twice";
    // allocate places buffers after every pass that creates them.
    auto alloc = std::find(passes.begin(), passes.end(), "allocate");
    ASSERT_NE(alloc, passes.end()) << name;
    for (auto it = alloc + 1; it != passes.end(); ++it)
      EXPECT_EQ(*it, "schedule") << name << ": only schedule may follow allocate";
  }
  auto unknown = buildPipeline("O3");
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("known pipelines: O0, O2, naive-fused"),
            std::string::npos);
}
