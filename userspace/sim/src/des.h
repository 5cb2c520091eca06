// SPDX-License-Identifier: GPL-2.0
// Discrete-event kernel of the mroce simulator: time in nanoseconds, a binary
// heap of events ordered by (time, insertion sequence) so that events at the
// same instant run in the order they were scheduled, and a seeded RNG. Every
// run with the same seed executes the same events in the same order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace sim {

using Time = uint64_t;  // ns
constexpr Time kNs = 1;
constexpr Time kUs = 1000;
constexpr Time kMs = 1000 * kUs;
constexpr Time kNever = ~Time(0);

// splitmix64: the finaliser doubles as the hash of ECMP and payload patterns.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// xoshiro256**; seeded through splitmix64 so that nearby seeds diverge.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    for (auto &w : s_) {
      seed = mix64(seed);
      w = seed;
    }
  }
  uint64_t next() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  bool chance(double p) { return p > 0 && uniform() < p; }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

class EventQueue {
 public:
  using Fn = void (*)(void *obj, uint64_t arg);

  Time now() const { return now_; }
  uint64_t executed() const { return executed_; }
  size_t pending() const { return heap_.size(); }

  void at(Time t, Fn fn, void *obj, uint64_t arg = 0) {
    if (t < now_) t = now_;
    heap_.push_back(Ev{t, seq_++, fn, obj, arg});
    std::push_heap(heap_.begin(), heap_.end(), Later());
  }
  // eq.call<&Class::method>(t, obj, arg) schedules obj->method(arg), or
  // obj->method() for a method without parameters.
  template <auto M, class T>
  void call(Time t, T *obj, uint64_t arg = 0) {
    at(t,
       [](void *o, uint64_t a) {
         if constexpr (std::is_invocable_v<decltype(M), T *, uint64_t>)
           (static_cast<T *>(o)->*M)(a);
         else
           (static_cast<T *>(o)->*M)();
       },
       obj, arg);
  }

  // Runs every event with time <= end; leaves now() at end.
  void run_until(Time end) {
    while (!heap_.empty() && heap_.front().t <= end) {
      std::pop_heap(heap_.begin(), heap_.end(), Later());
      Ev e = heap_.back();
      heap_.pop_back();
      now_ = e.t;
      executed_++;
      e.fn(e.obj, e.arg);
    }
    if (end > now_) now_ = end;
  }

 private:
  struct Ev {
    Time t;
    uint64_t seq;
    Fn fn;
    void *obj;
    uint64_t arg;
  };
  struct Later {
    bool operator()(const Ev &a, const Ev &b) const {
      return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
  };
  std::vector<Ev> heap_;
  Time now_ = 0;
  uint64_t seq_ = 0;
  uint64_t executed_ = 0;
};

// A re-armable one-shot timer on top of the queue: arming earlier than the
// pending deadline schedules a new event; stale events are recognised by
// their time and ignored.
template <auto M, class T>
class Timer {
 public:
  explicit Timer(T *owner) : owner_(owner) {}
  Time deadline() const { return at_; }
  void arm(EventQueue &eq, Time t) {
    if (t >= at_) return;
    at_ = t;
    eq.at(t, &Timer::fire, this, t);
  }
  void cancel() { at_ = kNever; }

 private:
  static void fire(void *o, uint64_t t) {
    auto *self = static_cast<Timer *>(o);
    if (self->at_ != t) return;
    self->at_ = kNever;
    (self->owner_->*M)();
  }
  T *owner_;
  Time at_ = kNever;
};

}  // namespace sim
