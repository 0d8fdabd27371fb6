// The GPU catalog and the model-family table: every spelling a user or a probe produces resolves
// to the right architecture, unknown names fail with a suggestion, and config.json files are
// read for the attention kind and traits, with the evidence named in `origin`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif

namespace attnsel {
namespace {

const std::string kConfigs = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/configs/";

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = [] {
    auto loaded = builtin_catalog();
    if (!loaded) ADD_FAILURE() << loaded.error().describe();
    return loaded ? loaded.value() : std::make_shared<const Catalog>();
  }();
  return *c;
}

TEST(CatalogTest, BuiltinCatalogLoads) {
  auto loaded = builtin_catalog();
  ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
  EXPECT_FALSE((*loaded)->architectures().empty());
  EXPECT_FALSE((*loaded)->gpus().empty());
  EXPECT_FALSE((*loaded)->families().empty());
  EXPECT_EQ(loaded.value().get(), builtin_catalog().value().get());  // loaded once
}

// ---- GPU names -> architecture ----

struct GpuCase {
  std::string input;
  std::string arch;
  std::optional<ComputeCapability> cc;  // nullopt for AMD
  Platform platform;
  std::string name;  // the catalog name, or the architecture's family when the input named an architecture
};

void PrintTo(const GpuCase& c, std::ostream* os) { *os << '"' << c.input << '"'; }

// "NVIDIA H100 80GB HBM3" -> NVIDIA_H100_80GB_HBM3.
std::string gpu_case_name(const testing::TestParamInfo<GpuCase>& p) {
  std::string name = p.param.input;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class ResolveGpuTest : public testing::TestWithParam<GpuCase> {};

TEST_P(ResolveGpuTest, ResolvesToTheArchitecture) {
  const GpuCase& c = GetParam();
  auto d = catalog().resolve_gpu(c.input);
  ASSERT_TRUE(d.ok()) << d.error().describe();
  EXPECT_EQ(d->arch, c.arch);
  EXPECT_EQ(d->platform, c.platform);
  EXPECT_EQ(d->compute_capability.has_value(), c.cc.has_value());
  if (c.cc && d->compute_capability) {
    EXPECT_EQ(d->compute_capability->major, c.cc->major);
    EXPECT_EQ(d->compute_capability->minor, c.cc->minor);
  }
  EXPECT_EQ(d->name, c.name);
}

constexpr Platform kCuda = Platform::cuda;
constexpr Platform kRocm = Platform::rocm;

INSTANTIATE_TEST_SUITE_P(
    Architectures, ResolveGpuTest,
    testing::Values(GpuCase{"sm90", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"sm_90a", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"SM90", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"9.0", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"90", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"compute_90", "sm90", Version{9, 0}, kCuda, "Hopper"},
                    GpuCase{"sm100", "sm100", Version{10, 0}, kCuda, "Blackwell (datacenter)"},
                    GpuCase{"sm_100a", "sm100", Version{10, 0}, kCuda, "Blackwell (datacenter)"},
                    GpuCase{"sm100f", "sm100", Version{10, 0}, kCuda, "Blackwell (datacenter)"},
                    GpuCase{"10.3", "sm103", Version{10, 3}, kCuda, "Blackwell Ultra (datacenter)"},
                    GpuCase{"sm121", "sm121", Version{12, 1}, kCuda, "Blackwell (DGX Spark)"},
                    GpuCase{"12.1", "sm121", Version{12, 1}, kCuda, "Blackwell (DGX Spark)"},
                    GpuCase{"sm_120a", "sm120", Version{12, 0}, kCuda, "Blackwell (consumer/workstation)"},
                    GpuCase{"75", "sm75", Version{7, 5}, kCuda, "Turing"},
                    GpuCase{"8.6", "sm86", Version{8, 6}, kCuda, "Ampere"},
                    GpuCase{"gfx942", "gfx942", std::nullopt, kRocm, "CDNA 3"},
                    GpuCase{"gfx950", "gfx950", std::nullopt, kRocm, "CDNA 4"}),
                         gpu_case_name);

INSTANTIATE_TEST_SUITE_P(
    Products, ResolveGpuTest,
    testing::Values(GpuCase{"H100", "sm90", Version{9, 0}, kCuda, "H100"}, GpuCase{"h100", "sm90", Version{9, 0}, kCuda, "H100"},
                    GpuCase{"NVIDIA H100 80GB HBM3", "sm90", Version{9, 0}, kCuda, "H100"},
                    GpuCase{"NVIDIA H100 PCIe", "sm90", Version{9, 0}, kCuda, "H100"},
                    GpuCase{"NVIDIA H200", "sm90", Version{9, 0}, kCuda, "H200"},
                    GpuCase{"NVIDIA H20", "sm90", Version{9, 0}, kCuda, "H20"},
                    GpuCase{"NVIDIA GH200 480GB", "sm90", Version{9, 0}, kCuda, "GH200"},
                    GpuCase{"RTX 5090", "sm120", Version{12, 0}, kCuda, "RTX 5090"},
                    GpuCase{"rtx5090", "sm120", Version{12, 0}, kCuda, "RTX 5090"},
                    GpuCase{"NVIDIA GeForce RTX 5090", "sm120", Version{12, 0}, kCuda, "RTX 5090"},
                    GpuCase{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "sm120", Version{12, 0}, kCuda, "RTX PRO 6000"},
                    GpuCase{"B200", "sm100", Version{10, 0}, kCuda, "B200"},
                    GpuCase{"NVIDIA B200", "sm100", Version{10, 0}, kCuda, "B200"},
                    GpuCase{"GB200", "sm100", Version{10, 0}, kCuda, "GB200"},  // not B200, which it contains
                    GpuCase{"B300", "sm103", Version{10, 3}, kCuda, "B300"},
                    GpuCase{"GB10", "sm121", Version{12, 1}, kCuda, "GB10"},
                    GpuCase{"DGX Spark", "sm121", Version{12, 1}, kCuda, "GB10"},
                    GpuCase{"MI300X", "gfx942", std::nullopt, kRocm, "MI300X"},
                    GpuCase{"mi355x", "gfx950", std::nullopt, kRocm, "MI355X"},
                    GpuCase{"AMD Instinct MI300X", "gfx942", std::nullopt, kRocm, "MI300X"},
                    GpuCase{"T4", "sm75", Version{7, 5}, kCuda, "T4"},
                    GpuCase{"Tesla T4", "sm75", Version{7, 5}, kCuda, "T4"},
                    GpuCase{"V100", "sm70", Version{7, 0}, kCuda, "V100"},
                    GpuCase{"Tesla V100-SXM2-32GB", "sm70", Version{7, 0}, kCuda, "V100"},
                    GpuCase{"NVIDIA A100-SXM4-80GB", "sm80", Version{8, 0}, kCuda, "A100"},
                    GpuCase{"NVIDIA A100 80GB PCIe", "sm80", Version{8, 0}, kCuda, "A100"},  // not A10
                    GpuCase{"NVIDIA A10G", "sm86", Version{8, 6}, kCuda, "A10"},
                    GpuCase{"NVIDIA L40S", "sm89", Version{8, 9}, kCuda, "L40S"},
                    GpuCase{"NVIDIA L4", "sm89", Version{8, 9}, kCuda, "L4"},
                    GpuCase{"Jetson AGX Orin", "sm87", Version{8, 7}, kCuda, "Jetson AGX Orin"}),
    gpu_case_name);

// Every name and alias in the catalog resolves to its own entry, and every architecture to itself.
TEST(ResolveGpuCatalogTest, EveryCatalogNameResolvesToItself) {
  const Catalog& c = catalog();
  for (const auto& g : c.gpus()) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const auto& n : names) {
      auto d = c.resolve_gpu(n);
      ASSERT_TRUE(d.ok()) << n << ": " << d.error().describe();
      EXPECT_EQ(d->name, g.name) << n;
      EXPECT_EQ(d->arch, c.architectures()[g.arch].arch) << n;
    }
  }
  for (const auto& a : c.architectures()) {
    auto d = c.resolve_gpu(a.arch);
    ASSERT_TRUE(d.ok()) << a.arch << ": " << d.error().describe();
    EXPECT_EQ(d->arch, a.arch);
    EXPECT_EQ(d->platform, a.platform);
    if (a.compute_capability) {
      auto by_cc = c.resolve_gpu(to_string(*a.compute_capability));
      ASSERT_TRUE(by_cc.ok()) << to_string(*a.compute_capability);
      EXPECT_EQ(by_cc->arch, a.arch);
      EXPECT_EQ(sm_name(*a.compute_capability), a.arch);  // the catalog's arch names follow sm_name
    }
  }
}

