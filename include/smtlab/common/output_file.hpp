// Files smtlab writes for a user (traces, JSON, CSV, manifests). An output is written under a temporary name in its
// target directory and renamed into place only when complete, so an interrupted or failed run never leaves a
// half-written result under the real name; an input is never overwritten by its own output. A stream target ("-" for
// standard output, a pipe, a terminal or another character device, such as /dev/stdout or /dev/null) cannot be
// renamed onto, so it is written in place, as a shell's `>` writes it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace smtlab {

// The name that stands for standard output.
inline constexpr const char* kStandardOutputName = "-";

// True when `target` is written in place rather than through a temporary file: "-" (standard output), the
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N names of open descriptors, and an existing FIFO or
// character device.
bool isStreamTarget(const std::filesystem::path& target);

// True when `target` is this process's standard output ("-", or a name of the file descriptor 1 refers to).
bool isStandardOutput(const std::filesystem::path& target);

// Throws smtlab::Error naming `target` and the reason when it cannot be written: the path is empty, its directory is
// missing or is not a directory, the target is a directory or a socket, or the directory or an existing target is not
// writable. A target that is a symbolic link is checked (and OutputFile writes) where the link points: the link
// stays. Cheap: call it before a long simulation so that a bad destination is reported at once, not after the run.
void checkOutputPath(const std::filesystem::path& target, const std::string& what = "output");

// True when both paths name the same existing file (same device and inode: symlinks and other spellings included).
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b);

// Throws smtlab::Error when `output` is the same file as `input` (writing it would truncate the input first).
void refuseOverwritingInput(const std::filesystem::path& input, const std::filesystem::path& output);

// An output file under construction. The constructor checks the destination and creates the temporary file next to
// it (same directory, hence same file system, so the rename is atomic); commit() flushes, checks for write errors and
// renames it onto the target (the file a symbolic link names, keeping that file's permission bits); destroying it
// without commit() removes the temporary file. A stream target (isStreamTarget) is opened for appending and written
// directly (standard output is flushed first, so that what the program printed before stays before it); there
// tempPath() is the name to open and commit() only flushes and checks.
class OutputFile {
 public:
  explicit OutputFile(std::filesystem::path target, std::ios::openmode mode = std::ios::binary,
                      const std::string& what = "output");
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  std::ofstream& stream() { return stream_; }
  const std::filesystem::path& target() const { return target_; }
  // The temporary file's path, for writers that must open the file themselves (close stream() first with
  // closeStream()); commit() renames whatever is at this path.
  const std::filesystem::path& tempPath() const { return temp_; }
  void closeStream();
  // Makes the output visible under its real name. Throws smtlab::Error (and removes the temporary file) when
  // anything written failed.
  void commit();
  bool committed() const { return committed_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::string what_;
  std::ofstream stream_;
  bool committed_ = false;
  bool direct_ = false;  // a stream target, written in place
};

// Writes `text` to `target` through an OutputFile (complete or not at all).
void writeFileAtomically(const std::filesystem::path& target, const std::string& text,
                         const std::string& what = "output");

}  // namespace smtlab
