// The native binary trace format: an uncompressed 24-byte header (magic, version, compression, record count) then
// compactly encoded records, plain or in one checksummed zstd frame or xz stream. docs/traces.md gives the byte layout.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/trace/source.hpp"

namespace smtlab {

enum class Compression : std::uint32_t { None = 0, Zstd = 1, Xz = 2 };

inline constexpr std::array<char, 8> kNativeMagic = {'S', 'M', 'T', 'L', 'T', 'R', 'C', '\x01'};
// Version 4 (this writer) puts zstd's content checksum in the zstd frame, so that damaged data is an error instead of
// different records; its records are encoded as in version 3. Version 3 adds the decoder's uop count and microcoded
// flag per record; version 2 (up to 4 loads and 2 stores) and version 1 files (2 loads, 2 stores) are read, with
// uops = 0 (not recorded). Versions before 4 carry no zstd checksum (xz streams always carry xz's CRC32).
inline constexpr std::uint32_t kNativeVersion = 4;
inline constexpr std::uint32_t kNativeOldestVersion = 1;
inline constexpr std::uint32_t kNativeFirstChecksumVersion = 4;
inline constexpr std::uint64_t kUnknownCount = ~std::uint64_t{0};
inline constexpr std::size_t kNativeHeaderSize = 24;

// "none", "zstd", "xz" <-> Compression; parseCompression throws TraceError on an unknown name.
std::string_view compressionName(Compression c);
Compression parseCompression(std::string_view name);

// True when the file starts with the native magic (false when it cannot be opened or is shorter).
bool isNativeTrace(const std::string& path);
// True when these first bytes of a file are the native magic.
bool hasNativeMagic(std::string_view head);

class TraceInput;

// Streams records from a native file; memory use does not grow with the trace. rewind() reopens the file (a pipe
// cannot be read twice: rewind() then throws TraceError). A header count is checked as early as possible: against
// the size of an uncompressed file at open, and as soon as a record beyond the count is found.
class NativeTraceReader : public TraceSource {
 public:
  // A zstd file of a version before kNativeFirstChecksumVersion is read with one note on stderr per file and process
  // that it carries no checksum, unless noteUnchecked is false (upgradeNativeTrace, which gives it one).
  explicit NativeTraceReader(std::string path, bool noteUnchecked = true);
  explicit NativeTraceReader(std::unique_ptr<TraceInput> input, bool noteUnchecked = true);
  ~NativeTraceReader() override;

  std::size_t read(std::span<Instr> out) override;
  void rewind() override;
  std::string describe() const override { return path_; }
  std::optional<std::uint64_t> length() const override;
  Compression compression() const { return compression_; }
  std::uint32_t version() const { return version_; }

 private:
  struct Stream;
  void open();
  bool fill(std::size_t want);  // makes at least `want` bytes available unless the data ends; false at the end
  // Decodes the record at p into `in` (blank on entry) and returns the byte after it. kBounded checks every byte
  // against e; without it the caller has made sure that kMaxDecodeBytes bytes follow p.
  template <bool kBounded>
  const unsigned char* decode(const unsigned char* p, const unsigned char* e, Instr& in);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::unique_ptr<TraceInput> input_;  // declared before stream_, which reads from it
  std::unique_ptr<Stream> stream_;
  Compression compression_ = Compression::None;
  std::uint32_t version_ = kNativeVersion;
  std::uint64_t headerCount_ = kUnknownCount;
  std::uint64_t records_ = 0;  // records decoded so far
  std::vector<unsigned char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  bool done_ = false;
  // Decoder state: predictions the encoder made from the previous record.
  Addr prevPc_ = 0, nextPcGuess_ = 0, prevAddr_ = 0;
};

// Writes a native file. close() finishes the compressed stream, patches the record count into the header and renames
// the file, written under a temporary name beside the target, into place; a writer destroyed without close() (an
// error or interruption mid-way) leaves no file and an existing target untouched. A write that fails (disk full,
// file size limit) throws TraceError naming the file from write() or close().
class NativeTraceWriter {
 public:
  NativeTraceWriter(std::string path, Compression compression = Compression::Zstd);
  ~NativeTraceWriter();
  NativeTraceWriter(const NativeTraceWriter&) = delete;
  NativeTraceWriter& operator=(const NativeTraceWriter&) = delete;

  void write(const Instr& instr);
  void close();
  std::uint64_t written() const { return records_; }

 private:
  struct Stream;
  void flushBuffer();

  std::string path_;
  Compression compression_;
  std::unique_ptr<Stream> stream_;
  std::uint64_t records_ = 0;
  std::vector<unsigned char> buf_;
  Addr prevPc_ = 0, nextPcGuess_ = 0, prevAddr_ = 0;
  bool closed_ = false;
};

// Copies up to maxRecords (0 = all; required for endless generators) from a source into a native file.
// Returns the number of records written.
std::uint64_t writeNativeTrace(TraceSource& source, const std::string& path,
                               Compression compression = Compression::Zstd, std::uint64_t maxRecords = 0);

// Rewrites a zstd file of a version before kNativeFirstChecksumVersion in place as the current version, with the same
// records and its checksum (under a temporary name, renamed when complete; a reader that has the old file open goes on
// reading it). For the caches smtlab fills itself (kernel:NAME, kpath:NAME), so that their recordings gain the damage
// check without being recorded again. Returns false, changing nothing, for any other file.
bool upgradeNativeTrace(const std::string& path);

}  // namespace smtlab
