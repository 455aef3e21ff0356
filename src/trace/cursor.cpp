#include "smtlab/trace/cursor.hpp"

#include <algorithm>
#include <bit>

#include "smtlab/common/error.hpp"
#include "smtlab/common/state_io.hpp"

namespace smtlab {

TraceCursor::TraceCursor(std::unique_ptr<TraceSource> source, std::size_t capacity, std::size_t batch)
    : source_(std::move(source)), batch_(std::max<std::size_t>(1, batch)), capacity_(std::max(capacity, 2 * batch_)) {
  if (!source_) throw UsageError("TraceCursor: no trace source given");
  reserve(capacity_);
}

void TraceCursor::releaseIfDrained() {
  if (retireSeq_ != loadedEnd_ || ring_.empty()) return;
  std::vector<Instr>().swap(ring_);
  mask_ = 0;
}

void TraceCursor::reserve(std::size_t n) {
  const std::size_t want = std::bit_ceil(std::max<std::size_t>(n, 2 * batch_));
  if (want <= ring_.size()) return;
  std::vector<Instr> bigger(want);
  for (SeqNum s = retireSeq_; s < loadedEnd_; ++s) bigger[s.value & (want - 1)] = ring_[s.value & mask_];
  ring_ = std::move(bigger);
  mask_ = want - 1;
}

bool TraceCursor::readMore(std::uint64_t free) {
  const std::uint64_t start = loadedEnd_.value & mask_;
  const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>({free, ring_.size() - start, batch_}));
  const std::size_t got = source_->read(std::span<Instr>(ring_.data() + start, room));
  if (got == 0) {
    ended_ = true;
    return false;
  }
  loadedEnd_ += got;
  return true;
}

const Instr* TraceCursor::readBatch() {
  if (ended_) return nullptr;
  ensureRing();
  // Read the next batch into the free part of the ring (the part not holding unretired records).
  const std::uint64_t free = ring_.size() - (loadedEnd_ - retireSeq_);
  if (free == 0) {
    throw Error("trace cursor for '" + source_->describe() +
                "': rewind window is full (more instructions in flight than the cursor holds)");
  }
  if (!readMore(free)) return nullptr;
  return &ring_[fetchSeq_.value & mask_];
}

const Instr* TraceCursor::readAhead(SeqNum s) {
  if (!ended_) ensureRing();
  while (s >= loadedEnd_) {
    const std::uint64_t free = ring_.size() - (loadedEnd_ - retireSeq_);
    if (ended_ || free == 0 || !readMore(free)) return nullptr;
  }
  return &ring_[s.value & mask_];
}

void TraceCursor::rewindTo(SeqNum seq) {
  if (seq < retireSeq_ || seq > fetchSeq_) {
    throw Error("trace cursor for '" + source_->describe() + "': rewind outside the in-flight window");
  }
  fetchSeq_ = seq;
}

void TraceCursor::restart() {
  if (retireSeq_ != loadedEnd_ || !ended_) {
    throw Error("trace cursor for '" + source_->describe() + "': restart before the trace has ended and drained");
  }
  source_->rewind();
  ended_ = false;
  ++restarts_;
  lapStart_ = loadedEnd_;
}

void TraceCursor::visitState(StateIo& io) {
  if (attached) throw Error("trace cursor for '" + source_->describe() + "': its state is kept only while detached");
  const std::uint64_t lapBefore = restarts_;
  const std::uint64_t positionBefore = loadedEnd_ - lapStart_;
  std::uint64_t ringSize = ring_.size();
  io.mark("trace");
  io(ringSize, fetchSeq_, retireSeq_, loadedEnd_, lapStart_, retired_, restarts_, ended_);
  if (io.reading()) {
    if (ringSize != 0 && (!std::has_single_bit(ringSize) || loadedEnd_ < retireSeq_ ||
                          loadedEnd_ - retireSeq_ > ringSize || fetchSeq_ < retireSeq_ || fetchSeq_ > loadedEnd_ ||
                          lapStart_ > loadedEnd_)) {
      throw Error("trace cursor for '" + source_->describe() + "': the snapshot's position is not consistent");
    }
    // Put the source where the snapshot's was: rewound for an earlier position or another lap, then read forward.
    const std::uint64_t position = loadedEnd_ - lapStart_;
    std::uint64_t at = positionBefore;
    if (restarts_ != lapBefore || position < at) {
      source_->rewind();
      at = 0;
    }
    std::vector<Instr> scratch(4096);
    while (at < position) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(scratch.size(), position - at));
      const std::size_t got = source_->read(std::span<Instr>(scratch.data(), want));
      if (got == 0) {
        throw TraceError("trace '" + source_->describe() + "' ends after " + std::to_string(at) +
                         " records, before the snapshot's position " + std::to_string(position) +
                         ": it is not the trace the snapshot was taken with");
      }
      at += got;
    }
    std::vector<Instr>(static_cast<std::size_t>(ringSize)).swap(ring_);
    mask_ = ringSize > 0 ? ringSize - 1 : 0;
  }
  // The records read and not yet retired (the rest of the ring is free space).
  for (SeqNum s = retireSeq_; s < loadedEnd_; ++s) io(ring_[s.value & mask_]);
}

}  // namespace smtlab
