// "Did you mean" suggestions for unknown keys and choice values. The search stops early (a bounded edit distance: a
// full one made the config_set fuzz target slow); these tests pin the whole message text, derived by hand, and compare
// the suggestion for many typos with a plain full edit distance written here.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;

std::string overrideError(const std::string& assignment) {
  Config c;
  return configErrorOf([&] { applyOverride(c, assignment); });
}

TEST(ConfigSuggestion, WholeMessagesForTypicalTypos) {
  // Two letters swapped: distance 2 (two substitutions), within the bound max(3, 16 / 4 + 1) = 5.
  EXPECT_EQ(overrideError("core.rob.entires=3"),
            "--set core.rob.entires=3: unknown key 'core.rob.entires' (did you mean 'core.rob.entries'?)");
  // mem.l1i.size_kb (declared first) is 2 away, mem.l1d.size_kb 1: the later, closer key wins.
  EXPECT_EQ(overrideError("mem.l1d.sizekb=16"),
            "--set mem.l1d.sizekb=16: unknown key 'mem.l1d.sizekb' (did you mean 'mem.l1d.size_kb'?)");
  // 1 away from both mem.l1i.size_kb and mem.l1d.size_kb: the tie goes to the key declared first.
  EXPECT_EQ(overrideError("mem.l1x.size_kb=16"),
            "--set mem.l1x.size_kb=16: unknown key 'mem.l1x.size_kb' (did you mean 'mem.l1i.size_kb'?)");
  // One letter too many at the end of a long key.
  EXPECT_EQ(overrideError("core.fu.int_alu.thread_intervall=1"),
            "--set core.fu.int_alu.thread_intervall=1: unknown key 'core.fu.int_alu.thread_intervall' (did you "
            "mean 'core.fu.int_alu.thread_interval'?)");
  // The section left out: the one key that ends in ".rob.entries".
  EXPECT_EQ(overrideError("rob.entries=96"),
            "--set rob.entries=96: unknown key 'rob.entries' (did you mean 'core.rob.entries'?)");
  // Many keys end in ".entries", and no key is within 2 edits of "entries" (the only key shorter than 10 bytes is
  // "seed", 3 away in length alone): no suggestion.
  EXPECT_EQ(overrideError("entries=1"), "--set entries=1: unknown key 'entries'");
}

TEST(ConfigSuggestion, WholeMessagesForChoiceValues) {
  EXPECT_EQ(overrideError("core.fetch_policy=icont"),
            "--set core.fetch_policy=icont: key 'core.fetch_policy' must be one of round_robin | icount | brcount | "
            "misscount | stall | flush | mlp, got \"icont\" (did you mean 'icount'?)");
  // "oldest" is 6 edits from oldest_first: beyond the bound of 2, so no suggestion.
  EXPECT_EQ(overrideError("core.rename_policy=oldest"),
            "--set core.rename_policy=oldest: key 'core.rename_policy' must be one of round_robin | icount | "
            "oldest_first, got \"oldest\"");
}

// The documented rule, written plainly: a unique ".suffix" match, else the first key (in declaration order) with
// the smallest full edit distance below max(3, length / 4 + 1).
std::size_t fullEditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
  }
  return d[a.size()][b.size()];
}

std::string referenceSuggestion(const std::string& wrong, const std::vector<std::string>& keys) {
  std::vector<std::string> suffix;
  for (const auto& k : keys) {
    if (k.size() > wrong.size() && k.ends_with("." + wrong)) suffix.push_back(k);
  }
  if (suffix.size() == 1) return suffix.front();
  std::string best;
  std::size_t bound = std::max<std::size_t>(3, wrong.size() / 4 + 1);
  for (const auto& k : keys) {
    if (const std::size_t d = fullEditDistance(wrong, k); d < bound) {
      bound = d;
      best = k;
    }
  }
  return best;
}

TEST(ConfigSuggestion, AgreesWithAFullEditDistanceOnManyTypos) {
  std::vector<std::string> keys;
  for (const ParamInfo& p : describeConfig(Config{})) keys.push_back(p.key);
  ASSERT_GT(keys.size(), 50u);
  int compared = 0, suggested = 0;
  for (std::size_t n = 0; n < keys.size(); n += 3) {
    const std::string& k = keys[n];
    std::vector<std::string> typos = {
        k.substr(1),                                    // first letter lost
        k + "s",                                        // one too many
        k.substr(0, k.size() / 2) + "xy" + k.substr(k.size() / 2),  // two inserted
        std::string(k.rbegin(), k.rend()),              // reversed: nothing close
        k + k.substr(0, k.size() / 3),                  // a long tail
        k.substr(k.find('.') + 1),                      // without its first section
    };
    if (k.size() > 4) typos.push_back(k.substr(0, 2) + k[3] + k[2] + k.substr(4));  // swapped
    for (const std::string& t : typos) {
      if (std::find(keys.begin(), keys.end(), t) != keys.end()) continue;  // a real key
      const std::string expected = referenceSuggestion(t, keys);
      const std::string message = overrideError(t + "=1");
      const std::string tail = expected.empty() ? "'" : "' (did you mean '" + expected + "'?)";
      EXPECT_TRUE(message.ends_with("unknown key '" + t + tail)) << message;
      ++compared;
      suggested += expected.empty() ? 0 : 1;
    }
  }
  // Both outcomes occur, so the comparison tests the bound from both sides.
  EXPECT_GT(compared, 200);
  EXPECT_GT(suggested, 50);
  EXPECT_LT(suggested, compared);
}

}  // namespace
}  // namespace smtlab
