// The sglang-diffusion profile: every backend on every platform, package requirements, dtypes,
// and --attention-backend-config in its three forms against the declared parameters.
#include <set>

#include <gtest/gtest.h>

#include "attnsel/backend_config.hpp"
#include "attnsel/catalog.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {
namespace {

std::shared_ptr<const Matrix> diffusion() {
  auto m = builtin_matrix("sglang-diffusion");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().describe());
  return *m;
}

Request request_on(const std::string& gpu_or_platform, std::vector<std::string> installed = {}) {
  auto catalog = *builtin_catalog();
  DeviceSpec spec;
  if (auto p = parse_platform(gpu_or_platform); p && *p != Platform::cuda) spec.platform = p;
  else spec.gpu = gpu_or_platform;
  Request r;
  r.device = *resolve_device(*catalog, spec);
  r.installed = std::move(installed);
  r.installed_known = true;
  return r;
}

std::set<std::string> ids(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.rule->id);
  return out;
}

const std::vector<std::string> kEveryPackage = {"flash_attn", "st_attn", "sageattention", "sageattn3", "vsa",
                                                "kernel.attn.vmoba_attn.vmoba", "aiter", "svg"};

// Backend x platform, every package installed: the documented platform matrix (seeds/002).
struct Cell {
  const char* backend;
  const char* where;  // a GPU or a platform
  bool runs;
};

class DiffusionPlatformMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(DiffusionPlatformMatrix, RunsWhereTheDocsSay) {
  const Cell& c = GetParam();
  Request r = request_on(c.where, kEveryPackage);
  r.attention.all = c.backend;
  auto s = select(diffusion(), r);
  ASSERT_TRUE(s.ok()) << s.error().describe();
  EXPECT_EQ(s->ok(), c.runs) << c.backend << " on " << c.where;
  if (!c.runs) {
    EXPECT_TRUE(ids(s->errors).count("cell.platform")) << c.backend << " on " << c.where;
  }
}

// H100 (CUDA sm90), MI300X (ROCm), MPS, NPU.
const Cell kCells[] = {
    {"fa", "H100", true},   {"fa", "MI300X", true},   {"fa", "mps", false},   {"fa", "npu", false},
    {"torch_sdpa", "H100", true}, {"torch_sdpa", "MI300X", true}, {"torch_sdpa", "mps", true}, {"torch_sdpa", "npu", true},
    {"sliding_tile_attn", "MI300X", false}, {"sliding_tile_attn", "mps", false}, {"sliding_tile_attn", "npu", false},
    {"sage_attn", "H100", true}, {"sage_attn", "MI300X", false}, {"sage_attn", "mps", false}, {"sage_attn", "npu", false},
    {"sage_attn_3", "H100", true}, {"sage_attn_3", "MI300X", false}, {"sage_attn_3", "mps", false}, {"sage_attn_3", "npu", false},
    {"video_sparse_attn", "H100", true}, {"video_sparse_attn", "MI300X", false}, {"video_sparse_attn", "mps", false},
    {"video_sparse_attn", "npu", false},
    {"vmoba_attn", "H100", true}, {"vmoba_attn", "MI300X", false}, {"vmoba_attn", "mps", false}, {"vmoba_attn", "npu", false},
    {"aiter", "H100", true}, {"aiter", "MI300X", false}, {"aiter", "mps", false}, {"aiter", "npu", false},
    {"sparse_video_gen_2_attn", "H100", true}, {"sparse_video_gen_2_attn", "MI300X", false},
    {"sparse_video_gen_2_attn", "mps", false}, {"sparse_video_gen_2_attn", "npu", false},
};
INSTANTIATE_TEST_SUITE_P(Seed002, DiffusionPlatformMatrix, ::testing::ValuesIn(kCells),
                         [](const ::testing::TestParamInfo<Cell>& p) {
                           return std::string(p.param.backend) + "_on_" + p.param.where;
                         });

