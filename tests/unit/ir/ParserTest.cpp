//===- tests/unit/ir/ParserTest.cpp - Tile IR parser: round trip, errors ---===//
#include "IRTestUtil.h"

#include "llvm/Support/Casting.h"

#include <cmath>
#include <limits>

using namespace tessel::ir;
using tessel::ir::test::IRFixture;
using tessel::ir::test::kMatmulExample;

namespace {

std::string roundTrip(IRFixture &f, llvm::StringRef text) {
  auto m = f.parse(text);
  EXPECT_TRUE(m) << f.all();
  if (!m)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  printModule(*m, os);
  return os.str();
}

TEST(Parser, MatmulExampleRoundTripsExactly) {
  IRFixture f;
  EXPECT_EQ(roundTrip(f, kMatmulExample), kMatmulExample);
}

TEST(Parser, EveryOpRoundTrips) {
  const char *text = R"(kernel @ops(%X: hbm<bf16, [M:256, N:512]>) -> (%Y: hbm<f32, [M:256, N:512]>) {
  %s = alloc hbm<bf16, [M:4096, R:4096]> spill
  for %i = 0 to 256 step 128 parallel {
    %x = alloc sbuf<bf16, [M:128, N:512]> bufs 2 addr 1024
    dma %x[0 +: 128, 0 +: 512] <- %X[%i +: 128, 0 +: 512]
    dma spill_save %s[%i +: 128, 0 +: 512] <- %x[0 +: 128, 0 +: 512]
    dma spill_reload %x[0 +: 128, 0 +: 512] <- %s[%i +: 128, 0 +: 512]
    %t = alloc sbuf<bf16, [N:128, M:128]>
    dma transpose %t[0 +: 128, 0 +: 128] <- %X[%i +: 128, 0 +: 128]
    %y = alloc sbuf<f32, [M:128, N:512]>
    activation silu %y[0 +: 128, 0 +: 512] <- %x[0 +: 128, 0 +: 512] scale 0.5
    activation exp %y[0 +: 128, 0 +: 512] <- %x[0 +: 128, 0 +: 512]
    tensor_tensor mul %y[0 +: 128, 0 +: 512] <- %x[0 +: 128, 0 +: 512], %y[0 +: 128, 0 +: 512]
    tensor_scalar add %y[0 +: 128, 0 +: 512] <- %y[0 +: 128, 0 +: 512], 1.5
    memset %y[0 +: 128, 0 +: 512], 0.0
    memset %y[0 +: 128, 0 +: 512], -2.0
    dma %Y[%i + 0*2 +: 128, 0 +: 512] <- %y[0 +: 128, 0 +: 512]
  }
}
)";
  IRFixture f;
  std::string once = roundTrip(f, text);
  EXPECT_EQ(roundTrip(f, once), once);
  EXPECT_NE(once.find("dma %Y[%i +: 128"), std::string::npos) << once; // 0*2 folded
  EXPECT_NE(once.find("alloc sbuf<bf16, [M:128, N:512]> bufs 2 addr 1024"), std::string::npos);
  EXPECT_NE(once.find("spill"), std::string::npos);
  EXPECT_NE(once.find("step 128 parallel {"), std::string::npos);
}

TEST(Parser, ExpressionsRoundTrip) {
  const char *text = R"(kernel @e(%X: hbm<bf16, [M:4096, N:4096]>) -> () {
  for %a = 0 to 4 step 1 {
    for %b = %a*2 to min(%a + 10, 3*%a + -1) step 1 {
      dma %X[%a - (%b + 1) +: (%a + %b)*2, -%b +: 2 - -3] <- %X[((%a)) +: 1, 0 +: 1]
    }
  }
}
)";
  IRFixture f;
  std::string once = roundTrip(f, text);
  EXPECT_EQ(roundTrip(f, once), once);
  EXPECT_NE(once.find("min(%a + 10, %a*3 + -1)"), std::string::npos) << once;
  EXPECT_NE(once.find("%X[%a - (%b + 1) +: (%a + %b)*2, 0 - %b +: 5]"), std::string::npos) << once;
}

TEST(Parser, RecordsLocationsAndStructure) {
  IRFixture f;
  auto m = f.parse(kMatmulExample);
  ASSERT_TRUE(m);
  Kernel &k = *m->kernels[0];
  EXPECT_EQ(k.name, "mm");
  ASSERT_EQ(k.args.size(), 3u);
  EXPECT_EQ(k.args[2]->role, TensorRole::Output);
  EXPECT_EQ(k.blockParams.lookup("m"), 512);
  unsigned ops = 0;
  walk(k.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    ++ops;
    EXPECT_TRUE(op.loc.isValid()) << op.mnemonic().str();
    if (Access *w = op.write()) {
      EXPECT_TRUE(w->loc.isValid());
    }
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&op)) {
      ASSERT_EQ(mm->resetOn.size(), 1u);
      EXPECT_EQ(mm->resetOn[0]->name, "k");
      EXPECT_EQ(mm->stationary.base->name, "aT");
    }
  });
  EXPECT_EQ(ops, 18u);
}