TEST(ResolveGpuCatalogTest, EveryArchitectureHasASource) {
  for (const auto& a : catalog().architectures()) EXPECT_FALSE(a.source.empty()) << a.arch;
  for (const auto& f : catalog().families()) EXPECT_FALSE(f.source.empty()) << f.name;
}

TEST(ResolveGpuCatalogTest, AssumedCudaIsRaisedToWhatTheGpuNeeds) {
  const Catalog& c = catalog();
  EXPECT_EQ(c.assumed_cuda(), (CudaVersion{12, 9}));
  EXPECT_FALSE(c.assumed_cuda_source().empty());
  const GpuArch* hopper = c.find_arch("sm90");
  const GpuArch* thor = c.find_arch("sm110");
  ASSERT_TRUE(hopper && thor);
  EXPECT_EQ(c.assumed_cuda_for(*hopper), (CudaVersion{12, 9}));
  EXPECT_EQ(c.assumed_cuda_for(*thor), (CudaVersion{13, 0}));  // sm110 needs CUDA 13.0
  EXPECT_EQ(c.find_arch(ComputeCapability{12, 1}), c.find_arch("sm121"));
  EXPECT_EQ(c.find_arch(ComputeCapability{9, 9}), nullptr);
}

struct BadGpuCase {
  std::string label;
  std::string input;
  ErrorCode code;
  std::string message;     // a substring of the message
  std::string suggestion;  // exact; "" when none is expected
};

