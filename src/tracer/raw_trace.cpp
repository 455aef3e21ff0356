#include "smtlab/tracer/raw_trace.hpp"

#include <cstring>
#include <filesystem>
#include <span>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

constexpr std::string_view kRawMagic{"SMTLRAW\1", 8};
// Version 2 (the user-mode plugin since it buffers in a shared-mapped ring): block ids start at 1 and the first zero
// word ends the stream (what follows the last entry in a ring that a dead writer left behind and smtlab appended).
constexpr std::string_view kRawMagicV2{"SMTLRAW\2", 8};
constexpr std::string_view kBlocksMagic{"SMTLBLK\1", 8};
constexpr std::size_t kInBufSize = 1 << 20;
constexpr std::uint32_t kPositionWord = 0x80000001u;

std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}
std::uint64_t le64(const unsigned char* p) { return std::uint64_t{le32(p)} | std::uint64_t{le32(p + 4)} << 32; }

}  // namespace

struct RawBlockTable::Decoding {
  X86Decoder decoder;
  std::unordered_map<std::string, std::uint32_t> cache;  // pc + bytes -> insns_ index
  std::string key;
};

RawBlockTable::RawBlockTable(const std::string& path, bool growing)
    : path_(path), growing_(growing), decoding_(std::make_unique<Decoding>()) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(fmt::format("cannot open tracer block file '{}'", path));
  data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fileOffset_ = data_.size();
  if (data_.size() < kBlocksMagic.size() || std::memcmp(data_.data(), kBlocksMagic.data(), kBlocksMagic.size()) != 0) {
    throw TraceError(fmt::format("{}: not a tracer block file (bad magic)", path));
  }
  parsed_ = kBlocksMagic.size();
  parse();
}

RawBlockTable::~RawBlockTable() = default;

bool RawBlockTable::refresh() {
  if (!growing_) return false;
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw TraceError(fmt::format("cannot open tracer block file '{}'", path_));
  in.seekg(static_cast<std::streamoff>(fileOffset_));
  std::vector<unsigned char> more((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (more.empty()) return false;
  fileOffset_ += more.size();
  // Keep only the unparsed tail, then append.
  data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(parsed_));
  parsed_ = 0;
  data_.insert(data_.end(), more.begin(), more.end());
  const std::uint32_t before = defined_;
  parse();
  return defined_ > before;
}

void RawBlockTable::parse() {
  const std::vector<unsigned char>& data = data_;
  std::size_t pos = parsed_;
  // Offsets in messages are the file's: data_ starts at file byte fileOffset_ - data_.size().
  const std::uint64_t base = fileOffset_ - data.size();
  while (pos + 16 <= data.size()) {
    const std::size_t recordStart = pos;
    const std::uint32_t id = le32(&data[pos]);
    const Addr pc = le64(&data[pos + 4]);
    const std::uint32_t n = le32(&data[pos + 12]);
    pos += 16;
    if (n == 0 || n > 1023 || id >= (1u << 30)) {
      throw TraceError(fmt::format("{}: byte {}: corrupt block definition (id {}, {} instructions)", path_,
                                   base + recordStart, id, n));
    }
    // The plugin numbers blocks 0, 1, 2, ... as QEMU translates them and writes each definition as it numbers it
    // (threads may interleave a few), so an id far beyond the definitions read so far is corruption; accepting it
    // would size the table by a garbage id.
    if (id > 2 * defined_ + 4096) {
      throw TraceError(fmt::format("{}: byte {}: corrupt block definition (id {} after only {} blocks)", path_,
                                   base + recordStart, id, defined_));
    }
    // A block definition cut short ends the table (the program was killed while it was written), or, in a file still
    // being written, waits for the rest.
    bool complete = true;
    const std::uint32_t first = static_cast<std::uint32_t>(blockInsns_.size());
    Addr insnPc = pc;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (pos >= data.size() || pos + 1 + data[pos] > data.size()) {
        complete = false;
        break;
      }
      const std::uint8_t len = data[pos];
      if (len == 0 || len > 16) {
        throw TraceError(fmt::format("{}: byte {}: bad instruction length {}", path_, base + pos, len));
      }
      std::string& key = decoding_->key;
      key.assign(reinterpret_cast<const char*>(&insnPc), sizeof insnPc);
      key.append(reinterpret_cast<const char*>(&data[pos + 1]), len);
      auto [it, fresh] = decoding_->cache.try_emplace(key, static_cast<std::uint32_t>(insns_.size()));
      if (fresh) insns_.push_back(decoding_->decoder.decode(insnPc, std::span<const std::uint8_t>(&data[pos + 1], len)));
      blockInsns_.push_back(it->second);
      insnPc += len;
      pos += 1 + len;
    }
    if (!complete) {
      blockInsns_.resize(first);
      pos = recordStart;
      break;
    }
    ++defined_;
    if (id >= blocks_.size()) blocks_.resize(std::size_t{id} + 1);
    blocks_[id] = Block{pc, first, n};
  }
  parsed_ = pos;
  if (!growing_) {  // the rest can never be completed
    data_.clear();
    data_.shrink_to_fit();
    parsed_ = 0;
  }
}

