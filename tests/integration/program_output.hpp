// What the bad-input catalogues read back from a run of the smtlab program: its exit status and output, whole files,
// the non-empty lines of a message. Shared by bad_input_test.cpp and bad_input_cli_test.cpp (one suite, built as a
// unity source: a helper defined in both would be defined twice).
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace smtlab::test {

struct ProgramResult {
  int status = -1;  // exit status, 128 + signal, or -1 when it had to be killed after a time limit
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> nonEmptyLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace smtlab::test
