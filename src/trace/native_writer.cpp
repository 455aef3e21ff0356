// The native format's writer: records encoded against the decoder's predictions (native_encoding.hpp), compressed
// and written into a temporary file that close() renames into place.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "native_encoding.hpp"
#include "native_output.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/trace/native_format.hpp"

namespace smtlab {

using namespace native;

// The trace goes to a temporary file beside the target (OutputFile), renamed into place by close(): a conversion that
// fails or is interrupted never leaves a half-written trace under the real name. The bytes go through write(2)
// (TraceFileSink), which reports a full disk at once; the members are destroyed compressor first, then the file
// descriptor, then the OutputFile, which removes the temporary file unless it was committed.
struct NativeTraceWriter::Stream {
  Stream(const std::string& path, Compression compression)
      : output(path, std::ios::binary, "trace"), file(path, writtenByDescriptor(output)),
        compressor(makeNativeCompressor(compression, file)) {}
  static const std::filesystem::path& writtenByDescriptor(OutputFile& out) {
    out.closeStream();  // the OutputFile keeps the temporary name and the rename; TraceFileSink writes the bytes
    return out.tempPath();
  }
  OutputFile output;
  TraceFileSink file;
  std::unique_ptr<NativeCompressor> compressor;
};

NativeTraceWriter::NativeTraceWriter(std::string path, Compression compression)
    : path_(std::move(path)), compression_(compression) {
  std::unique_ptr<Stream> s;
  try {
    s = std::make_unique<Stream>(path_, compression_);
  } catch (const TraceError&) {
    throw;
  } catch (const Error& e) {
    throw TraceError(e.what());  // a trace that cannot be written is a trace error, as for the readers
  }
  unsigned char h[kNativeHeaderSize];
  std::memcpy(h, kNativeMagic.data(), kNativeMagic.size());
  putLe(h + 8, kNativeVersion, 4);
  putLe(h + 12, static_cast<std::uint32_t>(compression_), 4);
  putLe(h + 16, kUnknownCount, 8);
  s->file.write(h, sizeof h);
  stream_ = std::move(s);
  buf_.reserve(kBufferBytes + kMaxRecordBytes);
}

// Without close() the output is incomplete: nothing more is written (a compressor ending its stream in its
// destructor writes nowhere), and the OutputFile removes the temporary file; the target is untouched.
NativeTraceWriter::~NativeTraceWriter() {
  if (stream_ && !stream_->output.committed()) stream_->file.abandon();
}

void NativeTraceWriter::flushBuffer() {
  if (buf_.empty()) return;
  try {
    stream_->compressor->write(buf_.data(), buf_.size());
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("{}: write failed: {}", path_, e.what()));
  }
  buf_.clear();
}

