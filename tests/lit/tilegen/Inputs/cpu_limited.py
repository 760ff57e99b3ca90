"""Runs a command under a CPU-time limit: cpu_limited.py SECONDS COMMAND ARGS...
Exits with the command's status (a process killed by the limit fails)."""
import resource
import subprocess
import sys

seconds = int(sys.argv[1])


def limit():
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))


sys.exit(1 if subprocess.run(sys.argv[2:], preexec_fn=limit).returncode != 0 else 0)
