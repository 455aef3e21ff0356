// Replays the fuzz seed corpora (tests/fuzz/corpus/<target>) and the kept crash inputs (tests/fuzz/regressions/
// <target>) through the same harness as the libFuzzer targets, in the normal build: every input must be accepted or
// rejected with an smtlab::Error, never crash, throw anything else or break a round trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../fuzz/fuzz_inputs.hpp"
#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

using Feed = void (*)(fuzz::Bytes);

struct Outcome {
  int accepted = 0;
  int rejected = 0;
};

std::vector<std::uint8_t> slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Feeds every file under tests/fuzz/<folder>/<target>; a missing folder is no input.
Outcome replay(const std::string& folder, const std::string& target, Feed feed) {
  Outcome outcome;
  const fs::path dir = fs::path(SMTLAB_SOURCE_DIR) / "tests" / "fuzz" / folder / target;
  if (!fs::is_directory(dir)) return outcome;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::vector<std::uint8_t> data = slurp(entry.path());
    try {
      feed(fuzz::Bytes(data.data(), data.size()));
      ++outcome.accepted;
    } catch (const Error&) {
      ++outcome.rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    } catch (...) {
      ADD_FAILURE() << entry.path() << ": a non-standard exception";
    }
  }
  return outcome;
}

// The seed corpora hold both valid inputs and one of each known error, so a harness or reader that rejects (or
// accepts) everything shows up here.
void expectMixedCorpus(const std::string& target, Feed feed) {
  const Outcome seeds = replay("corpus", target, feed);
  EXPECT_GE(seeds.accepted, 2) << target;
  EXPECT_GE(seeds.rejected, 2) << target;
  replay("regressions", target, feed);
}

TEST(FuzzRegression, TextTraceSeedsAndKeptCrashes) { expectMixedCorpus("text_trace", fuzz::feedTextTrace); }

TEST(FuzzRegression, NativeTraceSeedsAndKeptCrashes) { expectMixedCorpus("native_trace", fuzz::feedNativeTrace); }

TEST(FuzzRegression, ConfigSeedsAndKeptCrashes) { expectMixedCorpus("config", fuzz::feedConfig); }

TEST(FuzzRegression, ConfigSetSeedsAndKeptCrashes) { expectMixedCorpus("config_set", fuzz::feedConfigSet); }

TEST(FuzzRegression, SourceSpecSeedsAndKeptCrashes) { expectMixedCorpus("source_spec", fuzz::feedSourceSpec); }

#ifdef SMTLAB_FUZZ_HAVE_CHAMPSIM
TEST(FuzzRegression, ChampSimTraceSeedsAndKeptCrashes) {
  expectMixedCorpus("champsim_trace", fuzz::feedChampSimTrace);
}
#endif

#ifdef SMTLAB_FUZZ_HAVE_TRACER
TEST(FuzzRegression, TracerRawSeedsAndKeptCrashes) { expectMixedCorpus("tracer_raw", fuzz::feedTracerRaw); }
#endif

// The harness itself: a known-bad line is a clean rejection, and the round trip holds for the docs' example.
TEST(FuzzHarness, TextRejectionIsATraceError) {
  const std::string bad = "400000 bogus dst=r1\n";
  EXPECT_THROW(fuzz::feedTextTrace(fuzz::Bytes(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size())),
               TraceError);
  const std::string good = "400000 int dst=r1 src=r2,r3\n40000c br src=r4 taken target=400000\n";
  EXPECT_NO_THROW(fuzz::feedTextTrace(fuzz::Bytes(reinterpret_cast<const std::uint8_t*>(good.data()), good.size())));
}

TEST(FuzzHarness, ConfigOverrideModeRejectsUnknownKeys) {
  const std::string bad = "!core.rob.entires=3\n";
  EXPECT_THROW(fuzz::feedConfig(fuzz::Bytes(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size())),
               ConfigError);
}

}  // namespace
}  // namespace smtlab
