// A trace source over records held in memory: for tests, for the Python bindings and for traces built by hand.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "smtlab/trace/source.hpp"

namespace smtlab {

class VectorSource : public TraceSource {
 public:
  explicit VectorSource(std::vector<Instr> records, std::string name = "<vector>")
      : records_(std::move(records)), name_(std::move(name)) {}

  std::size_t read(std::span<Instr> out) override;
  void rewind() override { pos_ = 0; }
  std::string describe() const override { return name_; }
  std::optional<std::uint64_t> length() const override { return records_.size(); }
  const std::vector<Instr>& records() const { return records_; }

 private:
  std::vector<Instr> records_;
  std::string name_;
  std::size_t pos_ = 0;
};

// Parses a whole text-format trace held in a string (messages name it "<text>"). Throws TraceError.
std::vector<Instr> parseTextTrace(std::string_view text);

// Reads every record of a source (from its current position) into a vector; at most maxRecords if non-zero.
std::vector<Instr> readAll(TraceSource& source, std::uint64_t maxRecords = 0);

}  // namespace smtlab
