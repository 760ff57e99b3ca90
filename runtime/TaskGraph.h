//===- runtime/TaskGraph.h - Numeric work in parallel, in program order -*- C++ -*-===//
//
// Internal to the runtime. The numeric executor submits each instruction's
// arithmetic as a task, in program order, with the regions it reads and
// writes. A task runs once every earlier task it conflicts with (one writes
// a region the other reads or writes) has finished, on one of `threads`
// worker threads; independent tasks -- tile products of different PSUM
// slots, loads of other buffers -- run at the same time. Every task sees
// exactly the values it would see in program order, so the results do not
// depend on the number of threads. With one thread, submit runs the task at
// once on the caller's thread.
//
// At most `window` tasks are unfinished. When the window is full, the
// submitting thread runs ready tasks itself until half of it has drained
// (finish() does the same until all are done), so `threads` threads compute:
// `threads - 1` workers and the submitter. Waking a sleeping thread per task
// would cost more than the small tasks' arithmetic on a virtual machine.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TASKGRAPH_H
#define TESSEL_RUNTIME_TASKGRAPH_H

#include "runtime/RegionTracker.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace tessel::runtime {

/// A region a task reads or writes: a tensor's or buffer's bounding rectangle.
struct Touch {
  bool isBuffer = false;
  uint32_t id = 0;
  Rect rect;
  bool write = false;
};

class TaskGraph {
public:
  using Work = std::function<void(unsigned thread)>;

  /// `threads` workers (0: the machine's hardware threads).
  explicit TaskGraph(unsigned threads, size_t window = 128);
  /// Waits for the tasks in flight.
  ~TaskGraph();
  TaskGraph(const TaskGraph &) = delete;
  TaskGraph &operator=(const TaskGraph &) = delete;

  /// Threads a task may run on: its `thread` argument is below this.
  unsigned threads() const { return nThreads; }
  void submit(llvm::ArrayRef<Touch> touches, Work work);
  /// Returns when every task submitted has finished.
  void finish();

private:
  struct Task {
    llvm::SmallVector<Touch, 3> touches;
    Work work;
    unsigned unmet = 0; ///< earlier conflicting tasks not finished
    llvm::SmallVector<uint64_t, 4> dependents;
    bool done = false;
  };

  unsigned nThreads;
  size_t window;
  std::mutex mu;
  /// Signalled when a task becomes ready, when the submitter's goal is
  /// reached (unfinished <= submitterGoal) and when stopping.
  std::condition_variable changed;
  bool submitterWaiting = false;
  size_t submitterGoal = 0;
  /// Program order, from the oldest unfinished task; inFlight[0] is task number `first`.
  std::deque<Task> inFlight;
  uint64_t first = 0;
  size_t unfinished = 0;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> ready; ///< oldest first
  bool stopping = false;
  std::vector<std::thread> workers;

  static bool conflict(const Task &a, llvm::ArrayRef<Touch> b);
  void work(unsigned thread);
  /// Runs the oldest ready task on `thread` (the lock is released meanwhile)
  /// and makes its dependents ready.
  void runOldestReady(std::unique_lock<std::mutex> &lock, unsigned thread);
  /// The submitting thread runs ready tasks (or waits) until at most `goal`
  /// tasks are unfinished.
  void helpUntil(std::unique_lock<std::mutex> &lock, size_t goal);
};

} // namespace tessel::runtime

#endif
