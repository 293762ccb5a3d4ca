/// \file
/// A counting semaphore with scoped slots: how a provider keeps several agent
/// threads from sending more than max_concurrency requests (or running more
/// than that many commands) at once, so rate limits and local GPUs are not
/// flooded.
///
/// Contract: thread-safe; acquire() blocks until a slot is free; a Slot gives
/// its slot back when destroyed. The limit outlives every Slot taken from it.
#pragma once

#include <condition_variable>
#include <mutex>

namespace kernelopt::llm {

class ConcurrencyLimit {
 public:
  class Slot {
   public:
    explicit Slot(ConcurrencyLimit& limit) : limit_(&limit) {}
    ~Slot() { if (limit_) limit_->release(); }
    Slot(Slot&& other) noexcept : limit_(other.limit_) { other.limit_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;

   private:
    ConcurrencyLimit* limit_;
  };

  /// max_in_flight >= 1 (smaller values are raised to 1).
  explicit ConcurrencyLimit(int max_in_flight) : max_(max_in_flight < 1 ? 1 : max_in_flight) {}

  /// Waits for a free slot and takes it.
  [[nodiscard]] Slot acquire() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return in_flight_ < max_; });
    ++in_flight_;
    return Slot(*this);
  }

  int max_in_flight() const { return max_; }

 private:
  void release() {
    {
      std::lock_guard lock(mutex_);
      --in_flight_;
    }
    freed_.notify_one();
  }

  const int max_;
  std::mutex mutex_;
  std::condition_variable freed_;
  int in_flight_ = 0;
};

}  // namespace kernelopt::llm