RawTraceSource::RawTraceSource(std::shared_ptr<const RawBlockTable> blocks, std::string path, RawDecodeOptions options)
    : table_(std::move(blocks)), path_(std::move(path)), options_(options), inBuf_(kInBufSize) {
  rewind();
}

RawTraceSource::RawTraceSource(std::shared_ptr<const RawBlockTable> blocks, std::string name, RawDecodeOptions options,
                               CustomInput)
    : table_(std::move(blocks)), path_(std::move(name)), options_(options), inBuf_(kInBufSize) {}

std::size_t RawTraceSource::fillBuffer(char* buf, std::size_t n) {
  in_.read(buf, static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in_.gcount());
}

void RawTraceSource::restartInput() {
  in_ = std::ifstream(path_, std::ios::binary);
  if (!in_) throw TraceError(fmt::format("cannot open raw trace '{}'", path_));
}

void RawTraceSource::fail(const std::string& what) const {
  throw TraceError(fmt::format("{}: byte {}: {}", path_, entryOffset_, what));
}

void RawTraceSource::rewind() {
  restartInput();
  begin();
}

void RawTraceSource::begin() {
  bufPos_ = bufEnd_ = 0;
  offset_ = 0;
  char magic[8];
  if (!readBytes(magic, 8) ||
      (std::memcmp(magic, kRawMagic.data(), 8) != 0 && std::memcmp(magic, kRawMagicV2.data(), 8) != 0)) {
    throw TraceError(fmt::format("{}: not a raw tracer stream (bad magic)", path_));
  }
  zeroWordEnds_ = std::memcmp(magic, kRawMagicV2.data(), 8) == 0;
  position_ = emitted_ = droppedAccesses_ = 0;
  current_ = next_ = nullptr;
  accesses_.clear();
  emitFrom_ = 0;
  lastWasRep_ = false;
  ended_ = false;
  started_ = false;
}

bool RawTraceSource::readBytes(void* dst, std::size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  while (n > 0) {
    if (bufPos_ == bufEnd_) {
      bufEnd_ = fillBuffer(inBuf_.data(), inBuf_.size());
      bufPos_ = 0;
      if (bufEnd_ == 0) return false;
    }
    const std::size_t k = std::min(n, bufEnd_ - bufPos_);
    std::memcpy(out, inBuf_.data() + bufPos_, k);
    bufPos_ += k;
    out += k;
    n -= k;
    offset_ += k;
  }
  return true;
}

