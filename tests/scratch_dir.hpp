// A scratch folder for a test: made fresh under $TMPDIR (mkdtemp, so parallel tests never share one) and removed with
// everything in it when the object goes away, so that a test run leaves nothing behind in the temp directory.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace smtlab::test {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag = "test") {
    std::string pattern = (std::filesystem::temp_directory_path() / ("smtlab-" + tag + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace smtlab::test
