#include "smtlab/trace/vector_source.hpp"

#include <algorithm>
#include <sstream>

#include "smtlab/trace/text_format.hpp"

namespace smtlab {

std::size_t VectorSource::read(std::span<Instr> out) {
  const std::size_t n = std::min(out.size(), records_.size() - pos_);
  std::copy_n(records_.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
  pos_ += n;
  return n;
}

std::vector<Instr> parseTextTrace(std::string_view text) {
  std::vector<Instr> records;
  std::uint64_t lineNo = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    ++lineNo;
    Instr in;
    if (parseTextLine(text.substr(0, nl), in, "<text>", lineNo)) records.push_back(in);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return records;
}

std::vector<Instr> readAll(TraceSource& source, std::uint64_t maxRecords) {
  std::vector<Instr> all;
  std::vector<Instr> batch(1024);
  while (maxRecords == 0 || all.size() < maxRecords) {
    std::size_t want = batch.size();
    if (maxRecords != 0) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, maxRecords - all.size()));
    const std::size_t got = source.read(std::span<Instr>(batch.data(), want));
    if (got == 0) break;
    all.insert(all.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(got));
  }
  return all;
}

}  // namespace smtlab
