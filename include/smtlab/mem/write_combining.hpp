// NetBurst's write-combining buffers (mem.l1d_write_through): with a write-through L1D every store goes on to the L2,
// and it gets there through a few line-sized buffers per core that the core's hardware threads share. A store to a
// line a buffer holds merges into it; a store to another line takes a free buffer, which asks the L2 for the line's
// ownership (a request for ownership: the L2 allocates on a write miss) at once. When no buffer is free, the least
// recently written one is written into the L2, which it can do only once its line is owned, and the store waits for
// it; the L2 takes one buffer's line at a time. Sources: docs/memory.md "Write-through L1D"; configs/netburst.toml.
#pragma once

#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"
#include "smtlab/common/types.hpp"

namespace smtlab {

// Per core.
struct WriteCombiningStats {
  std::uint64_t writes = 0;      // stores written into a buffer (a store split across two lines counts twice)
  std::uint64_t merges = 0;      // ...into a buffer already holding their line
  std::uint64_t flushes = 0;     // buffers written into the L2 to make room
  std::uint64_t waitCycles = 0;  // cycles stores waited for a buffer
};

class WriteCombiningBuffers {
 public:
  // `buffers` >= 1; `writeCycles`: cycles a buffer takes to write its line into the L2 once the line is owned and
  // the L2's write path is free.
  WriteCombiningBuffers(std::uint32_t buffers, std::uint32_t writeCycles);

  // A store to `line` reaching the buffers at `now`. `requestOwnership(start)` is called when the store takes a
  // buffer of its own at `start`: it sends the request for ownership to the L2 and returns the cycle the line is
  // owned. Returns the cycle the store is in a buffer (its store-buffer entry may then be freed).
  template <class RequestOwnership>
  Cycle write(LineAddr line, Cycle now, RequestOwnership&& requestOwnership) {
    ++stats_.writes;
    for (Buffer& b : buffers_) {
      if (b.open && b.line == line) {
        // Into it now, or when the store that took it gets in (it may still be waiting for the buffer).
        ++stats_.merges;
        if (now > b.lastWrite) b.lastWrite = now;
        return b.lastWrite;
      }
    }
    Buffer& b = takeBuffer(now);
    const Cycle start = b.freeAt > now ? b.freeAt : now;
    stats_.waitCycles += start - now;
    b.open = true;
    b.line = line;
    b.lastWrite = start;
    b.owned = requestOwnership(start);
    return start;
  }

  const WriteCombiningStats& stats() const { return stats_; }
  void resetStats() { stats_ = {}; }
  // The buffers' lines and times (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(buffers_, l2WriteFree_, stats_); }

 private:
  struct Buffer {
    LineAddr line;
    bool open = false;   // holds a line's stores (false: never used yet)
    Cycle owned{0};      // its line's request for ownership completes
    Cycle lastWrite{0};  // the last store written into it
    Cycle freeAt{0};     // its previous line has been written into the L2
  };
  // The buffer a store to a new line takes: an unused one, else the least recently written one, whose line is
  // written into the L2 first (freeAt).
  Buffer& takeBuffer(Cycle now);

  std::uint32_t writeCycles_;
  std::vector<Buffer> buffers_;
  Cycle l2WriteFree_{0};  // the L2 takes one buffer's line at a time: free from this cycle
  WriteCombiningStats stats_;
};

}  // namespace smtlab
