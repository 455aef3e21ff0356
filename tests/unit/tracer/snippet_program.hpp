// The tracer suites' scratch folder and snippet.S assembled into a program: a hand-written program with no libc whose
// every executed instruction is known (4019 of them, counted in tracer_test.cpp).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace smtlab::test {

// One folder per test process under TMPDIR, shared by the suites and removed when the process exits (a suite that
// removed it at its end would pull it from under the next one).
inline std::filesystem::path tracerScratchPath() {
  return std::filesystem::temp_directory_path() / ("smtlab-tracer-test-" + std::to_string(::getpid()));
}
inline std::filesystem::path tracerScratchDir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::create_directories(tracerScratchPath());
    std::atexit([] {  // the path made again: `dir` itself is destroyed before this runs
      std::error_code ec;
      std::filesystem::remove_all(tracerScratchPath(), ec);
    });
    return tracerScratchPath();
  }();
  return dir;
}

// snippet.S assembled once; empty when there is no compiler.
inline std::string snippetProgram() {
  static const std::string path = [] {
    const std::filesystem::path bin = tracerScratchDir() / "snippet";
    const std::string cmd = "cc -nostdlib -static -o " + bin.string() + " " SMTLAB_SOURCE_DIR
                            "/tests/unit/tracer/snippet.S >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? bin.string() : std::string();
  }();
  return path;
}

}  // namespace smtlab::test