TEST(Parser, MultipleKernels) {
  IRFixture f;
  auto m = f.parse("kernel @a() -> () {\n}\n\nkernel @b() -> () {\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kernels.size(), 2u);
}

struct ErrorCase {
  const char *text;
  const char *expected; // "line:col: error: substring"
};

class ParserError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserError, ReportsLocatedError) {
  IRFixture f;
  EXPECT_FALSE(f.parse(GetParam().text));
  EXPECT_TRUE(f.has(GetParam().expected)) << "got:\n" << f.all();
}

#define KERNEL "kernel @k(%A: hbm<bf16, [M:128, N:128]>) -> () {\n"
INSTANTIATE_TEST_SUITE_P(
    Messages, ParserError,
    ::testing::Values(
        ErrorCase{KERNEL "  %a = alloc sbuf<bf16, [M:128, N:128]>\n  dma %a[0 +: 128, 0 +: 128] %A[0 +: 128, 0 +: 128]\n}\n",
                  "3:30: error: expected '<-' after destination access, found '%A'"},
        ErrorCase{KERNEL "  matmull %a[0]\n}\n", "2:3: error: unknown op 'matmull'; did you mean 'matmul'?"},
        ErrorCase{KERNEL "  dma %x[0 +: 1, 0 +: 1] <- %A[0 +: 1, 0 +: 1]\n}\n",
                  "2:7: error: use of undefined value %x"},
        ErrorCase{KERNEL "  %A = alloc sbuf<bf16, [M:128, N:128]>\n}\n", "2:3: error: redefinition of %A"},
        ErrorCase{KERNEL "  %A = alloc sbuf<bf16, [M:128, N:128]>\n}\n",
                  "1:11: note: previous definition of %A is here"},
        ErrorCase{KERNEL "  for %i = 0 to 2 step 1 {\n    %t = alloc sbuf<bf16, [M:1, N:1]>\n  }\n"
                         "  memset %t[0 +: 1, 0 +: 1], 0.0\n}\n",
                  "5:10: error: use of %t outside the block that defines it"},
        ErrorCase{KERNEL "  for %i = 0 to %i step 1 {\n  }\n}\n", "2:17: error: use of undefined value %i"},
        ErrorCase{KERNEL "  memset %A[99999999999999999999 +: 1, 0 +: 1], 0.0\n}\n",
                  "2:13: error: integer literal 99999999999999999999 does not fit in 64 bits"},
        ErrorCase{KERNEL "  memset %A[9223372036854775807 + 1 +: 1, 0 +: 1], 0.0\n}\n",
                  "2:33: error: integer overflow in constant index expression"},
        ErrorCase{KERNEL "  for %i = 0 to 2 step 1 {\n    memset %A[%i*%i +: 1, 0 +: 1], 0.0\n  }\n}\n",
                  "3:17: error: index expressions may only be multiplied by a constant"},
        ErrorCase{KERNEL "  memset %A[0 +: 1, 0 +: 1] 0.0\n}\n", "2:29: error: expected ',' before memset's value, found '0.0'"},
        ErrorCase{KERNEL "  %b = alloc sbuff<bf16, [M:1]>\n}\n",
                  "2:14: error: unknown memory space 'sbuff'; did you mean 'sbuf'?"},
        ErrorCase{KERNEL "  %b = alloc sbuf<f16, [M:1]>\n}\n", "2:19: error: unknown dtype 'f16'"},
        ErrorCase{KERNEL "  activation softplus %A[0, 0] <- %A[0, 0]\n}\n",
                  "2:14: error: unknown activation function 'softplus'; expected copy, silu, gelu, relu, exp, "
                  "sigmoid, tanh, square, rsqrt, reciprocal, log or abs"},
        ErrorCase{KERNEL "  tensor_tensor mull %A[0, 0] <- %A[0, 0], %A[0, 0]\n}\n",
                  "2:17: error: unknown ALU operation 'mull'; did you mean 'mul'?"},
        ErrorCase{KERNEL, "2:1: error: expected '}' to close the block, found end of file"},
        ErrorCase{"kernel @k(%A: hbm<bf16, [M:1]>) {\n}\n", "1:33: error: expected '->' between the kernel's inputs and outputs, found '{'"},
        ErrorCase{"kernel @k() -> () attributes {blocks = {m = 1}} {\n}\n",
                  "1:31: error: unknown kernel attribute 'blocks'"},
        ErrorCase{"kernel @k() -> () {\n}\nkernel @k() -> () {\n}\n", "3:1: error: redefinition of kernel @k"},
        ErrorCase{"func @k() {}\n", "1:1: error: expected 'kernel' at top level, found 'func'"},
        ErrorCase{"kernel @k() -> () {\n  \x01\n}\n", "2:3: error: unexpected byte 0x01 in input"},
        ErrorCase{KERNEL "  for %i = 0 to 2 step 1 {\n    dma %i[0, 0] <- %A[0, 0]\n  }\n}\n",
                  "3:9: error: %i is a loop variable, not a tensor or buffer"},
        ErrorCase{KERNEL "  %t = alloc sbuf<bf16, [M:1, N:1]>\n  memset %A[%t +: 1, 0 +: 1], 0.0\n}\n",
                  "3:13: error: %t is a tensor; index expressions may only use loop variables"},
        ErrorCase{KERNEL "  %x = copy %A[0, 0] <- %A[0, 0]\n}\n", "2:8: error: expected 'alloc' or 'view' after '%x ='"}));

