#include "passes/Statistics.h"

#include "llvm/Support/FormatAdapters.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessel::passes {
namespace {
struct Active {
  StatisticsCollector *collector = nullptr;
  std::string pass;
};
thread_local Active active;
} // namespace

void noteStatistic(llvm::StringRef name, int64_t value, llvm::StringRef description) {
  if (!active.collector)
    return;
  for (Statistic &s : active.collector->stats)
    if (s.pass == active.pass && s.name == name) {
      s.value = value;
      return;
    }
  active.collector->stats.push_back({active.pass, name.str(), description.str(), value});
}

void StatisticsCollector::activate(llvm::StringRef pass) {
  active.collector = this;
  active.pass = pass.str();
}

void StatisticsCollector::deactivate() { active.collector = nullptr; }

void StatisticsCollector::print(llvm::raw_ostream &os) const {
  os << "// ===------------------------------------------------------------===\n"
     << "//                    ... Statistics Collected ...\n"
     << "// ===------------------------------------------------------------===\n";
  size_t vw = 1, pw = 1;
  for (const Statistic &s : stats) {
    vw = std::max(vw, std::to_string(s.value).size());
    pw = std::max(pw, s.pass.size());
  }
  for (const Statistic &s : stats)
    os << llvm::formatv("// {0} {1} - {2} ({3})\n", llvm::fmt_align(s.value, llvm::AlignStyle::Right, vw),
                        llvm::fmt_align(s.pass, llvm::AlignStyle::Left, pw), s.description, s.name);
}

} // namespace tessel::passes
