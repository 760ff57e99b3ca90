//===- runtime/TaskGraph.cpp - Numeric work in parallel, in program order -===//
#include "runtime/TaskGraph.h"

#include <algorithm>

namespace tessel::runtime {

TaskGraph::TaskGraph(unsigned threads, size_t window)
    : nThreads(threads ? threads : std::max(1u, std::thread::hardware_concurrency())), window(window) {
  // The submitting thread is the last of the threads (number nThreads - 1).
  if (nThreads > 1)
    for (unsigned t = 0; t + 1 < nThreads; ++t)
      workers.emplace_back([this, t] { work(t); });
}

TaskGraph::~TaskGraph() {
  finish();
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  changed.notify_all();
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
  if (unfinished >= window)
    helpUntil(lock, window / 2);
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
    changed.notify_one();
  }
}

void TaskGraph::finish() {
  std::unique_lock<std::mutex> lock(mu);
  if (!workers.empty())
    helpUntil(lock, 0);
}

void TaskGraph::helpUntil(std::unique_lock<std::mutex> &lock, size_t goal) {
  while (unfinished > goal) {
    if (!ready.empty()) {
      runOldestReady(lock, nThreads - 1);
      continue;
    }
    submitterWaiting = true;
    submitterGoal = goal;
    changed.wait(lock, [&] { return unfinished <= goal || !ready.empty(); });
    submitterWaiting = false;
  }
  // Tasks made ready while this thread ran one are the workers' now.
  if (!ready.empty())
    changed.notify_all();
}

void TaskGraph::runOldestReady(std::unique_lock<std::mutex> &lock, unsigned thread) {
  uint64_t number = ready.top();
  ready.pop();
  Work job = std::move(inFlight[size_t(number - first)].work);
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
  while (!inFlight.empty() && inFlight.front().done) {
    inFlight.pop_front();
    ++first;
  }
  // This thread takes one newly ready task; wake others to share the rest,
  // and the submitter once its goal is reached.
  if (submitterWaiting && unfinished <= submitterGoal)
    changed.notify_all();
  else
    for (unsigned i = 1; i < woken; ++i)
      changed.notify_one();
}

void TaskGraph::work(unsigned thread) {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    changed.wait(lock, [&] { return stopping || !ready.empty(); });
    if (ready.empty())
      return; // stopping, and nothing left
    runOldestReady(lock, thread);
  }
}

} // namespace tessel::runtime
