// Live tracing (docs/tracing.md, "Live tracing"): `exec:PROGRAM ARGS...` runs a program under qemu-x86_64 with the
// tracer plugin and streams its main thread's instructions into the simulator through a FIFO, so a program of any
// length needs no trace file. The plugin (GPL, tools/qemu-tracer/) runs in its own process and talks only through
// the FIFO and its block file; what is in flight is bounded by the plugin's 1 MiB buffer and the pipe's.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "smtlab/tracer/raw_trace.hpp"

namespace smtlab {

// The words of `command` as a POSIX shell splits them, without running a shell: blanks separate words, '...' keeps
// everything literally, "..." keeps all but \" and \\, a backslash outside quotes escapes the next character. Throws
// UsageError naming `what` on an unterminated quote or an empty command. (In "...", a backslash escapes " \\ $ and `.)
std::vector<std::string> splitCommandLine(const std::string& command, const std::string& what);

class ExecTraceSource : public RawTraceSource {
 public:
  // `spec` is "exec:PROGRAM ARGS..."; the program is checked and started at once. Throws TraceError when the tracer
  // cannot run here (no QEMU, no plugin, no capstone) and UsageError on a bad command.
  explicit ExecTraceSource(const std::string& spec);
  ~ExecTraceSource() override;
  ExecTraceSource(const ExecTraceSource&) = delete;
  ExecTraceSource& operator=(const ExecTraceSource&) = delete;

  std::string describe() const override { return spec_; }

 protected:
  std::size_t fillBuffer(char* buf, std::size_t n) override;
  void restartInput() override;  // the program runs again from its start
  bool moreBlocks() override;

 private:
  void start();  // QEMU runs, the block file is there; the stream is not read yet
  void stop();  // kills QEMU if it still runs and removes the folder
  // QEMU has ended: a program killed by a signal, or one that started a second thread, is an error.
  void checkEnd();

  std::string spec_;
  std::vector<std::string> command_;
  std::string folder_;   // a private temporary folder: the FIFO, the block file, the plugin's rings
  std::string prefix_;   // folder_/stream
  int fd_ = -1;          // the FIFO's reading end
  pid_t pid_ = -1;
  int status_ = 0;
  bool ended_ = false;   // QEMU has been reaped (status_ holds how)
  std::shared_ptr<RawBlockTable> table_;
};

}  // namespace smtlab
