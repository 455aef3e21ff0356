// The raw stream of the QEMU tracer plugin (tools/qemu-tracer): which translated blocks a guest thread executed and
// every load/store it made. RawTraceSource decodes it into trace records; docs/tracing.md gives the byte layout.
#pragma once

#include <cstdint>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/trace/source.hpp"
#include "smtlab/tracer/x86_decoder.hpp"

namespace smtlab {

struct RawDecodeOptions {
  std::uint64_t skip = 0;        // drop the thread's first `skip` executed instructions
  std::uint64_t maxRecords = 0;  // 0: all
  bool collapseRep = false;      // one record per rep-prefixed string op, not one per iteration
  // Leave out the stream's last block. The plugin writes a block when it starts executing; a thread killed (by a
  // signal, or when another thread stopped the program) may not have finished it, so its last block is not known
  // to have executed past its first instruction.
  bool dropLastBlock = false;
};

// Block definitions (PREFIX.blocks), each instruction decoded once and shared by every block that holds it.
class RawBlockTable {
 public:
  // Throws TraceError naming the file on a missing, truncated or corrupt file. `growing`: the file is still being
  // written (live tracing): a definition cut short at its end waits for refresh() instead of ending the table.
  explicit RawBlockTable(const std::string& path, bool growing = false);
  ~RawBlockTable();
  RawBlockTable(const RawBlockTable&) = delete;
  RawBlockTable& operator=(const RawBlockTable&) = delete;
  // A growing table reads what was appended since; true if it defined more blocks.
  bool refresh();

  struct Block {
    Addr pc = 0;
    std::uint32_t first = 0;  // index of its first instruction in blockInsns
    std::uint32_t count = 0;
  };
  const Block* block(std::uint32_t id) const { return id < blocks_.size() && blocks_[id].count ? &blocks_[id] : nullptr; }
  const X86Insn& insn(std::uint32_t blockInsnIndex) const { return insns_[blockInsns_[blockInsnIndex]]; }
  std::size_t distinctInstructions() const { return insns_.size(); }

 private:
  // Parses the complete definitions in data_ from parsed_ on; a cut one ends the table, or waits (growing).
  void parse();

  std::string path_;
  bool growing_ = false;
  std::uint64_t fileOffset_ = 0;      // bytes of the file read so far
  std::vector<unsigned char> data_;   // bytes not yet parsed (a growing table keeps a cut definition here)
  std::size_t parsed_ = 0;
  std::uint32_t defined_ = 0;
  struct Decoding;                    // the decoder and the instruction cache, kept between refreshes
  std::unique_ptr<Decoding> decoding_;
  // By block id. A deque: a growing table adds blocks while a source holds pointers to earlier ones, which a vector's
  // reallocation would leave dangling.
  std::deque<Block> blocks_;
  std::vector<std::uint32_t> blockInsns_;  // per block slot: index into insns_
  std::vector<X86Insn> insns_;            // distinct instructions (pc + bytes)
};

// Reads one thread's raw stream (PREFIX.tK.raw) as trace records. A stream cut short by a killed program ends at its
// last complete block; other damage is a TraceError naming the file and byte offset.
class RawTraceSource : public TraceSource {
 public:
  RawTraceSource(std::shared_ptr<const RawBlockTable> blocks, std::string path, RawDecodeOptions options = {});
  // For a subclass that supplies the bytes itself (fillBuffer, restartInput): nothing is opened here.
  struct CustomInput {};
  RawTraceSource(std::shared_ptr<const RawBlockTable> blocks, std::string name, RawDecodeOptions options, CustomInput);
  std::size_t read(std::span<Instr> out) override;
  void rewind() override;
  std::string describe() const override { return path_; }

  std::uint64_t droppedAccesses() const { return droppedAccesses_; }  // beyond the record's 4 loads + 2 stores

 protected:
  // Up to n bytes of the stream into buf; 0 at its end. The default reads the file.
  virtual std::size_t fillBuffer(char* buf, std::size_t n);
  // Makes the stream start again (the default reopens the file); then rewind() reads the magic.
  virtual void restartInput();
  // A block id with no definition yet: a growing table may define it now (live tracing). True to look again.
  virtual bool moreBlocks() { return false; }
  // Starts the stream: the subclass calls it once its input is ready (the path constructor does it itself).
  void begin();
  void setBlockTable(std::shared_ptr<const RawBlockTable> table) { table_ = std::move(table); }
  std::uint64_t emitted() const { return emitted_; }  // records read since the start

 private:
  struct Access {
    std::uint16_t index;
    bool store;
    std::uint8_t size;
    Addr addr;
  };
  bool readBytes(void* dst, std::size_t n);  // false at a clean or truncated end
  void advance();  // reads the accesses of current_ and the next block execution (next_)
  void emitBlock(Addr nextPc, std::span<Instr> out, std::size_t& filled);
  [[noreturn]] void fail(const std::string& what) const;

  std::shared_ptr<const RawBlockTable> table_;
  std::string path_;
  RawDecodeOptions options_;
  std::ifstream in_;
  std::vector<char> inBuf_;
  std::size_t bufPos_ = 0, bufEnd_ = 0;
  std::uint64_t offset_ = 0;       // bytes read from the file
  std::uint64_t entryOffset_ = 0;  // where the entry being decoded starts, for messages
  std::uint64_t position_ = 0;   // dynamic index of the next instruction to decode
  std::uint64_t emitted_ = 0;
  std::uint64_t droppedAccesses_ = 0;
  const RawBlockTable::Block* current_ = nullptr;  // block whose accesses are being gathered
  const RawBlockTable::Block* next_ = nullptr;     // the block after it (read ahead to know the next pc)
  std::vector<Access> accesses_;  // accesses of current_, in execution order
  std::size_t accessPos_ = 0;
  std::uint32_t emitFrom_ = 0;  // next instruction of current_ to emit (a batch may end inside a block)
  Addr lastRepPc_ = 0;
  bool lastWasRep_ = false;
  bool ended_ = false;
  bool started_ = false;
  bool zeroWordEnds_ = false;  // version 2 stream
};

// Looks for PREFIX.tK.raw files, K = 0, 1, ... (stops at the first missing one).
std::vector<std::string> rawThreadFiles(const std::string& prefix);

}  // namespace smtlab
