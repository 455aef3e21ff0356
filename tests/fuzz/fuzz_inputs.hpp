// What each fuzz target does with one input, shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp) and the gtest
// that replays the seed corpora and the kept crash inputs (tests/unit/hardening). The contract under test: an input
// is either accepted or rejected with an smtlab::Error; anything else (another exception, a sanitizer report, a
// failed round trip, which throws FuzzOracleFailure) is a finding.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if __has_include("smtlab/trace/champsim_format.hpp")
#include "smtlab/trace/champsim_format.hpp"
#define SMTLAB_FUZZ_HAVE_CHAMPSIM 1
#endif
#if __has_include("smtlab/tracer/raw_trace.hpp")
#include "smtlab/tracer/raw_trace.hpp"
#define SMTLAB_FUZZ_HAVE_TRACER 1
#endif
#if __has_include("smtlab/tracer/kernels.hpp")
#include "smtlab/tracer/kernels.hpp"
#define SMTLAB_FUZZ_HAVE_KERNELS 1
#endif
#if __has_include("smtlab/tracer/exec_source.hpp")
#include "smtlab/tracer/exec_source.hpp"
#define SMTLAB_FUZZ_HAVE_EXEC 1
#endif
#if __has_include("smtlab/tracer/kpath_spec.hpp")
#include "smtlab/tracer/kpath_spec.hpp"
#include "smtlab/tracer/kpath.hpp"
#define SMTLAB_FUZZ_HAVE_KPATH 1
#endif
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/text_format.hpp"

namespace smtlab::fuzz {

using Bytes = std::span<const std::uint8_t>;

// A reader accepted an input but broke a documented property (e.g. write-then-read is not the identity). Not an
// smtlab::Error on purpose: it must never pass as a clean rejection.
class FuzzOracleFailure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Bounds that keep one input fast: a few hundred bytes of zstd can expand to millions of records.
inline constexpr std::size_t kMaxRecords = 1 << 16;
inline constexpr std::size_t kBatch = 256;

// A scratch file per process (libFuzzer's -fork and -jobs run separate processes), removed at exit. The readers and
// the config loader take paths, so the input is written here first. /dev/shm keeps it off the disk when present.
class ScratchFile {
 public:
  explicit ScratchFile(std::string_view suffix) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    path_ = (dir / ("smtlab-fuzz-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) +
                    std::string(suffix)))
                .string();
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(Bytes data) const {
    std::ofstream f(path_, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    f.close();
    if (!f) throw std::runtime_error("fuzz harness: cannot write scratch file " + path_);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string path_;
};

// Reads a whole source (at most kMaxRecords) into a vector.
inline std::vector<Instr> readAll(TraceSource& source) {
  std::vector<Instr> all;
  Instr batch[kBatch];
  while (all.size() < kMaxRecords) {
    const std::size_t n = source.read(std::span<Instr>(batch, kBatch));
    if (n == 0) break;
    all.insert(all.end(), batch, batch + n);
  }
  return all;
}

inline std::string formatAll(const std::vector<Instr>& records) {
  std::string text;
  for (const Instr& r : records) text += formatTextLine(r) + "\n";
  return text;
}

// Text trace: parse; if accepted, formatting and parsing again must reach a fixed point (the writer's only
// normalisation is closing holes in register lists, so format(parse(format(parse(x)))) == format(parse(x))).
inline void feedTextTrace(Bytes data) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  TextTraceReader reader(in, "fuzz.txt");
  const std::vector<Instr> first = readAll(reader);
  const std::string text1 = formatAll(first);
  std::istringstream again(text1);
  TextTraceReader reader2(again, "fuzz-rewritten.txt");
  const std::vector<Instr> second = readAll(reader2);
  if (second.size() != first.size() || formatAll(second) != text1) {
    throw FuzzOracleFailure("text trace: format(parse(x)) does not parse back to the same records");
  }
}

// Native trace: read (through the file, as the program does); if accepted, rewind must give the same first batch,
// and writing the records uncompressed then reading them back must give the same records.
inline void feedNativeTrace(Bytes data) {
  static const ScratchFile input(".smt");
  static const ScratchFile output(".smt");
  NativeTraceReader reader(input.write(data));
  const std::vector<Instr> records = readAll(reader);
  if (records.size() >= kMaxRecords) return;  // a decompression bomb: accepted as far as we looked
  reader.rewind();
  Instr batch[kBatch];
  const std::size_t n = reader.read(std::span<Instr>(batch, kBatch));
  if (n != std::min(records.size(), kBatch) || !std::equal(batch, batch + n, records.begin())) {
    throw FuzzOracleFailure("native trace: rewind() does not give the same records again");
  }
  {
    NativeTraceWriter writer(output.path(), Compression::None);
    for (const Instr& r : records) writer.write(r);
    writer.close();
  }
  NativeTraceReader back(output.path());
  if (readAll(back) != records) throw FuzzOracleFailure("native trace: write-then-read is not the identity");
}

#ifdef SMTLAB_FUZZ_HAVE_CHAMPSIM
// ChampSim trace: any input is either read or rejected with a TraceError.
inline void feedChampSimTrace(Bytes data) {
  static const ScratchFile input(".champsimtrace");
  ChampSimTraceReader reader(input.write(data));
  const std::vector<Instr> records = readAll(reader);
  if (records.size() >= kMaxRecords) return;
  reader.rewind();
  Instr batch[kBatch];
  const std::size_t n = reader.read(std::span<Instr>(batch, kBatch));
  if (n != std::min(records.size(), kBatch) || !std::equal(batch, batch + n, records.begin())) {
    throw FuzzOracleFailure("champsim trace: rewind() does not give the same records again");
  }
}
#endif

#ifdef SMTLAB_FUZZ_HAVE_TRACER
// Tracer raw stream: the input holds both files of a traced thread, the block table (PREFIX.blocks) and the raw
// stream (PREFIX.tK.raw): a 2-byte little-endian length L, L bytes of block table, then the stream.
inline void feedTracerRaw(Bytes data) {
  static const ScratchFile blocks(".blocks");
  static const ScratchFile raw(".t0.raw");
  if (data.size() < 2) return;
  const std::size_t len = std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), data.size() - 2);
  auto table = std::make_shared<const RawBlockTable>(blocks.write(data.subspan(2, len)));
  RawTraceSource source(table, raw.write(data.subspan(2 + len)));
  const std::vector<Instr> records = readAll(source);
  if (records.size() >= kMaxRecords) return;
  source.rewind();
  if (readAll(source) != records) throw FuzzOracleFailure("tracer raw stream: rewind() gives different records");
}
#endif

