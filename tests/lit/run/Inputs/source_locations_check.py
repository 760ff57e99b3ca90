"""Checks a run report's source locations against the .tsl kernel they name.

usage: source_locations_check.py REPORT.json KERNEL.tsl

Every hotspot names FILE:LINE:COL of KERNEL (a statement line of its body,
a column inside that line); the per-source-line summary covers exactly the
body's statement lines, each once, and its counts and DMA bytes add up to
the report's totals (every executed instruction belongs to one line).
"""
import json
import os
import sys

report = json.load(open(sys.argv[1]))
kernel = sys.argv[2]
lines = open(kernel).read().split("\n")
body = set()
inside = False
for number, text in enumerate(lines, 1):
    code = text.split("#", 1)[0].strip()
    if code.startswith("kernel "):
        inside = True
        continue
    if inside and code == "}":
        inside = False
    elif inside and code:
        body.add(number)


def split(source):
    path, _, rest = source.partition(".tsl:")
    assert os.path.basename(path + ".tsl") == os.path.basename(kernel), source
    return [int(x) for x in rest.split(":")]


for h in report["hotspots"]:
    line, col = split(h["source"])
    assert line in body, (h, sorted(body))
    assert 1 <= col <= len(lines[line - 1]), h
summary = report["source_lines"]
named = [split(l["source"])[0] for l in summary]
assert sorted(named) == sorted(body), (named, sorted(body))
assert sum(l["count"] for l in summary) == report["dynamic_instructions"], summary
assert sum(l["dma_bytes"] for l in summary) == report["hbm_read_bytes"] + report["hbm_write_bytes"], summary
assert [l["busy_us"] for l in summary] == sorted((l["busy_us"] for l in summary), reverse=True), summary
print("%d hotspots, %d source lines: ok" % (len(report["hotspots"]), len(summary)))
