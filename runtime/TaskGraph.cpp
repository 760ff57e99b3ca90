//===- runtime/TaskGraph.cpp - Numeric work in parallel, in program order -===//
#include "runtime/TaskGraph.h"

#include <algorithm>

namespace tessel::runtime {

TaskGraph::TaskGraph(unsigned threads, size_t window)
    : nThreads(threads ? threads : std::max(1u, std::thread::hardware_concurrency())), window(window) {
  if (nThreads > 1)
    for (unsigned t = 0; t < nThreads; ++t)
      workers.emplace_back([this, t] { work(t); });
}

TaskGraph::~TaskGraph() {
  finish();
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  readyOrStop.notify_all();
  for (std::thread &w : workers)
    w.join();
}

bool TaskGraph::conflict(const Task &a, llvm::ArrayRef<Touch> b) {
  for (const Touch &x : a.touches)
    for (const Touch &y : b)
      if ((x.write || y.write) && x.isBuffer == y.isBuffer && x.id == y.id && x.rect.overlaps(y.rect))
        return true;
  return false;
}

void TaskGraph::submit(llvm::ArrayRef<Touch> touches, Work work) {
  if (workers.empty()) {
    work(0);
    return;
  }
  std::unique_lock<std::mutex> lock(mu);
  progress.wait(lock, [&] { return unfinished < window; });
  const uint64_t number = first + inFlight.size();
  Task task;
  task.touches.assign(touches.begin(), touches.end());
  task.work = std::move(work);
  for (Task &earlier : inFlight)
    if (!earlier.done && conflict(earlier, touches)) {
      earlier.dependents.push_back(number);
      ++task.unmet;
    }
  bool runnable = task.unmet == 0;
  inFlight.push_back(std::move(task));
  ++unfinished;
  if (runnable) {
    ready.push(number);
    lock.unlock();
    readyOrStop.notify_one();
  }
}

void TaskGraph::finish() {
  std::unique_lock<std::mutex> lock(mu);
  progress.wait(lock, [&] { return inFlight.empty(); });
}

void TaskGraph::work(unsigned thread) {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    readyOrStop.wait(lock, [&] { return stopping || !ready.empty(); });
    if (ready.empty())
      return; // stopping, and nothing left
    uint64_t number = ready.top();
    ready.pop();
    Task &task = inFlight[size_t(number - first)];
    Work job = std::move(task.work);
    lock.unlock();
    job(thread);
    lock.lock();
    Task &doneTask = inFlight[size_t(number - first)]; // the deque may have grown
    doneTask.done = true;
    --unfinished;
    unsigned woken = 0;
    for (uint64_t d : doneTask.dependents)
      if (--inFlight[size_t(d - first)].unmet == 0) {
        ready.push(d);
        ++woken;
      }
    // More than one newly ready task: wake others to share them (this thread takes one).
    for (unsigned i = 1; i < woken; ++i)
      readyOrStop.notify_one();
    while (!inFlight.empty() && inFlight.front().done) {
      inFlight.pop_front();
      ++first;
    }
    progress.notify_all();
  }
}

} // namespace tessel::runtime