// Config: an input starting with "!" is a list of `--set` overrides (one key=value per line) applied to the
// defaults, then validated; any other input is a TOML file for loadConfig. If accepted, the TOML the config prints
// must load back to the same config (docs/config.md).
inline void feedConfig(Bytes data) {
  static const ScratchFile input(".toml");
  static const ScratchFile output(".toml");
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  Config config;
  if (!text.empty() && text.front() == '!') {
    std::string_view rest = text.substr(1);
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (!line.empty()) applyOverride(config, line, "--set");
    }
    validateConfig(config);
  } else {
    config = loadConfig(input.write(data));
  }
  const std::string toml = configToToml(config);
  output.write(Bytes(reinterpret_cast<const std::uint8_t*>(toml.data()), toml.size()));
  Config back;
  try {
    back = loadConfig(output.path());
  } catch (const Error& e) {
    throw FuzzOracleFailure(std::string("config: the printed TOML does not load back: ") + e.what());
  }
  if (configToJson(back) != configToJson(config)) {
    throw FuzzOracleFailure("config: the printed TOML loads back to a different config");
  }
}

// A rejection's message is one short line whatever the input (docs/hardening.md, "Messages"): a spec of kilobytes is
// quoted by its first bytes, and no control byte reaches the terminal. Python sees the message uncut (the program's
// backstop in main() does not apply there), so the parsers must keep it short themselves.
inline void checkMessage(const Error& e, std::string_view what) {
  constexpr std::size_t kMaxMessage = 2048;  // chosen: a few quoted tokens (80 bytes each) and a list of names
  const std::string_view m = e.what();
  if (m.size() > kMaxMessage) {
    throw FuzzOracleFailure(std::string(what) + ": a message of " + std::to_string(m.size()) + " bytes");
  }
  if (std::any_of(m.begin(), m.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    throw FuzzOracleFailure(std::string(what) + ": a control byte in the message");
  }
}

// Source spec, as `smtlab run`, Python's Source() and Machine.attach take it: "gen:NAME,key=value,..." (an input
// without a known prefix is read as the part after "gen:"), "kernel:NAME" or "kpath:NAME[,seed=N]". A generator must
// be deterministic: two sources from one spec, and one source after rewind(), give the same records. A known kernel
// name is accepted without opening it (that would trace under QEMU, which this target does not fuzz); an unknown one
// must be a TraceError. A kpath: spec is parsed only (opening boots Linux): if accepted, its name is a path of the
// table and its seed and stack slot are the decimal numbers written (leading zeros aside), not wrapped or saturated.
inline void feedSpec(const std::string& spec) {
  constexpr std::size_t kSpecRecords = 2048;  // enough to pass every generator's first phase, small for speed
  if (spec.rfind("kernel:", 0) == 0) {
#ifdef SMTLAB_FUZZ_HAVE_KERNELS
    for (const KernelInfo& k : kernels()) {
      if ("kernel:" + k.name == spec) return;
    }
    (void)openKernelTrace(spec);
    throw FuzzOracleFailure("source spec: an unknown kernel name was accepted");
#else
    return;
#endif
  }
  if (spec.rfind("exec:", 0) == 0) {
#ifdef SMTLAB_FUZZ_HAVE_EXEC
    // Only the command line is split: an exec: source runs its program, which a fuzzer must never do. A split that
    // does not throw has at least one word.
    const std::vector<std::string> words = splitCommandLine(spec.substr(5), "source");
    if (words.empty()) throw FuzzOracleFailure("source spec: exec: split into no words without an error");
#endif
    return;
  }
  if (spec.rfind("kpath:", 0) == 0) {
#ifdef SMTLAB_FUZZ_HAVE_KPATH
    const KpathSpec parsed = parseKpathSpec(spec);
    const std::string rest = spec.substr(6);
    const std::size_t comma = rest.find(',');
    const auto& table = kpaths();
    if (parsed.name != rest.substr(0, comma) ||
        std::none_of(table.begin(), table.end(), [&](const KpathInfo& k) { return k.name == parsed.name; })) {
      throw FuzzOracleFailure("source spec: a kpath: name outside the table was accepted");
    }
    // Each option is seed=N, stack=K or page=P, at most once each; the parsed value is the decimal number written
    // (leading zeros aside), never a wrapped or saturated one.
    std::string seedText = "0", stackText = "0", pageText;
    bool seenSeed = false, seenStack = false, seenPage = false;
    for (std::size_t at = comma; at != std::string::npos;) {
      const std::size_t next = rest.find(',', at + 1);
      const std::string option = rest.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
      at = next;
      if (option.rfind("seed=", 0) == 0 && !seenSeed) {
        seedText = option.substr(5);
        seenSeed = true;
      } else if (option.rfind("stack=", 0) == 0 && !seenStack) {
        stackText = option.substr(6);
        seenStack = true;
      } else if (option.rfind("page=", 0) == 0 && !seenPage) {
        pageText = option.substr(5);
        seenPage = true;
      } else {
        throw FuzzOracleFailure("source spec: a kpath: option other than one seed=, one stack= and one page= was "
                                "accepted");
      }
    }
    auto number = [](std::string digits) {
      digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));  // "007" is 7, "0" stays
      return digits;
    };
    if (number(seedText) != std::to_string(parsed.seed)) {
      throw FuzzOracleFailure("source spec: kpath: seed text '" + seedText.substr(0, 40) + "' read as " +
                              std::to_string(parsed.seed));
    }
    if (number(stackText) != std::to_string(parsed.stackSlot)) {
      throw FuzzOracleFailure("source spec: kpath: stack text '" + stackText.substr(0, 40) + "' read as " +
                              std::to_string(parsed.stackSlot));
    }
    if (seenPage != parsed.page.has_value() || (seenPage && number(pageText) != std::to_string(*parsed.page))) {
      throw FuzzOracleFailure("source spec: kpath: page text '" + pageText.substr(0, 40) + "' read as " +
                              (parsed.page ? std::to_string(*parsed.page) : std::string("none")));
    }
#endif
    return;
  }
  const std::string gen = spec.rfind("gen:", 0) == 0 ? spec : "gen:" + spec;
  // chosen: 4096 lines (256 KiB) keep one input within microseconds; the parser sees the spec unchanged.
  const GeneratorOptions options{.max_cycle_lines = 4096};
  auto a = makeGenerator(gen, options);
  auto b = makeGenerator(gen, options);
  std::vector<Instr> first(kSpecRecords), second(kSpecRecords);
  const std::size_t n = a->read(std::span<Instr>(first));
  if (b->read(std::span<Instr>(second)) != n || !std::equal(first.begin(), first.begin() + static_cast<long>(n),
                                                            second.begin())) {
    throw FuzzOracleFailure("source spec: two generators from one spec differ");
  }
  a->rewind();
  if (a->read(std::span<Instr>(second)) != n || !std::equal(first.begin(), first.begin() + static_cast<long>(n),
                                                            second.begin())) {
    throw FuzzOracleFailure("source spec: rewind() does not give the same records again");
  }
}

