// What a core reports to the machine: a trace ended, a mark instruction retired, a retire limit was reached.
#pragma once

#include <cstdint>

#include "smtlab/common/types.hpp"

namespace smtlab {

enum class CoreEventKind : std::uint8_t { SourceEnded, Mark, RetireLimit };
struct CoreEvent {
  CoreEventKind kind;
  std::uint32_t thread;
  std::uint32_t markId;
  Cycle cycle;
};

}  // namespace smtlab
