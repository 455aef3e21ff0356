// The byte path of the native trace writer: the compressor (zstd with its content checksum, xz with its check, or
// none) in front of the temporary output file. A write that fails (disk full, file size limit, I/O error) throws a
// TraceError naming the trace at once and every time after, so no compressor can loop on a sink that accepts nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "smtlab/trace/native_format.hpp"

namespace smtlab {

// An open file written with write(2). `name` is the trace as the user named it, for messages; `path` is the file
// written (the temporary file beside it).
class TraceFileSink {
 public:
  TraceFileSink(std::string name, const std::filesystem::path& path);
  ~TraceFileSink();
  TraceFileSink(const TraceFileSink&) = delete;
  TraceFileSink& operator=(const TraceFileSink&) = delete;

  // Writes all n bytes or throws TraceError (EINTR is retried; a short write continues where it stopped).
  void write(const void* data, std::size_t n);
  // Writes n bytes at a fixed offset (the header's record count) without moving the write position.
  void writeAt(std::uint64_t offset, const void* data, std::size_t n);
  // Closes the file and reports a failure close(2) sees (a file system that reports write errors only then).
  void close();
  // The output is being thrown away: later writes are dropped, so a compressor finishing in a destructor neither
  // writes nor fails.
  void abandon() { abandoned_ = true; }

 private:
  [[noreturn]] void fail(int error) const;

  std::string name_;
  int fd_ = -1;
  bool failed_ = false;
  bool abandoned_ = false;
};

// A compressor writing into a TraceFileSink.
class NativeCompressor {
 public:
  virtual ~NativeCompressor() = default;
  virtual void write(const unsigned char* data, std::size_t n) = 0;
  // Ends the compressed stream (the zstd frame's checksum, the xz stream's index and footer).
  virtual void finish() = 0;
};

std::unique_ptr<NativeCompressor> makeNativeCompressor(Compression compression, TraceFileSink& sink);

}  // namespace smtlab
