// Atomic output files: temporary name in the target directory, rename on commit (see output_file.hpp).
#include "smtlab/common/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) { return fmt::format("'{}'", p.string()); }

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

void checkOutputPath(const fs::path& output, const std::string& what) {
  if (output.empty()) throw Error(fmt::format("cannot write {}: empty path", what));
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
      throw Error(fmt::format("cannot write {} {}: it is not a regular file (a device, FIFO or socket)", what,
                              quoted(target)));
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
    : target_(followLinks(std::move(target), what)), what_(what) {
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
  if (!committed_) {
    if (stream_.is_open()) stream_.close();
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void OutputFile::closeStream() {
  if (!stream_.is_open()) return;
  stream_.flush();
  const bool ok = static_cast<bool>(stream_);
  stream_.close();
  if (!ok) throw Error(fmt::format("cannot write {} {}: write failed (disk full?)", what_, quoted(target_)));
}

void OutputFile::commit() {
  if (committed_) return;
  closeStream();
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
