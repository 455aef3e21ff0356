#include "smtlab/trace/native_format.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <fmt/format.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/trace/trace_input.hpp"
#include "native_output.hpp"

namespace io = boost::iostreams;

namespace smtlab {
namespace {

// Record layout (docs/traces.md, "Native format"): flag byte F0, optional flag byte F1, then the optional parts in a
// fixed order. Every part is present only when it differs from what the decoder can predict.
constexpr unsigned kF0OpMask = 0x0f;
constexpr unsigned kF0Taken = 0x10;
constexpr unsigned kF0PcPredicted = 0x20;
constexpr unsigned kF0Regs = 0x40;
constexpr unsigned kF0HasF1 = 0x80;
constexpr unsigned kF1Target = 0x01;
constexpr unsigned kF1Load0 = 0x02;
constexpr unsigned kF1Load1 = 0x04;
constexpr unsigned kF1Store0 = 0x08;
// What each version changed in the records (version 4 changed only the zstd framing: kNativeFirstChecksumVersion).
constexpr std::uint32_t kFirstExtensionVersion = 2;  // the extension byte M: loads[2..3] and stores[1]
constexpr std::uint32_t kFirstUopVersion = 3;        // the uop count and microcoded flag, in M
constexpr unsigned kF1V1Store1 = 0x10;    // version 1: the second store
constexpr unsigned kF1MoreMemory = 0x10;  // version 2 on: an extension byte follows F1 (kMore*, kExt*)
constexpr unsigned kF1Mark = 0x20;
constexpr unsigned kF1Kind = 0x40;
constexpr unsigned kF1Sizes = 0x80;
constexpr unsigned kMoreLoad2 = 0x01;
constexpr unsigned kMoreLoad3 = 0x02;
constexpr unsigned kMoreStore1 = 0x04;
// Version 3 on: the decoder's uops in the same extension byte. A uop count that the rule below predicts
// costs one bit; any other count a byte at the end of the record; none (not recorded) nothing.
constexpr unsigned kExtUopsPredicted = 0x08;
constexpr unsigned kExtUopsByte = 0x10;
constexpr unsigned kExtMicrocoded = 0x20;
constexpr unsigned kV2ExtBits = kMoreLoad2 | kMoreLoad3 | kMoreStore1;
constexpr unsigned kV3ExtBits = kV2ExtBits | kExtUopsPredicted | kExtUopsByte | kExtMicrocoded;
// Memory slots in encoding order: loads 0..kMaxLoads-1, then stores.
constexpr int kMemSlots = kMaxLoads + kMaxStores;
static_assert(kMaxLoads == 4 && kMaxStores == 2, "the version-2 encoding has bits for 4 loads and 2 stores");
// Worst case of version 3: F0, F1, extension byte, pc varint (10), register mask and 6 ids, kind, target (10),
// 6 memory operands of varint (10) + size, mark id (5), uop count (1) = 103 bytes.
constexpr std::size_t kMaxRecordBytes = 104;
constexpr std::size_t kBufferBytes = 1 << 16;

std::uint64_t zigzag(std::uint64_t delta) {
  const auto s = static_cast<std::int64_t>(delta);
  return (static_cast<std::uint64_t>(s) << 1) ^ static_cast<std::uint64_t>(s >> 63);
}
std::uint64_t unzigzag(std::uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

void putVarint(std::vector<unsigned char>& b, std::uint64_t v) {
  while (v >= 0x80) {
    b.push_back(static_cast<unsigned char>(v | 0x80));
    v >>= 7;
  }
  b.push_back(static_cast<unsigned char>(v));
}

void putLe(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint64_t getLe(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

// The pc the encoder expects next: the target after a taken branch, else the next 4-byte slot.
Addr guessNextPc(const Instr& in) { return in.taken && in.target != 0 ? in.target : in.pc + 4; }

// The uop count the encoder expects (version 3), so that the common forms cost one bit: the unfused-domain rule of
// docs/tracing.md (one uop for the work unless the op is a pure load or store, one per load, two per store:
// store-address + store-data). Only a compression guess: any other count is stored as a byte.
unsigned predictUops(OpClass op, unsigned loads, unsigned stores) {
  const unsigned n = (op == OpClass::Load || op == OpClass::Store ? 0 : 1) + loads + 2 * stores;
  return n == 0 ? 1 : n;
}
unsigned predictUops(const Instr& in) {
  unsigned loads = 0, stores = 0;
  for (const MemRef& m : in.loads) loads += m.valid() ? 1 : 0;
  for (const MemRef& m : in.stores) stores += m.valid() ? 1 : 0;
  return predictUops(in.op, loads, stores);
}

}  // namespace

std::string_view compressionName(Compression c) {
  switch (c) {
    case Compression::None: return "none";
    case Compression::Zstd: return "zstd";
    case Compression::Xz: return "xz";
  }
  return "?";
}

Compression parseCompression(std::string_view name) {
  if (name == "none") return Compression::None;
  if (name == "zstd") return Compression::Zstd;
  if (name == "xz") return Compression::Xz;
  throw TraceError(fmt::format("unknown compression '{}' (none, zstd, xz)", name));
}

bool hasNativeMagic(std::string_view head) {
  return head.size() >= kNativeMagic.size() && std::equal(kNativeMagic.begin(), kNativeMagic.end(), head.begin());
}

bool isNativeTrace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[kNativeMagic.size()];
  if (!f.read(magic, sizeof magic)) return false;
  return hasNativeMagic(std::string_view(magic, sizeof magic));
}

// ---------------------------------------------------------------------------------------------------------------
// Reader

namespace {

// liblzma's return codes as boost passes them on (its what() says only "iostream error").
std::string_view lzmaErrorText(int code) {
  if (code == io::lzma::data_error) return "the data is damaged: an xz check or its structure does not match";
  if (code == io::lzma::buf_error) return "the data ends too early";
  if (code == io::lzma::mem_error) return "out of memory";
  if (code == io::lzma::unsupported_check) return "an xz check of a kind this build cannot verify";
  if (code == io::lzma::options_error) return "unsupported xz options";
  return "xz decoder error";
}

// Says once per file and process that a zstd file of a version before 4 cannot be checked for damage.
void noteNoChecksum(const std::string& path, std::uint32_t version) {
  static std::mutex mutex;
  static std::set<std::string> noted;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!noted.insert(path).second) return;
  std::fprintf(stderr,
               "smtlab: note: %s: native trace version %u carries no zstd checksum, so damaged data would read as "
               "different records (`smtlab trace convert` writes a checked copy)\n",
               path.c_str(), version);
}

}  // namespace

struct NativeTraceReader::Stream {
  io::filtering_istreambuf filtered;
  std::streambuf* in = nullptr;  // the input's own buffer for uncompressed data, else &filtered
};

NativeTraceReader::NativeTraceReader(std::string path) : NativeTraceReader(TraceInput::open(path)) {}

NativeTraceReader::NativeTraceReader(std::unique_ptr<TraceInput> input)
    : path_(input->path()), input_(std::move(input)) {
  buf_.resize(kBufferBytes);
  open();
  if (compression_ == Compression::Zstd && version_ < kNativeFirstChecksumVersion) noteNoChecksum(path_, version_);
}

NativeTraceReader::~NativeTraceReader() = default;

void NativeTraceReader::fail(const std::string& what) const { throw TraceError(fmt::format("{}: {}", path_, what)); }

void NativeTraceReader::open() {
  stream_.reset();
  auto s = std::make_unique<Stream>();
  unsigned char h[kNativeHeaderSize];
  const std::streamsize got = input_->buffer().sgetn(reinterpret_cast<char*>(h), sizeof h);
  if (got < 8 || !std::equal(kNativeMagic.begin(), kNativeMagic.end(), reinterpret_cast<char*>(h))) {
    fail("not an smtlab native trace (wrong magic)");
  }
  if (got != static_cast<std::streamsize>(sizeof h)) fail("truncated header");
  const auto version = static_cast<std::uint32_t>(getLe(h + 8, 4));
  if (version < kNativeOldestVersion || version > kNativeVersion) {
    fail(fmt::format("unsupported native trace version {} (this build reads versions {} to {})", version,
                     kNativeOldestVersion, kNativeVersion));
  }
  version_ = version;
  const auto compression = static_cast<std::uint32_t>(getLe(h + 12, 4));
  if (compression > 2) fail(fmt::format("unknown compression {} in the header", compression));
  compression_ = static_cast<Compression>(compression);
  headerCount_ = getLe(h + 16, 8);
  // What can be checked before reading: an uncompressed body holds between 1 and kMaxRecordBytes bytes per record,
  // so a count that the file size contradicts is reported now, not after a long run (or never, with -n).
  if (compression_ == Compression::None && headerCount_ != kUnknownCount && input_->size()) {
    const std::uint64_t body = *input_->size() - kNativeHeaderSize;
    if (body < headerCount_) {
      fail(fmt::format("the header says {} records but the file holds {} bytes after the header (at least 1 per "
                       "record): truncated or damaged", headerCount_, body));
    }
    if ((body + kMaxRecordBytes - 1) / kMaxRecordBytes > headerCount_) {  // body > count * kMaxRecordBytes
      fail(fmt::format("the header says {} records but the file holds {} bytes after the header (at most {} per "
                       "record): more records than the header says, or damaged", headerCount_, body, kMaxRecordBytes));
    }
  }
  switch (compression_) {
    case Compression::None: s->in = &input_->buffer(); break;
    case Compression::Zstd: s->filtered.push(io::zstd_decompressor()); break;
    case Compression::Xz: s->filtered.push(io::lzma_decompressor()); break;
  }
  if (!s->in) {
    s->filtered.push(input_->stream());
    s->in = &s->filtered;
  }
  stream_ = std::move(s);
  records_ = 0;
  pos_ = end_ = 0;
  eof_ = done_ = false;
  prevPc_ = nextPcGuess_ = prevAddr_ = 0;
}

void NativeTraceReader::rewind() {
  if (!input_->reopenable()) throw TraceError(cannotRereadMessage(*input_));
  stream_.reset();  // the decompressor refers to the old input: drop it first
  input_ = TraceInput::open(path_);
  open();
}

std::optional<std::uint64_t> NativeTraceReader::length() const {
  if (headerCount_ == kUnknownCount) return std::nullopt;
  return headerCount_;
}

bool NativeTraceReader::fill(std::size_t want) {
  if (end_ - pos_ >= want) return true;
  if (eof_) return end_ > pos_;
  std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  try {
    while (end_ < buf_.size()) {
      const std::streamsize got = stream_->in->sgetn(reinterpret_cast<char*>(buf_.data() + end_),
                                                     static_cast<std::streamsize>(buf_.size() - end_));
      if (got <= 0) {
        eof_ = true;
        break;
      }
      end_ += static_cast<std::size_t>(got);
    }
  } catch (const io::zstd_error& e) {
    // boost keeps libzstd's size_t error code as an int: widened back with its sign, it is the code again.
    const auto code = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(e.error()));
    if (ZSTD_getErrorCode(code) == ZSTD_error_checksum_wrong) {
      // The checksum covers the whole stream and is checked once all of it is decompressed: the damage may lie in any
      // record, including those decoded before (records_).
      fail(fmt::format("zstd content checksum mismatch at the end of the data: the trace is damaged and any of its "
                       "records may be wrong ({} records decoded before the check)", records_));
    }
    fail(fmt::format("record {}: corrupt zstd data ({})", records_, ZSTD_getErrorName(code)));
  } catch (const io::lzma_error& e) {
    fail(fmt::format("record {}: corrupt xz data ({})", records_, lzmaErrorText(e.error())));
  } catch (const std::exception& e) {
    fail(fmt::format("record {}: corrupt {} data ({})", records_, compressionName(compression_), e.what()));
  }
  return end_ > pos_;
}

namespace {
// The memory mask has at most six bits. Not std::popcount: on the x86-64 baseline (no POPCNT) that is a call into
// libgcc, __popcountdi2, which took 1.6 % of the host instructions of a two-thread cc1 run.
constexpr unsigned countBits(unsigned v) {
  unsigned n = 0;
  for (; v != 0; v &= v - 1) ++n;
  return n;
}
static_assert(countBits(0) == 0 && countBits(0b101101) == 4);
}  // namespace

namespace {
const Instr kBlankInstr{};
}  // namespace

std::size_t NativeTraceReader::read(std::span<Instr> out) {
  if (done_) return 0;
  std::size_t n = 0;
  const unsigned char* p = nullptr;
  const unsigned char* e = nullptr;
  auto truncated = [&]() { fail(fmt::format("record {}: truncated", records_)); };
  auto corrupt = [&](std::string_view what) { fail(fmt::format("record {}: corrupt data ({})", records_, what)); };
  auto byte = [&]() -> unsigned {
    if (p == e) truncated();
    return *p++;
  };
  auto varint = [&]() -> std::uint64_t {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      const unsigned b = byte();
      if (shift == 63 && b > 1) break;
      v |= std::uint64_t{b & 0x7f} << shift;
      if (!(b & 0x80)) return v;
    }
    corrupt("overlong varint");
    return 0;
  };

