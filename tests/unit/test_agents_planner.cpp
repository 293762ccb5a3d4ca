// Tests for agents/planner.hpp: ranking by share × headroom and the budget split.
#include "agents/planner.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

using namespace kernelopt::agents;

namespace {

KernelProfile profile(const std::string& name, double share, double roofline) {
  KernelProfile p;
  p.name = name;
  p.kind = "pointwise";
  p.share = share;
  p.roofline_fraction = roofline;
  p.bound = "memory";
  return p;
}

int total(const std::vector<PlanItem>& items) {
  return std::accumulate(items.begin(), items.end(), 0, [](int s, const PlanItem& i) { return s + i.budget; });
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(AgentsPlanner, OrdersByShareTimesHeadroom) {
  // scores: a 0.5*0.4=0.20, b 0.3*0.1=0.03, c 0.2*0.5=0.10
  const auto items = plan({profile("a", 0.5, 0.6), profile("b", 0.3, 0.9), profile("c", 0.2, 0.5)}, 40);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].kernel, "a");
  EXPECT_EQ(items[1].kernel, "c");
  EXPECT_EQ(items[2].kernel, "b");
  EXPECT_NEAR(items[0].score, 0.20, 1e-12);
  EXPECT_NEAR(items[1].score, 0.10, 1e-12);
  EXPECT_EQ(total(items), 40);
  EXPECT_GT(items[0].budget, items[1].budget);
  EXPECT_GE(items[2].budget, 4);
}

TEST(AgentsPlanner, BudgetProportionalAboveFloor) {
  // scores 0.3 and 0.1 of 40 -> 30 and 10.
  const auto items = plan({profile("a", 0.6, 0.5), profile("b", 0.2, 0.5)}, 40);
  EXPECT_EQ(items[0].budget, 30);
  EXPECT_EQ(items[1].budget, 10);
}

TEST(AgentsPlanner, FloorTakenFirstThenRestSplit) {
  // b's proportional share (100 * 0.01/1.01 ~ 1) is below the floor: b gets 4, a the other 96.
  const auto items = plan({profile("a", 0.5, 0.0), profile("b", 0.01, 0.5)}, 100, PlannerPolicy{0.001, 0.97, 4});
  EXPECT_EQ(items[0].budget, 96);
  EXPECT_EQ(items[1].budget, 4);
}

TEST(AgentsPlanner, SkipsSmallShareAndNearRoofline) {
  const auto items = plan({profile("tiny", 0.005, 0.1), profile("done", 0.6, 0.98), profile("work", 0.3, 0.5)}, 20);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].kernel, "work");
  EXPECT_EQ(items[0].budget, 20);
  for (std::size_t i = 1; i < 3; ++i) EXPECT_EQ(items[i].budget, 0) << items[i].kernel;
  const PlanItem& tiny = items[1].kernel == "tiny" ? items[1] : items[2];
  const PlanItem& done = items[1].kernel == "done" ? items[1] : items[2];
  EXPECT_TRUE(contains(tiny.why, "below the 1.0% minimum share")) << tiny.why;
  EXPECT_TRUE(contains(done.why, "at or above the 97% roofline ceiling")) << done.why;
}

TEST(AgentsPlanner, MinimumBudgetsMayExceedTotal) {
  const auto items = plan({profile("a", 0.4, 0.5), profile("b", 0.3, 0.5), profile("c", 0.2, 0.5)}, 5);
  for (const PlanItem& i : items) EXPECT_EQ(i.budget, 4) << i.kernel;
}

TEST(AgentsPlanner, TotalNeverExceededWhenFloorsFit) {
  for (int budget = 12; budget <= 57; ++budget) {
    const auto items = plan({profile("a", 0.37, 0.2), profile("b", 0.29, 0.4), profile("c", 0.11, 0.3)}, budget);
    EXPECT_EQ(total(items), budget);
    for (const PlanItem& i : items) EXPECT_GE(i.budget, 4);
  }
}

TEST(AgentsPlanner, RooflineAboveOneClampsScore) {
  const auto items = plan({profile("x", 0.5, 1.2)}, 10, PlannerPolicy{0.01, 2.0, 4});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_DOUBLE_EQ(items[0].score, 0.0);
  EXPECT_EQ(items[0].to_json()["kernel"], "x");
}

}  // namespace
