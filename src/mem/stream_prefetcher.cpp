#include "smtlab/mem/stream_prefetcher.hpp"

#include <algorithm>

namespace smtlab {

StreamPrefetcher::StreamPrefetcher(const MemConfig::StreamPrefetchConfig& config, std::uint32_t lineShift,
                                   std::uint32_t pageShift)
    : streams_(config.streams),
      pageLineShift_(pageShift - lineShift),
      linesPerPage_(std::uint64_t{1} << (pageShift - lineShift)),
      triggerLines_(config.trigger_bytes >> lineShift),
      aheadLines_(config.ahead_bytes >> lineShift) {}

StreamPrefetcher::Stream* StreamPrefetcher::find(std::uint64_t page) {
  for (Stream& s : streams_) {
    if (s.valid && s.page == page) return &s;
  }
  return nullptr;
}

StreamPrefetcher::Stream& StreamPrefetcher::allocate(std::uint64_t page, std::int64_t offset, int dir) {
  // A free entry, else the least recently used stream gives way.
  Stream& s = *std::min_element(streams_.begin(), streams_.end(), [](const Stream& a, const Stream& b) {
    return (a.valid ? a.used + 1 : 0) < (b.valid ? b.used + 1 : 0);
  });
  s = Stream{true, page, offset, offset + dir, dir, clock_};
  return s;
}

}  // namespace smtlab
