// What attnsel costs inside a process: one selection on a loaded matrix (representative requests),
// loading and validating the built-in matrix, rendering a selection, and the whole-space sweep.
// Targets (issues 6, 16): one selection under 1 microsecond median, with no heap allocation for a
// valid automatic selection (the allocs/select counter).
//   build-bench/bench/attnsel_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <new>
#include <string>

#include <benchmark/benchmark.h>

#include "attnsel/catalog.hpp"
#include "attnsel/lint.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"
#include "matrix/image.hpp"

#include "support/allocation_counter.hpp"  // testing::allocations(), per benchmark iteration

namespace attnsel {
namespace {

const Catalog& catalog() {
  static const auto c = *builtin_catalog();
  return *c;
}

const std::shared_ptr<const Matrix>& matrix() {
  static const auto m = *builtin_matrix();
  return m;
}

Request request(const char* gpu, const char* model) {
  Request r;
  r.device = *resolve_device(catalog(), DeviceSpec{std::string(gpu), std::nullopt, std::nullopt, "--gpu"});
  r.model = *resolve_model(catalog(), model);
  return r;
}

// The requests: the README's example, DeepSeek on Blackwell, an explicit backend that cannot run,
// a hybrid GDN model, DeepSeek sparse attention.
Request representative(int which) {
  switch (which) {
    case 0: return request("sm90", "mla");
    case 1: return request("B200", "deepseek-ai/DeepSeek-V3");
    case 2: {
      Request r = request("sm90", "mla");
      r.attention.all = "flashmla";
      r.kv_cache_dtype = KvCacheDtype::fp8_e5m2;
      r.page_size = 16;
      return r;
    }
    case 3: return request("B200", "Qwen/Qwen3-Next-80B-A3B-Instruct");
    default: return request("H200", "deepseek-ai/DeepSeek-V3.2-Exp");
  }
}

const char* const kNames[] = {"sm90_mla_auto", "b200_deepseek_v3", "sm90_explicit_invalid_flashmla", "b200_gdn_qwen3_next",
                              "h200_dsa_deepseek_v32"};

void BM_Select(benchmark::State& state) {
  const Request r = representative(static_cast<int>(state.range(0)));
  const auto& m = matrix();
  state.SetLabel(kNames[state.range(0)]);
  const std::size_t before = testing::allocations();
  for (auto _ : state) {
    auto s = select(m, r);
    benchmark::DoNotOptimize(s);
  }
  state.counters["allocs/select"] =
      benchmark::Counter(static_cast<double>(testing::allocations() - before), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_Select)->DenseRange(0, 4);

// What the CLI pays before its first selection: parse and validate data/engines/sglang/matrix-0.5.12.json (the text the
// library embeds), and the GPU catalog and model table next to it.
std::string read_data(const char* name) {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/data/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void BM_LoadMatrix(benchmark::State& state) {
  const std::string text = read_data("engines/sglang/matrix-0.5.12.json");
  for (auto _ : state) {
    auto m = load_matrix(text, "data/engines/sglang/matrix-0.5.12.json");
    if (!m) state.SkipWithError(m.error().describe().c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_LoadMatrix)->Unit(benchmark::kMicrosecond);

void BM_LoadCatalog(benchmark::State& state) {
  const std::string gpus = read_data("gpus.json"), models = read_data("models.json");
  for (auto _ : state) {
    auto c = load_catalog(gpus, "gpus.json", models, "models.json");
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_LoadCatalog)->Unit(benchmark::kMicrosecond);

// The compiled image against the JSON it is built from (src/matrix/image.hpp), per built-in
// file: what builtin_matrix_file(), builtin_catalog() and builtin_profile() pay on first use.
const char* const kImageFiles[] = {"engines/sglang/matrix-0.5.12.json", "engines/sglang/matrix-0.5.13.json", "engines/vllm/matrix.json"};

void BM_MatrixFromJson(benchmark::State& state) {
  const char* file = kImageFiles[state.range(0)];
  state.SetLabel(file);
  for (auto _ : state) benchmark::DoNotOptimize(detail::load_builtin_matrix_json(file));
}
BENCHMARK(BM_MatrixFromJson)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

void BM_MatrixFromImage(benchmark::State& state) {
  const char* file = kImageFiles[state.range(0)];
  state.SetLabel(file);
  if (!image::matrix(file)) state.SkipWithError("this library has no compiled image");
  for (auto _ : state) benchmark::DoNotOptimize(image::matrix(file));
}
BENCHMARK(BM_MatrixFromImage)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

void BM_CatalogFromJson(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(detail::load_builtin_catalog_json());
}
BENCHMARK(BM_CatalogFromJson)->Unit(benchmark::kMicrosecond);

void BM_CatalogFromImage(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(image::catalog());
}
BENCHMARK(BM_CatalogFromImage)->Unit(benchmark::kMicrosecond);

const char* const kProfiles[] = {"engines/sglang/profile.json", "engines/vllm/profile.json"};

void BM_ProfileFromJson(benchmark::State& state) {
  state.SetLabel(kProfiles[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(detail::load_builtin_profile_json(kProfiles[state.range(0)]));
}
BENCHMARK(BM_ProfileFromJson)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);

void BM_ProfileFromImage(benchmark::State& state) {
  state.SetLabel(kProfiles[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(image::profile(kProfiles[state.range(0)]));
}
BENCHMARK(BM_ProfileFromImage)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);

void BM_DescribeAndRenderJson(benchmark::State& state) {
  const Selection s = *select(matrix(), representative(0));
  for (auto _ : state) {
    std::size_t n = 0;
    for (const auto* list : {&s.errors, &s.warnings, &s.notes}) n += s.describe(*list).size();
    std::string j = render_json(s);
    benchmark::DoNotOptimize(j);
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_DescribeAndRenderJson);

void BM_RenderText(benchmark::State& state) {
  const Selection s = *select(matrix(), representative(0));
  for (auto _ : state) {
    std::string t = render_text(s);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_RenderText);

// The whole space of `attnsel matrix lint`: configurations per second, per engine (its newest
// matrix), on 1 or 2 threads, with or without the explicit probes.
const char* const kEngines[] = {"sglang", "vllm", "sglang-diffusion"};

void BM_WholeSpace(benchmark::State& state) {
  const char* engine = kEngines[state.range(0)];
  const auto m = builtin_matrix(engine);
  if (!m) {
    state.SkipWithError(m.error().describe().c_str());
    return;
  }
  LintOptions o;
  o.threads = static_cast<std::size_t>(state.range(1));
  o.explicit_probes = state.range(2) != 0;
  std::size_t configurations = 0, selections = 0;
  for (auto _ : state) {
    LintReport r = lint_matrix(*m, catalog(), o);
    configurations += r.configurations;
    selections += r.selections;
  }
  state.counters["configs/s"] = benchmark::Counter(static_cast<double>(configurations), benchmark::Counter::kIsRate);
  state.counters["selections/s"] = benchmark::Counter(static_cast<double>(selections), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(engine) + (o.explicit_probes ? ", with explicit probes" : ", automatic + replay + search only") + ", " +
                 std::to_string(o.threads) + (o.threads == 1 ? " thread" : " threads"));
}
BENCHMARK(BM_WholeSpace)
    ->ArgsProduct({{0, 1, 2}, {1, 2}, {1}})
    ->Args({0, 1, 0})
    ->Args({0, 2, 0})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace attnsel

BENCHMARK_MAIN();
