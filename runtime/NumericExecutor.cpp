//===- runtime/NumericExecutor.cpp - The numbers of a program run ----------===//
#include "runtime/NumericExecutor.h"
#include "runtime/RowOps.h"

#include "runtime/BF16.h"
#include "runtime/HugePages.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

namespace tessel::runtime {

namespace {
/// Enough for the strip of stationary tiles a blocked kernel reads again for
/// every column block (2048 x 2048 bf16: 16 MiB as float32) and the moving
/// tiles of one block.
constexpr size_t OperandCacheBytes = size_t(24) << 20;

/// Fully written views remembered per object (a few hundred bytes each).
constexpr size_t MaxWrittenViews = 4096;

Touch reads(const TileView &v) { return Touch{v.isBuffer, v.id, v.rect, false}; }
Touch writes(const TileView &v) { return Touch{v.isBuffer, v.id, v.rect, true}; }

/// bf16BitsToFloats and floatsToBF16Bits, for AVX2 where the machine has it:
/// every operand tile and every store into a bf16 object converts.
TESSEL_AVX2_CLONES void widen(const uint16_t *in, float *out, size_t n) { bf16BitsToFloats(in, out, n); }
TESSEL_AVX2_CLONES void narrow(const float *in, uint16_t *out, size_t n) { floatsToBF16Bits(in, out, n); }

/// out[0, P*F) = the tile's elements of `storage`, row-major, as they are.
template <class T> void copyOut(const TileView &v, const T *storage, T *out) {
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memcpy(out + lin, storage + off, size_t(len) * sizeof(T));
    else
      for (int64_t i = 0; i < len; ++i)
        out[lin + i] = storage[off + i * stride];
  });
}

/// The tile's elements of `storage` = in[0, P*F), as they are.
template <class T> void copyIn(const TileView &v, T *storage, const T *in) {
  forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memcpy(storage + off, in + lin, size_t(len) * sizeof(T));
    else
      for (int64_t i = 0; i < len; ++i)
        storage[off + i * stride] = in[lin + i];
  });
}

/// dst's elements = src's (tiles of the same P * F elements), run by run,
/// without a copy of the tile in between: cvt(from, to, n) converts n
/// contiguous elements, single elements go through one(from) -> To.
template <class To, class From, class Cvt, class One>
void copyRuns(const TileView &dst, To *to, const TileView &src, const From *from, std::vector<Run> &runs, Cvt cvt,
              One one) {
  runs.clear();
  forEachRun(src, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) { runs.push_back({off, lin, len, stride}); });
  size_t i = 0;
  forEachRun(dst, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
    for (int64_t done = 0; done < len;) {
      const Run &r = runs[i];
      const int64_t at = lin + done - r.lin, n = std::min(len - done, r.len - at);
      To *d = to + off + done * stride;
      const From *f = from + r.off + at * r.stride;
      if (stride == 1 && r.stride == 1)
        cvt(f, d, size_t(n));
      else
        for (int64_t k = 0; k < n; ++k)
          d[k * stride] = one(f[k * r.stride]);
      done += n;
      if (at + n == r.len)
        ++i;
    }
  });
}

/// out = the [P, F] tile `in` transposed to [F, P].
template <class T> void transposeTile(const std::vector<T> &in, int64_t P, int64_t F, std::vector<T> &out) {
  out.resize(in.size());
  for (int64_t r = 0; r < P; ++r)
    for (int64_t c = 0; c < F; ++c)
      out[size_t(c * P + r)] = in[size_t(r * F + c)];
}
} // namespace

#if defined(OPENBLAS_VERSION)
NumericExecutor::OneBlasThread::OneBlasThread() : saved(openblas_get_num_threads()) { openblas_set_num_threads(1); }
NumericExecutor::OneBlasThread::~OneBlasThread() { openblas_set_num_threads(saved); }
#else
NumericExecutor::OneBlasThread::OneBlasThread() = default;
NumericExecutor::OneBlasThread::~OneBlasThread() = default;
#endif

NumericExecutor::ViewKey::ViewKey(const TileView &v) {
  f[0] = v.base;
  f[1] = v.P;
  f[2] = v.pStride;
  f[3] = v.nf;
  for (int d = 0; d < v.nf; ++d) {
    f[size_t(4 + 2 * d)] = v.fSize[d];
    f[size_t(5 + 2 * d)] = v.fStride[d];
  }
}

