// smtlab trace gen|head|convert|info: make, look at and convert traces.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "count_arg.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/distinct_counter.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab::cli {
namespace {

constexpr std::string_view kUsage = R"(usage:
  smtlab trace gen SPEC -o FILE [--format native|text] [--compression zstd|xz|none] [-n N]
  smtlab trace convert IN OUT [--format native|text] [--compression zstd|xz|none] [-n N]
  smtlab trace head FILE|SPEC [-n N]      print the first N records (default 10; 0 = all) in the text format
  smtlab trace info FILE|SPEC [-n N]      op mix, branches, footprint, dependency distances
  smtlab trace record [-o PREFIX] [--max-instructions N] [--skip N] [--collapse-rep] [--cpu MODEL] [--keep-raw]
                      [--fixed-env] -- PROGRAM ARGS...  run an x86-64 program under QEMU and write PREFIX.trace (thread 0),
                                          PREFIX.tK.trace (thread K) and PREFIX.json (docs/tracing.md)
  smtlab trace kernels                    list the kernel:NAME traces and whether they are traced or look-alikes
SPEC is gen:NAME[,key=value...] (generators: {}) or kernel:NAME; docs/traces.md defines them and the formats.
The output format defaults to text for names ending in .txt, else native; compression defaults to zstd.
N is a count such as 5000, 10k, 2M or 1G (decimal); -n 0 means no limit, refused for an endless generator.
Outputs are written under a temporary name and renamed when complete; an output that is the input is refused.
)";

struct Options {
  std::vector<std::string> positional;
  std::optional<std::string> output, format, compression;
  std::optional<std::uint64_t> count;
};

Options parseOptions(const std::vector<std::string>& args, std::size_t from) {
  Options o;
  for (std::size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("trace: option {} needs a value", a));
      return args[++i];
    };
    // A repeated option is refused, as `smtlab run` does: silently keeping the last (-o a -o b writing only b) hides
    // a mistake in a script.
    auto once = [&](auto& slot) -> auto& {
      if (slot) throw UsageError(fmt::format("trace: option {} given more than once", shortQuote(a)));
      return slot;
    };
    if (a == "-o" || a == "--output") once(o.output) = value();
    else if (a == "--format") once(o.format) = value();
    else if (a == "--compression") once(o.compression) = value();
    else if (a == "-n" || a == "--count") once(o.count) = parseCount(value(), a);
    else if (a.size() > 1 && a[0] == '-') throw UsageError(fmt::format("trace: unknown option {}", shortQuote(a)));
    else o.positional.push_back(a);
  }
  return o;
}

void expectPositional(const Options& o, std::size_t n, std::string_view what) {
  if (o.positional.size() != n) {
    throw UsageError(fmt::format("trace {}: expected {} argument(s), got {}", what, n, o.positional.size()));
  }
}

// Prints "N M records" on stderr every 10 M records when stderr is a terminal.
class Progress {
 public:
  Progress() : enabled_(::isatty(2) != 0) {}
  ~Progress() {
    if (shown_) std::fputs("\r\033[K", stderr);
  }
  void at(std::uint64_t records) {
    if (!enabled_ || records < next_) return;
    next_ = (records / kStep + 1) * kStep;
    std::fprintf(stderr, "\r%llu M records...", static_cast<unsigned long long>(records / 1000000));
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  static constexpr std::uint64_t kStep = 10000000;
  bool enabled_;
  bool shown_ = false;
  std::uint64_t next_ = kStep;
};

// The signal that interrupted a trace output, or 0. Set by the handler below, read between batches.
volatile std::sig_atomic_t gInterrupt = 0;

extern "C" void noteInterrupt(int signal) { gInterrupt = signal; }

// While a trace is written, SIGINT, SIGTERM and SIGHUP stop it between two batches, so that the writer is destroyed
// normally and removes its temporary file (a default signal death would leave `.NAME.tmp-XXXXXX` behind). The
// previous handlers come back afterwards.
class InterruptGuard {
 public:
  InterruptGuard() {
    gInterrupt = 0;
    struct sigaction action {};
    action.sa_handler = noteInterrupt;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &previous_[i]);
  }
  ~InterruptGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

// Calls f(record) for up to `limit` records (0 = all) of a source; throws Error when a signal was noted by an
// InterruptGuard.
template <class F>
std::uint64_t forEach(TraceSource& src, std::uint64_t limit, F&& f) {
  std::vector<Instr> batch(4096);
  std::uint64_t total = 0;
  Progress progress;
  while (limit == 0 || total < limit) {
    if (gInterrupt != 0) {
      throw Error(fmt::format("interrupted by signal {} ({}) after {} records; no output was written",
                              static_cast<int>(gInterrupt), strsignal(gInterrupt), total));
    }
    std::size_t want = batch.size();
    if (limit != 0) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, limit - total));
    const std::size_t got = src.read(std::span<Instr>(batch.data(), want));
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) f(batch[i]);
    total += got;
    progress.at(total);
  }
  return total;
}