void PrintTo(const BadGpuCase& c, std::ostream* os) { *os << c.label; }

class ResolveBadGpuTest : public testing::TestWithParam<BadGpuCase> {};

TEST_P(ResolveBadGpuTest, FailsWithCodeMessageAndSuggestion) {
  const BadGpuCase& c = GetParam();
  auto d = catalog().resolve_gpu(c.input);
  ASSERT_FALSE(d.ok()) << "resolved to " << d->arch;
  const Error& e = d.error();
  EXPECT_EQ(e.code, c.code) << e.describe();
  EXPECT_NE(e.message.find(c.message), std::string::npos) << e.message;
  EXPECT_EQ(e.suggestion, c.suggestion) << e.describe();
  EXPECT_EQ(e.where, "--gpu");
  EXPECT_LT(e.describe().size(), 4096u) << "an error line must stay readable";
  if (e.code == ErrorCode::unknown_name) {
    // Unknown names list the valid ones.
    EXPECT_NE(std::find(e.choices.begin(), e.choices.end(), "sm90"), e.choices.end());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bad, ResolveBadGpuTest,
    testing::Values(
        BadGpuCase{"sm_9999", "sm_9999", ErrorCode::unknown_name, "unknown compute capability 999.9 ('sm_9999')", ""},
        BadGpuCase{"sm_99", "sm_99", ErrorCode::unknown_name, "unknown compute capability 9.9", ""},
        BadGpuCase{"cc_9_9", "9.9", ErrorCode::unknown_name, "unknown compute capability 9.9", ""},
        BadGpuCase{"H1OO", "H1OO", ErrorCode::unknown_name, "unknown GPU 'H1OO'", "H100"},
        BadGpuCase{"B2OO", "B2OO", ErrorCode::unknown_name, "unknown GPU 'B2OO'", "B200"},
        BadGpuCase{"empty", "", ErrorCode::invalid_argument, "expected a GPU name or compute capability", ""},
        BadGpuCase{"punctuation", " -_ ", ErrorCode::invalid_argument, "expected a GPU name or compute capability", ""},
        BadGpuCase{"cc_12_x", "12.x", ErrorCode::unknown_name, "'12.x'", ""},
        BadGpuCase{"P100", "Tesla P100-PCIE-16GB", ErrorCode::unknown_name, "unknown GPU 'Tesla P100-PCIE-16GB'", ""},
        BadGpuCase{"ten_kilobytes", std::string(10240, 'H'), ErrorCode::invalid_argument,
                   "expected a GPU name or compute capability", ""}),
    [](const testing::TestParamInfo<BadGpuCase>& p) { return p.param.label; });

// ---- model names -> kind and traits ----

struct ModelCase {
  std::string label;
  std::string input;
  AttentionKind kind;
  std::string family;  // "" for a kind name
  bool sliding_window;
  bool attention_sinks;
  bool multimodal;
  std::string origin;  // a substring of origin
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.input; }

class ResolveModelTest : public testing::TestWithParam<ModelCase> {};

TEST_P(ResolveModelTest, ResolvesKindAndTraits) {
  const ModelCase& c = GetParam();
  auto t = resolve_model(catalog(), c.input);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->kind, c.kind) << name_of(t->kind);
  EXPECT_EQ(t->family, c.family);
  EXPECT_EQ(t->sliding_window, c.sliding_window);
  EXPECT_EQ(t->attention_sinks, c.attention_sinks);
  EXPECT_EQ(t->multimodal, c.multimodal);
  EXPECT_EQ(t->id, c.input);
  EXPECT_NE(t->origin.find(c.origin), std::string::npos) << t->origin;
}

