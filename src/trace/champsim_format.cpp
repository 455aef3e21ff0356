#include "smtlab/trace/champsim_format.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/trace/trace_input.hpp"

namespace smtlab {
namespace io = boost::iostreams;

namespace {

// ChampSim registers on smtlab's register file: n < 64 is rn, n >= 64 is f(n mod 64); the instruction pointer is not
// a data dependency and is dropped. The stack pointer is r4 in every smtlab trace (x86's number for RSP, which the
// stack engine recognises, register_file.hpp), so ChampSim's REG_STACK_POINTER 6 and its register 4 trade names;
// renaming a register consistently changes no dependency.
RegId mapChampSimReg(std::uint8_t n) {
  if (n == 0 || n == kChampSimInstructionPointer) return kNoReg;
  if (n == kChampSimStackPointer) return intReg(4);
  if (n == 4) return intReg(kChampSimStackPointer);
  return n < kIntRegs ? intReg(n) : fpReg(n % kFpRegs);
}

void decodeRecord(const unsigned char* p, ChampSimRecord& r) {
  auto u64 = [&](std::size_t off) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[off + static_cast<std::size_t>(i)];
    return v;
  };
  r.ip = u64(0);
  r.isBranch = p[8];
  r.branchTaken = p[9];
  r.dstRegs = {p[10], p[11]};
  r.srcRegs = {p[12], p[13], p[14], p[15]};
  for (std::size_t i = 0; i < 2; ++i) r.dstMem[i] = u64(16 + 8 * i);
  for (std::size_t i = 0; i < 4; ++i) r.srcMem[i] = u64(32 + 8 * i);
}

}  // namespace

BranchKind champSimBranchKind(const ChampSimRecord& r) {
  // Register 0 means "no register" and is removed before the tests, as ChampSim's std::remove_copy(..., 0) does.
  bool writesSp = false, writesIp = false, readsSp = false, readsFlags = false, readsIp = false, readsOther = false;
  for (std::uint8_t d : r.dstRegs) {
    writesSp |= d == kChampSimStackPointer;
    writesIp |= d == kChampSimInstructionPointer;
  }
  for (std::uint8_t s : r.srcRegs) {
    if (s == 0) continue;
    if (s == kChampSimStackPointer) readsSp = true;
    else if (s == kChampSimFlags) readsFlags = true;
    else if (s == kChampSimInstructionPointer) readsIp = true;
    else readsOther = true;
  }
  // ChampSim's own deduction, condition for condition and in its order: inc/instruction.h, the private
  // ooo_model_instr(T instr, asid) constructor (ChampSim/ChampSim at 2ff2501, May 2025). A direct jump does not look
  // at reads_ip (a relative jmp reads the IP in real traces); an indirect jump requires !reads_ip.
  if (!readsSp && !readsFlags && writesIp && !readsOther) return BranchKind::DirectJump;
  if (!readsSp && !readsIp && !readsFlags && writesIp && readsOther) return BranchKind::IndirectJump;
  if (!readsSp && readsIp && !writesSp && writesIp && (readsFlags || readsOther)) return BranchKind::Conditional;
  if (readsSp && readsIp && writesSp && writesIp && !readsFlags && !readsOther) return BranchKind::DirectCall;
  if (readsSp && readsIp && writesSp && writesIp && !readsFlags && readsOther) return BranchKind::IndirectCall;
  if (readsSp && !readsIp && writesSp && writesIp) return BranchKind::Return;
  if (writesIp) return BranchKind::Other;
  // ChampSim keeps the file's is_branch flag here (with branch type NOT_BRANCH and branch_taken false); an
  // instruction that does not write the IP cannot redirect fetch, so smtlab treats it as no branch (chosen).
  return BranchKind::None;
}