size_t NumericExecutor::ViewKeyHash::operator()(const ViewKey &k) const {
  return llvm::hash_combine_range(k.f.begin(), k.f.begin() + 4 + 2 * k.f[3]);
}

NumericExecutor::NumericExecutor(const Program &P, unsigned threads)
    : P(P), ten(P.tensors.size()), buf(P.buffers.size()),
      writtenViews{std::vector<std::unordered_set<ViewKey, ViewKeyHash>>(P.tensors.size()),
                   std::vector<std::unordered_set<ViewKey, ViewKeyHash>>(P.buffers.size())},
      tenWrites(P.tensors.size()),
      bufWrites(P.buffers.size()), operands(OperandCacheBytes), tasks(threads) {
  scratch.resize(tasks.threads());
  // The flags are used by this thread as it submits; the zeroed values, by
  // tasks only: they are zeroed (and their pages first touched) as tasks,
  // in parallel with the inputs' drawing.
  auto zeroed = [this](Store &s, bool isBuffer, uint32_t id, DType dtype, size_t n) {
    s.init = ZeroPages<uint8_t>(n);
    Touch whole{isBuffer, id, Rect{0, INT64_MAX, 0, INT64_MAX}, true};
    tasks.submit(whole, [&s, dtype, n](unsigned) {
      if (dtype == DType::BF16)
        assignZeros(s.bf16, n);
      else
        assignZeros(s.f32, n);
    });
  };
  for (size_t i = 0; i < P.tensors.size(); ++i)
    if (P.tensors[i].role != TensorRole::Input) // setInput
      zeroed(ten[i], false, uint32_t(i), P.tensors[i].dtype, size_t(P.tensors[i].numElements()));
  for (size_t b = 0; b < P.buffers.size(); ++b)
    zeroed(buf[b], true, uint32_t(b), P.buffers[b].dtype,
           size_t(P.buffers[b].bufs * P.buffers[b].partitions() * P.buffers[b].freeElems()));
}

void NumericExecutor::fillInput(uint32_t id, std::function<void(float *, uint16_t *)> fill) {
  Touch whole{false, id, Rect{0, INT64_MAX, 0, INT64_MAX}, true};
  tasks.submit(whole, [this, id, fill = std::move(fill)](unsigned) {
    Store &s = ten[id];
    const size_t n = size_t(P.tensors[id].numElements());
    if (P.tensors[id].dtype == DType::BF16) {
      assignZeros(s.bf16, n);
      fill(nullptr, s.bf16.data());
    } else {
      assignZeros(s.f32, n);
      fill(s.f32.data(), nullptr);
    }
  });
}

std::vector<float> NumericExecutor::takeTensor(uint32_t id) {
  tasks.finish();
  Store &s = ten[id];
  if (s.bf16.empty())
    return std::move(s.f32);
  std::vector<float> values(s.bf16.size());
  bf16BitsToFloats(s.bf16.data(), values.data(), values.size());
  s.bf16 = {};
  return values;
}

std::vector<uint16_t> NumericExecutor::takeBits(uint32_t id) {
  tasks.finish();
  return std::move(ten[id].bf16);
}

size_t NumericExecutor::unwrittenElements(uint32_t id) const {
  const uint8_t *init = ten[id].init.data();
  return size_t(std::count(init, init + ten[id].init.size(), uint8_t(0)));
}

void NumericExecutor::allocate(uint32_t id, int64_t slot) {
  const BufferDecl &b = P.buffers[id];
  size_t n = size_t(b.partitions() * b.freeElems());
  std::memset(buf[id].init.data() + size_t(slot) * n, 0, n);
  writtenViews[1][id].clear();
}

int64_t NumericExecutor::firstUnwritten(const TileView &v) const {
  if (isInput(v))
    return -1;
  auto &known = writtenViews[v.isBuffer][v.id];
  ViewKey key(v);
  if (known.count(key))
    return -1;
  const uint8_t *init = store(v).init.data();
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
  if (bad < 0) {
    if (known.size() >= MaxWrittenViews)
      known.clear();
    known.insert(key);
  }
  return bad;
}

void NumericExecutor::setWritten(const TileView &v) {
  ++generation(v);
  if (isInput(v))
    return; // inputs count as written throughout and keep no flags
  uint8_t *init = store(v).init.data();
  forEachRun(v, [&](int64_t off, int64_t, int64_t len, int64_t stride) {
    if (stride == 1)
      std::memset(init + off, 1, size_t(len));
    else
      for (int64_t i = 0; i < len; ++i)
        init[off + i * stride] = 1;
  });
}

