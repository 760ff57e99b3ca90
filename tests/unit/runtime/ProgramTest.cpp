//===- tests/unit/runtime/ProgramTest.cpp - .tasm parser/printer/verifier -===//
#include "TestUtil.h"

#include <map>
#include <set>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

const char *kAll = R"(# every construct of the format
kernel everything
target trn2

tensor %X : bf16[200, 256] input
tensor %W : f32[4, 128, 64] input
tensor %Y : f32[200, 512] output
tensor %S : bf16[256, 512] scratch
tensor %P : bf16[128, 4096] spill

buffer %a : sbuf bf16[128, 4, 128] bufs=3 addr=0
buffer %b : sbuf f32[128, 512] bufs=1 addr=4096
buffer %ps : psum f32[128, 512] bufs=2 addr=0

for %i = 0 to 10 step 3 {
  alloc %a
  for %j = -2 to 2 {
    dma %a[0:128, %j + 2, 0 : min(128, 200 - %i*16)] <- %X[%i*16 : min(128, 200 - %i*16), 3*(%j + 2)*2 - %i : 128] queue=5 transpose
    dma %P[0:128, %j*128 + 1024 : 128] <- %a[0:128, 0, 0:128] queue=1 spill_save
    dma %a[0:128, 1, 0:128] <- %P[0:128, 0:128] queue=2 spill_reload
    matmul %ps[0:128, 0:512] <- %a[0:128, 0, 0:128], %a[0:128, 1, 0:128] reset_if_first(%i, %j)
    matmul %ps[0:64, 0:512] <- %a[0:128, 0, 0:64], %a[0:128, 1, 0:128] accumulate
    matmul %ps[0:64, 0:512] <- %a[0:128, 0, 0:64], %a[0:128, 1, 0:128] reset
  }
  transpose %ps[0:128, 0:128] <- %a[0:128, 2, 0:128]
  activation.silu %b[0:128, 0:512] <- %ps[0:128, 0:512] scale=0.5 bias=-1.25
  activation.gelu %b[0:128, 0:512] <- %b[0:128, 0:512]
  activation.exp %b[0:128, 0:512] <- %b[0:128, 0:512] scale=1e-05
  tensor_tensor.mul %b[0:128, 0:512] <- %b[0:128, 0:512], %ps[0:128, 0:512]
  tensor_tensor.max %b[0:128, 0:512] <- %b[0:128, 0:512], %b[0:128, 0:512] engine=gpsimd
  tensor_scalar.sub %b[0:128, 0:512] <- %b[0:128, 0:512], -3.5 engine=scalar
  copy %b[0:128, 0:128] <- %ps[0:128, 0:128]
  copy %a[0:128, 3, 0:128] <- %b[0:128, 0:128] engine=gpsimd
  memset %b[0:128, 0:512] <- 0
  memset %a[0:128, 0, 0:128] <- 1.5 engine=gpsimd
}
dma %W[%i2, 0:128, 0:64] <- %b[0:128, 0:64] queue=0
)";

TEST(Program, RoundTripIsAFixedPoint) {
  std::string text = kAll;
  // %i2 is not defined: first make sure the error names it, then fix it.
  std::string err = parseError(text);
  EXPECT_NE(err.find("unknown loop variable %i2"), std::string::npos) << err;
  size_t pos = text.find("%W[%i2");
  text.replace(pos, 6, "%W[3");
  // %W is an input: a store into it is fine syntactically.
  Program p = parseOrFail(text);
  std::string once = printProgramToString(p);
  Program q = parseOrFail(once);
  std::string twice = printProgramToString(q);
  EXPECT_EQ(once, twice);
  EXPECT_EQ(p.kernel, "everything");
  EXPECT_EQ(p.target, "trn2");
  EXPECT_EQ(p.instrs.size(), 18u);
  EXPECT_NE(once.find("%X[%i*16 : min(128, 200 - %i*16), %j*6 - %i + 12 : 128]"), std::string::npos) << once;
  EXPECT_NE(once.find("0 : min(128, 200 - %i*16)"), std::string::npos) << once;
  EXPECT_NE(once.find("for %i = 0 to 10 step 3 {"), std::string::npos);
  EXPECT_NE(once.find("bias=-1.25"), std::string::npos);
  EXPECT_NE(once.find("scale=1e-05"), std::string::npos);
  EXPECT_NE(once.find("reset_if_first(%i, %j)"), std::string::npos);
}

