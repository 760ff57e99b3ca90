"""Runs `tessel run FILE -k K --check --report=json EXTRA...` for every kernel
K of FILE and prints one line per kernel: 'K: passed' or 'K: FAILED <why>'.
usage: check_kernels.py FILE [EXTRA tessel options...]"""
import json
import re
import subprocess
import sys

path, extra = sys.argv[1], sys.argv[2:]
kernels = re.findall(r"^kernel\s+(\w+)", open(path).read(), re.M)
for k in kernels:
    run = subprocess.run(["tessel", "run", path, "-k", k, "--check", "--report=json", *extra],
                         capture_output=True, text=True)
    try:
        check = json.loads(run.stdout)["check"]
        ok = check["passed"]
        why = check.get("worst_element", check.get("error", ""))
    except (ValueError, KeyError):
        ok, why = False, run.stderr.strip().splitlines()[:1]
    print(f"{k}: passed" if ok and run.returncode == 0 else f"{k}: FAILED {why}")