void NumericExecutor::gather(const TileView &v, float *out) const {
  const Store &s = store(v);
  if (!s.bf16.empty()) {
    const uint16_t *src = s.bf16.data();
    forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
      if (stride == 1)
        widen(src + off, out + lin, size_t(len));
      else
        for (int64_t i = 0; i < len; ++i)
          out[lin + i] = bf16BitsToFloat(src[off + i * stride]);
    });
    return;
  }
  copyOut(v, s.f32.data(), out);
}

void NumericExecutor::scatter(const TileView &v, const float *in) {
  Store &s = store(v);
  if (!s.bf16.empty()) {
    uint16_t *dst = s.bf16.data();
    forEachRun(v, [&](int64_t off, int64_t lin, int64_t len, int64_t stride) {
      if (stride == 1)
        narrow(in + lin, dst + off, size_t(len));
      else
        for (int64_t i = 0; i < len; ++i)
          dst[off + i * stride] = floatToBF16Bits(in[lin + i]);
    });
  } else {
    copyIn(v, s.f32.data(), in);
  }
}

void NumericExecutor::copyTile(const TileView &dst, const TileView &src, Scratch &s) {
  const Store &from = store(src);
  Store &to = store(dst);
  const bool bf16In = !from.bf16.empty(), bf16Out = !to.bf16.empty();
  if (bf16In && bf16Out)
    copyRuns(
        dst, to.bf16.data(), src, from.bf16.data(), s.runs,
        [](const uint16_t *f, uint16_t *d, size_t n) { std::memcpy(d, f, n * sizeof(uint16_t)); },
        [](uint16_t x) { return x; });
  else if (bf16In)
    copyRuns(dst, to.f32.data(), src, from.bf16.data(), s.runs, widen, bf16BitsToFloat);
  else if (bf16Out)
    copyRuns(dst, to.bf16.data(), src, from.f32.data(), s.runs, narrow, floatToBF16Bits);
  else
    copyRuns(
        dst, to.f32.data(), src, from.f32.data(), s.runs,
        [](const float *f, float *d, size_t n) { std::memcpy(d, f, n * sizeof(float)); },
        [](float x) { return x; });
}

void NumericExecutor::dma(const TileView &dst, const TileView &src, bool transpose) {
  setWritten(dst);
  Touch touches[] = {reads(src), writes(dst)};
  tasks.submit(touches, [this, dst, src, transpose](unsigned thread) {
    Scratch &s = scratch[thread];
    if (!transpose && !sameObject(dst, src)) {
      copyTile(dst, src, s);
      return;
    }
    const Store &from = store(src);
    Store &to = store(dst);
    if (!from.bf16.empty() && !to.bf16.empty()) { // bf16 to bf16: the bits as they are
      s.bits.resize(size_t(src.P * src.F));
      copyOut(src, from.bf16.data(), s.bits.data());
      if (transpose)
        transposeTile(s.bits, src.P, src.F, s.bitsT);
      copyIn(dst, to.bf16.data(), (transpose ? s.bitsT : s.bits).data());
      return;
    }
    gather(src, s.a);
    if (transpose)
      transposeTile(s.a, src.P, src.F, s.b);
    scatter(dst, (transpose ? s.b : s.a).data());
  });
}

void NumericExecutor::transpose(const TileView &dst, const TileView &src) { dma(dst, src, true); }

const float *NumericExecutor::matrixOperand(const TileView &v, uint64_t gen, std::optional<TileCache::Pin> &pin,
                                            int &ld) {
  const Store &s = store(v);
  if (s.bf16.empty() && isMatrix(v) && v.pStride >= v.F) {
    ld = int(v.pStride);
    return s.f32.data() + v.base;
  }
  ld = int(v.F);
  pin.emplace(operands.get(v, gen, [&](float *out) { gather(v, out); }));
  return pin->data();
}

void NumericExecutor::matmul(const TileView &dst, const TileView &st, const TileView &mv, bool reset) {
  std::array<uint64_t, 2> gens = {generation(st), generation(mv)};
  setWritten(dst);
  Touch touches[] = {reads(st), reads(mv), writes(dst)};
  tasks.submit(touches, [this, dst, st, mv, gens, reset](unsigned thread) {
    runMatmul(dst, st, mv, gens.data(), reset, scratch[thread]);
  });
}

