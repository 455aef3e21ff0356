// ChampSim trace reader: the 64-byte records of ChampSim's inc/trace_instruction.h (input_instr), plain, .xz or .gz,
// streamed. ChampSim records carry no op class or access sizes; docs/tracing.md says what smtlab assumes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/trace/source.hpp"

namespace smtlab {

// One ChampSim record as stored: little-endian, no padding (64 bytes).
struct ChampSimRecord {
  std::uint64_t ip = 0;
  std::uint8_t isBranch = 0;
  std::uint8_t branchTaken = 0;
  std::array<std::uint8_t, 2> dstRegs{};
  std::array<std::uint8_t, 4> srcRegs{};
  std::array<std::uint64_t, 2> dstMem{};
  std::array<std::uint64_t, 4> srcMem{};
};
inline constexpr std::size_t kChampSimRecordSize = 64;
static_assert(sizeof(ChampSimRecord) == kChampSimRecordSize);

// ChampSim's special register numbers (trace_instruction.h / instruction.h).
inline constexpr std::uint8_t kChampSimStackPointer = 6;
inline constexpr std::uint8_t kChampSimFlags = 25;
inline constexpr std::uint8_t kChampSimInstructionPointer = 26;

// The op class smtlab gives a ChampSim record that is not a branch, in words (for `trace info` and the docs).
inline constexpr std::string_view kChampSimOpClassRule =
    "int if it does register work (writes the flags or a register it reads: with memory operands a load-op or "
    "read-modify-write), else load if it reads memory, else store if it writes memory, else int (ChampSim records "
    "carry no op class)";

// ChampSim's branch-kind inference from the registers a record reads and writes, exactly as ChampSim's
// inc/instruction.h does it (docs/tracing.md lists the rules).
BranchKind champSimBranchKind(const ChampSimRecord& r);
// Whether a record does register work beyond moving data (chosen rule, docs/tracing.md): it writes the flags, or
// writes a register other than the stack pointer that it also reads (x86's two-operand ALU forms).
bool champSimRegisterWork(const ChampSimRecord& r);
// Converts one record; `nextIp` is the following record's ip (0 if none), the target of a taken branch.
Instr fromChampSim(const ChampSimRecord& r, std::uint64_t nextIp);

// True for names that select this reader: containing ".champsimtrace".
bool isChampSimTraceName(const std::string& path);

class TraceInput;

class ChampSimTraceReader : public TraceSource {
 public:
  // Compression is recognised by content (xz, gzip or zstd magic), else the file is read plain; a first record of
  // printable text is refused (another format under a ChampSim name). rewind() reopens the file;
  // a pipe cannot be read twice (TraceError).
  explicit ChampSimTraceReader(std::string path);
  explicit ChampSimTraceReader(std::unique_ptr<TraceInput> input);
  ~ChampSimTraceReader() override;

  std::size_t read(std::span<Instr> out) override;
  void rewind() override;
  std::string describe() const override { return path_; }

 private:
  struct Stream;
  void start();  // reads from input_'s first byte
  bool readRecord(ChampSimRecord& r);  // false at the end; throws on a truncated record or corrupt stream
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::string compression_;
  std::unique_ptr<TraceInput> input_;  // declared before stream_, which reads from it
  std::unique_ptr<Stream> stream_;
  std::uint64_t records_ = 0;    // records returned so far
  std::uint64_t readIndex_ = 0;  // records read from the file (one ahead of records_)
  ChampSimRecord pending_{};   // read ahead by one record: a taken branch's target is the next ip
  bool havePending_ = false;
  bool done_ = false;
};

// Writes records in ChampSim's format (plain, xz when the name ends in .xz, zstd in .zst); for tests and conversions.
void writeChampSimTrace(const std::string& path, const std::vector<ChampSimRecord>& records);

}  // namespace smtlab