TEST(Program, AffineExpressionsEvaluate) {
  Program p = parseOrFail(R"(
tensor %X : f32[1000, 1000] input
buffer %a : sbuf f32[128, 128] bufs=1 addr=0
for %i = 0 to 4 {
  for %j = 0 to 4 {
    dma %a[0:128, 0 : min(128, 300 - %j*128)] <- %X[2*(%i - 1)*3 + 7 - -%j : 128, -(%i) + %i*2 : min(128, 300 - %j*128)] queue=0
  }
}
)");
  ASSERT_EQ(p.instrs.size(), 1u);
  const Access &src = p.instrs[0].srcs[0];
  int64_t vars[2] = {3, 2}; // %i = 3, %j = 2
  EXPECT_EQ(src.dims[0].start.eval(vars), 2 * (3 - 1) * 3 + 7 + 2);
  EXPECT_EQ(src.dims[1].start.eval(vars), 3);
  EXPECT_EQ(src.dims[1].extent.eval(vars), 300 - 256);
  int64_t first[2] = {0, 0};
  EXPECT_EQ(src.dims[1].extent.eval(first), 128);
  EXPECT_EQ(printAffine(p, src.dims[0].start), "%i*6 + %j + 1");
}

TEST(Program, SyntaxErrorsAreLocatedWithCaret) {
  std::string err = parseError("kernel k\ntensor %X : bf16[4, 4] input\nfor %i = 0 to 4 {\n  dma %X[0:4] <- \n}\n");
  EXPECT_NE(err.find("test.tasm:4:"), std::string::npos) << err;
  EXPECT_NE(err.find("error:"), std::string::npos) << err;
  EXPECT_NE(err.find("^"), std::string::npos) << err;

  struct Case {
    const char *text, *expect;
  } cases[] = {
      {"tensor %X : bf17[4] input\n", "expected a dtype"},
      {"tensor %X : bf16[4] inptu\n", "unknown tensor role 'inptu'"},
      {"tensor %X : bf16[0] input\n", "dimension sizes must be positive"},
      {"tensor %X : bf16[4] input\ntensor %X : bf16[4] input\n", "redefinition of %X"},
      {"buffer %b : dram bf16[4] bufs=1 addr=0\n", "expected a memory space"},
      {"buffer %b : sbuf bf16[4] bufs=0 addr=0\n", "bufs must be at least 1"},
      {"buffer %b : sbuf bf16[4] colour=1\n", "unknown buffer attribute 'colour'"},
      {"frobnicate %b <- %c\n", "unknown statement 'frobnicate'"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nactivation.sqrtt %b <- %b\n", "unknown activation function 'sqrtt'"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ntensor_tensor.powr %b <- %b, %b\n", "unknown operation 'powr'"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %b engine=tensor\n", "cannot run on the tensor engine"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %c\n", "unknown tensor or buffer %c"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b[0:4] <- %b\n", "has 2 dimension(s) but the access gives 1"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 {\n  copy %b[0:4, %i*%i : 1] <- %b\n}\n",
       "product of two loop variables is not affine"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 {\n  for %i = 0 to 2 {\n  }\n}\n",
       "shadows"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 step 0 {\n}\n", "loop step must be positive"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 {\n  copy %b <- %b\n", "missing '}'"},
      {"}\n", "'}' without a matching loop"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %b queue=1\n", "`queue` applies to `dma` only"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ntensor_scalar.add %b <- %b\n", "tensor_scalar takes a tile and a scalar"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %b extra\n", "unknown attribute 'extra'"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %b copy %b <- %b\n", "unknown attribute 'copy'"},
      {"kernel a\nkernel b\n", "duplicate 'kernel' line"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nalloc %q\n", "unknown buffer %q"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %b $\n", "expected end of line"},
      // verifier (structural) errors, also located
      {"tensor %X : f32[4, 4] input\nbuffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %X\n",
       "`copy` cannot read an HBM tensor"},
      {"tensor %X : f32[4, 4] input\ntensor %Y : f32[4, 4] output\ndma %Y <- %X queue=0\n",
       "exactly one side must be a tensor"},
      {"tensor %X : f32[4, 4] input\nbuffer %p : psum f32[4, 4] bufs=1 addr=0\ndma %p <- %X queue=0\n",
       "`dma` cannot access PSUM"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nmatmul %b <- %b, %b reset\n", "the destination must be a psum buffer"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nbuffer %p : psum f32[4, 4] bufs=1 addr=0\nmatmul %p <- %p, %b\n",
       "must be sbuf buffers"},
      {"buffer %p : psum f32[4, 4] bufs=1 addr=0\ntensor_tensor.add %p <- %p, %p\n", "cannot both be in PSUM"},
      {"buffer %p : psum f32[4, 4] bufs=1 addr=0\nbuffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b <- %p engine=gpsimd\n",
       "gpsimd engine cannot access PSUM"},
      {"buffer %b : sbuf f32[4, 4] bufs=1 addr=0\ncopy %b[0, 0:4] <- %b\n", "partition dimension and must be a range"},
      {"tensor %X : f32[4, 4] input\nbuffer %b : sbuf f32[4, 4] bufs=1 addr=0\ndma %b[0:4, 0:4] <- %X[0:4, 0:4, 0:1] queue=0\n",
       "has 2 dimension(s) but the access gives 3"},
  };
  for (const Case &c : cases) {
    std::string e = parseError(c.text);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "input:\n" << c.text << "\ngot: " << e;
    EXPECT_NE(e.find("test.tasm:"), std::string::npos) << e;
  }
}

