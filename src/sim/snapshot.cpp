// Window snapshot files: the 16-byte header, the zstd frame with its checksum, the binding to config and traces.
#include "smtlab/sim/snapshot.hpp"

#include <zstd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/common/version.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {

namespace json = boost::json;

namespace {

constexpr std::array<char, 8> kMagic{'S', 'M', 'T', 'L', 'S', 'N', 'A', 'P'};
constexpr std::size_t kHeaderBytes = 16;

void putLe32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint32_t getLe32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
void putLe64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t getLe64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// The keys that time the detailed model or name a policy, read from the config when the model runs and held in no
// state a snapshot keeps: a snapshot may be simulated again with other values (another fetch policy, another
// latency). Every other key shapes what the state holds (sizes, associativities, threads, what is modelled).
constexpr std::array<std::string_view, 15> kFreeKeys{
    "core.fetch_policy",          "core.rename_policy",  "core.retire_policy",   "core.long_latency_miss",
    "core.branch.mispredict_penalty", "core.branch.btb_miss_penalty", "core.watchdog_cycles", "mem.l1i.latency",
    "mem.l1d.latency",            "mem.l2.latency",      "mem.llc.latency",      "mem.dram.latency",
    "mem.itlb.miss_latency",      "mem.dtlb.miss_latency", "system.freq_ghz"};
constexpr std::array<std::string_view, 3> kFreePrefixes{"energy.", "os.", "sim.skip"};

json::object traceIdentity(const std::string& spec) {
  json::object o{{"spec", spec}};
  std::error_code ec;
  const std::filesystem::path p(spec);
  if (std::filesystem::is_regular_file(p, ec)) {
    o["size"] = std::filesystem::file_size(p, ec);
    const auto mtime = std::filesystem::last_write_time(p, ec);
    o["mtime_ns"] = static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count());
  }
  return o;
}

}  // namespace

bool snapshotFreeKey(const std::string& key) {
  for (const auto k : kFreeKeys) {
    if (key == k) return true;
  }
  for (const auto p : kFreePrefixes) {
    if (key.rfind(p, 0) == 0) return true;
  }
  return false;
}

namespace {

// A framed file: the 16-byte header (magic, version, reserved), then one zstd frame with its content checksum holding
// the header JSON's length (64-bit little-endian), the header JSON and the payload. Window snapshots and window
// records share it.
std::string packFrame(const std::array<char, 8>& magic, std::uint32_t formatVersion, const json::object& header,
                      const std::string& payload, const std::string& name) {
  const std::string head = json::serialize(header);
  std::string content;
  content.reserve(8 + head.size() + payload.size());
  putLe64(content, head.size());
  content += head;
  content += payload;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) throw Error(fmt::format("{}: zstd: out of memory", name));
  std::string out(kHeaderBytes + ZSTD_compressBound(content.size()), '\0');
  std::memcpy(out.data(), magic.data(), magic.size());
  putLe32(out.data() + 8, formatVersion);
  putLe32(out.data() + 12, 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);  // fast: the state is mostly tables of small numbers
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const std::size_t n =
      ZSTD_compress2(cctx, out.data() + kHeaderBytes, out.size() - kHeaderBytes, content.data(), content.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) throw Error(fmt::format("{}: zstd compression failed: {}", name, ZSTD_getErrorName(n)));
  out.resize(kHeaderBytes + n);
  return out;
}

