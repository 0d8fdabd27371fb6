// The GPU catalog (names -> architecture) and the model-family table (architectures and
// well-known model ids -> attention kind and traits), both loaded from data/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/device.hpp"
#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/request.hpp"

namespace attnsel {

struct GpuArch {
  std::string arch;  // "sm90", "gfx942"
  Platform platform = Platform::cuda;
  std::optional<ComputeCapability> compute_capability;
  std::string family;  // "Hopper"
  std::optional<CudaVersion> min_cuda;
  std::optional<CudaVersion> max_cuda;  // exclusive: the first CUDA release without it
  std::string source;
};

struct GpuModel {
  std::string name;
  std::vector<std::string> aliases;
  std::size_t arch = 0;  // index into architectures()
};

struct ModelFamily {
  std::string name;
  AttentionKind kind = AttentionKind::mha;
  bool sliding_window = false, multimodal = false, attention_sinks = false;
  std::vector<std::string> architectures;
  std::vector<std::string> models;
  // How its checkpoints are named, for ids the table does not list: case-insensitive patterns on
  // the name without organisation or path, '*' standing for any run ("Qwen3.5-*", "gpt-oss-*").
  std::vector<std::string> names;
  int head_dim = 0;  // the largest attention head size, where the family fixes it; 0 when it varies
  std::string source;
};

class ATTNSEL_API Catalog {
 public:
  const std::vector<GpuArch>& architectures() const { return archs_; }
  const std::vector<GpuModel>& gpus() const { return gpus_; }
  const std::vector<ModelFamily>& families() const { return families_; }
  CudaVersion assumed_cuda() const { return assumed_cuda_; }
  const std::string& assumed_cuda_source() const { return assumed_cuda_source_; }

  // sm90, sm_90a, 9.0, 90, H100, "RTX 5090", rtx5090, MI300X, gfx942, "NVIDIA H100 80GB HBM3".
  Result<DeviceInfo> resolve_gpu(std::string_view text) const;
  const GpuArch* find_arch(std::string_view arch) const;
  const GpuArch* find_arch(ComputeCapability cc) const;
  // The CUDA version assumed when none is given: the catalog's default, raised to what the GPU needs.
  CudaVersion assumed_cuda_for(const GpuArch& arch) const;

  const ModelFamily* family_by_architecture(std::string_view architecture) const;
  const ModelFamily* family_by_model_id(std::string_view id) const;
  // The family whose name pattern matches `name` (a model's name without organisation or path:
  // "Qwen3.5-122B-A10B-FP8"); the most specific pattern (the most literal characters) wins.
  // `pattern` receives the pattern that matched. Null when none does.
  const ModelFamily* family_by_name(std::string_view name, std::string* pattern = nullptr) const;
  std::vector<std::string> gpu_names() const;   // catalog names and architectures, for messages
  std::vector<std::string> model_ids() const;

 private:
  friend struct CatalogBuilder;
  friend struct ImageCodec;  // the compiled matrix image (src/matrix/image.cpp)
  std::vector<GpuArch> archs_;
  std::vector<GpuModel> gpus_;
  std::vector<ModelFamily> families_;
  CudaVersion assumed_cuda_{12, 9};
  std::string assumed_cuda_source_;
};

ATTNSEL_API Result<std::shared_ptr<const Catalog>> load_catalog(std::string_view gpus_json, std::string_view gpus_origin,
                                                                std::string_view models_json, std::string_view models_origin);
// The catalog compiled into the library (data/gpus.json, data/models.json).
ATTNSEL_API Result<std::shared_ptr<const Catalog>> builtin_catalog();

// What a user says about the device without probing: --gpu, --platform, --cuda.
struct DeviceSpec {
  std::optional<std::string> gpu;
  std::optional<Platform> platform;
  std::optional<std::string> cuda;
  std::string origin = "--gpu";  // named in messages and DeviceInfo::origin
};

// Resolves a spec into a device. Without --cuda on CUDA the catalog's assumption applies (cuda_assumed).
// A non-CUDA platform needs no GPU; ROCm without one plans for the catalog's MI300X and says so.
ATTNSEL_API Result<DeviceInfo> resolve_device(const Catalog& catalog, const DeviceSpec& spec);
// Fills in the assumed CUDA version of a device that has none (probed devices always have one).
ATTNSEL_API void assume_cuda(const Catalog& catalog, DeviceInfo& device);

// A kind name (mha, mla, gdn, dsa), a well-known model id, an architecture name, or a path to a
// Hugging Face config.json or a directory holding one.
ATTNSEL_API Result<ModelTraits> resolve_model(const Catalog& catalog, std::string_view text);
// resolve_model without files: a kind name, a model id of the family table or an architecture;
// nullopt for anything else (a path is never looked at).
ATTNSEL_API std::optional<ModelTraits> resolve_model_name(const Catalog& catalog, std::string_view text);
// A model as deployment files write it, without files: an id of the family table or an
// architecture (never a kind name), tried for every model_id_candidates() of the text, then the
// families' name patterns on each candidate's name. The traits' origin says which matched and
// how. nullopt when nothing does. `patterns` false: ids and architectures only.
ATTNSEL_API std::optional<ModelTraits> resolve_model_reference(const Catalog& catalog, std::string_view text,
                                                              bool patterns = true);
// The traits a config.json describes (architectures, kv_lora_rank, index_topk, layer_types, sliding_window ...).
ATTNSEL_API Result<ModelTraits> traits_from_config(const Catalog& catalog, std::string_view json_text,
                                                  std::string_view origin);

// Model ids to try, best first, for a name as deployment files write it: the name itself, then
// with quantisation, tuning and date variants removed ("Qwen/Qwen3-32B-FP8" -> ..., "Qwen/Qwen3-32B";
// "/models/DeepSeek-R1-0528" -> "DeepSeek-R1-0528", "DeepSeek-R1"). A path also offers the ORG/NAME
// pairs and names among its earlier parts, last first, skipping commit hashes and `snapshots`
// ("/m/openai/gpt-oss-20b/snapshots/6cd4.../" -> "openai/gpt-oss-20b"), and a Hugging Face cache
// directory its id ("models--openai--gpt-oss-20b" -> "openai/gpt-oss-20b"). Case is kept; no I/O.
ATTNSEL_API std::vector<std::string> model_id_candidates(std::string_view name);

// The config.json of a model id in the local Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub,
// else ~/.cache/huggingface/hub): models--ORG--NAME/snapshots/*/config.json (the last snapshot by
// name when several); nullopt when absent. Reads no file, only looks for it.
ATTNSEL_API std::optional<std::string> hf_cache_config_path(std::string_view model_id);

}  // namespace attnsel
