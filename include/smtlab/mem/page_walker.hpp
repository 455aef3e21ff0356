// Page walks through the caches: on a TLB miss the page-miss handler reads one page-table entry per
// level, top level first, each a load through the core's data caches at the entry's physical address, so a miss
// costs what those loads cost and two threads' walks compete for the caches. An optional page-walk cache keeps the
// upper levels' entries (Intel's paging-structure caches, SDM Vol. 3A §4.10.3): a hit there skips those levels.
//
// Page-table geometry: x86-64 4-level paging reads PML4E, PDPTE, PDE, PTE, 9 index bits each, 8-byte entries
// (SDM Vol. 3A §4.5); 32-bit paging with 4 KiB pages (the NetBurst Xeon MP without PAE) reads a PDE and a PTE, 10
// index bits each, 4-byte entries (SDM Vol. 3A §4.3). Every table is one 4 KiB page either way.
//
// Layout (chosen: the traces carry no page tables): the table that a level's entry lives in is a page of its own at a
// virtual address in a region no canonical address uses (bit 47 set, bits 48-63 clear), named by the level and the
// address bits above that level's index, then placed by physicalAddress(asid, ...) like any data page. So the layout
// is deterministic per address space, adjacent pages share their last-level table (8 or 16 PTEs per 64 B line), and
// two address spaces never share a table line.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/tag_array.hpp"

namespace smtlab {

class PageWalker {
 public:
  static constexpr std::uint32_t kMaxLevels = 5;

  // The entries a walk must load, top level first (those the page-walk cache supplied are not among them).
  struct Plan {
    std::array<Addr, kMaxLevels> entries{};
    std::uint32_t count = 0;
    bool pwcHit = false;
  };

  // cores: one page-walk cache per core.
  PageWalker(const MemConfig& config, std::uint32_t cores);

  // Physical address of the level-`level` entry (0 = the last level, the PTE) that translates `addr` in `asid`.
  Addr entryAddress(Asid asid, Addr addr, std::uint32_t level) const;

  // The loads of a walk for `addr` on `core`; looks up and fills the core's page-walk cache.
  Plan plan(std::uint32_t core, Asid asid, Addr addr);

  // Drops the core's page-walk-cache entries of `asid` (a CR3 write flushes the paging-structure caches too).
  void flush(std::uint32_t core, Asid asid);

  std::uint32_t levels() const { return levels_; }
  // The page-walk caches (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(pwc_); }

 private:
  std::uint64_t pwcKey(Asid asid, Addr addr, std::uint32_t level) const {
    // Level (3 bits) and asid (16 bits) below the address bits above that level's index.
    return ((maskedVa(addr) >> shiftOf(level)) << 19) | (std::uint64_t{asid.value & 0xffffU} << 3) | level;
  }
  Addr maskedVa(Addr addr) const { return addr & vaMask_; }
  std::uint32_t shiftOf(std::uint32_t level) const { return pageShift_ + indexBits_ * level; }

  const std::uint32_t levels_;
  const std::uint32_t indexBits_;   // 9 (8-byte entries) or 10 (2-level 32-bit paging, 4-byte entries)
  const std::uint32_t entryBytes_;
  const std::uint32_t pageShift_;
  const Addr vaMask_;               // the virtual-address bits the levels translate
  const std::uint32_t pwcEntries_;
  std::vector<SetAssocTags<LruReplacement>> pwc_;  // per core, fully associative; empty without a page-walk cache
};

}  // namespace smtlab
