#include "smtlab/tracer/kpath_instance.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kernel_stack.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/kpath_spec.hpp"
#include "smtlab/tracer/page_cache.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

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

std::unique_ptr<TraceSource> openKpathTrace(const std::string& spec) {
  const KpathSpec parsed = parseKpathSpec(spec);  // before anything boots
  const std::string& name = parsed.name;
  const std::uint64_t seed = parsed.seed;
  const std::uint64_t stackSlot = parsed.stackSlot;  // per-task kernel stack (kernel_stack.hpp); 0: as recorded
  const std::optional<std::uint64_t> page = parsed.page;  // the file pages it copies (page_cache.hpp); none: as recorded
  KpathBuildOptions build;
  if (const char* t = std::getenv("SMTLAB_KPATH_TIMEOUT"); t && *t) build.timeoutSeconds = std::atoi(t);
  if (const char* c = std::getenv("SMTLAB_KPATH_COUNT"); c && *c) build.count = std::atoi(c);
  if (build.timeoutSeconds <= 0 || build.count <= 0 || build.count > 100000) {
    throw TraceError("kpath: SMTLAB_KPATH_TIMEOUT and SMTLAB_KPATH_COUNT must be positive (count at most 100000)");
  }
  const std::string manifestPath = ensureKpathCache(build);
  try {
    const std::shared_ptr<const boost::json::value> parsed = kpathManifest(manifestPath);
    const boost::json::value& m = *parsed;
    const auto& entry = m.at("paths").at(name).as_object();
    const auto& list = entry.at("instances").as_array();
    if (list.empty()) {
      throw TraceError(fmt::format("'{}': the recording holds no instance of '{}' (see {})", spec, name, manifestPath));
    }
    const std::size_t pick = static_cast<std::size_t>(splitmix64(seed) % list.size());
    std::string name2 = fmt::format("kpath:{}#{}", name, pick);
    if (stackSlot != 0) name2 += fmt::format(",stack={}", stackSlot);
    if (page) name2 += fmt::format(",page={}", *page);
    // One copy of an instance's records per process, shared by every source open on it (a study opens one per
    // task and path); kept while a source uses it, and the most recently opened ones also after (`recent`, at most
    // kRecentRecords records: a call on a file page of its own opens its source for one step, and reading the
    // instance again from the compressed trace took about 10 ms). Keyed by the manifest's time too: a re-recording
    // is new data.
    constexpr std::size_t kRecentRecords = std::size_t{1} << 20;  // chosen: about 45 MiB of packed records
    static std::mutex instancesMutex;
    static std::map<std::string, std::weak_ptr<const KpathInstanceRecords>> instances;
    static std::deque<std::shared_ptr<const KpathInstanceRecords>> recent;
    static std::size_t recentRecords = 0;
    std::error_code timeError;
    const auto stamp = fs::last_write_time(manifestPath, timeError).time_since_epoch().count();
    const std::string key = fmt::format("{}\n{}\n{}\n{}", manifestPath, stamp, name, pick);
    std::lock_guard lock(instancesMutex);
    if (auto shared = instances[key].lock()) {
      return std::make_unique<KpathInstanceSource>(shared, stackSlot, page, name2);
    }
    const auto& inst = list[pick].as_array();
    const std::uint64_t offset = inst.at(0).to_number<std::uint64_t>(), length = inst.at(1).to_number<std::uint64_t>();
    NativeTraceReader reader((fs::path(manifestPath).parent_path() / entry.at("file").as_string().c_str()).string());
    std::vector<Instr> skip(4096);
    for (std::uint64_t left = offset; left > 0;) {
      const std::size_t n = reader.read(std::span<Instr>(skip.data(), std::min<std::uint64_t>(left, skip.size())));
      if (n == 0) throw TraceError(fmt::format("'{}': {} ends before instance {}", spec, reader.describe(), pick));
      left -= n;
    }
    std::vector<Instr> records = readAll(reader, length);
    if (records.size() != length) {
      throw TraceError(fmt::format("'{}': {} ends inside instance {}", spec, reader.describe(), pick));
    }
    auto shared = std::make_shared<const KpathInstanceRecords>(std::move(records));
    instances[key] = shared;
    if (shared->records.size() <= kRecentRecords / 4) {  // a whole execve (370 k records) would push out the rest
      recent.push_back(shared);
      recentRecords += shared->records.size();
      while (recentRecords > kRecentRecords) {
        recentRecords -= recent.front()->records.size();
        recent.pop_front();
      }
    }
    return std::make_unique<KpathInstanceSource>(std::move(shared), stackSlot, page, name2);
  } catch (const std::exception& e) {
    if (dynamic_cast<const TraceError*>(&e)) throw;
    throw TraceError(fmt::format("'{}': corrupt kpath manifest {}: {}", spec, manifestPath, e.what()));
  }
}

}  // namespace smtlab
