"""Writes a copy of a tune cache whose every entry's best is BLOCK (m=...,n=...),
adding it as a simulated result when `simulated` is given:
   set_best.py IN OUT m=999,n=512 [simulated]"""
import json
import sys

src, dst, spec = sys.argv[1:4]
block = {k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))}
cache = json.load(open(src))
for entry in cache["entries"].values():
    entry["best"] = block
    if len(sys.argv) > 4:
        some = next(r for r in entry["configs"] if r["status"] == "simulated")
        entry["configs"].append(dict(some, block=block))
json.dump(cache, open(dst, "w"), indent=1)
