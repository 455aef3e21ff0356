#include "smtlab/trace/trace_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

std::string_view fileKind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a pipe or FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

TraceInput::FdBuffer::FdBuffer(int fd, const std::string* path) : fd_(fd), path_(path), data_(kBufferBytes) {
  setg(data_.data(), data_.data(), data_.data());
}

TraceInput::FdBuffer::~FdBuffer() { ::close(fd_); }

std::size_t TraceInput::FdBuffer::readSome(char* to, std::size_t room) {
  while (true) {
    const ssize_t got = ::read(fd_, to, room);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    throw TraceError(fmt::format("{}: read error: {}", *path_, std::strerror(errno)));
  }
}

bool TraceInput::FdBuffer::fillAtLeast(std::size_t n) {
  // Only used before the first read, so the buffered bytes start at data_[0].
  std::size_t have = static_cast<std::size_t>(egptr() - eback());
  while (have < n) {
    const std::size_t got = readSome(data_.data() + have, data_.size() - have);
    if (got == 0) break;
    have += got;
  }
  setg(data_.data(), gptr(), data_.data() + have);
  return have >= n;
}

TraceInput::FdBuffer::int_type TraceInput::FdBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const std::size_t got = readSome(data_.data(), data_.size());
  setg(data_.data(), data_.data(), data_.data() + got);
  return got == 0 ? traits_type::eof() : traits_type::to_int_type(*gptr());
}

std::streamsize TraceInput::FdBuffer::xsgetn(char_type* s, std::streamsize n) {
  // Large reads (decompressors, ChampSim records) copy what is buffered, then read straight into the caller's memory.
  std::streamsize done = 0;
  while (done < n) {
    if (gptr() < egptr()) {
      const std::streamsize k = std::min<std::streamsize>(n - done, egptr() - gptr());
      std::memcpy(s + done, gptr(), static_cast<std::size_t>(k));
      gbump(static_cast<int>(k));
      done += k;
    } else if (n - done >= static_cast<std::streamsize>(data_.size())) {
      const std::size_t got = readSome(s + done, static_cast<std::size_t>(n - done));
      if (got == 0) break;
      done += static_cast<std::streamsize>(got);
    } else if (underflow() == traits_type::eof()) {
      break;
    }
  }
  return done;
}

TraceInput::TraceInput(std::string path, int fd) : path_(std::move(path)), buf_(fd, &path_), stream_(&buf_) {}

TraceInput::~TraceInput() = default;

std::unique_ptr<TraceInput> TraceInput::open(const std::string& path) {
  // One open() and no seek: a pipe, FIFO or /dev/stdin gives its data once. (Opening a FIFO waits for a writer, as
  // every reader of a FIFO does.)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TraceError(fmt::format("cannot open trace file '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw TraceError(fmt::format("cannot open trace file '{}': {}", path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw TraceError(fmt::format("cannot open trace file '{}': it is a directory", path));
  }
  std::unique_ptr<TraceInput> in(new TraceInput(path, fd));
  in->regular_ = S_ISREG(st.st_mode);
  in->kind_ = fileKind(st.st_mode);
  if (in->regular_) in->size_ = static_cast<std::uint64_t>(st.st_size);
  in->buf_.fillAtLeast(kSniffBytes);
  // Peek without consuming: the bytes stay in the buffer for the reader.
  in->head_ = std::string(in->buf_.buffered().substr(0, kSniffBytes));
  return in;
}

std::string cannotRereadMessage(const TraceInput& input) {
  return fmt::format("{}: cannot read the trace a second time: it is {}, whose data can be read only once; copy it "
                     "to a file to replay it", input.path(), input.kind());
}

}  // namespace smtlab