// `trace gen SPEC -n N`: a generator whose spec gives no count= makes N records (its default count would end it
// first, at 1 M for gen:mix); a count= in the spec is kept, and writeTrace says when it ended the output before N.
std::string withCount(const std::string& spec, const std::optional<std::uint64_t>& count) {
  if (!count || *count == 0) return spec;
  for (std::size_t at = spec.find(','); at != std::string::npos; at = spec.find(',', at + 1)) {
    if (spec.compare(at + 1, 6, "count=") == 0) return spec;
  }
  return fmt::format("{},count={}", spec, *count);
}

void requireEnd(TraceSource& src, std::uint64_t limit) {
  if (limit == 0 && !src.length() && src.describe().rfind("gen:", 0) == 0) {
    throw UsageError(fmt::format("trace: {} is endless (count=0); give -n N", shortQuote(src.describe())));
  }
}

// An input that gave no record is an error, never an empty success (a pipe read a second time gives no record).
void requireRecords(const TraceSource& src, std::uint64_t n) {
  if (n == 0) throw TraceError(fmt::format("'{}' holds no instructions", src.describe()));
}

int writeTrace(TraceSource& src, const std::string& out, const Options& o) {
  const std::uint64_t limit = o.count.value_or(0);
  requireEnd(src, limit);
  const bool endsTxt = out.size() >= 4 && out.compare(out.size() - 4, 4, ".txt") == 0;
  const std::string format = o.format.value_or(endsTxt ? "text" : "native");
  std::uint64_t n = 0;
  const InterruptGuard interruptible;
  if (format == "text") {
    if (o.compression && *o.compression != "none") throw UsageError("trace: the text format is not compressed");
    TextTraceWriter writer(out);
    n = forEach(src, limit, [&](const Instr& in) { writer.write(in); });
    writer.close();
  } else if (format == "native") {
    const Compression c = parseCompression(o.compression.value_or("zstd"));
    NativeTraceWriter writer(out, c);
    n = forEach(src, limit, [&](const Instr& in) { writer.write(in); });
    writer.close();
  } else {
    throw UsageError(fmt::format("trace: unknown format '{}' (native, text)", format));
  }
  std::fprintf(stderr, "wrote %llu records to %s (%s)\n", static_cast<unsigned long long>(n), out.c_str(),
               format.c_str());
  if (limit != 0 && n < limit) {
    std::fprintf(stderr, "note: %s has only %llu records, fewer than -n %llu\n",
                 shortQuote(src.describe()).c_str(), static_cast<unsigned long long>(n),
                 static_cast<unsigned long long>(limit));
  }
  return 0;
}

int head(const Options& o) {
  expectPositional(o, 1, "head");
  auto src = openTrace(o.positional[0]);
  // -n 0 means "no limit", as in every other command: the whole of a finite trace, and a refusal for an endless
  // generator (which would print for ever).
  const std::uint64_t limit = o.count.value_or(10);
  requireEnd(*src, limit);
  std::string out;
  const std::uint64_t n = forEach(*src, limit, [&](const Instr& in) {
    out += formatTextLine(in);
    out += '\n';
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  });
  std::fwrite(out.data(), 1, out.size(), stdout);
  requireRecords(*src, n);
  return 0;
}

std::string_view approx(const DistinctCounter& c) { return c.exact() ? "" : "~"; }

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

