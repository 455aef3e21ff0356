#include "smtlab/trace/text_format.hpp"

#include <cerrno>
#include <cstring>
#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/trace/trace_input.hpp"

namespace smtlab {

std::string quoteToken(std::string_view token) { return shortQuote(token, kMaxQuotedBytes); }

namespace {

// Carries the file name and line number so that every message reads "file:line: what".
struct LineContext {
  std::string_view name;
  std::uint64_t line;
  [[noreturn]] void fail(const std::string& what) const {
    throw TraceError(fmt::format("{}:{}: {}", name, line, what));
  }
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool parseHex(std::string_view s, std::uint64_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}

bool parseDec(std::string_view s, std::uint64_t max, std::uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (max - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool parseBranchKind(std::string_view s, BranchKind& out) {
  for (int i = 0; i < kBranchKindCount; ++i) {
    if (branchKindName(static_cast<BranchKind>(i)) == s) {
      out = static_cast<BranchKind>(i);
      return true;
    }
  }
  return false;
}

template <std::size_t N>
void parseRegList(std::string_view key, std::string_view list, std::array<RegId, N>& regs, const LineContext& ctx) {
  std::size_t n = 0;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (n == N) ctx.fail(fmt::format("too many {} registers (at most {})", key, N));
    RegId r;
    if (!parseReg(item, r)) ctx.fail(fmt::format("unknown register {} in {}=", quoteToken(item), key));
    regs[n++] = r;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

void parseMemRef(std::string_view key, std::string_view value, MemRef& ref, const LineContext& ctx) {
  const std::size_t colon = value.find(':');
  std::uint64_t addr;
  if (!parseHex(value.substr(0, colon), addr)) {
    ctx.fail(fmt::format("bad hex address {} in {}=", quoteToken(value.substr(0, colon)), key));
  }
  std::uint64_t size = 8;
  if (colon != std::string_view::npos && !parseDec(value.substr(colon + 1), 255, size)) size = 0;
  if (size == 0) {
    ctx.fail(fmt::format("bad access size {} in {}= (1..255 bytes)", quoteToken(value.substr(colon + 1)), key));
  }
  ref.addr = addr;
  ref.size = static_cast<std::uint8_t>(size);
}

}  // namespace

bool parseTextLine(std::string_view line, Instr& out, std::string_view name, std::uint64_t lineNo) {
  const LineContext ctx{name, lineNo};
  if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  // A binary file (a native trace with a damaged magic, say) is not a text trace: say so instead of quoting raw bytes,
  // which would garble the one-line message (a NUL byte even cuts it short).
  for (std::size_t k = 0; k < line.size(); ++k) {
    const auto c = static_cast<unsigned char>(line[k]);
    if ((c < 0x20 && !isSpace(line[k])) || c == 0x7f) {
      ctx.fail(fmt::format("binary byte 0x{:02x} in column {}: not a text trace (nor a native one: no SMTLTRC\\x01 "
                           "magic)", c, k + 1));
    }
  }

  // Tokens are separated by blanks; at most: pc, op and a bounded number of fields (duplicates are errors anyway).
  std::string_view tokens[24];
  std::size_t ntok = 0;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && isSpace(line[i])) ++i;
    if (i == line.size()) break;
    std::size_t j = i;
    while (j < line.size() && !isSpace(line[j])) ++j;
    if (ntok == std::size(tokens)) ctx.fail("too many fields");
    tokens[ntok++] = line.substr(i, j - i);
    i = j;
  }
  if (ntok == 0) return false;

  Instr instr;
  if (!parseHex(tokens[0], instr.pc)) ctx.fail(fmt::format("bad hex pc {}", quoteToken(tokens[0])));
  if (ntok < 2) ctx.fail("missing op after the pc");
  if (!parseOpClass(tokens[1], instr.op)) ctx.fail(fmt::format("unknown op {}", quoteToken(tokens[1])));
  instr.branch = defaultBranchKind(instr.op);

  bool seenDst = false, seenSrc = false, seenTaken = false, seenTarget = false, seenId = false, seenIndirect = false,
       seenKind = false, seenUops = false, seenUcode = false;
  int nLoads = 0, nStores = 0;
  auto once = [&](bool& seen, std::string_view key) {
    if (seen) ctx.fail(fmt::format("duplicate field '{}'", key));
    seen = true;
  };

  for (std::size_t t = 2; t < ntok; ++t) {
    const std::string_view tok = tokens[t];
    const std::size_t eq = tok.find('=');
    const std::string_view key = tok.substr(0, eq);
    const bool hasValue = eq != std::string_view::npos;
    const std::string_view value = hasValue ? tok.substr(eq + 1) : std::string_view{};

    if (key == "taken" || key == "indirect" || key == "ucode") {
      if (hasValue) ctx.fail(fmt::format("field {} is a flag and takes no value", quoteToken(key)));
      if (key == "taken") {
        once(seenTaken, key);
        instr.taken = true;
      } else if (key == "ucode") {
        once(seenUcode, key);
        instr.microcoded = true;
      } else {
        once(seenIndirect, key);
        if (instr.op != OpClass::Call) ctx.fail("'indirect' applies only to call");
        instr.branch = BranchKind::IndirectCall;
      }
      continue;
    }
    const bool known = key == "dst" || key == "src" || key == "ld" || key == "st" || key == "target" || key == "id" ||
                       key == "kind" || key == "uops";
    if (!known) ctx.fail(fmt::format("unknown field {}", quoteToken(tok)));
    if (value.empty()) ctx.fail(fmt::format("missing value for '{}'", key));

    if (key == "dst") {
      once(seenDst, key);
      parseRegList(key, value, instr.dst, ctx);
    } else if (key == "src") {
      once(seenSrc, key);
      parseRegList(key, value, instr.src, ctx);
    } else if (key == "ld") {
      if (nLoads == kMaxLoads) ctx.fail(fmt::format("too many loads (at most {} ld=)", kMaxLoads));
      parseMemRef(key, value, instr.loads[nLoads++], ctx);
    } else if (key == "st") {
      if (nStores == kMaxStores) ctx.fail(fmt::format("too many stores (at most {} st=)", kMaxStores));
      parseMemRef(key, value, instr.stores[nStores++], ctx);
    } else if (key == "target") {
      once(seenTarget, key);
      if (!parseHex(value, instr.target)) ctx.fail(fmt::format("bad hex target {}", quoteToken(value)));
    } else if (key == "id") {
      once(seenId, key);
      std::uint64_t id;
      if (!parseDec(value, 0xffffffffu, id)) ctx.fail(fmt::format("bad mark id {} (0..4294967295)", quoteToken(value)));
      instr.markId = static_cast<std::uint32_t>(id);
    } else if (key == "uops") {
      // The decoder's uop count: 1..255; a field that is absent means "not recorded" (0).
      once(seenUops, key);
      std::uint64_t uops;
      if (!parseDec(value, 255, uops) || uops == 0) {
        ctx.fail(fmt::format("bad uop count {} in uops= (1..255; leave the field out when not recorded)",
                             quoteToken(value)));
      }
      instr.uops = static_cast<std::uint8_t>(uops);
    } else {  // kind
      once(seenKind, key);
      if (!parseBranchKind(value, instr.branch)) ctx.fail(fmt::format("unknown branch kind {}", quoteToken(value)));
    }
  }
  if (seenKind && seenIndirect) ctx.fail("both 'indirect' and 'kind=' given");
  // 'taken' is a branch's outcome: on a record with no branch kind nothing reads it (the core predicts and redirects
  // only branches), so it is a mistake in the trace, such as a wrong op, not a flag to ignore.
  if (seenTaken && instr.branch == BranchKind::None) {
    ctx.fail(seenKind ? std::string("'taken' with kind=none: only a branch is taken (give a branch kind, or drop "
                                    "'taken')")
                      : fmt::format("'taken' on op '{}', which is no branch: only a branch is taken (use a branch op "
                                    "such as br, give kind=, or drop 'taken')",
                                    opClassName(instr.op)));
  }
  // A microcoded instruction's length is what the sequencer needs; the flag alone would be a count the core guesses.
  if (seenUcode && !seenUops) ctx.fail("'ucode' needs uops=N (the microcode sequence's length)");
  switch (instr.op) {
    case OpClass::Jump:
    case OpClass::IndirectJump:
    case OpClass::Call:
    case OpClass::Return: instr.taken = true; break;
    default: break;
  }
  out = instr;
  return true;
}

std::string formatTextLine(const Instr& in) {
  fmt::memory_buffer b;
  fmt::format_to(std::back_inserter(b), "{:x} {}", in.pc, opClassName(in.op));
  const std::string_view op = opClassName(in.op);
  std::size_t pad = op.size() < 5 ? 5 - op.size() : 0;  // align the fields like docs/traces.md
  bool first = true;
  auto field = [&]() {
    if (first) {
      b.append(std::string_view("      ").substr(0, pad + 1));
      first = false;
    } else {
      b.push_back(' ');
    }
  };
  auto regs = [&](std::string_view key, const auto& list) {
    bool any = false;
    for (RegId r : list) {
      if (r == kNoReg) continue;
      if (!any) {
        field();
        fmt::format_to(std::back_inserter(b), "{}=", key);
      } else {
        b.push_back(',');
      }
      any = true;
      const std::string name = regName(r);
      b.append(name.data(), name.data() + name.size());
    }
  };
  auto mem = [&](std::string_view key, const MemRef& m) {
    if (!m.valid()) return;
    field();
    fmt::format_to(std::back_inserter(b), "{}={:x}:{}", key, m.addr, m.size);
  };
  regs("dst", in.dst);
  regs("src", in.src);
  for (const MemRef& m : in.loads) mem("ld", m);
  for (const MemRef& m : in.stores) mem("st", m);
  const bool alwaysTaken = in.op == OpClass::Jump || in.op == OpClass::IndirectJump || in.op == OpClass::Call ||
                           in.op == OpClass::Return;
  if (in.taken && !alwaysTaken && in.isBranch()) {  // the reader refuses 'taken' on a record that is no branch
    field();
    fmt::format_to(std::back_inserter(b), "taken");
  }
  if (in.op == OpClass::Call && in.branch == BranchKind::IndirectCall) {
    field();
    fmt::format_to(std::back_inserter(b), "indirect");
  } else if (in.branch != defaultBranchKind(in.op)) {
    field();
    fmt::format_to(std::back_inserter(b), "kind={}", branchKindName(in.branch));
  }
  if (in.target != 0) {
    field();
    fmt::format_to(std::back_inserter(b), "target={:x}", in.target);
  }
  if (in.op == OpClass::Mark || in.markId != 0) {
    field();
    fmt::format_to(std::back_inserter(b), "id={}", in.markId);
  }
  if (in.uops != 0) {
    field();
    fmt::format_to(std::back_inserter(b), "uops={}", in.uops);
    if (in.microcoded) {
      field();
      fmt::format_to(std::back_inserter(b), "ucode");
    }
  }
  return fmt::to_string(b);
}

TextTraceReader::TextTraceReader(std::string path) : TextTraceReader(TraceInput::open(path)) {}

TextTraceReader::TextTraceReader(std::unique_ptr<TraceInput> input)
    : name_(input->path()), input_(std::move(input)), in_(&input_->stream()) {}

TextTraceReader::TextTraceReader(std::istream& in, std::string name) : name_(std::move(name)), in_(&in) {
  start_ = in_->tellg();
}

TextTraceReader::~TextTraceReader() = default;

bool TextTraceReader::nextLine() {
  if (ended_) return false;
  buf_.clear();
  std::streambuf* sb = in_->rdbuf();
  bool any = false;
  while (true) {
    int c = std::char_traits<char>::eof();
    try {
      c = sb->sbumpc();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw TraceError(fmt::format("{}:{}: read error ({})", name_, line_ + 1, e.what()));
    }
    if (c == std::char_traits<char>::eof()) {
      ended_ = true;
      if (!any) return false;
      break;
    }
    any = true;
    if (c == '\n') break;
    if (buf_.size() == kMaxTextLineBytes) {
      // A binary file is named as such (parseTextLine says so); anything else is a line too long.
      Instr ignored;
      parseTextLine(buf_, ignored, name_, line_ + 1);
      throw TraceError(fmt::format("{}:{}: line longer than {} bytes (the text format's limit; a record is about 300): "
                                   "not a text trace", name_, line_ + 1, kMaxTextLineBytes));
    }
    buf_.push_back(static_cast<char>(c));
  }
  ++line_;
  // A UTF-8 byte-order mark, which some editors put at the start of a file, is not part of the first record.
  if (line_ == 1 && buf_.rfind("\xEF\xBB\xBF", 0) == 0) buf_.erase(0, 3);
  return true;
}

std::size_t TextTraceReader::read(std::span<Instr> out) {
  std::size_t n = 0;
  while (n < out.size() && nextLine()) {
    if (parseTextLine(buf_, out[n], name_, line_)) ++n;
  }
  return n;
}

void TextTraceReader::rewind() {
  if (input_) {
    if (!input_->reopenable()) throw TraceError(cannotRereadMessage(*input_));
    input_ = TraceInput::open(name_);
    in_ = &input_->stream();
  } else {
    in_->clear();
    in_->seekg(start_ == std::streampos(-1) ? std::streampos(0) : start_);
    if (!*in_) throw TraceError(fmt::format("{}: cannot rewind the trace", name_));
  }
  line_ = 0;
  ended_ = false;
}

TextTraceWriter::TextTraceWriter(const std::string& path) : name_(path) {
  try {
    file_ = std::make_unique<OutputFile>(path, std::ios::binary, "trace");
  } catch (const TraceError&) {
    throw;
  } catch (const Error& e) {
    throw TraceError(e.what());  // a trace that cannot be written is a trace error, as for the readers
  }
  out_ = &file_->stream();
  *out_ << kTextTraceHeader << '\n';
}

// Without close() a file output is incomplete: the OutputFile removes its temporary file.
TextTraceWriter::~TextTraceWriter() = default;

TextTraceWriter::TextTraceWriter(std::ostream& out) : name_("<stream>"), out_(&out) {
  *out_ << kTextTraceHeader << '\n';
}

void TextTraceWriter::write(const Instr& instr) {
  const std::string line = formatTextLine(instr);
  out_->write(line.data(), static_cast<std::streamsize>(line.size()));
  out_->put('\n');
  ++written_;
}

void TextTraceWriter::close() {
  out_->flush();
  if (!*out_) throw TraceError(fmt::format("{}: write failed after {} records", name_, written_));
  if (file_) {
    try {
      file_->commit();
    } catch (const Error& e) {
      throw TraceError(e.what());
    }
  }
}

}  // namespace smtlab
