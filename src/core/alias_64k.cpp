#include "smtlab/core/alias_64k.hpp"

#include <bit>

namespace smtlab {

Alias64k::Alias64k(std::uint32_t lineBytes)
    : lineShift_(static_cast<std::uint32_t>(std::countr_zero(lineBytes))),
      mask_((std::uint64_t{1} << 16 >> lineShift_) - 1),
      slots_(static_cast<std::size_t>(mask_ + 1)) {}

}  // namespace smtlab