int info(const Options& o) {
  expectPositional(o, 1, "info");
  auto src = openTrace(o.positional[0]);
  const std::uint64_t limit = o.count.value_or(0);
  requireEnd(*src, limit);

  std::array<std::uint64_t, kOpClassCount> ops{};
  std::array<std::uint64_t, kBranchKindCount> kinds{};
  std::uint64_t branches = 0, taken = 0, condBranches = 0, condTaken = 0, loads = 0, stores = 0;
  // Bounded memory whatever the trace: exact counts up to a limit, then estimates (said in the output).
  DistinctCounter pcs, lines, pages;
  // Dependency distance: instructions from the last writer of a source register to its reader.
  constexpr int kBins = 12;  // 1, 2, 3-4, 5-8, ..., 513-1024, >1024
  std::array<std::uint64_t, kBins + 1> dist{};  // last bin: no producer in the trace
  std::array<std::uint64_t, kArchRegs> lastWriter{};
  std::array<bool, kArchRegs> written{};
  std::uint64_t index = 0;
  // The decoder's uops, over the records that carry them (0 = not recorded).
  std::uint64_t uopRecords = 0, uopSum = 0, microcoded = 0;

  const std::uint64_t n = forEach(*src, limit, [&](const Instr& in) {
    ++ops[static_cast<std::size_t>(in.op)];
    if (in.uops != 0) {
      ++uopRecords;
      uopSum += in.uops;
      microcoded += in.microcoded;
    }
    if (in.isBranch()) {
      ++branches;
      ++kinds[static_cast<std::size_t>(in.branch)];
      taken += in.taken;
      if (in.branch == BranchKind::Conditional) {
        ++condBranches;
        condTaken += in.taken;
      }
    }
    pcs.add(in.pc);
    auto touch = [&](const MemRef& m) {
      if (!m.valid()) return;
      for (Addr a = m.addr >> 6; a <= (m.addr + m.size - 1) >> 6; ++a) lines.add(a);
      for (Addr a = m.addr >> 12; a <= (m.addr + m.size - 1) >> 12; ++a) pages.add(a);
    };
    for (const MemRef& m : in.loads) {
      touch(m);
      loads += m.valid();
    }
    for (const MemRef& m : in.stores) {
      touch(m);
      stores += m.valid();
    }
    for (RegId r : in.src) {
      if (r == kNoReg || r >= kArchRegs) continue;
      if (!written[r]) {
        ++dist[kBins];
        continue;
      }
      const std::uint64_t d = index - lastWriter[r];
      int bin = 0;
      while (bin < kBins - 1 && d > (std::uint64_t{1} << bin)) ++bin;
      ++dist[static_cast<std::size_t>(bin)];
    }
    for (RegId r : in.dst) {
      if (r == kNoReg || r >= kArchRegs) continue;
      lastWriter[r] = index;
      written[r] = true;
    }
    ++index;
  });

  requireRecords(*src, n);
  fmt::print("trace:            {}\n", src->describe());
  if (isChampSimTraceName(src->describe())) fmt::print("op classes:       assumed: {}\n", kChampSimOpClassRule);
  fmt::print("instructions:     {}\n", n);
  fmt::print("op mix:\n");
  for (int i = 0; i < kOpClassCount; ++i) {
    if (ops[i]) fmt::print("  {:<6} {:>14}  {:>6}\n", opClassName(static_cast<OpClass>(i)), ops[i], percent(ops[i], n));
  }
  if (uopRecords == 0) {
    fmt::print("uops:             not recorded\n");
  } else {
    const double mean = static_cast<double>(uopSum) / static_cast<double>(uopRecords);
    const std::string scope = uopRecords == n ? std::string()
                                              : fmt::format(" (recorded for {} of the instructions)", uopRecords);
    fmt::print("uops:             {:.3f} per instruction, {} microcoded{}\n", mean, percent(microcoded, uopRecords),
               scope);
  }
  fmt::print("branches:         {} ({} of instructions), taken {}\n", branches, percent(branches, n),
             percent(taken, branches));
  fmt::print("  conditional:    {}, taken {}\n", condBranches, percent(condTaken, condBranches));
  for (int i = 1; i < kBranchKindCount; ++i) {
    if (kinds[i]) fmt::print("  {:<15} {:>14}\n", branchKindName(static_cast<BranchKind>(i)), kinds[i]);
  }
  fmt::print("distinct pcs:     {}{}\n", approx(pcs), pcs.count());
  fmt::print("memory accesses:  {} loads, {} stores\n", loads, stores);
  fmt::print("footprint:        {}{} lines of 64 B ({} KiB), {}{} pages of 4 KiB ({} KiB)\n", approx(lines),
             lines.count(), lines.count() * 64 / 1024, approx(pages), pages.count(), pages.count() * 4);
  if (!pcs.exact() || !lines.exact() || !pages.exact()) {
    fmt::print("  (~: an estimate, as more than {} distinct values were seen; HyperLogLog, standard error {:.1f}%)\n",
               pcs.exactLimit(), 100 * DistinctCounter::kStandardError);
  }
  std::uint64_t sources = 0;
  for (std::uint64_t c : dist) sources += c;
  fmt::print("dependency distance (instructions from the producer, per source register; {} sources):\n", sources);
  for (int b = 0; b <= kBins; ++b) {
    std::string label;
    if (b == kBins) label = "no producer";
    else if (b == kBins - 1) label = fmt::format(">{}", std::uint64_t{1} << (b - 1));
    else if (b <= 1) label = fmt::format("{}", b + 1);
    else label = fmt::format("{}-{}", (std::uint64_t{1} << (b - 1)) + 1, std::uint64_t{1} << b);
    fmt::print("  {:<12} {:>14}  {:>6}\n", label, dist[b], percent(dist[b], sources));
  }
  return 0;
}

