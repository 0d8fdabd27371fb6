// The C API (attnsel/attnsel.h): the same answers as the C++ API, and clear status codes with
// messages, never a crash, for misuse: null, freed and wrong-kind handles, bad inputs, unknown names.
#include "attnsel/attnsel.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/version.hpp"

namespace {

using json = nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Owns the handles a test creates; frees them even when an assertion fails.
struct Handles {
  std::vector<attnsel_matrix*> matrices;
  std::vector<attnsel_request*> requests;
  std::vector<attnsel_result*> results;
  std::vector<attnsel_probe*> probes;
  ~Handles() {
    for (auto* h : results) attnsel_result_free(h);
    for (auto* h : requests) attnsel_request_free(h);
    for (auto* h : probes) attnsel_probe_free(h);
    for (auto* h : matrices) attnsel_matrix_free(h);
  }
};

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(attnsel_matrix_load_builtin(&matrix_), ATTNSEL_OK);
    handles_.matrices.push_back(matrix_);
  }

  attnsel_request* new_request() {
    attnsel_request* r = nullptr;
    EXPECT_EQ(attnsel_request_new(matrix_, &r), ATTNSEL_OK);
    handles_.requests.push_back(r);
    return r;
  }

  // A request for a GPU and a model, ready to select.
  attnsel_request* request_for(const char* gpu, const char* model) {
    attnsel_request* r = new_request();
    EXPECT_EQ(attnsel_request_set_gpu(r, gpu), ATTNSEL_OK) << attnsel_request_last_error(r);
    EXPECT_EQ(attnsel_request_set_model(r, model), ATTNSEL_OK) << attnsel_request_last_error(r);
    return r;
  }

  attnsel_result* select(attnsel_request* r) {
    attnsel_result* result = nullptr;
    EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_OK) << attnsel_request_last_error(r);
    if (result != nullptr) handles_.results.push_back(result);
    return result;
  }

  static std::vector<std::string> flags(attnsel_result* r) {
    size_t count = 0;
    EXPECT_EQ(attnsel_result_flag_count(r, &count), ATTNSEL_OK);
    std::vector<std::string> out;
    for (size_t i = 0; i < count; ++i) {
      const char* flag = nullptr;
      EXPECT_EQ(attnsel_result_flag(r, i, &flag), ATTNSEL_OK);
      out.emplace_back(flag);
    }
    return out;
  }

  static std::set<std::string> rules(attnsel_result* r, attnsel_diagnostic_kind kind) {
    size_t count = 0;
    EXPECT_EQ(attnsel_result_diagnostic_count(r, kind, &count), ATTNSEL_OK);
    std::set<std::string> out;
    for (size_t i = 0; i < count; ++i) {
      const char *rule = nullptr, *message = nullptr, *source = nullptr;
      EXPECT_EQ(attnsel_result_diagnostic(r, kind, i, &rule, &message, &source), ATTNSEL_OK);
      EXPECT_STRNE(message, "");
      out.insert(rule);
    }
    return out;
  }

  static std::string backend(attnsel_result* r, const char* slot, attnsel_phase phase) {
    const char* name = nullptr;
    EXPECT_EQ(attnsel_result_backend(r, slot, phase, &name), ATTNSEL_OK) << attnsel_result_last_error(r);
    return name != nullptr ? name : "(none)";
  }

  attnsel_matrix* matrix_ = nullptr;
  Handles handles_;
};

// ---- versions and statuses ----

TEST(CApiVersion, LibraryAndHeadersAgree) {
  EXPECT_STREQ(attnsel_version(), ATTNSEL_VERSION_STRING);
  EXPECT_STREQ(attnsel::version(), ATTNSEL_VERSION_STRING);
  EXPECT_EQ(ATTNSEL_VERSION, ATTNSEL_VERSION_MAJOR * 10000 + ATTNSEL_VERSION_MINOR * 100 + ATTNSEL_VERSION_PATCH);
  const std::string expected = std::to_string(ATTNSEL_VERSION_MAJOR) + "." + std::to_string(ATTNSEL_VERSION_MINOR) + "." +
                               std::to_string(ATTNSEL_VERSION_PATCH);
  EXPECT_EQ(expected, ATTNSEL_VERSION_STRING);
}

