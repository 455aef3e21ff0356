#include "smtlab/tracer/system_trace.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

constexpr char kSysMagic[8] = {'S', 'M', 'T', 'L', 'S', 'Y', 'S', '\1'};
constexpr std::uint32_t kMarkerWord = 0x80000003u;
constexpr std::uint32_t kCutWord = 0x80000005u;
constexpr std::uint32_t kLimitWord = 0x80000007u;

struct Access {
  std::uint32_t index;
  bool store;
  std::uint8_t size;
  Addr addr;
};

// The stream is read whole: a region set is a few hundred MB at most (the plugin's limit bounds it).
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TraceError(fmt::format("cannot open system trace '{}'", path));
    data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (data_.size() < 8 || std::memcmp(data_.data(), kSysMagic, 8) != 0) {
      throw TraceError(fmt::format("{}: not a system tracer stream (bad magic)", path));
    }
    pos_ = 8;
  }
  bool u32(std::uint32_t& x) { return get(&x, 4); }
  bool u64(std::uint64_t& x) { return get(&x, 8); }
  std::size_t offset() const { return pos_; }
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw TraceError(fmt::format("{}: byte {}: {}", path_, at, what));
  }

 private:
  bool get(void* dst, std::size_t n) {  // false at the end, also inside an entry cut short
    if (pos_ + n > data_.size()) return false;
    std::memcpy(dst, data_.data() + pos_, n);  // x86-64 host: the stream's little-endian order
    pos_ += n;
    return true;
  }
  std::string path_;
  std::vector<char> data_;
  std::size_t pos_ = 0;
};

// The block being gathered: its instructions [from, to) are emitted when the next block or marker shows where it
// went; accesses recorded meanwhile belong to it.
struct Pending {
  const RawBlockTable::Block* block = nullptr;
  bool kernel = false;
  std::uint32_t from = 0, to = 0;
  std::vector<Access> accesses;
};

// One record from a decoded instruction and its accesses; `next` is the pc executed after it (0 if unknown).
Instr makeInstr(const X86Insn& d, const std::vector<Access>& accesses, std::uint32_t index, Addr next,
                std::uint64_t& dropped) {
  Instr r;
  // QEMU splits 16/32-byte accesses into 8-byte pieces: contiguous pieces of one instruction are merged back.
  for (const Access& acc : accesses) {
    if (acc.index != index) continue;
    if (!addAccess(r, acc.store, acc.addr, acc.size)) ++dropped;
  }
  applyDecoded(d, r);
  // A rep-prefixed string op runs one iteration per execution in QEMU: its next pc is its own, not a transfer.
  const bool repeats = d.isRep && next == d.pc;
  if (d.branch == BranchKind::None && next != 0 && next != d.pc + d.length && !repeats) {
    // Control went elsewhere after a non-branch: a mode switch (syscall, sysret, iret) or an interrupt taken after
    // it. The pipeline is redirected there, so the record says so (chosen: kind `other`, like ChampSim's
    // unclassified transfers, which the predictor treats as indirect).
    r.branch = BranchKind::Other;
    r.taken = true;
    r.target = next;
  } else if (d.branch != BranchKind::None) {
    if (d.branch == BranchKind::Conditional) {
      r.taken = next != 0 && next != d.pc + d.length;
      r.target = d.target;
    } else {
      r.taken = true;
      r.target = d.target ? d.target : next;
    }
  }
  return r;
}

}  // namespace

std::uint64_t SystemRegion::kernelInstructions() const {
  std::uint64_t n = 0;
  for (std::uint8_t k : kernel) n += k;
  return n;
}

