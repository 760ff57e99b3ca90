//===- calibrate/MeasuredPoints.cpp - Measured latencies to fit and check -----===//
#include "calibrate/MeasuredPoints.h"

#include "support/JsonLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace llvm;

namespace tessel::calibrate {
using namespace compiler;

const std::vector<std::string> &measuredEngines() {
  static const std::vector<std::string> engines{"tensor", "vector", "scalar", "gpsimd", "dma"};
  return engines;
}

namespace {

Error rowError(StringRef origin, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), (origin + ": error: " + msg).str());
}

/// Splits one CSV line (RFC 4180 quoting: "a, b" and "" for a quote).
bool splitCsvLine(StringRef line, std::vector<std::string> &out) {
  out.clear();
  std::string cur;
  bool quoted = false, wasQuoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"' && StringRef(cur).trim().empty()) {
      quoted = wasQuoted = true;
      cur.clear();
    } else if (c == ',') {
      out.push_back(wasQuoted ? cur : StringRef(cur).trim().str());
      cur.clear();
      wasQuoted = false;
    } else {
      cur += c;
    }
  }
  if (quoted)
    return false;
  out.push_back(wasQuoted ? cur : StringRef(cur).trim().str());
  return true;
}

const char *const kColumns[] = {"kernel",    "defines",   "latency_us", "measured", "source",
                                "target",    "pipeline",  "name",       "tensor_us", "vector_us",
                                "scalar_us", "gpsimd_us", "dma_us",     "dma_bytes", "profile"};

Expected<double> positiveNumber(StringRef origin, StringRef column, StringRef text) {
  double v;
  if (text.getAsDouble(v) || !std::isfinite(v))
    return rowError(origin, formatv("{0} must be a number, got '{1}'", column, text));
  if (!(v > 0))
    return rowError(origin, formatv("{0} must be > 0, got {1}", column, text));
  return v;
}

/// Measured times in µs lie in [1 ns, 1000 s]: a time of 1e-308 µs fitted
/// parameters to infinity, one of 1e300 µs no parameter could explain.
constexpr double kMinTimeUs = 1e-3, kMaxTimeUs = 1e9;

/// A time in µs, within [kMinTimeUs, kMaxTimeUs].
Expected<double> timeUs(StringRef origin, StringRef column, StringRef text) {
  Expected<double> v = positiveNumber(origin, column, text);
  if (v && *v < kMinTimeUs)
    return rowError(origin, formatv("{0} must be at least 0.001 (1 ns), got {1}", column, text));
  if (v && *v > kMaxTimeUs)
    return rowError(origin, formatv("{0} must be at most 1e9 (1000 s), got {1}", column, text));
  return v;
}

Error parseDefines(StringRef origin, StringRef text, std::vector<Define> &out) {
  SmallVector<StringRef, 8> parts;
  text.split(parts, ' ', -1, false);
  for (StringRef part : parts) {
    SmallVector<StringRef, 4> sub;
    part.split(sub, ';', -1, false);
    for (StringRef d : sub) {
      auto [name, value] = d.trim().split('=');
      if (name.empty() || value.empty())
        return rowError(origin, formatv("malformed define '{0}': expected NAME=VALUE", d));
      out.push_back({name.str(), value.str()});
    }
  }
  return Error::success();
}

/// `path` or `path:KERNEL`, the path relative to the CSV's folder.
void parseKernelColumn(StringRef text, StringRef csvDir, KernelSpec &k) {
  StringRef path = text, name;
  size_t colon = text.rfind(':');
  if (colon != StringRef::npos && !text.substr(colon + 1).contains('/') &&
      isKernelFile(text.substr(0, colon))) {
    path = text.substr(0, colon);
    name = text.substr(colon + 1);
  }
  SmallString<256> full;
  if (sys::path::is_absolute(path) || csvDir.empty()) {
    full = path;
  } else {
    full = csvDir;
    sys::path::append(full, path);
  }
  k.path = std::string(full);
  k.kernel = name.str();
}

