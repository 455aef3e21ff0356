// The L2's stream prefetcher of one core, shared by its hardware threads, after the Pentium 4's and Xeon's
// automatic hardware prefetcher (IA-32 Intel Architecture Optimization Reference Manual, order no. 248966,
// chapter 6, "Hardware Prefetching of Data"; docs/memory.md): two successive misses in the last-level cache whose
// distance is within a trigger threshold start a stream; a stream stays a fixed distance ahead of the demand
// accesses (the manual: 256 bytes), follows one direction in one 4 KiB page (never crosses a page), and the
// prefetcher follows a bounded number of streams (8), the least recently used giving way. It fetches into the L2
// (through the LLC, which it fills as well). The caller issues the prefetches: observe() names the lines.
#pragma once

#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"
#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"

namespace smtlab {

class StreamPrefetcher {
 public:
  StreamPrefetcher(const MemConfig::StreamPrefetchConfig& config, std::uint32_t lineShift, std::uint32_t pageShift);

  // A demand access to the L2 of `line`; `llcMiss`: it missed in the LLC too (went to memory). Calls issue(line)
  // for each line to prefetch now, nearest first; lines already asked for by this stream are not named again.
  template <class Issue>
  void observe(LineAddr line, bool llcMiss, Issue&& issue) {
    const std::uint64_t page = line.value >> pageLineShift_;
    const auto offset = static_cast<std::int64_t>(line.value & (linesPerPage_ - 1));
    ++clock_;
    Stream* s = find(page);
    if (s == nullptr) {
      if (!llcMiss) return;
      const bool trigger = lastMissValid_ && lastMissPage_ == page && offset != lastMissOffset_ &&
                           static_cast<std::uint64_t>(offset > lastMissOffset_ ? offset - lastMissOffset_
                                                                               : lastMissOffset_ - offset) <=
                               triggerLines_;
      const std::int64_t from = lastMissOffset_;
      lastMissValid_ = true;
      lastMissPage_ = page;
      lastMissOffset_ = offset;
      if (!trigger) return;
      s = &allocate(page, offset, offset > from ? 1 : -1);
      ++started_;
    }
    s->used = clock_;
    if ((s->dir > 0 && offset > s->last) || (s->dir < 0 && offset < s->last)) s->last = offset;
    // A demand access that jumped past the prefetches: the stream goes on from there, not from behind it.
    if ((s->dir > 0 && s->next <= s->last) || (s->dir < 0 && s->next >= s->last)) s->next = s->last + s->dir;
    const std::int64_t target = s->last + s->dir * static_cast<std::int64_t>(aheadLines_);
    for (; s->dir > 0 ? s->next <= target : s->next >= target; s->next += s->dir) {
      if (s->next < 0 || s->next >= static_cast<std::int64_t>(linesPerPage_)) break;  // never past its page
      issue(LineAddr::fromNumber((page << pageLineShift_) | static_cast<std::uint64_t>(s->next)));
    }
  }

  std::uint64_t streamsStarted() const { return started_; }
  // The streams and the last miss (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(streams_, lastMissValid_, lastMissPage_, lastMissOffset_, clock_, started_); }

 private:
  struct Stream {
    bool valid = false;
    std::uint64_t page = 0;
    std::int64_t last = 0;  // the furthest demand access in the stream's direction (line within the page)
    std::int64_t next = 0;  // the next line to prefetch
    int dir = 1;
    std::uint64_t used = 0;
  };
  Stream* find(std::uint64_t page);
  Stream& allocate(std::uint64_t page, std::int64_t offset, int dir);

  std::vector<Stream> streams_;
  std::uint32_t pageLineShift_;
  std::uint64_t linesPerPage_;
  std::uint64_t triggerLines_;
  std::uint64_t aheadLines_;
  bool lastMissValid_ = false;
  std::uint64_t lastMissPage_ = 0;
  std::int64_t lastMissOffset_ = 0;
  std::uint64_t clock_ = 0;
  std::uint64_t started_ = 0;
};

}  // namespace smtlab
