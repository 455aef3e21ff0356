#include "smtlab/tracer/recorder.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {

std::string findOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::exists(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::uint64_t fileSize(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(n);
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::uint64_t RecordResult::instructions() const {
  std::uint64_t n = 0;
  for (const auto& t : threads) n += t.instructions;
  return n;
}

std::string qemuPath() {
  if (const char* q = std::getenv("SMTLAB_QEMU"); q && *q) return findOnPath(q);
  return findOnPath("qemu-x86_64");
}

std::string tracerPluginPath() {
  if (const char* p = std::getenv("SMTLAB_QEMU_PLUGIN"); p && *p) return p;
#ifdef SMTLAB_TRACER_PLUGIN
  if (fs::exists(SMTLAB_TRACER_PLUGIN)) return SMTLAB_TRACER_PLUGIN;
#endif
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {self.parent_path() / "libsmtlab_qemu_tracer.so",
                              self.parent_path() / "tools/qemu-tracer/libsmtlab_qemu_tracer.so"}) {
      if (fs::exists(p)) return p.string();
    }
  }
  return {};
}

std::optional<std::string> tracerUnavailableReason() {
  if (!x86DecoderAvailable()) return "smtlab was built without capstone (Debian: libcapstone-dev)";
  if (qemuPath().empty()) return "qemu-x86_64 not found (Debian: qemu-user; or set SMTLAB_QEMU)";
  if (tracerPluginPath().empty()) {
    return "the QEMU tracer plugin was not built (its header qemu-plugin.h could not be had at configure time; "
           "see docs/tracing.md) and SMTLAB_QEMU_PLUGIN is not set";
  }
  return std::nullopt;
}

RecordResult recordProgram(const RecordOptions& o) {
  if (auto why = tracerUnavailableReason()) throw TraceError("trace record: cannot trace: " + *why);
  if (o.command.empty()) throw TraceError("trace record: no program given (smtlab trace record -- PROGRAM ARGS)");
  const std::string program = findOnPath(o.command[0]);
  if (program.empty()) throw TraceError(fmt::format("trace record: program '{}' not found", o.command[0]));
  const std::string rawPrefix = o.outPrefix + ".raw";
  // Stale thread files of an earlier run would be taken for threads of this one.
  for (const auto& f : rawThreadFiles(rawPrefix)) fs::remove(f);

  std::string pluginArg = fmt::format("{},out={}", tracerPluginPath(), rawPrefix);
  if (o.skip) pluginArg += fmt::format(",skip={}", o.skip);
  if (o.maxInstructions) pluginArg += fmt::format(",max={}", o.maxInstructions);
  std::vector<std::string> argv = {qemuPath(), "-cpu", o.cpu, "-plugin", pluginArg, program};
  argv.insert(argv.end(), o.command.begin() + 1, o.command.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  RecordResult result;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw TraceError("trace record: fork failed");
  if (pid == 0) {
    ::execv(cargv[0], cargv.data());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw TraceError("trace record: waitpid failed");
  }
  result.traceSeconds = secondsSince(t0);
  result.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (result.exitStatus == 125 || result.exitStatus == 127) {
    throw TraceError(fmt::format("trace record: {} failed (status {}) running '{}'; see the messages above", argv[0],
                                 result.exitStatus, program));
  }
  const std::vector<std::string> rawFiles = rawThreadFiles(rawPrefix);
  if (rawFiles.empty()) throw TraceError(fmt::format("trace record: the plugin wrote no trace for '{}'", program));

  const auto t1 = std::chrono::steady_clock::now();
  auto table = std::make_shared<const RawBlockTable>(rawPrefix + ".blocks");
  RawDecodeOptions decode;
  decode.skip = o.skip;
  decode.maxRecords = o.maxInstructions;
  decode.collapseRep = o.collapseRep;
  for (std::size_t k = 0; k < rawFiles.size(); ++k) {
    RecordedThread t;
    t.path = k == 0 ? o.outPrefix + ".trace" : fmt::format("{}.t{}.trace", o.outPrefix, k);
    RawTraceSource src(table, rawFiles[k], decode);
    t.instructions = writeNativeTrace(src, t.path, Compression::Zstd);
    t.rawBytes = fileSize(rawFiles[k]);
    t.traceBytes = fileSize(t.path);
    result.threads.push_back(t);
  }
  result.decodeSeconds = secondsSince(t1);
  if (!o.keepRaw) {
    for (const auto& f : rawFiles) fs::remove(f);
    fs::remove(rawPrefix + ".blocks");
  }

  // The threads share one address space: give them one id, stable for a given output name.
  result.asid = static_cast<std::uint32_t>(std::hash<std::string>{}(fs::absolute(o.outPrefix).string()) % 65521) + 1;
  boost::json::object m;
  boost::json::array cmd, threads;
  for (const auto& a : o.command) cmd.emplace_back(a);
  for (const auto& t : result.threads) {
    threads.emplace_back(boost::json::object{{"file", fs::path(t.path).filename().string()},
                                             {"instructions", t.instructions}});
  }
  m["command"] = std::move(cmd);
  m["asid"] = result.asid;
  m["threads"] = std::move(threads);
  m["qemu_cpu"] = o.cpu;
  m["skip"] = o.skip;
  m["max_instructions"] = o.maxInstructions;
  m["collapse_rep"] = o.collapseRep;
  m["exit_status"] = result.exitStatus;
  result.manifest = o.outPrefix + ".json";
  std::ofstream(result.manifest) << boost::json::serialize(m) << "\n";
  return result;
}

}  // namespace smtlab
