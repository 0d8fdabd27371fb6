// check_command(): one SGLang launch command, as launch_parse.cpp read it, judged for each target
// GPU. SGLang's own argument checks come first (unknown names, malformed values: it would exit
// before selecting anything); then the engine decides what SGLang would run, and every finding
// is located on the line of the flag that caused it.
#include "attnsel/check.hpp"
#include "attnsel/fix.hpp"

#include "attnsel/backend_config.hpp"
#include "attnsel/launch_args.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <cctype>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "check/python_values.hpp"
#include "check/shown_value.hpp"
#include "advisory/check_advisories.hpp"
#include "core/read_file.hpp"
#include "core/suggest.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using Value = ArgValue;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A value the shell fills in when the command runs: $VAR, ${VAR}, $(cmd), `cmd`.
bool from_environment(std::string_view text) {
  return text.find('$') != std::string_view::npos || text.find('`') != std::string_view::npos;
}

// A value the shell fills in, unless the reader saw it written literally ('$X' in single quotes, a
// Dockerfile exec form, a Kubernetes args list): then the engine receives the $ as written.
bool from_environment(const ArgValue& v) { return v.shape != WordShape::literal && from_environment(v.text); }

bool substitution(std::string_view text) {
  return text.find("$(") != std::string_view::npos || text.find('`') != std::string_view::npos;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// A whole number as the engine's argparse reads it (Python's int()), within int.
std::optional<int> parse_int(std::string_view s) {
  const std::optional<long long> value = detail::python_int(s);
  if (!value || *value > std::numeric_limits<int>::max() || *value < std::numeric_limits<int>::min()) return std::nullopt;
  return static_cast<int>(*value);
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

// A finding sits on its flag's line when it has one, else on the command's; a long value is quoted
// short (shown_value), in its message too. Called once the message is set.
void place(CheckDiagnostic& d, const Value* where, int command_line) {
  if (where && !where->origin.empty()) {
    // Set in a file the command names (--config): the finding stays on the command, naming that file's line.
    d.flag = fmt::format("{} (in {}:{})", where->flag, where->origin, where->line);
    d.value = where->text;
    d.line = command_line;
  } else if (where) {
    d.flag = where->flag;
    d.value = where->text;
    d.line = where->line;
  } else {
    d.line = command_line;
  }
  detail::shorten_quotations(d.diagnostic.message, d.value);
}

// Everything about a command that does not depend on the target GPU.
class Preparation {
 public:
  Preparation(const std::shared_ptr<const Matrix>& matrix, const EngineProfile& profile, const Grammar& grammar,
              const Catalog& catalog, const LaunchCommand& cmd, const CheckOptions& options)
      : m_(*matrix), profile_(profile), catalog_(catalog), cmd_(without_own_options(cmd)), options_(options),
        args_(parse(cmd_, profile, grammar, options)) {
    run();
  }

  const ParsedArgs& args() const { return args_; }
  const Request& request() const { return request_; }
  bool plannable() const { return plannable_; }
  const std::vector<CheckDiagnostic>& findings() const { return findings_; }
  const std::vector<std::string>& passed_over() const { return passed_over_; }

 private:
  // `stops`: the engine exits on it (an error that is not only a lost intent), so nothing is planned.
  void add(std::string rule, Severity severity, std::string message, std::string source, const Value* where,
           bool stops = true) {
    CheckDiagnostic d;
    d.diagnostic.rule = std::move(rule);
    d.diagnostic.severity = severity;
    d.diagnostic.message = std::move(message);
    d.diagnostic.source = std::move(source);
    place(d, where, cmd_.line);
    if (severity == Severity::error && stops) plannable_ = false;  // the engine would exit before selecting
    findings_.push_back(std::move(d));
  }

  // attnsel's own --model-kind KIND, accepted in the bare-flags form (`attnsel check -- --flags`).
  LaunchCommand without_own_options(const LaunchCommand& cmd) {
    LaunchCommand out = cmd;
    for (std::size_t k = 0; k < out.args.size(); ++k) {
      const std::string& a = out.args[k];
      const bool joined = a.rfind("--model-kind=", 0) == 0;
      if (a != "--model-kind" && !joined) continue;
      const std::size_t n = joined || k + 1 >= out.args.size() ? 1 : 2;
      const int line = k < out.arg_lines.size() ? out.arg_lines[k] : out.line;
      if (cmd.launcher != "flags") {
        model_kind_problem_ = Value{"", "--model-kind", line, WordShape::literal, ""};
        continue;
      }
      model_kind_ = Value{joined ? a.substr(13) : (n == 2 ? out.args[k + 1] : ""), "--model-kind", line, WordShape::literal, ""};
      auto erase = [&](auto& v) {
        if (k < v.size()) v.erase(v.begin() + static_cast<std::ptrdiff_t>(k), v.begin() + static_cast<std::ptrdiff_t>(std::min(k + n, v.size())));
      };
      erase(out.args);
      erase(out.arg_lines);
      erase(out.arg_shapes);
      --k;
    }
    return out;
  }

  static ParsedArgs parse(const LaunchCommand& cmd, const EngineProfile& profile, const Grammar& grammar,
                          const CheckOptions& options) {
    ParseOptions po;
    po.engine_title = profile.title;
    po.read_config = options.read_config;
    po.positional_model = cmd.positional_model;
    if (options.release && !grammar.since.empty()) {
      const auto release = parse_release(*options.release), since = parse_release(grammar.since);
      po.approximate = release && since && *release < *since;
    }
    po.added_in = [&profile, &grammar](std::string_view option) -> std::optional<std::string> {
      const auto here = parse_release(grammar.since).value_or(ReleaseVersion{});
      std::optional<std::string> first;
      ReleaseVersion first_since{};
      for (std::size_t i = 0; i < profile.grammars.size(); ++i) {
        if (profile.grammars.name(i) != grammar.name) continue;
        const auto since = parse_release(profile.grammars.since(i));
        if (!since || !(here < *since) || (first && first_since < *since)) continue;
        if (profile.grammars[i].exact(option)) first = profile.grammars.since(i), first_since = *since;
      }
      if (!first) return std::nullopt;
      std::string why = fmt::format("{} first appears in the {} {} launch grammar, a later release than this command runs",
                                    option, profile.title, *first);
      // The variable that set the same thing before the option existed.
      for (const EngineProfile::EnvBinding& e : profile.environment)
        if (e.replacement == option) why += fmt::format("; this release reads {} instead", e.variable);
      return why;
    };
    return parse_launch_args(cmd, grammar, po);
  }

  // " ('x' is a <slot> backend)" when a slot's flag was given another slot's backend.
  // The first given flag written as the finding's decides: every one so written is the same grammar
  // flag, so one look answers (20,000 refused values of one flag stay linear).
  std::string another_slot(const ArgFinding& f) const {
    for (const ParsedArgs::Given& g : args_.given) {
      if (g.written != f.flag || g.line != f.line) continue;
      const std::string& field = g.flag->field;
      const std::string slot = field.substr(0, field.find('.'));
      for (SlotId s = 0; s < m_.slots().size(); ++s)
        if (m_.slot(s).name != slot && m_.find_backend(f.value, s))
          return fmt::format(" ('{}' is a {} backend)", f.value, m_.slot(s).title);
      return {};
    }
    return {};
  }

  // A field's value as given: its flag, else a variable the engine reads for it (environment()); null when neither.
  const Value* given(std::string_view field) const {
    if (const Value* v = args_.value(field)) return v;
    const auto it = env_values_.find(std::string(field));
    return it == env_values_.end() ? nullptr : &it->second;
  }

  // The value usable as it is, or null with a note when the shell fills it in at run time.
  const Value* usable(std::string_view field) { return usable(given(field)); }
  const Value* usable(const Value* v) {
    if (!v) return nullptr;
    // A value the engine's parser already refused is reported once, as that.
    if (std::find(rejected_.begin(), rejected_.end(), std::make_pair(v->flag, v->line)) != rejected_.end()) return nullptr;
    if (!v->known() || from_environment(*v)) {
      add("check.from-environment", Severity::info,
          fmt::format("not checked: value comes from {} when the command runs; attnsel checks the command as if {} "
                      "were not given",
                      substitution(v->text) ? "a command substitution" : "the environment",
                      v->flag.empty() ? "the model" : v->flag),
          "attnsel check: values the shell expands are unknown before launch", v);
      return nullptr;
    }
    return v;
  }

  void run() {
    for (const ArgFinding& f : args_.findings) {
      Value where{f.value, f.flag, f.line, WordShape::literal, f.origin};
      std::string message = f.message;
      if (f.rule == "args.choice") message += another_slot(f);
      if (!f.suggestion.empty() && f.severity == Severity::error) message += fmt::format(" (did you mean {}?)", f.suggestion);
      add(f.rule, f.severity, message,
          fmt::format("{} parses its flags with argparse: {}", profile_.title, args_.grammar->source), &where);
      if (f.severity == Severity::error) rejected_.emplace_back(f.flag, f.line);
    }
    if (args_.exits_early) {
      plannable_ = false;
      return;
    }
    if (model_kind_problem_)
      add("check.model-kind", Severity::error,
          fmt::format("--model-kind is an option of `attnsel check`, not of {}, which would reject it; pass it to attnsel "
                      "instead",
                      profile_.title),
          "attnsel check --model-kind", &*model_kind_problem_);
    passed_over_ = args_.unbound();
    for (const char* field : {"tp", "mm_attention_backend", "backend_config"})
      if (const ParsedArgs::Given* g = args_.flag(field)) passed_over_.push_back(g->written);

    if (m_.info().any_model) {
      // The diffusion profile: the backend, its --attention-backend-config and the packages.
      request_.attention = {backend("attention.all", "attention"), std::nullopt, std::nullopt};
      request_.installed = options_.installed;
      request_.installed_known = options_.installed_known;
      request_.model.id = given("model") ? given("model")->text : "";
      if (const Value* config = usable("backend_config")) backend_config(*config);
      request_.strict = options_.strict;
      return;
    }
    resolve_model();
    environment();
    for (BackendChoice* choice : {&request_.attention, &request_.linear, &request_.sparse}) {
      const std::string slot = choice == &request_.attention ? "attention" : choice == &request_.linear ? "linear" : "sparse";
      *choice = {backend(slot + ".all", slot), backend(slot + ".prefill", slot), backend(slot + ".decode", slot)};
    }
    kv_dtype();
    compute_dtype();
    page_size();
    tensor_parallel();
    speculative();
    environment_rules();
    request_.deterministic = args_.flag("deterministic") != nullptr;
    request_.disable_radix_cache = args_.flag("disable_radix_cache") != nullptr;
    request_.strict = options_.strict;
    assume_kind_if_unresolved();
  }

  // Variables the engine reads, set in the command's file (`VAR=... cmd`, `export`, Dockerfile ENV,
  // manifest env:), judged through the profile's environment table. A variable that stands for a
  // flag is judged as that flag where the release reads it (the flag, when given, wins); a release
  // known to ignore it is an error, since the engine then runs its own choice while the file says
  // otherwise. With the release unknown it is judged as the releases that read it, with a warning
  // that later ones ignore it. A variable's rules (what its value requires of the rest of the
  // command) are judged once the request is complete (environment_rules()).
  void environment() {
    const std::optional<ReleaseVersion> release = options_.release ? parse_release(*options_.release) : std::nullopt;
    auto at_or_after = [&](const std::string& boundary) {
      return !boundary.empty() && release && !(*release < *parse_release(boundary));
    };
    for (const EngineProfile::EnvBinding& b : profile_.environment) {
      for (const LaunchCommand::EnvSetting& e : cmd_.environment) {
        if (e.name != b.variable) continue;
        std::string value = e.value;
        for (const auto& [from, to] : b.aliases)
          if (from == value) value = to;
        const Value where{"", e.name, e.line, WordShape::literal, ""};
        const std::string setting = fmt::format("{}={}", e.name, e.value);
        const std::string instead = b.replacement.empty() ? std::string() : fmt::format("; pass {} {}", b.replacement, value);
        const bool flag_given = !b.field.empty() && args_.value(b.field) != nullptr;
        const bool ignored = at_or_after(b.ignored_since);
        if (ignored) {
          // The file sets something the engine no longer reads: what it chose does not happen (an
          // error unless a flag decides it anyway), but the engine starts and runs its own choice.
          add("check.env-ignored", b.field.empty() || flag_given ? Severity::warning : Severity::error,
              fmt::format("{} is ignored: {} {} and later no longer read it{}{}", setting, profile_.title, b.ignored_since,
                          flag_given || b.field.empty() ? "" : fmt::format(", so {} runs its own choice", profile_.title),
                          instead),
              b.source, &where, /*stops=*/false);
          continue;
        }
        if (!release && !b.ignored_since.empty()) {
          add("check.env-ignored", Severity::warning,
              fmt::format("{} is read only by {} releases before {} and ignored from {} on; the release is not known{}{}",
                          setting, profile_.title, b.ignored_since, b.ignored_since,
                          b.field.empty() ? std::string()
                                          : ", so attnsel judges it as read (pass --engine-version to judge one release)",
                          instead),
              b.source, &where);
        } else if (at_or_after(b.deprecated_since)) {
          add("check.env-deprecated", Severity::warning,
              fmt::format("{} is deprecated since {} {}{}", setting, profile_.title, b.deprecated_since, instead), b.source,
              &where);
        } else if (!b.field.empty()) {
          add("check.env-read", Severity::info,
              fmt::format("{} is read by {} as {}{}", setting, profile_.title, flag_name(b.field),
                          flag_given ? fmt::format(" (the flag, given too, wins)") : std::string()),
              b.source, &where);
        }
        if (!b.field.empty() && !flag_given)
          env_values_[b.field] = Value{value, e.name, e.line, WordShape::literal, ""};
        for (const EngineProfile::EnvRule& rule : b.rules) {
          const bool value_matches =
              rule.values.empty() || std::any_of(rule.values.begin(), rule.values.end(), [&](const std::string& v) {
                return upper(v) == upper(e.value);
              });
          const bool in_releases = !(rule.since.size() && release && *release < *parse_release(rule.since)) &&
                                   !at_or_after(rule.until);
          if (value_matches && in_releases) env_rules_.push_back({&rule, e});
        }
      }
    }
  }

  // The field's number as the engine will run it: the flag's value, else the engine's own choice
  // where attnsel knows it (the speculative top-k, the page size).
  std::optional<long long> field_number(const std::string& field) const {
    if (const Value* v = args_.value(field); v && v->known() && !from_environment(*v)) {
      if (auto n = detail::python_int(v->text)) return *n;
      return std::nullopt;
    }
    if (field == "speculative.topk" && request_.speculative_topk > 0) return request_.speculative_topk;
    if (field == "page_size" && request_.page_size) return *request_.page_size;
    return std::nullopt;
  }

  void environment_rules() {
    for (const auto& [rule, setting] : env_rules_) {
      const std::optional<long long> n = field_number(rule->field);
      if (!n || ((!rule->min || *n >= *rule->min) && (!rule->max || *n <= *rule->max))) continue;
      std::string message = rule->message;
      for (const auto& [key, text] : {std::pair<std::string, std::string>{"{variable}", setting.name},
                                      {"{value}", setting.value}, {"{field_value}", std::to_string(*n)}})
        for (std::size_t at = message.find(key); at != std::string::npos; at = message.find(key, at + text.size()))
          message.replace(at, key.size(), text);
      const Value env_place{"", setting.name, setting.line, WordShape::literal, ""};
      const Value* where = args_.value(rule->field);
      const Severity severity = rule->severity == "info" ? Severity::info
                                : rule->severity == "warning" ? Severity::warning
                                                              : Severity::error;
      add(rule->id, severity, message, rule->source, where ? where : &env_place);
    }
  }

  // A backend config: a JSON object or key=value pairs inline, else a file the caller's reader
  // may read (a scanned script names files only inside the checked tree).
  void backend_config(const Value& config) {
    const std::string_view text = config.text;
    const bool inline_value = text.find_first_not_of(" \t") != std::string_view::npos &&
                              (text[text.find_first_not_of(" \t")] == '{' || text.find('=') != std::string_view::npos);
    const std::string source = "seeds/002: the backend config is a JSON or YAML file, a JSON object, or key=value pairs";
    Result<BackendConfig> parsed = parse_backend_config(config.text);
    if (!inline_value) {
      if (!options_.read_config) {
        add("check.backend-config", Severity::info, "not read: files a command names are read only when checking files",
            source, &config);
        return;
      }
      Result<std::string> file = options_.read_config(config.text, cmd_);
      if (!file) {
        const bool refused = file.error().code == ErrorCode::invalid_argument;
        add("check.backend-config", refused ? Severity::info : Severity::error,
            refused ? fmt::format("not read: {}", file.error().message) : file.error().describe(), source, &config);
        return;
      }
      parsed = parse_backend_config_file(*file, config.text);
    }
    if (parsed) request_.backend_config = std::move(*parsed);
    else add("check.backend-config", Severity::error, parsed.error().describe(), source, &config);
  }

  // ---- the model ----

  void resolve_model() {
    if (options_.model) {
      request_.model = *options_.model;
      return;
    }
    if (const Value* kind = usable(model_kind_ ? &*model_kind_ : nullptr)) {
      if (auto k = parse_kind(kind->text)) stated_kind_ = k;
      else
        add("check.model-kind", Severity::error,
            fmt::format("not a model kind; use one of {}", kind_names()), "attnsel check --model-kind", kind);
    }
    // A model the shell fills in needs no note of its own: the assumed kind's note says so.
    const Value* model = given("model");
    if (!model || !model->known() || from_environment(*model)) {
      if (served_model(model)) return;
      model_unresolved_ = true;
      model_from_environment_ = model && from_environment(*model);
      model_id_ = model ? model->text : "";
      return;
    }
    model_id_ = model->text;
    if (auto named = resolve_model_name(catalog_, model->text)) {
      request_.model = std::move(*named);
      return;
    }
    // A local model: its config.json, read only through the caller's reader, which keeps to the
    // checked tree. Outside it nothing is opened, and the note is the same whether it exists or not.
    if (std::optional<Result<ModelTraits>> local = local_model(model->text)) {
      if (*local) {
        request_.model = std::move(**local);
        request_.model.id = model->text;
        return;
      }
      // A local config.json that exists but cannot be read: SGLang would fail to load it too.
      model_unresolved_ = true;
      model_config_broken_ = true;
      add("check.model-config", Severity::error, fmt::format("cannot read the model's config: {}", local->error().describe()),
          "transformers AutoConfig: SGLang reads config.json before anything else", model);
      return;
    }
    // As deployment files write it: a quantised or dated variant, a path's parts, a cached
    // download's config.json, and last the families' checkpoint names.
    if (std::optional<ModelTraits> t = resolve_model_reference(catalog_, model->text, /*patterns=*/false)) {
      use_model(std::move(*t), model);
      return;
    }
    for (const std::string& candidate : model_id_candidates(model->text)) {
      const auto cached = hf_cache_config_path(candidate);
      if (!cached) continue;
      Result<ModelTraits> from_cache = attnsel::resolve_model(catalog_, *cached);
      if (!from_cache) continue;
      use_model(std::move(*from_cache), model);
      return;
    }
    if (std::optional<ModelTraits> t = resolve_model_reference(catalog_, model->text)) {
      use_model(std::move(*t), model);
      return;
    }
    if (served_model(model)) return;
    model_unresolved_ = true;
  }

  // A model attnsel cannot resolve (a path, a shell variable), or none given (an orchestrator's
  // config section that serves the model its recipe names elsewhere: srt-slurm's
  // `vllm_config.<role>.served-model-name`), judged by the name it is served under, when that names
  // a known model: deployments often serve a local copy under its hub id.
  bool served_model(const Value* model) {
    const Value* served = given("served_model_name");
    if (!served || !served->known() || from_environment(*served)) return false;
    std::optional<ModelTraits> t = resolve_model_reference(catalog_, served->text);
    if (!t) return false;
    request_.model = std::move(*t);
    request_.model.id = model ? model->text : served->text;
    const char* why = !model                                         ? "the command names no model"
                      : !model->known() || from_environment(*model) ? "the model comes from the environment"
                                                                    : "the model is not in attnsel's model table";
    add("check.model-variant", Severity::info,
        fmt::format("{}; checked as its {} {} ({})", why, served->flag, served->text, request_.model.origin),
        "attnsel check: a served model name that names a known model stands for the model it serves",
        model ? model : served);
    return true;
  }

  // A model resolved from the name as written: the traits, with a note on how when it took more
  // than the table's exact id.
  void use_model(ModelTraits traits, const Value* model) {
    request_.model = std::move(traits);
    request_.model.id = model->text;
    if (request_.model.origin.rfind("model table: family", 0) != 0 && request_.model.origin.rfind("architecture", 0) != 0)
      add("check.model-variant", Severity::info, fmt::format("checked as {}", request_.model.origin),
          "attnsel check: deployment files name models by path, quantisation and date variants; data/models.json "
          "lists each family's checkpoint names",
          model);
  }

  // The config.json of a model named by path (FILE.json, or a directory holding config.json),
  // through options_.read_config: its traits, the error of one that cannot be read, or nullopt
  // when there is no such file in the checked tree (or the path is outside it: model_outside_).
  std::optional<Result<ModelTraits>> local_model(const std::string& path) {
    if (!options_.read_config || path.empty()) return std::nullopt;
    const bool json_file = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
    const std::string config = json_file ? path : path + (path.back() == '/' ? "" : "/") + "config.json";
    Result<std::string> text = options_.read_config(config, cmd_);
    if (!text) {
      const Error& e = text.error();
      if (e.code == ErrorCode::invalid_argument) {
        model_outside_ = true;
        return std::nullopt;
      }
      if (detail::names_absent_file(e)) return std::nullopt;
      return Result<ModelTraits>(Error{e.code, e.message, config, {}, {}});
    }
    Result<ModelTraits> traits = traits_from_config(catalog_, *text, config);
    if (!traits) {
      // Where it fails, never what the file holds there.
      const Error& e = traits.error();
      return Result<ModelTraits>(
          Error{e.code, e.code == ErrorCode::parse_error ? "not valid JSON" : e.message, e.where, {}, {}});
    }
    return traits;
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
    bool unknown_id = false;  // a model named literally that attnsel cannot resolve: its traits are guessed
    if (model_id_.empty()) {
      subject = "the command names no model";
    } else if (model_config_broken_) {
      subject = "the model's config cannot be read";
    } else if (model_outside_) {
      subject = "this model path is outside the checked files' directories, where attnsel reads no file";
      unknown_id = true;
    } else if (model_from_environment_) {
      subject = fmt::format("the model comes from {} when the command runs, so attnsel cannot look it up",
                            substitution(model_id_) ? "a command substitution" : "the environment");
    } else {
      // The flag and its value precede the message where there is a flag; `sglang serve MODEL` has none.
      const bool named_by_flag = given("model") && !given("model")->flag.empty();
      subject = fmt::format("{} is neither in attnsel's model table nor a local config.json or model directory",
                            named_by_flag ? std::string("this model") : "'" + model_id_ + "'");
      unknown_id = true;
    }
    // An unknown model is judged with guessed traits: its head size, sliding window, attention
    // sinks and MLA are not seen. Say what was assumed and how to give attnsel the real config.
    std::string remedy;
    if (unknown_id && !stated)
      remedy = "; attnsel reads the model's config.json when the command names a local model directory inside the "
               "checked files, or a Hugging Face id downloaded to the local cache (HF_HUB_CACHE or HF_HOME); else "
               "state the kind with attnsel check --model-kind mha|mla|gdn|dsa";
    else if (!stated)
      remedy = "; state the kind with attnsel check --model-kind mha|mla|gdn|dsa";
    const Value* where = given("model");
    const Severity severity = options_.unknown_model_error ? Severity::error
                              : unknown_id && !stated    ? Severity::warning
                                                         : Severity::info;
    add("check.model-assumed", severity,
        fmt::format("{}; checked as kind {} ({}){}, with no sliding window, attention sinks or fixed head size{}",
                    subject, name_of(kind), detail::kind_title(kind), why.empty() ? ", the default" : " " + why, remedy),
        "attnsel check: the model kind and traits decide which backends apply (data/models.json)", where);
  }

  // ---- backends and values ----

  // A backend name the engine accepted: the matrix's backend, or a note when the matrix has no data for it.
  std::optional<std::string> backend(const std::string& field, const std::string& slot_name) {
    const Value* value = usable(field);
    if (!value) return std::nullopt;
    auto slot = m_.find_slot(slot_name);
    if (!slot || m_.find_backend(value->text, *slot)) return value->text;
    const Slot& s = m_.slot(*slot);
    const std::vector<std::string> choices = m_.backend_names(*slot);
    if (!args_.value(field)) {
      // From a variable: a name of a release attnsel's matrix does not describe, or one the engine refuses.
      unmodelled(fmt::format("{} names a {} backend attnsel's matrix has no data for (a name of another {} release?), "
                             "so the command is not judged; backends attnsel judges: {}",
                             value->flag, s.title, profile_.title, join(choices)),
                 value);
      return std::nullopt;
    }
    const ParsedArgs::Given* g = args_.flag(field);
    if (g && !g->flag->choices.empty()) {
      // The engine's parser accepted the name (an invalid one is already an argument error).
      if (std::find(g->flag->choices.begin(), g->flag->choices.end(), value->text) == g->flag->choices.end()) return std::nullopt;
      unmodelled(fmt::format("{} accepts this {} backend, but attnsel's matrix has no data for it, so the command is not "
                             "judged; backends attnsel judges: {}",
                             profile_.title, s.title, join(choices)),
                 value);
      return std::nullopt;
    }
    std::string message = fmt::format("unknown {} backend: {} would exit with 'invalid choice'", s.title, profile_.title);
    const std::string suggestion = detail::closest_match(value->text, choices);
    if (!suggestion.empty()) message += fmt::format("; did you mean {}?", suggestion);
    message += fmt::format(" Valid: {}", join(choices));
    for (SlotId other = 0; other < m_.slots().size(); ++other)
      if (other != *slot && m_.find_backend(value->text, other))
        message += fmt::format(" ('{}' is a {} backend)", value->text, m_.slot(other).title);
    add("check.unknown-backend", Severity::error, message, args_.grammar->source, value);
    return std::nullopt;
  }

  // What the engine accepts and attnsel has no data for: the choice stays as written, unjudged, with a
  // finding of its own (a warning; an error under --strict), and no other backend is planned in its place.
  void unmodelled(std::string message, const Value* where) {
    add("select.not-judged", options_.strict ? Severity::error : Severity::warning, std::move(message),
        fmt::format("{} ({})", args_.grammar->source, m_.info().source), where);
    plannable_ = false;
  }

  void kv_dtype() {
    const Value* v = usable("kv_cache_dtype");
    if (!v) return;
    const Vocabulary* vocabulary = profile_.vocabulary("kv_cache_dtype");
    const auto spelling = vocabulary ? vocabulary->find(v->text) : std::nullopt;
    if (spelling && *spelling) {
      if (auto d = parse_kv_dtype(**spelling)) {
        request_.kv_cache_dtype = *d;
        request_.kv_cache_dtype_written = v->text.substr(0, 64);
        return;
      }
    }
    const ParsedArgs::Given* g = args_.flag("kv_cache_dtype");
    const bool accepted = spelling || (g && std::find(g->flag->choices.begin(), g->flag->choices.end(), v->text) != g->flag->choices.end());
    if (accepted) {
      unmodelled(fmt::format("{} accepts this KV cache dtype, but attnsel's matrix has no data for it, so the command is "
                             "not judged",
                             profile_.title),
                 v);
      return;
    }
    if (g && !g->flag->choices.empty()) return;  // an argument error already
    add("check.unknown-kv-dtype", Severity::error,
        fmt::format("unknown KV cache dtype: {} would exit with 'invalid choice'; valid: {}", profile_.title, kv_dtype_names()),
        vocabulary ? vocabulary->source : args_.grammar->source, v);
  }

  // The model's compute dtype (vLLM's --dtype), where the profile binds it: a spelling attnsel does not know
  // is left to the engine's own parser (its choices), and the rules judge the command as if it were auto.
  void compute_dtype() {
    if (const Value* v = usable("dtype"))
      if (auto d = parse_compute_dtype(v->text)) request_.dtype = *d;
  }

  // Tensor parallelism splits the attention heads across the GPUs: a head count the TP size does not
  // divide is refused at start-up (vLLM: ModelConfig.verify_with_parallel_config; SGLang: the
  // model config's same check). Known only when the model came with its config.json.
  void tensor_parallel() {
    const Value* v = usable("tp");
    if (!v) return;
    const auto tp = parse_int(v->text);
    if (!tp || *tp < 1) return;
    request_.tensor_parallel_size = *tp;  // heads and recurrent state per GPU (a hybrid model's block size)
    if (!request_.model.num_attention_heads || profile_.tp_heads_source.empty()) return;
    const int heads = *request_.model.num_attention_heads;
    if (heads % *tp == 0) return;
    add("check.tp-heads", Severity::error,
        fmt::format("{} refuses this: the model's {} attention heads are not divisible by the tensor parallel size {}",
                    profile_.title, heads, *tp),
        profile_.tp_heads_source, v);
  }

  void page_size() {
    const Value* v = usable("page_size");
    if (!v) return;
    auto n = parse_int(v->text);
    if (!n || *n < 1) {  // not a number at all is argparse's own error, reported already
      add("check.invalid-value", Severity::error, "the page size must be a positive whole number of tokens, at most 2^31-1",
          args_.grammar->source, v);
      return;
    }
    request_.page_size = *n;
  }

  void speculative() {
    if (const Value* mode = usable("speculative.attention_mode")) {
      if (auto p = parse_phase(mode->text)) request_.speculative_attention_mode = *p;
      else
        add("check.invalid-value", Severity::error, "only prefill or decode is accepted here", args_.grammar->source, mode);
    }
    const SpeculativeDefaults& spec = profile_.speculative;
    std::optional<int> topk;
    const Value* topk_value = usable("speculative.topk");
    if (topk_value) {
      topk = parse_int(topk_value->text);
      if (!topk || *topk < 1) {
        add("check.invalid-value", Severity::error, "the draft tree width must be a positive whole number, at most 2^31-1",
            args_.grammar->source, topk_value);
        return;
      }
    }
    if (!given("speculative.algorithm") && topk && options_.topk_implies_speculative) {
      request_.speculative_topk = *topk;
      return;
    }
    if (!given("speculative.algorithm")) {
      if (topk_value)
        add("check.speculative", Severity::info,
            fmt::format("has no effect without {}: attnsel checks the command without speculative decoding",
                        flag_name("speculative.algorithm")),
            spec.source, topk_value);
      return;
    }
    const Value* algorithm = usable("speculative.algorithm");
    if (!algorithm) return;
    // Engines match algorithm names case-insensitively; aliases name the same algorithm.
    std::string name = upper(algorithm->text);
    for (const auto& [alias, target] : spec.algorithm_aliases)
      if (upper(alias) == name) name = upper(target);
    if (std::find(spec.algorithms.begin(), spec.algorithms.end(), name) == spec.algorithms.end()) {
      add("check.speculative", Severity::info,
          fmt::format("not modelled: attnsel judges the attention backends for speculative decoding with {} only; with "
                      "{} the command is checked without speculative decoding",
                      join(spec.algorithms), name),
          spec.source, algorithm);
      return;
    }
    if (args_.flag("speculative.topk")) {  // given: its value, or unknown until the command runs
      if (topk) request_.speculative_topk = *topk;
      return;
    }
    for (const std::string& field : spec.auto_when_unset) {
      const ParsedArgs::Given* g = args_.flag(field);
      if (!g) continue;
      Value where{"", g->written, g->line, WordShape::literal, g->origin};
      add("check.speculative", Severity::error,
          fmt::format("{} chooses the draft tree width itself only when {} are all unset; with only some of them it "
                      "fails at startup; give {} as well",
                      profile_.title, join(flag_names(spec.auto_when_unset), ", "), flag_name("speculative.topk")),
          spec.source, &where);
      return;
    }
    const std::string& arch = request_.model.architecture;
    for (const SpeculativeDefaults::Topk& rule : spec.topk) {
      const bool arch_ok = rule.architectures.empty() ||
                           std::find(rule.architectures.begin(), rule.architectures.end(), arch) != rule.architectures.end();
      const bool algo_ok = rule.algorithms.empty() ||
                           std::find(rule.algorithms.begin(), rule.algorithms.end(), name) != rule.algorithms.end();
      if (!arch_ok || !algo_ok) continue;
      std::string because;
      if (!rule.algorithms.empty()) because = fmt::format("for {}", name);
      else if (!rule.architectures.empty()) because = fmt::format("for {}", arch);
      else if (!arch.empty()) because = fmt::format("for {}", arch);
      else because = "for an architecture that has no rule of its own (the model's architecture is unknown here)";
      request_.speculative_topk = rule.topk;
      add("check.speculative-topk", Severity::info,
          fmt::format("{} not given: {} picks topk {} {}, so attnsel checks topk {}", flag_name("speculative.topk"),
                      profile_.title, rule.topk, because, rule.topk),
          spec.source, algorithm);
      return;
    }
  }

  // The engine's spelling of a request field's flag, for messages.
  std::string flag_name(std::string_view field) const {
    const GrammarFlag* f = args_.grammar->for_field(field);
    return f ? f->names.front() : std::string(field);
  }
  std::vector<std::string> flag_names(const std::vector<std::string>& fields) const {
    std::vector<std::string> out;
    for (const auto& f : fields) out.push_back(flag_name(f));
    return out;
  }

  const Matrix& m_;
  const EngineProfile& profile_;
  const Catalog& catalog_;
  std::optional<Value> model_kind_, model_kind_problem_;
  std::vector<std::pair<std::string, int>> rejected_;  // (flag as written, line) of argument errors
  const LaunchCommand cmd_;
  const CheckOptions& options_;
  ParsedArgs args_;
  Request request_;
  bool plannable_ = true;
  bool model_unresolved_ = false;
  bool model_config_broken_ = false;
  bool model_outside_ = false;  // a model path outside the checked tree: never opened
  bool model_from_environment_ = false;
  std::string model_id_;
  std::optional<AttentionKind> stated_kind_;
  std::vector<CheckDiagnostic> findings_;
  std::vector<std::string> passed_over_;
  std::map<std::string, Value> env_values_;  // request field -> the variable's value that stands for it
  std::vector<std::pair<const EngineProfile::EnvRule*, LaunchCommand::EnvSetting>> env_rules_;
};

// ---- locating the selection's findings ----

class Locator {
 public:
  Locator(const Matrix& m, const ParsedArgs& args) : m_(m), args_(args) {}

  // The engine's flag for the page size (SGLang's --page-size, vLLM's --block-size).
  std::string page_flag() const {
    const GrammarFlag* f = args_.grammar ? args_.grammar->for_field("page_size") : nullptr;
    return f ? f->names.front() : std::string("--page-size");
  }

  // The user's flag for a backend in a phase (-1: any), or null when they named none.
  const Value* backend_value(BackendId backend, int phase) const {
    Finding f;
    f.backend = backend;
    f.phase = static_cast<std::int8_t>(phase);
    return backend_flag(f);
  }

  CheckDiagnostic locate(const Selection& s, const Finding& f, int command_line) const {
    CheckDiagnostic d;
    d.diagnostic = s.describe(f);
    place(d, flag_for(f), command_line);
    return d;
  }

 private:
  const Value* kept(std::string_view field) const {
    const Value* v = args_.value(field);
    return v && v->known() && !from_environment(*v) ? v : nullptr;
  }

  // A boolean flag's place, as a value without text.
  const Value* flag_place(std::string_view field) const {
    const ParsedArgs::Given* g = args_.flag(field);
    if (!g) return nullptr;
    extra_.push_back(Value{"", g->written, g->line, WordShape::literal, g->origin});
    return &extra_.back();
  }

  // The user's flag behind a finding: the value the rule is about (KV dtype, page size, topk ...)
  // when they wrote one, else the flag that chose the backend, else the model.
  const Value* flag_for(const Finding& f) const {
    if (!f.rule) return nullptr;
    const std::string& id = f.rule->id;
    std::uint64_t uses = 0;
    bool sets_page = false;
    if (id == "cell.kv-dtype") uses = Condition::f_kv_dtype;
    else if (id == "cell.page-size" || starts_with(id, "page.")) uses = Condition::f_page_size;
    else if (id == "cell.speculative") uses = Condition::f_topk;
    else if (starts_with(id, "feature.") || id == "cell.kind") uses = Condition::f_kind;
    else if (const Rule* rule = m_.find_rule(id)) {
      uses = rule->when.uses();
      sets_page = rule->set.page_size.has_value();
    }
    const Value* v = nullptr;
    if ((uses & (Condition::f_kv_dtype | Condition::f_kv_dtype_explicit)) && (v = kept("kv_cache_dtype"))) return v;
    if ((uses & Condition::f_dtype) && (v = kept("dtype"))) return v;
    if ((sets_page || (uses & (Condition::f_page_size | Condition::f_page_size_explicit))) && (v = kept("page_size"))) return v;
    if ((uses & Condition::f_topk) && ((v = kept("speculative.topk")) || (v = kept("speculative.algorithm")))) return v;
    if ((uses & Condition::f_spec_mode) && (v = kept("speculative.attention_mode"))) return v;
    if ((uses & Condition::f_deterministic) && (v = flag_place("deterministic"))) return v;
    if ((uses & Condition::f_radix_cache) && (v = flag_place("disable_radix_cache"))) return v;
    if ((v = backend_flag(f))) return v;
    if ((uses & (Condition::f_kind | Condition::f_family | Condition::f_sliding_window | Condition::f_multimodal |
                 Condition::f_attention_sinks)))
      return kept("model");
    return nullptr;
  }

  // The flag that named the finding's backend, in the finding's phase.
  const Value* backend_flag(const Finding& f) const {
    if (f.backend == kNoBackend) return nullptr;
    const SlotId slot = m_.backend(f.backend).slot;
    const std::string& name = m_.slot(slot).name;
    std::vector<std::string> order;
    if (f.phase == static_cast<int>(Phase::prefill)) order = {name + ".prefill", name + ".all"};
    else if (f.phase == static_cast<int>(Phase::decode)) order = {name + ".decode", name + ".all"};
    else order = {name + ".all", name + ".prefill", name + ".decode"};
    for (const std::string& field : order) {
      const Value* v = kept(field);
      if (!v) continue;
      auto id = m_.find_backend(v->text, slot);
      if (id && *id == f.backend) return v;
    }
    return nullptr;
  }

  const Matrix& m_;
  const ParsedArgs& args_;
  mutable std::deque<Value> extra_;  // boolean flags located on demand; stable addresses
};

// A fixed-size kernel the engine does not resize for: without its page flag the engine keeps its
// default and the kernel cannot run it. attnsel plans the size it needs; a launch command must say it.
void page_size_unset(const Matrix& m, const Selection& s, const Locator& locator, const LaunchCommand& cmd,
                     std::vector<CheckDiagnostic>& out) {
  if (s.page.origin != PageOrigin::planned || s.page.requested) return;
  std::vector<BackendId> seen;
  for (const PageConstraint& c : s.page.constraints) {
    if (!c.support || c.support->allows(m.default_page_size())) continue;
    if (std::find(seen.begin(), seen.end(), c.backend) != seen.end()) continue;
    seen.push_back(c.backend);
    CheckDiagnostic d;
    d.diagnostic.rule = "check.page-size-unset";
    d.diagnostic.severity = Severity::error;
    const std::string& engine = m.info().title;
    const std::string flag = locator.page_flag();
    d.diagnostic.message = fmt::format(
        "{} runs only with page size {} on {}, and {} does not set it: without {} {} keeps its default, {}; add {} {}",
        m.backend(c.backend).title, detail::describe_page_support(*c.support), detail::describe_gpu(s.request.device),
        engine, flag, engine, m.default_page_size(), flag, s.page.page_size);
    d.diagnostic.source = fmt::format("the backend's page_size in the matrix; no {} rewrite sets it on this GPU", engine);
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

bool CommandCheck::judged() const {
  auto not_judged = [](const CheckDiagnostic& d) {
    return d.diagnostic.rule == "select.not-judged" || d.diagnostic.rule == "check.not-modelled";
  };
  for (const CheckDiagnostic* d : all())
    if (not_judged(*d)) return false;
  // Suppressing the finding that says so does not make the command judged.
  return std::none_of(suppressed.begin(), suppressed.end(), [&](const SuppressedFinding& s) { return not_judged(s.finding); });
}

bool is_reported_finding(const CheckDiagnostic& d) {
  return d.diagnostic.severity != Severity::info || d.diagnostic.rule.rfind("check.", 0) == 0;
}

bool FileFinding::fails(bool strict) const {
  if (suppression) return false;
  const Severity s = finding.diagnostic.severity;
  return s == Severity::error || (strict && s == Severity::warning);
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

namespace {

// The engine whose rules judge a command: its launcher's, unless a field hands it to another
// engine (`--model-type diffusion`).
std::string judging_engine(const LaunchCommand& command, const EngineProfile& profile) {
  for (const EngineProfile::Handoff& h : profile.handoffs) {
    for (std::size_t k = 0; k < command.args.size(); ++k) {
      const std::string& a = command.args[k];
      const Grammar* g = profile.grammar(command.grammar);
      const GrammarFlag* f = g ? g->for_field(h.field) : nullptr;
      if (!f) continue;
      for (const std::string& name : f->names) {
        if ((a == name && k + 1 < command.args.size() && command.args[k + 1] == h.value) || a == name + "=" + h.value)
          return h.engine;
      }
    }
  }
  return profile.engine;
}

// A finding about the command as a whole, at its first line.
CheckDiagnostic command_finding(std::string rule, Severity severity, std::string message, int line) {
  CheckDiagnostic d;
  d.diagnostic.rule = std::move(rule);
  d.diagnostic.severity = severity;
  d.diagnostic.message = std::move(message);
  d.line = line;
  return d;
}

// A launcher's module written as the command word, without `python3 -m` (launcher_match.cpp).
bool module_as_command(const LaunchCommand& command) {
  const auto& launchers = builtin_launchers();
  return std::any_of(launchers.begin(), launchers.end(),
                     [&](const Launcher& l) { return !l.module.empty() && l.module == command.launcher; });
}

}  // namespace

std::string release_older_message(std::string_view engine, std::string_view release, std::string_view where,
                                  const ReleaseVersion& oldest) {
  return fmt::format("{} release {}{} is older than every matrix attnsel has (the oldest describes {}); the backends are "
                     "judged against that one, the launch grammar and the advisories for {}",
                     engine, release, where, to_string(oldest), release);
}

PreparedRequest prepare_request(const std::shared_ptr<const Matrix>& matrix, const EngineProfile& profile,
                                const Grammar& grammar, const Catalog& catalog, const LaunchCommand& command,
                                const CheckOptions& options) {
  const Preparation prep(matrix, profile, grammar, catalog, command, options);
  return PreparedRequest{prep.request(), prep.findings(), prep.passed_over(), prep.plannable(), prep.args()};
}

std::vector<ContextHint> releases_of_other_engines(const std::vector<ContextHint>& hints, const std::string& engine) {
  std::vector<ContextHint> out;
  for (const ContextHint& h : hints) {
    if (h.engine.empty() || h.engine == engine) continue;
    if (std::any_of(out.begin(), out.end(), [&](const ContextHint& o) { return o.engine == h.engine; })) continue;
    if (const std::optional<ReleaseVersion> release = parse_release(h.value)) {
      out.push_back(h);
      out.back().value = to_string(*release);
    }
  }
  return out;
}

std::vector<CommandCheck> check_command(const std::shared_ptr<const Matrix>& llm_matrix, const Catalog& catalog,
                                        const LaunchCommand& command, const std::vector<CheckTarget>& targets,
                                        const CheckOptions& given) {
  // The profile of the command's engine (bare flags: the matrix's engine).
  std::shared_ptr<const EngineProfile> profile = given.profile;
  if (!profile || (!command.engine.empty() && command.engine != profile->engine)) {
    auto p = builtin_profile(command.engine.empty() ? llm_matrix->info().engine : command.engine);
    if (p) profile = *p;
  }
  std::shared_ptr<const Matrix> matrix = llm_matrix;
  const std::string engine = profile ? judging_engine(command, *profile) : llm_matrix->info().engine;
  if (profile && engine != profile->engine) {
    auto p = builtin_profile(engine);
    if (p) profile = *p;
  }
  // The release of this command's engine: a release given for another engine does not apply.
  std::optional<CheckOptions> own;
  if (!given.release_engine.empty() && engine != given.release_engine) {
    own = given;
    const auto it = given.releases.find(engine);
    own->release = it != given.releases.end() ? std::optional<std::string>(it->second) : std::nullopt;
  }
  const CheckOptions& options = own ? *own : given;
  // A release older than every generation of the command's engine is judged against the oldest, as
  // check_input judges the matrix engine's (check.release-older): its grammar and advisories still apply.
  std::optional<ReleaseVersion> judged_as_oldest;
  if (engine != llm_matrix->info().engine) {
    matrix = options.diffusion_matrix && options.diffusion_matrix->info().engine == engine ? options.diffusion_matrix : nullptr;
    const std::optional<ReleaseVersion> release = options.release ? parse_release(*options.release) : std::nullopt;
    if (!matrix && release) {
      if (auto m = builtin_matrix_to_judge(engine, *release)) {
        matrix = m->matrix;
        judged_as_oldest = m->oldest;
      }
    } else if (!matrix) {
      if (auto m = builtin_matrix(engine)) matrix = *m;
    }
  }
  // A handed-off command is read with the other engine's own grammar (its first launcher's).
  const bool handed_off = profile && !command.engine.empty() && profile->engine != command.engine;
  const Grammar* grammar = profile ? profile->grammar(handed_off ? std::string() : command.grammar, options.release.value_or(""))
                                   : nullptr;
  std::vector<CommandCheck> out;
  if (!profile || !matrix || !grammar) {
    for (const CheckTarget& target : targets) {
      CommandCheck c;
      c.command = command;
      c.target = target;
      // Never a silent pass: a command nothing judged is a warning (an error under --strict).
      c.findings.push_back(command_finding("check.not-modelled", options.strict ? Severity::error : Severity::warning,
                                           fmt::format("not checked: attnsel has no {} for engine {}",
                                                       !profile ? "profile" : !matrix ? "matrix" : "launch grammar", engine),
                                           command.line));
      out.push_back(std::move(c));
    }
    return out;
  }
  const Preparation prep(matrix, *profile, *grammar, catalog, command, options);
  const Locator locator(*matrix, prep.args());
  for (const CheckTarget& target : targets) {
    CommandCheck c;
    c.command = command;
    c.target = target;
    c.model = prep.request().model;
    if (judged_as_oldest)
      c.findings.push_back(command_finding("check.release-older", Severity::warning,
                                           release_older_message(engine, *options.release, "", *judged_as_oldest),
                                           command.line));
    if (module_as_command(command))
      c.findings.push_back(command_finding(
          "check.module-as-command", Severity::warning,
          fmt::format("{} is a Python module, not a command: a shell will not find it; run it as python3 -m {} (its "
                      "arguments are checked as that launcher's)",
                      command.launcher, command.launcher),
          command.line));
    const auto& prepared = prep.findings();
    c.findings.insert(c.findings.end(), prepared.begin(), prepared.end());
    c.passed_over = prep.passed_over();
    if (prep.plannable()) {
      Request request = prep.request();
      request.device = target.device;
      Result<Selection> selection = select(matrix, request);
      if (selection) {
        const Selection& s = *selection;
        for (const auto& f : s.errors) c.errors.push_back(locator.locate(s, f, command.line));
        for (const auto& f : s.warnings) c.warnings.push_back(locator.locate(s, f, command.line));
        for (const auto& f : s.notes) c.notes.push_back(locator.locate(s, f, command.line));
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
        d.line = command.line;
        c.findings.push_back(std::move(d));
      }
    }
    if (options.advisories) detail::add_advisory_findings(*matrix, command, prep.args(), options.release.value_or(""), c);
    out.push_back(std::move(c));
  }
  if (given.propose_fixes &&
      std::any_of(out.begin(), out.end(), [&given](const CommandCheck& c) { return c.fails(given.strict); })) {
    CommandFixes fixes = propose_fixes(llm_matrix, catalog, out, given);
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].fix = std::move(fixes.per_target[i]);
      out[i].fix_all_targets = fixes.all_targets;
    }
  }
  return out;
}

}  // namespace attnsel
