"""Progress of a long trace, on stderr.

Tracing runs the kernel's Python: a loop the kernel unrolls (nl.static_range, or a plain
Python loop over a range it builds itself) records its body once per iteration, and 10^7
iterations take minutes. Once tracing has run for a while, a line every few seconds says
how many operations are recorded so far and when the driver stops the tracer (its time
limit, $TESSEL_NKI_TRACE_TIMEOUT), so a user can tell a long unroll from a hang and knows
how long it may go on. $TESSEL_NKI_PROGRESS_SECONDS sets the interval (default 5; 0: a line
at every check).
"""
import os
import sys
import time

CHECK_EVERY = 1024  # operations between looks at the clock


class Progress:
    def __init__(self, path, time_limit):
        self.path = path
        self.time_limit = time_limit
        try:
            self.interval = max(0.0, float(os.environ.get("TESSEL_NKI_PROGRESS_SECONDS", "5")))
        except ValueError:
            self.interval = 5.0
        self.start = time.monotonic()
        self.next = self.start + self.interval
        self.ops = 0
        self.countdown = CHECK_EVERY

    def recorded(self):
        """One more operation recorded."""
        self.ops += 1
        self.countdown -= 1
        if self.countdown:
            return
        self.countdown = CHECK_EVERY
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + self.interval
        limit = ("the tracer is stopped at %d s ($TESSEL_NKI_TRACE_TIMEOUT)" % self.time_limit
                 if self.time_limit else "no time limit")
        sys.stderr.write("tessel: tracing %s: %d operations recorded in %.0f s (an unrolled loop records its "
                         "body once per iteration; nl.affine_range or nl.sequential_range keeps it one loop); "
                         "%s\n" % (self.path, self.ops, now - self.start, limit))
        sys.stderr.flush()
