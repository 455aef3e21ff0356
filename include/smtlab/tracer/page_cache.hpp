// The page cache of simulated file I/O. A recorded file read or write (kpath: file_read, file_write, disk_read)
// copies between the caller's buffer and one page-cache page of the probe's file, a kernel direct-map page, and the
// probe's files are small: every instance copies one of a handful of pages. A workload whose tasks read and write
// files of their own (dbench: 21 MiB per client) touches a page cache far larger than any processor cache, so its
// instances must copy their own pages: kpath:NAME,page=P moves the instance's page-cache pages to pages P, P+1, ...
// of a simulated page cache (docs/tracing.md, "Page-cache pages").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/trace/record.hpp"

namespace smtlab {

inline constexpr Addr kPageBytes = 4096;
// The direct map of x86-64 4-level paging (Documentation/x86/x86_64/mm.rst: page_offset_base, ffff888000000000 with
// nokaslr, 64 TiB): all physical memory, page-cache pages among it.
inline constexpr Addr kDirectMapStart = 0xffff'8880'0000'0000ULL;
inline constexpr Addr kDirectMapEnd = 0xffff'c880'0000'0000ULL;
// The simulated page cache: 64 GiB into the direct map, far above the recording guest's 256 MiB of RAM, so never a
// page a recording touched (chosen); pages 0..kMaxPageCachePage (1 TiB) stay inside the direct map.
inline constexpr Addr kPageCacheBase = kDirectMapStart + (Addr{64} << 30);
inline constexpr std::uint64_t kMaxPageCachePage = (std::uint64_t{1} << 28) - 1;

// The page-cache pages of `records`: the direct-map pages on the kernel's side of a copy between user and kernel
// memory (a kernel instruction that loads from the direct map and stores to user memory, or the reverse: the
// `rep movsb` of copy_to_user / copy_from_user), in the order of their first such copy.
std::vector<Addr> pageCachePages(std::span<const Instr> records);

// Moves the accesses of `in` that fall in pages[j] to page firstPage + j of the simulated page cache; returns how
// many moved.
std::uint32_t movePageCacheAccesses(Instr& in, std::span<const Addr> pages, std::uint64_t firstPage);

}  // namespace smtlab
