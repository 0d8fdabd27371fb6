// `attnsel [select]` and `attnsel explain`: plan attention backends and the page size.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <iostream>

#include <fmt/format.h>

#include "attnsel/backend_config.hpp"
#include "attnsel/check.hpp"
#include "attnsel/input.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/render_probe.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/suggest.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct SelectArgs {
  std::optional<std::string> gpu, cuda, model, platform;
  bool sliding_window = false, multimodal = false, sinks = false, strict = false;
  std::string prefer = "engine-default";
  std::string dtype = "auto";
  std::optional<std::string> installed;
  int device_index = 0;
  bool all_devices = false;
  FormatChoice format;
  MatrixChoice matrix;
  const CLI::App* app = nullptr;  // the engine's own flags are what it leaves unparsed
};

// attnsel's own options. The engine's launch flags (--attention-backend, --page-size, --tp ...)
// are not declared here: they are parsed with the engine profile's grammar, as the engine would.
void add_select_options(CLI::App& app, SelectArgs& a) {
  a.app = &app;
  app.allow_extras();
  app.add_option("--gpu", a.gpu, "GPU: sm90, sm_90a, 9.0, 90, or a name (H100, B200, \"RTX 5090\", MI300X, gfx942); probed when absent");
  app.add_option("--cuda", a.cuda, "CUDA version X.Y (default: the driver's, or the catalog's assumption with --gpu)");
  app.add_option("--model", a.model, "mha|mla|gdn|dsa, a model id (deepseek-ai/DeepSeek-V3), or a config.json / model directory");
  app.add_flag("--sliding-window", a.sliding_window, "the model uses sliding-window attention");
  app.add_flag("--multimodal", a.multimodal, "the model is multimodal");
  app.add_flag("--attention-sinks", a.sinks, "the model uses attention sinks (GPT-OSS)");
  app.add_option("--platform", a.platform, "cuda|rocm|npu|xpu|cpu|mps (default: from the GPU)")
      ->check(CLI::IsMember({"cuda", "rocm", "npu", "xpu", "cpu", "mps"}));
  app.add_option("--prefer", a.prefer, "page-size preference: prefix-reuse|throughput (default: what the engine does)")
      ->check(CLI::IsMember({"prefix-reuse", "throughput", "engine-default", "sglang-default"}));
  app.add_flag("--strict", a.strict, "documented caveats (e.g. FlashMLA with FP8 KV) are errors");
  app.add_option("--device", a.device_index, "which probed GPU to plan for (default 0)")->check(CLI::NonNegativeNumber);
  app.add_flag("--all-devices", a.all_devices, "plan for every probed GPU and say where the plans differ");
  a.matrix.add_options(app);
  app.add_option("--dtype", a.dtype, "the model's compute dtype: auto|fp16|bf16|fp32 (diffusion backends check it)")
      ->check(CLI::IsMember({"auto", "fp16", "bf16", "fp32", "float16", "bfloat16", "float32"}));
  app.add_option("--installed", a.installed,
                 "optional Python packages present, comma-separated (e.g. sageattention,st_attn); detected with python3 when absent");
  a.format.add_options(app, {"text", "json", "markdown"});
  app.footer("Every other flag is the engine's own launch flag (--attention-backend, --page-size, --kv-cache-dtype, --tp ...),\n"
             "read with the engine's launch grammar: paste a launch command's flags. `attnsel matrix` lists the backends.");
}

