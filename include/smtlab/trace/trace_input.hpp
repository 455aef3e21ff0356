// An opened trace file, read once from its first byte: the first bytes are kept for format sniffing, so that pipes,
// FIFOs, `<(...)` and /dev/stdin work like regular files (they can be opened and read only once, and never seeked).
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab {

class TraceInput {
 public:
  // Bytes kept for sniffing: the native magic (8), the xz magic (6), a UTF-8 BOM (3).
  static constexpr std::size_t kSniffBytes = 8;

  // Opens `path` and reads its first bytes. Throws TraceError naming the file (missing, unreadable, a directory).
  static std::unique_ptr<TraceInput> open(const std::string& path);
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  const std::string& path() const { return path_; }
  // The first bytes of the file (fewer when the file is shorter); stream() still starts before them.
  std::string_view head() const { return head_; }
  // A regular file can be opened again from its start (rewind); a pipe, FIFO or terminal cannot.
  bool reopenable() const { return regular_; }
  // The size of a regular file; nullopt for anything else.
  std::optional<std::uint64_t> size() const { return size_; }
  // What a non-reopenable input is, for messages ("a pipe", "a FIFO", "a character device").
  std::string_view kind() const { return kind_; }
  // The data from the first byte. A read error throws TraceError naming the file.
  std::istream& stream() { return stream_; }
  std::streambuf& buffer() { return buf_; }

 private:
  // A read(2)-based stream buffer: no seeking, so it behaves the same on a pipe and on a file.
  class FdBuffer : public std::streambuf {
   public:
    FdBuffer(int fd, const std::string* path);
    ~FdBuffer() override;
    bool fillAtLeast(std::size_t n);  // reads until n bytes are buffered or the data ends
    std::string_view buffered() const { return {gptr(), static_cast<std::size_t>(egptr() - gptr())}; }

   protected:
    int_type underflow() override;
    std::streamsize xsgetn(char_type* s, std::streamsize n) override;

   private:
    std::size_t readSome(char* to, std::size_t room);  // 0 at the end; throws TraceError on a read error
    int fd_;
    const std::string* path_;
    std::vector<char> data_;
  };

  TraceInput(std::string path, int fd);

  std::string path_;
  std::string head_;
  bool regular_ = false;
  std::optional<std::uint64_t> size_;
  std::string_view kind_;
  FdBuffer buf_;
  std::istream stream_;
};

// The message of a reader asked to read a non-reopenable input (a pipe) a second time.
std::string cannotRereadMessage(const TraceInput& input);

}  // namespace smtlab
