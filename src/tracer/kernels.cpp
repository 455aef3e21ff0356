#include "smtlab/tracer/kernels.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/resources.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/tracer/recorder.hpp"
#include "smtlab/tracer/tracer_revision.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {


// Traces are capped so that one kernel stays a few million instructions (seconds to trace, fractions to simulate).
constexpr std::uint64_t kKernelMaxInstructions = 20000000;

std::vector<KernelInfo> makeTable() {
  std::vector<KernelInfo> t;
  t.push_back({"sysbench_cpu", "sysbench_cpu.c", {"10000", "1"}, 0,
               "gen:mix,load=0.05,store=0.02,branch=0.2,imul=0.1,dep=2,count=5m",
               "sysbench cpu: primes up to 10000 by trial division"});
  struct Aim { const char* name; const char* fallback; const char* what; };
  const Aim aims[] = {
      {"add_short", "gen:mix,load=0.05,store=0.05,branch=0.08,dep=2,count=2m", "AIM9 add, short"},
      {"add_int", "gen:mix,load=0.05,store=0.05,branch=0.08,dep=2,count=2m", "AIM9 add, int"},
      {"add_long", "gen:mix,load=0.05,store=0.05,branch=0.08,dep=2,count=2m", "AIM9 add, long"},
      {"add_float", "gen:mix,load=0.05,store=0.05,branch=0.08,fp=0.5,dep=2,count=2m", "AIM9 add, float"},
      {"add_double", "gen:mix,load=0.05,store=0.05,branch=0.08,fp=0.5,dep=2,count=2m", "AIM9 add, double"},
      {"mul_short", "gen:mix,load=0.05,store=0.05,branch=0.08,imul=0.4,dep=2,count=2m", "AIM9 mul, short"},
      {"mul_int", "gen:mix,load=0.05,store=0.05,branch=0.08,imul=0.4,dep=2,count=2m", "AIM9 mul, int"},
      {"mul_long", "gen:mix,load=0.05,store=0.05,branch=0.08,imul=0.4,dep=2,count=2m", "AIM9 mul, long"},
      {"mul_float", "gen:mix,load=0.05,store=0.05,branch=0.08,fp=0.5,dep=2,count=2m", "AIM9 mul, float"},
      {"mul_double", "gen:mix,load=0.05,store=0.05,branch=0.08,fp=0.5,dep=2,count=2m", "AIM9 mul, double"},
      {"div_short", "gen:chain,op=idiv,count=1m", "AIM9 div, short"},
      {"div_int", "gen:chain,op=idiv,count=1m", "AIM9 div, int"},
      {"div_long", "gen:chain,op=idiv,count=1m", "AIM9 div, long"},
      {"div_float", "gen:chain,op=fdiv,count=1m", "AIM9 div, float"},
      {"div_double", "gen:chain,op=fdiv,count=1m", "AIM9 div, double"},
      {"call0", "gen:mix,load=0.15,store=0.15,branch=0.3,dep=3,count=2m", "AIM9 function call, 0 arguments"},
      {"call1", "gen:mix,load=0.15,store=0.15,branch=0.3,dep=3,count=2m", "AIM9 function call, 1 argument"},
      {"call2", "gen:mix,load=0.15,store=0.15,branch=0.3,dep=3,count=2m", "AIM9 function call, 2 arguments"},
      {"call15", "gen:mix,load=0.25,store=0.25,branch=0.1,dep=3,count=2m", "AIM9 function call, 15 arguments"},
      {"sieve", "gen:mix,load=0.2,store=0.2,branch=0.25,footprint=8k,hot=1,hot_kb=8,count=2m",
       "AIM9 integer sieve (8192 flags)"},
      {"memcpy", "gen:stream,footprint=16k,store_every=2,count=2m", "AIM9 memory copy (16 KiB)"},
      {"string", "gen:mix,load=0.3,store=0.15,branch=0.2,footprint=4k,hot=1,hot_kb=4,count=2m",
       "AIM9 string operations"},
      {"sort", "gen:mix,load=0.3,store=0.1,branch=0.2,predictability=0.6,footprint=16k,hot=1,hot_kb=16,count=2m",
       "AIM9 qsort of 4096 ints"},
  };
  for (const Aim& a : aims) t.push_back({fmt::format("aim9_{}", a.name), "aim9.c", {a.name, "200000"}, 0, a.fallback, a.what});
  t.push_back({"chase", "chase.c", {"4096", "1000000"}, 0, "gen:chase,footprint=4m,work=2,count=3m",
               "pointer chase over 4 MiB"});
  t.push_back({"chains", "chains.c", {"4096", "250000", "4"}, 0,
               "gen:mix,load=0.3,store=0,branch=0.1,footprint=4m,count=3m",
               "four independent pointer chases over 4 MiB", true});
  t.push_back({"msgpass_send", "msgpass.c", {"10000"}, 0, "gen:mix,load=0.2,store=0.15,branch=0.2,count=2m",
               "message-passing pair, sender (thread 0)"});
  t.push_back({"msgpass_recv", "msgpass.c", {"10000"}, 1, "gen:mix,load=0.25,store=0.1,branch=0.2,count=2m",
               "message-passing pair, receiver (thread 1)"});
  // The study's user programs (workloads/user, docs/study.md "Real user programs"): one role of a benchmark loop per
  // entry, each iteration one instance between pause markers; python/smtlab/workloads/user_streams.py cuts them out.
  struct User { const char* name; const char* source; const char* role; const char* what; };
  const User users[] = {
      {"user_chat_client_send", "chat.c", "client_send", "chat client: format and send one message"},
      {"user_chat_server_recv", "chat.c", "server_recv", "chat server: parse one message, fan it out to the room"},
      {"user_chat_server_send", "chat.c", "server_send", "chat server: frame one queued message for a member"},
      {"user_chat_client_recv", "chat.c", "client_recv", "chat client: parse one echoed message, update statistics"},
      {"user_dbench_client", "dbench.c", nullptr, "dbench client: parse one load-file line, set up the operation"},
      {"user_tbench_client", "tbench.c", "client", "tbench client: check the reply, build the next request"},
      {"user_tbench_server", "tbench.c", "server", "tbench server: decode one request, build the reply"},
      {"user_lmbench_loop", "loops.c", "lmbench", "LMbench's timing loop around one call: its control"},
      {"user_aim9_creat", "loops.c", "creat", "AIM9's creat-clo loop between two creat/close pairs"},
      {"user_aim9_link", "loops.c", "link", "AIM9's link_test loops between two unlink/link pairs"},
      {"user_aim9_sync", "loops.c", "sync", "AIM9's sync_disk_wrt / sync_disk_cp loop between two writes"},
      {"user_aim9_sync_rw", "loops.c", "sync_rw", "AIM9's sync_disk_rw loop: the next random block"},
      {"user_lmbench_hello", "hello.c", nullptr, "lmbench's hello from its write() to its exit"},
  };
  for (const User& u : users) {
    std::vector<std::string> args;
    if (u.role) args.emplace_back(u.role);
    // 400 instances: enough distinct draws, a few hundred thousand instructions (hello runs once: its one instance)
    args.emplace_back("400");
    t.push_back({u.name, fmt::format("../user/{}", u.source), args, 0,
                 "gen:mix,load=0.25,store=0.15,branch=0.2,dep=3,footprint=16k,count=200k", u.what});
  }
  return t;
}

