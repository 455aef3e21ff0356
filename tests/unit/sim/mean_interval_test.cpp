// The confidence interval of a sampled run (sampling.hpp): values worked out by hand from Student's t, and the
// interval's coverage on synthetic samples whose true mean is known.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "smtlab/sim/sampling.hpp"

namespace smtlab {
namespace {

TEST(MeanInterval95, FiveSamplesByHand) {
  // mean 3, s = sqrt(10 / 4) = 1.5811; t(0.975, 4) = 2.7764 (tables); half-width = 2.7764 * 1.5811 / sqrt(5) = 1.9632.
  const std::vector<double> x{1, 2, 3, 4, 5};
  const MeanInterval r = meanInterval95(x);
  EXPECT_EQ(r.n, 5u);
  EXPECT_DOUBLE_EQ(r.mean, 3.0);
  EXPECT_NEAR(r.halfWidth, 1.9632, 5e-4);
}

TEST(MeanInterval95, ManySamplesApproachTheNormalQuantile) {
  // 1000 samples alternating 0 and 2: mean 1, s = sqrt(1000 / 999); t(0.975, 999) = 1.9623.
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(i % 2 == 0 ? 0.0 : 2.0);
  const MeanInterval r = meanInterval95(x);
  EXPECT_DOUBLE_EQ(r.mean, 1.0);
  EXPECT_NEAR(r.halfWidth, 1.9623 * std::sqrt(1000.0 / 999.0) / std::sqrt(1000.0), 1e-4);
}

TEST(MeanInterval95, FewerThanTwoSamplesHaveNoInterval) {
  EXPECT_TRUE(std::isnan(meanInterval95(std::vector<double>{}).mean));
  const MeanInterval one = meanInterval95(std::vector<double>{0.7});
  EXPECT_DOUBLE_EQ(one.mean, 0.7);
  EXPECT_TRUE(std::isnan(one.halfWidth));
  const MeanInterval same = meanInterval95(std::vector<double>{0.5, 0.5, 0.5});
  EXPECT_DOUBLE_EQ(same.halfWidth, 0.0);
}

TEST(MeanInterval95, CoversTheTrueMeanNinetyFivePercentOfTheTime) {
  // 2000 samples of 8 normal draws (mean 0.6, sd 0.2): the interval should hold 0.6 in 95 % of them. The count of
  // hits is binomial (n 2000, p 0.95, sd 9.7): 1900 +- 3.5 sd is 1866..1934. With z = 1.96 instead of t(7) = 2.36
  // the coverage would be about 91 % (1820), outside the band.
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> draw(0.6, 0.2);
  int hits = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> x(8);
    for (double& v : x) v = draw(rng);
    const MeanInterval r = meanInterval95(x);
    if (std::abs(r.mean - 0.6) <= r.halfWidth) ++hits;
  }
  EXPECT_GE(hits, 1866);
  EXPECT_LE(hits, 1934);
}

TEST(RatioInterval95, EqualInstructionsGiveSmartsIntervalOfTheMeanCpi) {
  // Stretches of 1000 instructions at CPI 1, 2, 3, 2: R = 4000 / 8000 = 0.5. Residuals y - R x = 500, 0, -500, 0:
  // s^2 = 500000 / 3; x-bar = 2000; variance = (500000 / 3) / (4 * 2000^2) = 0.0104167; t(0.975, 3) = 3.1824;
  // half-width = 3.1824 * 0.10206 = 0.32481. The same as the mean CPI's interval (2 +- 3.1824 * 0.8165 / 2 = 1.2992)
  // carried over to IPC: 1.2992 x 0.5^2 = 0.3248.
  const std::vector<double> y{1000, 1000, 1000, 1000};
  const std::vector<double> x{1000, 2000, 3000, 2000};
  const MeanInterval r = ratioInterval95(y, x);
  EXPECT_EQ(r.n, 4u);
  EXPECT_DOUBLE_EQ(r.mean, 0.5);
  EXPECT_NEAR(r.halfWidth, 0.32481, 2e-4);
}

TEST(RatioInterval95, WeighsStretchesByTheirLength) {
  // A long stretch at IPC 1 and a short one at IPC 1/3: the ratio is their instructions over their cycles, 4000 /
  // 6000, not the mean of the two IPCs (2/3 either way here) ... and 3000 + 1000 over 3000 + 3000 = 2/3; a stretch
  // twice as long at IPC 1/3 moves it to 5000 / 9000.
  EXPECT_DOUBLE_EQ(ratioInterval95(std::vector<double>{3000, 1000}, std::vector<double>{3000, 3000}).mean, 4000.0 / 6000);
  EXPECT_DOUBLE_EQ(ratioInterval95(std::vector<double>{3000, 2000}, std::vector<double>{3000, 6000}).mean, 5000.0 / 9000);
  // Proportional stretches have no spread: the interval is empty.
  EXPECT_DOUBLE_EQ(ratioInterval95(std::vector<double>{100, 200, 300}, std::vector<double>{200, 400, 600}).halfWidth,
                   0.0);
  EXPECT_TRUE(std::isnan(ratioInterval95(std::vector<double>{1}, std::vector<double>{2}).halfWidth));
  EXPECT_TRUE(std::isnan(ratioInterval95(std::vector<double>{}, std::vector<double>{}).mean));
}

}  // namespace
}  // namespace smtlab
