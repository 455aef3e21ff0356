// LineAddr (strong types for addresses; CONTRIBUTING.md): a line number is made from a byte address only by
// LineAddr::of, and never converts from or to a plain integer, so an address cannot be passed where a line is meant.
// Expected values are worked by hand.
#include <cstdint>
#include <functional>
#include <type_traits>
#include <unordered_set>

#include <gtest/gtest.h>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/cache.hpp"

namespace smtlab {
namespace {

// No implicit conversion either way, and no construction from an integer except through the named functions.
static_assert(!std::is_convertible_v<Addr, LineAddr>);
static_assert(!std::is_convertible_v<std::uint64_t, LineAddr>);
static_assert(!std::is_convertible_v<int, LineAddr>);
static_assert(!std::is_constructible_v<LineAddr, Addr>);
static_assert(!std::is_convertible_v<LineAddr, std::uint64_t>);
static_assert(!std::is_constructible_v<std::uint64_t, LineAddr>);
static_assert(!std::is_convertible_v<LineAddr, bool>);
// Zero cost: the same size as the integer it wraps, copied as plain bytes.
static_assert(sizeof(LineAddr) == sizeof(std::uint64_t));
static_assert(std::is_trivially_copyable_v<LineAddr>);

TEST(LineAddr, OfShiftsTheByteAddressByTheLineSize) {
  // 64-byte lines (shift 6): 0x1040 / 64 = 0x41; 0x103f is the last byte of line 0x40.
  EXPECT_EQ(LineAddr::of(0x1040, 6).value, 0x41u);
  EXPECT_EQ(LineAddr::of(0x103f, 6).value, 0x40u);
  EXPECT_EQ(LineAddr::of(0x1000, 6).value, 0x40u);
  // 128-byte lines (shift 7): 0x1040 and 0x103f are both in line 0x1000 / 128 = 0x20.
  EXPECT_EQ(LineAddr::of(0x1040, 7).value, 0x20u);
  EXPECT_EQ(LineAddr::of(0x103f, 7).value, 0x20u);
  // The top of the address space: 2^64 - 1 is in line 2^58 - 1 with 64-byte lines.
  EXPECT_EQ(LineAddr::of(~Addr{0}, 6).value, (std::uint64_t{1} << 58) - 1);
}

TEST(LineAddr, ComparesAsLineNumbers) {
  EXPECT_EQ(LineAddr::of(0x1040, 6), LineAddr::of(0x107f, 6));  // bytes 64..127 of the page: one line
  EXPECT_NE(LineAddr::of(0x107f, 6), LineAddr::of(0x1080, 6));  // one byte further is the next line
  EXPECT_LT(LineAddr::of(0x103f, 6), LineAddr::of(0x1040, 6));
  EXPECT_EQ(LineAddr::of(0x1040, 6).next(), LineAddr::of(0x1080, 6));
  EXPECT_EQ(LineAddr::fromNumber(0x41), LineAddr::of(0x1040, 6));
}

TEST(LineAddr, FirstByteIsTheLineTimesItsSize) {
  EXPECT_EQ(LineAddr::of(0x107f, 6).firstByte(6), Addr{0x1040});
  // The last line of a 4 KiB page (0x1fc0..0x1fff) and the next one start on different pages.
  EXPECT_EQ(LineAddr::of(0x1fff, 6).firstByte(6) >> 12, Addr{1});
  EXPECT_EQ(LineAddr::of(0x1fff, 6).next().firstByte(6) >> 12, Addr{2});
}

TEST(LineAddr, HashesAsItsNumber) {
  EXPECT_EQ(std::hash<LineAddr>{}(LineAddr::of(0x1040, 6)), std::hash<std::uint64_t>{}(0x41));
  std::unordered_set<LineAddr> lines{LineAddr::of(0x1040, 6), LineAddr::of(0x107f, 6), LineAddr::of(0x1080, 6)};
  EXPECT_EQ(lines.size(), 2u);  // 0x1040 and 0x107f are one line
}

TEST(LineAddr, CacheLooksUpByLineNotByByte) {
  // 1 KiB, 2-way, 64 B lines: 8 sets. Line 0x41 (bytes 0x1040..0x107f) filled; every byte of it hits, the bytes
  // either side (0x103f in line 0x40, 0x1080 in line 0x42) miss.
  CacheConfig config;
  config.size_kb = 1;
  config.assoc = 2;
  config.mshrs = 1;
  Cache cache(config, 64, "mem.test");
  cache.fill(LineAddr::of(0x1040, 6), Cycle{0}, MemLevel::L2, false);
  EXPECT_NE(cache.find(LineAddr::of(0x1040, 6)), Cache::kNotFound);
  EXPECT_NE(cache.find(LineAddr::of(0x107f, 6)), Cache::kNotFound);
  EXPECT_EQ(cache.find(LineAddr::of(0x103f, 6)), Cache::kNotFound);
  EXPECT_EQ(cache.find(LineAddr::of(0x1080, 6)), Cache::kNotFound);
  // Two more lines of set 1 (0x41 mod 8 = 1): 0x49 and 0x51. The third fill evicts LRU line 0x41, dirty by then.
  cache.setDirty(cache.find(LineAddr::of(0x1040, 6)));
  EXPECT_FALSE(cache.fill(LineAddr::fromNumber(0x49), Cycle{0}, MemLevel::L2, false).dirty);
  const Cache::Eviction ev = cache.fill(LineAddr::fromNumber(0x51), Cycle{0}, MemLevel::L2, false);
  EXPECT_TRUE(ev.dirty);
  EXPECT_EQ(ev.line, LineAddr::of(0x1040, 6));
}

}  // namespace
}  // namespace smtlab
