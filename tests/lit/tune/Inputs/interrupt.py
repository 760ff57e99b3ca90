"""Runs `tessel tune ARGS...`, sends it SIGINT (Ctrl-C) once the first
configuration was simulated, and prints its exit status, stdout and stderr."""
import signal
import subprocess
import sys

proc = subprocess.Popen(["tessel", "tune"] + sys.argv[1:], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
seen = []
for line in proc.stderr:
    seen.append(line)
    if ": simulated " in line:
        proc.send_signal(signal.SIGINT)
        break
out, err = proc.communicate()
print("exit:", proc.returncode)
print(out, end="")
print("".join(seen) + err, end="")
