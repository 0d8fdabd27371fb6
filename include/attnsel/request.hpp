// What the user asks for: a device, a model, and the launch options that matter to attention.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/device.hpp"
#include "attnsel/types.hpp"

namespace attnsel {

// The recurrent state of a hybrid model's Mamba or gated-delta-net layers, from its config.json: what
// one sequence's state occupies, which vLLM fits into one attention block (the keys each model class
// passes to vLLM's MambaStateShapeCalculator, vllm/model_executor/layers/mamba/mamba_utils.py).
struct RecurrentState {
  enum class Kind : std::uint8_t { mamba1, mamba2, gated_delta_net };
  Kind kind = Kind::mamba2;
  int conv_kernel = 0;
  int intermediate_size = 0, n_groups = 0, num_heads = 0, head_dim = 0, state_size = 0;  // Mamba
  int num_k_heads = 0, num_v_heads = 0, head_k_dim = 0, head_v_dim = 0;                  // gated delta net
};

// The attention-relevant traits of a model (from a kind name, the model-family table or a config.json).
struct ModelTraits {
  AttentionKind kind = AttentionKind::mha;
  bool sliding_window = false;
  bool multimodal = false;
  bool attention_sinks = false;
  std::string family;        // e.g. "deepseek-v3": selection rules may single a family out
  std::string architecture;  // e.g. "DeepseekV3ForCausalLM"
  std::string id;            // what the user named: "deepseek-ai/DeepSeek-V3", "mla", a path
  std::string origin;        // how the kind was decided: "kind name", "model table", "config.json: kv_lora_rank"
  // The shape, from config.json (text_config for multimodal models); absent when not known.
  // Rules may condition on them (a default that depends on the KV head count, a head-size limit).
  std::optional<int> num_attention_heads, num_key_value_heads, head_dim;
  std::optional<int> kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;  // MLA
  // The head size as standard attention sees it (head_dim, else hidden_size / heads): head_dim
  // once an engine runs an MLA config as multi-head attention (vLLM and MiniCPM3).
  std::optional<int> mha_head_dim;
  std::optional<int> index_topk;  // DeepSeek sparse attention
  std::optional<RecurrentState> recurrent_state;  // hybrid Mamba/GDN models, from config.json
  std::string torch_dtype;        // "bfloat16" ... as the config writes it
  // The config.json keys present (not null), top level and text_config, sorted; absent when the
  // model did not come from a config.json (a kind or a model id): rules on them then do not apply.
  std::optional<std::vector<std::string>> config_keys;
};

// Explicit backend names for one slot (attention, linear, sparse): every phase, or per phase.
struct BackendChoice {
  std::optional<std::string> all;
  std::optional<std::string> prefill;
  std::optional<std::string> decode;
  bool empty() const { return !all && !prefill && !decode; }
};

// One --attention-backend-config value, typed as written (k=v pairs are strings until checked).
struct ConfigValue {
  enum class Type : std::uint8_t { string, integer, number, boolean, int_list, other };
  Type type = Type::string;
  std::string text;              // as written (for messages); strings unquoted
  long long integer = 0;
  double number = 0;
  bool boolean = false;
  std::vector<long long> ints;
  bool from_pairs = false;       // k=v form: the type comes from the declared parameter
};
struct BackendConfig {
  std::vector<std::pair<std::string, ConfigValue>> entries;  // in the order written
  std::string origin;            // "inline JSON", "key=value pairs", or the file path
};

struct Request {
  DeviceInfo device;
  ModelTraits model;
  ComputeDtype dtype = ComputeDtype::auto_;  // the model's compute dtype (diffusion engines)
  std::vector<std::string> installed;        // optional Python packages present (--installed, or detected)
  bool installed_known = false;              // false: nobody said; package requirements are then caveats
  std::optional<BackendConfig> backend_config;  // --attention-backend-config, parsed
  KvCacheDtype kv_cache_dtype = KvCacheDtype::auto_;
  std::string kv_cache_dtype_written;  // the engine's spelling of it as given ("fp8"); "" when not given
  std::optional<int> page_size;
  int tensor_parallel_size = 1;  // heads and recurrent state per GPU
  int speculative_topk = 0;  // EAGLE --speculative-eagle-topk; 0 means no speculative decoding
  Phase speculative_attention_mode = Phase::prefill;
  BackendChoice attention;   // --attention-backend, --prefill-attention-backend, --decode-attention-backend
  BackendChoice linear;      // --linear-attn-backend and its per-phase forms (GDN models)
  BackendChoice sparse;      // --dsa-prefill-backend / --dsa-decode-backend (DSA models)
  bool deterministic = false;       // --enable-deterministic-inference
  bool disable_radix_cache = false;  // --disable-radix-cache
  Preference prefer = Preference::sglang_default;
  bool strict = false;  // documented caveats (e.g. FlashMLA with FP8 KV) become errors

  // The choice for a slot by its matrix name; null for a slot this request type does not know.
  const BackendChoice* choice_for(std::string_view slot) const {
    if (slot == "attention") return &attention;
    if (slot == "linear") return &linear;
    if (slot == "sparse") return &sparse;
    return nullptr;
  }
};

}  // namespace attnsel
