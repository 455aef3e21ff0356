// Page-table entry addresses and the page-walk cache (see page_walker.hpp for the geometry and its sources).
#include "smtlab/mem/page_walker.hpp"

#include <bit>

#include "smtlab/mem/address_space.hpp"

namespace smtlab {

namespace {

// Bit 47 set, bits 48-63 clear: above every canonical user address, below every kernel one.
constexpr Addr kTableRegion = Addr{1} << 47;
constexpr std::uint32_t kLevelShift = 40;  // a table's level in bits 40-42 of its virtual address

std::uint32_t indexBitsFor(std::uint32_t levels) { return levels == 2 ? 10 : 9; }

Addr vaMaskFor(std::uint32_t pageShift, std::uint32_t levels) {
  const std::uint32_t bits = pageShift + indexBitsFor(levels) * levels;
  return bits >= 64 ? ~Addr{0} : (Addr{1} << bits) - 1;
}

}  // namespace

PageWalker::PageWalker(const MemConfig& config, std::uint32_t cores)
    : levels_(config.page_walk.levels),
      indexBits_(indexBitsFor(config.page_walk.levels)),
      entryBytes_(config.page_walk.levels == 2 ? 4 : 8),
      pageShift_(static_cast<std::uint32_t>(std::countr_zero(config.page_bytes))),
      vaMask_(vaMaskFor(pageShift_, config.page_walk.levels)),
      pwcEntries_(config.page_walk.pwc_entries) {
  if (pwcEntries_ > 0) pwc_.assign(cores, SetAssocTags<LruReplacement>(1, pwcEntries_));
}

Addr PageWalker::entryAddress(Asid asid, Addr addr, std::uint32_t level) const {
  const Addr va = maskedVa(addr);
  const std::uint32_t above = shiftOf(level + 1);
  const Addr table = above >= 64 ? 0 : va >> above;  // which table of this level: the bits above its index
  const Addr index = (va >> shiftOf(level)) & ((Addr{1} << indexBits_) - 1);
  const Addr tableVa = kTableRegion | (Addr{level} << kLevelShift) | (table << 12);
  return physicalAddress(asid, tableVa | (index * entryBytes_));
}

PageWalker::Plan PageWalker::plan(std::uint32_t core, Asid asid, Addr addr) {
  Plan p;
  std::uint32_t top = levels_;  // first level to load, plus one
  if (!pwc_.empty()) {
    auto& cache = pwc_[core];
    // The deepest cached upper-level entry points at the next table: only the levels below it are loaded.
    for (std::uint32_t level = 1; level < levels_; ++level) {
      const std::uint32_t e = cache.find(pwcKey(asid, addr, level));
      if (e != SetAssocTags<>::kNotFound) {
        cache.touch(e);
        top = level;
        p.pwcHit = true;
        break;
      }
    }
    // The walk caches every upper-level entry it reads.
    for (std::uint32_t level = top; level-- > 1;) {
      const std::uint64_t key = pwcKey(asid, addr, level);
      if (cache.find(key) == SetAssocTags<>::kNotFound) cache.insert(key);
    }
  }
  for (std::uint32_t level = top; level-- > 0;) p.entries[p.count++] = entryAddress(asid, addr, level);
  return p;
}

void PageWalker::flush(std::uint32_t core, Asid asid) {
  if (pwc_.empty()) return;
  const std::uint64_t tag = asid.value & 0xffffU;
  pwc_[core].invalidateIf([tag](std::uint64_t key) { return ((key >> 3) & 0xffffU) == tag; });
}

}  // namespace smtlab
