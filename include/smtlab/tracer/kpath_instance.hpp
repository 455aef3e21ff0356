// One recorded kpath: instance as a study task runs it: the records are shared by every source open on the instance
// (a study opens one per task and path: thousands of tasks must not hold thousands of copies), and each source moves
// the task's own addresses as it reads: its kernel stack (stack=K, kernel_stack.hpp) and the file pages it copies
// (page=P, page_cache.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "smtlab/trace/packed_records.hpp"
#include "smtlab/trace/source.hpp"

namespace smtlab {

struct KpathInstanceRecords {
  PackedRecords records;             // packed: a long run holds most of a recording
  std::vector<Addr> stackBlocks;     // kernelStackBlocks(records)
  std::vector<Addr> pageCachePages;  // pageCachePages(records)
  explicit KpathInstanceRecords(std::vector<Instr> r);
};

class KpathInstanceSource : public TraceSource {
 public:
  // Stack slot 0 and no page: as recorded. Throws TraceError for a slot above kMaxKernelStackSlot or a page above
  // kMaxPageCachePage less the instance's pages.
  KpathInstanceSource(std::shared_ptr<const KpathInstanceRecords> instance, std::uint64_t stackSlot,
                      std::optional<std::uint64_t> page, std::string name);

  std::size_t read(std::span<Instr> out) override;
  void rewind() override { pos_ = 0; }
  std::string describe() const override { return name_; }
  std::optional<std::uint64_t> length() const override { return instance_->records.size(); }

 private:
  std::shared_ptr<const KpathInstanceRecords> instance_;
  Addr stackShift_;
  std::optional<std::uint64_t> page_;
  std::string name_;
  std::size_t pos_ = 0;
};

}  // namespace smtlab