constexpr AttentionKind kMha = AttentionKind::mha;
constexpr AttentionKind kMla = AttentionKind::mla;
constexpr AttentionKind kGdn = AttentionKind::gdn;
constexpr AttentionKind kDsa = AttentionKind::dsa;

INSTANTIATE_TEST_SUITE_P(
    Names, ResolveModelTest,
    testing::Values(
        ModelCase{"mha", "mha", kMha, "", false, false, false, "kind name"},
        ModelCase{"mla", "mla", kMla, "", false, false, false, "kind name"},
        ModelCase{"gdn", "gdn", kGdn, "", false, false, false, "kind name"},
        ModelCase{"dsa", "dsa", kDsa, "", false, false, false, "kind name"},
        ModelCase{"DeepSeekV3", "deepseek-ai/DeepSeek-V3", kMla, "deepseek-v3", false, false, false, "family deepseek-v3"},
        ModelCase{"DeepSeekV3_any_case", "DEEPSEEK-AI/deepseek-v3", kMla, "deepseek-v3", false, false, false, "model table"},
        ModelCase{"DeepSeekV3_2", "deepseek-ai/DeepSeek-V3.2", kDsa, "deepseek-v32", false, false, false, "family deepseek-v32"},
        ModelCase{"Qwen3Next", "Qwen/Qwen3-Next-80B-A3B-Instruct", kGdn, "qwen3-next", false, false, false, "qwen3-next"},
        ModelCase{"GptOss120b", "openai/gpt-oss-120b", kMha, "gpt-oss", true, true, false, "gpt-oss"},
        ModelCase{"Llama31", "meta-llama/Meta-Llama-3.1-8B-Instruct", kMha, "llama", false, false, false, "family llama"},
        ModelCase{"Gemma3", "google/gemma-3-27b-it", kMha, "gemma-3", true, false, true, "gemma-3"},
        ModelCase{"ArchitectureName", "DeepseekV3ForCausalLM", kMla, "deepseek-v3", false, false, false,
                  "architecture DeepseekV3ForCausalLM"}),
    [](const testing::TestParamInfo<ModelCase>& p) { return p.param.label; });

TEST(ResolveModelTableTest, EveryModelIdAndArchitectureResolvesToItsFamily) {
  for (const auto& f : catalog().families()) {
    for (const auto& id : f.models) {
      auto t = resolve_model(catalog(), id);
      ASSERT_TRUE(t.ok()) << id;
      EXPECT_EQ(t->family, f.name) << id;
      EXPECT_EQ(t->kind, f.kind) << id;
    }
    for (const auto& arch : f.architectures) {
      auto t = resolve_model(catalog(), arch);
      ASSERT_TRUE(t.ok()) << arch;
      EXPECT_EQ(t->family, f.name) << arch;
      EXPECT_EQ(t->kind, f.kind) << arch;
    }
  }
}

TEST(ResolveModelTableTest, UnknownIdSuggestsTheClosest) {
  auto t = resolve_model(catalog(), "deepseek-ai/DeepSeek-V4");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::unknown_name);
  EXPECT_EQ(t.error().where, "--model");
  EXPECT_EQ(t.error().suggestion, "deepseek-ai/DeepSeek-V3");
  EXPECT_NE(t.error().message.find("unknown model 'deepseek-ai/DeepSeek-V4'"), std::string::npos) << t.error().message;

  auto q = resolve_model(catalog(), "meta-llama/Llamb-3.1-8B-Instruct");  // no family names its checkpoints so
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().suggestion, "meta-llama/Llama-3.1-8B-Instruct");

  auto kind = resolve_model(catalog(), "mlaa");
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().suggestion, "mla");

  auto far = resolve_model(catalog(), "completely-unrelated/model");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().code, ErrorCode::unknown_name);
  EXPECT_EQ(far.error().suggestion, "");
}

