"""Runs a command under a CPU-time limit: cpu_limited.py SECONDS COMMAND ARGS...
Exits with the command's status (a process killed by the limit fails).
SECONDS is scaled by $TESSEL_CPU_LIMIT_SCALE (lit sets it for the sanitizer
build, which runs the same work 20-30x slower)."""
import os
import resource
import subprocess
import sys

seconds = int(sys.argv[1]) * int(os.environ.get("TESSEL_CPU_LIMIT_SCALE", "1"))


def limit():
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))


sys.exit(1 if subprocess.run(sys.argv[2:], preexec_fn=limit).returncode != 0 else 0)
