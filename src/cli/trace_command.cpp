// smtlab trace gen|head|convert|info: make, look at and convert traces.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "smtlab/common/error.hpp"
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
  smtlab trace head FILE|SPEC [-n N]      print the first N records (default 10) in the text format
  smtlab trace info FILE|SPEC [-n N]      op mix, branches, footprint, dependency distances
  smtlab trace record [-o PREFIX] [--max-instructions N] [--skip N] [--collapse-rep] [--cpu MODEL] [--keep-raw]
                      -- PROGRAM ARGS...  run an x86-64 program under QEMU and write PREFIX.trace (thread 0),
                                          PREFIX.tK.trace (thread K) and PREFIX.json (docs/tracing.md)
  smtlab trace kernels                    list the kernel:NAME traces and whether they are traced or look-alikes
SPEC is gen:NAME[,key=value...] (generators: {}) or kernel:NAME; docs/traces.md defines them and the formats.
The output format defaults to text for names ending in .txt, else native; compression defaults to zstd.
)";

struct Options {
  std::vector<std::string> positional;
  std::optional<std::string> output, format, compression;
  std::optional<std::uint64_t> count;
};

std::uint64_t parseCount(const std::string& s) {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) n = n * 10 + static_cast<std::uint64_t>(s[i] - '0');
  std::uint64_t mult = 1;
  if (i + 1 == s.size()) {
    switch (s[i]) {
      case 'k': case 'K': mult = 1000; ++i; break;
      case 'm': case 'M': mult = 1000000; ++i; break;
      case 'g': case 'G': mult = 1000000000; ++i; break;
      default: break;
    }
  }
  if (s.empty() || i != s.size() || s.size() > 18) throw UsageError(fmt::format("trace: bad count '{}' for -n", s));
  return n * mult;
}

Options parseOptions(const std::vector<std::string>& args, std::size_t from) {
  Options o;
  for (std::size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("trace: option {} needs a value", a));
      return args[++i];
    };
    if (a == "-o" || a == "--output") o.output = value();
    else if (a == "--format") o.format = value();
    else if (a == "--compression") o.compression = value();
    else if (a == "-n" || a == "--count") o.count = parseCount(value());
    else if (a.size() > 1 && a[0] == '-') throw UsageError(fmt::format("trace: unknown option '{}'", a));
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

// Calls f(record) for up to `limit` records (0 = all) of a source.
template <class F>
std::uint64_t forEach(TraceSource& src, std::uint64_t limit, F&& f) {
  std::vector<Instr> batch(4096);
  std::uint64_t total = 0;
  Progress progress;
  while (limit == 0 || total < limit) {
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

void requireEnd(TraceSource& src, std::uint64_t limit) {
  if (limit == 0 && !src.length() && src.describe().rfind("gen:", 0) == 0) {
    throw UsageError(fmt::format("trace: '{}' is endless (count=0); give -n N", src.describe()));
  }
}

// An input that gave no record is an error, never an empty success (a pipe read twice used to look like this).
void requireRecords(const TraceSource& src, std::uint64_t n) {
  if (n == 0) throw TraceError(fmt::format("'{}' holds no instructions", src.describe()));
}

int writeTrace(TraceSource& src, const std::string& out, const Options& o) {
  const std::uint64_t limit = o.count.value_or(0);
  requireEnd(src, limit);
  const bool endsTxt = out.size() >= 4 && out.compare(out.size() - 4, 4, ".txt") == 0;
  const std::string format = o.format.value_or(endsTxt ? "text" : "native");
  std::uint64_t n = 0;
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
  return 0;
}

int head(const Options& o) {
  expectPositional(o, 1, "head");
  auto src = openTrace(o.positional[0]);
  std::string out;
  const std::uint64_t n = forEach(*src, o.count.value_or(10), [&](const Instr& in) {
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

  const std::uint64_t n = forEach(*src, limit, [&](const Instr& in) {
    ++ops[static_cast<std::size_t>(in.op)];
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

int record(const std::vector<std::string>& args) {
  RecordOptions ro;
  std::size_t i = 1;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("trace record: option {} needs a value", a));
      return args[++i];
    };
    if (a == "-o" || a == "--output") ro.outPrefix = value();
    else if (a == "--max-instructions" || a == "-n") ro.maxInstructions = parseCount(value());
    else if (a == "--skip") ro.skip = parseCount(value());
    else if (a == "--collapse-rep") ro.collapseRep = true;
    else if (a == "--keep-raw") ro.keepRaw = true;
    else if (a == "--cpu") ro.cpu = value();
    else if (a == "-q" || a == "--quiet") ro.quiet = true;
    else throw UsageError(fmt::format("trace record: unknown option '{}' (the program goes after --)", a));
  }
  if (i + 1 >= args.size()) throw UsageError("trace record: give the program after --: trace record -- PROGRAM ARGS");
  ro.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (ro.outPrefix.size() > 6 && ro.outPrefix.compare(ro.outPrefix.size() - 6, 6, ".trace") == 0) {
    ro.outPrefix.resize(ro.outPrefix.size() - 6);
  }
  const RecordResult r = recordProgram(ro);
  if (!ro.quiet) {
    const double n = static_cast<double>(r.instructions());
    std::uint64_t raw = 0, out = 0;
    for (const auto& t : r.threads) {
      raw += t.rawBytes;
      out += t.traceBytes;
      std::fprintf(stderr, "wrote %llu records to %s\n", static_cast<unsigned long long>(t.instructions), t.path.c_str());
    }
    std::fprintf(stderr,
                 "traced %.0f instructions of %zu thread(s) in %.2f s under QEMU (%.1f M instructions/s), decoded in "
                 "%.2f s; raw stream %.2f bytes/instruction, native trace %.3f bytes/instruction; program exit "
                 "status %d; manifest %s\n",
                 n, r.threads.size(), r.traceSeconds, n / std::max(r.traceSeconds, 1e-9) / 1e6, r.decodeSeconds,
                 static_cast<double>(raw) / std::max(n, 1.0), static_cast<double>(out) / std::max(n, 1.0),
                 r.exitStatus, r.manifest.c_str());
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
  if (sub == "record") return record(args);
  if (sub == "kernels") return listKernels();
  const Options o = parseOptions(args, 1);
  if (sub == "gen") {
    expectPositional(o, 1, "gen");
    if (!o.output) throw UsageError("trace gen: give the output file with -o FILE");
    if (o.positional[0].rfind("gen:", 0) != 0) {
      throw UsageError(fmt::format("trace gen: '{}' is not a generator spec (gen:NAME,...)", o.positional[0]));
    }
    auto src = openTrace(o.positional[0]);
    return writeTrace(*src, *o.output, o);
  }
  if (sub == "convert") {
    expectPositional(o, 2, "convert");
    auto src = openTrace(o.positional[0]);
    return writeTrace(*src, o.positional[1], o);
  }
  if (sub == "head") return head(o);
  if (sub == "info") return info(o);
  throw UsageError(fmt::format("trace: unknown subcommand '{}' (gen, convert, head, info, record, kernels)", sub));
}

}  // namespace smtlab::cli
