// check_command(): one SGLang launch command, as launch_parse.cpp read it, judged for each target
// GPU. SGLang's own argument checks come first (unknown names, malformed values: it would exit
// before selecting anything); then the engine decides what SGLang would run, and every finding
// is located on the line of the flag that caused it.
#include "attnsel/check.hpp"

#include "attnsel/backend_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using Value = LaunchFlags::Value;

// SGLang's --kv-cache-dtype choices at the matrix's commit, and the newer ones attnsel has no data for.
constexpr std::array<std::string_view, 6> kSglangKvDtypes = {"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"};
constexpr std::array<std::string_view, 3> kUnmodelledKvDtypes = {"mxfp8", "nvfp4", "fp4_mx_block16"};
constexpr std::string_view kKvDtypeSource =
    "sgl-project/sglang server_args.py kv_cache_dtype choices (auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1; "
    "newer releases add mxfp8, nvfp4, fp4_mx_block16)";

// Backend names newer SGLang releases accept that the matrix has no cell for, per slot.
struct Unmodelled {
  std::string_view slot;
  std::string_view name;
};
constexpr std::array<Unmodelled, 14> kUnmodelledBackends = {{
    {"attention", "dsv4"}, {"attention", "compressed"}, {"attention", "cutedsl_mla"}, {"attention", "tokenspeed_mla"},
    {"attention", "hpc_ops"}, {"attention", "minicpm_flashattn"}, {"attention", "minicpm_flashinfer"},
    {"sparse", "flashmla_sparse_q8"}, {"sparse", "flashinfer_sparse_mla"},
    {"linear", "flashkda"}, {"linear", "nvidia_kda"}, {"linear", "ptx_kda"}, {"linear", "helion"}, {"linear", "intel_xpu"},
}};
constexpr std::string_view kBackendChoicesSource =
    "sgl-project/sglang server_args.py@001067ff ATTENTION_BACKEND_CHOICES, DSA_CHOICES, LINEAR_ATTN_KERNEL_BACKEND_CHOICES";

// SGLang's EAGLE-family handling of an unset --speculative-eagle-topk.
constexpr std::string_view kSpeculativeSource =
    "sgl-project/sglang python/sglang/srt/arg_groups/speculative_hook.py@004c82e0 _handle_eagle_family: with "
    "--speculative-num-steps, --speculative-eagle-topk and --speculative-num-draft-tokens all unset, "
    "_auto_choose_speculative_params picks (steps, topk, draft tokens) = (5, 4, 8) for LlamaForCausalLM and "
    "Grok1ForCausalLM/Grok1VForCausalLM, (3, 1, 4) for STANDALONE and every other architecture";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A value the shell fills in when the command runs: $VAR, ${VAR}, $(cmd), `cmd`.
bool from_environment(std::string_view text) {
  return text.find('$') != std::string_view::npos || text.find('`') != std::string_view::npos;
}

