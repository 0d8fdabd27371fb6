// Model names to attention traits: kind names, the family table, and Hugging Face config.json files.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "attnsel/catalog.hpp"
#include "core/read_file.hpp"
#include "core/suggest.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {

using detail::json;

namespace {

ModelTraits from_family(const ModelFamily& f) {
  ModelTraits t;
  t.kind = f.kind;
  t.sliding_window = f.sliding_window;
  t.multimodal = f.multimodal;
  t.attention_sinks = f.attention_sinks;
  t.family = f.name;
  if (!f.architectures.empty()) t.architecture = f.architectures.front();
  if (f.head_dim > 0) t.head_dim = f.head_dim;
  return t;
}

bool present(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

// A positive integer field, or nullopt when absent or of another type (configs vary; none is an error).
std::optional<int> count(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<long long>();
  return v > 0 && v < (1 << 24) ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
}

// The recurrent state of a hybrid model, by the config.json keys its vLLM model class reads (each
// class's get_mamba_state_shape_from_config @48ebd6f2f): gated delta net (Qwen3-Next, Qwen3.5:
// linear_*), Mamba2 (NemotronH: mamba_num_heads x mamba_head_dim; FalconH1, Bamba, GraniteMoeHybrid:
// mamba_n_heads, mamba_d_ssm else mamba_expand x hidden_size) and Mamba1 (Jamba). nullopt when the
// config has none of these sets complete.
std::optional<RecurrentState> read_recurrent_state(const json& text) {
  // Every dimension at most 2^16 (real models: hundreds), so the state's byte count stays far inside
  // 64 bits whatever a config says.
  auto all = [](std::initializer_list<std::optional<int>> v) {
    return std::all_of(v.begin(), v.end(), [](const std::optional<int>& x) { return x && *x <= (1 << 16); });
  };
  // A product of two config fields, or nullopt past 2^30 (a hostile config never overflows).
  auto product = [](std::optional<int> a, std::optional<int> b) -> std::optional<int> {
    if (!a || !b || static_cast<long long>(*a) * *b > (1LL << 30)) return std::nullopt;
    return *a * *b;
  };
  RecurrentState st;
  if (auto kh = count(text, "linear_num_key_heads"), vh = count(text, "linear_num_value_heads"),
      kd = count(text, "linear_key_head_dim"), vd = count(text, "linear_value_head_dim"),
      ck = count(text, "linear_conv_kernel_dim");
      all({kh, vh, kd, vd, ck})) {
    st.kind = RecurrentState::Kind::gated_delta_net;
    st.num_k_heads = *kh, st.num_v_heads = *vh, st.head_k_dim = *kd, st.head_v_dim = *vd, st.conv_kernel = *ck;
    return st;
  }
  const std::optional<int> hidden = count(text, "hidden_size"), expand = count(text, "mamba_expand");
  const std::optional<int> expanded = product(hidden, expand);
  st.kind = RecurrentState::Kind::mamba2;
  if (auto h = count(text, "mamba_num_heads"), d = count(text, "mamba_head_dim"), g = count(text, "n_groups"),
      n = count(text, "ssm_state_size"), k = count(text, "conv_kernel"), i = product(h, d);
      all({h, d, g, n, k}) && i) {  // NemotronH
    st.num_heads = *h, st.head_dim = *d, st.n_groups = *g, st.state_size = *n, st.conv_kernel = *k;
    st.intermediate_size = *i;
    return st;
  }
  const std::optional<int> state = count(text, "mamba_d_state"), conv = count(text, "mamba_d_conv");
  if (auto h = count(text, "mamba_n_heads"), d = count(text, "mamba_d_head"), g = count(text, "mamba_n_groups"),
      i = count(text, "mamba_d_ssm");
      all({h, d, g, state, conv}) && (i || expanded)) {  // FalconH1, Bamba, GraniteMoeHybrid
    st.num_heads = *h, st.head_dim = *d, st.n_groups = *g, st.state_size = *state, st.conv_kernel = *conv;
    st.intermediate_size = i ? *i : *expanded;
    return st;
  }
  if (all({state, conv}) && expanded && !count(text, "mamba_n_heads")) {  // Jamba
    st.kind = RecurrentState::Kind::mamba1;
    st.state_size = *state, st.conv_kernel = *conv, st.intermediate_size = *expanded;
    return st;
  }
  return std::nullopt;
}

// The shape fields rules may condition on.
void read_shape(const json& text, const json& cfg, ModelTraits& t) {
  t.num_attention_heads = count(text, "num_attention_heads");
  t.num_key_value_heads = count(text, "num_key_value_heads");
  if (!t.num_key_value_heads) t.num_key_value_heads = t.num_attention_heads;  // no GQA field: one KV head per head
  const std::optional<int> family_head_dim = t.head_dim;
  t.head_dim = count(text, "head_dim");
  if (auto hidden = count(text, "hidden_size"); !t.head_dim && hidden && t.num_attention_heads)
    t.head_dim = *hidden / *t.num_attention_heads;
  // Models with two head sizes (Gemma 4: head_dim 256 on sliding layers, global_head_dim 512 on
  // full-attention ones) need kernels for the larger; so does a family that fixes it.
  for (const std::optional<int>& other : {count(text, "global_head_dim"), family_head_dim})
    if (other && (!t.head_dim || *other > *t.head_dim)) t.head_dim = other;
  t.mha_head_dim = t.head_dim;
  t.kv_lora_rank = count(text, "kv_lora_rank");
  t.qk_nope_head_dim = count(text, "qk_nope_head_dim");
  t.qk_rope_head_dim = count(text, "qk_rope_head_dim");
  t.v_head_dim = count(text, "v_head_dim");
  // An MLA model's attention kernels see the latent head: kv_lora_rank + qk_rope_head_dim (vLLM
  // vllm/config/model.py@c3124680 ModelConfig.get_head_size, use_mla), not hidden_size / heads.
  if ((t.kind == AttentionKind::mla || t.kind == AttentionKind::dsa) && t.kv_lora_rank && !family_head_dim &&
      !count(text, "head_dim"))
    t.head_dim = *t.kv_lora_rank + t.qk_rope_head_dim.value_or(0);
  t.index_topk = count(text, "index_topk");
  t.recurrent_state = read_recurrent_state(text);
  for (const json* j : {&text, &cfg})
    if (auto it = j->find("torch_dtype"); it != j->end() && it->is_string() && t.torch_dtype.empty())
      t.torch_dtype = it->get<std::string>().substr(0, 32);
  std::vector<std::string> keys;
  for (const json* j : {&cfg, &text})
    for (auto it = j->begin(); it != j->end() && keys.size() < 4096; ++it)
      if (!it->is_null() && it.key().size() <= 128) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  t.config_keys = std::move(keys);
}

bool layer_types_contain(const json& cfg, std::string_view type) {
  auto it = cfg.find("layer_types");
  if (it == cfg.end() || !it->is_array()) return false;
  for (const auto& v : *it)
    if (v.is_string() && v.get<std::string>() == type) return true;
  return false;
}

}  // namespace

Result<ModelTraits> traits_from_config(const Catalog& catalog, std::string_view json_text, std::string_view origin) {
  auto parsed = detail::parse_json(json_text, origin);
  if (!parsed) return parsed.error();
  const json& cfg = *parsed;
  if (!cfg.is_object())
    return Error{ErrorCode::invalid_argument, fmt::format("expected a JSON object, got {}", detail::type_name(cfg)), std::string(origin), {}, {}};
  // Multimodal configs keep the language model's fields in text_config.
  const json& text = cfg.contains("text_config") && cfg["text_config"].is_object() ? cfg["text_config"] : cfg;

  ModelTraits t;
  std::vector<std::string> evidence;
  if (auto it = cfg.find("architectures"); it != cfg.end()) {
    if (!it->is_array())
      return Error{ErrorCode::invalid_argument, "\"architectures\" must be an array of strings", std::string(origin) + "#/architectures", {}, {}};
    for (const auto& a : *it) {
      if (!a.is_string()) continue;
      if (t.architecture.empty()) t.architecture = a.get<std::string>();
      if (const ModelFamily* f = catalog.family_by_architecture(a.get<std::string>())) {
        std::string arch = a.get<std::string>();
        t = from_family(*f);
        t.architecture = arch;
        evidence.push_back(fmt::format("architecture {} (family {})", arch, f->name));
        break;
      }
    }
  }
  const bool known = !t.family.empty();
  if (!known && present(text, "kv_lora_rank")) {
    t.kind = AttentionKind::mla;
    evidence.push_back("kv_lora_rank");
  }
  if ((t.kind == AttentionKind::mla || t.kind == AttentionKind::dsa) && present(text, "index_topk")) {
    if (t.kind != AttentionKind::dsa) evidence.push_back("index_topk (DeepSeek sparse attention)");
    t.kind = AttentionKind::dsa;
  }
  // Qwen3-Next style configs have no layer_types but linear-attention head counts and an interval.
  if (layer_types_contain(text, "linear_attention") || present(text, "linear_num_key_heads") ||
      present(text, "full_attention_interval")) {
    if (t.kind != AttentionKind::gdn) evidence.push_back("linear-attention layers (layer_types / linear_num_key_heads)");
    t.kind = AttentionKind::gdn;
  }
  bool sliding = present(text, "sliding_window") && !(text.contains("use_sliding_window") && text["use_sliding_window"] == false);
  if (layer_types_contain(text, "sliding_attention")) sliding = true;
  if (sliding && !t.sliding_window) evidence.push_back("sliding_window");
  t.sliding_window = t.sliding_window || sliding;
  if (present(cfg, "vision_config") && !t.multimodal) {
    t.multimodal = true;
    evidence.push_back("vision_config");
  }
  read_shape(text, cfg, t);
  if (evidence.empty()) evidence.push_back("no MLA, DSA, GDN or sliding-window fields: standard attention");
  t.origin = fmt::format("{}: {}", origin, fmt::join(evidence, ", "));
  return t;
}

std::optional<ModelTraits> resolve_model_name(const Catalog& catalog, std::string_view text) {
  if (auto kind = parse_kind(text)) {
    ModelTraits t;
    t.kind = *kind;
    t.id = std::string(text);
    t.origin = "kind name";
    return t;
  }
  if (const ModelFamily* f = catalog.family_by_model_id(text)) {
    ModelTraits t = from_family(*f);
    t.id = std::string(text);
    t.origin = fmt::format("model table: family {}", f->name);
    return t;
  }
  if (const ModelFamily* f = catalog.family_by_architecture(text)) {
    ModelTraits t = from_family(*f);
    t.id = std::string(text);
    t.architecture = std::string(text);
    t.origin = fmt::format("architecture {}: family {}", text, f->name);
    return t;
  }
  return std::nullopt;
}

std::optional<ModelTraits> resolve_model_reference(const Catalog& catalog, std::string_view text, bool patterns) {
  const std::vector<std::string> candidates = model_id_candidates(text);
  auto named = [&](const ModelFamily& f, std::string how) {
    ModelTraits t = from_family(f);
    t.id = std::string(text);
    t.origin = std::move(how);
    return t;
  };
  // Ids and architectures first: they name the checkpoint; a pattern only its family's naming.
  for (const std::string& candidate : candidates) {
    if (const ModelFamily* f = catalog.family_by_model_id(candidate))
      return named(*f,
                   candidate == text ? fmt::format("model table: family {}", f->name)
                                     : fmt::format("model table: {} (family {})", candidate, f->name));
    if (const ModelFamily* f = catalog.family_by_architecture(candidate)) {
      ModelTraits t = named(*f, fmt::format("architecture {}: family {}", candidate, f->name));
      t.architecture = candidate;
      return t;
    }
  }
  for (const std::string& candidate : candidates) {
    if (!patterns) break;
    const std::size_t slash = candidate.rfind('/');
    const std::string_view name = slash == std::string::npos ? std::string_view(candidate) : std::string_view(candidate).substr(slash + 1);
    std::string pattern;
    if (const ModelFamily* f = catalog.family_by_name(name, &pattern))
      return named(*f, fmt::format("name {} matches the family {}'s checkpoint names ({})", name, f->name, pattern));
  }
  return std::nullopt;
}

Result<ModelTraits> resolve_model(const Catalog& catalog, std::string_view text) {
  if (auto named = resolve_model_name(catalog, text)) return std::move(*named);
  std::error_code ec;
  std::filesystem::path path{std::string(text)};
  if (std::filesystem::is_directory(path, ec)) path /= "config.json";
  const auto type = std::filesystem::symlink_status(path, ec).type();
  if (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::none) {
    auto content = detail::read_file_bounded(path.string());  // a directory, FIFO or loop says so
    if (!content) return content.error();
    auto traits = traits_from_config(catalog, *content, path.string());
    if (traits) traits->id = std::string(text);
    return traits;
  }
  if (auto reference = resolve_model_reference(catalog, text)) return std::move(*reference);
  Error e{ErrorCode::unknown_name,
          fmt::format("unknown model '{}': not a kind (mha, mla, gdn, dsa), a model id in the family table, or a path to a "
                      "config.json or a model directory",
                      text),
          "--model", {}, {}};
  std::vector<std::string> names{"mha", "mla", "gdn", "dsa"};
  auto ids = catalog.model_ids();
  names.insert(names.end(), ids.begin(), ids.end());
  e.suggestion = detail::closest_match(text, names);
  return e;
}

}  // namespace attnsel
