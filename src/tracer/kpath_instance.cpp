#include "smtlab/tracer/kpath_instance.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/tracer/kernel_stack.hpp"
#include "smtlab/tracer/page_cache.hpp"

namespace smtlab {

KpathInstanceRecords::KpathInstanceRecords(std::vector<Instr> r)
    : records(r), stackBlocks(kernelStackBlocks(r)), pageCachePages(smtlab::pageCachePages(r)) {}

KpathInstanceSource::KpathInstanceSource(std::shared_ptr<const KpathInstanceRecords> instance, std::uint64_t stackSlot,
                                         std::optional<std::uint64_t> page, std::string name)
    : instance_(std::move(instance)), stackShift_(kernelStackShift(stackSlot)), page_(page), name_(std::move(name)) {
  if (page_ && *page_ + instance_->pageCachePages.size() > kMaxPageCachePage + 1) {
    throw TraceError(fmt::format("{}: page {} and the instance's {} page-cache pages pass the last page {}", name_,
                                 *page_, instance_->pageCachePages.size(), kMaxPageCachePage));
  }
}

std::size_t KpathInstanceSource::read(std::span<Instr> out) {
  const PackedRecords& records = instance_->records;
  const std::size_t n = std::min(out.size(), records.size() - pos_);
  records.copy(pos_, out.first(n));
  pos_ += n;
  if (stackShift_ != 0 && !instance_->stackBlocks.empty()) {
    for (std::size_t i = 0; i < n; ++i) moveKernelStackAccesses(out[i], instance_->stackBlocks, stackShift_);
  }
  if (page_ && !instance_->pageCachePages.empty()) {
    for (std::size_t i = 0; i < n; ++i) movePageCacheAccesses(out[i], instance_->pageCachePages, *page_);
  }
  return n;
}

}  // namespace smtlab
