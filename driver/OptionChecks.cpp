//===- driver/OptionChecks.cpp - Options given without effect -------------===//
#include "driver/OptionChecks.h"

#include "runtime/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

namespace tessel::driver {

bool rejectEmptyValue(const llvm::cl::opt<std::string> &opt) {
  if (!opt.getNumOccurrences() || !opt.getValue().empty())
    return true;
  llvm::WithColor::error(llvm::errs(), "tessel")
      << "--" << opt.ArgStr << " was given an empty value; give " << opt.ValueStr
      << " or leave the option out\n";
  return false;
}

llvm::Expected<uint64_t> parseCount(llvm::StringRef flag, llvm::StringRef text, llvm::StringRef what) {
  uint64_t count = 0;
  if (!text.getAsInteger(10, count))
    return count;
  std::string given = text.empty() ? flag.str() + " was given no value" : (flag + " " + text).str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), given + ": " + what);
}

bool rejectRepeatedDefines(llvm::ArrayRef<std::string> defines) {
  llvm::StringMap<llvm::StringRef> seen;
  for (llvm::StringRef d : defines) {
    llvm::StringRef name = d.split('=').first;
    auto [it, added] = seen.try_emplace(name, d);
    if (added || name.empty())
      continue;
    llvm::WithColor::error(llvm::errs(), "tessel")
        << "-D gives '" << name << "' twice (-D " << it->second << ", -D " << d << "); give it once\n";
    return false;
  }
  return true;
}

/// Whether `path` exists and is not a regular file (a device such as
/// /dev/null, a pipe): writing it replaces nothing.
static bool isSpecialFile(llvm::StringRef path) {
  llvm::sys::fs::file_status st;
  return !llvm::sys::fs::status(path, st) && llvm::sys::fs::exists(st) &&
         st.type() != llvm::sys::fs::file_type::regular_file &&
         st.type() != llvm::sys::fs::file_type::directory_file;
}

bool rejectInputAsOutput(llvm::StringRef flag, llvm::StringRef output, llvm::ArrayRef<std::string> inputs) {
  if (output.empty() || output == "-" || isSpecialFile(output))
    return true;
  for (const std::string &input : inputs) {
    bool same = false;
    if (input == "-" || llvm::sys::fs::equivalent(input, output, same) || !same)
      continue;
    llvm::WithColor::error(llvm::errs(), "tessel")
        << flag << " " << output << " is the input '" << input
        << "': writing it would replace the input; choose another file\n";
    return false;
  }
  return true;
}

namespace {

/// Whether `a` and `b` name one file: by identity when both exist, else by
/// their absolute paths.
bool sameFile(llvm::StringRef a, llvm::StringRef b) {
  if (isSpecialFile(a) || isSpecialFile(b))
    return false;
  bool same = false;
  if (!llvm::sys::fs::equivalent(a, b, same))
    return same;
  auto absolute = [](llvm::StringRef p) {
    llvm::SmallString<256> path(p);
    llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    return std::string(path);
  };
  return absolute(a) == absolute(b);
}

} // namespace

std::string targetFile(llvm::StringRef name) {
  return llvm::is_contained(runtime::builtinTargetNames(), name) ? std::string() : name.str();
}

bool rejectClashingOutputs(llvm::ArrayRef<NamedOutput> outputs, llvm::ArrayRef<std::string> inputs) {
  auto isFile = [](const NamedOutput &o) { return !o.path.empty() && o.path != "-"; };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!isFile(outputs[i]))
      continue;
    if (!rejectInputAsOutput(outputs[i].flag, outputs[i].path, inputs))
      return false;
    for (size_t j = 0; j < i; ++j)
      if (isFile(outputs[j]) && sameFile(outputs[i].path, outputs[j].path)) {
        llvm::WithColor::error(llvm::errs(), "tessel")
            << outputs[j].flag << " " << outputs[j].path << " and " << outputs[i].flag << " "
            << outputs[i].path << " name one file: one would replace the other; choose another file\n";
        return false;
      }
  }
  return true;
}

bool rejectUnwritableOutput(const NamedOutput &output, bool allowStdout) {
  auto refuse = [&](const llvm::Twine &why) {
    llvm::WithColor::error(llvm::errs(), "tessel") << output.flag << " " << output.path << ": " << why << "\n";
    return false;
  };
  if (output.path.empty() || (output.path == "-" && allowStdout))
    return true;
  if (output.path == "-")
    return refuse("this output is a file (it cannot go to stdout); name one");
  if (llvm::sys::fs::is_directory(output.path))
    return refuse("is a directory; name a file");
  llvm::StringRef dir = llvm::sys::path::parent_path(output.path);
  if (!dir.empty() && !llvm::sys::fs::is_directory(dir))
    return refuse("the directory '" + dir + "' does not exist");
  return true;
}

} // namespace tessel::driver