TEST(Program, AbsurdInputsAreErrorsNotCrashes) {
  std::string deep = "buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 {\n  copy %b[0:4, " +
                     std::string(5000, '(') + "%i" + std::string(5000, ')') + " : 1] <- %b\n}\n";
  EXPECT_NE(parseError(deep).find("nested too deeply"), std::string::npos);
  std::string loops;
  for (int i = 0; i < 300; ++i)
    loops += "for %v" + std::to_string(i) + " = 0 to 1 {\n";
  EXPECT_NE(parseError(loops).find("loops nested too deeply"), std::string::npos);
  EXPECT_NE(parseError("tensor %X : f32[99999999999999999999] input\n").find("integer out of range"),
            std::string::npos);
  EXPECT_NE(parseError("tensor %X : f32[1048576, 1048576, 4] input\n").find("shape too large"), std::string::npos);
  EXPECT_NE(parseError("buffer %b : sbuf f32[4, 4] bufs=1 addr=0\nfor %i = 0 to 2 {\n"
                       "  copy %b[0:4, %i*10000000*10000000 : 1] <- %b\n}\n")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(parseError(std::string("kernel \x01\n")).find("error"), std::string::npos);
  EXPECT_NE(parseError(std::string("tensor %X : f32[4] input\0garbage", 33)).find("error"), std::string::npos);
  // Huge loop-variable products wrap instead of overflowing, and fail the bounds check.
  Program p = parseOrFail("tensor %X : f32[4, 4] input\nbuffer %b : sbuf f32[4, 4] bufs=1 addr=0\n"
                          "for %i = 1099511627775 to 1099511627776 {\n"
                          "  dma %b[0:4, 0:4] <- %X[%i*1099511627776 : 4, 0:4] queue=0\n}\n");
  EXPECT_NE(runError(p).find("out-of-bounds read of %X"), std::string::npos);
}

TEST(Program, StreamsAreProjectionsOfTheBody) {
  Program p = parseOrFail(R"(
tensor %X : bf16[256, 128] input
buffer %x : sbuf bf16[128, 128] bufs=2 addr=0
buffer %y : sbuf bf16[128, 128] bufs=1 addr=512
for %i = 0 to 2 {
  alloc %x
  dma %x <- %X[%i*128 : 128, 0:128] queue=3
  copy %y <- %x
}
for %j = 0 to 2 {
  activation.exp %y <- %y
}
)");
  std::string s;
  llvm::raw_string_ostream os(s);
  printEngineStreams(p, os);
  os.flush();
  EXPECT_NE(s.find("stream vector {\n  for %i = 0 to 2 {\n    copy"), std::string::npos) << s;
  EXPECT_NE(s.find("stream scalar {\n  for %j = 0 to 2 {\n    activation.exp"), std::string::npos) << s;
  EXPECT_NE(s.find("stream dma.q3 {"), std::string::npos) << s;
  EXPECT_EQ(s.find("stream tensor"), std::string::npos) << s; // empty streams are omitted
  EXPECT_EQ(s.find("activation.exp", s.find("stream vector")) , s.find("activation.exp")) << s;
}

TEST(Program, InMemoryProgramsPrintAndVerify) {
  // What a backend does: build a Program, print it, and get it back.
  Program p;
  p.kernel = "built";
  p.tensors.push_back({"X", DType::F32, {4, 8}, TensorRole::Input, {}});
  BufferDecl b;
  b.name = "b";
  b.dtype = DType::F32;
  b.shape = {4, 8};
  p.buffers.push_back(b);
  p.vars.push_back("i");
  p.varLoop.push_back(0);
  Loop l;
  l.var = 0;
  l.lo = 0;
  l.hi = 2;
  Instr in;
  in.op = Opcode::Dma;
  in.engine = Engine::Dma;
  in.dst.kind = Access::Kind::Buffer;
  in.dst.id = 0;
  DimAccess d0, d1;
  d0.extent.size = AffineExpr::constantExpr(4);
  d1.start = AffineExpr::varExpr(0, 4);
  d1.extent.size = AffineExpr::constantExpr(4);
  in.dst.dims = {d0, d1};
  Access src;
  src.kind = Access::Kind::Tensor;
  src.id = 0;
  src.dims = {d0, d1};
  in.srcs.push_back(src);
  p.instrs.push_back(in);
  l.body.push_back({Stmt::Kind::Instr, 0});
  p.loops.push_back(l);
  p.body.push_back({Stmt::Kind::For, 0});
  EXPECT_FALSE(bool(verifyProgram(p)));
  std::string text = printProgramToString(p);
  EXPECT_NE(text.find("dma %b[0:4, %i*4 : 4] <- %X[0:4, %i*4 : 4] queue=0"), std::string::npos) << text;
  Program q = parseOrFail(text);
  EXPECT_EQ(printProgramToString(q), text);
  // A structural error is reported with the file name.
  p.instrs[0].engine = Engine::Vector;
  llvm::Error e = verifyProgram(p);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("cannot run on the vector engine"), std::string::npos);
}

} // namespace

