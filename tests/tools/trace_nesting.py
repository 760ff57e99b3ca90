#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file against the format's nesting rules,
the ones a viewer (Perfetto, chrome://tracing) needs to keep every slice:

  * on one track (pid, tid), complete ("X") slices and begin/end ("B"/"E")
    pairs nest: two slices are disjoint or one holds the other; a partial
    overlap is counted (Perfetto drops the later slice);
  * an "E" closes the track's innermost open "B"; none is left open;
  * nestable async events ("b"/"e") with one (cat, id) nest the same way,
    and every "b" is closed by an "e" of the same name;
  * every event has a known phase, numeric ts (and dur >= 0 for "X").

Times are compared in whole nanoseconds, as a viewer reads them (ts and dur
are microseconds). Prints one summary line per file ("FILE: N slices on T
tracks, K partial overlaps") and the first violations; exit status 1 if any.

Usage: trace_nesting.py TRACE.json [...]
"""
import json
import sys
from collections import defaultdict

PHASES = set("XBEbenMCsftiIPOND()RcpvV")
MAX_SHOWN = 5


def ns(value):
    return int(round(float(value) * 1000))


def nest(slices, where, problems):
    """Counts partial overlaps among (start, end, name) slices of one track."""
    overlaps = 0
    open_ends = []  # ends of the slices holding the current one, innermost last
    for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
        while open_ends and open_ends[-1][0] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1][0]:
            overlaps += 1
            outer_end, outer = open_ends[-1]
            problems.append("%s: '%s' [%d, %d] ns overlaps '%s' (ends at %d ns) partially"
                            % (where, name, start, end, outer, outer_end))
            continue
        open_ends.append((end, name))
    return overlaps


def check(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    problems = []
    tracks = defaultdict(list)       # (pid, tid) -> [(start, end, name)]
    open_b = defaultdict(list)       # (pid, tid) -> [(start, name)]
    asyncs = defaultdict(list)       # (pid, cat, id) -> [(start, end, name)]
    open_async = defaultdict(list)   # (pid, cat, id) -> [(start, name)]
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in PHASES:
            problems.append("event %d: unknown phase %r" % (i, ph))
            continue
        if ph == "M":
            continue
        if not isinstance(e.get("ts"), (int, float)):
            problems.append("event %d ('%s'): ts is not a number" % (i, e.get("name")))
            continue
        t = ns(e["ts"])
        name = e.get("name", "")
        track = (e.get("pid"), e.get("tid"))
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                problems.append("event %d ('%s'): dur is not a number >= 0" % (i, name))
                continue
            tracks[track].append((t, t + ns(e["dur"]), name))
        elif ph == "B":
            open_b[track].append((t, name))
        elif ph == "E":
            if not open_b[track]:
                problems.append("event %d: 'E' on track %s with no open 'B'" % (i, track))
                continue
            start, bname = open_b[track].pop()
            tracks[track].append((start, t, bname))
        elif ph in "be":
            key = (e.get("pid"), e.get("cat"), e.get("id"))
            if ph == "b":
                open_async[key].append((t, name))
                continue
            if not open_async[key] or open_async[key][-1][1] != name:
                problems.append("event %d: async 'e' '%s' (cat %s, id %s) closes no open 'b' of that name"
                                % (i, name, key[1], key[2]))
                continue
            start, _ = open_async[key].pop()
            if t < start:
                problems.append("event %d: async '%s' (id %s) ends before it begins" % (i, name, key[2]))
            asyncs[key].append((start, t, name))
    for track, left in open_b.items():
        if left:
            problems.append("track %s: %d 'B' never closed" % (track, len(left)))
    for key, left in open_async.items():
        if left:
            problems.append("async (cat %s, id %s): %d 'b' never closed" % (key[1], key[2], len(left)))
    overlaps = 0
    for track, slices in tracks.items():
        overlaps += nest(slices, "track pid=%s tid=%s" % track, problems)
    for key, slices in asyncs.items():
        overlaps += nest(slices, "async cat=%s id=%s" % (key[1], key[2]), problems)
    n = sum(len(s) for s in tracks.values()) + sum(len(s) for s in asyncs.values())
    print("%s: %d slices on %d tracks, %d async, %d partial overlaps"
          % (path, n, len(tracks), sum(len(s) for s in asyncs.values()), overlaps))
    for p in problems[:MAX_SHOWN]:
        print("  " + p)
    if len(problems) > MAX_SHOWN:
        print("  ... and %d more" % (len(problems) - MAX_SHOWN))
    return not problems


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ok = True
    for path in sys.argv[1:]:
        ok = check(path) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
