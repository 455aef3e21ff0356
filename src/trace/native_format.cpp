#include "smtlab/trace/native_format.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"

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
constexpr unsigned kF1Load0 = 0x02;  // kF1Load0 << slot, loads then stores
constexpr unsigned kF1Store0 = 0x08;
constexpr unsigned kF1Mark = 0x20;
constexpr unsigned kF1Kind = 0x40;
constexpr unsigned kF1Sizes = 0x80;
constexpr std::size_t kMaxRecordBytes = 96;  // 79 in the worst case
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

bool isNativeTrace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[kNativeMagic.size()];
  if (!f.read(magic, sizeof magic)) return false;
  return std::equal(kNativeMagic.begin(), kNativeMagic.end(), magic);
}

// ---------------------------------------------------------------------------------------------------------------
// Reader

struct NativeTraceReader::Stream {
  std::ifstream file;
  io::filtering_istreambuf filtered;
  std::streambuf* in = nullptr;  // file.rdbuf() for uncompressed data, else &filtered
};

NativeTraceReader::NativeTraceReader(std::string path) : path_(std::move(path)) {
  buf_.resize(kBufferBytes);
  open();
}

NativeTraceReader::~NativeTraceReader() = default;

void NativeTraceReader::fail(const std::string& what) const { throw TraceError(fmt::format("{}: {}", path_, what)); }

void NativeTraceReader::open() {
  stream_.reset();
  auto s = std::make_unique<Stream>();
  s->file.open(path_, std::ios::binary);
  if (!s->file) throw TraceError(fmt::format("cannot open trace file '{}': {}", path_, std::strerror(errno)));
  unsigned char h[kNativeHeaderSize];
  s->file.read(reinterpret_cast<char*>(h), sizeof h);
  if (s->file.gcount() < 8 || !std::equal(kNativeMagic.begin(), kNativeMagic.end(), reinterpret_cast<char*>(h))) {
    fail("not an smtlab native trace (wrong magic)");
  }
  if (s->file.gcount() != static_cast<std::streamsize>(sizeof h)) fail("truncated header");
  const auto version = static_cast<std::uint32_t>(getLe(h + 8, 4));
  if (version != kNativeVersion) {
    fail(fmt::format("unsupported native trace version {} (this build reads version {})", version, kNativeVersion));
  }
  const auto compression = static_cast<std::uint32_t>(getLe(h + 12, 4));
  if (compression > 2) fail(fmt::format("unknown compression {} in the header", compression));
  compression_ = static_cast<Compression>(compression);
  headerCount_ = getLe(h + 16, 8);
  switch (compression_) {
    case Compression::None: s->in = s->file.rdbuf(); break;
    case Compression::Zstd: s->filtered.push(io::zstd_decompressor()); break;
    case Compression::Xz: s->filtered.push(io::lzma_decompressor()); break;
  }
  if (!s->in) {
    s->filtered.push(s->file);
    s->in = &s->filtered;
  }
  stream_ = std::move(s);
  records_ = 0;
  pos_ = end_ = 0;
  eof_ = done_ = false;
  prevPc_ = nextPcGuess_ = prevAddr_ = 0;
}

