//===- runtime/TargetProvenance.cpp - Where each target value comes from --===//
#include "runtime/TargetProvenance.h"

#include "support/JsonLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

using namespace llvm;

namespace tessel::runtime {

StringRef provenanceKindName(ProvenanceKind k) {
  switch (k) {
  case ProvenanceKind::Published: return "published";
  case ProvenanceKind::Derived: return "derived";
  case ProvenanceKind::DerivedFromPoint: return "derived-from-point";
  case ProvenanceKind::Assumed: return "assumed";
  case ProvenanceKind::Fitted: return "fitted";
  case ProvenanceKind::Unrecorded: return "unrecorded";
  }
  return "unrecorded";
}

std::optional<ProvenanceKind> parseProvenanceKind(StringRef name) {
  for (ProvenanceKind k : {ProvenanceKind::Published, ProvenanceKind::Derived, ProvenanceKind::DerivedFromPoint,
                           ProvenanceKind::Assumed, ProvenanceKind::Fitted, ProvenanceKind::Unrecorded})
    if (provenanceKindName(k) == name)
      return k;
  return std::nullopt;
}

namespace {
struct ProvenanceRow {
  const char *target, *field;
  ProvenanceKind kind;
  const char *source, *shapedBy;
};
const ProvenanceRow provenanceRows[] = {
#define TARGET_PROVENANCE(TARGET, FIELD, KIND, SOURCE, SHAPED_BY)                                \
  {#TARGET, #FIELD, ProvenanceKind::KIND, SOURCE, SHAPED_BY},
#include "runtime/TargetProvenance.def"
};

const char *const fieldNames[] = {
#define TARGET_FIELD(TYPE, NAME, CONSTRAINT, UNIT, DESC) #NAME,
#include "runtime/TargetFields.def"
};

std::map<std::string, double> fieldValues(const Target &t) {
  std::map<std::string, double> v;
#define TARGET_FIELD(TYPE, NAME, CONSTRAINT, UNIT, DESC) v[#NAME] = double(t.NAME);
#include "runtime/TargetFields.def"
  return v;
}

TargetProvenance allUnrecorded(StringRef why) {
  TargetProvenance p;
  for (const char *f : fieldNames)
    p[f] = FieldProvenance{ProvenanceKind::Unrecorded, why.str(), {}};
  return p;
}

Error fileError(StringRef path, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), (path + ": " + msg).str());
}

/// "_provenance": {"field": {"kind", "value", "source", "shaped_by"}} entries
/// whose value is still the field's; a changed value is unrecorded.
Error readRecorded(const json::Object &o, StringRef path, const std::map<std::string, double> &values,
                   TargetProvenance &p) {
  const json::Value *rec = o.get("_provenance");
  if (!rec)
    return Error::success();
  const json::Object *entries = rec->getAsObject();
  if (!entries)
    return fileError(path, "'_provenance' must be an object of field -> {kind, value, source}");
  for (const auto &kv : *entries) {
    std::string field = kv.first.str();
    auto value = values.find(field);
    if (value == values.end())
      return fileError(path, formatv("'_provenance' names unknown field '{0}'", field));
    const json::Object *e = kv.second.getAsObject();
    Optional<StringRef> kindName = e ? e->getString("kind") : None;
    std::optional<ProvenanceKind> kind;
    if (kindName)
      kind = parseProvenanceKind(*kindName);
    if (!kind)
      return fileError(path, formatv("'_provenance' entry '{0}' needs a \"kind\": published, derived, "
                                     "derived-from-point, assumed, fitted or unrecorded",
                                     field));
    FieldProvenance f{*kind, e->getString("source").getValueOr("").str(), {}};
    if (const json::Array *pts = e->getArray("shaped_by"))
      for (const json::Value &pt : *pts)
        if (auto s = pt.getAsString())
          f.shapedBy.push_back(s->str());
    Optional<double> recorded = e->getNumber("value");
    if (recorded && *recorded != value->second)
      f = FieldProvenance{ProvenanceKind::Unrecorded,
                          formatv("changed from {0}, whose provenance was {1}: {2}", fmt::format("{}", *recorded),
                                  provenanceKindName(*kind), f.source)
                              .str(),
                          {}};
    p[field] = std::move(f);
  }
  return Error::success();
}

/// "_calibration": {"parameters": [{"field", "start", "fitted", "bounds"}]}.
void readCalibration(const json::Object &o, const std::map<std::string, double> &values, TargetProvenance &p) {
  const json::Object *cal = o.getObject("_calibration");
  const json::Array *params = cal ? cal->getArray("parameters") : nullptr;
  if (!params)
    return;
  for (const json::Value &v : *params) {
    const json::Object *e = v.getAsObject();
    Optional<StringRef> field = e ? e->getString("field") : None;
    Optional<double> fitted = e ? e->getNumber("fitted") : None;
    if (!field || !fitted || !values.count(field->str()) || values.at(field->str()) != *fitted)
      continue;
    std::string bounds;
    if (const json::Array *b = e->getArray("bounds"); b && b->size() == 2)
      bounds = formatv(" within [{0}, {1}]", fmt::format("{}", (*b)[0].getAsNumber().getValueOr(0)),
                       fmt::format("{}", (*b)[1].getAsNumber().getValueOr(0)));
    p[field->str()] = FieldProvenance{
        ProvenanceKind::Fitted,
        formatv("tessel calibrate (this file's _calibration record): from {0}{1}",
                fmt::format("{}", e->getNumber("start").getValueOr(0)), bounds)
            .str(),
        {}};
  }
}
} // namespace

