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
#include "attnsel/encode.hpp"
#include "attnsel/input.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/render_probe.hpp"
#include "attnsel/select_options.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/suggest.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct SelectArgs {
  std::optional<std::string> gpu, cuda, model, platform;
  bool sliding_window = false, multimodal = false, sinks = false, strict = false;
  std::string prefer = "engine-default";
  std::string dtype{name_of(ComputeDtype::auto_)};
  std::optional<std::string> installed;
  std::optional<std::string> device;  // --device: an index, or the engine's --device PLATFORM
  bool all_devices = false;
  FormatChoice format;
  MatrixChoice matrix;
  const CLI::App* app = nullptr;  // the engine's own flags are what it leaves unparsed
};

// A CLI check that accepts what the library's parser accepts and names the library's choices, so the
// option and the library cannot disagree on a spelling.
template <class Parse>
CLI::Validator library_choice(Parse parse, std::string_view valid) {
  return CLI::Validator(
      [parse, valid](std::string& value) {
        return parse(value) ? std::string() : fmt::format("'{}' is not one of: {}", value, valid);
      },
      "");
}

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
      ->check(library_choice(parse_platform, platform_names()));
  app.add_option("--prefer", a.prefer, "page-size preference: prefix-reuse|throughput (default: what the engine does)")
      ->check(CLI::IsMember({"prefix-reuse", "throughput", "engine-default", "sglang-default"}));
  app.add_flag("--strict", a.strict, "documented caveats (e.g. FlashMLA with FP8 KV) are errors");
  app.add_option("--device", a.device,
                 "which probed GPU to plan for (default 0); the engine's own --device cuda|rocm|npu|xpu|cpu|mps (pasted "
                 "from a launch command) is read as --platform");
  app.add_flag("--all-devices", a.all_devices, "plan for every probed GPU and say where the plans differ");
  a.matrix.add_options(app);
  app.add_option("--dtype", a.dtype, "the model's compute dtype: auto|fp16|bf16|fp32 (diffusion backends check it)")
      ->check(library_choice(parse_compute_dtype, compute_dtype_names()));
  app.add_option("--installed", a.installed,
                 "optional Python packages present, comma-separated (e.g. sageattention,st_attn); detected with python3 when absent");
  a.format.add_options(app, {"text", "json", "markdown"});
  app.footer(std::string("Every other flag is the engine's own launch flag (--attention-backend, --page-size, --kv-cache-dtype, "
                         "--tp ...),\nread with the engine's launch grammar: paste a launch command's flags. `attnsel matrix` "
                         "lists the backends.\n\n") +
             kSelectExitCodes);
}

// --gpu (a comma-separated list plans for each), then ATTNSEL_GPU, then the probe (device
// --device, or every one with --all-devices); non-CUDA platforms need no GPU.
std::vector<DeviceInfo> devices_from_args(const Catalog& catalog, const SelectArgs& a) {
  std::optional<Platform> platform = a.platform ? parse_platform(*a.platform) : std::nullopt;
  // --device: attnsel's probed-GPU index, or the engine's own --device PLATFORM from a pasted command.
  std::size_t device_index = 0;
  if (a.device) {
    const std::string& d = *a.device;
    if (!d.empty() && d.size() <= 6 && d.find_first_not_of("0123456789") == std::string::npos) {
      device_index = static_cast<std::size_t>(std::stoul(d));
    } else if (const auto p = parse_platform(d)) {
      if (platform && *platform != *p)
        throw Failure{kUsage, fmt::format("--device {} and --platform {} name different platforms",
                                          encode_value(d, OutputChannel::terminal), *a.platform)};
      platform = *p;
    } else {
      throw Failure{kUsage, fmt::format("--device {}: a probed GPU's index (0, 1 ...) or the engine's platform "
                                        "(cuda, rocm, npu, xpu, cpu, mps)",
                                        encode_value(d, OutputChannel::terminal))};
    }
  }
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
  // Planning needs no memory size: the procfs fast path answers where it can, NVML elsewhere.
  ProbeOptions probe_options;
  probe_options.fast_path = true;
  const ProbeReport report = probe_devices(probe_options);
  std::size_t found = 0;
  for (const auto& dev : report.devices) found += dev.platform == Platform::cuda || dev.platform == Platform::rocm;
  if (found == 0)
    throw Failure{kProbeFailed, render_probe_text(report, false) +
                                    "Pass the GPU instead: --gpu sm90 (or H100, B200, MI300X ...) or ATTNSEL_GPU=...; "
                                    "--platform npu|xpu|cpu needs no GPU."};
  if (device_index >= found) throw Failure{kUsage, fmt::format("--device {}: only {} GPU(s) found", device_index, found)};
  for (std::size_t i = 0; i < found; ++i) {
    if (!a.all_devices && i != device_index) continue;
    auto device = device_from_probe(catalog, report, i, a.cuda);
    if (!device) fail(device.error(), device.error().where == "--cuda" ? kUsage : kProbeFailed);
    out.push_back(*device);
  }
  return out;
}


