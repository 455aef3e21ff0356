#include "smtlab/trace/packed_records.hpp"

#include <limits>

#include "smtlab/common/error.hpp"

namespace smtlab {

PackedRecords::PackedRecords(std::span<const Instr> records) {
  fixed_.reserve(records.size());
  for (const Instr& in : records) {
    if (addrs_.size() > std::numeric_limits<std::uint32_t>::max() - kMaxLoads - kMaxStores) {
      throw Error("PackedRecords: more than 2^32 memory operands in one store");
    }
    Fixed f{in.pc, in.target, in.markId, static_cast<std::uint32_t>(addrs_.size()), in.src, in.dst, in.op,
            in.branch, static_cast<std::uint8_t>((in.taken ? 1 : 0) | (in.microcoded ? 2 : 0)), in.uops, 0};
    auto keep = [&](const MemRef& m, int bit) {
      if (m.addr == 0 && m.size == 0) return;  // an empty slot (as every default MemRef)
      f.memMask = static_cast<std::uint8_t>(f.memMask | (1u << bit));
      addrs_.push_back(m.addr);
      sizes_.push_back(m.size);
    };
    for (int k = 0; k < kMaxLoads; ++k) keep(in.loads[k], k);
    for (int k = 0; k < kMaxStores; ++k) keep(in.stores[k], kMaxLoads + k);
    fixed_.push_back(f);
  }
  fixed_.shrink_to_fit();
  addrs_.shrink_to_fit();
  sizes_.shrink_to_fit();
}

Instr PackedRecords::get(std::size_t i) const {
  const Fixed& f = fixed_[i];
  Instr in;
  in.pc = f.pc;
  in.target = f.target;
  in.markId = f.markId;
  in.op = f.op;
  in.branch = f.branch;
  in.taken = (f.flags & 1) != 0;
  in.microcoded = (f.flags & 2) != 0;
  in.uops = f.uops;
  in.src = f.src;
  in.dst = f.dst;
  std::uint32_t m = f.memFirst;
  for (int k = 0; k < kMaxLoads + kMaxStores; ++k) {
    if ((f.memMask & (1u << k)) == 0) continue;
    MemRef& ref = k < kMaxLoads ? in.loads[k] : in.stores[k - kMaxLoads];
    ref.addr = addrs_[m];
    ref.size = sizes_[m];
    ++m;
  }
  return in;
}

void PackedRecords::copy(std::size_t first, std::span<Instr> out) const {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = get(first + i);
}

std::vector<Instr> PackedRecords::all() const {
  std::vector<Instr> out(size());
  copy(0, out);
  return out;
}

std::size_t PackedRecords::bytes() const {
  return fixed_.capacity() * sizeof(Fixed) + addrs_.capacity() * sizeof(Addr) + sizes_.capacity();
}

}  // namespace smtlab