std::optional<TargetProvenance> builtinTargetProvenance(StringRef name) {
  TargetProvenance p;
  for (const ProvenanceRow &r : provenanceRows) {
    if (name != r.target)
      continue;
    FieldProvenance f{r.kind, r.source, {}};
    SmallVector<StringRef, 4> pts;
    StringRef(r.shapedBy).split(pts, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef pt : pts)
      f.shapedBy.push_back(pt.str());
    p[r.field] = std::move(f);
  }
  if (p.empty())
    return std::nullopt;
  return p;
}

Expected<TargetProvenance> loadTargetProvenance(StringRef nameOrPath, const Target &t) {
  if (std::optional<TargetProvenance> builtin = builtinTargetProvenance(nameOrPath)) {
    TargetProvenance p = allUnrecorded("no provenance in runtime/TargetProvenance.def");
    for (auto &[field, f] : *builtin)
      p[field] = f;
    return p;
  }
  auto buf = MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!buf)
    return allUnrecorded("a built-in target without a provenance table");
  Expected<json::Value> parsed = parseJsonBounded((*buf)->getBuffer(), nameOrPath);
  if (!parsed)
    return parsed.takeError();
  const json::Object *o = parsed->getAsObject();
  if (!o)
    return fileError(nameOrPath, "a target description must be a JSON object");
  TargetProvenance p = allUnrecorded("given by this file, which records no provenance for it");
  // A file based on a built-in (docs/targets.md) keeps the base's provenance
  // for the fields it does not give.
  if (Optional<StringRef> base = o->getString("base"))
    if (std::optional<TargetProvenance> inherited = builtinTargetProvenance(*base))
      for (auto &[field, f] : *inherited)
        if (!o->get(field)) {
          p[field] = f;
          p[field].source = ("from base " + *base + ": " + f.source).str();
        }
  std::map<std::string, double> values = fieldValues(t);
  if (Error e = readRecorded(*o, nameOrPath, values, p))
    return e;
  readCalibration(*o, values, p);
  return p;
}

static std::string jsonString(StringRef s) {
  std::string out;
  raw_string_ostream os(out);
  json::OStream(os).value(s);
  return os.str();
}

std::string withProvenanceJSON(StringRef targetJson, const Target &t, const TargetProvenance &p) {
  std::map<std::string, double> values = fieldValues(t);
  StringRef body = targetJson.rtrim();
  if (body.endswith("}"))
    body = body.drop_back().rtrim();
  std::string entries;
  for (const char *field : fieldNames) {
    auto it = p.find(field);
    const FieldProvenance &f = it == p.end() ? FieldProvenance{} : it->second;
    // One line per field, kind first; numbers in shortest round-trip form.
    std::string e = formatv("{{\"kind\": \"{0}\", \"value\": {1}", provenanceKindName(f.kind),
                            fmt::format("{}", values.at(field)))
                        .str();
    if (!f.shapedBy.empty()) {
      std::vector<std::string> quoted;
      for (const std::string &pt : f.shapedBy)
        quoted.push_back(jsonString(pt));
      e += ", \"shaped_by\": [" + join(quoted, ", ") + "]";
    }
    e += ", \"source\": " + jsonString(f.source) + "}";
    entries += formatv("{0}    \"{1}\": {2}", entries.empty() ? "" : ",\n", field, e).str();
  }
  return body.str() + ",\n  \"_provenance\": {\n" + entries + "\n  }\n}\n";
}

} // namespace tessel::runtime
