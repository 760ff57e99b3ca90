#!/usr/bin/env python3
"""Checks docs/architecture.md's floors: every `#include "lib/..."` in a library folder
names a folder that folder may include (docs/architecture.md). Prints each
violation as FILE:LINE: and exits 1 when there is one.

Usage: check_layering.py [ROOT]   (default: the repository holding this script)
"""
import pathlib
import re
import sys

# Each folder and the project folders its sources may include (itself always).
ALLOWED = {
    "support": set(),
    "runtime": {"support"},
    "factorize": {"support", "runtime"},
    "ir": {"support", "runtime"},
    "frontend": {"support", "runtime", "ir"},
    "passes": {"support", "runtime", "ir"},
    "backend": {"support", "runtime", "ir", "passes"},
    "compiler": {"support", "runtime", "ir", "frontend", "passes", "backend"},
    "tune": {"support", "runtime", "ir", "frontend", "passes", "backend", "compiler"},
    "calibrate": {"support", "runtime", "ir", "frontend", "passes", "backend", "compiler"},
    "model": {"support", "runtime", "factorize", "ir", "frontend", "passes", "backend", "compiler"},
    "driver": {"support", "runtime", "ir", "frontend", "passes", "backend", "compiler", "tune",
               "calibrate", "factorize", "model"},
    # bench/ and fuzz/ link the libraries, never the CLI.
    "bench": {"support", "runtime", "ir", "frontend", "passes", "backend", "compiler", "tune",
              "calibrate", "factorize", "model"},
    "fuzz": {"support", "runtime", "ir", "frontend", "passes", "backend", "compiler", "tune",
             "calibrate", "factorize"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def violations(root):
    for folder, allowed in sorted(ALLOWED.items()):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".def"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1)
                if target in ALLOWED and target != folder and target not in allowed:
                    yield (f"{path.relative_to(root)}:{number}: {folder}/ may not include "
                           f"{target}/ (docs/architecture.md lists what each folder may include)")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    found = list(violations(root.resolve()))
    for message in found:
        print(message)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
