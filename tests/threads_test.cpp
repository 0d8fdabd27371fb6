// Thread safety as docs/library.md states it: a loaded Matrix is immutable and shared, select()
// is reentrant, the built-in data is initialised once however many threads ask first, the probe
// can run from several threads, and the C API's shared matrix handle serves many threads.
// Every concurrent result is compared with the single-threaded one. Meant for ThreadSanitizer too.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/attnsel.h"
#include "attnsel/catalog.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"
#include "probe/driver_api.hpp"

#if defined(__SANITIZE_THREAD__)
#define ATTNSEL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATTNSEL_TSAN 1
#endif
#endif

#ifdef ATTNSEL_TSAN
// libnvidia-ml.so itself races when several threads initialise it: ThreadSanitizer reports it
// inside the uninstrumented driver library, which is not attnsel's to fix. Races attnsel's own
// code takes part in are still reported (called_from_lib only silences the library's frames).
extern "C" const char* __tsan_default_suppressions() { return "called_from_lib:libnvidia-ml.so\n"; }
#endif

namespace attnsel {
namespace {

using json = nlohmann::json;
constexpr int kThreads = 16;
constexpr int kRounds = 2;

// Releases every thread at once, so that they really run together.
class StartLine {
 public:
  explicit StartLine(int threads) : waiting_(threads) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) go_.notify_all();
    else go_.wait(lock, [this] { return waiting_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable go_;
  int waiting_;
};

// Runs body(thread_index) on kThreads threads started together; returns every failure message.
template <class Body>
std::vector<std::string> run_together(int threads, Body body) {
  StartLine start(threads);
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t, failures[static_cast<std::size_t>(t)]);
    });
  for (auto& thread : pool) thread.join();
  std::vector<std::string> all;
  for (auto& f : failures) all.insert(all.end(), f.begin(), f.end());
  return all;
}

// What a request is, in words (the CLI's options), for both APIs.
struct Spec {
  std::string name;
  std::optional<std::string> gpu, platform, cuda;
  std::string model;
  std::string kv = "auto";
  int page_size = 0;
  int topk = 0;
  std::optional<std::string> attention, prefill, decode;
};

std::optional<std::string> opt(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return j[key].get<std::string>();
}

// tests/cases/select.json's requests, and a generated grid of GPUs x models x options.
std::vector<Spec> specs() {
  std::vector<Spec> out;
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/select.json");
  const json cases = json::parse(in)["cases"];
  for (const json& c : cases) {
    Spec s;
    s.name = c["name"].get<std::string>();
    s.gpu = opt(c, "gpu");
    s.platform = opt(c, "platform");
    s.cuda = opt(c, "cuda");
    s.model = c["model"].get<std::string>();
    s.kv = c.value("kv", std::string("auto"));
    s.page_size = c.value("page_size", 0);
    s.topk = c.value("topk", 0);
    s.attention = opt(c, "attention_backend");
    s.prefill = opt(c, "prefill_backend");
    s.decode = opt(c, "decode_backend");
    out.push_back(std::move(s));
  }
  for (const char* gpu : {"sm80", "H100", "B200", "sm120", "GB10", "MI300X"})
    for (const char* model : {"mha", "mla", "gdn", "dsa", "openai/gpt-oss-120b"})
      for (int variant = 0; variant < 4; ++variant) {
        Spec s;
        s.gpu = gpu;
        s.model = model;
        s.kv = variant & 1 ? "fp8_e4m3" : "auto";
        s.page_size = variant & 2 ? 64 : 0;
        s.topk = variant == 3 ? 4 : 0;
        s.name = std::string(gpu) + "/" + model + "/" + std::to_string(variant);
        out.push_back(std::move(s));
      }
  return out;
}

// The C++ request for a spec, or the error that stops it before selection.
Result<Request> cpp_request(const Catalog& catalog, const Spec& s) {
  Request r;
  auto device = resolve_device(catalog, DeviceSpec{s.gpu, s.platform ? parse_platform(*s.platform) : std::nullopt, s.cuda, "--gpu"});
  if (!device) return device.error();
  r.device = *device;
  auto model = resolve_model(catalog, s.model);
  if (!model) return model.error();
  r.model = *model;
  r.kv_cache_dtype = *parse_kv_dtype(s.kv);
  if (s.page_size > 0) r.page_size = s.page_size;
  r.speculative_topk = s.topk;
  r.attention = {s.attention, s.prefill, s.decode};
  return r;
}

