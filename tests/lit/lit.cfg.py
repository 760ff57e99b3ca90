# lit configuration for tessel: tests are .tsl, .tir and .tasm files with RUN: lines.
import os
import lit.formats

config.name = "tessel"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tsl", ".tir", ".tasm", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

site = lit_config.params.get("tessel_site_config")
if not site:
    lit_config.fatal("run through ctest, or pass --param tessel_site_config=BUILD/tests/lit/lit.site.cfg.py")
exec(open(site).read())
config.test_exec_root = os.path.join(os.path.dirname(site), "out")

config.environment["PATH"] = os.pathsep.join(
    [config.tessel_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Sanitizer reports abort, so even `not tessel ...` fails on one (not treats a crash as failure).
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1"
config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:abort_on_error=1:print_stacktrace=1"
# CPU-time limits (tilegen/Inputs/cpu_limited.py) are for the release build;
# the sanitizer build runs the same work 20-30x slower (ASan + UBSan, -O0).
# A sweep of the same numeric check over many shapes says `UNSUPPORTED: sanitized`
# when one shape of it under the sanitizers covers the code (CI's 90-minute limit).
if getattr(config, "sanitized", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.environment["TESSEL_CPU_LIMIT_SCALE"] = "4"
    config.available_features.add("sanitized")
config.substitutions.append(("%examples", os.path.join(config.tessel_src_dir, "examples")))
# %python: a python3 with numpy (CMake's TESSEL_PYTHON); tests that need it say REQUIRES: numpy.
if getattr(config, "python_numpy", ""):
    config.available_features.add("numpy")
    config.substitutions.append(("%python", config.python_numpy))
