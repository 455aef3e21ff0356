// Checks of the program `trace record` runs (see program_file.hpp).
#include "smtlab/tracer/program_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/resources.hpp"

namespace smtlab {
namespace {

constexpr int kMaxInterpreterDepth = 4;  // Linux allows a few nested interpreters (BINPRM_MAX_RECURSION)
constexpr std::size_t kShebangMax = 255;  // Linux reads at most this much of a #! line (BINPRM_BUF_SIZE - 1)
constexpr unsigned kElfMachineX8664 = 62;  // EM_X86_64


std::string elfMachineName(unsigned machine) {
  switch (machine) {
    case 3: return "i386";
    case 40: return "ARM";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    case 8: return "MIPS";
    case 21: return "PowerPC64";
    default: return fmt::format("machine {}", machine);
  }
}

std::vector<std::string> resolve(const std::vector<std::string>& command, int depth) {
  const std::string& name = command.at(0);
  const std::string path = findOnPath(name);
  if (path.empty()) throw TraceError(fmt::format("trace record: program '{}' not found on PATH", name));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw TraceError(fmt::format("trace record: program '{}': {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) throw TraceError(fmt::format("trace record: '{}' is a directory, not a program", path));
  if (!S_ISREG(st.st_mode)) throw TraceError(fmt::format("trace record: '{}' is not a regular file", path));
  if (::access(path.c_str(), X_OK) != 0) {
    throw TraceError(fmt::format("trace record: '{}' is not executable (no x permission)", path));
  }
  std::ifstream in(path, std::ios::binary);
  char head[kShebangMax + 1] = {};
  in.read(head, sizeof head);
  const auto n = static_cast<std::size_t>(in.gcount());
  if (n == 0 && !in.eof()) throw TraceError(fmt::format("trace record: cannot read '{}'", path));

  std::vector<std::string> result = command;
  result[0] = path;
  if (n >= 20 && std::memcmp(head, "\x7f" "ELF", 4) == 0) {
    const auto cls = static_cast<unsigned char>(head[4]);
    const unsigned machine = static_cast<unsigned char>(head[18]) | static_cast<unsigned char>(head[19]) << 8;
    if (cls != 2 || machine != kElfMachineX8664) {
      throw TraceError(fmt::format("trace record: '{}' is a {}-bit ELF program for {}; qemu-x86_64 runs x86-64 Linux "
                                   "programs only",
                                   path, cls == 1 ? 32 : 64, elfMachineName(machine)));
    }
    return result;
  }
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    // As execve(2): the interpreter, then at most one argument (the rest of the line), then the script and its args.
    std::string line(head + 2, n - 2);
    const std::size_t eol = line.find('\n');
    if (eol == std::string::npos) {
      throw TraceError(fmt::format("trace record: '{}': its #! line is longer than {} bytes", path, kShebangMax));
    }
    line.resize(eol);
    const std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) throw TraceError(fmt::format("trace record: '{}': its #! line names no interpreter", path));
    const std::size_t e = line.find_first_of(" \t", b);
    const std::string interpreter = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    std::string argument;
    if (e != std::string::npos) {
      const std::size_t ab = line.find_first_not_of(" \t", e);
      if (ab != std::string::npos) argument = line.substr(ab, line.find_last_not_of(" \t\r") + 1 - ab);
    }
    if (depth >= kMaxInterpreterDepth) {
      throw TraceError(fmt::format("trace record: '{}': too many levels of #! interpreters", path));
    }
    if (interpreter.find('/') == std::string::npos) {
      throw TraceError(fmt::format("trace record: '{}': its #! interpreter '{}' is not a path", path, interpreter));
    }
    std::vector<std::string> inner = {interpreter};
    if (!argument.empty()) inner.push_back(argument);
    inner.insert(inner.end(), result.begin(), result.end());
    try {
      return resolve(inner, depth + 1);
    } catch (const TraceError& e) {
      throw TraceError(fmt::format("{} (the #! interpreter of '{}')", e.what(), path));
    }
  }
  throw TraceError(fmt::format("trace record: '{}' is neither an ELF program nor a script starting with #! "
                               "(exec format error)",
                               path));
}

}  // namespace

std::string findOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

std::string findTracerPlugin(const char* envVar, const std::string& fileName) {
  if (const char* p = std::getenv(envVar); p && *p) return p;
  std::error_code ec;
  try {
    if (const std::filesystem::path dir = tracerPluginDir(); !dir.empty() && std::filesystem::exists(dir / fileName, ec)) {
      return (dir / fileName).string();
    }
  } catch (const Error&) {
    // an installed package that cannot find its folder: look beside the program below
  }
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const std::filesystem::path& p : {self.parent_path() / fileName, self.parent_path() / "tools/qemu-tracer" / fileName}) {
      if (std::filesystem::exists(p)) return p.string();
    }
  }
  return {};
}

std::vector<std::string> resolveTracedProgram(const std::vector<std::string>& command) {
  if (command.empty()) throw TraceError("trace record: no program given (smtlab trace record -- PROGRAM ARGS)");
  return resolve(command, 0);
}

}  // namespace smtlab