TEST(Diffusion, SlidingTileNeedsItsRequiredParameter) {
  Request r = request_on("H100", kEveryPackage);
  r.attention.all = "sliding_tile_attn";
  auto s = select(diffusion(), r);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->ok()) << "no config given: nothing to check";
  r.backend_config = *parse_backend_config("sta_mode=STA_inference");
  s = select(diffusion(), r);
  EXPECT_EQ(ids(s->errors), std::set<std::string>{"config.required"});
  EXPECT_NE(s->describe(s->errors[0]).message.find("mask_strategy_file_path"), std::string::npos);
}

TEST(Diffusion, AutomaticSelectionByPlatformDtypeAndPackages) {
  auto pick = [&](Request r) {
    auto s = select(diffusion(), r);
    EXPECT_TRUE(s.ok() && s->ok());
    return s->name(s->backend(Phase::prefill));
  };
  EXPECT_EQ(pick(request_on("H100", {"flash_attn"})), "fa");
  EXPECT_EQ(pick(request_on("H100", {})), "torch_sdpa") << "fa's runtime missing: SDPA";
  EXPECT_EQ(pick(request_on("T4", {"flash_attn"})), "torch_sdpa") << "fa needs SM80+";
  Request fp32 = request_on("H100", {"flash_attn"});
  fp32.dtype = ComputeDtype::fp32;
  EXPECT_EQ(pick(fp32), "torch_sdpa") << "fa needs fp16/bf16";
  EXPECT_EQ(pick(request_on("MI300X", {"flash_attn"})), "fa");
  EXPECT_EQ(pick(request_on("mps")), "torch_sdpa");
  EXPECT_EQ(pick(request_on("npu")), "torch_sdpa");
}

TEST(Diffusion, Fa3AndFa4AreAliasesOfFa) {
  for (const char* alias : {"fa3", "fa4"}) {
    Request r = request_on("H100", {"flash_attn"});
    r.attention.all = alias;
    auto s = select(diffusion(), r);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->name(s->backend(Phase::prefill)), "fa");
    EXPECT_EQ(s->flags(), (std::vector<std::string>{"--attention-backend", "fa"})) << "no page size in diffusion";
  }
}

TEST(Diffusion, MissingPackageIsAnErrorWhenKnownAndACaveatWhenNot) {
  Request r = request_on("H100", {});
  r.attention.all = "sage_attn";
  auto s = select(diffusion(), r);
  EXPECT_EQ(ids(s->errors), std::set<std::string>{"cell.requires"});
  r.installed_known = false;
  s = select(diffusion(), r);
  EXPECT_TRUE(s->ok());
  EXPECT_EQ(ids(s->warnings), std::set<std::string>{"cell.requires-unknown"});
}

TEST(Diffusion, SageAttentionComputeCapabilities) {
  for (const char* gpu : {"A100", "A10", "L40S", "H100", "RTX 5090"}) {
    Request r = request_on(gpu, kEveryPackage);
    r.attention.all = "sage_attn";
    EXPECT_TRUE(select(diffusion(), r)->ok()) << gpu;
  }
  for (const char* gpu : {"T4", "B200", "Jetson AGX Orin"}) {
    Request r = request_on(gpu, kEveryPackage);
    r.attention.all = "sage_attn";
    EXPECT_EQ(ids(select(diffusion(), r)->errors), std::set<std::string>{"cell.compute-capability"}) << gpu;
  }
}

// --attention-backend-config: each error names the parameter.
struct ConfigCase {
  const char* name;
  const char* backend;
  const char* text;
  std::set<std::string> errors;
  const char* mentions;
};