// The whole answer as text: the JSON of a selection, or the error.
std::string answer(const std::shared_ptr<const Matrix>& matrix, const Result<Request>& request) {
  if (!request) return "error: " + request.error().describe();
  auto selection = select(matrix, *request);
  if (!selection) return "error: " + selection.error().describe();
  return render_json(*selection, -1);
}

TEST(Threads, SelectFrom16ThreadsMatchesSingleThreaded) {
  auto matrix = builtin_matrix();
  auto catalog = builtin_catalog();
  ASSERT_TRUE(matrix && catalog);
  const std::vector<Spec> all = specs();
  std::vector<Result<Request>> requests;
  std::vector<std::string> expected;
  for (const Spec& s : all) {
    requests.push_back(cpp_request(**catalog, s));
    expected.push_back(answer(*matrix, requests.back()));
  }
  ASSERT_GT(requests.size(), 200u);
  const std::size_t n = requests.size();

  const auto failures = run_together(kThreads, [&](int t, std::vector<std::string>& failed) {
    // Each thread walks the requests from its own offset, so different requests run at once.
    for (int round = 0; round < kRounds; ++round)
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(t) * n / kThreads) % n;
        if (answer(*matrix, requests[i]) != expected[i]) failed.push_back(all[i].name);
      }
  });
  EXPECT_TRUE(failures.empty()) << failures.size() << " differing results, first: " << failures.front();
}

// Run alone (ctest runs each test in its own process), the threads here are the first to ask
// for the built-in data: C++11 guarantees one initialisation of the function-local statics.
TEST(Threads, BuiltinDataIsInitialisedOnceFromManyThreads) {
  std::vector<const Matrix*> matrices(kThreads);
  std::vector<const Catalog*> catalogs(kThreads);
  const auto failures = run_together(kThreads, [&](int t, std::vector<std::string>& failed) {
    auto m = builtin_matrix();
    auto c = builtin_catalog();
    if (!m || !c) {
      failed.push_back("the built-in data did not load");
      return;
    }
    matrices[static_cast<std::size_t>(t)] = m->get();
    catalogs[static_cast<std::size_t>(t)] = c->get();
  });
  ASSERT_TRUE(failures.empty()) << failures.front();
  EXPECT_TRUE(std::all_of(matrices.begin(), matrices.end(), [&](const Matrix* m) { return m == matrices[0]; }));
  EXPECT_TRUE(std::all_of(catalogs.begin(), catalogs.end(), [&](const Catalog* c) { return c == catalogs[0]; }));
}

std::string describe(const ProbeReport& r) {
  std::string out = std::to_string(r.devices.size()) + " devices:";
  for (const DeviceInfo& d : r.devices) out += " " + d.name + "/" + d.arch + "/" + d.pci_bus_id;
  for (const ProbeAttempt& a : r.attempts) out += " | " + a.source + (a.ok ? " ok" : " failed");
  return out;
}

// attnsel's own probe machinery (worker thread, log, sysfs) from many threads, without drivers:
// no NVML, no CUDA driver, two MI300X in a sysfs fixture.
TEST(Threads, ProbeFromManyThreads) {
  driver::NvmlApi nvml;
  nvml.load_error = "not loaded in this test";
  driver::CudaDriverApi cuda;
  cuda.load_error = "not loaded in this test";
  ProbeOptions options;
  options.nvml = &nvml;
  options.cuda_driver = &cuda;
  options.sysfs_root = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/sysfs/mi300x_x2/nodes";
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  options.timeout = std::chrono::milliseconds(30000);
  const std::string expected = describe(probe_devices(options));
  ASSERT_EQ(expected.rfind("2 devices:", 0), 0u) << expected;
  const auto failures = run_together(kThreads, [&](int, std::vector<std::string>& failed) {
    const std::string got = describe(probe_devices(options));
    if (got != expected) failed.push_back(got);
  });
  EXPECT_TRUE(failures.empty()) << "expected " << expected << ", got " << failures.front();
}