// ---- config.json files ----

struct ConfigCase {
  std::string label;
  std::string path;  // under tests/fixtures/configs/
  AttentionKind kind;
  std::string family;
  std::string architecture;
  bool sliding_window;
  bool multimodal;
  std::vector<std::string> evidence;  // substrings origin must contain
};

void PrintTo(const ConfigCase& c, std::ostream* os) { *os << c.path; }

class ConfigTest : public testing::TestWithParam<ConfigCase> {};

TEST_P(ConfigTest, ReadsKindTraitsAndEvidence) {
  const ConfigCase& c = GetParam();
  const std::string path = kConfigs + c.path;
  auto t = resolve_model(catalog(), path);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->kind, c.kind) << name_of(t->kind) << "; origin: " << t->origin;
  EXPECT_EQ(t->family, c.family);
  EXPECT_EQ(t->architecture, c.architecture);
  EXPECT_EQ(t->sliding_window, c.sliding_window) << t->origin;
  EXPECT_EQ(t->multimodal, c.multimodal) << t->origin;
  EXPECT_FALSE(t->attention_sinks);
  EXPECT_EQ(t->id, path);
  EXPECT_EQ(t->origin.rfind(path, 0), 0u) << "origin starts with the file read: " << t->origin;
  for (const auto& e : c.evidence) EXPECT_NE(t->origin.find(e), std::string::npos) << "origin lacks \"" << e << "\": " << t->origin;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ConfigTest,
    testing::Values(
        ConfigCase{"DeepSeekV3", "deepseek-v3.json", kMla, "deepseek-v3", "DeepseekV3ForCausalLM", false, false,
                   {"architecture DeepseekV3ForCausalLM", "family deepseek-v3"}},
        ConfigCase{"DeepSeekV3_2", "deepseek-v3.2.json", kDsa, "deepseek-v32", "DeepseekV32ForCausalLM", false, false,
                   {"DeepseekV32ForCausalLM"}},
        // Qwen3-Next's real config.json has full_attention_interval, not layer_types: the architecture decides.
        ConfigCase{"Qwen3NextDirectory", "qwen3-next-dir", kGdn, "qwen3-next", "Qwen3NextForCausalLM", false, false,
                   {"qwen3-next-dir/config.json", "Qwen3NextForCausalLM"}},
        ConfigCase{"LayerTypesLinearAttention", "hybrid-linear-unknown-arch.json", kGdn, "", "AcmeHybridForCausalLM", false,
                   false, {"linear-attention layers"}},
        ConfigCase{"Qwen2SlidingWindowDisabled", "qwen2-sliding-disabled.json", kMha, "qwen2", "Qwen2ForCausalLM", false,
                   false, {"Qwen2ForCausalLM"}},
        ConfigCase{"MistralV01SlidingWindow", "mistral-7b-v0.1.json", kMha, "mistral", "MistralForCausalLM", true, false,
                   {"MistralForCausalLM", "sliding_window"}},
        ConfigCase{"Gemma3", "gemma-3.json", kMha, "gemma-3", "Gemma3ForConditionalGeneration", true, true,
                   {"Gemma3ForConditionalGeneration"}},
        ConfigCase{"MultimodalUnknownArchitecture", "multimodal-unknown-arch.json", kMha, "",
                   "AcmeVisionForConditionalGeneration", true, true, {"sliding_window", "vision_config"}},
        ConfigCase{"KvLoraRankUnknownArchitecture", "mla-unknown-arch.json", kMla, "", "AcmeLatentForCausalLM", false, false,
                   {"kv_lora_rank"}},
        ConfigCase{"IndexTopkUnknownArchitecture", "dsa-unknown-arch.json", kDsa, "", "AcmeSparseForCausalLM", false, false,
                   {"kv_lora_rank", "index_topk"}},
        ConfigCase{"NoArchitectures", "llama-no-architectures.json", kMha, "", "", false, false, {"standard attention"}}),
    [](const testing::TestParamInfo<ConfigCase>& p) { return p.param.label; });

TEST(ConfigErrorTest, MalformedConfigIsAParseErrorWithLineAndColumn) {
  const std::string path = kConfigs + "malformed.json";
  auto t = resolve_model(catalog(), path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::parse_error);
  EXPECT_EQ(t.error().where, path + ":4:21") << t.error().describe();  // the end of the key after the missing comma
  EXPECT_NE(t.error().message.find("expected '}'"), std::string::npos) << t.error().message;
}