int runCommand(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool newer(const fs::path& a, const fs::path& b) {
  std::error_code e1, e2;
  const auto ta = fs::last_write_time(a, e1), tb = fs::last_write_time(b, e2);
  return !e1 && !e2 && ta > tb;
}

// A cached trace written before native version 3 carries no uops: traced again when the tracer can,
// else used as it is. An unreadable cache file is traced again too.
bool carriesUops(const fs::path& trace) {
  try {
    return NativeTraceReader(trace.string(), false).version() >= 3;
  } catch (const Error&) {
    return false;
  }
}

// A cached trace written before native version 4, rewritten with that version's checksum (upgradeNativeTrace: the
// same records, not traced again); one that cannot be rewritten (a read-only cache) is read as it is.
std::string upgraded(const fs::path& trace) {
  try {
    upgradeNativeTrace(trace.string());
  } catch (const TraceError&) {
    // kept as it is: the reader notes that it carries no checksum
  }
  return trace.string();
}

}  // namespace

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> table = makeTable();
  return table;
}

std::string kernelCacheDir() {
  if (const char* d = std::getenv("SMTLAB_KERNEL_CACHE"); d && *d) return d;
  return defaultCacheDir("kernels").string();
}

namespace {

// KernelInfo::fromMarker: copies the recording `from` to `to` without the records up to and including its first
// pause. A recording without one is an error (the program and the table disagree).
void cutAtMarker(const std::string& from, const std::string& to, const std::string& name) {
  NativeTraceReader in(from);
  NativeTraceWriter out(to);
  std::vector<Instr> batch(4096);
  bool found = false;
  for (std::size_t n; (n = in.read(batch)) > 0;) {
    for (std::size_t i = 0; i < n; ++i) {
      if (found) {
        out.write(batch[i]);
      } else if (batch[i].op == OpClass::Pause) {
        found = true;
      }
    }
  }
  if (!found) {
    throw TraceError(fmt::format("kernel:{}: the recording holds no pause, where the program's loop begins", name));
  }
  if (out.written() == 0) throw TraceError(fmt::format("kernel:{}: the recording ends at its pause", name));
  out.close();
}

}  // namespace

