// Window snapshot files (docs/sampling.md "Window snapshots"): a sampled run's machine state at the start of one
// detailed window, with what it is bound to (the config keys that shape the state, the traces), so that the window can
// be simulated again without the functional warming before it: elsewhere, in parallel, or under another fetch policy.
//
// A file is an 16-byte header, "SMTLSNAP", the format version and a reserved word (little-endian 32-bit each), then
// one zstd frame with its content checksum (XXH64) holding a JSON header (the binding and the sampler's numbers) and
// the machine state as StateIo wrote it. zstd is what the native trace format uses (libzstd, already linked); its
// checksum covers every byte after the 16-byte header, so a damaged file is refused before any state is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "smtlab/config/config.hpp"

namespace smtlab {

inline constexpr std::uint32_t kSnapshotVersion = 1;
// Window records: what a worker of a parallel run from snapshots hands back (the per-window results of its range), in
// the same frame as a snapshot under the magic "SMTLWREC".
inline constexpr std::uint32_t kWindowRecordsVersion = 1;

struct SnapshotFile {
  boost::json::object header;
  std::string state;  // StateIo bytes
};

// Writes `path` under a temporary name and renames it into place (OutputFile).
void writeSnapshotFile(const std::filesystem::path& path, const boost::json::object& header, const std::string& state);
// Reads and checks a snapshot: refuses (smtlab::Error naming the file) a file that is not one, one of a newer or older
// format version, or one whose checksum does not match.
SnapshotFile readSnapshotFile(const std::filesystem::path& path);

// Window records in their frame, and read back: refused (smtlab::Error naming `name`) when not such a record, of
// another format version, or damaged (the checksum).
std::string packWindowRecords(const boost::json::object& header, const std::string& payload);
SnapshotFile unpackWindowRecords(std::string_view bytes, const std::string& name);

// What a snapshot is bound to: every config key with its value (as TOML text), and each trace's spec with, for a file,
// its size and modification time.
boost::json::object snapshotBinding(const Config& config, const std::vector<std::string>& traces);
// Throws smtlab::Error naming `path` and the first key whose value differs (a key that shapes the machine's state;
// the few keys that only time the detailed model may differ: snapshotFreeKeys) or the trace that changed.
void checkSnapshotBinding(const std::filesystem::path& path, const boost::json::object& binding, const Config& config,
                          const std::vector<std::string>& traces);
// The keys that may differ between the run that took a snapshot and the run that loads it: they are read from the
// config when the model runs and are held in no state a snapshot keeps (policies, latencies, energy, the clock rate).
bool snapshotFreeKey(const std::string& key);

}  // namespace smtlab