Instr fromChampSim(const ChampSimRecord& r, std::uint64_t nextIp) {
  Instr in;
  in.pc = r.ip;
  std::size_t k = 0;
  for (std::uint8_t s : r.srcRegs) {
    const RegId id = mapChampSimReg(s);
    if (id != kNoReg && k < in.src.size()) in.src[k++] = id;
  }
  k = 0;
  for (std::uint8_t d : r.dstRegs) {
    const RegId id = mapChampSimReg(d);
    if (id != kNoReg && k < in.dst.size()) in.dst[k++] = id;
  }
  k = 0;
  for (std::uint64_t a : r.srcMem) {
    if (a != 0 && k < in.loads.size()) in.loads[k++] = MemRef{a, 8};
  }
  k = 0;
  for (std::uint64_t a : r.dstMem) {
    if (a != 0 && k < in.stores.size()) in.stores[k++] = MemRef{a, 8};
  }
  in.branch = champSimBranchKind(r);
  const bool work = champSimRegisterWork(r);
  switch (in.branch) {
    case BranchKind::None:
      // With register work, memory operands make a load-op (int with ld=) or a read-modify-write (int with ld= and
      // st=), as x86 encodes them; without, a pure load or store (docs/tracing.md, "ChampSim traces").
      in.op = work ? OpClass::Int : in.hasLoad() ? OpClass::Load : in.hasStore() ? OpClass::Store : OpClass::Int;
      break;
    case BranchKind::Conditional: in.op = OpClass::Branch; break;
    case BranchKind::DirectJump: in.op = OpClass::Jump; break;
    case BranchKind::IndirectJump: in.op = OpClass::IndirectJump; break;
    case BranchKind::DirectCall:
    case BranchKind::IndirectCall: in.op = OpClass::Call; break;
    case BranchKind::Return: in.op = OpClass::Return; break;
    case BranchKind::Other: in.op = OpClass::Jump; break;
  }
  // Taken as ChampSim decides it (same constructor): jumps, calls and returns always; conditional and "other"
  // branches as the file says; anything else never.
  switch (in.branch) {
    case BranchKind::None: in.taken = false; break;
    case BranchKind::Conditional:
    case BranchKind::Other: in.taken = r.branchTaken != 0; break;
    default: in.taken = true; break;
  }
  if (in.taken) in.target = nextIp;
  // The uop count by the unfused-domain rule (docs/tracing.md, "Uops per instruction"): one for the work unless the
  // record only moves data, one per load, two per store (store-address + store-data). Load-op 2, RMW 4, call 3.
  unsigned uops = (in.op == OpClass::Load || in.op == OpClass::Store) ? 0 : 1;
  for (const MemRef& m : in.loads) uops += m.valid() ? 1 : 0;
  for (const MemRef& m : in.stores) uops += m.valid() ? 2 : 0;
  in.uops = static_cast<std::uint8_t>(std::max(uops, 1u));
  return in;
}

bool champSimRegisterWork(const ChampSimRecord& r) {
  // An x86 ALU op sets the flags (ChampSim's register 25) and its two-operand form reads the register it writes;
  // a move does neither (a pop reads and writes only the stack pointer). Register 0 is "none".
  for (std::uint8_t d : r.dstRegs) {
    if (d == 0 || d == kChampSimInstructionPointer) continue;
    if (d == kChampSimFlags) return true;
    if (d == kChampSimStackPointer) continue;
    for (std::uint8_t s : r.srcRegs) {
      if (s == d) return true;
    }
  }
  return false;
}

namespace {
// Printable ASCII, tab, newline, carriage return, or well-formed UTF-8 (utf8SequenceLength; a sequence cut by the
// record's end counts): a text file. 0xff, 0xfe and other bytes that UTF-8 never uses make it binary.
bool looksLikeText(const unsigned char* record) {
  const std::string_view bytes(reinterpret_cast<const char*>(record), kChampSimRecordSize);
  for (std::size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    if (const std::size_t n = utf8SequenceLength(bytes.substr(i)); n != 0) {
      i += n;
      continue;
    }
    // Cut by the record's end: what is left starts a well-formed sequence (some continuation completes it; the
    // second byte's range depends on the first, 0x80, 0x90 or 0xa0 fits each of them).
    const std::size_t left = bytes.size() - i;
    if (left >= 4) return false;
    for (const char fill : {'\x80', '\x90', '\xa0'}) {
      std::string completed(bytes.substr(i));
      completed.resize(4, fill);
      if (utf8SequenceLength(completed) > left) return true;
    }
    return false;
  }
  return true;
}
}  // namespace

bool isChampSimTraceName(const std::string& path) { return path.find(".champsimtrace") != std::string::npos; }

struct ChampSimTraceReader::Stream {
  io::filtering_istream in;
};

ChampSimTraceReader::ChampSimTraceReader(std::string path) : ChampSimTraceReader(TraceInput::open(path)) {}
ChampSimTraceReader::ChampSimTraceReader(std::unique_ptr<TraceInput> input)
    : path_(input->path()), input_(std::move(input)) {
  start();
}
ChampSimTraceReader::~ChampSimTraceReader() = default;

void ChampSimTraceReader::fail(const std::string& what) const {
  throw TraceError(fmt::format("{}: record {}: {}", path_, readIndex_, what));
}

void ChampSimTraceReader::rewind() {
  if (!input_->reopenable()) throw TraceError(cannotRereadMessage(*input_));
  stream_.reset();  // the decompressor refers to the old input: drop it first
  input_ = TraceInput::open(path_);
  start();
}

