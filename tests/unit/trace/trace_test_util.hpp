// Helpers shared by the trace layer's tests: scratch files that remove themselves.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "smtlab/common/error.hpp"

namespace smtlab::test {

// The message of the TraceError that f throws, or "(no error)": tests compare what the reader says.
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

// A path in the system temp directory, unique per process and call, deleted when the object goes away.
class TempPath {
 public:
  explicit TempPath(const std::string& suffix) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("smtlab-trace-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix))
                .string();
  }
  ~TempPath() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// A fixture in tests/data.
inline std::string dataPath(const std::string& name) {
  return std::string(SMTLAB_SOURCE_DIR) + "/tests/data/" + name;
}

inline void writeFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
}

inline std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace smtlab::test
