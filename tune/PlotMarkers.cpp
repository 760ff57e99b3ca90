//===- tune/PlotMarkers.cpp - Point markers as plain SVG shapes -----------===//
#include "tune/PlotMarkers.h"

#include <map>
#include <regex>
#include <vector>

namespace tessel::tune {
namespace {

/// One SVG element of a single line: its tag and attributes, in order.
struct Element {
  std::string tag;
  std::vector<std::pair<std::string, std::string>> attrs;

  const std::string *get(const std::string &name) const {
    for (const auto &a : attrs)
      if (a.first == name)
        return &a.second;
    return nullptr;
  }
  void set(const std::string &name, const std::string &value) {
    for (auto &a : attrs)
      if (a.first == name) {
        a.second = value;
        return;
      }
    attrs.emplace_back(name, value);
  }
  void erase(const std::string &name) {
    attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [&](const auto &a) { return a.first == name; }),
                attrs.end());
  }
};

/// The element written on `line` (`<tag a='v' .../>`), if it is one.
bool parseElement(const std::string &line, Element &out) {
  static const std::regex element(R"(^\s*<([a-z]+)((?:\s+[A-Za-z:_-]+='[^']*')*)\s*/>\s*$)");
  static const std::regex attr(R"(([A-Za-z:_-]+)='([^']*)')");
  std::smatch m;
  if (!std::regex_match(line, m, element))
    return false;
  out.tag = m[1];
  out.attrs.clear();
  std::string rest = m[2];
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), attr); it != std::sregex_iterator(); ++it)
    out.attrs.emplace_back((*it)[1], (*it)[2]);
  return true;
}

/// A marker definition with its <use> chain resolved: the shape, with the
/// attributes each <use> in the chain sets over it; transforms compose.
using Markers = std::map<std::string, Element>;

bool resolve(const Element &def, const Markers &markers, Element &out) {
  if (def.tag != "use") {
    out = def;
    out.erase("id");
    return true;
  }
  const std::string *href = def.get("xlink:href");
  auto base = href && href->size() > 1 ? markers.find(href->substr(1)) : markers.end();
  if (base == markers.end())
    return false;
  out = base->second;
  for (const auto &[name, value] : def.attrs) {
    if (name == "id" || name == "xlink:href")
      continue;
    const std::string *inner = out.get(name);
    out.set(name, name == "transform" && inner ? value + " " + *inner : value);
  }
  return true;
}

/// The shape a placing <use> draws: the resolved marker, moved by the
/// use's transform, currentColor replaced by the use's color.
std::string place(const Element &use, Element shape) {
  const std::string *color = use.get("color");
  const std::string *where = use.get("transform");
  const std::string *inner = shape.get("transform");
  if (where)
    shape.set("transform", inner ? *where + " " + *inner : *where);
  std::string out = "<" + shape.tag;
  // The placement first, as gnuplot writes it.
  if (const std::string *t = shape.get("transform"))
    out += " transform='" + *t + "'";
  for (const auto &[name, value] : shape.attrs) {
    if (name == "transform")
      continue;
    out += " " + name + "='" + (value == "currentColor" && color ? *color : value) + "'";
  }
  return out + "/>";
}

bool isMarkerId(const std::string *id) { return id && id->rfind("gpPt", 0) == 0; }

} // namespace

std::string inlinePlotMarkers(llvm::StringRef svg) {
  // gnuplot writes one element per line; a line may hold a path and a <use>
  // after it (separated by a tab), so lines are split at "<use".
  std::vector<std::string> lines;
  for (llvm::StringRef rest = svg; !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    for (size_t at; (at = line.find("<use", 1)) != llvm::StringRef::npos && !line.take_front(at).trim().empty();) {
      lines.push_back(line.take_front(at).rtrim().str());
      line = line.drop_front(at);
    }
    lines.push_back(line.str());
    rest = tail;
  }
  Markers defs, markers;
  Element e;
  for (const std::string &line : lines)
    if (parseElement(line, e) && isMarkerId(e.get("id")))
      defs[*e.get("id")] = e;
  // Definitions refer to earlier ones: resolve in id order until none is left.
  for (size_t pass = 0; pass < defs.size() && markers.size() < defs.size(); ++pass)
    for (const auto &[id, def] : defs)
      if (!markers.count(id) && resolve(def, markers, e))
        markers[id] = e;
  std::string out;
  for (const std::string &line : lines) {
    if (parseElement(line, e)) {
      if (isMarkerId(e.get("id")) && markers.count(*e.get("id")))
        continue;
      const std::string *href = e.get("xlink:href");
      if (e.tag == "use" && href && href->size() > 1 && markers.count(href->substr(1))) {
        size_t indent = line.find('<');
        out += line.substr(0, indent) + place(e, markers.at(href->substr(1))) + "\n";
        continue;
      }
    }
    out += line + "\n";
  }
  if (!svg.endswith("\n") && !out.empty())
    out.pop_back();
  return out;
}

} // namespace tessel::tune