bool substitution(std::string_view text) {
  return text.find("$(") != std::string_view::npos || text.find('`') != std::string_view::npos;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<int> parse_int(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

template <class Range>
std::string join(const Range& names, std::string_view sep = ", ") {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

// The line of a flag as written in the command (`--flag` or `--flag=value`), for flags LaunchFlags
// keeps no Value of (booleans, flags it passes over).
std::optional<int> flag_line(const LaunchCommand& cmd, std::string_view flag) {
  for (std::size_t k = 0; k < cmd.args.size(); ++k) {
    const std::string& a = cmd.args[k];
    if (a == flag || (starts_with(a, flag) && a.size() > flag.size() && a[flag.size()] == '='))
      return k < cmd.arg_lines.size() ? cmd.arg_lines[k] : cmd.line;
  }
  return std::nullopt;
}

Value bool_flag(const LaunchCommand& cmd, std::string_view flag) {
  return Value{"", std::string(flag), flag_line(cmd, flag).value_or(cmd.line)};
}

// A finding sits on its flag's line when it has one, else on the command's.
void place(CheckDiagnostic& d, const Value* where, int command_line) {
  if (where) {
    d.flag = where->flag;
    d.value = where->text;
    d.line = where->line;
  } else {
    d.line = command_line;
  }
}

// Everything about a command that does not depend on the target GPU.
class Preparation {
 public:
  Preparation(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog, const LaunchCommand& cmd,
              const CheckOptions& options)
      : m_(*matrix), catalog_(catalog), cmd_(cmd), options_(options), flags_(parse_launch_flags(cmd)) {
    run();
  }

  const LaunchFlags& flags() const { return flags_; }
  const Request& request() const { return request_; }
  bool plannable() const { return plannable_; }
  const std::vector<CheckDiagnostic>& findings() const { return findings_; }
  const std::vector<std::string>& passed_over() const { return passed_over_; }

 private:
  void add(std::string rule, Severity severity, std::string message, std::string source, const Value* where) {
    CheckDiagnostic d;
    d.diagnostic.rule = std::move(rule);
    d.diagnostic.severity = severity;
    d.diagnostic.message = std::move(message);
    d.diagnostic.source = std::move(source);
    place(d, where, cmd_.line);
    if (severity == Severity::error) plannable_ = false;  // SGLang would exit before selecting
    findings_.push_back(std::move(d));
  }

  // The value usable as it is, or nullopt with a note when the shell fills it in at run time.
  const Value* usable(const std::optional<Value>& v) {
    if (!v) return nullptr;
    if (from_environment(v->text)) {
      add("check.from-environment", Severity::info,
          fmt::format("not checked: value comes from {} when the command runs; attnsel checks the command as if {} "
                      "were not given",
                      substitution(v->text) ? "a command substitution" : "the environment",
                      v->flag.empty() ? "the model" : v->flag),
          "attnsel check: values the shell expands are unknown before launch", &*v);
      return nullptr;
    }
    return &*v;
  }

  void run() {
    for (std::size_t i = 0; i < flags_.problems.size(); ++i) {
      const Error& p = flags_.problems[i];
      Value where{"", p.where, i < flags_.problem_lines.size() ? flags_.problem_lines[i] : cmd_.line};
      std::string message = p.message;
      if (!p.suggestion.empty()) message += fmt::format(" (did you mean {}?)", p.suggestion);
      add("check.argument", Severity::error, message,
          "SGLang parses its flags with argparse (server_args.py prepare_server_args): it exits on these", &where);
    }
    passed_over_ = flags_.ignored;
    for (const auto* v : {&flags_.tp, &flags_.mm_attention_backend, &flags_.attention_backend_config})
      if (*v) passed_over_.push_back((*v)->flag);

    const bool diffusion = is_diffusion_command(cmd_, flags_);
    if (diffusion && m_.info().any_model) {
      // The diffusion profile: the backend, its --attention-backend-config and the packages.
      request_.attention = {backend(flags_.attention_backend, "attention"), std::nullopt, std::nullopt};
      request_.installed = options_.installed;
      request_.installed_known = options_.installed_known;
      request_.model.id = flags_.model ? flags_.model->text : "";
      if (const Value* config = usable(flags_.attention_backend_config)) {
        Result<BackendConfig> parsed = parse_backend_config(config->text);
        std::error_code ec;
        if (std::filesystem::is_regular_file(config->text, ec)) {
          std::ifstream in(config->text, std::ios::binary);
          std::ostringstream text;
          text << in.rdbuf();
          parsed = parse_backend_config_file(text.str(), config->text);
        }
        if (parsed) request_.backend_config = std::move(*parsed);
        else add("check.backend-config", Severity::error, parsed.error().describe(),
                 "seeds/002: --attention-backend-config takes a JSON or YAML file, a JSON object, or key=value pairs", config);
      }
      request_.strict = options_.strict;
      return;
    }
    if (diffusion) {
      plannable_ = false;
      add("check.not-modelled", Severity::info,
          "not checked: diffusion models choose among their own attention backends, which attnsel does not model",
          "attnsel check covers SGLang's LLM attention backends", flags_.model_type ? &*flags_.model_type : nullptr);
      return;
    }
    resolve_model();
    request_.attention = {backend(flags_.attention_backend, "attention"), backend(flags_.prefill_attention_backend, "attention"),
                          backend(flags_.decode_attention_backend, "attention")};
    request_.linear = {backend(flags_.linear_attn_backend, "linear"), backend(flags_.linear_attn_prefill_backend, "linear"),
                       backend(flags_.linear_attn_decode_backend, "linear")};
    request_.sparse = {std::nullopt, backend(flags_.nsa_prefill_backend, "sparse"), backend(flags_.nsa_decode_backend, "sparse")};
    kv_dtype();
    page_size();
    speculative();
    request_.deterministic = flags_.enable_deterministic_inference;
    request_.disable_radix_cache = flags_.disable_radix_cache;
    request_.strict = options_.strict;
    assume_kind_if_unresolved();
  }

  // ---- the model ----

  void resolve_model() {
    if (const Value* kind = usable(flags_.model_kind)) {
      if (auto k = parse_kind(kind->text)) stated_kind_ = k;
      else
        add("check.model-kind", Severity::error,
            fmt::format("not a model kind; use one of {}", kind_names()), "attnsel check --model-kind", kind);
    }
    // A model the shell fills in needs no note of its own: the assumed kind's note says so.
    if (!flags_.model || from_environment(flags_.model->text)) {
      model_unresolved_ = true;
      model_id_ = flags_.model ? flags_.model->text : "";
      return;
    }
    const Value* model = &*flags_.model;
    model_id_ = model->text;
    Result<ModelTraits> traits = attnsel::resolve_model(catalog_, model->text);
    if (traits) {
      request_.model = *traits;
      return;
    }
    const Error& e = traits.error();
    if (e.code == ErrorCode::unknown_name) {
      model_unresolved_ = true;
      return;
    }
    // A local config.json that exists but cannot be read: SGLang would fail to load it too.
    model_unresolved_ = true;
    model_config_broken_ = true;
    add("check.model-config", Severity::error, fmt::format("cannot read the model's config: {}", e.describe()),
        "transformers AutoConfig: SGLang reads config.json before anything else", model);
  }

  // The kinds every explicit backend of the command can run; the stated kind or mha when open.
  void assume_kind_if_unresolved() {
    if (!model_unresolved_) return;
    AttentionKind kind = AttentionKind::mha;
    std::string why;
    bool stated = false;
    if (stated_kind_ || options_.model_kind) {
      kind = stated_kind_ ? *stated_kind_ : *options_.model_kind;
      why = "as given with --model-kind";
      stated = true;
    } else {
      std::uint32_t possible = (1u << kKindCount) - 1;
      std::vector<std::string> named;
      auto narrow = [&](const std::optional<std::string>& name, std::string_view slot_name) {
        if (!name) return;
        auto slot = m_.find_slot(slot_name);
        if (!slot) return;
        auto id = m_.find_backend(*name, *slot);
        if (!id) return;
        std::uint32_t kinds = 0;
        for (const Cell& c : m_.backend(*id).cells)
          for (int k = 0; k < kKindCount; ++k)
            if (c.kinds.contains(static_cast<AttentionKind>(k))) kinds |= 1u << k;
        possible &= kinds;
        if (std::find(named.begin(), named.end(), *name) == named.end()) named.push_back(*name);
      };
      for (const auto* n : {&request_.attention.all, &request_.attention.prefill, &request_.attention.decode})
        narrow(*n, "attention");
      for (const auto* n : {&request_.linear.all, &request_.linear.prefill, &request_.linear.decode}) narrow(*n, "linear");
      for (const auto* n : {&request_.sparse.prefill, &request_.sparse.decode}) narrow(*n, "sparse");
      const auto mha_bit = 1u << static_cast<unsigned>(AttentionKind::mha);
      if (!named.empty() && possible != 0 && !(possible & mha_bit)) {
        for (AttentionKind k : {AttentionKind::mla, AttentionKind::dsa, AttentionKind::gdn})
          if (possible & (1u << static_cast<unsigned>(k))) {
            kind = k;
            break;
          }
        why = fmt::format("because {} {} only {} models", join(named, " and "), named.size() == 1 ? "runs" : "run",
                          name_of(kind));
      }
    }
    request_.model = ModelTraits{};
    request_.model.kind = kind;
    request_.model.id = model_id_;
    request_.model.origin = fmt::format("assumed: {}", why.empty() ? "the default" : why);
    std::string subject;
    if (model_id_.empty()) {
      subject = "the command names no model";
    } else if (model_config_broken_) {
      subject = "the model's config cannot be read";
    } else if (from_environment(model_id_)) {
      subject = fmt::format("the model comes from {} when the command runs, so attnsel cannot look it up",
                            substitution(model_id_) ? "a command substitution" : "the environment");
    } else {
      // The flag and its value precede the message where there is a flag; `sglang serve MODEL` has none.
      const bool named_by_flag = flags_.model && !flags_.model->flag.empty();
      subject = fmt::format("{} is neither in attnsel's model table nor a local config.json or model directory",
                            named_by_flag ? std::string("this model") : "'" + model_id_ + "'");
    }
    const Value* where = flags_.model ? &*flags_.model : nullptr;
    add("check.model-assumed", Severity::info,
        fmt::format("{}; checked as kind {} ({}){}{}", subject, name_of(kind), detail::kind_title(kind),
                    why.empty() ? ", the default" : " " + why,
                    stated ? "" : "; state the kind with attnsel check --model-kind mha|mla|gdn|dsa"),
        "attnsel check: the model kind decides which backends apply", where);
  }

  // ---- backends and values ----

  std::optional<std::string> backend(const std::optional<Value>& v, std::string_view slot_name) {
    const Value* value = usable(v);
    if (!value) return std::nullopt;
    auto slot = m_.find_slot(slot_name);
    if (!slot || m_.find_backend(value->text, *slot)) return value->text;
    const Slot& s = m_.slot(*slot);
    std::vector<std::string> choices = m_.backend_names(*slot);
    const bool upstream = std::any_of(kUnmodelledBackends.begin(), kUnmodelledBackends.end(),
                                      [&](const Unmodelled& u) { return u.slot == slot_name && u.name == value->text; });
    std::string message;
    if (upstream) {
      message = fmt::format("newer SGLang releases accept this {} backend, but attnsel's matrix has no data for it, so "
                            "the command cannot be checked; backends attnsel checks: {}",
                            s.title, join(choices));
    } else {
      message = fmt::format("unknown {} backend: SGLang would exit with 'invalid choice'", s.title);
      const std::string suggestion = detail::closest_match(value->text, choices);
      if (!suggestion.empty()) message += fmt::format("; did you mean {}?", suggestion);
      message += fmt::format(" Valid: {}", join(choices));
      for (SlotId other = 0; other < m_.slots().size(); ++other)
        if (other != *slot && m_.find_backend(value->text, other))
          message += fmt::format(" ('{}' is a {} backend)", value->text, m_.slot(other).title);
    }
    add("check.unknown-backend", Severity::error, message, std::string(kBackendChoicesSource), value);
    return std::nullopt;
  }

  void kv_dtype() {
    const Value* v = usable(flags_.kv_cache_dtype);
    if (!v) return;
    const bool sglang_accepts = std::find(kSglangKvDtypes.begin(), kSglangKvDtypes.end(), v->text) != kSglangKvDtypes.end();
    if (sglang_accepts) {
      if (auto d = parse_kv_dtype(v->text)) {
        request_.kv_cache_dtype = *d;
        return;
      }
    }
    const std::string valid = "auto, bf16 (or bfloat16), fp8_e4m3, fp8_e5m2, fp4_e2m1";
    std::string message;
    if (std::find(kUnmodelledKvDtypes.begin(), kUnmodelledKvDtypes.end(), v->text) != kUnmodelledKvDtypes.end()) {
      message = fmt::format("newer SGLang releases accept this KV cache dtype, but attnsel's matrix has no data for "
                            "it, so the command cannot be checked; KV cache dtypes attnsel checks: {}",
                            valid);
    } else {
      std::vector<std::string> choices(kSglangKvDtypes.begin(), kSglangKvDtypes.end());
      message = "unknown KV cache dtype: SGLang would exit with 'invalid choice'";
      const std::string suggestion = detail::closest_match(v->text, choices);
      if (!suggestion.empty()) message += fmt::format("; did you mean {}?", suggestion);
      message += fmt::format(" Valid: {}", valid);
    }
    add("check.unknown-kv-dtype", Severity::error, message, std::string(kKvDtypeSource), v);
  }

  void page_size() {
    const Value* v = usable(flags_.page_size);
    if (!v) return;
    auto n = parse_int(v->text);
    if (!n || *n < 1) {
      add("check.invalid-value", Severity::error, "the page size must be a positive whole number of tokens",
          "sgl-project/sglang server_args.py: page_size is an int", v);
      return;
    }
    request_.page_size = *n;
  }

  void speculative() {
    if (const Value* mode = usable(flags_.speculative_attention_mode)) {
      if (auto p = parse_phase(mode->text)) request_.speculative_attention_mode = *p;
      else
        add("check.invalid-value", Severity::error, "SGLang accepts only prefill or decode here",
            "sgl-project/sglang server_args.py speculative_attention_mode choices ['prefill', 'decode']", mode);
    }
    std::optional<int> topk;
    const Value* topk_value = usable(flags_.speculative_eagle_topk);
    if (topk_value) {
      topk = parse_int(topk_value->text);
      if (!topk || *topk < 1) {
        add("check.invalid-value", Severity::error, "the EAGLE draft tree width must be a positive whole number",
            "sgl-project/sglang server_args.py: speculative_eagle_topk is an int", topk_value);
        return;
      }
    }
    if (!flags_.speculative_algorithm) {
      if (topk_value)
        add("check.speculative", Severity::info,
            "has no effect without --speculative-algorithm: attnsel checks the command without speculative decoding",
            std::string(kSpeculativeSource), topk_value);
      return;
    }
    const Value* algorithm = usable(flags_.speculative_algorithm);
    if (!algorithm) return;
    // SGLang upper-cases the name; NEXTN is EAGLE (speculative_hook.py _resolve_speculative_algorithm_alias).
    const std::string name = upper(algorithm->text);
    if (name != "EAGLE" && name != "EAGLE3" && name != "NEXTN" && name != "STANDALONE") {
      add("check.speculative", Severity::info,
          fmt::format("not modelled: attnsel checks the attention backends only for EAGLE-family speculative decoding "
                      "(EAGLE, EAGLE3, NEXTN, STANDALONE); with {} the command is checked without speculative "
                      "decoding",
                      name),
          std::string(kSpeculativeSource), algorithm);
      return;
    }
    if (topk) {
      request_.speculative_topk = *topk;
      return;
    }
    const std::optional<int> steps = flag_line(cmd_, "--speculative-num-steps");
    const std::optional<int> drafts = flag_line(cmd_, "--speculative-num-draft-tokens");
    if (steps || drafts) {
      Value where{"", steps ? "--speculative-num-steps" : "--speculative-num-draft-tokens", steps ? *steps : *drafts};
      add("check.speculative", Severity::error,
          "SGLang chooses --speculative-eagle-topk itself only when --speculative-num-steps, --speculative-eagle-topk "
          "and --speculative-num-draft-tokens are all unset; with only some of them it fails at startup "
          "(an assertion, or comparing an unset topk); give --speculative-eagle-topk as well",
          std::string(kSpeculativeSource), &where);
      return;
    }
    const std::string& arch = request_.model.architecture;
    int chosen = 1;
    std::string because;
    if (name == "STANDALONE") {
      because = "for STANDALONE";
    } else if (arch == "LlamaForCausalLM" || arch == "Grok1ForCausalLM" || arch == "Grok1VForCausalLM") {
      chosen = 4;
      because = fmt::format("for {}", arch);
    } else if (!arch.empty()) {
      because = fmt::format("for {}", arch);
    } else {
      because = "for every architecture but Llama and Grok (the model's architecture is unknown here)";
    }
    request_.speculative_topk = chosen;
    add("check.speculative-topk", Severity::info,
        fmt::format("--speculative-eagle-topk not given: SGLang picks topk {} {}, so attnsel checks topk {}", chosen,
                    because, chosen),
        std::string(kSpeculativeSource), algorithm);
  }

  const Matrix& m_;
  const Catalog& catalog_;
  const LaunchCommand& cmd_;
  const CheckOptions& options_;
  LaunchFlags flags_;
  Request request_;
  bool plannable_ = true;
  bool model_unresolved_ = false;
  bool model_config_broken_ = false;
  std::string model_id_;
  std::optional<AttentionKind> stated_kind_;
  std::vector<CheckDiagnostic> findings_;
  std::vector<std::string> passed_over_;
};

// ---- locating the selection's findings ----

class Locator {
 public:
  Locator(const Matrix& m, const LaunchCommand& cmd, const LaunchFlags& flags) : m_(m), cmd_(cmd), flags_(flags) {}

  // The user's flag for a backend in a phase (-1: any), or null when they named none.
  const Value* backend_value(BackendId backend, int phase) const {
    Finding f;
    f.backend = backend;
    f.phase = static_cast<std::int8_t>(phase);
    return backend_flag(f);
  }

  CheckDiagnostic locate(const Selection& s, const Finding& f) const {
    CheckDiagnostic d;
    d.diagnostic = s.describe(f);
    place(d, flag_for(f), cmd_.line);
    return d;
  }

 private:
  // The user's flag behind a finding: the value the rule is about (KV dtype, page size, topk ...)
  // when they wrote one, else the flag that chose the backend, else the model.
  const Value* flag_for(const Finding& f) const {
    if (!f.rule) return nullptr;
    const std::string& id = f.rule->id;
    std::uint32_t uses = 0;
    bool sets_page = false;
    if (id == "cell.kv-dtype") uses = Condition::f_kv_dtype;
    else if (id == "cell.page-size" || starts_with(id, "page.")) uses = Condition::f_page_size;
    else if (id == "cell.speculative") uses = Condition::f_topk;
    else if (starts_with(id, "feature.") || id == "cell.kind") uses = Condition::f_kind;
    else if (const Rule* rule = m_.find_rule(id)) {
      uses = rule->when.uses();
      sets_page = rule->set.page_size.has_value();
    }
    if ((uses & (Condition::f_kv_dtype | Condition::f_kv_dtype_explicit)) && kept(flags_.kv_cache_dtype))
      return &*flags_.kv_cache_dtype;
    if ((sets_page || (uses & (Condition::f_page_size | Condition::f_page_size_explicit))) && kept(flags_.page_size))
      return &*flags_.page_size;
    if (uses & Condition::f_topk) {
      if (kept(flags_.speculative_eagle_topk)) return &*flags_.speculative_eagle_topk;
      if (kept(flags_.speculative_algorithm)) return &*flags_.speculative_algorithm;
    }
    if ((uses & Condition::f_spec_mode) && kept(flags_.speculative_attention_mode))
      return &*flags_.speculative_attention_mode;
    if ((uses & Condition::f_deterministic) && flags_.enable_deterministic_inference)
      return remember(bool_flag(cmd_, "--enable-deterministic-inference"));
    if ((uses & Condition::f_radix_cache) && flags_.disable_radix_cache)
      return remember(bool_flag(cmd_, "--disable-radix-cache"));
    if (const Value* b = backend_flag(f)) return b;
    if ((uses & (Condition::f_kind | Condition::f_family | Condition::f_sliding_window | Condition::f_multimodal |
                 Condition::f_attention_sinks)) &&
        kept(flags_.model))
      return &*flags_.model;
    return nullptr;
  }

  // The flag that named the finding's backend, in the finding's phase.
  const Value* backend_flag(const Finding& f) const {
    if (f.backend == kNoBackend) return nullptr;
    const SlotId slot = m_.backend(f.backend).slot;
    const std::string& slot_name = m_.slot(slot).name;
    const std::optional<Value>*all = nullptr, *prefill = nullptr, *decode = nullptr;
    if (slot_name == "attention") {
      all = &flags_.attention_backend;
      prefill = &flags_.prefill_attention_backend;
      decode = &flags_.decode_attention_backend;
    } else if (slot_name == "linear") {
      all = &flags_.linear_attn_backend;
      prefill = &flags_.linear_attn_prefill_backend;
      decode = &flags_.linear_attn_decode_backend;
    } else if (slot_name == "sparse") {
      prefill = &flags_.nsa_prefill_backend;
      decode = &flags_.nsa_decode_backend;
    } else {
      return nullptr;
    }
    std::vector<const std::optional<Value>*> order;
    if (f.phase == static_cast<int>(Phase::prefill)) order = {prefill, all};
    else if (f.phase == static_cast<int>(Phase::decode)) order = {decode, all};
    else order = {all, prefill, decode};
    for (const auto* v : order) {
      if (!v || !kept(*v)) continue;
      auto id = m_.find_backend((*v)->text, slot);
      if (id && *id == f.backend) return &**v;
    }
    return nullptr;
  }

  static bool kept(const std::optional<Value>& v) { return v && !from_environment(v->text); }

  const Value* remember(Value v) const {
    extra_.push_back(std::move(v));
    return &extra_.back();
  }

  const Matrix& m_;
  const LaunchCommand& cmd_;
  const LaunchFlags& flags_;
  mutable std::deque<Value> extra_;  // boolean flags located on demand; stable addresses
};

// A fixed-size kernel SGLang does not resize for: without --page-size SGLang keeps its default
// and the kernel cannot run it. The engine plans the size it needs; a launch command must say it.
void page_size_unset(const Matrix& m, const Selection& s, const Locator& locator, const LaunchCommand& cmd,
                     std::vector<CheckDiagnostic>& out) {
  if (s.page.origin != PageOrigin::planned || s.page.requested) return;
  std::vector<BackendId> seen;
  for (const PageConstraint& c : s.page.constraints) {
    if (!c.support || c.support->mode != PageMode::fixed || c.support->allows(m.default_page_size())) continue;
    if (std::find(seen.begin(), seen.end(), c.backend) != seen.end()) continue;
    seen.push_back(c.backend);
    CheckDiagnostic d;
    d.diagnostic.rule = "check.page-size-unset";
    d.diagnostic.severity = Severity::error;
    d.diagnostic.message = fmt::format(
        "{} runs only with page size {} on {}, and SGLang does not set it: without --page-size SGLang keeps its "
        "default, {}; add --page-size {}",
        m.backend(c.backend).title, detail::describe_page_support(*c.support), detail::describe_gpu(s.request.device),
        m.default_page_size(), s.page.page_size);
    d.diagnostic.source = "the backend's page_size in the matrix; no SGLang rewrite sets it on this GPU";
    d.diagnostic.backend = m.backend(c.backend).name;
    d.diagnostic.phase = std::string(name_of(c.phase));
    if (const Value* v = locator.backend_value(c.backend, static_cast<int>(c.phase))) {
      d.flag = v->flag;
      d.value = v->text;
      d.line = v->line;
    } else {
      d.line = cmd.line;
    }
    out.push_back(std::move(d));
  }
}

}  // namespace

std::string_view name_of(Verdict v) {
  switch (v) {
    case Verdict::clean: return "clean";
    case Verdict::warning: return "warning";
    case Verdict::error: return "error";
  }
  return "?";
}

std::vector<const CheckDiagnostic*> CommandCheck::all() const {
  std::vector<const CheckDiagnostic*> out;
  for (const auto* list : {&findings, &errors, &warnings, &notes})
    for (const auto& d : *list) out.push_back(&d);
  return out;
}

Verdict CommandCheck::verdict() const {
  Verdict v = Verdict::clean;
  for (const CheckDiagnostic* d : all()) {
    if (d->diagnostic.severity == Severity::error) return Verdict::error;
    if (d->diagnostic.severity == Severity::warning) v = Verdict::warning;
  }
  return v;
}

bool CommandCheck::fails(bool strict) const {
  const Verdict v = verdict();
  return v == Verdict::error || (strict && v == Verdict::warning);
}

Result<std::vector<CheckTarget>> resolve_check_targets(const Catalog& catalog, std::string_view gpu_list,
                                                       const std::optional<std::string>& cuda) {
  std::vector<CheckTarget> out;
  std::size_t start = 0;
  while (start <= gpu_list.size()) {
    std::size_t comma = gpu_list.find(',', start);
    if (comma == std::string_view::npos) comma = gpu_list.size();
    std::string label(gpu_list.substr(start, comma - start));
    start = comma + 1;
    label.erase(0, label.find_first_not_of(" \t"));
    label.erase(label.find_last_not_of(" \t") + 1);
    if (label.empty())
      return Error{ErrorCode::invalid_argument,
                   fmt::format("empty GPU name in '{}': expected a comma-separated list such as sm90,sm100", gpu_list),
                   "--gpu", {}, {}};
    if (std::any_of(out.begin(), out.end(), [&](const CheckTarget& t) { return t.label == label; })) continue;

    DeviceSpec spec;
    spec.origin = "--gpu";
    std::string lower = label;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "ascend") lower = "npu";
    auto platform = parse_platform(lower);
    if (platform && *platform != Platform::cuda) {
      spec.platform = platform;
    } else {
      spec.gpu = label;
      Result<DeviceInfo> gpu = catalog.resolve_gpu(label);
      if (!gpu) {
        Error e = gpu.error();
        e.where = "--gpu";
        e.message += "; a platform without a GPU name is one of npu (ascend), xpu, cpu, mps, rocm";
        return e;
      }
      if (gpu->platform == Platform::cuda) spec.cuda = cuda;
    }
    Result<DeviceInfo> device = resolve_device(catalog, spec);
    if (!device) return device.error();
    out.push_back(CheckTarget{label, *device});
    if (comma == gpu_list.size()) break;
  }
  if (out.empty())
    return Error{ErrorCode::invalid_argument, "no GPU given: pass --gpu sm90 (or a list: sm90,sm100)", "--gpu", {}, {}};
  return out;
}

bool is_diffusion_command(const LaunchCommand& command, const LaunchFlags& flags) {
  return command.launcher == "sglang generate" || (flags.model_type && flags.model_type->text == "diffusion");
}

std::vector<CommandCheck> check_command(const std::shared_ptr<const Matrix>& llm_matrix, const Catalog& catalog,
                                        const LaunchCommand& command, const std::vector<CheckTarget>& targets,
                                        const CheckOptions& options) {
  // Diffusion commands are judged against the diffusion profile when the caller has one.
  const bool diffusion = options.diffusion_matrix && is_diffusion_command(command, parse_launch_flags(command));
  const std::shared_ptr<const Matrix>& matrix = diffusion ? options.diffusion_matrix : llm_matrix;
  const Preparation prep(matrix, catalog, command, options);
  const Locator locator(*matrix, command, prep.flags());
  std::vector<CommandCheck> out;
  for (const CheckTarget& target : targets) {
    CommandCheck c;
    c.command = command;
    c.target = target;
    c.model = prep.request().model;
    c.findings = prep.findings();
    c.passed_over = prep.passed_over();
    if (prep.plannable()) {
      Request request = prep.request();
      request.device = target.device;
      Result<Selection> selection = select(matrix, request);
      if (selection) {
        const Selection& s = *selection;
        for (const auto& f : s.errors) c.errors.push_back(locator.locate(s, f));
        for (const auto& f : s.warnings) c.warnings.push_back(locator.locate(s, f));
        for (const auto& f : s.notes) c.notes.push_back(locator.locate(s, f));
        page_size_unset(*matrix, s, locator, command, c.findings);
        c.model = s.request.model;
        c.selection = std::move(*selection);
      } else {
        // Names were checked above; a matrix given with --matrix may still disagree.
        const Error& e = selection.error();
        CheckDiagnostic d;
        d.diagnostic.rule = "check.unknown-backend";
        d.diagnostic.severity = Severity::error;
        d.diagnostic.message = e.describe();
        d.flag = e.where;
        d.line = flag_line(command, e.where).value_or(command.line);
        c.findings.push_back(std::move(d));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace attnsel
