//===- model/ModelPlot.cpp - --plot: a stacked-bar SVG --------------------===//
#include "model/ModelPlot.h"

#include "fmt/format.h"

#include <algorithm>

namespace tessel::model {
namespace {

struct Part {
  const char *name;
  const char *color;
  double (*us)(const PhaseTime &);
};

const Part kParts[] = {
    {"embedding", "#9c755f", [](const PhaseTime &p) { return p.embeddingUs; }},
    {"projections", "#4e79a7", [](const PhaseTime &p) { return double(p.layers) * p.projectionsUs; }},
    {"MLP", "#f28e2b", [](const PhaseTime &p) { return double(p.layers) * p.mlpUs; }},
    {"attention", "#b07aa1", [](const PhaseTime &p) { return double(p.layers) * p.attentionUs; }},
    {"norms, residuals", "#edc948", [](const PhaseTime &p) { return double(p.layers) * p.normsUs; }},
    {"collectives", "#e15759", [](const PhaseTime &p) { return double(p.layers) * p.collectivesUs; }},
    {"launch", "#76b7b2", [](const PhaseTime &p) { return double(p.layers) * p.launchUs; }},
    {"final norm, LM head", "#59a14f", [](const PhaseTime &p) { return p.lmHeadUs; }},
};

constexpr int kPanelWidth = 300, kTop = 60, kBarsHeight = 240, kBarWidth = 70;

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char ch : s)
    out += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : std::string(1, ch);
  return out;
}

std::string panel(const ModelPrediction &p, PhaseTime Variant::*which, llvm::StringRef title, int x0) {
  double top = 0;
  for (const Variant &v : p.variants)
    top = std::max(top, (v.*which).totalUs);
  std::string svg = fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", x0 + 10, kTop - 25,
                                escape(title));
  const int bottom = kTop + kBarsHeight;
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", x0 + 10, bottom,
                     x0 + kPanelWidth - 20, bottom);
  for (size_t i = 0; i < p.variants.size(); ++i) {
    const Variant &v = p.variants[i];
    const int x = x0 + 40 + int(i) * (kBarWidth + 50);
    double y = bottom;
    for (const Part &part : kParts) {
      const double h = top > 0 ? part.us(v.*which) / top * kBarsHeight : 0;
      y -= h;
      svg += fmt::format("<rect x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{:.2f}\" fill=\"{}\">"
                         "<title>{} {}: {:.1f} us</title></rect>\n",
                         x, y, kBarWidth, h, part.color, v.name, part.name, part.us(v.*which));
    }
    svg += fmt::format("<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"middle\">{:.0f} us</text>\n", x + kBarWidth / 2,
                       y - 6, (v.*which).totalUs);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x + kBarWidth / 2,
                       bottom + 18, v.name);
  }
  return svg;
}

} // namespace

std::string predictionSvg(const ModelPrediction &p) {
  const int width = 2 * kPanelWidth + 150, height = kTop + kBarsHeight + 80;
  std::string svg = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                                "font-family=\"sans-serif\" font-size=\"12\">\n"
                                "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                                "<text x=\"10\" y=\"18\" font-size=\"14\">{}: {} --tp {}, batch {}, seq {}{}</text>\n",
                                width, height, escape(p.config.name), escape(p.settings.target), p.settings.tp,
                                p.settings.batch, p.settings.seq,
                                p.settings.ranksFrom.empty() ? "" : ", factorised from " + escape(p.settings.ranksFrom));
  svg += panel(p, &Variant::prefill, "prefill (time to first token)", 0);
  svg += panel(p, &Variant::decode, "decode (per output token)", kPanelWidth);
  int y = kTop;
  for (const Part &part : kParts) {
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\">{}</text>\n",
                       2 * kPanelWidth + 10, y, part.color, 2 * kPanelWidth + 28, y + 10, part.name);
    y += 20;
  }
  svg += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"11\">Excludes rotary embeddings and q/k norms: not "
                     "modelled.</text>\n</svg>\n",
                     height - 12);
  return svg;
}

} // namespace tessel::model
