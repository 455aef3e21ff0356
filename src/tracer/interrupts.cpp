#include "smtlab/tracer/interrupts.hpp"

#include <algorithm>

namespace smtlab {

bool InterruptVectors::isEntry(Addr pc) const {
  return isDevice(pc) || std::find(system.begin(), system.end(), pc) != system.end();
}

namespace {

// A delivery lands on an entry point; a device stub's own later instructions (the jump after the push) do not.
bool isDelivery(const SystemRegion& region, const InterruptVectors& vectors, std::size_t k) {
  const Addr pc = region.instrs[k].pc;
  return vectors.isEntry(pc) &&
         !(k > 0 && vectors.isDevice(pc) && vectors.isDevice(region.instrs[k - 1].pc));
}

// One past the interrupt return that balances the delivery at record i, looking no further than `limit`; 0 if none
// does (or the return is not known).
std::size_t balancedEnd(const SystemRegion& region, const InterruptVectors& vectors, std::size_t i,
                        std::size_t limit) {
  if (vectors.iret == 0) return 0;
  int depth = 1;
  for (std::size_t k = i + 1; k < limit; ++k) {
    if (region.instrs[k].pc == vectors.iret) {
      if (--depth == 0) return k + 1;
    } else if (isDelivery(region, vectors, k)) {
      ++depth;
    }
  }
  return 0;
}

}  // namespace

std::vector<InterruptRun> interruptRuns(const SystemRegion& region, const InterruptVectors& vectors) {
  std::vector<InterruptRun> runs;
  const std::size_t n = region.instrs.size();
  for (std::size_t i = 0; i < n;) {
    if (!region.kernel[i] || !isDelivery(region, vectors, i)) {
      ++i;
      continue;
    }
    const bool afterUser = i > 0 && !region.kernel[i - 1];
    std::size_t end = balancedEnd(region, vectors, i, n);
    const bool closed = end != 0;
    if (!closed) {
      if (!afterUser) {  // not ended here and nested in kernel code: the path's own, look inside it
        ++i;
        continue;
      }
      for (end = i; end < n && region.kernel[end];) ++end;  // up to the return to the interrupted user code
    }
    // A region ends with the probe's end marker, in user code: a return that is the region's last record went there.
    const bool returnsToUser = closed && (end == n || !region.kernel[end]);
    runs.push_back(InterruptRun{i, end, vectors.isDevice(region.instrs[i].pc), afterUser || returnsToUser});
    i = end;
  }
  // Interrupts delivered back to back (the next one pending at the first's return, before any instruction of the
  // interrupted code) interrupted the same code: one of them seeing user code tells it for all of them.
  for (std::size_t j = 0; j < runs.size();) {
    std::size_t last = j;
    bool user = runs[j].fromUser;
    while (last + 1 < runs.size() && runs[last + 1].begin == runs[last].end) {
      ++last;  // (not inside the ||: once `user` is true it would no longer be evaluated, and the loop never end)
      user = user || runs[last].fromUser;
    }
    for (std::size_t k = j; k <= last; ++k) runs[k].fromUser = user;
    j = last + 1;
  }
  return runs;
}

std::uint64_t removeInterrupts(SystemRegion& region, const InterruptVectors& vectors,
                               std::vector<SystemRegion>* devices) {
  const std::vector<InterruptRun> runs = interruptRuns(region, vectors);
  std::uint64_t removed = 0;
  std::size_t out = 0, from = 0;
  auto keep = [&](std::size_t to) {  // records [from, to) stay
    for (; from < to; ++from, ++out) {
      region.instrs[out] = region.instrs[from];
      region.kernel[out] = region.kernel[from];
    }
  };
  auto cut = [&](std::size_t begin, std::size_t end, bool device) {  // records [begin, end) go
    keep(begin);
    if (device) {
      SystemRegion d;
      d.id = region.id;
      d.instrs.assign(region.instrs.begin() + static_cast<std::ptrdiff_t>(begin),
                      region.instrs.begin() + static_cast<std::ptrdiff_t>(end));
      d.kernel.assign(region.kernel.begin() + static_cast<std::ptrdiff_t>(begin),
                      region.kernel.begin() + static_cast<std::ptrdiff_t>(end));
      devices->push_back(std::move(d));
    }
    from = end;
    ++removed;
  };
  for (const InterruptRun& run : runs) {
    const bool device = devices != nullptr && run.device;
    if (run.fromUser || device) {
      cut(run.begin, run.end, device);
      continue;
    }
    if (devices == nullptr) continue;
    // A kernel-mode interrupt that stays may hold a device interrupt of its own: a tick's softirq, run at its exit,
    // enables interrupts, and the disk's completion pending then is taken inside it (seen in a recording made under
    // load). That device run goes too, from its stub to the return that balances it.
    for (std::size_t k = run.begin + 1; k < run.end;) {
      if (!vectors.isDevice(region.instrs[k].pc) || !isDelivery(region, vectors, k)) {
        ++k;
        continue;
      }
      const std::size_t end = balancedEnd(region, vectors, k, run.end);
      if (end == 0) {
        ++k;
        continue;
      }
      cut(k, end, true);
      k = end;
    }
  }
  keep(region.instrs.size());
  region.instrs.resize(out);
  region.kernel.resize(out);
  return removed;
}

std::uint64_t removeNestedInterrupts(SystemRegion& region, const InterruptVectors& vectors) {
  const std::size_t n = region.instrs.size();
  std::uint64_t removed = 0;
  std::size_t out = 0;
  for (std::size_t k = 0; k < n;) {
    if (k > 0 && isDelivery(region, vectors, k)) {
      if (const std::size_t end = balancedEnd(region, vectors, k, n); end != 0) {
        k = end;
        ++removed;
        continue;
      }
    }
    region.instrs[out] = region.instrs[k];
    region.kernel[out] = region.kernel[k];
    ++out;
    ++k;
  }
  region.instrs.resize(out);
  region.kernel.resize(out);
  return removed;
}

}  // namespace smtlab
