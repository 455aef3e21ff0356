#include "smtlab/core/capacity.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace smtlab {

SharedCapacity::SharedCapacity(std::string name, const QueueConfig& config, std::uint32_t threads, bool recombine)
    : name_(std::move(name)),
      sharing_(config.sharing),
      entries_(config.entries),
      threads_(threads),
      cap_(config.cap),
      recombine_(recombine) {
  total_ = sharing_ == Sharing::Replicated ? entries_ * threads_ : entries_;
  setActive(threads_ >= 32 ? ~0u : (1u << threads_) - 1);
}

void SharedCapacity::setActive(std::uint32_t activeMask) {
  activeMask &= threads_ >= 32 ? ~0u : (1u << threads_) - 1;
  // Without recombination a partitioned structure stays split as if every thread ran.
  const std::uint32_t sharers = recombine_ ? std::max(1, std::popcount(activeMask)) : threads_;
  for (std::uint32_t t = 0; t < threads_; ++t) {
    switch (sharing_) {
      case Sharing::Replicated:
        limit_[t] = entries_;
        break;
      case Sharing::Partitioned:
        limit_[t] = entries_ / sharers;
        break;
      case Sharing::Shared:
        limit_[t] = entries_;
        break;
      case Sharing::Capped:
        // With a single active thread a cap would only waste entries; it applies when threads compete.
        limit_[t] = sharers > 1 ? std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::floor(entries_ * cap_)))
                                : entries_;
        break;
    }
    const std::uint64_t others = std::uint64_t{sharers - 1} * limit_[t];
    const bool ownCopy = sharing_ == Sharing::Replicated || sharing_ == Sharing::Partitioned;
    guaranteed_[t] = ownCopy ? limit_[t]
                             : std::max<std::uint32_t>(1, others >= total_ ? 0 : static_cast<std::uint32_t>(total_ - others));
    guaranteed_[t] = std::min(guaranteed_[t], limit_[t]);
  }
}

}  // namespace smtlab