// Reads entries up to the next block execution: memory accesses go to accesses_ (they belong to current_), the block
// becomes next_. At the end of the stream next_ is null. A entry cut short ends the stream (killed program).
void RawTraceSource::advance() {
  next_ = nullptr;
  unsigned char w[4], a[8];
  while ((entryOffset_ = offset_, readBytes(w, 4))) {
    const std::uint32_t word = le32(w);
    if (word == 0 && zeroWordEnds_) break;
    if ((word & 1) == 0) {
      next_ = table_->block(word >> 1);
      while (!next_ && moreBlocks()) next_ = table_->block(word >> 1);
      if (!next_) fail(fmt::format("block {} is not defined in the block file", word >> 1));
      return;
    }
    if (!readBytes(a, 8)) break;
    if (word == kPositionWord) {
      position_ = le64(a);
      continue;
    }
    if (word & 0xffffc000u) fail(fmt::format("corrupt entry 0x{:08x}", word));
    const auto index = static_cast<std::uint16_t>((word >> 4) & 1023);
    if (!current_ || index >= current_->count) fail(fmt::format("memory access of instruction {} outside its block", index));
    accesses_.push_back(Access{index, (word & 8) != 0, static_cast<std::uint8_t>(1u << ((word >> 1) & 3)), le64(a)});
  }
  ended_ = true;
}

std::size_t RawTraceSource::read(std::span<Instr> out) {
  std::size_t filled = 0;
  if (!started_) {
    started_ = true;
    advance();  // up to the first block (only a position entry may precede it)
    if (!accesses_.empty()) fail("memory access before the first block");
    current_ = next_;
    if (current_) advance();
  }
  auto limitReached = [&] { return options_.maxRecords != 0 && emitted_ >= options_.maxRecords; };
  while (filled < out.size() && current_ && !limitReached()) {
    if (options_.dropLastBlock && !next_ && ended_) {
      current_ = nullptr;
      break;
    }
    emitBlock(next_ ? next_->pc : 0, out, filled);
    if (limitReached() || emitFrom_ < current_->count) break;  // done, or the batch is full inside this block
    current_ = next_;
    accesses_.clear();
    accessPos_ = 0;
    emitFrom_ = 0;
    if (current_) advance();
  }
  return filled;
}

void RawTraceSource::emitBlock(Addr nextPc, std::span<Instr> out, std::size_t& filled) {
  const RawBlockTable::Block& b = *current_;
  for (; emitFrom_ < b.count && filled < out.size(); ++emitFrom_) {
    if (options_.maxRecords && emitted_ >= options_.maxRecords) return;
    const std::uint32_t i = emitFrom_;
    const X86Insn& d = table_->insn(b.first + i);
    Instr& r = out[filled];
    r = Instr{};
    // Memory accesses of this instruction; contiguous pieces of one wide access (QEMU splits 16/32-byte accesses
    // into 8-byte ones) are merged back.
    for (; accessPos_ < accesses_.size() && accesses_[accessPos_].index <= i; ++accessPos_) {
      const Access& acc = accesses_[accessPos_];
      if (acc.index != i) continue;
      if (!addAccess(r, acc.store, acc.addr, acc.size)) ++droppedAccesses_;
    }
    const std::uint64_t dynIndex = position_++;
    if (dynIndex < options_.skip) continue;
    if (options_.collapseRep && d.isRep && lastWasRep_ && lastRepPc_ == d.pc) continue;
    lastWasRep_ = d.isRep;
    lastRepPc_ = d.pc;

    applyDecoded(d, r);
    if (d.branch != BranchKind::None) {
      const Addr next = i + 1 < b.count ? table_->insn(b.first + i + 1).pc : nextPc;
      const Addr fallThrough = d.pc + d.length;
      if (d.branch == BranchKind::Conditional) {
        r.taken = next != 0 && next != fallThrough;
        r.target = d.target;
      } else {
        r.taken = true;
        r.target = d.target ? d.target : next;
      }
    }
    ++filled;
    ++emitted_;
  }
}

std::vector<std::string> rawThreadFiles(const std::string& prefix) {
  std::vector<std::string> files;
  for (int k = 0;; ++k) {
    std::string f = fmt::format("{}.t{}.raw", prefix, k);
    if (!std::filesystem::exists(f)) break;
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace smtlab
