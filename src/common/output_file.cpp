// Atomic output files: temporary name in the target directory, rename on commit (see output_file.hpp).
#include "smtlab/common/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) {
  return p == kStandardOutputName ? std::string("standard output ('-')") : fmt::format("'{}'", p.string());
}

// The name a stream target is opened by: standard output by its /dev name, anything else as given.
fs::path streamPath(const fs::path& target) { return target == kStandardOutputName ? fs::path("/dev/stdout") : target; }

fs::path directoryOf(const fs::path& target) {
  fs::path dir = target.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// Where an output named `target` is written: the file a symbolic link names (followed link by link, as the kernel
// does, up to its limit of 40), as a shell's `>` writes through a link. Renaming onto the link itself would replace
// it with a regular file and leave the file it names unchanged. Not a link (the usual case): `target` itself.
fs::path followLinks(fs::path target, const std::string& what) {
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
  for (int links = 0;; ++links) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(target, ec))) return target;
    if (links == kMaxLinks) {
      throw Error(fmt::format("cannot write {} {}: too many levels of symbolic links", what, quoted(target)));
    }
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) throw Error(fmt::format("cannot write {} {}: {}", what, quoted(target), ec.message()));
    target = target.parent_path() / link;  // an absolute link replaces the folder
  }
}

// The process's umask, read without changing it for longer than two calls.
mode_t currentUmask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

}  // namespace

bool isStreamTarget(const fs::path& target) {
  const std::string& s = target.native();
  if (s == kStandardOutputName || s == "/dev/stdout" || s == "/dev/stderr" || s.starts_with("/dev/fd/") ||
      s.starts_with("/proc/self/fd/")) {
    return true;
  }
  struct stat st {};
  return ::stat(target.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

bool isStandardOutput(const fs::path& target) {
  if (target == kStandardOutputName) return true;
  struct stat out {}, st {};
  return ::fstat(STDOUT_FILENO, &out) == 0 && ::stat(target.c_str(), &st) == 0 && out.st_dev == st.st_dev &&
         out.st_ino == st.st_ino;
}

void checkOutputPath(const fs::path& output, const std::string& what) {
  if (output.empty()) {
    throw Error(fmt::format("cannot write {}: the path is empty (give a file name, or '-' for standard output)", what));
  }
  if (isStreamTarget(output)) {
    // Written in place (no temporary file, no rename): it must exist and be writable.
    const fs::path opened = streamPath(output);
    if (::access(opened.c_str(), W_OK) != 0) {
      throw Error(fmt::format("cannot write {} {}: {}", what, quoted(output), std::strerror(errno)));
    }
    return;
  }
  const fs::path target = followLinks(output, what);
  const fs::path dir = directoryOf(target);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw Error(fmt::format("cannot write {} {}: directory {} {}", what, quoted(target), quoted(dir),
                            errno == ENOENT ? "does not exist" : std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(fmt::format("cannot write {} {}: {} is not a directory", what, quoted(target), quoted(dir)));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw Error(fmt::format("cannot write {} {}: directory {} is not writable ({})", what, quoted(target),
                            quoted(dir), std::strerror(errno)));
  }
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(fmt::format("cannot write {} {}: it is a directory", what, quoted(target)));
    if (!S_ISREG(st.st_mode)) {
      throw Error(fmt::format("cannot write {} {}: it is not a regular file, a FIFO or a character device (a socket?)",
                              what, quoted(target)));
    }
    if (::access(target.c_str(), W_OK) != 0) {
      throw Error(fmt::format("cannot write {} {}: {}", what, quoted(target), std::strerror(errno)));
    }
  }
}

bool sameFile(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void refuseOverwritingInput(const fs::path& input, const fs::path& output) {
  if (sameFile(input, output)) {
    throw Error(fmt::format("refusing to write {}: it is the input file {} (writing would destroy it); choose "
                            "another output path",
                            quoted(output), quoted(input)));
  }
}

OutputFile::OutputFile(fs::path target, std::ios::openmode mode, const std::string& what)
    : what_(what), direct_(isStreamTarget(target)) {
  if (direct_) {
    checkOutputPath(target, what_);
    target_ = std::move(target);
    temp_ = streamPath(target_);
    // Appending: a standard output redirected to a file (`> file`) keeps what was printed before, in order.
    std::fflush(stdout);
    std::cout.flush();
    stream_.open(temp_, mode | std::ios::out | std::ios::app);
    if (!stream_) {
      throw Error(fmt::format("cannot write {} {}: {}", what_, quoted(target_), std::strerror(errno)));
    }
    return;
  }
  target_ = followLinks(std::move(target), what);
  checkOutputPath(target_, what_);
  const std::string pattern = (directoryOf(target_) / fmt::format(".{}.tmp-XXXXXX", target_.filename().string())).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw Error(fmt::format("cannot write {} {}: cannot create a temporary file beside it: {}", what_,
                            quoted(target_), std::strerror(errno)));
  }
  ::close(fd);
  temp_ = fs::path(name.data());
  // mkstemp makes the file private (0600); an output keeps the permission bits of the file it replaces, or gets
  // those an ordinary new file would get (as smtlab.fileio does).
  struct stat st {};
  ::chmod(temp_.c_str(), ::stat(target_.c_str(), &st) == 0 ? st.st_mode & 07777 : 0666 & ~currentUmask());
  stream_.open(temp_, mode | std::ios::out | std::ios::trunc);
  if (!stream_) {
    std::error_code ec;
    fs::remove(temp_, ec);
    throw Error(fmt::format("cannot write {} {}: cannot open a temporary file beside it", what_, quoted(target_)));
  }
}

OutputFile::~OutputFile() {
  if (!committed_ && !direct_) {
    if (stream_.is_open()) stream_.close();
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void OutputFile::closeStream() {
  if (!stream_.is_open()) return;
  errno = 0;
  stream_.flush();
  const bool ok = static_cast<bool>(stream_);
  const int error = errno;
  stream_.close();
  if (!ok) {
    // A stream target's reader may have gone (EPIPE); a file's disk may be full (ENOSPC).
    throw Error(fmt::format("cannot write {} {}: write failed ({})", what_, quoted(target_),
                            error != 0 ? std::strerror(error) : "disk full?"));
  }
}

void OutputFile::commit() {
  if (committed_) return;
  closeStream();
  if (direct_) {
    committed_ = true;
    return;
  }
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec) {
    fs::remove(temp_, ec);
    throw Error(fmt::format("cannot write {} {}: rename failed: {}", what_, quoted(target_), ec.message()));
  }
  committed_ = true;
}

void writeFileAtomically(const fs::path& target, const std::string& text, const std::string& what) {
  OutputFile out(target, std::ios::binary, what);
  out.stream() << text;
  out.commit();
}

}  // namespace smtlab