SplitStats splitSystemStream(const RawBlockTable& blocks, const std::string& path,
                             const std::function<void(SystemRegion&&)>& sink) {
  Reader in(path);
  SplitStats stats;
  Pending cur;
  std::optional<SystemRegion> open;

  // Emits the pending block's instructions into the open region; `nextPc` is where execution went after it.
  auto flush = [&](Addr nextPc) {
    if (cur.block && open) {
      for (std::uint32_t i = cur.from; i < cur.to; ++i) {
        const X86Insn& d = blocks.insn(cur.block->first + i);
        const Addr next = i + 1 < cur.block->count ? blocks.insn(cur.block->first + i + 1).pc : nextPc;
        open->instrs.push_back(makeInstr(d, cur.accesses, i, next, stats.droppedAccesses));
        open->kernel.push_back(cur.kernel ? 1 : 0);
      }
    }
    cur.block = nullptr;
    cur.accesses.clear();
  };
  auto blockOf = [&](std::uint32_t id, std::size_t at) {
    const RawBlockTable::Block* b = blocks.block(id);
    if (!b) in.fail(at, fmt::format("block {} is not defined in the block file", id));
    return b;
  };

  std::uint32_t w = 0;
  for (std::size_t at = in.offset(); in.u32(w); at = in.offset()) {
    if ((w & 1) == 0) {  // a block executes
      const std::uint32_t id = (w >> 1) & 0x3fffffffu;
      const RawBlockTable::Block* b = blockOf(id, at);
      const bool kernel = (w & 0x80000000u) != 0;
      if (kernel != (b->pc >= kKernelHalf)) in.fail(at, fmt::format("block {} has the wrong privilege flag", id));
      flush(b->pc);
      cur.block = b;
      cur.kernel = kernel;
      cur.from = 0;
      cur.to = b->count;
    } else if ((w & 0x80000000u) == 0) {  // a memory access of the pending block
      std::uint64_t addr = 0;
      if (!in.u64(addr)) break;
      const std::uint32_t index = (w >> 4) & 1023;
      if (!cur.block) in.fail(at, "memory access before any block");
      // QEMU 7.2 reports the CPU's own accesses while it delivers an interrupt or exception (IDT and TSS reads,
      // the frame it pushes) through the callbacks of the instruction that ran last. Those that cannot belong to
      // that instruction (an index past its block, a kernel address from user code) are dropped and counted.
      if (index >= cur.block->count || (!cur.kernel && addr >= kKernelHalf)) {
        ++stats.deliveryAccesses;
        continue;
      }
      cur.accesses.push_back(Access{index, (w & 8) != 0, static_cast<std::uint8_t>(1u << ((w >> 1) & 3)), addr});
    } else if (w == kCutWord) {
      std::uint32_t k = 0;
      if (!in.u32(k)) break;
      if (!cur.block || k >= cur.block->count) in.fail(at, "cut entry without a block it could cut");
      // The k-th instruction started and raised an exception; it runs again after the handler, so it is not
      // emitted here.
      cur.to = std::min(cur.to, k == 0 ? 0 : k - 1);
      ++stats.cut;
    } else if (w == kMarkerWord) {
      std::uint32_t payload = 0, id = 0, index = 0;
      if (!in.u32(payload) || !in.u32(id) || !in.u32(index)) break;
      const RawBlockTable::Block* b = blockOf(id, at);
      if (index >= b->count) in.fail(at, fmt::format("marker index {} outside block {}", index, id));
      const std::uint32_t region = payload & (kMarkerEndBit - 1);
      if ((payload & kMarkerEndBit) == 0) {
        if (open) ++stats.broken;  // a begin inside a region: the earlier one never ended on this CPU
        cur.block = nullptr;
        cur.accesses.clear();
        open.emplace();
        open->id = region;
        cur.block = b;
        cur.kernel = b->pc >= kKernelHalf;
        cur.from = index + 1;
        cur.to = b->count;
      } else {
        if (cur.block != b) in.fail(at, fmt::format("end marker in block {}, which is not the block running", id));
        cur.to = std::min(cur.to, index);
        flush(blocks.insn(b->first + index).pc);
        if (open && open->id == region) {
          ++stats.regions;
          stats.instructions += open->instrs.size();
          sink(std::move(*open));
        } else if (open) {
          ++stats.broken;
        }
        open.reset();
      }
    } else if (w == kLimitWord) {
      stats.limitReached = true;
      break;
    } else {
      in.fail(at, fmt::format("corrupt entry word {:#010x}", w));
    }
  }
  if (open) ++stats.broken;  // the stream ended inside a region
  return stats;
}

std::vector<SystemRegion> kernelExcursions(const SystemRegion& region) {
  std::vector<SystemRegion> out;
  for (std::size_t i = 0; i < region.instrs.size();) {
    if (!region.kernel[i]) {
      ++i;
      continue;
    }
    SystemRegion r;
    r.id = region.id;
    for (; i < region.instrs.size() && region.kernel[i]; ++i) {
      r.instrs.push_back(region.instrs[i]);
      r.kernel.push_back(1);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> systemCpuFiles(const std::string& prefix) {
  std::vector<std::string> files;
  for (int k = 0;; ++k) {
    std::string f = fmt::format("{}.cpu{}.raw", prefix, k);
    if (!std::filesystem::exists(f)) break;
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace smtlab