int listKernels() {
  const auto why = tracerUnavailableReason();
  fmt::print("kernel traces (cache {}; {}):\n", kernelCacheDir(),
             why ? "tracer unavailable: " + *why + "; look-alikes are used" : std::string("traced on first use"));
  for (const KernelInfo& k : kernels()) {
    fmt::print("  kernel:{:<18} {}\n", k.name, k.what);
  }
  return 0;
}

}  // namespace

int traceCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::vector<std::string> names;
    for (auto n : generatorNames()) names.emplace_back(n);
    fmt::print(fmt::runtime(kUsage), fmt::join(names, ", "));
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args[0];
  if (sub == "record") return traceRecordCommand(args);
  // `smtlab trace gen --help` (or any subcommand's): the usage, which covers every subcommand but record's own.
  if (std::any_of(args.begin() + 1, args.end(), [](const std::string& a) { return a == "-h" || a == "--help"; })) {
    return traceCommand({"--help"});
  }
  if (sub == "kernels") {
    if (args.size() > 1) throw UsageError(fmt::format("trace kernels: takes no arguments, got {}", shortQuote(args[1])));
    return listKernels();
  }
  const Options o = parseOptions(args, 1);
  if (sub == "gen") {
    expectPositional(o, 1, "gen");
    if (!o.output) throw UsageError("trace gen: give the output file with -o FILE");
    checkOutputPath(*o.output, "trace");
    if (o.positional[0].rfind("gen:", 0) != 0) {
      throw UsageError(
          fmt::format("trace gen: {} is not a generator spec (gen:NAME,...)", shortQuote(o.positional[0])));
    }
    auto src = openTrace(withCount(o.positional[0], o.count));
    return writeTrace(*src, *o.output, o);
  }
  if (sub == "convert") {
    expectPositional(o, 2, "convert");
    // Before the input is opened: writing the input onto itself would destroy it (even atomically it would replace
    // the user's original), and a bad destination is reported before a long conversion rather than after it.
    refuseOverwritingInput(o.positional[0], o.positional[1]);
    checkOutputPath(o.positional[1], "trace");
    auto src = openTrace(o.positional[0]);
    return writeTrace(*src, o.positional[1], o);
  }
  if (sub == "head") return head(o);
  if (sub == "info") return info(o);
  throw UsageError(
      fmt::format("trace: unknown subcommand {} (gen, convert, head, info, record, kernels)", shortQuote(sub)));
}

}  // namespace smtlab::cli
