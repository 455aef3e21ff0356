// Helpers for the config tests: a fresh temporary folder per test, files written into it, and a matcher for the
// message of a ConfigError.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"

namespace smtlab::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "smtlab-config-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `text` to `name` inside the folder and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

// Runs `f`, expects a ConfigError, and returns its message ("" and a test failure if none was thrown).
inline std::string configErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

// Every `part` occurs in `message`.
inline ::testing::AssertionResult mentions(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "message does not mention '" << part << "': " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace smtlab::test