const json::Object *findSummary(const json::Value &v, int depth = 0) {
  if (depth > 4)
    return nullptr;
  if (const json::Object *o = v.getAsObject()) {
    if (o->get("total_time"))
      return o;
    for (const auto &kv : *o)
      if (const json::Object *s = findSummary(kv.second, depth + 1))
        return s;
  } else if (const json::Array *a = v.getAsArray()) {
    for (const json::Value &e : *a)
      if (const json::Object *s = findSummary(e, depth + 1))
        return s;
  }
  return nullptr;
}

std::optional<double> numberField(const json::Object &o, StringRef key) {
  const json::Value *v = o.get(key);
  if (!v)
    return std::nullopt;
  if (auto d = v->getAsNumber())
    return *d;
  if (auto s = v->getAsString()) {
    double d;
    if (!s->trim().getAsDouble(d))
      return d;
  }
  return std::nullopt;
}

} // namespace

Error readProfileSummary(StringRef path, MeasuredPoint &p) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return rowError(p.origin, formatv("cannot read profile '{0}': {1}", path, buf.getError().message()));
  Expected<json::Value> parsed = parseJsonBounded((*buf)->getBuffer(), path);
  if (!parsed)
    return rowError(p.origin, toString(parsed.takeError()));
  const json::Object *s = findSummary(*parsed);
  if (!s)
    return rowError(p.origin, formatv("profile '{0}' has no 'total_time' (a neuron-profile summary JSON)", path));
  std::optional<double> total = numberField(*s, "total_time");
  if (!total || !(*total * 1e6 >= kMinTimeUs) || !(*total * 1e6 <= kMaxTimeUs))
    return rowError(p.origin, formatv("profile '{0}': total_time must be a number of seconds from 1e-9 "
                                      "to 1000",
                                      path));
  p.latencyUs = *total * 1e6;
  p.measured = runtime::LatencyKind::Device;
  // A field that is present must be a number >= 0 (0: the engine was idle,
  // nothing to fit), never silently dropped.
  auto optionalField = [&](StringRef key, double limit) -> Expected<std::optional<double>> {
    if (!s->get(key))
      return std::nullopt;
    std::optional<double> v = numberField(*s, key);
    if (!v || !(*v >= 0) || !(*v <= limit))
      return rowError(p.origin, formatv("profile '{0}': {1} must be a number from 0 to {2}", path, key, limit));
    return v;
  };
  for (const std::string &e : measuredEngines()) {
    std::string key = e == "dma" ? "dma_active_time" : e + "_engine_active_time";
    Expected<std::optional<double>> t = optionalField(key, kMaxTimeUs * 1e-6);
    if (!t)
      return t.takeError();
    if (*t && **t > 0)
      p.busyUs[e] = **t * 1e6;
  }
  Expected<std::optional<double>> bytes = optionalField("dma_transfer_total_bytes", 9007199254740992.0);
  if (!bytes)
    return bytes.takeError();
  if (*bytes && **bytes > 0)
    p.dmaBytes = **bytes;
  return Error::success();
}