void NumericExecutor::runMatmul(const TileView &dst, const TileView &st, const TileView &mv, const uint64_t *gens,
                                bool reset, Scratch &s) {
  const int64_t K = st.P, M = st.F, N = mv.F;
  int lda, ldb;
  std::optional<TileCache::Pin> pinA, pinB;
  const float *a = matrixOperand(st, gens[0], pinA, lda), *b = matrixOperand(mv, gens[1], pinB, ldb);
  const float beta = reset ? 0.0f : 1.0f;
  // The product goes straight into a PSUM tile with contiguous rows, else
  // through a gathered copy of the destination.
  if (isMatrix(dst) && dst.pStride >= N) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta,
                store(dst).f32.data() + dst.base, int(dst.pStride));
    return;
  }
  if (reset)
    s.c.assign(size_t(M * N), 0.0f);
  else
    gather(dst, s.c);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, a, lda, b, ldb, beta,
              s.c.data(), int(N));
  scatter(dst, s.c.data());
}

void NumericExecutor::elementwise(const Instr &in, const TileView &dst, const TileView *srcs, int64_t offset) {
  if (in.op == Opcode::Dma || in.op == Opcode::Matmul || in.op == Opcode::Transpose)
    return;
  if (in.tiles) {
    withTiles(in, dst, srcs);
    return;
  }
  setWritten(dst);
  const unsigned nsrc = unsigned(in.srcs.size());
  Touch touches[] = {writes(dst), nsrc > 0 ? reads(srcs[0]) : Touch{}, nsrc > 1 ? reads(srcs[1]) : Touch{}};
  std::array<TileView, 2> src;
  std::copy(srcs, srcs + nsrc, src.begin());
  tasks.submit(llvm::makeArrayRef(touches, 1 + nsrc), [this, &in, dst, src, offset](unsigned thread) {
    runElementwise(in, dst, src.data(), offset, scratch[thread]);
  });
}

void NumericExecutor::withTiles(const Instr &in, const TileView &dst, const TileView *srcs) {
  const unsigned nsrc = unsigned(in.srcs.size()), nread = in.numReads();
  setWritten(dst);
  if (nread < nsrc)
    setWritten(srcs[nread]); // the accumulator
  std::array<Touch, 5> touches;
  std::array<TileView, 4> src;
  std::copy(srcs, srcs + nsrc, src.begin());
  touches[0] = writes(dst);
  for (unsigned i = 0; i < nsrc; ++i)
    touches[1 + i] = i < nread ? reads(srcs[i]) : writes(srcs[i]);
  tasks.submit(llvm::makeArrayRef(touches.data(), 1 + nsrc),
               [this, &in, dst, src](unsigned thread) { runWithTiles(in, dst, src.data(), scratch[thread]); });
}

void NumericExecutor::runWithTiles(const Instr &in, const TileView &dst, const TileView *srcs, Scratch &s) {
  const int64_t P = dst.P, F = dst.F;
  std::vector<float> &a = s.a, &b = s.b, &c = s.c;
  gather(srcs[0], a);
  // b: per partition, the first operand (tensor_scalar's scalar; an
  // activation's scale), c: the second (an activation's bias).
  auto perPartition = [&](uint8_t tile, std::vector<float> &out, double value) {
    if (in.has(tile))
      gather(srcs[in.tileIndex(tile)], out);
    else
      out.assign(size_t(P), float(value));
  };
  if (in.op == Opcode::TensorTensorScan) {
    perPartition(ScalarTile, b, in.imm);
    gather(srcs[1], c);
    for (int64_t p = 0; p < P; ++p)
      scanRow(in.aluOp(), in.aluOp1(), a.data() + p * F, c.data() + p * F, F, b[size_t(p)]);
  } else if (in.op == Opcode::TensorScalar) {
    perPartition(ScalarTile, b, in.imm);
    const AluOp op = in.aluOp();
    for (int64_t p = 0; p < P; ++p) {
      float *row = a.data() + p * F;
      const float k = b[size_t(p)];
      for (int64_t f = 0; f < F; ++f)
        row[f] = in.reverse ? applyAluOp(op, k, row[f]) : applyAluOp(op, row[f], k);
    }
  } else { // activation: fn(x * scale + bias), summed per partition into the accumulator
    perPartition(ScaleTile, b, in.scale);
    perPartition(BiasTile, c, in.bias);
    const ActFn fn = in.actFn();
    std::vector<float> sums(size_t(P), 0.0f);
    for (int64_t p = 0; p < P; ++p) {
      float *row = a.data() + p * F;
      const float sc = b[size_t(p)], bi = c[size_t(p)];
      float sum = 0.0f;
      for (int64_t f = 0; f < F; ++f) {
        row[f] = float(applyActFn(fn, double(row[f] * sc + bi)));
        sum += row[f];
      }
      sums[size_t(p)] = sum;
    }
    if (in.has(Accumulator))
      scatter(srcs[in.tileIndex(Accumulator)], sums.data());
  }
  scatter(dst, a.data());
}

