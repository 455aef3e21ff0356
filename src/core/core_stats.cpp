#include "smtlab/core/core_stats.hpp"

#include <array>

namespace smtlab {

std::string_view queueKindName(QueueKind q) {
  static constexpr std::array<std::string_view, kQueueKinds> names = {"uop_queue", "rob", "iq", "lq", "sq"};
  return names[static_cast<int>(q)];
}

}  // namespace smtlab
