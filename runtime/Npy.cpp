//===- runtime/Npy.cpp - NumPy .npy reading and writing -------------------===//
#include "runtime/Npy.h"

#include "runtime/BF16.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace llvm;

namespace tessel::runtime {

static Error npyError(StringRef origin, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), (origin + ": " + msg).str());
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Finds the value text of 'key' in the header dict: the characters after
// "'key':" up to the matching end (a quoted string, a tuple, or a word).
// None when the key is missing or given twice (numpy would take the last).
static Optional<StringRef> dictValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t pos = header.find(quoted);
  if (pos == StringRef::npos) {
    quoted = ("\"" + key + "\"").str();
    pos = header.find(quoted);
    if (pos == StringRef::npos)
      return None;
  }
  if (header.find(quoted, pos + 1) != StringRef::npos)
    return None;
  StringRef rest = header.drop_front(pos + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return None;
  rest = rest.ltrim();
  if (rest.empty())
    return None;
  if (rest[0] == '\'' || rest[0] == '"') {
    size_t end = rest.find(rest[0], 1);
    if (end == StringRef::npos)
      return None;
    return rest.slice(1, end);
  }
  if (rest[0] == '(') {
    size_t end = rest.find(')');
    if (end == StringRef::npos)
      return None;
    return rest.slice(1, end);
  }
  size_t end = rest.find_first_of(",}");
  return rest.slice(0, end).trim();
}

Expected<NpyArray> parseNpy(StringRef bytes, StringRef origin) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || !bytes.startswith(StringRef(magic, 6)))
    return npyError(origin, "not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(origin, "truncated .npy header");
    headerLen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8) |
                (size_t(uint8_t(bytes[10])) << 16) | (size_t(uint8_t(bytes[11])) << 24);
    headerStart = 12;
  } else {
    return npyError(origin, formatv("unsupported .npy format version {0}", major));
  }
  if (bytes.size() < headerStart + headerLen)
    return npyError(origin, "truncated .npy header");
  StringRef header = bytes.substr(headerStart, headerLen);
  NpyArray arr;
  Optional<StringRef> descr = dictValue(header, "descr");
  Optional<StringRef> fortran = dictValue(header, "fortran_order");
  Optional<StringRef> shape = dictValue(header, "shape");
  if (!descr || !fortran || !shape)
    return npyError(origin, "malformed .npy header (expected 'descr', 'fortran_order' and 'shape', each once)");
  arr.descr = descr->str();
  // The shape is a tuple: dictValue drops its parentheses, so look at the
  // character before the value.
  if (shape->data() == header.data() || shape->data()[-1] != '(')
    return npyError(origin, formatv("malformed shape '{0}' in .npy header (expected a tuple)", *shape));
  if (*fortran != "False" && *fortran != "True")
    return npyError(origin, formatv("malformed fortran_order '{0}' in .npy header (expected False or True)",
                                    *fortran));
  if (*fortran != "False")
    return npyError(origin, "Fortran-order (column-major) arrays are not supported; expected C order "
                            "(save with np.ascontiguousarray)");
  size_t elemSize;
  if (*descr == "<f4" || *descr == "=f4")
    elemSize = 4;
  else if (*descr == "<f2" || *descr == "=f2")
    elemSize = 2;
  else if (descr->startswith(">"))
    return npyError(origin, formatv("big-endian dtype '{0}' is not supported; expected little-endian "
                                    "float32 '<f4' or float16 '<f2'",
                                    *descr));
  else
    return npyError(origin, formatv("dtype '{0}' is not supported; expected float32 '<f4' or float16 '<f2'",
                                    *descr));
  SmallVector<StringRef, 4> dims;
  shape->split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t count = 1;
  for (StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    int64_t v;
    if (d.getAsInteger(10, v) || v < 0)
      return npyError(origin, formatv("malformed shape '({0})' in .npy header", *shape));
    arr.shape.push_back(v);
    count *= uint64_t(v);
    if (count > (uint64_t(1) << 40))
      return npyError(origin, "array too large");
  }
  size_t dataStart = headerStart + headerLen;
  uint64_t need = count * elemSize;
  if (bytes.size() - dataStart < need)
    return npyError(origin, formatv("truncated data: shape {0} needs {1} bytes, file has {2}",
                                    formatShape(arr.shape), need, bytes.size() - dataStart));
  arr.data.resize(count);
  const char *p = bytes.data() + dataStart;
  if (elemSize == 4) {
    if (count) // an empty vector's data() may be null, which memcpy must not get
      std::memcpy(arr.data.data(), p, count * 4); // little-endian host assumed (x86/arm64)
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      uint16_t h = uint16_t(uint8_t(p[2 * i])) | uint16_t(uint8_t(p[2 * i + 1]) << 8);
      arr.data[i] = halfBitsToFloat(h);
    }
  }
  return arr;
}

Expected<NpyArray> readNpy(StringRef path) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return createStringError(buf.getError(), "%s: cannot open: %s", path.str().c_str(),
                             buf.getError().message().c_str());
  return parseNpy((*buf)->getBuffer(), path);
}

namespace {

/// The .npy v1.0 header of a float32 array of `shape`.
std::string npyHeader(ArrayRef<int64_t> shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dict += ","; // numpy's 1-tuple "(3,)"
  dict += "), }";
  // Pad with spaces so that magic(6)+ver(2)+len(2)+header ends at a multiple of 64, newline-terminated.
  size_t total = 10 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(char(dict.size() & 0xff));
  out.push_back(char((dict.size() >> 8) & 0xff));
  return out + dict;
}

/// Opens `path`, lets `body` write the array's bytes after the header, closes.
Error writeNpyFile(StringRef path, ArrayRef<int64_t> shape, function_ref<void(raw_ostream &)> body) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "%s: cannot write: %s", path.str().c_str(), ec.message().c_str());
  os << npyHeader(shape);
  body(os);
  os.close();
  if (os.has_error())
    return createStringError(os.error(), "%s: write failed", path.str().c_str());
  return Error::success();
}

} // namespace

std::string serializeNpy(ArrayRef<int64_t> shape, ArrayRef<float> data) {
  std::string out = npyHeader(shape);
  out.append(reinterpret_cast<const char *>(data.data()), data.size() * 4);
  return out;
}

Error writeNpy(StringRef path, ArrayRef<int64_t> shape, ArrayRef<float> data) {
  return writeNpyFile(path, shape, [&](raw_ostream &os) {
    os.write(reinterpret_cast<const char *>(data.data()), data.size() * 4);
  });
}

Error writeNpyFromBF16(StringRef path, ArrayRef<int64_t> shape, ArrayRef<uint16_t> bf16) {
  return writeNpyFile(path, shape, [&](raw_ostream &os) {
    float chunk[4096];
    for (size_t i = 0; i < bf16.size(); i += 4096) {
      size_t n = std::min<size_t>(4096, bf16.size() - i);
      for (size_t j = 0; j < n; ++j)
        chunk[j] = bf16BitsToFloat(bf16[i + j]);
      os.write(reinterpret_cast<const char *>(chunk), n * 4);
    }
  });
}

} // namespace tessel::runtime