TEST(Parser, ReportsAllNameErrorsInOneRun) {
  IRFixture f;
  EXPECT_FALSE(f.parse(KERNEL "  memset %u[0 +: 1, 0 +: 1], 0.0\n  memset %v[0 +: 1, 0 +: 1], 0.0\n}\n"));
  EXPECT_TRUE(f.has("2:10: error: use of undefined value %u")) << f.all();
  EXPECT_TRUE(f.has("3:10: error: use of undefined value %v")) << f.all();
}

TEST(Parser, SuggestsVisibleName) {
  IRFixture f;
  EXPECT_FALSE(f.parse(KERNEL "  %acc = alloc psum<f32, [M:128, N:128]>\n  memset %ac[0 +: 1, 0 +: 1], 0.0\n}\n"));
  EXPECT_TRUE(f.has("use of undefined value %ac; did you mean %acc?")) << f.all();
}

TEST(Parser, SurvivesDeepNesting) {
  IRFixture f;
  std::string parens(100000, '(');
  EXPECT_FALSE(f.parse(KERNEL "  memset %A[" + parens + "0 +: 1, 0 +: 1], 0.0\n}\n"));
  EXPECT_TRUE(f.has("nested too deeply")) << f.all();

  IRFixture g;
  std::string text = "kernel @k() -> () {\n";
  for (int i = 0; i < 5000; ++i)
    text += "for %i" + std::to_string(i) + " = 0 to 1 step 1 {\n";
  EXPECT_FALSE(g.parse(text));
  EXPECT_TRUE(g.has("loops nested too deeply")) << g.all();

  IRFixture h;
  std::string minus(100000, '-');
  EXPECT_FALSE(h.parse(KERNEL "  memset %A[" + minus + "1 +: 1, 0 +: 1], 0.0\n}\n"));
  EXPECT_EQ(h.count("error"), 1u) << h.all();

  IRFixture l;
  std::string sum = "0";
  for (int i = 0; i < 100000; ++i)
    sum += " + 1";
  EXPECT_FALSE(l.parse(KERNEL "  memset %A[" + sum + " +: 1, 0 +: 1], 0.0\n}\n"));
  EXPECT_TRUE(l.has("index expression too large")) << l.all();
}

TEST(Parser, SurvivesGarbage) {
  // Deterministic pseudo-random bytes and mutations of valid text.
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return unsigned(state >> 33);
  };
  std::string valid = kMatmulExample;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    if (round % 3 == 0) {
      for (int i = 0; i < 200; ++i)
        text += char(next() % 256);
    } else {
      text = valid;
      for (int i = 0; i < 1 + round % 5; ++i) {
        size_t pos = next() % text.size();
        switch (next() % 3) {
        case 0: text.erase(pos, 1 + next() % 8); break;
        case 1: text.insert(pos, 1, "%[](){},:=<>-+*@0123456789abcXYZ"[next() % 33]); break;
        default: text[pos] = char(next() % 256); break;
        }
      }
    }
    IRFixture f;
    auto m = f.parse(text);
    if (m)
      verifyModule(*m, f.diags, VerifierOptions{1u << 12});
    else
      EXPECT_GE(f.diags.errorCount(), 1u) << text;
  }
}

} // namespace

namespace {

TEST(Parser, ReadsInfinityAndNaN) {
  IRFixture f;
  auto m = f.parse("kernel @k() -> () {\n  %t = alloc sbuf<f32, [M:128, N:4]>\n"
                   "  memset %t[0 +: 128, 0 +: 4], -INF.0\n  memset %t[0 +: 128, 0 +: 4], inf\n"
                   "  memset %t[0 +: 128, 0 +: 4], nan\n}\n");
  ASSERT_TRUE(m) << f.all();
  auto &ops = m->kernels[0]->body.ops;
  EXPECT_EQ(llvm::cast<MemsetOp>(ops[1].get())->value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(llvm::cast<MemsetOp>(ops[2].get())->value, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(llvm::cast<MemsetOp>(ops[3].get())->value));
}

} // namespace