  while (n < out.size()) {
    // Asked inline first: the buffer almost always holds a whole record (fill is a call per record otherwise).
    if (end_ - pos_ < kMaxRecordBytes && !fill(kMaxRecordBytes)) {
      done_ = true;
      if (headerCount_ != kUnknownCount && headerCount_ != records_) {
        fail(fmt::format("the header says {} records but the file holds {}{}", headerCount_, records_,
                         records_ < headerCount_ ? " (truncated or damaged)" : ""));
      }
      break;
    }
    if (records_ == headerCount_) {
      // Said at once, so that a run that stops early (-n) does not accept a file that contradicts its header.
      done_ = true;
      fail(fmt::format("record {}: the header says {} records but more follow", records_, headerCount_));
    }
    p = buf_.data() + pos_;
    e = buf_.data() + end_;
    // Decoded in place (a record is 128 bytes: a copy per record shows in a profile).
    Instr& in = out[n];
    // A copy of a blank record: `in = Instr{}` became `rep stos` plus stores, a third of this function's time.
    std::memcpy(static_cast<void*>(&in), &kBlankInstr, sizeof(Instr));
    const unsigned f0 = byte();
    const unsigned f1 = (f0 & kF0HasF1) ? byte() : 0;
    // Which memory slots are present (bit i = slot i: loads 0..3, then stores 0..1).
    unsigned memMask = (f1 & kF1Load0 ? 1u : 0u) | (f1 & kF1Load1 ? 2u : 0u) | (f1 & kF1Store0 ? 1u << kMaxLoads : 0u);
    unsigned ext = 0;
    if (version_ < kFirstExtensionVersion) {
      if (f1 & kF1V1Store1) memMask |= 1u << (kMaxLoads + 1);
    } else if (f1 & kF1MoreMemory) {
      ext = byte();
      const bool hasUops = version_ >= kFirstUopVersion;
      if (ext == 0 || (ext & ~(hasUops ? kV3ExtBits : kV2ExtBits))) {
        corrupt(hasUops ? "extension byte" : "memory operand byte");
      }
      if ((ext & kExtUopsPredicted) && (ext & kExtUopsByte)) corrupt("uop count both predicted and stored");
      if ((ext & kExtMicrocoded) && !(ext & (kExtUopsPredicted | kExtUopsByte))) {
        corrupt("microcoded without a uop count");
      }
      memMask |= (ext & kMoreLoad2 ? 4u : 0u) | (ext & kMoreLoad3 ? 8u : 0u) |
                 (ext & kMoreStore1 ? 1u << (kMaxLoads + 1) : 0u);
    }
    in.op = static_cast<OpClass>(f0 & kF0OpMask);
    in.taken = f0 & kF0Taken;
    in.pc = (f0 & kF0PcPredicted) ? nextPcGuess_ : nextPcGuess_ + unzigzag(varint());
    if (f0 & kF0Regs) {
      const unsigned mask = byte();
      if (mask & 0xc0) corrupt("register mask");
      for (unsigned bits = mask; bits != 0; bits &= bits - 1) {  // the present registers, in slot order
        const int i = std::countr_zero(bits);
        const unsigned r = byte();
        if (r >= kArchRegs) corrupt("register id");
        if (i < kMaxSrcRegs) in.src[i] = static_cast<RegId>(r);
        else in.dst[i - kMaxSrcRegs] = static_cast<RegId>(r);
      }
    }
    in.branch = defaultBranchKind(in.op);
    if (f1 & kF1Kind) {
      const unsigned k = byte();
      if (k >= kBranchKindCount) corrupt("branch kind");
      in.branch = static_cast<BranchKind>(k);
    }
    if (f1 & kF1Target) in.target = in.pc + unzigzag(varint());
    for (unsigned bits = memMask; bits != 0; bits &= bits - 1) {  // the present memory operands, in slot order
      const int slot = std::countr_zero(bits);
      MemRef& m = slot < kMaxLoads ? in.loads[slot] : in.stores[slot - kMaxLoads];
      m.addr = prevAddr_ + unzigzag(varint());
      prevAddr_ = m.addr;
      m.size = 8;
      if (f1 & kF1Sizes) {
        m.size = static_cast<std::uint8_t>(byte());
        if (m.size == 0) corrupt("access size 0");
      }
    }
    if (f1 & kF1Mark) {
      const std::uint64_t id = varint();
      if (id > 0xffffffffu) corrupt("mark id");
      in.markId = static_cast<std::uint32_t>(id);
    }
    if (ext & kExtUopsByte) {
      const unsigned uops = byte();
      // 0 is "not recorded", which the encoder says by leaving the count out: a stored 0 cannot come from it.
      if (uops == 0) fail(fmt::format("record {}: impossible uop count 0 (a recorded count is 1..255)", records_));
      in.uops = static_cast<std::uint8_t>(uops);
    } else if (ext & kExtUopsPredicted) {
      // predictUops(in) from the memory mask: every present operand has a non-zero size (checked above), so the
      // valid operands are exactly the mask's bits.
      const unsigned loads = countBits(memMask & ((1u << kMaxLoads) - 1));
      const unsigned stores = countBits(memMask >> kMaxLoads);
      in.uops = static_cast<std::uint8_t>(predictUops(in.op, loads, stores));
    }
    in.microcoded = ext & kExtMicrocoded;
    pos_ = static_cast<std::size_t>(p - buf_.data());
    nextPcGuess_ = guessNextPc(in);
    ++n;
    ++records_;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// Writer

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
    // The header is outside the compressed stream, so the count can be patched in place.
    unsigned char count[8];
    putLe(count, records_, 8);
    stream_->file.writeAt(16, count, sizeof count);
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

}  // namespace smtlab