TEST(CApiStatus, EveryStatusHasItsOwnDescription) {
  std::set<std::string> seen;
  for (int s = ATTNSEL_OK; s <= ATTNSEL_ERR_INTERNAL; ++s) {
    const char* text = attnsel_status_string(static_cast<attnsel_status>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "unknown status") << s;
    EXPECT_TRUE(seen.insert(text).second) << text;
  }
  EXPECT_STREQ(attnsel_status_string(static_cast<attnsel_status>(999)), "unknown status");
  EXPECT_STREQ(attnsel_status_string(ATTNSEL_STATUS_FORCE_INT), "unknown status");
}

// ---- matrix ----

TEST_F(CApi, BuiltinMatrixIsTheCppOne) {
  const char* version = nullptr;
  int schema = 0;
  ASSERT_EQ(attnsel_matrix_version(matrix_, &version), ATTNSEL_OK);
  ASSERT_EQ(attnsel_matrix_schema_version(matrix_, &schema), ATTNSEL_OK);
  auto cpp = attnsel::builtin_matrix();
  ASSERT_TRUE(cpp);
  EXPECT_EQ(version, (*cpp)->info().version);
  EXPECT_EQ(schema, (*cpp)->info().schema_version);
  EXPECT_STREQ(attnsel_matrix_last_error(matrix_), "");
}

TEST_F(CApi, MatrixFromFileAndString) {
  const std::string path = std::string(ATTNSEL_SOURCE_DIR) + "/data/sglang.json";
  attnsel_matrix* from_file = nullptr;
  ASSERT_EQ(attnsel_matrix_load_file(path.c_str(), &from_file), ATTNSEL_OK) << attnsel_matrix_last_error(from_file);
  handles_.matrices.push_back(from_file);

  const std::string text = read_file(path);
  attnsel_matrix* from_string = nullptr;
  ASSERT_EQ(attnsel_matrix_load_string(text.data(), text.size(), "mine.json", &from_string), ATTNSEL_OK);
  handles_.matrices.push_back(from_string);

  // Both plan like the built-in one.
  for (attnsel_matrix* m : {from_file, from_string}) {
    attnsel_request* r = nullptr;
    ASSERT_EQ(attnsel_request_new(m, &r), ATTNSEL_OK);
    handles_.requests.push_back(r);
    ASSERT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_OK);
    ASSERT_EQ(attnsel_request_set_model(r, "mla"), ATTNSEL_OK);
    attnsel_result* result = select(r);
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "fa3");
  }
}

