#include "smtlab/core/mlp_predictor.hpp"

#include <algorithm>
#include <limits>

#include "smtlab/common/state_io.hpp"

namespace smtlab {

MlpPredictor::MlpPredictor(std::uint32_t entries, std::vector<std::uint32_t> window)
    : mask_(entries - 1), table_(entries, 0), window_(std::move(window)), llsr_(window_.size()) {
  for (std::size_t t = 0; t < window_.size(); ++t) {
    window_[t] = std::max(1u, window_[t]);
    llsr_[t].ring.resize(window_[t]);
  }
}

void MlpPredictor::closeWindows(std::uint32_t t, SeqNum seq) {
  Llsr& q = llsr_[t];
  const std::uint64_t youngest = q.at(q.count - 1).seq;  // every pending load is inside the oldest one's window
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint16_t>::max();
  while (q.count != 0 && seq.value - q.at(0).seq >= window_[t]) {
    const Pending& oldest = q.at(0);
    table_[index(oldest.pc)] = static_cast<std::uint16_t>(std::min(kMax, youngest - oldest.seq));
    q.pop();
  }
}

void MlpPredictor::visitState(StateIo& io) {
  io(table_);
  for (Llsr& q : llsr_) io(q.ring, q.head, q.count);
}

}  // namespace smtlab
