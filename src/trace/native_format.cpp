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
#include "smtlab/trace/trace_input.hpp"
#include "native_encoding.hpp"

namespace io = boost::iostreams;

namespace smtlab {

using namespace native;

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

NativeTraceReader::NativeTraceReader(std::string path, bool noteUnchecked)
    : NativeTraceReader(TraceInput::open(path), noteUnchecked) {}

NativeTraceReader::NativeTraceReader(std::unique_ptr<TraceInput> input, bool noteUnchecked)
    : path_(input->path()), input_(std::move(input)) {
  buf_.resize(kBufferBytes);
  open();
  if (noteUnchecked && compression_ == Compression::Zstd && version_ < kNativeFirstChecksumVersion) {
    noteNoChecksum(path_, version_);
  }
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

template <bool kBounded>
const unsigned char* NativeTraceReader::decode(const unsigned char* p, const unsigned char* e, Instr& in) {
  auto corrupt = [&](std::string_view what) { fail(fmt::format("record {}: corrupt data ({})", records_, what)); };
  auto byte = [&]() -> unsigned {
    if constexpr (kBounded) {
      if (p == e) fail(fmt::format("record {}: truncated", records_));
    }
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
  nextPcGuess_ = guessNextPc(in);
  return p;
}

std::size_t NativeTraceReader::read(std::span<Instr> out) {
  if (done_) return 0;
  std::size_t n = 0;
  while (n < out.size()) {
    // Asked inline first: the buffer almost always holds a whole record (fill is a call per record otherwise).
    if (end_ - pos_ < kMaxDecodeBytes && !fill(kMaxDecodeBytes)) {
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
    const unsigned char* p = buf_.data() + pos_;
    const unsigned char* e = buf_.data() + end_;
    // Decoded in place (a record is 128 bytes: a copy per record shows in a profile).
    Instr& in = out[n];
    // A copy of a blank record: `in = Instr{}` became `rep stos` plus stores, a third of this function's time.
    std::memcpy(static_cast<void*>(&in), &kBlankInstr, sizeof(Instr));
    // Only the last records of the data are decoded with a check per byte.
    p = end_ - pos_ >= kMaxDecodeBytes ? decode<false>(p, e, in) : decode<true>(p, e, in);
    pos_ = static_cast<std::size_t>(p - buf_.data());
    ++n;
    ++records_;
  }
  return n;
}

}  // namespace smtlab