TEST_F(CApi, MatrixLoadFailuresStillGiveAHandleWithTheReason) {
  struct Case {
    const char* name;
    attnsel_status expected;
    const char* in_message;
    attnsel_status (*load)(attnsel_matrix**);
  };
  const Case cases[] = {
      {"missing file", ATTNSEL_ERR_IO, "/nonexistent/matrix.json",
       [](attnsel_matrix** out) { return attnsel_matrix_load_file("/nonexistent/matrix.json", out); }},
      {"null path", ATTNSEL_ERR_INVALID_ARGUMENT, "path",
       [](attnsel_matrix** out) { return attnsel_matrix_load_file(nullptr, out); }},
      {"not JSON", ATTNSEL_ERR_PARSE, "broken.json",
       [](attnsel_matrix** out) { return attnsel_matrix_load_string("{\"slots\": [", 11, "broken.json", out); }},
      {"empty", ATTNSEL_ERR_PARSE, "string", [](attnsel_matrix** out) { return attnsel_matrix_load_string(nullptr, 0, nullptr, out); }},
      {"not a matrix", ATTNSEL_ERR_INVALID_MATRIX, "empty.json",
       [](attnsel_matrix** out) { return attnsel_matrix_load_string("{}", 2, "empty.json", out); }},
      {"null text with a size", ATTNSEL_ERR_INVALID_ARGUMENT, "json",
       [](attnsel_matrix** out) { return attnsel_matrix_load_string(nullptr, 5, nullptr, out); }},
      {"origin not UTF-8", ATTNSEL_ERR_INVALID_ARGUMENT, "UTF-8",
       [](attnsel_matrix** out) { return attnsel_matrix_load_string("{}", 2, "\xff\xfe", out); }},
      // The explicit size counts: bytes after a NUL were dropped unread.
      {"bytes after a NUL", ATTNSEL_ERR_PARSE, "nul.json:1:3",
       [](attnsel_matrix** out) { return attnsel_matrix_load_string("{}\0{\"x\"", 7, "nul.json", out); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    attnsel_matrix* m = nullptr;
    EXPECT_EQ(c.load(&m), c.expected);
    ASSERT_NE(m, nullptr);
    handles_.matrices.push_back(m);
    EXPECT_NE(std::string(attnsel_matrix_last_error(m)).find(c.in_message), std::string::npos)
        << attnsel_matrix_last_error(m);
    // A matrix that failed to load cannot be used, and says so.
    const char* version = nullptr;
    EXPECT_EQ(attnsel_matrix_version(m, &version), ATTNSEL_ERR_INVALID_STATE);
    attnsel_request* r = reinterpret_cast<attnsel_request*>(0x1);
    EXPECT_EQ(attnsel_request_new(m, &r), ATTNSEL_ERR_INVALID_STATE);
    EXPECT_EQ(r, nullptr);
  }
}

TEST_F(CApi, NullOutPointers) {
  EXPECT_EQ(attnsel_matrix_load_builtin(nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_matrix_load_file("x", nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_matrix_load_string("{}", 2, nullptr, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_matrix_version(matrix_, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_matrix_schema_version(matrix_, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_new(matrix_, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_probe_run(100, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);

  attnsel_request* r = request_for("sm90", "mha");
  EXPECT_EQ(attnsel_select(r, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_STRNE(attnsel_request_last_error(r), "");
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(attnsel_result_ok(result, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_backend(result, nullptr, ATTNSEL_PHASE_ALL, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_page_size(result, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_flag_count(result, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_flag(result, 0, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_diagnostic_count(result, ATTNSEL_DIAGNOSTIC_NOTE, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_json(result, 2, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_text(result, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_STRNE(attnsel_result_last_error(result), "");
}

// ---- select: the same answers as the C++ API ----

TEST_F(CApi, ValidPlan) {
  attnsel_request* r = request_for("sm90", "mla");
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  int ok = 0, page_size = 0;
  ASSERT_EQ(attnsel_result_ok(result, &ok), ATTNSEL_OK);
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "fa3");
  EXPECT_EQ(backend(result, "attention", ATTNSEL_PHASE_PREFILL), "fa3");
  EXPECT_EQ(backend(result, "attention", ATTNSEL_PHASE_DECODE), "fa3");
  EXPECT_EQ(backend(result, "linear", ATTNSEL_PHASE_ALL), "(none)");  // MLA models have no GDN slot
  ASSERT_EQ(attnsel_result_page_size(result, &page_size), ATTNSEL_OK);
  EXPECT_EQ(page_size, 1);
  EXPECT_EQ(flags(result), (std::vector<std::string>{"--attention-backend", "fa3", "--page-size", "1"}));
  EXPECT_TRUE(rules(result, ATTNSEL_DIAGNOSTIC_ERROR).empty());
  EXPECT_TRUE(rules(result, ATTNSEL_DIAGNOSTIC_WARNING).empty());
  rules(result, ATTNSEL_DIAGNOSTIC_NOTE);  // every note has a rule and a message

  const char* text = nullptr;
  ASSERT_EQ(attnsel_result_text(result, &text), ATTNSEL_OK);
  EXPECT_NE(std::string(text).find("--attention-backend fa3 --page-size 1"), std::string::npos) << text;
}

TEST_F(CApi, JsonIsTheCppRendering) {
  attnsel_request* r = request_for("B200", "deepseek-ai/DeepSeek-V3");
  ASSERT_EQ(attnsel_request_set_kv_cache_dtype(r, "fp8_e4m3"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_speculative_topk(r, 1), ATTNSEL_OK);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);

  auto catalog = attnsel::builtin_catalog();
  auto matrix = attnsel::builtin_matrix();
  ASSERT_TRUE(catalog && matrix);
  attnsel::Request cpp;
  cpp.device = *attnsel::resolve_device(**catalog, attnsel::DeviceSpec{std::string("B200"), std::nullopt, std::nullopt, "--gpu"});
  cpp.model = *attnsel::resolve_model(**catalog, "deepseek-ai/DeepSeek-V3");
  cpp.kv_cache_dtype = attnsel::KvCacheDtype::fp8_e4m3;
  cpp.speculative_topk = 1;
  auto selection = attnsel::select(*matrix, cpp);
  ASSERT_TRUE(selection);

  const char *pretty = nullptr, *compact = nullptr;
  ASSERT_EQ(attnsel_result_json(result, 2, &pretty), ATTNSEL_OK);
  EXPECT_EQ(pretty, attnsel::render_json(*selection, 2));
  ASSERT_EQ(attnsel_result_json(result, -1, &compact), ATTNSEL_OK);
  EXPECT_EQ(compact, attnsel::render_json(*selection, -1));
  // Every string stays valid until the handle is freed.
  EXPECT_EQ(json::parse(pretty), json::parse(compact));
  const char* again = nullptr;
  ASSERT_EQ(attnsel_result_json(result, 2, &again), ATTNSEL_OK);
  EXPECT_EQ(again, pretty);
  // Indents past nlohmann's buffer read past it (1100) or crashed (100000): clamped to 16.
  const char *wide = nullptr, *huge = nullptr, *sixteen = nullptr;
  ASSERT_EQ(attnsel_result_json(result, 1100, &wide), ATTNSEL_OK);
  ASSERT_EQ(attnsel_result_json(result, 100000, &huge), ATTNSEL_OK);
  ASSERT_EQ(attnsel_result_json(result, 16, &sixteen), ATTNSEL_OK);
  EXPECT_EQ(std::string(wide), sixteen);
  EXPECT_EQ(std::string(huge), sixteen);
  EXPECT_EQ(json::parse(wide), json::parse(compact));
}

TEST_F(CApi, InvalidPlanIsAResultWithReasons) {
  attnsel_request* r = request_for("sm90", "mla");  // trtllm_mla: Blackwell only (cutlass_mla before SGLang main)
  ASSERT_EQ(attnsel_request_set_backend(r, "attention", ATTNSEL_PHASE_ALL, "trtllm_mla"), ATTNSEL_OK);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  int ok = 1;
  ASSERT_EQ(attnsel_result_ok(result, &ok), ATTNSEL_OK);
  EXPECT_EQ(ok, 0);
  EXPECT_EQ(rules(result, ATTNSEL_DIAGNOSTIC_ERROR).count("cell.compute-capability"), 1u);

  size_t count = 0;
  ASSERT_EQ(attnsel_result_diagnostic_count(result, ATTNSEL_DIAGNOSTIC_ERROR, &count), ATTNSEL_OK);
  const char* message = nullptr;
  EXPECT_EQ(attnsel_result_diagnostic(result, ATTNSEL_DIAGNOSTIC_ERROR, 0, nullptr, &message, nullptr), ATTNSEL_OK);
  EXPECT_NE(std::string(message).find("compute capability"), std::string::npos) << message;
  EXPECT_EQ(attnsel_result_diagnostic(result, ATTNSEL_DIAGNOSTIC_ERROR, count, nullptr, nullptr, nullptr),
            ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(attnsel_result_last_error(result)).find(std::to_string(count)), std::string::npos);
  EXPECT_EQ(attnsel_result_diagnostic(result, static_cast<attnsel_diagnostic_kind>(7), 0, nullptr, nullptr, nullptr),
            ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_result_diagnostic_count(result, static_cast<attnsel_diagnostic_kind>(1000), &count),
            ATTNSEL_ERR_INVALID_ARGUMENT);
}

TEST_F(CApi, HybridPlanHasNoSingleBackend) {
  attnsel_request* r = request_for("sm120", "mha");
  ASSERT_EQ(attnsel_request_set_backend(r, nullptr, ATTNSEL_PHASE_DECODE, "trtllm_mha"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_kv_cache_dtype(r, "fp8_e4m3"), ATTNSEL_OK);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "(none)");
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_PREFILL), "flashinfer");
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_DECODE), "trtllm_mha");
  int page_size = 0;
  ASSERT_EQ(attnsel_result_page_size(result, &page_size), ATTNSEL_OK);
  EXPECT_EQ(page_size, 64);
}

TEST_F(CApi, RequestSettersReachTheEngine) {
  attnsel_request* r = request_for("sm90", "gdn");
  ASSERT_EQ(attnsel_request_set_cuda(r, "12.8"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_page_size(r, 64), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_backend(r, "linear", ATTNSEL_PHASE_ALL, "triton"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_prefer(r, "prefix-reuse"), ATTNSEL_OK);
  for (attnsel_flag f : {ATTNSEL_FLAG_SLIDING_WINDOW, ATTNSEL_FLAG_MULTIMODAL, ATTNSEL_FLAG_ATTENTION_SINKS,
                         ATTNSEL_FLAG_DETERMINISTIC, ATTNSEL_FLAG_DISABLE_RADIX_CACHE, ATTNSEL_FLAG_STRICT}) {
    ASSERT_EQ(attnsel_request_set_flag(r, f, 1), ATTNSEL_OK);
    ASSERT_EQ(attnsel_request_set_flag(r, f, 0), ATTNSEL_OK);
  }
  ASSERT_EQ(attnsel_request_set_flag(r, ATTNSEL_FLAG_DISABLE_RADIX_CACHE, 1), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_speculative_attention_mode(r, ATTNSEL_PHASE_DECODE), ATTNSEL_OK);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(backend(result, "linear", ATTNSEL_PHASE_ALL), "triton");
  const char* text = nullptr;
  ASSERT_EQ(attnsel_result_json(result, -1, &text), ATTNSEL_OK);
  const json j = json::parse(text);
  EXPECT_EQ(j["device"]["cuda"], "12.8");
  EXPECT_EQ(j["device"]["cuda_assumed"], false);
  EXPECT_EQ(j["plan"]["page_size"], 64);
  EXPECT_EQ(j["plan"]["radix_cache"], false);
  EXPECT_EQ(j["model"]["kind"], "gdn");
}

TEST_F(CApi, NonCudaPlatformNeedsNoGpu) {
  attnsel_request* r = new_request();
  ASSERT_EQ(attnsel_request_set_platform(r, "npu"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "ascend");
}

TEST_F(CApi, HandlesOutliveTheOnesTheyCameFrom) {
  attnsel_matrix* m = nullptr;
  ASSERT_EQ(attnsel_matrix_load_builtin(&m), ATTNSEL_OK);
  attnsel_request* r = nullptr;
  ASSERT_EQ(attnsel_request_new(m, &r), ATTNSEL_OK);
  handles_.requests.push_back(r);
  ASSERT_EQ(attnsel_matrix_free(m), ATTNSEL_OK);  // the request keeps the matrix alive
  ASSERT_EQ(attnsel_request_set_gpu(r, "H100"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
  attnsel_result* result = nullptr;
  ASSERT_EQ(attnsel_select(r, &result), ATTNSEL_OK);
  handles_.requests.pop_back();
  ASSERT_EQ(attnsel_request_free(r), ATTNSEL_OK);  // and the result keeps it too
  handles_.results.push_back(result);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "fa3");
  const char* text = nullptr;
  EXPECT_EQ(attnsel_result_text(result, &text), ATTNSEL_OK);
}

// ---- misuse: statuses and messages ----

TEST_F(CApi, UnknownNamesListTheValidOnes) {
  struct Case {
    const char* what;
    attnsel_status (*set)(attnsel_request*);
    const char* in_message;
  };
  const Case cases[] = {
      {"gpu", [](attnsel_request* r) { return attnsel_request_set_gpu(r, "QX7"); }, "unknown GPU 'QX7'"},
      {"platform", [](attnsel_request* r) { return attnsel_request_set_platform(r, "cudaa"); }, "did you mean 'cuda'"},
      {"kv dtype", [](attnsel_request* r) { return attnsel_request_set_kv_cache_dtype(r, "fp8_e4m4"); },
       "did you mean 'fp8_e4m3'"},
      {"prefer", [](attnsel_request* r) { return attnsel_request_set_prefer(r, "throughputt"); },
       "did you mean 'throughput'"},
      {"backend", [](attnsel_request* r) { return attnsel_request_set_backend(r, "attention", ATTNSEL_PHASE_ALL, "fa33"); },
       "did you mean 'fa3'"},
      {"slot", [](attnsel_request* r) { return attnsel_request_set_backend(r, "atention", ATTNSEL_PHASE_ALL, "fa3"); },
       "did you mean 'attention'"},
      {"backend of another slot",
       [](attnsel_request* r) { return attnsel_request_set_backend(r, "linear", ATTNSEL_PHASE_DECODE, "fa3"); },
       "--linear-attn-decode-backend: unknown"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    attnsel_request* r = new_request();
    EXPECT_EQ(c.set(r), ATTNSEL_ERR_UNKNOWN_NAME);
    const std::string message = attnsel_request_last_error(r);
    EXPECT_NE(message.find(c.in_message), std::string::npos) << message;
    EXPECT_NE(message.find("valid: "), std::string::npos) << message;
  }
}

TEST_F(CApi, UnknownModel) {
  attnsel_request* r = new_request();
  EXPECT_NE(attnsel_request_set_model(r, "no-such-org/no-such-model"), ATTNSEL_OK);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("no-such-org/no-such-model"), std::string::npos)
      << attnsel_request_last_error(r);
}

TEST_F(CApi, BadValues) {
  attnsel_request* r = new_request();
  EXPECT_EQ(attnsel_request_set_cuda(r, "12.x"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("12.x"), std::string::npos);
  EXPECT_EQ(attnsel_request_set_page_size(r, -1), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_page_size(r, (1 << 20) + 1), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_speculative_topk(r, -1), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_speculative_topk(r, 1 << 17), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_speculative_attention_mode(r, ATTNSEL_PHASE_ALL), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_backend(r, nullptr, static_cast<attnsel_phase>(7), "fa3"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_flag(r, static_cast<attnsel_flag>(99), 1), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_gpu(r, "H100\xff"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("UTF-8"), std::string::npos);
  EXPECT_EQ(attnsel_request_set_model(r, "\xc0\x80"), ATTNSEL_ERR_INVALID_ARGUMENT);  // an overlong NUL
  EXPECT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_OK);
  EXPECT_EQ(attnsel_request_set_platform(r, "rocm"), ATTNSEL_OK);
  EXPECT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
  attnsel_result* result = reinterpret_cast<attnsel_result*>(0x1);
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_INVALID_ARGUMENT);  // sm90 is not a ROCm GPU
  EXPECT_EQ(result, nullptr);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("--platform rocm"), std::string::npos)
      << attnsel_request_last_error(r);
}

TEST_F(CApi, SelectNeedsAModelAndADevice) {
  attnsel_request* r = new_request();
  attnsel_result* result = nullptr;
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_INVALID_STATE);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("model"), std::string::npos);
  ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_NO_DEVICE);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("attnsel_request_set_gpu"), std::string::npos);
  ASSERT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_gpu(r, nullptr), ATTNSEL_OK);  // cleared again
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_NO_DEVICE);
  ASSERT_EQ(attnsel_request_set_model(r, nullptr), ATTNSEL_OK);
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_INVALID_STATE);
  EXPECT_EQ(result, nullptr);
}

TEST_F(CApi, IndexesPastTheEnd) {
  attnsel_result* result = select(request_for("sm90", "mha"));
  ASSERT_NE(result, nullptr);
  size_t count = 0;
  ASSERT_EQ(attnsel_result_flag_count(result, &count), ATTNSEL_OK);
  const char* flag = nullptr;
  EXPECT_EQ(attnsel_result_flag(result, count, &flag), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_EQ(attnsel_result_flag(result, SIZE_MAX, &flag), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(attnsel_result_last_error(result)).find("the plan has"), std::string::npos);
  const char* name = nullptr;
  EXPECT_EQ(attnsel_result_backend(result, "sparse2", ATTNSEL_PHASE_ALL, &name), ATTNSEL_ERR_UNKNOWN_NAME);
  EXPECT_EQ(attnsel_result_backend(result, nullptr, ATTNSEL_PHASE_FORCE_INT, &name), ATTNSEL_ERR_INVALID_ARGUMENT);
}

TEST_F(CApi, NullHandles) {
  const char* s = nullptr;
  int i = 0;
  size_t n = 0;
  attnsel_request* request = nullptr;
  attnsel_result* result = nullptr;
  EXPECT_EQ(attnsel_matrix_version(nullptr, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_matrix_schema_version(nullptr, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_new(nullptr, &request), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(request, nullptr);
  EXPECT_EQ(attnsel_probe_device_count(nullptr, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_device_name(nullptr, 0, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_device_platform(nullptr, 0, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_device_arch(nullptr, 0, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_device_compute_capability(nullptr, 0, &i, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_json(nullptr, 2, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_text(nullptr, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_gpu(nullptr, "sm90"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_platform(nullptr, "cuda"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_cuda(nullptr, "12.8"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_probed_device(nullptr, nullptr, 0), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_model(nullptr, "mha"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_kv_cache_dtype(nullptr, "auto"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_page_size(nullptr, 1), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_speculative_topk(nullptr, 1), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_speculative_attention_mode(nullptr, ATTNSEL_PHASE_DECODE), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_backend(nullptr, nullptr, ATTNSEL_PHASE_ALL, "fa3"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_flag(nullptr, ATTNSEL_FLAG_STRICT, 1), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_prefer(nullptr, "throughput"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_select(nullptr, &result), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_ok(nullptr, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_backend(nullptr, nullptr, ATTNSEL_PHASE_ALL, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_page_size(nullptr, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_flag_count(nullptr, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_flag(nullptr, 0, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_diagnostic_count(nullptr, ATTNSEL_DIAGNOSTIC_ERROR, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_diagnostic(nullptr, ATTNSEL_DIAGNOSTIC_ERROR, 0, &s, &s, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_json(nullptr, 2, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_text(nullptr, &s), ATTNSEL_ERR_INVALID_HANDLE);
  // Last errors of no handle are still strings; freeing nothing is fine, like free(NULL).
  EXPECT_STRNE(attnsel_matrix_last_error(nullptr), "");
  EXPECT_STRNE(attnsel_probe_last_error(nullptr), "");
  EXPECT_STRNE(attnsel_request_last_error(nullptr), "");
  EXPECT_STRNE(attnsel_result_last_error(nullptr), "");
  EXPECT_EQ(attnsel_matrix_free(nullptr), ATTNSEL_OK);
  EXPECT_EQ(attnsel_probe_free(nullptr), ATTNSEL_OK);
  EXPECT_EQ(attnsel_request_free(nullptr), ATTNSEL_OK);
  EXPECT_EQ(attnsel_result_free(nullptr), ATTNSEL_OK);
}

TEST_F(CApi, FreedHandlesAreRefusedNotDereferenced) {
  attnsel_matrix* m = nullptr;
  ASSERT_EQ(attnsel_matrix_load_builtin(&m), ATTNSEL_OK);
  attnsel_request* r = nullptr;
  ASSERT_EQ(attnsel_request_new(m, &r), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
  attnsel_result* result = nullptr;
  ASSERT_EQ(attnsel_select(r, &result), ATTNSEL_OK);
  attnsel_probe* p = nullptr;
  ASSERT_EQ(attnsel_probe_run(2000, &p), ATTNSEL_OK);

  ASSERT_EQ(attnsel_result_free(result), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_free(r), ATTNSEL_OK);
  ASSERT_EQ(attnsel_matrix_free(m), ATTNSEL_OK);
  ASSERT_EQ(attnsel_probe_free(p), ATTNSEL_OK);

  // No handle of these kinds is created from here on, so none can take a freed address.
  const char* s = nullptr;
  int i = 0;
  size_t n = 0;
  attnsel_request* r2 = nullptr;
  EXPECT_EQ(attnsel_matrix_version(m, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_new(m, &r2), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_ok(result, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_result_json(result, 2, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_device_count(p, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_STREQ(attnsel_request_last_error(r), attnsel_status_string(ATTNSEL_ERR_INVALID_HANDLE));
  // Freeing twice is refused too.
  EXPECT_EQ(attnsel_result_free(result), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_free(r), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_matrix_free(m), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_probe_free(p), ATTNSEL_ERR_INVALID_HANDLE);
}

TEST_F(CApi, WrongKindAndForeignPointersAreRefused) {
  attnsel_request* r = request_for("sm90", "mha");
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  int i = 0;
  const char* s = nullptr;
  EXPECT_EQ(attnsel_result_ok(reinterpret_cast<attnsel_result*>(r), &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_set_gpu(reinterpret_cast<attnsel_request*>(matrix_), "sm90"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_matrix_version(reinterpret_cast<attnsel_matrix*>(result), &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_free(reinterpret_cast<attnsel_request*>(result)), ATTNSEL_ERR_INVALID_HANDLE);
  // A pointer attnsel never handed out is not read.
  std::uint64_t not_a_handle[8] = {};
  EXPECT_EQ(attnsel_result_ok(reinterpret_cast<attnsel_result*>(not_a_handle), &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_matrix_free(reinterpret_cast<attnsel_matrix*>(not_a_handle)), ATTNSEL_ERR_INVALID_HANDLE);
  // The handles are still fine.
  EXPECT_EQ(attnsel_result_ok(result, &i), ATTNSEL_OK);
}

// ---- probe ----

TEST_F(CApi, Probe) {
  attnsel_probe* p = nullptr;
  ASSERT_EQ(attnsel_probe_run(5000, &p), ATTNSEL_OK);
  handles_.probes.push_back(p);
  size_t count = 0;
  ASSERT_EQ(attnsel_probe_device_count(p, &count), ATTNSEL_OK);
  const char* text = nullptr;
  ASSERT_EQ(attnsel_probe_json(p, -1, &text), ATTNSEL_OK);
  const json report = json::parse(text);
  EXPECT_EQ(report["devices"].size(), count);
  EXPECT_TRUE(report.contains("attempts"));
  ASSERT_EQ(attnsel_probe_text(p, &text), ATTNSEL_OK);
  EXPECT_STRNE(text, "");

  for (size_t i = 0; i < count; ++i) {
    const char *name = nullptr, *platform = nullptr, *arch = nullptr;
    int major = -1, minor = -1;
    ASSERT_EQ(attnsel_probe_device_name(p, i, &name), ATTNSEL_OK);
    ASSERT_EQ(attnsel_probe_device_platform(p, i, &platform), ATTNSEL_OK);
    ASSERT_EQ(attnsel_probe_device_arch(p, i, &arch), ATTNSEL_OK);
    ASSERT_EQ(attnsel_probe_device_compute_capability(p, i, &major, &minor), ATTNSEL_OK);
    if (std::string(platform) == "cuda" && major > 0) {
      EXPECT_EQ(std::string(arch).rfind("sm", 0), 0u) << arch;
      attnsel_request* r = new_request();
      ASSERT_EQ(attnsel_request_set_probed_device(r, p, i), ATTNSEL_OK) << attnsel_request_last_error(r);
      ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK);
      EXPECT_NE(select(r), nullptr);
    }
  }
  const char* name = nullptr;
  EXPECT_EQ(attnsel_probe_device_name(p, count, &name), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(attnsel_probe_last_error(p)).find("the probe found"), std::string::npos);
  EXPECT_EQ(attnsel_probe_device_name(p, 0, nullptr), count > 0 ? ATTNSEL_ERR_INVALID_ARGUMENT : ATTNSEL_ERR_OUT_OF_RANGE);
  attnsel_request* r = new_request();
  EXPECT_EQ(attnsel_request_set_probed_device(r, p, count), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_EQ(attnsel_request_set_probed_device(r, nullptr, 0), ATTNSEL_ERR_INVALID_HANDLE);
}

}  // namespace
