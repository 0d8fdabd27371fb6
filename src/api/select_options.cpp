// attnsel select's request: attnsel's own options over the engine's launch flags.
#include "attnsel/select_options.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "attnsel/profile.hpp"
#include "attnsel/render_probe.hpp"

namespace attnsel {

bool SelectRequest::ok() const { return first_error() == nullptr; }

const CheckDiagnostic* SelectRequest::first_error() const {
  for (const CheckDiagnostic& d : findings)
    if (d.diagnostic.severity == Severity::error) return &d;
  return nullptr;
}

std::string SelectRequest::error_text() const {
  std::string out;
  for (const CheckDiagnostic& d : findings) {
    if (d.diagnostic.severity != Severity::error) continue;
    // Argparse's own messages name the flag; the others get it in front.
    const bool named = d.flag.empty() || d.diagnostic.message.find(d.flag) != std::string::npos;
    if (!out.empty()) out += '\n';
    if (!named) out += d.flag + (d.value.empty() ? "" : " " + d.value) + ": ";
    out += d.diagnostic.message;
  }
  return out;
}

namespace {

// attnsel's own options over a request read from the engine's flags.
Request finish(Request out, const ModelTraits& model, const SelectOptions& o) {
  out.model = model;
  out.model.sliding_window |= o.sliding_window;
  out.model.multimodal |= o.multimodal;
  out.model.attention_sinks |= o.attention_sinks;
  out.dtype = o.dtype;
  out.installed_known = o.installed.has_value();
  out.installed = o.installed.value_or(std::vector<std::string>{});
  out.prefer = o.prefer;
  out.strict = o.strict;
  return out;
}

ModelTraits any_model(const Matrix& m, const std::optional<std::string>& id) {
  ModelTraits t;
  if (id) t.id = *id;
  t.origin = fmt::format("any model: the {} matrix does not depend on it", m.info().engine);
  return t;
}

}  // namespace

Result<SelectRequest> prepare_select(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                     const SelectOptions& o) {
  const Matrix& m = *matrix;
  auto profile = builtin_profile(m.info().engine);
  // A matrix of an engine attnsel has no profile for (a --matrix file) takes no engine flags.
  if (!profile && !o.engine_flags.empty())
    return Error{ErrorCode::invalid_argument,
                 fmt::format("{}: the launch flags {} need the engine's profile", profile.error().describe(),
                             fmt::join(o.engine_flags, " ")),
                 "", {}, {}};
  const Grammar* grammar = profile ? (*profile)->grammar("", o.release.value_or("")) : nullptr;
  if (profile && !grammar)
    return Error{ErrorCode::invalid_argument, fmt::format("the {} profile has no launch grammar", (*profile)->engine),
                 "", {}, {}};

  LaunchCommand flags;
  flags.launcher = "flags";
  flags.args = o.engine_flags;
  flags.arg_lines.assign(flags.args.size(), 0);

  // The model: --model, else the engine's own model flag among the launch flags.
  std::optional<std::string> model_name = o.model;
  if (!model_name && grammar) {
    const ParsedArgs parsed = parse_launch_args(flags, *grammar);
    if (const ArgValue* v = parsed.value("model")) model_name = v->text;
  }
  ModelTraits model;
  if (!model_name && m.info().any_model) {
    model = any_model(m, std::nullopt);
  } else if (!model_name) {
    return Error{ErrorCode::invalid_argument,
                 "required: a model kind (mha, mla, gdn, dsa), a model id, or a config.json or model directory",
                 "--model", {}, {}};
  } else if (auto resolved = resolve_model(catalog, *model_name)) {
    model = std::move(*resolved);
  } else if (m.info().any_model) {
    model = any_model(m, model_name);
  } else {
    Error e = resolved.error();
    if (e.where.empty()) e.where = "--model";
    return e;
  }

  SelectRequest out;
  if (!grammar) {
    out.request = finish(Request{}, model, o);
    return out;
  }
  CheckOptions options;
  options.read_config = o.read_config;
  options.model = model;
  options.strict = o.strict;
  options.topk_implies_speculative = true;  // attnsel select's shorthand: a tree width means speculative decoding
  options.installed = o.installed.value_or(std::vector<std::string>{});
  options.installed_known = o.installed.has_value();
  options.release = o.release;
  PreparedRequest prepared = prepare_request(matrix, **profile, *grammar, catalog, flags, options);
  out.request = finish(std::move(prepared.request), model, o);
  out.findings = std::move(prepared.findings);
  return out;
}

std::vector<std::string> optional_packages(const Matrix& m) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& b : m.backends())
    for (const auto& c : b.cells)
      for (const auto& p : c.requires_packages) add(p);
  // Every "installed" test anywhere in a condition tree (rules, selection entries).
  std::function<void(const Condition&)> walk = [&](const Condition& c) {
    for (const auto& p : c.installed) add(p);
    for (const auto* list : {&c.all, &c.any, &c.none})
      for (const auto& sub : *list) walk(sub);
  };
  for (const auto& rule : m.rules()) walk(rule.when);
  for (const auto& entry : m.selection()) walk(entry.when);
  return names;
}

Result<DeviceInfo> device_from_probe(const Catalog& catalog, const ProbeReport& report, std::size_t index,
                                     const std::optional<std::string>& cuda) {
  std::vector<const DeviceInfo*> found;
  for (const DeviceInfo& d : report.devices)
    if (d.platform == Platform::cuda || d.platform == Platform::rocm) found.push_back(&d);
  if (found.empty())
    return Error{ErrorCode::no_device,
                 render_probe_text(report, false) +
                     "Pass the GPU instead: --gpu sm90 (or H100, B200, MI300X ...) or ATTNSEL_GPU=...; "
                     "--platform npu|xpu|cpu needs no GPU.",
                 "", {}, {}};
  if (index >= found.size())
    return Error{ErrorCode::invalid_argument, fmt::format("only {} GPU(s) found", found.size()), "--device", {}, {}};
  DeviceInfo d = *found[index];
  if (!d.invalid.empty())
    return Error{ErrorCode::invalid_argument, fmt::format("GPU {}: {}; pass --gpu", index, d.invalid), "--device", {}, {}};
  if (d.platform == Platform::cuda && !d.compute_capability)
    return Error{ErrorCode::invalid_argument,
                 fmt::format("the probe found GPU {} but not its compute capability; pass --gpu", index), "--device",
                 {}, {}};
  if (d.compute_capability)
    if (const GpuArch* arch = catalog.find_arch(*d.compute_capability)) d.arch = arch->arch;
  d.origin = fmt::format("probe: {}, device {}", d.origin, index);
  if (cuda) {
    auto v = parse_version(*cuda);
    if (!v) return Error{ErrorCode::invalid_argument, fmt::format("expected a version like 12.8, got '{}'", *cuda), "--cuda", {}, {}};
    d.cuda = v;
  }
  assume_cuda(catalog, d);
  return d;
}

}  // namespace attnsel
