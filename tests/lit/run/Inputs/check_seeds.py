"""check_seeds.py N FILE ARGS...: runs `tessel run FILE --check --seed S ARGS`
for S = 0..N-1 and prints how many passed, and the failing seeds."""
import subprocess
import sys

count, path, extra = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
failed = [s for s in range(count)
          if subprocess.run(["tessel", "run", path, "--check", "--seed", str(s)] + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0]
print("%d of %d passed; failed seeds: %s" % (count - len(failed), count, failed))
