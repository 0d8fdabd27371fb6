// The C API (attnsel/attnsel.h): the same answers as the C++ API, and clear status codes with
// messages, never a crash, for misuse: null, freed and wrong-kind handles, bad inputs, unknown names.
#include "attnsel/attnsel.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/render.hpp"
#include "attnsel/select_options.hpp"
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
  const std::string path = std::string(ATTNSEL_SOURCE_DIR) + "/data/engines/sglang/matrix-0.5.12.json";
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

// ---- engines and releases ----

TEST(CApiEngine, MatrixOfAnEngineAndARelease) {
  attnsel_matrix* vllm = nullptr;
  ASSERT_EQ(attnsel_matrix_load_engine("vllm", nullptr, &vllm), ATTNSEL_OK) << attnsel_matrix_last_error(vllm);
  const char* engine = nullptr;
  ASSERT_EQ(attnsel_matrix_engine(vllm, &engine), ATTNSEL_OK);
  EXPECT_STREQ(engine, "vllm");
  EXPECT_EQ(attnsel_matrix_engine(vllm, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  attnsel_matrix_free(vllm);

  attnsel_matrix* old = nullptr;
  ASSERT_EQ(attnsel_matrix_load_engine(nullptr, "0.5.3", &old), ATTNSEL_OK) << attnsel_matrix_last_error(old);
  const char* version = nullptr;
  ASSERT_EQ(attnsel_matrix_version(old, &version), ATTNSEL_OK);
  auto cpp = attnsel::builtin_matrix("sglang", attnsel::parse_release("0.5.3"));
  ASSERT_TRUE(cpp);
  EXPECT_EQ(version, (*cpp)->info().version);
  EXPECT_NE(version, (*attnsel::builtin_matrix())->info().version);  // an older generation, not the newest
  attnsel_matrix_free(old);
}

// vLLM v0.11 names the backend only with VLLM_ATTENTION_BACKEND: the plan carries it as a setting,
// not as a flag the release refuses; the newest release has the flag and no setting.
TEST(CApiEngine, EnvironmentSettingsOfAnOlderRelease) {
  for (const char* release : {"0.11.0", "0.27.0"}) {
    attnsel_matrix* m = nullptr;
    ASSERT_EQ(attnsel_matrix_load_engine("vllm", release, &m), ATTNSEL_OK) << attnsel_matrix_last_error(m);
    attnsel_request* r = nullptr;
    ASSERT_EQ(attnsel_request_new(m, &r), ATTNSEL_OK);
    ASSERT_EQ(attnsel_request_set_gpu(r, "H100"), ATTNSEL_OK) << attnsel_request_last_error(r);
    ASSERT_EQ(attnsel_request_set_model(r, "mha"), ATTNSEL_OK) << attnsel_request_last_error(r);
    attnsel_result* result = nullptr;
    ASSERT_EQ(attnsel_select(r, &result), ATTNSEL_OK) << attnsel_request_last_error(r);
    size_t settings = 0, flags = 0;
    ASSERT_EQ(attnsel_result_environment_count(result, &settings), ATTNSEL_OK);
    ASSERT_EQ(attnsel_result_flag_count(result, &flags), ATTNSEL_OK);
    std::vector<std::string> flag_list;
    for (size_t i = 0; i < flags; ++i) {
      const char* flag = nullptr;
      ASSERT_EQ(attnsel_result_flag(result, i, &flag), ATTNSEL_OK);
      flag_list.emplace_back(flag);
    }
    const bool has_flag = std::find(flag_list.begin(), flag_list.end(), "--attention-backend") != flag_list.end();
    if (std::string(release) == "0.11.0") {
      ASSERT_EQ(settings, 1u);
      const char* setting = nullptr;
      ASSERT_EQ(attnsel_result_environment(result, 0, &setting), ATTNSEL_OK);
      EXPECT_STREQ(setting, "VLLM_ATTENTION_BACKEND=FLASH_ATTN");
      EXPECT_FALSE(has_flag);
      EXPECT_EQ(attnsel_result_environment(result, 1, &setting), ATTNSEL_ERR_OUT_OF_RANGE);
      EXPECT_EQ(attnsel_result_environment(result, 0, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
    } else {
      EXPECT_EQ(settings, 0u);
      EXPECT_TRUE(has_flag);
    }
    EXPECT_EQ(attnsel_result_environment_count(result, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
    attnsel_result_free(result);
    attnsel_request_free(r);
    attnsel_matrix_free(m);
  }
  size_t n = 0;
  EXPECT_EQ(attnsel_result_environment_count(nullptr, &n), ATTNSEL_ERR_INVALID_HANDLE);
}

TEST(CApiEngine, UnknownEnginesAndBadReleasesKeepTheirReason) {
  attnsel_matrix* m = nullptr;
  EXPECT_EQ(attnsel_matrix_load_engine("vlm", nullptr, &m), ATTNSEL_ERR_UNKNOWN_NAME);
  ASSERT_NE(m, nullptr);  // like sqlite3_open: a handle with the reason
  EXPECT_NE(std::string(attnsel_matrix_last_error(m)).find("did you mean 'vllm'"), std::string::npos)
      << attnsel_matrix_last_error(m);
  const char* engine = nullptr;
  EXPECT_EQ(attnsel_matrix_engine(m, &engine), ATTNSEL_ERR_INVALID_STATE);
  attnsel_matrix_free(m);
  EXPECT_EQ(attnsel_matrix_load_engine("sglang", "0.5.x", &m), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_matrix_last_error(m)).find("0.5.x"), std::string::npos);
  attnsel_matrix_free(m);
  EXPECT_EQ(attnsel_matrix_load_engine("sglang", "0.0.1", &m), ATTNSEL_ERR_INVALID_ARGUMENT);  // older than every matrix
  attnsel_matrix_free(m);
  EXPECT_EQ(attnsel_matrix_load_engine("\xff", nullptr, &m), ATTNSEL_ERR_INVALID_ARGUMENT);
  attnsel_matrix_free(m);
  EXPECT_EQ(attnsel_matrix_load_engine("sglang", nullptr, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
}

// ---- launch flags ----

// What the C++ API plans for these words, as attnsel select reads them.
std::string cpp_select_json(const std::shared_ptr<const attnsel::Matrix>& matrix, const char* gpu, const char* model,
                            std::vector<std::string> flags) {
  auto catalog = attnsel::builtin_catalog();
  attnsel::SelectOptions o;
  if (model != nullptr) o.model = model;
  o.engine_flags = std::move(flags);
  auto prepared = attnsel::prepare_select(matrix, **catalog, o);
  EXPECT_TRUE(prepared) << prepared.error().describe();
  EXPECT_TRUE(prepared->ok()) << prepared->error_text();
  attnsel::Request r = prepared->request;
  auto device = attnsel::resolve_device(**catalog, {std::string(gpu), std::nullopt, std::nullopt, "--gpu"});
  EXPECT_TRUE(device);
  r.device = *device;
  auto s = attnsel::select(matrix, r);
  EXPECT_TRUE(s);
  return attnsel::render_json(*s, -1);
}

TEST_F(CApi, LaunchFlagsAreReadAsTheCliReadsThem) {
  attnsel_request* r = request_for("H100", "deepseek-ai/DeepSeek-V3");
  const char* argv[] = {"--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3", "--tp", "8"};
  ASSERT_EQ(attnsel_request_set_launch_flags(r, argv, 6), ATTNSEL_OK) << attnsel_request_last_error(r);
  attnsel_result* result = select(r);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "flashmla");
  int page = 0;
  ASSERT_EQ(attnsel_result_page_size(result, &page), ATTNSEL_OK);
  EXPECT_EQ(page, 64);  // SGLang's rewrite for FlashMLA
  const char* text = nullptr;
  ASSERT_EQ(attnsel_result_json(result, -1, &text), ATTNSEL_OK);
  EXPECT_EQ(text, cpp_select_json(*attnsel::builtin_matrix(), "H100", "deepseek-ai/DeepSeek-V3",
                                  {argv, argv + 6}));
}

TEST_F(CApi, SettersWinOverLaunchFlags) {
  attnsel_request* r = request_for("sm90", "mla");
  const char* argv[] = {"--attention-backend", "triton", "--page-size", "64"};
  ASSERT_EQ(attnsel_request_set_launch_flags(r, argv, 4), ATTNSEL_OK) << attnsel_request_last_error(r);
  EXPECT_EQ(backend(select(r), nullptr, ATTNSEL_PHASE_ALL), "triton");
  ASSERT_EQ(attnsel_request_set_backend(r, nullptr, ATTNSEL_PHASE_ALL, "fa3"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_page_size(r, 16), ATTNSEL_OK);
  attnsel_result* result = select(r);
  EXPECT_EQ(backend(result, nullptr, ATTNSEL_PHASE_ALL), "fa3");
  int page = 0;
  ASSERT_EQ(attnsel_result_page_size(result, &page), ATTNSEL_OK);
  EXPECT_EQ(page, 16);
  // argc 0 clears the flags: the setters alone remain.
  ASSERT_EQ(attnsel_request_set_launch_flags(r, nullptr, 0), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_page_size(r, 0), ATTNSEL_OK);
  ASSERT_EQ(attnsel_result_page_size(select(r), &page), ATTNSEL_OK);
  EXPECT_EQ(page, 1);
}

TEST_F(CApi, TheModelMayComeFromTheLaunchFlags) {
  attnsel_request* r = new_request();
  ASSERT_EQ(attnsel_request_set_gpu(r, "sm90"), ATTNSEL_OK);
  const char* argv[] = {"--model-path", "deepseek-ai/DeepSeek-V3"};
  ASSERT_EQ(attnsel_request_set_launch_flags(r, argv, 2), ATTNSEL_OK);
  const char* text = nullptr;
  ASSERT_EQ(attnsel_result_json(select(r), -1, &text), ATTNSEL_OK);
  EXPECT_EQ(json::parse(text)["model"]["kind"], "mla");
  // Flags without a model, and no model set: no plan.
  const char* no_model[] = {"--tp", "8"};
  ASSERT_EQ(attnsel_request_set_launch_flags(r, no_model, 2), ATTNSEL_OK);
  attnsel_result* result = nullptr;
  EXPECT_EQ(attnsel_select(r, &result), ATTNSEL_ERR_INVALID_STATE);
  EXPECT_EQ(result, nullptr);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("model"), std::string::npos);
}

TEST_F(CApi, LaunchFlagsOfAnotherEngine) {
  attnsel_matrix* m = nullptr;
  ASSERT_EQ(attnsel_matrix_load_engine("vllm", nullptr, &m), ATTNSEL_OK);
  handles_.matrices.push_back(m);
  attnsel_request* r = nullptr;
  ASSERT_EQ(attnsel_request_new(m, &r), ATTNSEL_OK);
  handles_.requests.push_back(r);
  ASSERT_EQ(attnsel_request_set_gpu(r, "B200"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_request_set_model(r, "deepseek-ai/DeepSeek-V3"), ATTNSEL_OK);
  const char* argv[] = {"-tp", "8", "--attention-backend", "TRITON_MLA"};  // vLLM's grammar, not SGLang's
  ASSERT_EQ(attnsel_request_set_launch_flags(r, argv, 4), ATTNSEL_OK) << attnsel_request_last_error(r);
  EXPECT_EQ(backend(select(r), nullptr, ATTNSEL_PHASE_ALL), "TRITON_MLA");
  const char* sglang_dtype[] = {"--kv-cache-dtype", "fp8_e4m3", "--kv-cache-dtype", "fp4_e2m1"};  // vLLM has no fp4_e2m1
  EXPECT_EQ(attnsel_request_set_launch_flags(r, sglang_dtype, 4), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("vLLM would exit"), std::string::npos)
      << attnsel_request_last_error(r);
}

TEST_F(CApi, LaunchFlagsTheEngineRefuses) {
  attnsel_request* r = request_for("sm90", "mla");
  const char* typo[] = {"--attention-backend", "fa9"};
  EXPECT_EQ(attnsel_request_set_launch_flags(r, typo, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  const std::string message = attnsel_request_last_error(r);
  EXPECT_NE(message.find("'fa9'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean fa3"), std::string::npos) << message;
  const char* unknown_flag[] = {"--atention-backend", "fa3"};
  EXPECT_EQ(attnsel_request_set_launch_flags(r, unknown_flag, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_request_last_error(r)).find("--atention-backend"), std::string::npos);
  const char* with_null[] = {"--tp", nullptr};
  EXPECT_EQ(attnsel_request_set_launch_flags(r, with_null, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_request_set_launch_flags(r, nullptr, 1), ATTNSEL_ERR_INVALID_ARGUMENT);
  const char* not_utf8[] = {"--attention-backend", "fa\xc3"};
  EXPECT_EQ(attnsel_request_set_launch_flags(r, not_utf8, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  // A refused call keeps what was set before: the request still plans.
  EXPECT_EQ(backend(select(r), nullptr, ATTNSEL_PHASE_ALL), "fa3");
  EXPECT_EQ(attnsel_request_set_launch_flags(nullptr, typo, 2), ATTNSEL_ERR_INVALID_HANDLE);
}

// ---- check ----

class CApiCheck : public CApi {
 protected:
  attnsel_check* new_check(const char* gpus) {
    attnsel_check* c = nullptr;
    EXPECT_EQ(attnsel_check_new(matrix_, &c), ATTNSEL_OK);
    checks_.push_back(c);
    if (gpus != nullptr) {
      EXPECT_EQ(attnsel_check_set_gpus(c, gpus), ATTNSEL_OK) << attnsel_check_last_error(c);
    }
    return c;
  }
  struct Found {
    attnsel_diagnostic_kind kind;
    std::string rule, message, file, gpu, flag;
    int line;
  };
  static std::vector<Found> findings(attnsel_check* c) {
    size_t count = 0;
    EXPECT_EQ(attnsel_check_finding_count(c, &count), ATTNSEL_OK);
    std::vector<Found> out;
    for (size_t i = 0; i < count; ++i) {
      Found f{};
      const char *rule = nullptr, *message = nullptr, *file = nullptr, *gpu = nullptr, *flag = nullptr;
      EXPECT_EQ(attnsel_check_finding(c, i, &f.kind, &rule, &message, &f.line), ATTNSEL_OK);
      EXPECT_EQ(attnsel_check_finding_where(c, i, &file, &gpu, &flag), ATTNSEL_OK);
      f.rule = rule, f.message = message, f.file = file, f.gpu = gpu, f.flag = flag;
      out.push_back(f);
    }
    return out;
  }
  static int ok(attnsel_check* c) {
    int value = -1;
    EXPECT_EQ(attnsel_check_ok(c, &value), ATTNSEL_OK);
    return value;
  }
  void TearDown() override {
    for (auto* c : checks_) attnsel_check_free(c);
  }
  std::vector<attnsel_check*> checks_;
};

const char* const kLaunch[] = {"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                               "--attention-backend", "trtllm_mla"};

TEST_F(CApiCheck, AnArgvIsJudgedForEachTarget) {
  attnsel_check* c = new_check("sm90,B200");
  ASSERT_EQ(attnsel_check_argv(c, kLaunch, 7), ATTNSEL_OK) << attnsel_check_last_error(c);
  EXPECT_EQ(ok(c), 0);
  size_t commands = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &commands), ATTNSEL_OK);
  EXPECT_EQ(commands, 2u);
  std::vector<Found> errors;
  for (const Found& f : findings(c))
    if (f.kind == ATTNSEL_DIAGNOSTIC_ERROR) errors.push_back(f);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rule, "cell.compute-capability");
  EXPECT_EQ(errors[0].gpu, "sm90");
  EXPECT_EQ(errors[0].flag, "--attention-backend");
  EXPECT_EQ(errors[0].line, 0);
  EXPECT_EQ(errors[0].file, "");

  // The JSON is the C++ API's for the same input.
  const char* text = nullptr;
  ASSERT_EQ(attnsel_check_json(c, -1, &text), ATTNSEL_OK);
  attnsel::CheckInput input;
  input.argv = std::vector<std::string>(kLaunch, kLaunch + 7);
  attnsel::CheckRun run;
  run.gpus = "sm90,B200";
  auto report = attnsel::check_input(*attnsel::builtin_matrix(), **attnsel::builtin_catalog(), input, run);
  ASSERT_TRUE(report);
  EXPECT_EQ(text, attnsel::render_check_json(std::vector<attnsel::CheckReport>{*report}, -1));
}

TEST_F(CApiCheck, TextFindingsAreOnTheirLineAndInputsAccumulate) {
  attnsel_check* c = new_check("sm90");
  const std::string script =
      "#!/bin/sh\nset -e\npython3 -m sglang.launch_server \\\n  --model-path deepseek-ai/DeepSeek-V3 \\\n"
      "  --tp 8 \\\n  --attention-backend trtllm_mla\n";
  ASSERT_EQ(attnsel_check_text(c, script.data(), script.size(), "launch.sh"), ATTNSEL_OK) << attnsel_check_last_error(c);
  const char* first_json = nullptr;
  ASSERT_EQ(attnsel_check_json(c, 2, &first_json), ATTNSEL_OK);
  const std::string first_copy = first_json;
  std::vector<Found> found = findings(c);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].rule, "args.prefix");  // --tp, read as --tp-size
  EXPECT_EQ(found[0].kind, ATTNSEL_DIAGNOSTIC_NOTE);
  EXPECT_EQ(found[0].line, 5);
  EXPECT_EQ(found[1].kind, ATTNSEL_DIAGNOSTIC_ERROR);
  EXPECT_EQ(found[1].line, 6);
  EXPECT_EQ(found[1].file, "launch.sh");

  const std::string clean = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n";
  ASSERT_EQ(attnsel_check_text(c, clean.data(), clean.size(), nullptr), ATTNSEL_OK);
  size_t commands = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &commands), ATTNSEL_OK);
  EXPECT_EQ(commands, 2u);
  const char* both = nullptr;
  ASSERT_EQ(attnsel_check_json(c, 2, &both), ATTNSEL_OK);
  EXPECT_EQ(json::parse(both)["results"].size(), 2u);
  EXPECT_EQ(first_json, first_copy);  // an earlier string stays valid
  EXPECT_EQ(ok(c), 0);
}

TEST_F(CApiCheck, TheGpusAFileNames) {
  attnsel_check* c = new_check(nullptr);
  const std::string path = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/deploy/k8s/deployment.yaml";
  const std::string text = read_file(path);
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(attnsel_check_text(c, text.data(), text.size(), path.c_str()), ATTNSEL_OK) << attnsel_check_last_error(c);
  size_t commands = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &commands), ATTNSEL_OK);
  EXPECT_GT(commands, 0u);
  bool named = false;
  for (const Found& f : findings(c)) named = named || f.rule == "check.gpu-from-file";
  EXPECT_TRUE(named);
  // An argv names no GPU.
  EXPECT_EQ(attnsel_check_argv(c, kLaunch, 7), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnsel_check_last_error(c)).find("GPU"), std::string::npos);
  size_t after = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &after), ATTNSEL_OK);
  EXPECT_EQ(after, commands);  // a failing call adds nothing
}

// A path: a directory walked as `attnsel check DIR` walks it, each file checked, what the walk
// passed over listed with why; the JSON is the C++ API's for the same path.
TEST_F(CApiCheck, APathIsWalkedAndWhatItPassesOverIsListed) {
  const std::string dir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/walk";
  attnsel_check* c = new_check("sm90");
  ASSERT_EQ(attnsel_check_add_exclude(c, "docs"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_check_path(c, dir.c_str()), ATTNSEL_OK) << attnsel_check_last_error(c);
  attnsel::CheckRun run;
  run.gpus = "sm90";
  attnsel::WalkOptions walk;
  walk.exclude = {"docs"};
  auto expected = attnsel::check_paths(*attnsel::builtin_matrix(), **attnsel::builtin_catalog(), {dir}, run, walk);
  ASSERT_TRUE(expected);
  size_t commands = 0, skipped = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &commands), ATTNSEL_OK);
  std::size_t want = 0;
  for (const attnsel::CheckReport& r : expected->reports) want += r.checks.size();
  EXPECT_EQ(commands, want);
  EXPECT_GT(commands, 20u);
  ASSERT_EQ(attnsel_check_skipped_count(c, &skipped), ATTNSEL_OK);
  ASSERT_EQ(skipped, expected->walk.skipped.size());
  bool docs = false;
  for (size_t i = 0; i < skipped; ++i) {
    const char *path = nullptr, *reason = nullptr;
    int directory = -1;
    ASSERT_EQ(attnsel_check_skipped(c, i, &path, &reason, &directory), ATTNSEL_OK);
    EXPECT_EQ(path, expected->walk.skipped[i].path);
    EXPECT_EQ(reason, expected->walk.skipped[i].detail);
    EXPECT_EQ(directory, expected->walk.skipped[i].directory ? 1 : 0);
    docs = docs || std::string(reason) == "--exclude 'docs'";
  }
  EXPECT_TRUE(docs);
  const char* text = nullptr;
  ASSERT_EQ(attnsel_check_json(c, 2, &text), ATTNSEL_OK);
  EXPECT_EQ(text, attnsel::render_check_json(*expected, 2));
  EXPECT_EQ(attnsel_check_skipped(c, skipped, nullptr, nullptr, nullptr), ATTNSEL_ERR_OUT_OF_RANGE);

  // A walk that finds nothing to read fails, says why and adds nothing.
  ASSERT_EQ(attnsel_check_add_exclude(c, "*.sh"), ATTNSEL_OK);
  const std::string modules = dir + "/node_modules";
  EXPECT_EQ(attnsel_check_path(c, modules.c_str()), ATTNSEL_ERR_IO);
  EXPECT_NE(std::string(attnsel_check_last_error(c)).find("no file to read"), std::string::npos)
      << attnsel_check_last_error(c);
  size_t after = 0;
  ASSERT_EQ(attnsel_check_command_count(c, &after), ATTNSEL_OK);
  EXPECT_EQ(after, commands);
  ASSERT_EQ(attnsel_check_add_exclude(c, nullptr), ATTNSEL_OK);  // clears the list
  ASSERT_EQ(attnsel_check_path(c, modules.c_str()), ATTNSEL_OK) << attnsel_check_last_error(c);
  EXPECT_EQ(attnsel_check_path(c, (dir + "/no-such-file.sh").c_str()), ATTNSEL_ERR_IO);
  EXPECT_EQ(attnsel_check_path(c, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_path(nullptr, dir.c_str()), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_skipped_count(nullptr, &skipped), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_add_include(nullptr, "x"), ATTNSEL_ERR_INVALID_HANDLE);
}

TEST_F(CApiCheck, StrictFailsOnWarnings) {
  const char* caveat[] = {"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                          "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"};
  attnsel_check* relaxed = new_check("sm90");
  ASSERT_EQ(attnsel_check_argv(relaxed, caveat, 9), ATTNSEL_OK);
  EXPECT_EQ(ok(relaxed), 1);
  attnsel_check* strict = new_check("sm90");
  ASSERT_EQ(attnsel_check_set_strict(strict, 1), ATTNSEL_OK);
  ASSERT_EQ(attnsel_check_argv(strict, caveat, 9), ATTNSEL_OK);
  EXPECT_EQ(ok(strict), 0);
}

// --select and --ignore: an ignored warning no longer fails a strict check and is listed as
// suppressed; a pattern that names no rule is refused with the closest ids; NULL clears.
TEST_F(CApiCheck, IgnoredRulesCountTowardNothing) {
  const char* caveat[] = {"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                          "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"};
  attnsel_check* seen = new_check("sm90");
  ASSERT_EQ(attnsel_check_argv(seen, caveat, 9), ATTNSEL_OK);
  std::vector<std::string> warned;
  for (const Found& f : findings(seen))
    if (f.kind == ATTNSEL_DIAGNOSTIC_WARNING) warned.push_back(f.rule);
  ASSERT_FALSE(warned.empty());

  attnsel_check* c = new_check("sm90");
  ASSERT_EQ(attnsel_check_set_strict(c, 1), ATTNSEL_OK);
  for (const std::string& rule : warned) ASSERT_EQ(attnsel_check_add_ignore(c, rule.c_str()), ATTNSEL_OK) << rule;
  ASSERT_EQ(attnsel_check_argv(c, caveat, 9), ATTNSEL_OK);
  EXPECT_EQ(ok(c), 1);
  for (const Found& f : findings(c)) EXPECT_NE(f.kind, ATTNSEL_DIAGNOSTIC_WARNING) << f.rule;
  const char* json = nullptr;
  ASSERT_EQ(attnsel_check_json(c, -1, &json), ATTNSEL_OK);
  EXPECT_NE(std::string(json).find("\"suppressed\":[{"), std::string::npos) << json;

  // --select keeps only what it names: no warning of another family is left.
  attnsel_check* only = new_check("sm90");
  ASSERT_EQ(attnsel_check_add_select(only, "args"), ATTNSEL_OK);
  ASSERT_EQ(attnsel_check_argv(only, caveat, 9), ATTNSEL_OK);
  for (const Found& f : findings(only)) EXPECT_EQ(f.rule.rfind("args.", 0), 0u) << f.rule;

  EXPECT_EQ(attnsel_check_add_ignore(c, "args.prefx"), ATTNSEL_ERR_UNKNOWN_NAME);
  EXPECT_NE(std::string(attnsel_check_last_error(c)).find("args.prefix"), std::string::npos)
      << attnsel_check_last_error(c);
  ASSERT_EQ(attnsel_check_add_ignore(c, nullptr), ATTNSEL_OK);  // clears the list
  ASSERT_EQ(attnsel_check_argv(c, caveat, 9), ATTNSEL_OK);
  EXPECT_EQ(ok(c), 0);
  EXPECT_EQ(attnsel_check_add_select(nullptr, "args"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_add_select(c, "\xff"), ATTNSEL_ERR_INVALID_ARGUMENT);
}

TEST_F(CApiCheck, Misuse) {
  attnsel_check* c = new_check(nullptr);
  EXPECT_EQ(attnsel_check_set_gpus(c, "sm90,H1000"), ATTNSEL_ERR_UNKNOWN_NAME);
  EXPECT_NE(std::string(attnsel_check_last_error(c)).find("H100"), std::string::npos);
  EXPECT_EQ(attnsel_check_set_gpus(c, "sm90,"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_set_cuda(c, "12.x"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_set_model_kind(c, "xyz"), ATTNSEL_ERR_UNKNOWN_NAME);
  EXPECT_NE(std::string(attnsel_check_last_error(c)).find("mla"), std::string::npos);
  EXPECT_EQ(attnsel_check_set_gpus(c, "\xff"), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_argv(c, nullptr, 0), ATTNSEL_ERR_INVALID_ARGUMENT);
  const char* with_null[] = {"python3", nullptr};
  EXPECT_EQ(attnsel_check_argv(c, with_null, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  const char* not_a_launcher[] = {"ls", "-l"};
  ASSERT_EQ(attnsel_check_set_gpus(c, "sm90"), ATTNSEL_OK);
  EXPECT_EQ(attnsel_check_argv(c, not_a_launcher, 2), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_text(c, nullptr, 3, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_text(c, nullptr, 0, nullptr), ATTNSEL_OK);  // empty text: nothing found
  attnsel_diagnostic_kind kind{};
  EXPECT_EQ(attnsel_check_finding(c, 0, &kind, nullptr, nullptr, nullptr), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_EQ(attnsel_check_finding_where(c, 0, nullptr, nullptr, nullptr), ATTNSEL_ERR_OUT_OF_RANGE);
  EXPECT_EQ(attnsel_check_ok(c, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_json(c, 2, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attnsel_check_new(matrix_, nullptr), ATTNSEL_ERR_INVALID_ARGUMENT);

  // Null, wrong-kind and freed handles.
  attnsel_check* none = nullptr;
  size_t n = 0;
  const char* s = nullptr;
  int i = 0;
  EXPECT_EQ(attnsel_check_new(nullptr, &none), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(attnsel_check_set_gpus(nullptr, "sm90"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_set_cuda(nullptr, "12.8"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_set_strict(nullptr, 1), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_set_model_kind(nullptr, "mla"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_argv(nullptr, kLaunch, 7), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_text(nullptr, "", 0, nullptr), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_ok(nullptr, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_command_count(nullptr, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_finding_count(nullptr, &n), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_finding(nullptr, 0, nullptr, &s, &s, &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_finding_where(nullptr, 0, &s, &s, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_json(nullptr, 2, &s), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_STRNE(attnsel_check_last_error(nullptr), "");
  EXPECT_EQ(attnsel_check_free(nullptr), ATTNSEL_OK);
  attnsel_request* r = new_request();
  EXPECT_EQ(attnsel_check_ok(reinterpret_cast<attnsel_check*>(r), &i), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_free(reinterpret_cast<attnsel_check*>(r)), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_request_free(reinterpret_cast<attnsel_request*>(c)), ATTNSEL_ERR_INVALID_HANDLE);

  attnsel_check* freed = nullptr;
  ASSERT_EQ(attnsel_check_new(matrix_, &freed), ATTNSEL_OK);
  ASSERT_EQ(attnsel_check_free(freed), ATTNSEL_OK);
  EXPECT_EQ(attnsel_check_set_gpus(freed, "sm90"), ATTNSEL_ERR_INVALID_HANDLE);
  EXPECT_EQ(attnsel_check_free(freed), ATTNSEL_ERR_INVALID_HANDLE);

  // A matrix that failed to load cannot check.
  attnsel_matrix* bad = nullptr;
  EXPECT_NE(attnsel_matrix_load_string("{", 1, nullptr, &bad), ATTNSEL_OK);
  EXPECT_EQ(attnsel_check_new(bad, &none), ATTNSEL_ERR_INVALID_STATE);
  attnsel_matrix_free(bad);
}

}  // namespace
