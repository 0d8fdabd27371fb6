// What each command of a file is judged on: the GPUs and platform of the part of the file that
// holds it (a section, a tab, a YAML document), or of the command itself (--device, a ROCm image on
// its lines). --gpu still names the GPUs; a platform only narrows them.
#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "attnsel/check.hpp"
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

}  // namespace

CommandScope command_scope(const FileContext& context, const LaunchCommand& command,
                           const std::optional<std::string>& given) {
  CommandScope scope;
  const auto [first, last] = launch_detail::lines_of(command);
  const int at = command.line;

  // The GPUs of the innermost part that names any; else every GPU the file names.
  int best = INT_MAX;
  bool scoped = false;
  for (const ContextHint& h : context.gpus)
    if (h.holds(at)) {
      scoped = true;
      best = std::min(best, span_of(h));
    }
  std::vector<const ContextHint*> chosen;
  for (const ContextHint& h : context.gpus)
    if (!scoped || (h.holds(at) && span_of(h) == best)) chosen.push_back(&h);
  if (given) {
    scope.gpus = *given;
  } else {
    for (const ContextHint* h : chosen) {
      if (("," + scope.gpus + ",").find("," + h->value + ",") != std::string::npos) continue;
      scope.gpus += (scope.gpus.empty() ? "" : ",") + h->value;
      scope.gpus_from.push_back(*h);
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
    if (pick && pick->value != p.value) return scope;  // "NVIDIA" and an MI300X in one part
    if (!pick) pick = &p;
  }
  // A platform the whole file is written for, with no part saying more, is said by every line.
  if (pick) scope.platform = *pick;
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
