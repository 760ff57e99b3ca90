//===- runtime/Trace.cpp - Chrome trace-event export ----------------------===//
//
// Writes the timeline in the Chrome trace-event format (opens in Perfetto or
// chrome://tracing): process 0 is the NeuronCore; one thread (track) per
// engine and per used DMA queue, named by "thread_name" metadata; one complete
// ("X") slice per dynamic instruction, named by its opcode, with args: the
// .tasm line, the source location it came from (`source`: "kernel.tsl:5:12";
// Program::instrSource), the value involved (`value`: the tensor a DMA
// moves, else the buffer written), the tile shape (partitions x free elements, or
// partitions and bytes for a DMA). Timestamps are microseconds. At most
// SimOptions::traceMaxEvents slices are kept (the first ones in program order);
// the number dropped is in "otherData".
//
//===----------------------------------------------------------------------===//
#include "runtime/Simulator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

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
      // Per static instruction, once: its name and where it came from.
      std::vector<std::string> names(prog.instrs.size()), sources(prog.instrs.size());
      for (size_t i = 0; i < prog.instrs.size(); ++i) {
        names[i] = instrName(prog.instrs[i]);
        sources[i] = prog.instrSource(prog.instrs[i]);
      }
      for (const TraceEvent &e : events) {
        const Instr &in = prog.instrs[e.instr];
        const std::string &name = names[e.instr];
        j.object([&] {
          j.attribute("name", name);
          j.attribute("cat", engineName(in.engine));
          j.attribute("ph", "X");
          j.attribute("pid", 0);
          j.attribute("tid", int64_t(e.unit));
          j.attribute("ts", e.startNs / 1000.0);
          j.attribute("dur", e.durNs / 1000.0);
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