// --gpu (a comma-separated list plans for each), then ATTNSEL_GPU, then the probe (device
// --device, or every one with --all-devices); non-CUDA platforms need no GPU.
std::vector<DeviceInfo> devices_from_args(const Catalog& catalog, const SelectArgs& a) {
  std::optional<Platform> platform = a.platform ? parse_platform(*a.platform) : std::nullopt;
  std::optional<std::string> gpu = a.gpu;
  std::string origin = "--gpu";
  if (!gpu) {
    if (const char* env = std::getenv("ATTNSEL_GPU"); env && *env) {
      gpu = env;
      origin = "ATTNSEL_GPU";
    }
  }
  std::vector<DeviceInfo> out;
  if (gpu || (platform && *platform != Platform::cuda)) {
    std::vector<std::optional<std::string>> names;
    if (gpu) {
      for (auto& name : CLI::detail::split(*gpu, ',')) names.emplace_back(CLI::detail::trim_copy(name));
    } else {
      names.emplace_back(std::nullopt);
    }
    for (const auto& name : names) {
      auto r = attnsel::resolve_device(catalog, DeviceSpec{name, platform, a.cuda, origin});
      if (!r) fail(r.error());
      out.push_back(*r);
    }
    return out;
  }
  ProbeReport report = probe_devices();
  std::vector<DeviceInfo> found;
  for (const auto& dev : report.devices)
    if (dev.platform == Platform::cuda || dev.platform == Platform::rocm) found.push_back(dev);
  if (found.empty())
    throw Failure{kProbeFailed, render_probe_text(report, false) +
                                    "Pass the GPU instead: --gpu sm90 (or H100, B200, MI300X ...) or ATTNSEL_GPU=...; "
                                    "--platform npu|xpu|cpu needs no GPU."};
  if (static_cast<std::size_t>(a.device_index) >= found.size())
    throw Failure{kUsage, fmt::format("--device {}: only {} GPU(s) found", a.device_index, found.size())};
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!a.all_devices && i != static_cast<std::size_t>(a.device_index)) continue;
    DeviceInfo d = found[i];
    if (!d.invalid.empty()) throw Failure{kProbeFailed, fmt::format("GPU {}: {}; pass --gpu", i, d.invalid)};
    if (d.platform == Platform::cuda && !d.compute_capability)
      throw Failure{kProbeFailed, fmt::format("the probe found GPU {} but not its compute capability; pass --gpu", i)};
    if (d.compute_capability)
      if (const GpuArch* arch = catalog.find_arch(*d.compute_capability)) d.arch = arch->arch;
    d.origin = fmt::format("probe: {}, device {}", d.origin, i);
    if (a.cuda) {
      auto v = parse_version(*a.cuda);
      if (!v) throw Failure{kUsage, fmt::format("--cuda: expected a version like 12.8, got '{}'", *a.cuda)};
      d.cuda = v;
    }
    assume_cuda(catalog, d);
    out.push_back(d);
  }
  return out;
}


// The packages a matrix asks about, looked up with the host's python3 (bounded in time); nullopt
// when python3 is missing or does not answer: the requirements then stay caveats.
std::optional<std::vector<std::string>> detect_packages(const Matrix& m) {
  std::vector<std::string> names;
  for (const auto& b : m.backends())
    for (const auto& c : b.cells)
      for (const auto& p : c.requires_packages)
        if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
  // Every "installed" test anywhere in a condition tree (rules, selection entries, features).
  std::function<void(const Condition&)> walk = [&](const Condition& c) {
    for (const auto& p : c.installed)
      if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
    for (const auto* list : {&c.all, &c.any, &c.none})
      for (const auto& sub : *list) walk(sub);
  };
  for (const auto& rule : m.rules()) walk(rule.when);
  for (const auto& entry : m.selection()) walk(entry.when);
  if (names.empty()) return std::nullopt;
  std::string list;
  for (const auto& n : names) {
    if (n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != std::string::npos) continue;
    list += (list.empty() ? "'" : ",'") + n + "'";
  }
  const std::string command =
      "timeout 10 python3 -c \"import importlib.util as u\nfor n in [" + list +
      "]:\n  try:\n    print(n) if u.find_spec(n) else None\n  except Exception: pass\" 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::vector<std::string> found;
  char line[512];
  while (fgets(line, sizeof line, pipe)) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    if (!s.empty()) found.push_back(s);
  }
  if (pclose(pipe) != 0) return std::nullopt;
  return found;
}

Request finish_request(Request out, const Request& r, const SelectArgs& a);

// A flag the engine does not know but that is close to one of attnsel's own options (`--jsn`, `--gpuu`)
// is a typo of attnsel's, not the engine's: say so before the engine's grammar calls it unrecognised.
void reject_mistyped_own_options(const SelectArgs& a, const Grammar* grammar) {
  std::vector<std::string> own;
  for (const CLI::Option* o : a.app->get_options())
    for (const std::string& n : o->get_lnames()) own.push_back("--" + n);
  const std::vector<std::string> engine = grammar ? grammar->option_names() : std::vector<std::string>{};
  std::vector<std::string> all = own;
  all.insert(all.end(), engine.begin(), engine.end());
  for (const std::string& arg : a.app->remaining()) {
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    std::string name = arg.substr(0, arg.find('='));
    if (grammar) {
      if (grammar->dotted_keys) name = name.substr(0, name.find('.'));
      if (grammar->underscore_dashes) std::replace(name.begin() + 2, name.end(), '_', '-');
      if (grammar->exact(name) || (grammar->allow_abbrev && !grammar->prefixed(name).empty())) continue;
    }
    const std::string best = closest_name(name, all);
    if (best.empty() || std::find(own.begin(), own.end(), best) == own.end()) continue;
    Error e{ErrorCode::unknown_name, "unknown option", name, {}, best};
    fail(e);
  }
}

