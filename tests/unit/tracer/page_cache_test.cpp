// The page-cache pages of recorded file reads and writes (page_cache.hpp) and their move by page=P
// (KpathInstanceSource): which pages are found, and where each access goes, worked out by hand.
#include "smtlab/tracer/page_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "smtlab/common/error.hpp"
#include "smtlab/tracer/kpath_instance.hpp"
#include "smtlab/tracer/kpath_spec.hpp"

namespace smtlab {
namespace {

constexpr Addr kKernelPc = 0xffff'ffff'8150'0000ULL;  // copy_user_enhanced_fast_string's rep movsb
constexpr Addr kFilePage = 0xffff'8880'01e0'6000ULL;  // the probe file's page-cache page (direct map)
constexpr Addr kOtherPage = 0xffff'8880'0200'0000ULL;  // a second one
constexpr Addr kInode = 0xffff'8880'0300'0040ULL;     // kernel data in the direct map, not copied
constexpr Addr kUserBuf = 0x0000'7ffd'1000'0000ULL;
constexpr Addr kStack = 0xffff'c900'0001'3f00ULL;     // a kernel stack (vmalloc)

Instr copy(Addr from, Addr to) {  // one iteration of rep movsb
  Instr in;
  in.pc = kKernelPc;
  in.loads[0] = MemRef{from, 1};
  in.stores[0] = MemRef{to, 1};
  return in;
}

Instr loadAt(Addr pc, Addr addr) {
  Instr in;
  in.pc = pc;
  in.loads[0] = MemRef{addr, 8};
  return in;
}

std::vector<Instr> readThenWrite() {
  return {loadAt(kKernelPc - 0x40, kInode),            // the inode: kernel data, stays
          copy(kFilePage + 0x10, kUserBuf),          // copy_to_user from the file page
          copy(kFilePage + 0x11, kUserBuf + 1),
          loadAt(kKernelPc - 0x20, kFilePage + 0x800),  // another access to that page (not a copy): moves with it
          copy(kUserBuf + 2, kOtherPage + 0xff8),    // copy_from_user into a second page
          copy(kStack, kUserBuf + 3),                // a copy from the kernel stack (vmalloc): not a file page
          loadAt(0x0000'5555'0000'1000ULL, kFilePage)};  // a user-mode instruction: never a copy of the kernel's
}

TEST(PageCache, ThePagesAreTheKernelSideOfCopiesInOrderOfFirstCopy) {
  EXPECT_EQ(pageCachePages(readThenWrite()), (std::vector<Addr>{kFilePage, kOtherPage}));
  // A user-mode load and store between the direct map and user memory is no kernel copy.
  Instr user = copy(kFilePage, kUserBuf);
  user.pc = 0x401000;
  EXPECT_TRUE(pageCachePages(std::vector<Instr>{user}).empty());
}

TEST(PageCache, PageP_MovesTheJthPageToPagePPlusJKeepingTheOffset) {
  auto shared = std::make_shared<const KpathInstanceRecords>(readThenWrite());
  KpathInstanceSource moved(shared, 0, 10, "moved"), asRecorded(shared, 0, std::nullopt, "as recorded");
  std::vector<Instr> a(8), b(8);
  ASSERT_EQ(moved.read(a), 7u);
  ASSERT_EQ(asRecorded.read(b), 7u);
  a.resize(7);
  b.resize(7);
  const Addr page10 = kPageCacheBase + 10 * kPageBytes, page11 = kPageCacheBase + 11 * kPageBytes;
  EXPECT_EQ(page10, 0xffff'8890'0000'a000ULL);  // 64 GiB into the direct map, then 10 pages
  EXPECT_EQ(a[0].loads[0].addr, kInode);
  EXPECT_EQ(a[1].loads[0].addr, page10 + 0x10);
  EXPECT_EQ(a[1].stores[0].addr, kUserBuf);  // the user side stays (the task's own address space)
  EXPECT_EQ(a[2].loads[0].addr, page10 + 0x11);
  EXPECT_EQ(a[3].loads[0].addr, page10 + 0x800);
  EXPECT_EQ(a[4].stores[0].addr, page11 + 0xff8);
  EXPECT_EQ(a[5].loads[0].addr, kStack);
  EXPECT_EQ(a[6].loads[0].addr, page10);  // every access to a found page moves, whoever makes it
  EXPECT_EQ(b, readThenWrite());
  EXPECT_EQ(shared->records.all(), readThenWrite());
  // The last pages: P plus the instance's 2 pages must stay within kMaxPageCachePage.
  EXPECT_NO_THROW(KpathInstanceSource(shared, 0, kMaxPageCachePage - 1, "last"));
  EXPECT_THROW(KpathInstanceSource(shared, 0, kMaxPageCachePage, "past"), TraceError);
  EXPECT_LT(kPageCacheBase + (kMaxPageCachePage + 1) * kPageBytes, kDirectMapEnd);
}

TEST(PageCache, TheSpecTakesPageOnceAndInRange) {
  EXPECT_FALSE(parseKpathSpec("kpath:file_read").page);
  EXPECT_EQ(parseKpathSpec("kpath:file_read,seed=3,stack=2,page=12345").page, 12345u);
  EXPECT_EQ(parseKpathSpec("kpath:file_read,page=0").page, 0u);
  EXPECT_THROW(parseKpathSpec("kpath:file_read,page=1,page=2"), TraceError);
  EXPECT_THROW(parseKpathSpec("kpath:file_read,page=-1"), TraceError);
  EXPECT_THROW(parseKpathSpec("kpath:file_read,page="), TraceError);
  try {
    parseKpathSpec("kpath:file_read,page=268435456");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("page=268435456 is out of range (0..268435455)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace smtlab
