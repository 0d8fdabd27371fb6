// What each command of a file is judged on: the GPUs and platform of the part of the file that
// holds it (a section, a tab, a YAML document), or of the command itself (--device, a ROCm image on
// its lines). --gpu still names the GPUs; a platform only narrows them.
#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"
#include "check/launch_internal.hpp"

namespace attnsel {
namespace {

int span_of(const ContextHint& h) { return h.scope_first == 0 ? INT_MAX : h.scope_last - h.scope_first; }

// The platform a GPU name runs on: AMD's Instinct and gfx names ROCm, the rest CUDA.
std::string platform_of_gpu(const std::string& gpu) {
  const bool amd = (gpu.size() > 2 && (gpu[0] == 'M' || gpu[0] == 'm') && (gpu[1] == 'I' || gpu[1] == 'i')) ||
                   gpu.rfind("gfx", 0) == 0;
  return amd ? "rocm" : "cuda";
}

std::string platform_name(std::string_view p) {
  if (p == "cuda") return "CUDA";
  if (p == "rocm") return "ROCm";
  if (p == "npu") return "Ascend NPU";
  if (p == "xpu") return "Intel XPU";
  if (p == "cpu") return "CPU";
  if (p == "mps") return "Apple MPS";
  if (p == "tpu") return "TPU";
  if (p == "hpu") return "Intel Gaudi (HPU)";
  if (p == "neuron") return "AWS Neuron";
  return std::string(p);
}

// An example GPU of a platform, for the message that says how to check a command there.
std::string_view example_of(std::string_view p) {
  if (p == "rocm") return "mi300x";
  if (p == "cuda") return "sm90";
  return p;
}

std::string where_of(const std::string& file, const ContextHint& h) {
  if (h.line == 0) return fmt::format("{} ({}: {})", file, h.source, h.text);  // its name
  return fmt::format("{}:{} ({}: {})", file, h.line, h.source, h.text);
}

// The backends a command chooses itself, per its engine's newest matrix: the values of the flags
// and variables bound to a slot of the matrix ("attention.all", "linear.decode"), as the engine
// reads them (the last one given). Which flags those are is the profile's and the matrix's data.
struct Choice {
  BackendId id;
  std::string written;  // "--attention-backend ascend", "VLLM_ATTENTION_BACKEND=ROCM_AITER_FA"
  int line = 0;
};
struct Choices {
  std::shared_ptr<const Matrix> matrix;
  std::vector<Choice> backends;
};

Choices explicit_choices(const LaunchCommand& command) {
  Choices out;
  if (command.engine.empty()) return out;
  const auto profile = builtin_profile(command.engine);
  if (!profile) return out;
  const Grammar* grammar = (*profile)->grammar(command.grammar);
  auto matrix = builtin_matrix(command.engine);
  if (!grammar || !matrix) return out;
  out.matrix = *matrix;
  const Matrix& m = *out.matrix;
  auto choose = [&](const std::string& field, std::string value, bool upper, const std::string& written, int line) {
    const std::size_t dot = field.find('.');
    if (dot == std::string::npos) return;
    const auto slot = m.find_slot(std::string_view(field).substr(0, dot));
    if (!slot) return;
    if (upper)
      for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (const auto id = m.find_backend(value, *slot)) out.backends.push_back({*id, written + value, line});
  };
  ParseOptions options;
  options.positional_model = command.positional_model;
  const ParsedArgs args = parse_launch_args(command, *grammar, options);
  std::vector<std::string> fields;
  for (const ParsedArgs::Given& g : args.given)
    if (g.flag && !g.flag->field.empty() && !g.unset &&
        std::find(fields.begin(), fields.end(), g.flag->field) == fields.end())
      fields.push_back(g.flag->field);
  for (const std::string& field : fields) {
    const ArgValue* v = args.value(field);
    const ParsedArgs::Given* g = args.flag(field);
    if (v && g && v->known())
      choose(field, v->text, g->flag->upper_case, g->written + " ", v->line ? v->line : command.line);
  }
  for (const auto& [field, v] : args.keyed)
    if (v.known()) choose(field, v.text, false, v.flag + " ", v.line ? v.line : command.line);
  for (const LaunchCommand::EnvSetting& e : command.environment)
    for (const EngineProfile::EnvBinding& b : (*profile)->environment)
      if (b.variable == e.name && !b.field.empty() && b.ignored_since.empty() && e.value.find('$') == std::string::npos)
        choose(b.field, e.value, true, e.name + "=", e.line ? e.line : command.line);
  return out;
}

// The one platform the command's chosen backends run on (a backend whose cells name one platform:
// SGLang's `ascend`, vLLM's ROCM_AITER_FA), with the choice that says it; unset when no choice
// names one platform, or two name different ones.
std::optional<ContextHint> platform_of_choices(const LaunchCommand& command, const Choices& choices) {
  std::optional<ContextHint> out;
  for (const Choice& c : choices.backends) {
    std::optional<Platform> only;
    bool several = false;
    for (const Cell& cell : choices.matrix->backend(c.id).cells)
      for (int k = 0; k < kPlatformCount; ++k) {
        const auto p = static_cast<Platform>(k);
        if (!cell.platforms.contains(p)) continue;
        several = several || (only && *only != p);
        only = p;
      }
    if (!only || several) continue;  // runs on several platforms: says nothing
    const std::string platform(name_of(*only));
    if (out && out->value != platform) return std::nullopt;
    if (!out)
      out = ContextHint{platform, fmt::format("{} runs only on {}", c.written, platform_name(platform)), c.written,
                        command.engine, c.line, 0, 0};
  }
  return out;
}

// Whether every chosen backend has a cell for the GPU's platform and compute capability (a GPU
// the catalog does not know, or without a capability, fits).
bool fits(const Choices& choices, const std::string& gpu) {
  static const auto catalog = builtin_catalog();
  if (!catalog || !choices.matrix) return true;
  const auto device = (*catalog)->resolve_gpu(gpu);
  if (!device) return true;
  for (const Choice& c : choices.backends) {
    bool any = false;
    for (const Cell& cell : choices.matrix->backend(c.id).cells) {
      if (!cell.platforms.contains(device->platform)) continue;
      const auto& cc = device->compute_capability;
      any = any || !cc || cell.compute_capability.empty() ||
            std::any_of(cell.compute_capability.begin(), cell.compute_capability.end(),
                        [&](const VersionRange& r) { return r.contains(*cc); });
    }
    if (!any) return false;
  }
  return true;
}

}  // namespace

CommandScope command_scope(const FileContext& context, const LaunchCommand& command,
                           const std::optional<std::string>& given) {
  CommandScope scope;
  const auto [first, last] = launch_detail::lines_of(command);
  const int at = command.line;

  // The GPUs of the innermost part that names any: a title, a comment or the sentence before the
  // block, else a paragraph of the section's text. A part whose GPUs run on another platform than a
  // smaller part holding the command says ("## H100" over "# on AMD:", or a ROCm image in the
  // block) is passed over. Else every GPU the file names.
  auto contradicted = [&](const ContextHint& h) {
    return std::any_of(context.platforms.begin(), context.platforms.end(), [&](const ContextHint& p) {
      return p.holds(at) && span_of(p) < span_of(h) && p.value != platform_of_gpu(h.value);
    });
  };
  int best = INT_MAX;
  bool scoped = false, by_paragraph = false;
  for (const bool paragraph : {false, true}) {
    for (const ContextHint& h : context.gpus)
      if (h.paragraph == paragraph && h.holds(at) && !contradicted(h)) {
        scoped = true;
        best = std::min(best, span_of(h));
      }
    if (scoped) {
      by_paragraph = paragraph;
      break;
    }
  }
  std::vector<const ContextHint*> chosen;
  for (const ContextHint& h : context.gpus)
    if (!scoped || (h.paragraph == by_paragraph && h.holds(at) && span_of(h) == best && !contradicted(h)))
      chosen.push_back(&h);
  // The command's own backend choices matter only for the GPUs its file names (below).
  const Choices choices = given || context.gpus.empty() ? Choices{} : explicit_choices(command);
  // No part holding the command names a GPU, so it gets every GPU the file names, in parts written
  // for other commands: of those, the GPUs its own backend choices run on (the FlashMLA example of
  // a document is not judged on the A100 a FlashInfer example names), all of them when none fits.
  std::string narrowed;
  if (!given && !scoped && chosen.size() > 1 && !choices.backends.empty()) {
    std::vector<const ContextHint*> fitting;
    for (const ContextHint* h : chosen)
      if (fits(choices, h->value)) fitting.push_back(h);
    if (!fitting.empty() && fitting.size() < chosen.size()) {
      chosen = std::move(fitting);
      for (const Choice& c : choices.backends) narrowed += (narrowed.empty() ? "" : ", ") + c.written;
    }
  }
  if (scoped)
    for (const ContextHint* h : chosen)
      if (h->entry) scope.entry.push_back(*h);
  // A command no part of the file holds (it gets the GPUs the whole file names: a recipe's base
  // args) is the file's default: on the hardware an entry is for, the entry runs instead.
  auto holds_here = [&](const ContextHint& h) { return h.scope_first != 0 && h.holds(at); };
  const bool held = std::any_of(context.gpus.begin(), context.gpus.end(), holds_here) ||
                    std::any_of(context.platforms.begin(), context.platforms.end(), holds_here);
  if (!held)
    for (const std::vector<ContextHint>* hints : {&context.gpus, &context.platforms})
      for (const ContextHint& h : *hints)
        if (h.entry) scope.elsewhere.push_back(h);
  if (given) {
    scope.gpus = *given;
  } else {
    for (const ContextHint* h : chosen) {
      if (("," + scope.gpus + ",").find("," + h->value + ",") != std::string::npos) continue;
      scope.gpus += (scope.gpus.empty() ? "" : ",") + h->value;
      scope.gpus_from.push_back(*h);
      if (!narrowed.empty())
        scope.gpus_from.back().source += fmt::format("; of the GPUs the file names elsewhere, one {} runs on", narrowed);
    }
  }

  // The command's own platform: --device X, or a marker on its lines.
  for (std::size_t k = 0; k < command.args.size(); ++k) {
    const std::string& a = command.args[k];
    std::string device;
    if (a == "--device" && k + 1 < command.args.size()) device = command.args[k + 1];
    else if (a.rfind("--device=", 0) == 0) device = a.substr(9);
    for (char& c : device) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (device == "cuda" || device == "npu" || device == "xpu" || device == "cpu" || device == "hpu" ||
        device == "tpu" || device == "mps" || device == "neuron") {
      const int line = k < command.arg_lines.size() ? command.arg_lines[k] : command.line;
      scope.platform = ContextHint{device, "its --device", "--device " + device, "", line, 0, 0};
      scope.own_platform = true;
      return scope;
    }
  }
  for (const ContextHint& p : context.platforms)
    if (p.line >= first && p.line <= last) {
      scope.platform = p;
      scope.own_platform = true;
      return scope;
    }

  // Else the innermost part that says: a title or marker, or the GPUs it names. Parts of one
  // size that disagree say nothing.
  std::vector<ContextHint> said;
  for (const ContextHint& p : context.platforms)
    if (p.holds(at)) said.push_back(p);
  if (scoped)
    for (const ContextHint* h : chosen) {
      ContextHint implied = *h;
      implied.value = platform_of_gpu(h->value);
      said.push_back(std::move(implied));
    }
  int inner = INT_MAX;
  for (const ContextHint& p : said) inner = std::min(inner, span_of(p));
  const ContextHint* pick = nullptr;
  for (const ContextHint& p : said) {
    if (span_of(p) != inner) continue;
    if (pick && pick->value != p.value) {  // "NVIDIA" and an MI300X in one part
      pick = nullptr;
      break;
    }
    if (!pick) pick = &p;
  }
  // A platform the whole file is written for, with no part saying more, is said by every line.
  if (pick) {
    scope.platform = *pick;
    return scope;
  }
  // Else, for targets the file names, the platform the command's own backend choices run on: the
  // Ascend backend is judged on the file's NPUs, not on every CUDA GPU it names elsewhere. Targets
  // given (--gpu) are judged as given: there an NPU backend on sm90 is the error to report.
  if (!choices.backends.empty())
    if (std::optional<ContextHint> p = platform_of_choices(command, choices)) {
      scope.platform = std::move(p);
      scope.own_platform = true;
    }
  return scope;
}

std::vector<CheckTarget> scoped_targets(const std::vector<CheckTarget>& targets, const CommandScope& scope,
                                        const std::string& file, const std::string& given_from) {
  std::vector<CheckTarget> out;
  for (const CheckTarget& t : targets) {
    if (scope.platform && name_of(t.device.platform) != scope.platform->value) continue;
    CheckTarget s = t;
    s.from = given_from;
    for (const ContextHint& h : scope.gpus_from)
      if (h.value == t.label) s.from = where_of(file, h);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<CheckTarget> capability_targets(const std::vector<CheckTarget>& targets, const LaunchCommand& command) {
  if (!command.capability) return targets;
  const std::optional<Version> wanted = parse_version(command.capability->value);
  if (!wanted) return targets;
  std::vector<CheckTarget> out;
  for (const CheckTarget& t : targets) {
    const auto& cc = t.device.compute_capability;
    if (!cc || (*cc == *wanted) == command.capability->equal) out.push_back(t);
  }
  return out;
}

std::string capability_message(const LaunchCommand& command, const std::vector<CheckTarget>& targets) {
  std::string labels;
  for (const CheckTarget& t : targets) labels += (labels.empty() ? "" : ",") + t.label;
  const LaunchCommand::CapabilityTest& t = *command.capability;
  return fmt::format("this reading is the script's branch for GPUs {} compute capability {} (the test at line {}); "
                     "{} hold{} none, so it was not judged: the script's other branch is",
                     t.equal ? "of" : "other than", t.value, t.line, labels, targets.size() == 1 ? "s" : "");
}

namespace {

// Whether a target is one an entry's hint is for: a GPU of the same platform and architecture (or
// the same name), or the platform an entry names (`amd:`).
bool claims(const ContextHint& h, bool platform, const CheckTarget& t) {
  if (platform) return h.value == name_of(t.device.platform);
  static const auto catalog = builtin_catalog();
  if (catalog)
    if (const auto d = (*catalog)->resolve_gpu(h.value))
      if (d->platform == t.device.platform && !d->arch.empty() && d->arch == t.device.arch) return true;
  // A key naming a family is for all of it (`blackwell:` runs on B200, B300 and RTX 5090 alike, as
  // vllm-project/recipes@8959cf64 taxonomy.yaml gives each its `generation`): the first word of the
  // target architecture's family (data/gpus.json), as a word of the key.
  if (catalog && !t.device.arch.empty())
    if (const GpuArch* a = (*catalog)->find_arch(t.device.arch); a && !a->family.empty()) {
      const std::string family = launch_detail::lower(std::string_view(a->family).substr(0, a->family.find(' ')));
      const std::string key = launch_detail::lower(h.text);
      for (std::size_t at = key.find(family); at != std::string::npos; at = key.find(family, at + 1)) {
        const std::size_t end = at + family.size();
        if ((at == 0 || !std::isalnum(static_cast<unsigned char>(key[at - 1]))) &&
            (end == key.size() || !std::isalnum(static_cast<unsigned char>(key[end]))))
          return true;
      }
    }
  return launch_detail::lower(h.value) == launch_detail::lower(t.label);
}

bool platform_value(const std::string& v) { return parse_platform(v).has_value() || v == "tpu" || v == "hpu" || v == "neuron"; }

}  // namespace

std::vector<CheckTarget> entry_targets(const std::vector<CheckTarget>& targets, const CommandScope& scope) {
  if (scope.entry.empty() && scope.elsewhere.empty()) return targets;
  std::vector<CheckTarget> out;
  for (const CheckTarget& t : targets) {
    const bool keep =
        !scope.entry.empty()
            ? std::any_of(scope.entry.begin(), scope.entry.end(), [&](const ContextHint& h) { return claims(h, false, t); })
            : std::none_of(scope.elsewhere.begin(), scope.elsewhere.end(),
                           [&](const ContextHint& h) { return claims(h, platform_value(h.value), t); });
    if (keep) out.push_back(t);
  }
  return out;
}

std::string entry_message(const CommandScope& scope, const std::vector<CheckTarget>& targets) {
  static const auto catalog = builtin_catalog();
  std::string labels;
  for (const CheckTarget& t : targets) labels += (labels.empty() ? "" : ",") + t.label;
  if (scope.entry.empty()) {  // a default the file's entries override on every target
    std::string entries;
    for (const ContextHint& h : scope.elsewhere) {
      const std::string one = fmt::format("{} at line {}", h.text, h.line);
      if (entries.find(one) == std::string::npos) entries += (entries.empty() ? "" : ", ") + one;
    }
    return fmt::format("this command is the file's default, and on {} the file's entries for their hardware run instead "
                       "({}: {}), so it was not judged there",
                       labels, scope.elsewhere.front().source, entries);
  }
  std::string gpus, archs;
  for (const ContextHint& h : scope.entry) {
    gpus += (gpus.empty() ? "" : ", ") + h.value;
    if (!catalog) continue;
    const auto d = (*catalog)->resolve_gpu(h.value);
    if (d && !d->arch.empty() && ("/" + archs + "/").find("/" + d->arch + "/") == std::string::npos)
      archs += (archs.empty() ? "" : "/") + d->arch;
  }
  const std::string example = launch_detail::lower(scope.entry.front().value);
  const ContextHint& h = scope.entry.front();
  return fmt::format("this command is the file's entry for {} ({} at line {}: {}) and {} hold{} no {}GPU, so it was not "
                     "judged: add one to judge it (--gpu {},{})",
                     gpus, h.source, h.line, h.text, labels, targets.size() == 1 ? "s" : "",
                     archs.empty() ? "such " : archs + " ", labels, example);
}

std::string unscoped_message(const CommandScope& scope, const std::vector<CheckTarget>& targets,
                             const std::string& given_from) {
  const ContextHint& p = *scope.platform;
  const std::string where = scope.own_platform && p.source == "its --device" ? std::string("its --device ") + p.value
                            : scope.own_platform ? fmt::format("its line {}: {}", p.line, p.source)
                            : p.line == 0        ? fmt::format("its file's name: {}", p.text)
                                                 : fmt::format("{} at line {}: {}", p.source, p.line, p.text);
  std::string labels;
  for (const CheckTarget& t : targets) labels += (labels.empty() ? "" : ",") + t.label;
  if (!parse_platform(p.value))
    return fmt::format("this command runs on {} ({}), which attnsel does not judge", platform_name(p.value), where);
  const std::string given = scope.gpus_from.empty() ? fmt::format("{} {}", given_from, labels)
                                                    : fmt::format("the GPUs this file names ({})", labels);
  return fmt::format("this command runs on {} ({}) and {} hold{} no {} GPU: add one to check it (--gpu {},{})",
                     platform_name(p.value), where, given, scope.gpus_from.empty() ? "s" : "", platform_name(p.value),
                     labels, example_of(p.value));
}

}  // namespace attnsel