// The real drivers (none on CI; NVML on a GPU host) from many threads at once.
TEST(Threads, RealProbeFromManyThreads) {
  ProbeOptions options;
  options.timeout = std::chrono::milliseconds(10000);
  const std::string expected = describe(probe_devices(options));
  const auto failures = run_together(8, [&](int, std::vector<std::string>& failed) {
    const std::string got = describe(probe_devices(options));
    if (got != expected) failed.push_back(got);
  });
  EXPECT_TRUE(failures.empty()) << "expected " << expected << ", got " << failures.front();
}

// The C API: one matrix handle shared by every thread, a request and a result per thread.
TEST(Threads, CApiSharedMatrixHandle) {
  attnsel_matrix* matrix = nullptr;
  ASSERT_EQ(attnsel_matrix_load_builtin(&matrix), ATTNSEL_OK);
  const std::vector<Spec> all = specs();

  // The JSON for a spec through the C API, or the failing status and message.
  const auto c_answer = [matrix](const Spec& s) -> std::string {
    attnsel_request* r = nullptr;
    if (attnsel_request_new(matrix, &r) != ATTNSEL_OK) return "request_new failed";
    attnsel_status status = ATTNSEL_OK;
    const auto set = [&](attnsel_status next) {
      if (status == ATTNSEL_OK) status = next;
    };
    const auto c_str = [](const std::optional<std::string>& v) { return v ? v->c_str() : nullptr; };
    set(attnsel_request_set_platform(r, c_str(s.platform)));
    set(attnsel_request_set_cuda(r, c_str(s.cuda)));
    if (s.gpu) set(attnsel_request_set_gpu(r, s.gpu->c_str()));
    set(attnsel_request_set_model(r, s.model.c_str()));
    set(attnsel_request_set_kv_cache_dtype(r, s.kv.c_str()));
    set(attnsel_request_set_page_size(r, s.page_size));
    set(attnsel_request_set_speculative_topk(r, s.topk));
    set(attnsel_request_set_backend(r, "attention", ATTNSEL_PHASE_ALL, c_str(s.attention)));
    set(attnsel_request_set_backend(r, "attention", ATTNSEL_PHASE_PREFILL, c_str(s.prefill)));
    set(attnsel_request_set_backend(r, "attention", ATTNSEL_PHASE_DECODE, c_str(s.decode)));
    attnsel_result* result = nullptr;
    set(attnsel_select(r, &result));
    std::string out;
    const char* text = nullptr;
    if (status == ATTNSEL_OK && attnsel_result_json(result, -1, &text) == ATTNSEL_OK) out = text;
    else out = std::string(attnsel_status_string(status)) + ": " + attnsel_request_last_error(r);
    attnsel_result_free(result);
    attnsel_request_free(r);
    return out;
  };

  std::vector<std::string> expected;
  for (const Spec& s : all) expected.push_back(c_answer(s));
  const std::size_t n = all.size();
  const auto failures = run_together(kThreads, [&](int t, std::vector<std::string>& failed) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(t) * n / kThreads) % n;
      if (c_answer(all[i]) != expected[i]) failed.push_back(all[i].name);
    }
  });
  EXPECT_EQ(attnsel_matrix_free(matrix), ATTNSEL_OK);
  EXPECT_TRUE(failures.empty()) << failures.size() << " differing results, first: " << failures.front();

  // The C API and the C++ API agree on every request that selects.
  auto cpp_matrix = builtin_matrix();
  auto catalog = builtin_catalog();
  ASSERT_TRUE(cpp_matrix && catalog);
  std::size_t compared = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string cpp = answer(*cpp_matrix, cpp_request(**catalog, all[i]));
    if (cpp.rfind("error: ", 0) == 0) continue;
    EXPECT_EQ(expected[i], cpp) << all[i].name;
    ++compared;
  }
  EXPECT_GT(compared, 150u);
}

}  // namespace
}  // namespace attnsel
