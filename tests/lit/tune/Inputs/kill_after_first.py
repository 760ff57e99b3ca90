"""Runs `tessel tune ARGS...` and kills it (SIGKILL: nothing runs after it, as
after a second Ctrl-C) once the first configuration was simulated; prints how
it ended."""
import signal
import subprocess
import sys

proc = subprocess.Popen(["tessel", "tune"] + sys.argv[1:], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
for line in proc.stderr:
    if ": simulated " in line:
        proc.kill()
        break
proc.communicate()
print("killed" if proc.returncode == -signal.SIGKILL else "exit: %d" % proc.returncode)
