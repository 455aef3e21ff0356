// A trace cursor: the stream of one software thread as the pipeline sees it. It reads its source in batches into a
// ring buffer and keeps every fetched but unretired instruction, so a squash (branch flush, FLUSH policy, context
// switch) rewinds fetch to an older instruction that is fetched again: none is lost, none retires twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/trace/record.hpp"
#include "smtlab/trace/source.hpp"

namespace smtlab {

class StateIo;

class TraceCursor {
 public:
  // capacity: records kept in the ring (rounded up to a power of two); must exceed the instructions one thread can
  // have in flight plus one batch. The Machine grows it on attach if the core's window needs more.
  explicit TraceCursor(std::unique_ptr<TraceSource> source, std::size_t capacity = 1024, std::size_t batch = 128);

  // The record at the fetch position, reading more from the source when needed; nullptr at the end of the trace.
  const Instr* peek() {
    // Inline for the common case (the front end asks for every instruction it fetches); the batch read is not.
    if (fetchSeq_ < loadedEnd_) return &ring_[fetchSeq_.value & mask_];
    return readBatch();
  }
  // The record k >= 1 places after the fetch position, reading more from the source while the ring has room (the
  // instruction fetcher's look along the path, core.fetch_prefetch); nullptr past the end of the trace or the room.
  // Reading early changes nothing: a source's records do not depend on when they are read.
  const Instr* ahead(std::uint64_t k) {
    const SeqNum s{fetchSeq_.value + k};
    if (s < loadedEnd_) return &ring_[s.value & mask_];
    return readAhead(s);
  }
  // Moves the fetch position one record on (after peek() returned a record).
  void advanceFetch() { ++fetchSeq_; }
  // The record with sequence number seq, which must be in [retireSeq(), loadedEnd()).
  const Instr& at(SeqNum seq) const { return ring_[seq.value & mask_]; }
  // The oldest unretired instruction retires.
  void retireOne() {
    ++retireSeq_;
    ++retired_;
  }
  // Fetch goes back to seq (retireSeq() <= seq <= fetchSeq()); younger records are fetched again later.
  void rewindTo(SeqNum seq);
  // The trace starts again from its first record; valid only when everything fetched has retired and the source
  // has ended. Sequence numbers keep counting up.
  void restart();
  // Grows the ring so that at least n records fit; keeps its contents.
  void reserve(std::size_t n);
  // Gives the ring's memory back when it holds no unretired record (a detached source between two uses: the OS
  // layer keeps thousands of them, one per task and kernel-path instance). The next read or reserve() makes a new
  // ring of the constructor's capacity; nothing else changes.
  void releaseIfDrained();

  // Records the ring holds room for (0 after releaseIfDrained(), until the next read).
  std::size_t ringSize() const { return ring_.size(); }
  SeqNum fetchSeq() const { return fetchSeq_; }
  SeqNum retireSeq() const { return retireSeq_; }
  SeqNum loadedEnd() const { return loadedEnd_; }
  // True when the source has ended and every record read from it was fetched.
  bool fetchedAll() { return peek() == nullptr; }
  // True when the source has ended and every record has retired.
  bool finished() { return retireSeq_ == loadedEnd_ && peek() == nullptr; }
  // Instructions retired from this cursor since it was made (across restarts).
  std::uint64_t retired() const { return retired_; }
  // How many times the trace was restarted.
  std::uint64_t restarts() const { return restarts_; }
  std::string describe() const { return source_->describe(); }
  // Its position and the records it holds (a window snapshot, common/state_io.hpp). Reading puts the source where
  // the snapshot's was: the same trace is rewound if needed and read forward (so windows read in order cost one pass
  // over the trace). Not while attached.
  void visitState(StateIo& io);
  TraceSource& source() { return *source_; }

  // Set while the cursor is attached to a logical CPU, so that it is not attached twice.
  bool attached = false;

 private:
  // peek() past the loaded records: reads the next batch (nullptr at the end of the trace).
  const Instr* readBatch();
  // ahead() past the loaded records.
  const Instr* readAhead(SeqNum s);
  // Reads the next batch into the free part of the ring; false at the end of the trace.
  bool readMore(std::uint64_t free);

  std::unique_ptr<TraceSource> source_;
  // Makes the ring again after releaseIfDrained().
  void ensureRing() {
    if (ring_.empty()) reserve(capacity_);
  }

  std::vector<Instr> ring_;
  std::uint64_t mask_ = 0;
  std::size_t batch_;
  std::size_t capacity_;  // the constructor's capacity, at least two batches
  // Sequence numbers: the next record to fetch, the oldest unretired one, one past the last one read.
  SeqNum fetchSeq_{0};
  SeqNum retireSeq_{0};
  SeqNum loadedEnd_{0};
  std::uint64_t retired_ = 0;
  std::uint64_t restarts_ = 0;
  SeqNum lapStart_{0};  // loadedEnd_ at the last restart: the source has given loadedEnd_ - lapStart_ records since
  bool ended_ = false;
};

}  // namespace smtlab
