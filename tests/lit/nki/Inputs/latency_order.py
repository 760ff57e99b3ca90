"""latency_order.py REPORT.json REPORT.json [...]: prints each `tessel run --report=json` report's
latency_us, then `decreasing` when each is above the next, else `NOT decreasing` (exit 1)."""
import json
import sys

latencies = []
for path in sys.argv[1:]:
    with open(path) as f:
        latency = float(json.load(f)["latency_us"])
    latencies.append(latency)
    print("%s: %.3f us" % (path.rsplit("/", 1)[-1], latency))
ok = all(a > b for a, b in zip(latencies, latencies[1:]))
print("decreasing" if ok else "NOT decreasing")
sys.exit(0 if ok else 1)
