// Range and consistency checks on a whole Config: what a single key's range cannot say (entries per thread,
// power-of-two set counts, latencies that must not decrease down the hierarchy).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "param_table.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

bool isPow2(std::uint64_t v) { return std::has_single_bit(v); }

class Checker {
 public:
  explicit Checker(const Config& c) : c_(c), where_(c.source.empty() ? std::string("config") : c.source) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError(fmt::format("{}: {}", where_, message));
  }

  void ranges() const {
    // Setting each key to its own value re-runs the range check of the single key table.
    Config copy = c_;
    for (const auto& p : config_detail::paramTable(copy)) {
      const std::string err = std::visit(
          [&](auto* f) -> std::string {
            using T = std::remove_pointer_t<decltype(f)>;
            if constexpr (std::is_same_v<T, double>) {
              return config_detail::setFloat(p, *f);
            } else if constexpr (std::is_same_v<T, Sharing>) {
              return sharingName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, FetchPolicy>) {
              return fetchPolicyName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, ThreadChoice>) {
              return threadChoiceName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, LongLatencyMiss>) {
              return longLatencyMissName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, MemDependence>) {
              return memDependenceName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, AllocationPolicy>) {
              return allocationPolicyName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_same_v<T, ClimbMetric>) {
              return climbMetricName(*f) == "?" ? fmt::format("key '{}' has an invalid value", p.key) : "";
            } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
              if (static_cast<std::uint64_t>(*f) > static_cast<std::uint64_t>(INT64_MAX)) {
                return fmt::format("key '{}' = {} is out of range {}", p.key, *f, config_detail::rangeText(p));
              }
              return config_detail::setInteger(p, static_cast<std::int64_t>(*f));
            } else {
              return "";
            }
          },
          p.field);
      if (!err.empty()) fail(err);
    }
  }

  void queue(std::string_view name, const QueueConfig& q) const {
    const std::uint32_t threads = c_.core.threads;
    if (q.sharing == Sharing::Partitioned && q.entries < threads) {
      fail(fmt::format("core.{0}.entries = {1} is fewer than core.threads = {2}: a partitioned queue needs at least "
                       "one entry per thread",
                       name, q.entries, threads));
    }
    if (q.sharing == Sharing::Capped) {
      if (!(q.cap > 0.0 && q.cap <= 1.0)) {
        fail(fmt::format("core.{}.cap = {} must be in (0, 1] when core.{}.sharing is capped", name, q.cap, name));
      }
      if (q.cap * q.entries < 1.0) {
        fail(fmt::format("core.{0}.cap = {1} x core.{0}.entries = {2} leaves a thread less than one entry", name,
                         q.cap, q.entries));
      }
    }
  }

  // Issue ports: every unit class a uop can need is fed by some port (else that uop never issues);
  // within a port every rate divides the port's fastest rate, so a uop takes a whole number of its slots.
  void ports(const std::vector<PortConfig>& ports) const {
    if (ports.empty() || ports.size() > kMaxPorts) {
      fail(fmt::format("core.ports lists {} ports; it needs 1 to {}", ports.size(), kMaxPorts));
    }
    for (int c = 0; c < kUnitClasses; ++c) {
      bool fed = false;
      for (const PortConfig& p : ports) fed |= p.rate[c] != 0;
      if (!fed) {
        fail(fmt::format("core.ports: no port feeds unit class '{}', so its uops could never issue",
                         unitClassName(static_cast<UnitClass>(c))));
      }
    }
    for (std::size_t i = 0; i < ports.size(); ++i) {
      int fastest = 0;
      for (int r : ports[i].rate) fastest = std::max(fastest, r);
      if (fastest == 0) fail(fmt::format("core.ports port {} feeds no unit class", i));
      for (int c = 0; c < kUnitClasses; ++c) {
        const int r = ports[i].rate[c];
        if (r < 0 || r > 8 || (r != 0 && fastest % r != 0)) {
          fail(fmt::format("core.ports port {} (\"{}\"): rate {} of '{}' must divide the port's fastest rate {}", i,
                           portText(ports[i]), r, unitClassName(static_cast<UnitClass>(c)), fastest));
        }
      }
    }
  }

  // A register file must leave room for renaming after the architectural state of every thread.
  void registerFile(std::string_view name, const RegisterFileConfig& f) const {
    if (f.entries == 0) return;  // unlimited
    const std::uint32_t threads = c_.core.threads;
    const bool replicated = f.sharing == Sharing::Replicated;
    const std::uint64_t held = std::uint64_t{f.architectural} * (replicated ? 1 : threads);
    const std::uint64_t minimum = held + (f.sharing == Sharing::Partitioned ? threads : 1);
    if (f.entries < minimum) {
      fail(fmt::format("core.{0}.entries = {1} leaves no register to rename with: {2} x core.{0}.architectural = {3} "
                       "hold committed state{4}; give at least {5} (or 0 for unlimited)",
                       name, f.entries, replicated ? 1 : threads, f.architectural,
                       replicated ? " (replicated: per thread)" : "", minimum));
    }
    if (f.sharing == Sharing::Capped && !(f.cap > 0.0 && f.cap <= 1.0)) {
      fail(fmt::format("core.{}.cap = {} must be in (0, 1] when core.{}.sharing is capped", name, f.cap, name));
    }
    if (f.sharing == Sharing::Capped && f.cap * static_cast<double>(f.entries - held) < 1.0) {
      fail(fmt::format("core.{0}.cap = {1} x the {2} renaming registers of core.{0} leaves a thread less than one",
                       name, f.cap, f.entries - held));
    }
  }

  void cache(std::string_view name, const CacheConfig& cache) const {
    const std::uint64_t bytes = std::uint64_t{cache.size_kb} * 1024;
    const std::uint64_t setBytes = std::uint64_t{cache.assoc} * c_.mem.line_bytes;
    if (bytes % setBytes != 0 || !isPow2(bytes / setBytes)) {
      fail(fmt::format("mem.{0}: size_kb * 1024 / (assoc * mem.line_bytes) = {1} / ({2} * {3}) must be a "
                       "power-of-two number of sets (check mem.{0}.size_kb and mem.{0}.assoc)",
                       name, bytes, cache.assoc, c_.mem.line_bytes));
    }
  }

  void notFaster(std::string_view upper, const CacheConfig& u, std::string_view lower, const CacheConfig& l) const {
    if (l.latency < u.latency) {
      fail(fmt::format("mem.{}.latency = {} is below mem.{}.latency = {}: latencies are total load-to-use cycles, so "
                       "they cannot decrease down the hierarchy",
                       lower, l.latency, upper, u.latency));
    }
  }

  void tlb(std::string_view name, const TlbConfig& t) const {
    if (t.entries % t.assoc != 0 || !isPow2(t.entries / t.assoc)) {
      fail(fmt::format("mem.{0}: entries / assoc = {1} / {2} must be a power-of-two number of sets", name, t.entries,
                       t.assoc));
    }
  }

  void all() const {
    ranges();
    const CoreConfig& k = c_.core;
    queue("uop_queue", k.uop_queue);
    queue("rob", k.rob);
    queue("iq", k.iq);
    queue("lq", k.lq);
    queue("sq", k.sq);
    registerFile("int_prf", k.int_prf);
    registerFile("fp_prf", k.fp_prf);

    ports(k.ports);

    const BranchConfig& b = k.branch;
    if (!isPow2(b.pht_entries)) fail(fmt::format("core.branch.pht_entries = {} must be a power of two", b.pht_entries));
    if (!isPow2(b.pht_assoc) || b.pht_assoc > b.pht_entries) {
      fail(fmt::format("core.branch.pht_assoc = {} must be a power of two no larger than core.branch.pht_entries = {}",
                       b.pht_assoc, b.pht_entries));
    }
    if (!isPow2(k.mlp_predictor_entries)) {
      fail(fmt::format("core.mlp_predictor_entries = {} must be a power of two", k.mlp_predictor_entries));
    }
    if (!isPow2(k.lsu.predictor_entries)) {
      fail(fmt::format("core.lsu.predictor_entries = {} must be a power of two", k.lsu.predictor_entries));
    }
    if (b.btb_entries % b.btb_assoc != 0 || !isPow2(b.btb_entries / b.btb_assoc)) {
      fail(fmt::format("core.branch.btb_entries / core.branch.btb_assoc = {} / {} must be a power-of-two number of "
                       "sets",
                       b.btb_entries, b.btb_assoc));
    }

    const MemConfig& m = c_.mem;
    if (!isPow2(m.line_bytes)) fail(fmt::format("mem.line_bytes = {} must be a power of two", m.line_bytes));
    if (!isPow2(m.page_bytes)) fail(fmt::format("mem.page_bytes = {} must be a power of two", m.page_bytes));
    if (m.page_bytes < m.line_bytes) {
      fail(fmt::format("mem.page_bytes = {} is smaller than mem.line_bytes = {}", m.page_bytes, m.line_bytes));
    }
    cache("l1i", m.l1i);
    cache("l1d", m.l1d);
    cache("l2", m.l2);
    cache("llc", m.llc);
    notFaster("l1d", m.l1d, "l2", m.l2);
    notFaster("l1i", m.l1i, "l2", m.l2);
    notFaster("l2", m.l2, "llc", m.llc);
    tlb("itlb", m.itlb);
    tlb("dtlb", m.dtlb);
    topology();
  }

  // Topology: a bound on the machine's size, so a typo cannot ask for millions of cores.
  void topology() const {
    const std::uint64_t cpus = std::uint64_t{c_.system.packages} * c_.system.cores * c_.core.threads;
    if (cpus > kMaxLogicalCpus) {
      fail(fmt::format("system.packages x system.cores x core.threads = {} x {} x {} = {} logical CPUs, more than {}",
                       c_.system.packages, c_.system.cores, c_.core.threads, cpus, kMaxLogicalCpus));
    }
    if (m().stream_prefetch.streams > 0) {
      for (const auto& [key, bytes] : {std::pair{"trigger_bytes", m().stream_prefetch.trigger_bytes},
                                       std::pair{"ahead_bytes", m().stream_prefetch.ahead_bytes}}) {
        if (bytes < m().line_bytes || bytes > m().page_bytes) {
          fail(fmt::format("mem.stream_prefetch.{} = {} must lie between mem.line_bytes ({}) and mem.page_bytes ({}): "
                           "a stream never leaves its page", key, bytes, m().line_bytes, m().page_bytes));
        }
      }
    }
    // 32-bit paging's 2 levels index 10 bits each (4-byte entries); every other depth 9 bits (8-byte entries).
    const std::uint32_t bits = m().page_walk.levels == 2 ? 10 : 9;
    if (m().page_walk.caches && std::countr_zero(m().page_bytes) + bits * m().page_walk.levels > 64) {
      fail(fmt::format("mem.page_walk.levels = {} with mem.page_bytes = {} covers more than 64 address bits",
                       m().page_walk.levels, m().page_bytes));
    }
  }
  const MemConfig& m() const { return c_.mem; }
  static constexpr std::uint64_t kMaxLogicalCpus = 1024;

 private:
  const Config& c_;
  std::string where_;
};

}  // namespace

void validateConfig(const Config& config) { Checker(config).all(); }

}  // namespace smtlab