inline void feedSourceSpec(Bytes data) {
  try {
    feedSpec(std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  } catch (const Error& e) {
    checkMessage(e, "source spec");
    throw;
  }
}

// `--set` overrides alone applied to the defaults and validated: the fast path through the override parser, without
// the TOML round trip of feedConfig, so that it reaches millions of inputs. One key=value per line, as `--set` and
// sweep files give them; or, when the input starts with the byte 0x1f, fields separated by 0x1f taken as key, value,
// key, value, ...: Python's Config.set(key, value), Config.update and Config.load(overrides=) hand key and value over
// apart, so either may hold '=', a newline or any other byte.
inline void feedConfigSet(Bytes data) {
  std::string_view rest(reinterpret_cast<const char*>(data.data()), data.size());
  Config config;
  try {
    if (!rest.empty() && rest.front() == '\x1f') {
      rest.remove_prefix(1);
      while (!rest.empty()) {
        const auto sep = rest.find('\x1f');
        const std::string_view key = rest.substr(0, sep);
        rest = sep == std::string_view::npos ? std::string_view() : rest.substr(sep + 1);
        const auto sep2 = rest.find('\x1f');
        const std::string_view value = rest.substr(0, sep2);
        rest = sep2 == std::string_view::npos ? std::string_view() : rest.substr(sep2 + 1);
        applyOverride(config, key, value, "set");
      }
    } else {
      while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (!line.empty()) applyOverride(config, line, "--set");
      }
    }
    validateConfig(config);
  } catch (const Error& e) {
    checkMessage(e, "config override");
    throw;
  }
}

}  // namespace smtlab::fuzz
