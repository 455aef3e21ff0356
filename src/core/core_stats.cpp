#include "smtlab/core/core_stats.hpp"

#include <array>

namespace smtlab {

std::string_view cpiCauseName(CpiCause cause) {
  static constexpr std::array<std::string_view, kCpiCauses> names = {
      "base",         "execute",       "frontend", "branch_mispredict", "pause",        "mem_l1",
      "mem_l2",       "mem_llc",       "mem_dram", "rob_full",          "rob_partition", "iq_full",
      "iq_partition", "lq_full",       "lq_partition", "sq_full",       "sq_partition", "drain",
      "sibling_retire", "regs"};
  return names[static_cast<int>(cause)];
}

std::string_view queueKindName(QueueKind q) {
  static constexpr std::array<std::string_view, kQueueKinds> names = {"uop_queue", "rob", "iq", "lq", "sq"};
  return names[static_cast<int>(q)];
}

}  // namespace smtlab
