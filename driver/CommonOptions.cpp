#include "driver/CommonOptions.h"

#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace tessel::driver {

cl::OptionCategory &toolCategory() {
  static cl::OptionCategory category("tessel options");
  return category;
}

bool parseCommandLine(int argc, char **argv, const char *overview) {
  cl::HideUnrelatedOptions(toolCategory());
  return cl::ParseCommandLineOptions(argc, argv, overview, &llvm::errs());
}

bool SourceOptions::collectDefines(std::vector<Define> &out) const {
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::WithColor::error(llvm::errs(), "tessel")
          << "malformed -D '" << d << "': expected -D NAME=INT, e.g. -D M=8192\n";
      return false;
    }
    out.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }
  return true;
}

} // namespace tessel::driver
