"""Writes a changed copy of a `tessel tune --report=json` shard report:
   tamper.py IN OUT empty      no results (a shard that ran nothing)
   tamper.py IN OUT outside    the first result moved outside the space (m=99968)
   tamper.py IN OUT repeat     the first result given twice
   tamper.py IN OUT claim-all  every shard of the count claimed, with only IN's results
   tamper.py IN OUT zero       the first simulated result's latency_us 0
   tamper.py IN OUT mfu        the first simulated result's mfu 5 (500%)"""
import json
import sys

src, dst, mode = sys.argv[1:4]
report = json.load(open(src))
results = report["results"]
if mode == "empty":
    report["results"] = []
elif mode == "outside":
    results[0]["block"]["m"] = 99968
elif mode == "repeat":
    results.append(results[0])
elif mode == "claim-all":
    count = int(report["shards"][0].split("/")[1])
    report["shards"] = [f"{i}/{count}" for i in range(count)]
elif mode in ("zero", "mfu"):
    first = next(r for r in results if r["status"] == "simulated")
    first["latency_us" if mode == "zero" else "mfu"] = 0 if mode == "zero" else 5.0
else:
    sys.exit("unknown mode " + mode)
json.dump(report, open(dst, "w"), indent=1)