class DiffusionConfig : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(DiffusionConfig, ChecksAgainstTheDeclaredParameters) {
  const ConfigCase& c = GetParam();
  Request r = request_on("H100", kEveryPackage);
  r.attention.all = c.backend;
  auto parsed = parse_backend_config(c.text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  r.backend_config = *parsed;
  auto s = select(diffusion(), r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(ids(s->errors), c.errors) << c.text;
  if (*c.mentions) {
    bool found = false;
    for (const auto& d : s->describe(s->errors)) found |= d.message.find(c.mentions) != std::string::npos;
    EXPECT_TRUE(found) << "no error names " << c.mentions;
  }
}

const ConfigCase kConfigs[] = {
    {"vsa_ok_pairs", "video_sparse_attn", "sparsity=0.5", {}, ""},
    {"vsa_ok_json", "video_sparse_attn", R"({"sparsity": 0})", {}, ""},
    {"vsa_above_range", "video_sparse_attn", "sparsity=1.5", {"config.range"}, "sparsity"},
    {"vsa_below_range", "video_sparse_attn", R"({"sparsity": -0.1})", {"config.range"}, "sparsity"},
    {"vsa_wrong_type", "video_sparse_attn", "sparsity=high", {"config.type"}, "sparsity"},
    {"vsa_unknown_key", "video_sparse_attn", "sparsity=0.2,spartsity=0.3", {"config.unknown-key"}, "spartsity"},
    {"sta_ok", "sliding_tile_attn", "mask_strategy_file_path=/m.json,skip_time_steps=10", {}, ""},
    {"sta_int_expected", "sliding_tile_attn", "mask_strategy_file_path=/m.json,skip_time_steps=1.5", {"config.type"},
     "skip_time_steps"},
    {"sta_string_expected", "sliding_tile_attn", R"({"mask_strategy_file_path": 3})", {"config.type"}, "mask_strategy_file_path"},
    {"sta_missing_required", "sliding_tile_attn", "sta_mode=STA_inference", {"config.required"}, "mask_strategy_file_path"},
    {"vmoba_lists", "vmoba_attn", "spatial_chunk_size=[8,8],st_chunk_size=[2,8,8],moba_threshold=0.3", {}, ""},
    {"vmoba_list_expected", "vmoba_attn", "spatial_chunk_size=8", {"config.type"}, "spatial_chunk_size"},
    {"unused_on_fa", "fa", "sparsity=0.5", {}, ""},
};
INSTANTIATE_TEST_SUITE_P(Seed002, DiffusionConfig, ::testing::ValuesIn(kConfigs),
                         [](const ::testing::TestParamInfo<ConfigCase>& p) { return std::string(p.param.name); });

TEST(Diffusion, ConfigForABackendWithoutParametersIsIgnoredWithAWarning) {
  Request r = request_on("H100", kEveryPackage);
  r.attention.all = "fa";
  r.backend_config = *parse_backend_config("sparsity=0.5");
  auto s = select(diffusion(), r);
  EXPECT_EQ(ids(s->warnings), std::set<std::string>{"config.unused"});
}

TEST(BackendConfigParsing, ThreeForms) {
  auto pairs = parse_backend_config("sparsity=0.5, enable_x=true ,sizes=[1,2]");
  ASSERT_TRUE(pairs.ok());
  ASSERT_EQ(pairs->entries.size(), 3u);
  EXPECT_EQ(pairs->entries[0].second.type, ConfigValue::Type::number);
  EXPECT_EQ(pairs->entries[1].second.type, ConfigValue::Type::boolean);
  EXPECT_EQ(pairs->entries[2].second.type, ConfigValue::Type::int_list);
  auto inline_json = parse_backend_config(R"({"a": "x", "b": 2})");
  ASSERT_TRUE(inline_json.ok());
  EXPECT_EQ(inline_json->entries[1].second.integer, 2);
  auto file = parse_backend_config_file(R"({"sparsity": 0.25})", "cfg.json");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->origin, "cfg.json");
#ifdef ATTNSEL_TEST_YAML
#endif
  auto yaml = parse_backend_config_file("sparsity: 0.25\nname: 'x'\nsizes: [1, 2]\n", "cfg.yaml");
  if (yaml.ok()) {
    EXPECT_EQ(yaml->entries.size(), 3u);
  } else {
    EXPECT_NE(yaml.error().message.find("without YAML support"), std::string::npos) << yaml.error().describe();
  }
  EXPECT_FALSE(parse_backend_config("just-a-word").ok());
  EXPECT_FALSE(parse_backend_config("a=1,a=2").ok()) << "a parameter given twice";
  EXPECT_FALSE(parse_backend_config("{not json").ok());
  EXPECT_FALSE(parse_backend_config("[1, 2]").ok() && parse_backend_config("[1, 2]")->entries.size() > 0);
}

}  // namespace
}  // namespace attnsel
