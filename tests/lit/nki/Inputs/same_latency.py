"""Holds `tessel run --report=json` reports to one predicted latency.

  same_latency.py PERCENT REPORT.json REPORT.json [...]

Prints each report's latency_us (and its check, when the run had --check),
then `spread: X %` (largest over smallest, minus 1). Exits 1 when the spread
is above PERCENT or a check failed, so a lit RUN line fails with it.
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    limit = float(argv[0])
    latencies, ok = [], True
    for path in argv[1:]:
        with open(path) as f:
            report = json.load(f)
        latency = float(report["latency_us"])
        latencies.append(latency)
        check = report.get("check")
        verdict = "" if check is None else (" check PASSED" if check["passed"] else " check FAILED")
        ok = ok and (check is None or check["passed"])
        print("%s: %.2f us%s" % (path.rsplit("/", 1)[-1], latency, verdict))
    spread = 100.0 * (max(latencies) / min(latencies) - 1.0)
    within = spread <= limit
    print("spread: %.2f %% (%s %g %%)" % (spread, "within" if within else "ABOVE", limit))
    return 0 if within and ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
