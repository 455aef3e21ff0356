#include "smtlab/mem/write_combining.hpp"

#include <algorithm>

#include "smtlab/common/error.hpp"

namespace smtlab {

WriteCombiningBuffers::WriteCombiningBuffers(std::uint32_t buffers, std::uint32_t writeCycles)
    : writeCycles_(writeCycles), buffers_(buffers) {
  if (buffers == 0) throw ConfigError("mem.wc_buffers: must be at least 1");
}

WriteCombiningBuffers::Buffer& WriteCombiningBuffers::takeBuffer(Cycle now) {
  // A buffer is emptied only to be taken again at once, so one that holds no line has never been used.
  Buffer* oldest = &buffers_.front();
  for (Buffer& b : buffers_) {
    if (!b.open) return b;
    if (b.lastWrite < oldest->lastWrite) oldest = &b;
  }
  // The least recently written buffer is written into the L2 once its line is owned and the L2's write path is free
  // (one line at a time); the store takes it then.
  const Cycle start = std::max({now, oldest->owned, l2WriteFree_});
  oldest->freeAt = start + writeCycles_;
  l2WriteFree_ = oldest->freeAt;
  ++stats_.flushes;
  return *oldest;
}

}  // namespace smtlab
