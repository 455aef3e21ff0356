// The text trace format: one dynamic instruction per line ("PC OP [field ...]"), for people and tests.
// docs/traces.md defines the syntax; the reader streams line by line, the writer emits the same syntax losslessly.
#pragma once

#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <memory>
#include <string>

#include "smtlab/trace/source.hpp"

namespace smtlab {

class TraceInput;

// The longest line the reader accepts (docs/traces.md): far above the longest record (about 300 bytes), so only a
// file that is not a text trace (or /dev/zero) reaches it, and it bounds the reader's memory.
inline constexpr std::size_t kMaxTextLineBytes = 64 * 1024;
// Messages quote at most this many bytes of an offending token, then say how long it was.
inline constexpr std::size_t kMaxQuotedBytes = 40;

// A token quoted for a message: 'token' when short, else 'its first kMaxQuotedBytes bytes...' (N bytes).
std::string quoteToken(std::string_view token);

// Reads the text format from a file, or from any std::istream (tests); memory use does not grow with the trace.
// A UTF-8 byte-order mark at the start is skipped; a line longer than kMaxTextLineBytes is an error.
class TextTraceReader : public TraceSource {
 public:
  explicit TextTraceReader(std::string path);
  explicit TextTraceReader(std::unique_ptr<TraceInput> input);
  // Reads from a caller-owned stream; `name` is used in messages. rewind() seeks the stream back to where it started.
  TextTraceReader(std::istream& in, std::string name);
  ~TextTraceReader() override;

  std::size_t read(std::span<Instr> out) override;
  void rewind() override;
  std::string describe() const override { return name_; }

 private:
  bool nextLine();  // the next line into buf_ (without its newline); false at the end

  std::string name_;
  std::unique_ptr<TraceInput> input_;  // when reading a file
  std::istream* in_;
  std::streampos start_{};
  std::uint64_t line_ = 0;
  bool ended_ = false;
  std::string buf_;
};

// Parses one line of the text format into `out`. Returns false for a blank or comment-only line. Throws TraceError
// "NAME:LINE: what" on a malformed line.
bool parseTextLine(std::string_view line, Instr& out, std::string_view name, std::uint64_t lineNo);

// Formats a record as one text-format line (no newline), aligned like the examples in docs/traces.md.
std::string formatTextLine(const Instr& instr);

class OutputFile;

// Writes records in the text format to a file or a caller-owned stream. A file is written under a temporary name
// beside the target and renamed into place by close(); a writer destroyed without close() leaves no file.
class TextTraceWriter {
 public:
  explicit TextTraceWriter(const std::string& path);
  explicit TextTraceWriter(std::ostream& out);
  ~TextTraceWriter();
  TextTraceWriter(const TextTraceWriter&) = delete;
  TextTraceWriter& operator=(const TextTraceWriter&) = delete;
  void write(const Instr& instr);
  // Flushes (and for a file, renames it into place); throws TraceError if the stream failed (disk full, ...).
  void close();
  std::uint64_t written() const { return written_; }

 private:
  std::string name_;
  std::unique_ptr<OutputFile> file_;
  std::ostream* out_;
  std::uint64_t written_ = 0;
};

// The header comment the writer puts on the first line.
inline constexpr std::string_view kTextTraceHeader =
    "# smtlab text trace v1 -- one dynamic instruction per line: PC OP [field ...]; '#' starts a comment";

}  // namespace smtlab