// ---- source locations: loc("FILE":LINE[:COL]) (issue 15, item 14) ----

static const char *const kLocated = R"(kernel located
tensor %X : bf16[128, 128] input
tensor %Y : f32[128, 128] output
buffer %a : sbuf bf16[128, 128] bufs=1 addr=0
buffer %b : sbuf f32[128, 128] bufs=1 addr=256
buffer %p : psum f32[128, 128] bufs=1 addr=0
dma %a <- %X queue=0 loc("k.tsl":3:9)
matmul %p <- %a, %a reset loc("k.tsl":3:11)
activation.silu %b <- %p loc("kernel.py":17)
dma %Y <- %b queue=1
)";

TEST(Program, SourceLocationsParsePrintAndRoundTrip) {
  Program p = parseOrFail(kLocated);
  ASSERT_EQ(p.instrs.size(), 4u);
  EXPECT_EQ(p.sourceFiles, (std::vector<std::string>{"k.tsl", "kernel.py"}));
  EXPECT_EQ(p.instrSource(p.instrs[0]), "k.tsl:3:9");
  EXPECT_EQ(p.instrSource(p.instrs[1]), "k.tsl:3:11");
  EXPECT_EQ(p.instrSource(p.instrs[1], /*withColumn=*/false), "k.tsl:3");
  EXPECT_EQ(p.instrSource(p.instrs[2]), "kernel.py:17"); // a line without a column
  // Without loc(...), an instruction's source is its place in the .tasm.
  EXPECT_FALSE(p.instrs[3].source.known());
  EXPECT_EQ(p.instrSource(p.instrs[3]), "test.tasm:10:1");
  std::string once = printProgramToString(p);
  EXPECT_NE(once.find("matmul %p[0:128, 0:128] <- %a[0:128, 0:128], %a[0:128, 0:128] reset loc(\"k.tsl\":3:11)\n"),
            std::string::npos)
      << once;
  EXPECT_NE(once.find("loc(\"kernel.py\":17)\n"), std::string::npos) << once;
  EXPECT_EQ(printProgramToString(parseOrFail(once)), once);
  // A program built in memory without locations has no sources at all.
  Program q = parseOrFail(once);
  q.fileName.clear();
  for (Instr &in : q.instrs)
    in.source = {};
  for (const Instr &in : q.instrs)
    EXPECT_EQ(q.instrSource(in), "");
}

TEST(Program, SourceFileNamesAreEscapedAndReadBack) {
  // Quotes, backslashes, spaces, colons, a tab and non-ASCII bytes in a file
  // name survive print -> parse -> print.
  Program p = parseOrFail(kLocated);
  std::string odd = "dir with space/a\"b\\c:12\td\xc3\xa9.tsl";
  p.sourceFiles[0] = odd;
  std::string once = printProgramToString(p);
  Program q = parseOrFail(once);
  ASSERT_EQ(q.sourceFiles.size(), 2u) << once;
  EXPECT_EQ(q.sourceFiles[0], odd);
  EXPECT_EQ(q.instrSource(q.instrs[1]), odd + ":3:11");
  EXPECT_EQ(printProgramToString(q), once);
}

