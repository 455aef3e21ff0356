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

// Reads the text format from a file, or from any std::istream (tests); memory use does not grow with the trace.
class TextTraceReader : public TraceSource {
 public:
  explicit TextTraceReader(std::string path);
  // Reads from a caller-owned stream; `name` is used in messages. rewind() seeks the stream back to where it started.
  TextTraceReader(std::istream& in, std::string name);

  std::size_t read(std::span<Instr> out) override;
  void rewind() override;
  std::string describe() const override { return name_; }

 private:
  std::string name_;
  std::unique_ptr<std::ifstream> file_;
  std::istream* in_;
  std::streampos start_{};
  std::uint64_t line_ = 0;
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
