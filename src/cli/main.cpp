// The smtlab program: dispatches to its subcommands and turns every smtlab::Error into one message on stderr with
// exit status 1. A command line that names no command, an unknown one, or a command with nothing to work on is a
// usage error: the usage (or one line naming the unknown command) on stderr and exit status 2, as POSIX utilities and
// the Python subcommands (argparse) do; --help prints the usage on stdout with exit status 0.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <exception>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/common/version.hpp"

namespace {

constexpr const char* kUsage = R"(smtlab - a cycle-approximate model of simultaneous multithreading

usage: smtlab COMMAND [ARGS...]
       smtlab --version

commands:
  run     simulate traces on logical CPUs and report IPC, CPI stacks, occupancy (smtlab run --help)
  trace   make and inspect traces: gen, head, info, convert, record, kernels (smtlab trace --help)
  config  show or check a configuration (smtlab config --help)
  demo    Hyper-Threading off vs on for generated thread pairs on the netburst preset
  study   rerun the reference study (HT on/off on netburst, sysbench energy on broadwell) (smtlab study --help)
  sweep   run a parameter sweep described in a TOML file, locally or on Dask (smtlab sweep --help)

Trace arguments are files (native .smt, text) or generator specs such as gen:mix or gen:chase,footprint=64m.
Configs are files or preset names in configs/ (netburst, broadwell, modern).
)";

constexpr int kUsageStatus = 2;

using Command = int (*)(const std::vector<std::string>&);

// The command's usage (what its --help prints) on stderr: standard output points at stderr while it prints.
int usageOnStderr(Command command) {
  std::fflush(stdout);
  std::cout.flush();
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  command({"--help"});
  std::fflush(stdout);
  std::cout.flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  return kUsageStatus;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kUsageStatus;
  }
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args[0] == "--version" || args[0] == "-V") {
    std::fputs(fmt::format("smtlab {}\n", smtlab::version()).c_str(), stdout);
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  // Commands that have nothing to do without arguments (demo runs as it is; sweep and study are argparse's).
  const std::pair<const char*, Command> needArguments[] = {
      {"run", smtlab::cli::runCommand}, {"trace", smtlab::cli::traceCommand}, {"config", smtlab::cli::configCommand}};
  for (const auto& [name, run] : needArguments) {
    if (command == name && args.empty()) return usageOnStderr(run);
  }
  try {
    if (command == "run") return smtlab::cli::runCommand(args);
    if (command == "trace") return smtlab::cli::traceCommand(args);
    if (command == "config") return smtlab::cli::configCommand(args);
    if (command == "demo") return smtlab::cli::demoCommand(args);
    if (command == "sweep") return smtlab::cli::sweepCommand(args);
    if (command == "study") return smtlab::cli::studyCommand(args);
    std::fputs(
        fmt::format("smtlab: error: unknown command {} (try smtlab --help)\n", smtlab::shortQuote(command)).c_str(),
        stderr);
    return kUsageStatus;
  } catch (const smtlab::Error& e) {
    // Messages quote tokens short where they are made; the cut at PATH_MAX (4096) bytes per token is the backstop
    // that keeps a message one line whatever a reader quoted, without ever shortening a real path.
    std::fputs(fmt::format("smtlab {}: error: {}\n", command, smtlab::shortenLongTokens(e.what(), 4096)).c_str(),
               stderr);
  } catch (const boost::program_options::error& e) {
    // program_options quotes the offending token whole; a mistaken 100 MB argument must not be echoed whole.
    std::fputs(fmt::format("smtlab {}: error: {} (see smtlab {} --help)\n", command,
                           smtlab::shortenLongTokens(e.what()), command)
                   .c_str(),
               stderr);
  } catch (const std::filesystem::filesystem_error& e) {
    // A file the program looks for itself (a preset, the tracer plugin, a kernel's files) in a folder the user may
    // not enter: the path and the reason ("Permission denied"), not an internal error.
    const std::string path = e.path1().empty() ? std::string() : " " + smtlab::shortQuote(e.path1().string());
    std::fputs(fmt::format("smtlab {}: error: cannot access{}: {}\n", command, path, e.code().message()).c_str(),
               stderr);
  } catch (const std::bad_alloc&) {
    std::fputs(fmt::format("smtlab {}: error: out of memory\n", command).c_str(), stderr);
  } catch (const std::exception& e) {
    std::fputs(fmt::format("smtlab {}: internal error: {}\n", command, e.what()).c_str(), stderr);
  }
  return 1;
}
