// The thread's recently fetched code, by PC (for the wrong path): a bounded table of the static instructions the
// thread fetched lately (operation class, register operands, branch direction and target, and the PC that followed
// it), so that after a mispredict the front end can fetch the wrong path from the thread's own code at the predicted
// target, as real hardware does, wherever that code was seen before. A trace holds only the correct path, so this is
// all the model can know of the wrong path's instructions.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"
#include "smtlab/common/types.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

// The part of an instruction a wrong-path uop needs: what it executes and which registers it reads and writes.
struct CodeOp {
  OpClass op = OpClass::Int;
  std::array<RegId, kMaxSrcRegs> src{kNoReg, kNoReg, kNoReg, kNoReg};
  std::array<RegId, kMaxDstRegs> dst{kNoReg, kNoReg};
};

// Size (chosen): 4096 instructions, direct-mapped by PC. NetBurst's trace cache holds ~12 K uops, so the front end
// itself keeps code of this order; 4096 covers the loop bodies and hot paths a wrong path runs into, and costs
// 4096 x 40 B = 160 KiB per hardware thread, allocated once. A conflict evicts (the newer instruction wins).
inline constexpr std::uint32_t kRecentCodeEntries = 4096;

class RecentCode {
 public:
  struct Entry {
    Addr pc = 0;
    Addr target = 0;       // the branch's target as last fetched (0 unknown)
    Addr fallThrough = 0;  // the PC fetched after this one when it did not redirect (0 unknown)
    CodeOp code;
    std::uint32_t generation = 0;  // valid only in the table's current generation (O(1) reset)
    bool branch = false;
    bool taken = false;  // the direction it last went
  };

  RecentCode() : entries_(kRecentCodeEntries) {}
  void visitState(StateIo& io) { io(entries_, generation_, previousIndex_, havePrevious_, previousRedirected_); }

  // A real instruction was fetched: it enters the table, and it is the fall-through of the previous one unless that
  // one redirected (a taken branch) or the chain was broken (a squash rewound fetch).
  void noteFetched(const Instr& in) {
    // The previous instruction's entry is still its own: only this function writes entries, and a reset or a broken
    // chain clears havePrevious_ (so it is not looked up again by PC for every fetched instruction).
    if (havePrevious_ && !previousRedirected_) entries_[previousIndex_].fallThrough = in.pc;
    const std::uint32_t i = index(in.pc);
    Entry& e = entries_[i];
    if (e.generation != generation_ || e.pc != in.pc) {
      e.pc = in.pc;
      e.fallThrough = 0;
      e.generation = generation_;
    }
    e.target = in.target;
    e.code.op = in.op;
    e.code.src = in.src;
    e.code.dst = in.dst;
    e.branch = in.isBranch();
    e.taken = in.taken;
    havePrevious_ = true;
    previousIndex_ = i;
    previousRedirected_ = in.isBranch() && in.taken;
  }
  // Fetch does not continue after the last noted instruction (a squash rewound the cursor).
  void breakChain() { havePrevious_ = false; }
  // Forgets everything (a new trace on the thread).
  void reset() {
    ++generation_;
    havePrevious_ = false;
  }
  // The instruction at pc, or nullptr when the table does not know it.
  const Entry* find(Addr pc) const {
    const Entry& e = entries_[index(pc)];
    return e.generation == generation_ && e.pc == pc && pc != 0 ? &e : nullptr;
  }
  // Where the wrong path goes after e: the direction the branch last went (chosen: the wrong path's own branches
  // follow their recent behaviour), else the fall-through; 0 when not known.
  static Addr successor(const Entry& e) { return e.branch && e.taken ? e.target : e.fallThrough; }
  // The first PC of the wrong path after mispredicted branch `in`: the direction it did not go. A conditional branch
  // that was taken was predicted not taken (its fall-through, if seen); one not taken was predicted taken (its
  // target). A wrong target (indirect jump, return, BTB) is not known to the trace: 0.
  Addr wrongPathStart(const Instr& in) const {
    if (in.branch != BranchKind::Conditional) return 0;
    if (!in.taken) return in.target;
    const Entry* e = find(in.pc);
    return e != nullptr ? e->fallThrough : 0;
  }

 private:
  static std::uint32_t index(Addr pc) {
    // x86 instructions start at any byte: mix in the bits above the index so that code 16 KiB apart spreads.
    return static_cast<std::uint32_t>((pc ^ (pc >> 12)) & (kRecentCodeEntries - 1));
  }
  std::vector<Entry> entries_;
  std::uint32_t generation_ = 1;
  std::uint32_t previousIndex_ = 0;  // the entry of the instruction noted last (valid while havePrevious_)
  bool havePrevious_ = false;
  bool previousRedirected_ = false;
};

}  // namespace smtlab