void ChampSimTraceReader::start() {
  stream_ = std::make_unique<Stream>();
  // Compression is sniffed from the first bytes TraceInput kept, so a pipe is read only once.
  unsigned char magic[6] = {};
  const std::string_view head = input_->head();
  std::memcpy(magic, head.data(), std::min(head.size(), sizeof magic));
  static constexpr unsigned char kXz[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
  if (std::memcmp(magic, kXz, 6) == 0) {
    compression_ = "xz";
    stream_->in.push(io::lzma_decompressor());
  } else if (magic[0] == 0x1f && magic[1] == 0x8b) {
    compression_ = "gzip";
    stream_->in.push(io::gzip_decompressor());
  } else if (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
    // zstd's frame magic (RFC 8878 §3.1.1, 0xFD2FB528 little-endian): decompressed like xz and gzip, so that
    // compressed bytes are never decoded as instructions.
    compression_ = "zstd";
    stream_->in.push(io::zstd_decompressor());
  } else {
    compression_ = "";
  }
  stream_->in.push(input_->stream());
  // Decompressor errors would otherwise only set badbit and look like the end of the trace.
  stream_->in.exceptions(std::ios::badbit);
  records_ = 0;
  readIndex_ = 0;
  // Read one record ahead (a taken branch's target is the next ip); this also reports a damaged start at open time.
  havePending_ = readRecord(pending_);
  done_ = !havePending_;
  // An uncompressed file holds whole records: a cut last record is said at open, as it would be at the end.
  if (compression_.empty() && input_->size() && *input_->size() % kChampSimRecordSize != 0) {
    const std::uint64_t size = *input_->size();
    throw TraceError(fmt::format("{}: record {}: truncated ({} of {} bytes)", path_, size / kChampSimRecordSize,
                                 size % kChampSimRecordSize, kChampSimRecordSize));
  }
}

bool ChampSimTraceReader::readRecord(ChampSimRecord& r) {
  unsigned char buf[kChampSimRecordSize];
  std::size_t got = 0;
  try {
    stream_->in.read(reinterpret_cast<char*>(buf), kChampSimRecordSize);
    got = static_cast<std::size_t>(stream_->in.gcount());
  } catch (const std::exception& e) {
    fail(fmt::format("corrupt {} data ({})", compression_.empty() ? "file" : compression_, e.what()));
  }
  if (got == 0) return false;
  if (got < kChampSimRecordSize) fail(fmt::format("truncated ({} of {} bytes)", got, kChampSimRecordSize));
  if (readIndex_ == 0 && looksLikeText(buf)) {
    // Every real record has zero bytes (the ip's upper bytes, the flags, unused register slots); 64 bytes of text
    // are another format under a ChampSim name, which would otherwise decode into garbage instructions.
    fail("64 bytes of text, not a ChampSim binary record (a text trace named .champsimtrace? ChampSim files are "
         "raw 64-byte records, plain or xz/gzip/zstd-compressed)");
  }
  // is_branch and branch_taken are flags: ChampSim's Pin tracer stores the bool values 0 and 1 (tracer/pin/
  // champsim_tracer.cpp), so any other byte is damage or another kind of file.
  if (buf[8] > 1 || buf[9] > 1) {
    fail(fmt::format("{}: is_branch byte {:#04x}, branch_taken byte {:#04x} (ChampSim writes 0 or 1 in each)",
                     readIndex_ == 0 ? "not a ChampSim trace" : "not a ChampSim record (damaged data)", buf[8],
                     buf[9]));
  }
  decodeRecord(buf, r);
  ++readIndex_;
  return true;
}

std::size_t ChampSimTraceReader::read(std::span<Instr> out) {
  std::size_t n = 0;
  if (done_) return 0;
  ChampSimRecord next;
  while (n < out.size()) {
    const bool more = readRecord(next);
    out[n++] = fromChampSim(pending_, more ? next.ip : 0);
    ++records_;
    if (!more) {
      done_ = true;
      break;
    }
    pending_ = next;
  }
  return n;
}

void writeChampSimTrace(const std::string& path, const std::vector<ChampSimRecord>& records) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw TraceError(fmt::format("cannot create ChampSim trace '{}'", path));
  io::filtering_ostream out;
  auto endsWith = [&](std::string_view tail) {
    return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (endsWith(".xz")) out.push(io::lzma_compressor());
  if (endsWith(".zst")) out.push(io::zstd_compressor());
  out.push(file);
  for (const ChampSimRecord& r : records) {
    unsigned char buf[kChampSimRecordSize] = {};
    auto put64 = [&](std::size_t off, std::uint64_t v) {
      for (std::size_t i = 0; i < 8; ++i) buf[off + i] = static_cast<unsigned char>(v >> (8 * i));
    };
    put64(0, r.ip);
    buf[8] = r.isBranch;
    buf[9] = r.branchTaken;
    std::memcpy(buf + 10, r.dstRegs.data(), 2);
    std::memcpy(buf + 12, r.srcRegs.data(), 4);
    for (std::size_t i = 0; i < 2; ++i) put64(16 + 8 * i, r.dstMem[i]);
    for (std::size_t i = 0; i < 4; ++i) put64(32 + 8 * i, r.srcMem[i]);
    out.write(reinterpret_cast<const char*>(buf), kChampSimRecordSize);
  }
  out.reset();
  if (!file) throw TraceError(fmt::format("writing ChampSim trace '{}' failed", path));
}

}  // namespace smtlab