void NativeTraceWriter::write(const Instr& in) {
  if (closed_) throw TraceError(fmt::format("{}: write after close", path_));
  std::size_t at = buf_.size();
  buf_.push_back(0);  // F0, filled in below
  buf_.push_back(0);  // F1, removed when zero
  buf_.push_back(0);  // further memory operands, removed when zero
  unsigned f0 = static_cast<unsigned>(in.op) & kF0OpMask;
  unsigned f1 = 0;
  if (in.taken) f0 |= kF0Taken;
  if (in.pc == nextPcGuess_) f0 |= kF0PcPredicted;
  else putVarint(buf_, zigzag(in.pc - nextPcGuess_));
  unsigned mask = 0;
  for (int i = 0; i < kMaxSrcRegs; ++i) mask |= in.src[i] != kNoReg ? 1u << i : 0u;
  for (int i = 0; i < kMaxDstRegs; ++i) mask |= in.dst[i] != kNoReg ? 1u << (kMaxSrcRegs + i) : 0u;
  if (mask) {
    f0 |= kF0Regs;
    buf_.push_back(static_cast<unsigned char>(mask));
    for (RegId r : in.src) if (r != kNoReg) buf_.push_back(r);
    for (RegId r : in.dst) if (r != kNoReg) buf_.push_back(r);
  }
  if (in.branch != defaultBranchKind(in.op)) {
    f1 |= kF1Kind;
    buf_.push_back(static_cast<unsigned char>(in.branch));
  }
  if (in.target != 0) {
    f1 |= kF1Target;
    putVarint(buf_, zigzag(in.target - in.pc));
  }
  bool odd = false;
  for (const MemRef& m : in.loads) odd |= m.valid() && m.size != 8;
  for (const MemRef& m : in.stores) odd |= m.valid() && m.size != 8;
  if (odd) f1 |= kF1Sizes;
  unsigned more = 0;
  for (int slot = 0; slot < kMemSlots; ++slot) {
    const MemRef& m = slot < kMaxLoads ? in.loads[slot] : in.stores[slot - kMaxLoads];
    if (!m.valid()) continue;
    switch (slot) {
      case 0: f1 |= kF1Load0; break;
      case 1: f1 |= kF1Load1; break;
      case 2: more |= kMoreLoad2; break;
      case 3: more |= kMoreLoad3; break;
      case kMaxLoads: f1 |= kF1Store0; break;
      default: more |= kMoreStore1; break;
    }
    putVarint(buf_, zigzag(m.addr - prevAddr_));
    prevAddr_ = m.addr;
    if (odd) buf_.push_back(m.size);
  }
  if (in.markId != 0) {
    f1 |= kF1Mark;
    putVarint(buf_, in.markId);
  }
  if (in.uops != 0) {
    if (in.uops == predictUops(in)) {
      more |= kExtUopsPredicted;
    } else {
      more |= kExtUopsByte;
      buf_.push_back(in.uops);
    }
    // The flag is meaningful only with a count (the reader refuses it alone); a record without a count drops it.
    if (in.microcoded) more |= kExtMicrocoded;
  }
  if (more) {
    f1 |= kF1MoreMemory;
    buf_[at + 2] = static_cast<unsigned char>(more);
  } else {
    buf_.erase(buf_.begin() + static_cast<std::ptrdiff_t>(at) + 2);
  }
  if (f1) {
    f0 |= kF0HasF1;
    buf_[at + 1] = static_cast<unsigned char>(f1);
  } else {
    buf_.erase(buf_.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  buf_[at] = static_cast<unsigned char>(f0);
  nextPcGuess_ = guessNextPc(in);
  ++records_;
  if (buf_.size() >= kBufferBytes) flushBuffer();
}

void NativeTraceWriter::close() {
  if (closed_) return;
  closed_ = true;
  flushBuffer();
  try {
    stream_->compressor->finish();
    // The header is outside the compressed stream, so the count can be patched in place; a stream target (a pipe,
    // standard output) cannot go back, and keeps the header's "unknown count", which the reader accepts.
    if (!isStreamTarget(path_)) {
      unsigned char count[8];
      putLe(count, records_, 8);
      stream_->file.writeAt(16, count, sizeof count);
    }
    stream_->file.close();
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("{}: write failed: {}", path_, e.what()));
  }
  try {
    stream_->output.commit();
  } catch (const Error& e) {
    throw TraceError(e.what());
  }
}

std::uint64_t writeNativeTrace(TraceSource& source, const std::string& path, Compression compression,
                               std::uint64_t maxRecords) {
  if (maxRecords == 0 && !source.length()) {
    // An endless generator would fill the disk; a file source of unknown length is fine.
    if (source.describe().rfind("gen:", 0) == 0) {
      throw TraceError(fmt::format("'{}' has no end: give a record count", source.describe()));
    }
  }
  NativeTraceWriter writer(path, compression);
  std::vector<Instr> batch(4096);
  std::uint64_t total = 0;
  while (maxRecords == 0 || total < maxRecords) {
    std::size_t want = batch.size();
    if (maxRecords != 0) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, maxRecords - total));
    const std::size_t got = source.read(std::span<Instr>(batch.data(), want));
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) writer.write(batch[i]);
    total += got;
  }
  writer.close();
  return total;
}

bool upgradeNativeTrace(const std::string& path) {
  NativeTraceReader old(path, false);
  if (old.compression() != Compression::Zstd || old.version() >= kNativeFirstChecksumVersion) return false;
  writeNativeTrace(old, path, Compression::Zstd);
  return true;
}

}  // namespace smtlab