// The packages a matrix asks about, looked up with the host's python3 (bounded in time); nullopt
// when python3 is missing or does not answer: the requirements then stay caveats.
std::optional<std::vector<std::string>> detect_packages(const Matrix& m) {
  const std::vector<std::string> names = optional_packages(m);
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

// Everything but the device: attnsel's options over the engine's launch flags, read with the
// engine's grammar (the library's prepare_select, as the C API and the Python module read them).
Request build_request(const Catalog& catalog, const std::shared_ptr<const Matrix>& matrix, const SelectArgs& a) {
  {
    auto profile = builtin_profile(matrix->info().engine);
    reject_mistyped_own_options(a, profile ? (*profile)->grammar("", a.matrix.release.value_or("")) : nullptr);
  }
  SelectOptions o;
  o.model = a.model;
  o.engine_flags = a.app->remaining();
  o.release = a.matrix.release;
  o.sliding_window = a.sliding_window;
  o.multimodal = a.multimodal;
  o.attention_sinks = a.sinks;
  o.strict = a.strict;
  o.prefer = *parse_preference(a.prefer);
  o.dtype = *parse_compute_dtype(a.dtype);
  if (a.installed) {
    o.installed.emplace();
    for (auto& p : CLI::detail::split(*a.installed, ',')) {
      p = CLI::detail::trim_copy(p);
      if (!p.empty()) o.installed->push_back(p);
    }
  } else {
    o.installed = detect_packages(*matrix);
  }
  // The user's own command line may name any file (--config, a backend config), read bounded.
  o.read_config = [](const std::string& path, const LaunchCommand&) { return read_input_file(path); };
  auto prepared = prepare_select(matrix, catalog, o);
  if (!prepared) fail(prepared.error());
  // A choice the matrix has no data for is not judged: no plan, rather than another backend in its place.
  for (const CheckDiagnostic& d : prepared->findings)
    if (d.diagnostic.rule == "select.not-judged")
      throw Failure{kNotJudged, fmt::format("not judged [select.not-judged]: {}{}; attnsel plans no other choice in its place",
                                            d.flag.empty() ? std::string() : d.flag + " " + d.value + ": ",
                                            d.diagnostic.message)};
  for (const CheckDiagnostic& d : prepared->findings) {
    if (d.diagnostic.severity == Severity::error || d.diagnostic.rule == "check.model-assumed") continue;
    const bool named = d.flag.empty() || d.diagnostic.message.find(d.flag) != std::string::npos;
    std::cerr << "note: "
              << encode_value((named ? std::string() : d.flag + (d.value.empty() ? "" : " " + d.value) + ": ") +
                                  d.diagnostic.message,
                              OutputChannel::terminal)
              << "\n";
  }
  if (!prepared->ok()) throw Failure{kUsage, prepared->error_text()};
  return prepared->request;
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
  define_options_on_use(*select_cmd, [sel](CLI::App& a) { add_select_options(a, *sel); });
  CLI::App* explain_cmd = app.add_subcommand("explain", "the decision, step by step");
  define_options_on_use(*explain_cmd, [exp](CLI::App& a) { add_select_options(a, *exp); });
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