TEST(ConfigErrorTest, ArchitecturesMustBeAnArray) {
  const std::string path = kConfigs + "architectures-string.json";
  auto t = resolve_model(catalog(), path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(t.error().where, path + "#/architectures");
}

TEST(ConfigErrorTest, NotAnObject) {
  auto t = traits_from_config(catalog(), "[1, 2, 3]", "list.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(t.error().where, "list.json");
  EXPECT_NE(t.error().message.find("expected a JSON object, got an array"), std::string::npos);
}

TEST(ConfigErrorTest, EmptyConfigIsAParseError) {
  auto t = traits_from_config(catalog(), "", "empty.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::parse_error);
  EXPECT_EQ(t.error().where, "empty.json:1:1");
}

// nlohmann reports "1e400" as out_of_range, not parse_error: it must still come back as a value.
TEST(ConfigErrorTest, NumberOverflowIsAnErrorNotAnException) {
  std::unique_ptr<Result<ModelTraits>> t;
  ASSERT_NO_THROW(t = std::make_unique<Result<ModelTraits>>(
                      traits_from_config(catalog(), "{\"rope_theta\": 1e400}", "overflow.json")));
  ASSERT_FALSE(t->ok());
  EXPECT_EQ(t->error().code, ErrorCode::parse_error);
}

TEST(ConfigErrorTest, TraitsFromTextUseTheOriginGiven) {
  auto t = traits_from_config(catalog(), R"({"architectures": ["Foo", "DeepseekV3ForCausalLM"], "kv_lora_rank": 512})",
                              "inline");
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->kind, kMla);
  EXPECT_EQ(t->family, "deepseek-v3");  // the first known architecture decides
  EXPECT_EQ(t->architecture, "DeepseekV3ForCausalLM");
  EXPECT_EQ(t->origin.rfind("inline: ", 0), 0u) << t->origin;
}

// Without head_dim, a model without MLA has hidden_size / heads.
TEST(ConfigShapeTest, HeadSizeFromHiddenSizeWithoutMla) {
  auto t = traits_from_config(catalog(),
                              R"({"architectures": ["SomeNewForCausalLM"], "num_attention_heads": 32,
                                  "hidden_size": 4096})",
                              "mha.json");
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->head_dim, 128);
}

// The shape rules may condition on: head counts and sizes, MLA dimensions, the sparse top-k.
TEST(ConfigShapeTest, ReadsHeadsDimsAndDtype) {
  auto t = traits_from_config(catalog(),
                              R"({"architectures": ["DeepseekV32ForCausalLM"], "num_attention_heads": 128,
                                  "num_key_value_heads": 128, "hidden_size": 7168, "kv_lora_rank": 512,
                                  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                                  "index_topk": 2048, "torch_dtype": "bfloat16"})",
                              "v32.json");
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->num_attention_heads, 128);
  EXPECT_EQ(t->num_key_value_heads, 128);
  // The latent head MLA kernels see: kv_lora_rank + qk_rope_head_dim (vLLM ModelConfig.get_head_size),
  // not hidden_size / heads (56).
  EXPECT_EQ(t->head_dim, 576);
  EXPECT_EQ(t->kv_lora_rank, 512);
  EXPECT_EQ(t->qk_nope_head_dim, 128);
  EXPECT_EQ(t->qk_rope_head_dim, 64);
  EXPECT_EQ(t->v_head_dim, 128);
  EXPECT_EQ(t->index_topk, 2048);
  EXPECT_EQ(t->torch_dtype, "bfloat16");

  // Multimodal configs keep them in text_config; a missing KV head count means one per head;
  // values of the wrong type are not guessed.
  auto vlm = traits_from_config(catalog(),
                                R"({"text_config": {"num_attention_heads": 32, "head_dim": 128}, "torch_dtype": "float16",
                                    "vision_config": {}})",
                                "vlm.json");
  ASSERT_TRUE(vlm.ok());
  EXPECT_EQ(vlm->num_key_value_heads, 32);
  EXPECT_EQ(vlm->head_dim, 128);
  EXPECT_EQ(vlm->torch_dtype, "float16");
  auto odd = traits_from_config(catalog(), R"({"num_attention_heads": "32", "num_key_value_heads": -1})", "odd.json");
  ASSERT_TRUE(odd.ok());
  EXPECT_FALSE(odd->num_attention_heads.has_value());
  EXPECT_FALSE(odd->num_key_value_heads.has_value());
  EXPECT_FALSE(odd->kv_lora_rank.has_value());
}

