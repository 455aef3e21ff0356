// The L2 stream prefetcher (mem/stream_prefetcher.hpp): which lines it names, worked out by hand for 64-byte lines,
// 4 KiB pages (64 lines), a 256-byte trigger and 256 bytes ahead (4 lines), as the Pentium 4's.
#include "smtlab/mem/stream_prefetcher.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "smtlab/mem/memory_system.hpp"

namespace smtlab {
namespace {

constexpr std::uint32_t kLineShift = 6, kPageShift = 12;

struct Probe {
  StreamPrefetcher p;
  explicit Probe(std::uint32_t streams = 8) : p(MemConfig::StreamPrefetchConfig{streams, 256, 256}, kLineShift,
                                                 kPageShift) {}
  // Lines named for a demand access to line `offset` of page `page`, as offsets within that page.
  std::vector<std::int64_t> access(std::uint64_t page, std::uint64_t offset, bool llcMiss) {
    std::vector<std::int64_t> named;
    p.observe(LineAddr::fromNumber(page * 64 + offset), llcMiss, [&](LineAddr l) {
      EXPECT_EQ(l.value / 64, page) << "a stream never leaves its page";
      named.push_back(static_cast<std::int64_t>(l.value % 64));
    });
    return named;
  }
};

using V = std::vector<std::int64_t>;

TEST(StreamPrefetcher, TwoCloseMissesStartAStreamThatKeepsFourLinesAhead) {
  Probe s;
  EXPECT_EQ(s.access(7, 0, true), V{});            // the first miss only arms it
  EXPECT_EQ(s.access(7, 1, true), (V{2, 3, 4, 5}));  // the second, 64 bytes on: a stream, 256 bytes ahead
  EXPECT_EQ(s.access(7, 2, false), (V{6}));        // a hit on a prefetched line moves it on
  EXPECT_EQ(s.access(7, 3, false), (V{7}));
  EXPECT_EQ(s.access(7, 3, false), V{});           // the same line again: nothing new
  EXPECT_EQ(s.access(7, 10, false), (V{11, 12, 13, 14}));  // a jump ahead: from there, not the lines skipped
  EXPECT_EQ(s.access(7, 62, true), (V{63}));       // the page's end is the stream's
  EXPECT_EQ(s.access(7, 63, false), V{});
  EXPECT_EQ(s.p.streamsStarted(), 1u);
}

TEST(StreamPrefetcher, BackwardStreamsAndTheTrigger) {
  Probe s;
  EXPECT_EQ(s.access(3, 40, true), V{});
  EXPECT_EQ(s.access(3, 38, true), (V{37, 36, 35, 34}));  // 128 bytes back: a downward stream
  EXPECT_EQ(s.access(3, 1, false), (V{0}));               // and it stops at the page's start
  Probe t;
  EXPECT_EQ(t.access(3, 0, true), V{});
  EXPECT_EQ(t.access(3, 5, true), V{});  // 320 bytes apart: beyond the 256-byte trigger
  EXPECT_EQ(t.access(4, 6, true), V{});  // another page: not successive misses of one stream
  EXPECT_EQ(t.access(4, 9, false), V{});  // no stream, and a hit does not arm one
  EXPECT_EQ(t.access(4, 10, true), (V{11, 12, 13, 14}));  // 4 lines after the miss at 6: within 256 bytes
  EXPECT_EQ(t.p.streamsStarted(), 1u);
}

TEST(StreamPrefetcher, TheLeastRecentlyUsedStreamGivesWay) {
  Probe s(2);
  s.access(1, 0, true);
  s.access(1, 1, true);  // stream in page 1
  s.access(2, 0, true);
  s.access(2, 1, true);  // stream in page 2
  s.access(1, 2, false);  // page 1 used again: page 2's is now the older
  s.access(3, 0, true);
  EXPECT_EQ(s.access(3, 1, true), (V{2, 3, 4, 5}));  // a third stream replaces page 2's
  EXPECT_EQ(s.access(1, 3, false), (V{7}));           // page 1's goes on (it had named up to 6)
  EXPECT_EQ(s.access(2, 2, false), V{});              // page 2's is gone: a hit names nothing
  EXPECT_EQ(s.p.streamsStarted(), 3u);
}

TEST(StreamPrefetcher, AMemorySystemStreamsASequentialWalkFromTheThirdLineOn) {
  // A walk through one page of memory, one load per line, each after the previous one's data: without the
  // streamer every line is a DRAM miss; with it, the first two start the stream and the rest were prefetched.
  auto walk = [](std::uint32_t streams) {
    MemConfig m;
    m.next_line_prefetch = false;
    m.stream_prefetch.streams = streams;
    MemorySystem mem(m, 1, 1);
    Cycle t{0};
    int fromDram = 0;
    for (Addr a = 0x100000; a < 0x101000; a += 64) {
      const MemResult r = mem.load(CoreId{0}, Asid{0}, a, 8, t);
      fromDram += r.level == MemLevel::Dram;
      t = r.ready + 200;  // work between lines: the prefetches have time to arrive
    }
    return fromDram;
  };
  EXPECT_EQ(walk(0), 64);
  EXPECT_EQ(walk(8), 2);
}

}  // namespace
}  // namespace smtlab
