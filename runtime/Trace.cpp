//===- runtime/Trace.cpp - Chrome trace-event export ----------------------===//
//
// Writes the timeline in the Chrome trace-event format (opens in Perfetto or
// chrome://tracing): process 0 is the NeuronCore; one thread (track) per
// engine and per used DMA queue, named by "thread_name" metadata; one complete
// ("X") slice per dynamic instruction, named by its opcode, with args: the
// .tasm line, the source location it came from (`source`: "kernel.tsl:5:12";
// Program::instrSource), the value involved (`value`: the tensor a DMA
// moves, else the buffer written), the tile shape (partitions x free elements, or
// partitions and bytes for a DMA). A DMA queue has several transfers in flight
// and completes them in order: its track shows each transfer from when the
// previous one completed (or from its issue, if later) to its own completion,
// so the queue's slices never overlap and add up to the queue's busy time in
// the report; the time a transfer spent issued but behind its queue's earlier
// ones is a nestable async slice ("b"/"e", category "dma_queued") of id
// "qQ.L": waits of one queue overlap, so each takes the lowest lane L free
// when it begins. Timestamps are microseconds, rounded to whole nanoseconds
// (a viewer compares them so; unrounded, a slice could end a fraction of a
// nanosecond after the next begins). At most
// SimOptions::traceMaxEvents slices are kept (the first ones in program order);
// the number dropped is in "otherData".
//
//===----------------------------------------------------------------------===//
#include "runtime/Simulator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <set>

using namespace llvm;

namespace tessel::runtime {

static std::string unitName(unsigned u) {
  switch (u) {
  case 0: return "TensorE (PE)";
  case 1: return "VectorE (DVE)";
  case 2: return "ScalarE (ACT)";
  case 3: return "GpSimdE (POOL)";
  default: return "DMA queue " + std::to_string(u - 4);
  }
}

/// The metadata events naming the process and each engine or DMA queue's
/// track, in unit order.
static void writeTrackNames(json::OStream &j, const Report &report, const std::set<unsigned> &units) {
  j.object([&] {
    j.attribute("name", "process_name");
    j.attribute("ph", "M");
    j.attribute("pid", 0);
    j.attributeObject("args", [&] { j.attribute("name", "NeuronCore " + report.target + ": " + report.kernel); });
  });
  for (unsigned u : units) {
    j.object([&] {
      j.attribute("name", "thread_name");
      j.attribute("ph", "M");
      j.attribute("pid", 0);
      j.attribute("tid", int64_t(u));
      j.attributeObject("args", [&] { j.attribute("name", unitName(u)); });
    });
    j.object([&] {
      j.attribute("name", "thread_sort_index");
      j.attribute("ph", "M");
      j.attribute("pid", 0);
      j.attribute("tid", int64_t(u));
      j.attributeObject("args", [&] { j.attribute("sort_index", int64_t(u)); });
    });
  }
}

Error writeChromeTrace(StringRef path, const Program &prog, const Report &report,
                       const std::vector<TraceEvent> &events, uint64_t droppedEvents) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_Text);
  if (ec)
    return createStringError(ec, "cannot write trace '%s': %s", path.str().c_str(), ec.message().c_str());
  std::set<unsigned> units{0, 1, 2, 3};
  for (const TraceEvent &e : events)
    units.insert(e.unit);
  json::OStream j(os);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeObject("otherData", [&] {
      j.attribute("kernel", report.kernel);
      j.attribute("target", report.target);
      j.attribute("latency_us", report.latencyNs / 1000.0);
      j.attribute("dropped_events", int64_t(droppedEvents));
    });
    j.attributeArray("traceEvents", [&] {
      writeTrackNames(j, report, units);
      // Per static instruction, once: its name and where it came from.
      std::vector<std::string> names(prog.instrs.size()), sources(prog.instrs.size());
      for (size_t i = 0; i < prog.instrs.size(); ++i) {
        names[i] = instrName(prog.instrs[i]);
        sources[i] = prog.instrSource(prog.instrs[i]);
      }
      // Per DMA queue, when each lane of its waits is free again.
      std::map<unsigned, std::vector<double>> laneFree;
      auto us = [](double ns) { return std::round(ns) / 1000.0; };
      for (const TraceEvent &e : events) {
        const Instr &in = prog.instrs[e.instr];
        const std::string &name = names[e.instr];
        const double start = std::round(e.startNs), end = std::round(e.startNs + e.durNs);
        const double shown = std::min(end, std::round(e.startNs + e.queuedNs));
        if (shown > start) {
          std::vector<double> &lanes = laneFree[e.unit];
          size_t lane = 0;
          while (lane < lanes.size() && lanes[lane] > start)
            ++lane;
          if (lane == lanes.size())
            lanes.push_back(0);
          lanes[lane] = shown;
          const std::string id = "q" + std::to_string(e.unit - 4) + "." + std::to_string(lane);
          for (const char *ph : {"b", "e"})
            j.object([&] {
              j.attribute("name", "queued: " + name);
              j.attribute("cat", "dma_queued");
              j.attribute("ph", ph);
              j.attribute("id", id);
              j.attribute("pid", 0);
              j.attribute("ts", us(*ph == 'b' ? start : shown));
              if (*ph == 'b')
                j.attributeObject("args", [&] {
                  j.attribute("line", int64_t(in.loc.line));
                  j.attribute("queue", int64_t(e.unit - 4));
                });
            });
        }
        j.object([&] {
          j.attribute("name", name);
          j.attribute("cat", engineName(in.engine));
          j.attribute("ph", "X");
          j.attribute("pid", 0);
          j.attribute("tid", int64_t(e.unit));
          j.attribute("ts", us(shown));
          j.attribute("dur", us(end - shown));
          j.attributeObject("args", [&] {
            j.attribute("line", int64_t(in.loc.line));
            if (!sources[e.instr].empty())
              j.attribute("source", sources[e.instr]);
            j.attribute("value", prog.instrValue(in));
            if (in.op == Opcode::Dma) {
              j.attribute("partitions", int64_t(e.rows));
              j.attribute("bytes", int64_t(e.cols));
              if (in.tag != DmaTag::None)
                j.attribute("tag", in.tag == DmaTag::SpillSave ? "spill_save" : "spill_reload");
            } else {
              j.attribute("tile", std::to_string(int64_t(e.rows)) + "x" + std::to_string(int64_t(e.cols)));
            }
          });
        });
      }
    });
  });
  os << "\n";
  return Error::success();
}

} // namespace tessel::runtime