// ---- names as deployment files write them (tests/cases/model_names.json) ----

TEST(ModelReferenceTest, NamesResolveAsTheCaseTableSays) {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/model_names.json");
  ASSERT_TRUE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json cases = nlohmann::json::parse(text.str())["cases"];
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    const std::string name = c["name"].get<std::string>();
    const std::optional<ModelTraits> t = resolve_model_reference(catalog(), name);
    if (c["family"].is_null()) {
      EXPECT_FALSE(t.has_value()) << name << " must stay unknown, resolved as " << (t ? t->origin : "");
      continue;
    }
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->family, c["family"].get<std::string>()) << name << ": " << t->origin;
    EXPECT_EQ(std::string(name_of(t->kind)), c["kind"].get<std::string>()) << name;
    EXPECT_EQ(t->id, name);
    const std::string how = c["how"].get<std::string>();
    EXPECT_NE(t->origin.find(how), std::string::npos) << name << ": " << t->origin << " (expected " << how << ")";
    if (c.contains("head_dim")) {
      ASSERT_TRUE(t->head_dim.has_value()) << name;
      EXPECT_EQ(*t->head_dim, c["head_dim"].get<int>()) << name;
    }
  }
}

TEST(ModelReferenceTest, TheMostSpecificCheckpointPatternWins) {
  std::string pattern;
  const ModelFamily* v32 = catalog().family_by_name("DeepSeek-V3.2-Speciale-FP8", &pattern);
  ASSERT_NE(v32, nullptr);
  EXPECT_EQ(v32->name, "deepseek-v32");
  EXPECT_EQ(pattern, "DeepSeek-V3.2*");
  const ModelFamily* v3 = catalog().family_by_name("deepseek-v3.1-terminus", &pattern);  // case-insensitive
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->name, "deepseek-v3");
  EXPECT_EQ(catalog().family_by_name("gemma-3-270m-it")->name, "gemma-3-text");
  EXPECT_EQ(catalog().family_by_name("gemma-3-27b-it")->name, "gemma-3");
  EXPECT_EQ(catalog().family_by_name(""), nullptr);
  EXPECT_EQ(catalog().family_by_name(std::string(300, 'Q')), nullptr);
}

TEST(ModelReferenceTest, SelectResolvesDeploymentNamesToo) {
  auto t = resolve_model(catalog(), "Qwen/Qwen3.5-122B-A10B-FP8");
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->kind, AttentionKind::gdn);
  EXPECT_EQ(t->family, "qwen3.5");
  // A kind name stays a kind; a path part named like one never is.
  EXPECT_EQ(resolve_model(catalog(), "mla")->origin, "kind name");
  EXPECT_FALSE(resolve_model(catalog(), "/nonexistent/mla/weights").ok());
}

TEST(ModelReferenceTest, CandidatesOfPathsAndCacheDirectories) {
  const auto snap = model_id_candidates("/m/openai/gpt-oss-20b/snapshots/6cd4d0ffba39483fe4fb0f5637831f717dafca35/");
  EXPECT_NE(std::find(snap.begin(), snap.end(), "openai/gpt-oss-20b"), snap.end());
  // A commit hash and `snapshots` are never names of their own.
  EXPECT_EQ(std::count(snap.begin(), snap.end(), "6cd4d0ffba39483fe4fb0f5637831f717dafca35"), 0);
  EXPECT_EQ(std::count(snap.begin(), snap.end(), "snapshots"), 0);
  const auto cache = model_id_candidates("models--Qwen--Qwen3-8B");
  EXPECT_NE(std::find(cache.begin(), cache.end(), "Qwen/Qwen3-8B"), cache.end());
  const auto nested = model_id_candidates("/hub/models--Qwen--Qwen3-8B/snapshots/abcdef0123456789");
  EXPECT_NE(std::find(nested.begin(), nested.end(), "Qwen/Qwen3-8B"), nested.end());
  EXPECT_TRUE(model_id_candidates(std::string(5000, '/')).empty());
}