TEST(Program, MalformedSourceLocationsAreLocatedErrors) {
  const std::string head = "buffer %b : sbuf f32[4, 4] bufs=1 addr=0\n";
  struct Case {
    const char *instr, *expect;
  } cases[] = {
      {"copy %b <- %b loc(\"k.tsl\":0)", "source line number out of range"},
      {"copy %b <- %b loc(\"k.tsl\":3:0)", "source column number out of range"},
      {"copy %b <- %b loc(\"k.tsl\":99999999999)", "source line number out of range"},
      {"copy %b <- %b loc(\"\":3)", "empty source file name"},
      {"copy %b <- %b loc(k.tsl:3)", "expected the source file name (a string in double quotes)"},
      {"copy %b <- %b loc(\"k.tsl:3)", "unterminated string"},
      {"copy %b <- %b loc(\"k\\q.tsl\":3)", "bad escape in a string"},
      {"copy %b <- %b loc(\"k\\4.tsl\":3)", "bad escape in a string"},
      {"copy %b <- %b loc(\"k.tsl\")", "expected ':' after the source file name"},
      {"copy %b <- %b loc(\"k.tsl\":3", "expected ')' to close loc(...)"},
      {"copy %b <- %b loc \"k.tsl\":3", "expected '(' after loc"},
      {"copy %b <- %b loc(\"k.tsl\":3) loc(\"k.tsl\":4)", "duplicate attribute 'loc'"},
  };
  for (const Case &c : cases) {
    std::string e = parseError(head + c.instr + "\n");
    EXPECT_NE(e.find(c.expect), std::string::npos) << "input: " << c.instr << "\ngot: " << e;
    EXPECT_NE(e.find("test.tasm:2:"), std::string::npos) << e;
  }
  // An in-memory program whose location names no source file fails the verifier.
  Program p = parseOrFail(kLocated);
  p.instrs[0].source.file = 7;
  llvm::Error err = verifyProgram(p);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("undeclared source file"), std::string::npos);
}

TEST(Program, HotspotsTraceAndSourceLinesNameTheSource) {
  Program p = parseOrFail(kLocated);
  SimOptions o;
  o.timingOnly = true;
  SimResult r = runOrFail(p, o);
  ASSERT_EQ(r.report.hotspots.size(), 4u);
  std::set<std::string> values;
  for (const HotspotReport &h : r.report.hotspots) {
    values.insert(h.opcode + " " + h.value);
    if (h.opcode == "matmul") {
      EXPECT_EQ(h.source, "k.tsl:3:11");
    } else if (h.opcode == "activation.silu") {
      EXPECT_EQ(h.source, "kernel.py:17");
    }
  }
  // The value involved: the tensor a DMA moves, else the buffer written.
  EXPECT_EQ(values, (std::set<std::string>{"dma X", "dma Y", "matmul p", "activation.silu b"}));
  // Per source line: the dma and the matmul of k.tsl:3 are one line; the
  // unannotated store is its .tasm line.
  std::map<std::string, SourceLineReport> lines;
  double busy = 0;
  for (const SourceLineReport &l : r.report.sourceLines) {
    lines[l.source] = l;
    busy += l.busyNs;
  }
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_TRUE(lines.count("k.tsl:3"));
  EXPECT_EQ(lines["k.tsl:3"].instructions, 2u);
  EXPECT_EQ(lines["k.tsl:3"].opcodes, (std::vector<std::string>{"dma", "matmul"}));
  EXPECT_EQ(lines["k.tsl:3"].dmaBytes, 128u * 128u * 2u); // the bf16 load
  EXPECT_EQ(lines["kernel.py:17"].dmaBytes, 0u);
  EXPECT_EQ(lines["test.tasm:10"].dmaBytes, 128u * 128u * 4u); // the f32 store
  double hotspotBusy = 0;
  for (const HotspotReport &h : r.report.hotspots)
    hotspotBusy += h.busyNs;
  EXPECT_DOUBLE_EQ(busy, hotspotBusy); // every instruction is in one line, once
  // Sorted by busy time.
  for (size_t i = 1; i < r.report.sourceLines.size(); ++i)
    EXPECT_GE(r.report.sourceLines[i - 1].busyNs, r.report.sourceLines[i].busyNs);
}