// The engine's launch flags as the engine would read them, onto a request that has the model.
Request with_engine_flags(Request r, const SelectArgs& a, const std::shared_ptr<const Matrix>& matrix,
                          const Catalog& catalog, const LaunchCommand& flags) {
  auto profile = builtin_profile(matrix->info().engine);
  // A matrix of an engine attnsel has no profile for (--matrix) takes no engine flags.
  if (!profile && !flags.args.empty())
    throw Failure{kUsage, fmt::format("{}: the launch flags {} need the engine's profile", profile.error().describe(),
                                      fmt::join(flags.args, " ")), profile.error()};
  if (!profile) return finish_request(r, r, a);
  const Grammar* grammar = (*profile)->grammar("", a.matrix.release.value_or(""));
  if (!grammar) throw Failure{kUsage, fmt::format("the {} profile has no launch grammar", (*profile)->engine)};
  CheckOptions options;
  // The user's own command line may name any file (--config, a backend config), read bounded.
  options.read_config = [](const std::string& path, const LaunchCommand&) { return read_input_file(path); };
  options.model = r.model;
  options.strict = a.strict;
  options.topk_implies_speculative = true;
  options.installed = r.installed;
  options.installed_known = r.installed_known;
  PreparedRequest prepared = prepare_request(matrix, **profile, *grammar, catalog, flags, options);
  std::string errors;
  for (const CheckDiagnostic& d : prepared.findings) {
    const bool named = d.flag.empty() || d.diagnostic.message.find(d.flag) != std::string::npos;
    const std::string where = named ? std::string() : d.flag + (d.value.empty() ? "" : " " + d.value) + ": ";
    if (d.diagnostic.severity == Severity::error) errors += fmt::format("{}{}\n", where, d.diagnostic.message);
    else if (d.diagnostic.rule != "check.model-assumed") std::cerr << fmt::format("note: {}{}\n", where, d.diagnostic.message);
  }
  if (!errors.empty()) throw Failure{kUsage, errors.substr(0, errors.size() - 1)};
  return finish_request(prepared.request, r, a);
}

// attnsel's own options over a request read from the engine's flags (`from`).
Request finish_request(Request out, const Request& r, const SelectArgs& a) {
  out.model = r.model;
  out.model.sliding_window |= a.sliding_window;
  out.model.multimodal |= a.multimodal;
  out.model.attention_sinks |= a.sinks;
  out.dtype = r.dtype;
  out.installed = r.installed;
  out.installed_known = r.installed_known;
  out.prefer = *parse_preference(a.prefer);
  out.strict = a.strict;
  return out;
}

// Everything but the device.
Request build_request(const Catalog& catalog, const std::shared_ptr<const Matrix>& matrix, const SelectArgs& a) {
  const Matrix& m = *matrix;
  Request r;
  r.dtype = *parse_compute_dtype(a.dtype);
  if (a.installed) {
    r.installed_known = true;
    for (auto& p : CLI::detail::split(*a.installed, ',')) {
      p = CLI::detail::trim_copy(p);
      if (!p.empty()) r.installed.push_back(p);
    }
  } else if (auto found = detect_packages(m)) {
    r.installed_known = true;
    r.installed = *found;
  }
  {
    auto profile = builtin_profile(m.info().engine);
    reject_mistyped_own_options(a, profile ? (*profile)->grammar("", a.matrix.release.value_or("")) : nullptr);
  }
  LaunchCommand flags;
  flags.launcher = "flags";
  flags.args = a.app->remaining();
  flags.arg_lines.assign(flags.args.size(), 0);
  // The model: attnsel's --model, else the engine's own model flag among the launch flags.
  std::optional<std::string> model = a.model;
  if (!model) {
    auto profile = builtin_profile(m.info().engine);
    const Grammar* g = profile ? (*profile)->grammar("") : nullptr;
    if (g) {
      ParsedArgs parsed = parse_launch_args(flags, *g);
      if (const ArgValue* v = parsed.value("model")) model = v->text;
    }
  }
  if (!model && m.info().any_model) {
    r.model.origin = fmt::format("any model: the {} matrix does not depend on it", m.info().engine);
    return with_engine_flags(r, a, matrix, catalog, flags);
  }
  if (!model) throw Failure{kUsage, "--model is required (a kind: mha, mla, gdn, dsa; a model id; or a config.json)"};
  auto resolved = resolve_model(catalog, *model);
  if (!resolved && m.info().any_model) {
    r.model.id = *model;
    r.model.origin = fmt::format("any model: the {} matrix does not depend on it", m.info().engine);
    return with_engine_flags(r, a, matrix, catalog, flags);
  }
  if (!resolved) {
    Error e = resolved.error();
    if (e.where.empty() || e.where == "--model") e.where = "--model";
    fail(e);
  }
  r.model = *resolved;
  return with_engine_flags(r, a, matrix, catalog, flags);
}