TEST(ModelReferenceTest, GlobalHeadDimIsTheHeadSizeKernelsNeed) {
  auto t = traits_from_config(catalog(),
                              R"({"architectures": ["Gemma4ForConditionalGeneration"], "text_config": {"head_dim": 256,
                                  "global_head_dim": 512, "num_attention_heads": 8, "sliding_window": 1024}})",
                              "gemma4.json");
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->family, "gemma-4");
  ASSERT_TRUE(t->head_dim.has_value());
  EXPECT_EQ(*t->head_dim, 512);
  // A family that fixes the head size keeps it when the config does not say.
  auto oss = traits_from_config(catalog(), R"({"architectures": ["GptOssForCausalLM"]})", "oss.json");
  ASSERT_TRUE(oss.ok());
  EXPECT_EQ(oss->head_dim, 64);
}

TEST(ModelReferenceTest, BadCheckpointPatternsAreRefusedWithTheirPointer) {
  const char* gpus = R"({"schema_version": 1, "assumed_cuda": {"version": "12.9", "source": "s"},
    "architectures": [{"arch": "sm90", "platform": "cuda", "compute_capability": "9.0", "source": "s"}], "gpus": []})";
  for (const char* pattern : {"\"*\"", "\"ab*\"", "\"org/name*\""}) {
    const std::string models = std::string(R"({"schema_version": 1, "families": [{"name": "f", "kind": "mha", "source": "s", "names": [)") +
                               pattern + "]}]}";
    auto c = load_catalog(gpus, "gpus.json", models, "models.json");
    ASSERT_FALSE(c.ok()) << pattern;
    EXPECT_NE(c.error().where.find("/families/0/names/0"), std::string::npos) << c.error().describe();
  }
  auto bad_head = load_catalog(gpus, "gpus.json",
                               R"({"schema_version": 1, "families": [{"name": "f", "kind": "mha", "source": "s", "head_dim": 0}]})",
                               "models.json");
  ASSERT_FALSE(bad_head.ok());
  EXPECT_NE(bad_head.error().where.find("/families/0/head_dim"), std::string::npos) << bad_head.error().describe();
}

// A hybrid model's recurrent state, by the keys its vLLM model class reads; a config with absurd
// dimensions gives none (the state's byte count must stay far inside 64 bits).
TEST(Catalog, RecurrentStateFromConfig) {
  auto gdn = traits_from_config(catalog(), R"({"architectures": ["Qwen3NextForCausalLM"], "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
      "linear_conv_kernel_dim": 4})", "qwen3-next.json");
  ASSERT_TRUE(gdn.ok()) << gdn.error().describe();
  ASSERT_TRUE(gdn->recurrent_state);
  EXPECT_EQ(gdn->recurrent_state->kind, RecurrentState::Kind::gated_delta_net);
  EXPECT_EQ(gdn->recurrent_state->num_v_heads, 32);

  auto nemotron = traits_from_config(catalog(), R"({"architectures": ["NemotronHForCausalLM"], "mamba_num_heads": 128,
      "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4})", "nemotron-h.json");
  ASSERT_TRUE(nemotron.ok() && nemotron->recurrent_state);
  EXPECT_EQ(nemotron->recurrent_state->kind, RecurrentState::Kind::mamba2);
  EXPECT_EQ(nemotron->recurrent_state->intermediate_size, 128 * 64);

  auto falcon = traits_from_config(catalog(), R"({"hidden_size": 2048, "mamba_n_heads": 24, "mamba_d_head": 128,
      "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2})", "falcon-h1.json");
  ASSERT_TRUE(falcon.ok() && falcon->recurrent_state);
  EXPECT_EQ(falcon->recurrent_state->intermediate_size, 4096);  // no mamba_d_ssm: expand x hidden

  auto jamba = traits_from_config(catalog(), R"({"hidden_size": 4096, "mamba_expand": 2, "mamba_d_state": 16,
      "mamba_d_conv": 4})", "jamba.json");
  ASSERT_TRUE(jamba.ok() && jamba->recurrent_state);
  EXPECT_EQ(jamba->recurrent_state->kind, RecurrentState::Kind::mamba1);

  auto plain = traits_from_config(catalog(), R"({"num_attention_heads": 32, "hidden_size": 4096})", "llama.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->recurrent_state);

  auto absurd = traits_from_config(catalog(), R"({"mamba_num_heads": 16000000, "mamba_head_dim": 16000000,
      "n_groups": 16000000, "ssm_state_size": 16000000, "conv_kernel": 16000000})", "absurd.json");
  ASSERT_TRUE(absurd.ok());
  EXPECT_FALSE(absurd->recurrent_state);
}

}  // namespace
}  // namespace attnsel