void NumericExecutor::runElementwise(const Instr &in, const TileView &dst, const TileView *srcs, int64_t offset,
                                     Scratch &s) {
  const size_t n = size_t(dst.P * dst.F);
  std::vector<float> &a = s.a, &b = s.b;
  // The affine index of iota and affine_select at element i of the tile.
  auto index = [&](size_t i) {
    return offset + in.partitionStep * int64_t(i / size_t(dst.F)) + in.freeStep * int64_t(i % size_t(dst.F));
  };
  switch (in.op) {
  case Opcode::Activation: {
    gather(srcs[0], a);
    ActFn f = in.actFn();
    float sc = float(in.scale), bi = float(in.bias);
    for (size_t i = 0; i < n; ++i)
      a[i] = float(applyActFn(f, double(a[i] * sc + bi)));
    break;
  }
  case Opcode::TensorTensor:
    gather(srcs[0], a);
    gather(srcs[1], b);
    for (size_t i = 0; i < n; ++i)
      a[i] = applyAluOp(in.aluOp(), a[i], b[i]);
    break;
  case Opcode::TensorScalar: {
    gather(srcs[0], a);
    float imm = float(in.imm);
    if (in.reverse)
      for (size_t i = 0; i < n; ++i)
        a[i] = applyAluOp(in.aluOp(), imm, a[i]);
    else
      for (size_t i = 0; i < n; ++i)
        a[i] = applyAluOp(in.aluOp(), a[i], imm);
    break;
  }
  case Opcode::TensorReduce: {
    // Each run of F / dst.F consecutive source elements (a partition's row,
    // or the trailing dimensions of an N-D tile) folded left to right in
    // fp32, as the engine does.
    gather(srcs[0], b);
    const int64_t R = srcs[0].F / dst.F;
    a.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const float *run = b.data() + int64_t(i) * R;
      float acc = run[0];
      for (int64_t f = 1; f < R; ++f)
        acc = applyAluOp(in.aluOp(), acc, run[f]);
      a[i] = acc;
    }
    break;
  }
  case Opcode::TensorTensorScan:
    gather(srcs[0], a);
    gather(srcs[1], b);
    for (int64_t p = 0; p < dst.P; ++p)
      scanRow(in.aluOp(), in.aluOp1(), a.data() + p * dst.F, b.data() + p * dst.F, dst.F, float(in.imm));
    break;
  case Opcode::TensorPartitionReduce: {
    // Column by column, the partitions in order, in fp32.
    gather(srcs[0], b);
    const int64_t F = srcs[0].F;
    a.assign(b.begin(), b.begin() + F);
    for (int64_t p = 1; p < srcs[0].P; ++p)
      for (int64_t f = 0; f < F; ++f)
        a[size_t(f)] = applyAluOp(in.aluOp(), a[size_t(f)], b[size_t(p * F + f)]);
    break;
  }
  case Opcode::BnStats:
  case Opcode::BnAggr: {
    gather(srcs[0], b);
    const int64_t F = srcs[0].F;
    a.resize(n);
    for (int64_t p = 0; p < dst.P; ++p)
      (in.op == Opcode::BnStats ? bnStatsRow : bnAggrRow)(b.data() + p * F, F, a.data() + p * dst.F);
    break;
  }
  case Opcode::Iota:
    a.resize(n);
    for (size_t i = 0; i < n; ++i)
      a[i] = float(index(i));
    break;
  case Opcode::AffineSelect: {
    // The comparison with 0 depends on the sign alone, exact in float.
    gather(srcs[0], a);
    const float fill = float(in.imm);
    for (size_t i = 0; i < n; ++i)
      if (applyAluOp(in.aluOp(), float(index(i)), 0.0f) == 0.0f)
        a[i] = fill;
    break;
  }
  case Opcode::Copy:
    if (!sameObject(dst, srcs[0])) {
      copyTile(dst, srcs[0], s);
      return;
    }
    gather(srcs[0], a);
    break;
  case Opcode::Memset:
    a.assign(n, float(in.imm));
    break;
  default:
    return;
  }
  scatter(dst, a.data());
}

} // namespace tessel::runtime
