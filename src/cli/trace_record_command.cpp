// smtlab trace record: runs a program under QEMU with the tracer plugin and writes its native traces (recorder.hpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "commands.hpp"
#include "count_arg.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab::cli {
namespace {

constexpr std::string_view kRecordUsage = R"(usage: smtlab trace record [OPTIONS] -- PROGRAM ARGS...
Runs an x86-64 Linux program under qemu-x86_64 with smtlab's tracer plugin and writes PREFIX.trace (thread 0),
PREFIX.tK.trace (thread K) and PREFIX.json (the manifest); docs/tracing.md.
  -o, --output PREFIX         output prefix (default: trace)
  -n, --max-instructions N    stop when the main thread has executed N instructions after --skip; each thread records
                              at most N (default {}; 0 = no cap; suffixes k, M, G). Reaching it is not an error:
                              the trace is complete up to the cap and the manifest says "end": "max_instructions"
  --skip N                    leave out each thread's first N instructions
  --collapse-rep              one record per rep-prefixed string instruction instead of one per iteration
  --cpu MODEL                 QEMU CPU model (default: max)
  --keep-raw                  keep the plugin's raw files (PREFIX.raw.*) after a successful recording
  --fixed-env                 run a copy of the program as ./NAME from a private folder of fixed path length under
                              /tmp with an empty environment, so that its addresses and start-up code do not depend
                              on the caller's environment or the program's folder: the same binary under the same
                              name and arguments then gives the same trace anywhere
  -q, --quiet                 no summary
Recording stops with an error, removing every partial file, when the output's file system has less than {} MB
free, and on SIGINT, SIGTERM or SIGHUP (exit status 128 + the signal). A program killed by a signal (SIGSEGV,
SIGABRT, ...) gives a valid trace of what it executed, a warning and status 0; a program that forks is traced without
its child processes (a warning names them).
)";

void printSummary(const RecordResult& r) {
  const double n = static_cast<double>(r.instructions());
  std::uint64_t raw = 0, out = 0;
  for (const auto& t : r.threads) {
    raw += t.rawBytes;
    out += t.traceBytes;
    std::fprintf(stderr, "wrote %llu records to %s\n", static_cast<unsigned long long>(t.instructions), t.path.c_str());
  }
  std::fprintf(stderr,
               "traced %.0f instructions of %zu thread(s) in %.2f s under QEMU (%.1f M instructions/s), decoded in "
               "%.2f s; raw stream %.2f bytes/instruction, native trace %.3f bytes/instruction; manifest %s\n",
               n, r.threads.size(), r.traceSeconds, n / std::max(r.traceSeconds, 1e-9) / 1e6, r.decodeSeconds,
               static_cast<double>(raw) / std::max(n, 1.0), static_cast<double>(out) / std::max(n, 1.0),
               r.manifest.c_str());
}

}  // namespace

int traceRecordCommand(const std::vector<std::string>& args) {
  RecordOptions ro;
  std::set<std::string> seen;
  std::size_t i = 1;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("trace record: option {} needs a value", a));
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      fmt::print(fmt::runtime(kRecordUsage), kDefaultRecordMaxInstructions, kDefaultRecordMinFreeBytes >> 20);
      return 0;
    }
    // An option given twice is refused, as `smtlab run` does: letting the last one win would hide a slip.
    const std::string canonical = a == "--output" ? "-o" : a == "--max-instructions" ? "-n" : a == "--quiet" ? "-q" : a;
    if (!seen.insert(canonical).second) {
      throw UsageError(fmt::format("trace record: option '{}' given more than once", a.substr(0, 80)));
    }
    if (a == "-o" || a == "--output") ro.outPrefix = value();
    // The shared count parser (count_arg.hpp): a parser of its own here refused valid counts of 13 digits or more
    // without saying why, and let "999999999999G" wrap around 2^64 to a small cap.
    else if (a == "--max-instructions" || a == "-n") ro.maxInstructions = parseCount(value(), "--max-instructions/-n");
    else if (a == "--skip") ro.skip = parseCount(value(), "--skip");
    else if (a == "--collapse-rep") ro.collapseRep = true;
    else if (a == "--keep-raw") ro.keepRaw = true;
    else if (a == "--fixed-env") ro.fixedEnvironment = true;
    else if (a == "--cpu") ro.cpu = value();
    else if (a == "-q" || a == "--quiet") ro.quiet = true;
    else throw UsageError(fmt::format("trace record: unknown option '{}' (the program goes after --; see --help)",
                                      a.substr(0, 80)));
  }
  if (i + 1 >= args.size()) throw UsageError("trace record: give the program after --: trace record -- PROGRAM ARGS");
  ro.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (ro.outPrefix.size() > 6 && ro.outPrefix.compare(ro.outPrefix.size() - 6, 6, ".trace") == 0) {
    ro.outPrefix.resize(ro.outPrefix.size() - 6);
  }
  // -o is the start of file names: a folder ("dd/") made hidden files dd/.trace and dd/.json, and a name too long
  // for the file system failed deep in the recorder as an "internal error".
  const std::filesystem::path prefix(ro.outPrefix);
  if (ro.outPrefix.empty() || !prefix.has_filename() || prefix.filename() == "." || prefix.filename() == "..") {
    throw UsageError(fmt::format("trace record: -o {} names a folder; give the start of the files' names, such as "
                                 "-o {}trace (writes trace.trace, trace.json)",
                                 shortQuote(ro.outPrefix), ro.outPrefix.empty() || ro.outPrefix.back() == '/'
                                                               ? ro.outPrefix : ro.outPrefix + "/"));
  }
  // The longest name written: PREFIX.raw.tNN.ring (the plugin's per-thread files).
  constexpr std::size_t kLongestSuffix = sizeof(".raw.t99.ring") - 1;
  if (prefix.filename().string().size() + kLongestSuffix > 255) {
    throw UsageError(fmt::format("trace record: -o {}: its file name part has {} characters; with the recorder's "
                                 "suffixes (up to '{}') the names would pass the file system's 255",
                                 shortQuote(ro.outPrefix), prefix.filename().string().size(), ".raw.t99.ring"));
  }
  RecordResult r;
  try {
    r = recordProgram(ro);
  } catch (const RecordInterrupted& e) {
    std::fprintf(stderr, "smtlab trace: %s\n", e.what());
    return 128 + e.signal();  // as a shell reports a command killed by that signal
  }
  if (!ro.quiet) printSummary(r);
  // The outcome notes are printed even with -q: they say what the trace holds.
  switch (r.end) {
    case RecordEnd::Exit:
      if (!ro.quiet) std::fprintf(stderr, "the program exited with status %d\n", r.exitStatus);
      break;
    case RecordEnd::MaxInstructions:
      std::fprintf(stderr,
                   "note: stopped the program at the cap of %llu instructions (--max-instructions); the trace is "
                   "complete up to the cap\n",
                   static_cast<unsigned long long>(ro.maxInstructions));
      break;
    case RecordEnd::Signal:
      std::fprintf(stderr,
                   "warning: the program was killed by %s (signal %d); the trace holds what it executed before the "
                   "block in which it was killed (manifest: \"end\": \"signal\")\n",
                   signalName(r.signal).c_str(), r.signal);
      break;
  }
  if (r.untracedChildren) {
    std::fprintf(stderr,
                 "warning: the program forked %llu child process(es); they ran untraced, the trace holds the parent "
                 "process only (manifest: \"untraced_child_processes\")\n",
                 static_cast<unsigned long long>(r.untracedChildren));
  }
  return 0;
}

}  // namespace smtlab::cli