int run_select(const SelectArgs& a, bool explain) {
  auto matrix = load_matrix_or_fail(a.matrix);
  auto catalog = catalog_or_fail();
  const Request base = build_request(*catalog, matrix, a);
  std::vector<Selection> plans;
  for (const DeviceInfo& device : devices_from_args(*catalog, a)) {
    Request request = base;
    request.device = device;
    auto selection = select(matrix, request);
    if (!selection) fail(selection.error());
    plans.push_back(std::move(*selection));
  }
  const bool all_ok = std::all_of(plans.begin(), plans.end(), [](const Selection& s) { return s.ok(); });
  const RenderOptions o{use_color()};
  const int code = all_ok ? kOk : kInvalidPlan;
  // JSON has one shape for one device or several: docs/schema/select.schema.json.
  if (a.format.get() == Format::json) {
    std::cout << render_select_json(plans, explain) << "\n";
    return code;
  }
  if (a.format.get() == Format::markdown) {
    for (const Selection& s : plans) std::cout << render_markdown(s) << (plans.size() > 1 ? "\n" : "");
    return code;
  }
  if (plans.size() == 1) {
    std::cout << (explain ? render_explain(plans[0], o) : render_text(plans[0], o));
    return code;
  }

  // Several devices (a heterogeneous host, or --gpu a,b): one plan each, then whether they agree.
  const auto same = [&](const Selection& s) { return s.ok() == plans[0].ok() && s.flags() == plans[0].flags(); };
  const bool uniform = std::all_of(plans.begin(), plans.end(), same);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::cout << fmt::format("{}── device {} ──\n", i ? "\n" : "", i);
    std::cout << (explain ? render_explain(plans[i], o) : render_text(plans[i], o));
  }
  std::cout << "\n";
  if (uniform) {
    std::cout << fmt::format("All {} devices get the same plan.\n", plans.size());
  } else {
    std::cout << "The devices need different plans: one launch command will not fit them all.\n";
    for (std::size_t i = 0; i < plans.size(); ++i) {
      std::string flags;
      for (const auto& f : plans[i].flags()) flags += (flags.empty() ? "" : " ") + f;
      std::cout << fmt::format("  device {} ({}): {}\n", i, plans[i].request.device.arch,
                               plans[i].ok() ? flags : std::string("no valid plan"));
    }
  }
  return all_ok ? kOk : kInvalidPlan;
}

}  // namespace

Command add_select_commands(CLI::App& app, std::vector<CLI::App*>& engine_flag_apps) {
  // One argument set per place the options can appear: the root command, `select`, `explain`.
  auto root = std::make_shared<SelectArgs>();
  auto sel = std::make_shared<SelectArgs>();
  auto exp = std::make_shared<SelectArgs>();
  add_select_options(app, *root);
  CLI::App* select_cmd = app.add_subcommand("select", "plan attention backends and the page size (the default command)");
  add_select_options(*select_cmd, *sel);
  CLI::App* explain_cmd = app.add_subcommand("explain", "the decision, step by step");
  add_select_options(*explain_cmd, *exp);
  engine_flag_apps.push_back(select_cmd);
  engine_flag_apps.push_back(explain_cmd);
  return [&app, root, sel, exp, select_cmd, explain_cmd]() -> std::optional<int> {
    if (*select_cmd) return run_select(*sel, false);
    if (*explain_cmd) return run_select(*exp, true);
    if (!app.get_subcommands().empty()) return std::nullopt;
    if (!root->model && !root->gpu && !root->platform && !root->matrix.release && root->matrix.engine == "sglang" &&
        app.remaining().empty())
      throw Failure{kUsage, "--model is required (a kind: mha, mla, gdn, dsa; a model id; or a config.json)\n\n" + app.help()};
    return run_select(*root, false);
  };
}

}  // namespace attnsel::cli