std::string ensureKernelTrace(const KernelInfo& k) {
  const fs::path dir = kernelCacheDir();
  // The programs' sources lie under the resource root (the source tree, or the installed package).
  const fs::path source = resourcePath("workloads/kernels") / k.source;
  const fs::path trace = dir / (k.name + ".trace");
  // The headers beside the source count as the source too (workloads/user/*.h: the marker, the load file).
  bool headerNewer = false;
  std::error_code dirError;
  for (const auto& entry : fs::directory_iterator(source.parent_path(), dirError)) {
    if (entry.path().extension() == ".h" && newer(entry.path(), trace)) headerNewer = true;
  }
  // A trace recorded by an older tracer revision (tracer_revision.hpp; revision 1 held phantom records) is stale.
  if (fs::exists(trace) && !newer(source, trace) && !headerNewer &&
      ((carriesUops(trace) && tracerStampCurrent(trace.string(), kFixedEnvironmentTag)) || tracerUnavailableReason())) {
    return upgraded(trace);
  }
  if (auto why = tracerUnavailableReason()) throw TraceError(fmt::format("kernel:{}: cannot trace: {}", k.name, *why));
  if (!fs::exists(source)) throw TraceError(fmt::format("kernel:{}: source {} not found", k.name, source.string()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw TraceError(fmt::format("kernel:{}: cannot create cache directory {}: {}", k.name, dir.string(),
                                       ec.message()));
  // Private names while building, renamed at the end: concurrent users of the cache never see half a file. The
  // binary goes into a private folder under its own name: it runs as ./NAME with an empty environment
  // (fixedEnvironment), so its stack and therefore its trace do not depend on the cache's path, the process id or the
  // caller's environment.
  const std::string tag = fmt::format("{}.tmp{}", k.name, ::getpid());
  const fs::path binaryDir = dir / (tag + ".d");
  fs::create_directories(binaryDir, ec);
  if (ec) throw TraceError(fmt::format("kernel:{}: cannot create {}: {}", k.name, binaryDir.string(), ec.message()));
  const fs::path binary = binaryDir / k.name;
  const std::vector<std::string> cc = {"cc", "-O2", "-march=x86-64", "-mtune=generic", "-static", "-pthread",
                                       "-o", binary.string(), source.string(), "-lm"};
  if (runCommand(cc) != 0) {
    fs::remove_all(binaryDir, ec);
    throw TraceError(fmt::format("kernel:{}: compiling {} failed (is a C compiler with static libc installed?)",
                                 k.name, source.string()));
  }
  RecordOptions o;
  o.outPrefix = (dir / tag).string();
  o.command = {binary.string()};
  o.command.insert(o.command.end(), k.args.begin(), k.args.end());
  o.maxInstructions = kKernelMaxInstructions;
  o.quiet = true;
  o.fixedEnvironment = true;
  o.detachProgramIo = true;
  RecordResult r;
  try {
    r = recordProgram(o);
  } catch (...) {
    fs::remove_all(binaryDir, ec);
    throw;
  }
  fs::remove_all(binaryDir, ec);
  if (static_cast<std::size_t>(k.thread) >= r.threads.size()) {
    throw TraceError(fmt::format("kernel:{}: the program ran {} thread(s), no thread {}", k.name, r.threads.size(),
                                 k.thread));
  }
  auto dropRecording = [&] {
    for (const auto& t : r.threads) fs::remove(t.path, ec);
    fs::remove(r.manifest, ec);
  };
  const std::string recorded = r.threads[static_cast<std::size_t>(k.thread)].path;
  if (k.fromMarker) {
    try {
      cutAtMarker(recorded, trace.string(), k.name);
    } catch (...) {
      dropRecording();
      throw;
    }
  } else {
    fs::rename(recorded, trace);
  }
  writeTracerStamp(trace.string(), kFixedEnvironmentTag);
  dropRecording();
  return trace.string();
}

std::unique_ptr<TraceSource> openKernelTrace(const std::string& spec) {
  const std::string name = spec.substr(spec.find(':') + 1);
  const KernelInfo* k = nullptr;
  for (const auto& info : kernels()) {
    if (info.name == name) k = &info;
  }
  if (!k) {
    const std::size_t comma = name.find(',');
    if (comma != std::string::npos) {
      for (const auto& info : kernels()) {
        if (info.name == name.substr(0, comma)) {
          throw TraceError(fmt::format("'{}': kernel: traces take no options (kernel:{} is one recorded run; "
                                       "generators take key=value options: gen:NAME,key=value)",
                                       shortToken(spec), info.name));
        }
      }
    }
    std::string names;
    for (const auto& info : kernels()) names += (names.empty() ? "" : " ") + info.name;
    // Quoted short: Python's Source() shows the message uncut, and a fuzzed name held control bytes.
    throw TraceError(
        fmt::format("'{}': unknown kernel '{}' (kernels: {})", shortToken(spec), shortToken(name), names));
  }
  const fs::path cached = fs::path(kernelCacheDir()) / (k->name + ".trace");
  const bool canTrace = !tracerUnavailableReason();
  if (canTrace) return std::make_unique<NativeTraceReader>(ensureKernelTrace(*k));
  if (fs::exists(cached)) return std::make_unique<NativeTraceReader>(upgraded(cached));
  static bool noted = false;
  if (!noted && !std::getenv("SMTLAB_QUIET_FALLBACK")) {
    std::fprintf(stderr, "smtlab: kernel:%s: tracer unavailable (%s); using the look-alike %s\n", k->name.c_str(),
                 tracerUnavailableReason()->c_str(), k->fallback.c_str());
    noted = true;
  }
  return makeGenerator(k->fallback);
}

}  // namespace smtlab
