#include "smtlab/tracer/page_cache.hpp"

#include <algorithm>

#include "smtlab/mem/address_space.hpp"

namespace smtlab {
namespace {

constexpr bool inDirectMap(Addr a) { return a >= kDirectMapStart && a < kDirectMapEnd; }
constexpr Addr pageOf(Addr a) { return a & ~(kPageBytes - 1); }

template <std::size_t N>
bool touches(const std::array<MemRef, N>& refs, bool (*what)(Addr)) {
  return std::any_of(refs.begin(), refs.end(), [&](const MemRef& m) { return m.valid() && what(m.addr); });
}
bool isUser(Addr a) { return !isKernelAddress(a); }
bool isDirect(Addr a) { return inDirectMap(a); }

}  // namespace

std::vector<Addr> pageCachePages(std::span<const Instr> records) {
  std::vector<Addr> pages;
  auto note = [&](const MemRef& m) {
    if (m.valid() && inDirectMap(m.addr) && std::find(pages.begin(), pages.end(), pageOf(m.addr)) == pages.end()) {
      pages.push_back(pageOf(m.addr));
    }
  };
  for (const Instr& in : records) {
    if (!isKernelAddress(in.pc)) continue;
    const bool toUser = touches(in.loads, isDirect) && touches(in.stores, isUser);
    const bool fromUser = touches(in.loads, isUser) && touches(in.stores, isDirect);
    if (!toUser && !fromUser) continue;
    for (const MemRef& m : in.loads) note(m);
    for (const MemRef& m : in.stores) note(m);
  }
  return pages;
}

std::uint32_t movePageCacheAccesses(Instr& in, std::span<const Addr> pages, std::uint64_t firstPage) {
  std::uint32_t moved = 0;
  auto move = [&](MemRef& m) {
    if (!m.valid() || !inDirectMap(m.addr)) return;
    const auto it = std::find(pages.begin(), pages.end(), pageOf(m.addr));
    if (it == pages.end()) return;
    const auto j = static_cast<std::uint64_t>(it - pages.begin());
    m.addr = kPageCacheBase + (firstPage + j) * kPageBytes + (m.addr & (kPageBytes - 1));
    ++moved;
  };
  for (MemRef& m : in.loads) move(m);
  for (MemRef& m : in.stores) move(m);
  return moved;
}

}  // namespace smtlab
