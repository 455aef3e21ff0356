#include "native_output.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/iostreams/categories.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace io = boost::iostreams;

namespace smtlab {

// ---------------------------------------------------------------------------------------------------------------
// TraceFileSink

TraceFileSink::TraceFileSink(std::string name, const std::filesystem::path& path) : name_(std::move(name)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd_ < 0) throw TraceError(fmt::format("{}: cannot open the output: {}", name_, std::strerror(errno)));
}

TraceFileSink::~TraceFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceFileSink::fail(int error) const {
  const std::string reason = error == ENOSPC ? "the disk is full (no space left on device)"
                             : error == EFBIG ? "the file is larger than allowed (file size limit reached)"
                                              : std::string(std::strerror(error));
  throw TraceError(fmt::format("{}: write failed: {}", name_, reason));
}

void TraceFileSink::write(const void* data, std::size_t n) {
  if (abandoned_) return;
  if (failed_ || fd_ < 0) throw TraceError(fmt::format("{}: write after a failed write", name_));
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      failed_ = true;
      fail(put < 0 ? errno : ENOSPC);  // write(2) returning 0 for a non-empty buffer: nothing more fits
    }
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

void TraceFileSink::writeAt(std::uint64_t offset, const void* data, std::size_t n) {
  if (failed_ || fd_ < 0) throw TraceError(fmt::format("{}: write after a failed write", name_));
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      failed_ = true;
      fail(put < 0 ? errno : ENOSPC);
    }
    p += put;
    n -= static_cast<std::size_t>(put);
    offset += static_cast<std::uint64_t>(put);
  }
}

void TraceFileSink::close() {
  if (fd_ < 0) return;
  const int rc = ::close(fd_);  // not retried on EINTR: Linux has closed the descriptor either way
  const int error = errno;
  fd_ = -1;
  if (rc != 0 && error != EINTR) {
    failed_ = true;
    fail(error);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Compressors

class PlainOutput final : public NativeCompressor {
 public:
  explicit PlainOutput(TraceFileSink& sink) : sink_(sink) {}
  void write(const unsigned char* data, std::size_t n) override { sink_.write(data, n); }
  void finish() override {}

 private:
  TraceFileSink& sink_;
};

// libzstd's streaming API, not boost's zstd_compressor: boost's has no way to ask for the frame's content checksum
// (XXH64 of the uncompressed data, RFC 8878 section 3.1.1), which the reader's decompressor then verifies.
class ZstdOutput final : public NativeCompressor {
 public:
  explicit ZstdOutput(TraceFileSink& sink) : sink_(sink), cctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize()) {
    if (!cctx_) throw TraceError("zstd: cannot create a compression context (out of memory)");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, ZSTD_CLEVEL_DEFAULT));
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1));
  }
  ~ZstdOutput() override { ZSTD_freeCCtx(cctx_); }
  ZstdOutput(const ZstdOutput&) = delete;
  ZstdOutput& operator=(const ZstdOutput&) = delete;

  void write(const unsigned char* data, std::size_t n) override {
    ZSTD_inBuffer in{data, n, 0};
    while (in.pos < in.size) step(in, ZSTD_e_continue);
  }
  void finish() override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    while (step(in, ZSTD_e_end) != 0) {
    }
  }

 private:
  static std::size_t check(std::size_t rc) {
    if (ZSTD_isError(rc)) throw TraceError(fmt::format("zstd compression failed: {}", ZSTD_getErrorName(rc)));
    return rc;
  }
  std::size_t step(ZSTD_inBuffer& in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const std::size_t left = check(ZSTD_compressStream2(cctx_, &out, &in, mode));
    sink_.write(out_.data(), out.pos);
    return left;
  }

  TraceFileSink& sink_;
  ZSTD_CCtx* cctx_;
  std::vector<unsigned char> out_;
};

// boost.iostreams' device interface over a TraceFileSink: a failed write throws out of the filter chain, so the
// chain's close() (which loops until its sink takes everything) ends instead of spinning.
class SinkDevice {
 public:
  using char_type = char;
  using category = io::sink_tag;
  explicit SinkDevice(TraceFileSink& sink) : sink_(&sink) {}
  std::streamsize write(const char* s, std::streamsize n) {
    sink_->write(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  TraceFileSink* sink_;
};

// xz through boost's lzma_compressor, whose stream carries xz's CRC32 check of each block.
class XzOutput final : public NativeCompressor {
 public:
  explicit XzOutput(TraceFileSink& sink) {
    filtered_.push(io::lzma_compressor());
    filtered_.push(SinkDevice(sink));
  }
  void write(const unsigned char* data, std::size_t n) override {
    const auto want = static_cast<std::streamsize>(n);
    if (filtered_.sputn(reinterpret_cast<const char*>(data), want) != want) {
      throw TraceError("xz compression failed: the compressor took only part of the data");
    }
  }
  void finish() override { filtered_.pop(); }  // closes the chain first: the compressor ends its stream

 private:
  io::filtering_ostreambuf filtered_;
};

}  // namespace

std::unique_ptr<NativeCompressor> makeNativeCompressor(Compression compression, TraceFileSink& sink) {
  switch (compression) {
    case Compression::None: return std::make_unique<PlainOutput>(sink);
    case Compression::Zstd: return std::make_unique<ZstdOutput>(sink);
    case Compression::Xz: return std::make_unique<XzOutput>(sink);
  }
  throw TraceError(fmt::format("unknown compression {}", static_cast<unsigned>(compression)));
}

}  // namespace smtlab