void NativeTraceReader::rewind() { open(); }

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
  } catch (const std::exception& e) {
    fail(fmt::format("record {}: corrupt {} data ({})", records_, compressionName(compression_), e.what()));
  }
  return end_ > pos_;
}

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
    if (!fill(kMaxRecordBytes)) {
      done_ = true;
      if (headerCount_ != kUnknownCount && headerCount_ != records_) {
        fail(fmt::format("the header says {} records but the file holds {}{}", headerCount_, records_,
                         records_ < headerCount_ ? " (truncated or damaged)" : ""));
      }
      break;
    }
    p = buf_.data() + pos_;
    e = buf_.data() + end_;
    Instr in;
    const unsigned f0 = byte();
    const unsigned f1 = (f0 & kF0HasF1) ? byte() : 0;
    in.op = static_cast<OpClass>(f0 & kF0OpMask);
    in.taken = f0 & kF0Taken;
    in.pc = (f0 & kF0PcPredicted) ? nextPcGuess_ : nextPcGuess_ + unzigzag(varint());
    if (f0 & kF0Regs) {
      const unsigned mask = byte();
      if (mask & 0xc0) corrupt("register mask");
      for (int i = 0; i < kMaxSrcRegs + kMaxDstRegs; ++i) {
        if (!(mask & (1u << i))) continue;
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
    for (int slot = 0; slot < kMaxLoads + kMaxStores; ++slot) {
      if (!(f1 & (kF1Load0 << slot))) continue;
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
    pos_ = static_cast<std::size_t>(p - buf_.data());
    nextPcGuess_ = guessNextPc(in);
    out[n++] = in;
    ++records_;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// Writer

// The trace goes to a temporary file beside the target (OutputFile), renamed into place by close(): a conversion that
// fails or is interrupted never leaves a half-written trace under the real name. `output` is declared before
// `filtered` so that the compressor chain, which writes into the file, is destroyed first.
struct NativeTraceWriter::Stream {
  explicit Stream(const std::string& path) : output(path, std::ios::binary, "trace"), file(output.stream()) {}
  OutputFile output;
  std::ofstream& file;
  io::filtering_ostreambuf filtered;
  std::streambuf* out = nullptr;
};

NativeTraceWriter::NativeTraceWriter(std::string path, Compression compression)
    : path_(std::move(path)), compression_(compression) {
  std::unique_ptr<Stream> s;
  try {
    s = std::make_unique<Stream>(path_);
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
  s->file.write(reinterpret_cast<const char*>(h), sizeof h);
  switch (compression_) {
    case Compression::None: s->out = s->file.rdbuf(); break;
    case Compression::Zstd: s->filtered.push(io::zstd_compressor()); break;
    case Compression::Xz: s->filtered.push(io::lzma_compressor()); break;
  }
  if (!s->out) {
    s->filtered.push(s->file);
    s->out = &s->filtered;
  }
  stream_ = std::move(s);
  buf_.reserve(kBufferBytes + kMaxRecordBytes);
}

// Without close() the output is incomplete: the OutputFile removes its temporary file and the target is untouched.
NativeTraceWriter::~NativeTraceWriter() = default;

void NativeTraceWriter::flushBuffer() {
  if (buf_.empty()) return;
  const auto want = static_cast<std::streamsize>(buf_.size());
  std::streamsize put = 0;
  try {
    put = stream_->out->sputn(reinterpret_cast<const char*>(buf_.data()), want);
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("{}: write failed: {}", path_, e.what()));
  }
  if (put != want || !stream_->file) throw TraceError(fmt::format("{}: write failed (disk full?)", path_));
  buf_.clear();
}

void NativeTraceWriter::write(const Instr& in) {
  if (closed_) throw TraceError(fmt::format("{}: write after close", path_));
  std::size_t at = buf_.size();
  buf_.push_back(0);  // F0, filled in below
  buf_.push_back(0);  // F1, removed when zero
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
  for (int slot = 0; slot < kMaxLoads + kMaxStores; ++slot) {
    const MemRef& m = slot < kMaxLoads ? in.loads[slot] : in.stores[slot - kMaxLoads];
    if (!m.valid()) continue;
    f1 |= kF1Load0 << slot;
    putVarint(buf_, zigzag(m.addr - prevAddr_));
    prevAddr_ = m.addr;
    if (odd) buf_.push_back(m.size);
  }
  if (in.markId != 0) {
    f1 |= kF1Mark;
    putVarint(buf_, in.markId);
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
    // Popping the chain's device closes the chain: the compressor writes its final frame to the file.
    if (stream_->out == &stream_->filtered) stream_->filtered.reset();
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("{}: write failed: {}", path_, e.what()));
  }
  // The header is outside the compressed stream, so the count can be patched in place.
  unsigned char count[8];
  putLe(count, records_, 8);
  stream_->file.seekp(16);
  stream_->file.write(reinterpret_cast<const char*>(count), sizeof count);
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
