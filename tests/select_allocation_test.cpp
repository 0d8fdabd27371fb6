// A valid automatic selection allocates nothing on the heap; the alternatives it leaves unjudged are
// judged on first read, exactly as an eager engine judges them. Its own executable: it replaces the
// global operator new to count allocations.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnsel/catalog.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"
#include "engine/engine.hpp"

#include "support/allocation_counter.hpp"

namespace attnsel {
namespace {

const Catalog& catalog() {
  static const auto c = *builtin_catalog();
  return *c;
}

Request request(const char* gpu, const char* model) {
  Request r;
  r.device = *resolve_device(catalog(), DeviceSpec{std::string(gpu), std::nullopt, std::nullopt, "--gpu"});
  r.model = *resolve_model(catalog(), model);
  return r;
}

// Heap allocations made by one selection (matrix loaded, request built, result destroyed).
std::size_t allocations_of_select(const std::shared_ptr<const Matrix>& m, const Request& r) {
  const std::size_t before = testing::allocations();
  {
    auto s = select(m, r);
    EXPECT_TRUE(s.ok());
    EXPECT_TRUE(s->ok());
  }
  return testing::allocations() - before;
}

TEST(SelectAllocation, AValidAutomaticSelectionAllocatesNothing) {
  auto m = *builtin_matrix();
  for (const char* model : {"mla", "mha"}) {
    SCOPED_TRACE(model);
    const Request r = request("sm90", model);
    EXPECT_EQ(allocations_of_select(m, r), 0u);
  }
}

// The counter counts: the same selection allocates once its alternatives are read.
TEST(SelectAllocation, ReadingTheAlternativesJudgesThem) {
  auto m = *builtin_matrix();
  const Request r = request("sm90", "mla");
  auto s = select(m, r);
  ASSERT_TRUE(s.ok());
  const std::size_t before = testing::allocations();
  EXPECT_FALSE(s->rejected.empty());
  EXPECT_GT(testing::allocations(), before);
  const std::size_t after_first = testing::allocations();
  EXPECT_FALSE(s->alternatives.empty());
  EXPECT_EQ(testing::allocations(), after_first) << "judged once, for both lists";
}

// Judged later or at once, for every engine and a spread of requests: the same rejections (backend,
// rules, phases) and alternatives, and the same rendered selection.
TEST(SelectAllocation, LaterJudgingMatchesJudgingAtOnce) {
  auto generations = builtin_generations();
  ASSERT_TRUE(generations.ok());
  std::size_t compared = 0;
  for (const auto& g : *generations) {
    auto m = builtin_matrix_file(g.file);
    ASSERT_TRUE(m.ok()) << m.error().describe();
    for (const char* gpu : {"sm80", "sm90", "sm100", "gfx942"})
      for (const char* model : {"mha", "mla", "gdn", "dsa"})
        for (std::optional<int> page : {std::optional<int>{}, std::optional<int>{64}})
          for (int topk : {0, 2}) {
            Request r = request(gpu, model);
            r.page_size = page;
            r.speculative_topk = topk;
            auto lazy = select(*m, r);
            auto eager = detail::select_judging_all(*m, r);
            ASSERT_EQ(lazy.ok(), eager.ok());
            if (!lazy.ok()) continue;
            SCOPED_TRACE(g.file + " " + gpu + " " + model);
            const Selection copy = *lazy;  // a copy made before the first read judges on its own
            for (const Selection* s : {static_cast<const Selection*>(&*lazy), &copy}) {
              ASSERT_EQ(s->rejected.size(), eager->rejected.size());
              for (std::size_t i = 0; i < s->rejected.size(); ++i) {
                EXPECT_EQ(s->rejected[i].backend, eager->rejected[i].backend);
                ASSERT_EQ(s->rejected[i].reasons.size(), eager->rejected[i].reasons.size());
                for (std::size_t k = 0; k < s->rejected[i].reasons.size(); ++k) {
                  EXPECT_EQ(s->rejected[i].reasons[k].rule, eager->rejected[i].reasons[k].rule);
                  EXPECT_EQ(s->rejected[i].reasons[k].phase, eager->rejected[i].reasons[k].phase);
                }
              }
              EXPECT_EQ(static_cast<const std::vector<BackendId>&>(s->alternatives),
                        static_cast<const std::vector<BackendId>&>(eager->alternatives));
            }
            EXPECT_EQ(render_json(*lazy), render_json(*eager));
            ++compared;
          }
  }
  EXPECT_GT(compared, 100u);
}

// Moved and copied selections keep what was judged, and judge on their own what was not.
TEST(SelectAllocation, CopiesAndMovesKeepTheirAlternatives) {
  auto m = *builtin_matrix();
  auto s = select(m, request("sm90", "mla"));
  ASSERT_TRUE(s.ok());
  const std::size_t rejected = s->rejected.size();
  ASSERT_GT(rejected, 0u);
  Selection copy = *s;
  EXPECT_EQ(copy.rejected.size(), rejected);
  Selection moved = std::move(copy);
  EXPECT_EQ(moved.rejected.size(), rejected);
  Selection assigned;
  EXPECT_TRUE(assigned.rejected.empty()) << "a selection of nothing rejects nothing";
  assigned = moved;
  EXPECT_EQ(assigned.rejected.size(), rejected);
  EXPECT_EQ(assigned.rejected[0].backend, s->rejected[0].backend);
}

}  // namespace
}  // namespace attnsel