// Reads a framed file back; `what` names its kind in messages ("snapshot"), `again` says how to make it anew.
SnapshotFile unpackFrame(const std::array<char, 8>& magic, std::uint32_t formatVersion, std::string_view bytes,
                         const std::string& name, const std::string& what, const std::string& again) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), magic.data(), magic.size()) != 0) {
    throw Error(fmt::format("{}: not a {} (no {} header)", name, what, std::string_view(magic.data(), magic.size())));
  }
  const std::uint32_t version = getLe32(bytes.data() + 8);
  if (version > formatVersion) {
    throw Error(fmt::format("{}: {} format version {} is newer than this smtlab reads ({}); use the smtlab that wrote "
                            "it",
                            name, what, version, formatVersion));
  }
  if (version < formatVersion) {
    throw Error(fmt::format("{}: {} format version {} is older than this smtlab reads ({}); {}", name, what, version,
                            formatVersion, again));
  }
  const char* frame = bytes.data() + kHeaderBytes;
  const std::size_t frameBytes = bytes.size() - kHeaderBytes;
  const unsigned long long size = ZSTD_getFrameContentSize(frame, frameBytes);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size < 8 || size > (std::uint64_t{1} << 34)) {
    throw Error(fmt::format("{}: the {} is damaged (its compressed frame has no valid size)", name, what));
  }
  std::string content(static_cast<std::size_t>(size), '\0');
  const std::size_t got = ZSTD_decompress(content.data(), content.size(), frame, frameBytes);
  if (ZSTD_isError(got) || got != content.size()) {
    throw Error(fmt::format("{}: the {} is damaged ({})", name, what,
                            ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short content"));
  }
  const std::uint64_t headBytes = getLe64(content.data());
  if (headBytes > content.size() - 8) throw Error(fmt::format("{}: the {}'s header is damaged", name, what));
  SnapshotFile f;
  boost::system::error_code ec;
  json::value head = json::parse(std::string_view(content.data() + 8, headBytes), ec);
  if (ec || !head.is_object()) throw Error(fmt::format("{}: the {}'s header is not a JSON object", name, what));
  f.header = std::move(head.as_object());
  f.state = content.substr(8 + headBytes);
  return f;
}

constexpr std::array<char, 8> kRecordsMagic{'S', 'M', 'T', 'L', 'W', 'R', 'E', 'C'};

}  // namespace

void writeSnapshotFile(const std::filesystem::path& path, const json::object& header, const std::string& state) {
  writeFileAtomically(path, packFrame(kMagic, kSnapshotVersion, header, state, path.string()), "snapshot");
}

SnapshotFile readSnapshotFile(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the snapshot: {}", name, std::strerror(errno)));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(fmt::format("{}: cannot read the snapshot", name));
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    throw Error(fmt::format("{}: not a window snapshot (no SMTLSNAP header)", name));
  }
  return unpackFrame(kMagic, kSnapshotVersion, bytes, name, "snapshot",
                     "take the snapshots again (smtlab run --sample --snapshots)");
}

std::string packWindowRecords(const json::object& header, const std::string& payload) {
  return packFrame(kRecordsMagic, kWindowRecordsVersion, header, payload, "window record");
}

SnapshotFile unpackWindowRecords(std::string_view bytes, const std::string& name) {
  return unpackFrame(kRecordsMagic, kWindowRecordsVersion, bytes, name, "window record",
                     "simulate the windows again with this smtlab");
}

json::object snapshotBinding(const Config& config, const std::vector<std::string>& traces) {
  json::object keys;
  for (const ParamInfo& p : describeConfig(config)) keys[p.key] = p.value;
  json::array ids;
  for (const auto& t : traces) ids.push_back(traceIdentity(t));
  return json::object{{"config", std::move(keys)}, {"traces", std::move(ids)}};
}

void checkSnapshotBinding(const std::filesystem::path& path, const json::object& binding, const Config& config,
                          const std::vector<std::string>& traces) {
  const std::string name = path.string();
  const json::object now = snapshotBinding(config, traces);
  const json::value* keys = binding.if_contains("config");
  const json::value* ids = binding.if_contains("traces");
  if (keys == nullptr || !keys->is_object() || ids == nullptr || !ids->is_array()) {
    throw Error(fmt::format("{}: the snapshot names no config or traces", name));
  }
  for (const auto& [key, value] : now.at("config").as_object()) {
    const std::string k(key);
    if (snapshotFreeKey(k)) continue;
    const json::value* then = keys->as_object().if_contains(key);
    if (then == nullptr) {
      throw Error(fmt::format("{}: the snapshot has no value for {} (written by another smtlab version)", name, k));
    }
    if (*then != value) {
      throw Error(fmt::format("{}: taken with {} = {}, but this run has {} = {}; that key shapes the machine's state "
                              "and must be the same (only policies, latencies and energy may differ)",
                              name, k, shortQuote(std::string(then->as_string())), k,
                              shortQuote(std::string(value.as_string()))));
    }
  }
  const json::array& was = ids->as_array();
  const json::array& is = now.at("traces").as_array();
  if (was.size() != is.size()) {
    throw Error(fmt::format("{}: taken with {} traces, this run has {}", name, was.size(), is.size()));
  }
  for (std::size_t i = 0; i < is.size(); ++i) {
    if (was[i] != is[i]) {
      throw Error(fmt::format("{}: trace {} ({}) is not the one the snapshot was taken with (then {}, now {})", name, i,
                              shortQuote(std::string(is[i].as_object().at("spec").as_string())),
                              json::serialize(was[i]), json::serialize(is[i])));
    }
  }
}

}  // namespace smtlab
