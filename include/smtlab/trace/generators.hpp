// Synthetic workload generators: "gen:NAME[,key=value...]" makes a deterministic instruction stream from a seed, so
// that experiments need no downloaded traces. docs/traces.md defines every generator exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "smtlab/trace/source.hpp"

namespace smtlab {

// The generators' random numbers: SplitMix64 (Steele, Lea, Flood 2014). Written out here rather than taken from
// <random> because the standard distributions differ between library implementations; traces must not.
struct SplitMix64 {
  std::uint64_t state;
  explicit constexpr SplitMix64(std::uint64_t seed) : state(seed) {}
  constexpr std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) for n >= 1 (multiply-high, Lemire; the tiny bias is irrelevant here and keeps it branch-free).
  constexpr std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

// Where generated code and data live (documented in docs/traces.md).
inline constexpr std::uint64_t kGenCodeBase = 0x400000;
inline constexpr std::uint64_t kGenDataBase = 0x10000000;
// The per-record random stream starts from seed ^ kGenRecordStreamSalt; the permutation stream from seed.
inline constexpr std::uint64_t kGenRecordStreamSalt = 0xd1b54a32d192ed03ull;

// Makes the generator a spec names ("gen:" prefix required). Throws TraceError naming the spec and the key for an
// unknown generator or key, a duplicate key or a bad value.
std::unique_ptr<TraceSource> makeGenerator(const std::string& spec);

// For harnesses that build thousands of generators (the source_spec fuzz target): chase and chain,op=load build a
// line order over the whole footprint when they are made (64 MiB by default for chase: a million lines, tens of
// milliseconds). With max_cycle_lines > 0 they walk at most that many lines instead: the spec is parsed and checked
// exactly as without the cap, but the stream is a different one (same lines for footprints within the cap).
struct GeneratorOptions {
  std::uint64_t max_cycle_lines = 0;  // 0: no cap
};
std::unique_ptr<TraceSource> makeGenerator(const std::string& spec, const GeneratorOptions& options);

// The generator names, for help texts.
std::vector<std::string_view> generatorNames();

// The line order of a random single-cycle permutation of n lines (Sattolo's algorithm driven by rng):
// order[0] = 0 and order[t+1] = next(order[t]); every line appears exactly once. Used by chase and chain,op=load.
std::vector<std::uint32_t> cyclicLineOrder(std::uint64_t n, SplitMix64& rng);

}  // namespace smtlab