/// One data row of the CSV (cells by column name; a missing column reads as
/// empty), its paths relative to the CSV's folder.
static Expected<MeasuredPoint> parseRow(const std::string &origin, std::map<std::string, std::string> &row,
                                        StringRef csvDir) {
  MeasuredPoint p;
  p.origin = origin;
  if (row["kernel"].empty())
    return rowError(origin, "no kernel file");
  parseKernelColumn(row["kernel"], csvDir, p.kernel);
  if (!isKernelFile(p.kernel.path))
    return rowError(origin, formatv("unknown kernel type '{0}' (expected .tsl, .tasm or .py)", row["kernel"]));
  if (Error e = parseDefines(origin, row["defines"], p.kernel.defines))
    return e;
  if (!row["pipeline"].empty()) {
    if (!StringRef(p.kernel.path).endswith(".tsl"))
      return rowError(origin, formatv("pipeline applies to .tsl kernels; {0} is run as written",
                                      sys::path::filename(p.kernel.path)));
    p.kernel.pipeline = row["pipeline"];
  }
  p.name = row["name"].empty() ? sys::path::stem(p.kernel.path).str() : row["name"];
  p.target = row["target"];
  p.source = row["source"];
  if (p.source.empty())
    return rowError(origin, "no source (say where the figure was published or measured)");
  if (!row["profile"].empty()) {
    SmallString<256> prof(row["profile"]);
    if (!sys::path::is_absolute(prof) && !csvDir.empty()) {
      prof = csvDir;
      sys::path::append(prof, row["profile"]);
    }
    p.profile = std::string(prof);
    if (Error e = readProfileSummary(prof, p))
      return e;
  }
  bool anyBusy = any_of(measuredEngines(), [&](const std::string &e) { return !row[e + "_us"].empty(); });
  if (!row["latency_us"].empty() || (row["profile"].empty() && !anyBusy)) {
    if (row["latency_us"].empty())
      return rowError(origin, "no latency_us and no engine busy time (a row measures at least one)");
    Expected<double> lat = timeUs(origin, "latency_us", row["latency_us"]);
    if (!lat)
      return lat.takeError();
    p.latencyUs = *lat;
  }
  if (!row["measured"].empty() || row["profile"].empty()) {
    std::optional<runtime::LatencyKind> k = runtime::parseLatencyKind(row["measured"]);
    if (!k)
      return rowError(origin, formatv("measured must be 'device' or 'benchmark', got '{0}'", row["measured"]));
    p.measured = *k;
  }
  for (const std::string &e : measuredEngines()) {
    const std::string &cell = row[e + "_us"];
    if (cell.empty())
      continue;
    Expected<double> v = timeUs(origin, e + "_us", cell);
    if (!v)
      return v.takeError();
    p.busyUs[e] = *v;
  }
  if (!row["dma_bytes"].empty()) {
    Expected<double> v = positiveNumber(origin, "dma_bytes", row["dma_bytes"]);
    if (!v)
      return v.takeError();
    p.dmaBytes = *v;
  }
  return p;
}

Expected<std::vector<MeasuredPoint>> readMeasuredPoints(StringRef csvPath) {
  auto buf = MemoryBuffer::getFile(csvPath, /*IsText=*/true);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '%s': %s", csvPath.str().c_str(),
                             buf.getError().message().c_str());
  StringRef csvDir = sys::path::parent_path(csvPath);
  SmallVector<StringRef, 64> lines;
  StringRef text = (*buf)->getBuffer();
  text.consume_front("\xEF\xBB\xBF"); // a UTF-8 byte order mark (spreadsheets write one)
  text.split(lines, '\n');
  std::vector<std::string> header, cells;
  std::vector<MeasuredPoint> points;
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    StringRef line = lines[ln].rtrim("\r");
    if (line.trim().empty() || line.ltrim().startswith("#"))
      continue;
    std::string origin = formatv("{0}:{1}", csvPath, ln + 1).str();
    if (!splitCsvLine(line, cells))
      return rowError(origin, "unterminated quoted field");
    if (header.empty()) {
      header = cells;
      for (const std::string &h : header)
        if (!is_contained(kColumns, StringRef(h)))
          return rowError(origin, formatv("unknown column '{0}' (columns: {1})", h,
                                          join(std::vector<std::string>(std::begin(kColumns), std::end(kColumns)),
                                               ", ")));
      for (size_t i = 0; i < header.size(); ++i)
        if (is_contained(ArrayRef<std::string>(header).take_front(i), header[i]))
          return rowError(origin, formatv("column '{0}' given twice", header[i]));
      // latency_us and measured may be left out when every row has a profile
      // (or busy times): each row is checked for what it measures below.
      for (const char *req : {"kernel", "source"})
        if (!is_contained(header, req))
          return rowError(origin, formatv("the header has no '{0}' column", req));
      continue;
    }
    if (cells.size() != header.size())
      return rowError(origin, formatv("{0} fields, the header has {1}", cells.size(), header.size()));
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i)
      row[header[i]] = cells[i];
    Expected<MeasuredPoint> p = parseRow(origin, row, csvDir);
    if (!p)
      return p.takeError();
    points.push_back(std::move(*p));
  }
  if (points.empty())
    return createStringError(inconvertibleErrorCode(), "%s: no measured rows", csvPath.str().c_str());
  return points;
}

} // namespace tessel::calibrate
