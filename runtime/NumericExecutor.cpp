//===- runtime/NumericExecutor.cpp - The numbers of a program run ----------===//
#include "runtime/NumericExecutor.h"

#include "runtime/BF16.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

namespace tessel::runtime {

NumericExecutor::NumericExecutor(const Program &P) : P(P) {
  tenData.resize(P.tensors.size());
  tenInit.resize(P.tensors.size());
  for (size_t i = 0; i < P.tensors.size(); ++i) {
    if (P.tensors[i].role == TensorRole::Input)
      continue; // setInput
    size_t n = size_t(P.tensors[i].numElements());
    tenData[i].assign(n, 0.0f);
    tenInit[i].assign(n, 0);
  }
  bufData.resize(P.buffers.size());
  bufInit.resize(P.buffers.size());
  for (size_t b = 0; b < P.buffers.size(); ++b) {
    size_t n = size_t(P.buffers[b].bufs * P.buffers[b].partitions() * P.buffers[b].freeElems());
    bufData[b].assign(n, 0.0f);
    bufInit[b].assign(n, 0);
  }
}

void NumericExecutor::setInput(uint32_t id, std::vector<float> values) { tenData[id] = std::move(values); }

size_t NumericExecutor::unwrittenElements(uint32_t id) const {
  return size_t(std::count(tenInit[id].begin(), tenInit[id].end(), uint8_t(0)));
}

void NumericExecutor::allocate(uint32_t id, int64_t slot) {
  const BufferDecl &b = P.buffers[id];
  size_t n = size_t(b.partitions() * b.freeElems());
  std::fill_n(bufInit[id].begin() + size_t(slot) * n, n, 0);
}

int64_t NumericExecutor::firstUnwritten(const TileView &v) const {
  if (!v.isBuffer && P.tensors[v.id].role == TensorRole::Input)
    return -1;
  const uint8_t *init = v.isBuffer ? bufInit[v.id].data() : tenInit[v.id].data();
  int64_t bad = -1;
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (bad >= 0)
      return;
    if (stride == 1) {
      if (const void *z = std::memchr(init + off, 0, size_t(len)))
        bad = lin + (static_cast<const uint8_t *>(z) - (init + off));
      return;
    }
    for (int64_t i = 0; i < len; ++i)
      if (!init[off + i * stride]) {
        bad = lin + i;
        return;
      }
  });
  return bad;
}

void NumericExecutor::setWritten(const TileView &v) {
  if (!v.isBuffer && P.tensors[v.id].role == TensorRole::Input)
    return; // inputs count as written throughout and keep no flags
  uint8_t *init = v.isBuffer ? bufInit[v.id].data() : tenInit[v.id].data();
  forEachRun(v, [&](int64_t off, int64_t, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memset(init + off, 1, size_t(len));
    else
      for (int64_t i = 0; i < len; ++i)
        init[off + i * stride] = 1;
  });
}

void NumericExecutor::gather(const TileView &v, std::vector<float> &out) {
  out.resize(size_t(v.P * v.F));
  const float *src = storage(v);
  float *o = out.data();
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memcpy(o + lin, src + off, size_t(len) * sizeof(float));
    else
      for (int64_t i = 0; i < len; ++i)
        o[lin + i] = src[off + i * stride];
  });
}

void NumericExecutor::scatter(const TileView &v, const float *in) {
  float *dst = storage(v);
  bool bf16 = dtypeOf(v) == DType::BF16;
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (bf16)
      for (int64_t i = 0; i < len; ++i)
        dst[off + i * stride] = roundToBF16(in[lin + i]);
    else if (stride == 1)
      std::memcpy(dst + off, in + lin, size_t(len) * sizeof(float));
    else
      for (int64_t i = 0; i < len; ++i)
        dst[off + i * stride] = in[lin + i];
  });
  setWritten(v);
}

void NumericExecutor::transposeTile(const std::vector<float> &in, int64_t P, int64_t F, std::vector<float> &out) {
  out.resize(in.size());
  for (int64_t r = 0; r < P; ++r)
    for (int64_t c = 0; c < F; ++c)
      out[size_t(c * P + r)] = in[size_t(r * F + c)];
}

void NumericExecutor::dma(const TileView &dst, const TileView &src, bool transpose) {
  gather(src, tA);
  if (transpose) {
    transposeTile(tA, src.P, src.F, tB);
    scatter(dst, tB.data());
  } else {
    scatter(dst, tA.data());
  }
}

void NumericExecutor::transpose(const TileView &dst, const TileView &src) { dma(dst, src, true); }

void NumericExecutor::matmul(const TileView &dst, const TileView &st, const TileView &mv, bool reset) {
  int64_t K = st.P, M = st.F, N = mv.F;
  // Operands whose rows are contiguous go to BLAS in place (leading
  // dimension = partition stride); others are gathered first.
  const float *a = nullptr, *b = nullptr;
  int lda = int(M), ldb = int(N);
  if (isMatrix(st)) {
    a = storage(st) + st.base;
    lda = int(st.pStride);
  } else {
    gather(st, tA);
    a = tA.data();
  }
  if (isMatrix(mv)) {
    b = storage(mv) + mv.base;
    ldb = int(mv.pStride);
  } else {
    gather(mv, tB);
    b = tB.data();
  }
  float beta = reset ? 0.0f : 1.0f;
  if (isMatrix(dst) && lda >= M && ldb >= N && dst.pStride >= N) {
    float *c = storage(dst) + dst.base;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta, c,
                int(dst.pStride));
    setWritten(dst);
    return;
  }
  if (reset)
    tC.assign(size_t(M * N), 0.0f);
  else
    gather(dst, tC);
  if (lda < M || ldb < N) { // degenerate single-column views: gather both
    gather(st, tA);
    gather(mv, tB);
    a = tA.data();
    b = tB.data();
    lda = int(M);
    ldb = int(N);
  }
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta,
              tC.data(), int(N));
  scatter(dst, tC.data());
}

void NumericExecutor::elementwise(const Instr &in, const TileView &dst, const TileView *srcs) {
  size_t n = size_t(dst.P * dst.F);
  switch (in.op) {
  case Opcode::Activation: {
    gather(srcs[0], tA);
    ActFn f = in.actFn();
    float sc = float(in.scale), bi = float(in.bias);
    for (size_t i = 0; i < n; ++i)
      tA[i] = float(applyActFn(f, double(tA[i] * sc + bi)));
    break;
  }
  case Opcode::TensorTensor:
    gather(srcs[0], tA);
    gather(srcs[1], tB);
    for (size_t i = 0; i < n; ++i)
      tA[i] = applyAluOp(in.aluOp(), tA[i], tB[i]);
    break;
  case Opcode::TensorScalar: {
    gather(srcs[0], tA);
    float imm = float(in.imm);
    for (size_t i = 0; i < n; ++i)
      tA[i] = applyAluOp(in.aluOp(), tA[i], imm);
    break;
  }
  case Opcode::Copy:
    gather(srcs[0], tA);
    break;
  case Opcode::Memset:
    tA.assign(n, float(in.imm));
    break;
  default:
    return;
  }
  scatter(dst, tA.data());
}

} // namespace tessel::runtime
