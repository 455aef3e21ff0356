#include "smtlab/core/register_file.hpp"

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

namespace {
// The renaming pool of a file: its entries minus those the architectural state of the threads holds for good (a
// halted thread keeps its registers, so the pool does not grow when a sibling halts; only its division does).
QueueConfig renamingPool(const RegisterFileConfig& f, std::uint32_t threads, std::uint32_t& held,
                        std::string_view name) {
  held = f.sharing == Sharing::Replicated ? f.architectural : f.architectural * threads;
  // validateConfig says this in detail for configs from files; a Config built in code gets the same refusal here.
  if (f.entries <= held) {
    throw ConfigError(fmt::format("core.{}.entries = {} leaves no register to rename with ({} hold committed state)",
                                  name, f.entries, held));
  }
  return QueueConfig{f.entries - held, f.sharing, f.cap};
}
}  // namespace

RegisterFiles::RegisterFiles(const Config& config)
    : intOn_(config.core.int_prf.entries != 0), fpOn_(config.core.fp_prf.entries != 0) {
  const std::uint32_t threads = config.core.threads;
  const bool recombine = config.core.recombine;
  if (intOn_) {
    const QueueConfig pool = renamingPool(config.core.int_prf, threads, intHeld_, "int_prf");
    int_ = SharedCapacity("int_prf", pool, threads, recombine);
  }
  if (fpOn_) {
    const QueueConfig pool = renamingPool(config.core.fp_prf, threads, fpHeld_, "fp_prf");
    fp_ = SharedCapacity("fp_prf", pool, threads, recombine);
  }
}

}  // namespace smtlab
