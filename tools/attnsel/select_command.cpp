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
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/render_probe.hpp"
#include "attnsel/selection.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct SelectArgs {
  std::optional<std::string> gpu, cuda, model, platform;
  std::optional<std::string> attention, prefill, decode;
  std::optional<std::string> linear, linear_prefill, linear_decode;
  std::optional<std::string> sparse_prefill, sparse_decode;
  std::optional<int> page_size;
  std::string kv_dtype = "auto";
  int topk = 0;
  std::string spec_mode = "prefill";
  bool sliding_window = false, multimodal = false, sinks = false, deterministic = false, no_radix = false, strict = false;
  std::string prefer = "sglang-default";
  std::string dtype = "auto";
  std::optional<std::string> installed;
  std::optional<std::string> backend_config;
  int device_index = 0;
  bool all_devices = false;
  bool json = false;
  MatrixChoice matrix;
};

void add_select_options(CLI::App& app, SelectArgs& a) {
  app.add_option("--gpu", a.gpu, "GPU: sm90, sm_90a, 9.0, 90, or a name (H100, B200, \"RTX 5090\", MI300X, gfx942); probed when absent");
  app.add_option("--cuda", a.cuda, "CUDA version X.Y (default: the driver's, or the catalog's assumption with --gpu)");
  app.add_option("--model", a.model, "mha|mla|gdn|dsa, a model id (deepseek-ai/DeepSeek-V3), or a config.json / model directory");
  app.add_option("--attention-backend", a.attention, "backend for every phase");
  app.add_option("--prefill-attention-backend", a.prefill, "backend for prefill");
  app.add_option("--decode-attention-backend", a.decode, "backend for decode");
  app.add_option("--page-size", a.page_size, "KV cache page size")->check(CLI::Range(1, 1 << 20));
  app.add_option("--kv-cache-dtype", a.kv_dtype, "auto|bf16|fp8_e4m3|fp8_e5m2|fp4_e2m1")
      ->check(CLI::IsMember({"auto", "bf16", "bfloat16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"}));
  app.add_option("--speculative-eagle-topk", a.topk, "EAGLE draft tree width (0: no speculative decoding)")
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("--speculative-attention-mode", a.spec_mode, "prefill|decode")->check(CLI::IsMember({"prefill", "decode"}));
  app.add_flag("--sliding-window", a.sliding_window, "the model uses sliding-window attention");
  app.add_flag("--multimodal", a.multimodal, "the model is multimodal");
  app.add_flag("--attention-sinks", a.sinks, "the model uses attention sinks (GPT-OSS)");
  app.add_option("--linear-attn-backend", a.linear, "GDN kernels for every phase");
  app.add_option("--linear-attn-prefill-backend", a.linear_prefill, "GDN kernels for prefill");
  app.add_option("--linear-attn-decode-backend", a.linear_decode, "GDN kernels for decode");
  app.add_option("--dsa-prefill-backend,--nsa-prefill-backend", a.sparse_prefill, "DSA sub-backend for prefill");
  app.add_option("--dsa-decode-backend,--nsa-decode-backend", a.sparse_decode, "DSA sub-backend for decode");
  app.add_flag("--enable-deterministic-inference", a.deterministic, "deterministic inference");
  app.add_flag("--disable-radix-cache", a.no_radix, "the radix (prefix) cache is off");
  app.add_option("--platform", a.platform, "cuda|rocm|npu|xpu|cpu|mps (default: from the GPU)")
      ->check(CLI::IsMember({"cuda", "rocm", "npu", "xpu", "cpu", "mps"}));
  app.add_option("--prefer", a.prefer, "page-size preference: prefix-reuse|throughput (default: what SGLang does)")
      ->check(CLI::IsMember({"prefix-reuse", "throughput", "sglang-default"}));
  app.add_flag("--strict", a.strict, "documented caveats (e.g. FlashMLA with FP8 KV) are errors");
  app.add_option("--device", a.device_index, "which probed GPU to plan for (default 0)")->check(CLI::NonNegativeNumber);
  app.add_flag("--all-devices", a.all_devices, "plan for every probed GPU and say where the plans differ");
  a.matrix.add_options(app);
  app.add_option("--dtype", a.dtype, "the model's compute dtype: auto|fp16|bf16|fp32 (diffusion backends check it)")
      ->check(CLI::IsMember({"auto", "fp16", "bf16", "fp32", "float16", "bfloat16", "float32"}));
  app.add_option("--installed", a.installed,
                 "optional Python packages present, comma-separated (e.g. sageattention,st_attn); detected with python3 when absent");
  app.add_option("--attention-backend-config", a.backend_config,
                 "backend parameters: a JSON/YAML file, a JSON object, or key=value pairs (diffusion backends)");
  app.add_flag("--json", a.json, "print one JSON object");
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
      if (!r) throw Failure{kUsage, r.error().describe()};
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

Request with_flags(Request r, const SelectArgs& a);

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

// Everything but the device.
Request build_request(const Catalog& catalog, const Matrix& matrix, const SelectArgs& a) {
  Request r;
  r.dtype = *parse_compute_dtype(a.dtype);
  if (a.installed) {
    r.installed_known = true;
    for (auto& p : CLI::detail::split(*a.installed, ',')) {
      p = CLI::detail::trim_copy(p);
      if (!p.empty()) r.installed.push_back(p);
    }
  } else if (auto found = detect_packages(matrix)) {
    r.installed_known = true;
    r.installed = *found;
  }
  if (a.backend_config) {
    std::error_code ec;
    Result<BackendConfig> parsed = parse_backend_config(*a.backend_config);
    if (std::filesystem::is_regular_file(*a.backend_config, ec)) {
      std::ifstream in(*a.backend_config, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      parsed = parse_backend_config_file(text.str(), *a.backend_config);
    }
    if (!parsed) {
      Error e = parsed.error();
      if (e.where.empty()) e.where = "--attention-backend-config";
      throw Failure{kUsage, e.describe()};
    }
    r.backend_config = std::move(*parsed);
  }
  if (!a.model && matrix.info().any_model) {
    r.model.origin = fmt::format("any model: the {} matrix does not depend on it", matrix.info().engine);
    return with_flags(r, a);
  }
  if (!a.model) throw Failure{kUsage, "--model is required (a kind: mha, mla, gdn, dsa; a model id; or a config.json)"};
  auto model = resolve_model(catalog, *a.model);
  if (!model && matrix.info().any_model) {
    r.model.id = *a.model;
    r.model.origin = fmt::format("any model: the {} matrix does not depend on it", matrix.info().engine);
    return with_flags(r, a);
  }
  if (!model) {
    Error e = model.error();
    if (e.where.empty() || e.where == "--model") e.where = "--model";
    throw Failure{kUsage, e.describe()};
  }
  r.model = *model;
  return with_flags(r, a);
}

Request with_flags(Request r, const SelectArgs& a) {
  r.model.sliding_window |= a.sliding_window;
  r.model.multimodal |= a.multimodal;
  r.model.attention_sinks |= a.sinks;
  r.kv_cache_dtype = *parse_kv_dtype(a.kv_dtype);
  r.page_size = a.page_size;
  r.speculative_topk = a.topk;
  r.speculative_attention_mode = *parse_phase(a.spec_mode);
  r.attention = {a.attention, a.prefill, a.decode};
  r.linear = {a.linear, a.linear_prefill, a.linear_decode};
  r.sparse = {std::nullopt, a.sparse_prefill, a.sparse_decode};
  r.deterministic = a.deterministic;
  r.disable_radix_cache = a.no_radix;
  r.prefer = *parse_preference(a.prefer);
  r.strict = a.strict;
  return r;
}

int run_select(const SelectArgs& a, bool explain) {
  auto matrix = load_matrix_or_fail(a.matrix);
  auto catalog = catalog_or_fail();
  const Request base = build_request(*catalog, *matrix, a);
  std::vector<Selection> plans;
  for (const DeviceInfo& device : devices_from_args(*catalog, a)) {
    Request request = base;
    request.device = device;
    auto selection = select(matrix, request);
    if (!selection) throw Failure{kUsage, selection.error().describe()};
    plans.push_back(std::move(*selection));
  }
  const bool all_ok = std::all_of(plans.begin(), plans.end(), [](const Selection& s) { return s.ok(); });
  const RenderOptions o{use_color()};
  if (plans.size() == 1) {
    if (a.json) std::cout << render_json(plans[0]) << "\n";
    else if (explain) std::cout << render_explain(plans[0], o);
    else std::cout << render_text(plans[0], o);
    return all_ok ? kOk : kInvalidPlan;
  }

  // Several devices (a heterogeneous host, or --gpu a,b): one plan each, then whether they agree.
  const auto same = [&](const Selection& s) { return s.ok() == plans[0].ok() && s.flags() == plans[0].flags(); };
  const bool uniform = std::all_of(plans.begin(), plans.end(), same);
  if (a.json) {
    std::string out = "{\n  \"same_plan\": " + std::string(uniform ? "true" : "false") + ",\n  \"ok\": " +
                      (all_ok ? "true" : "false") + ",\n  \"devices\": [\n";
    for (std::size_t i = 0; i < plans.size(); ++i) out += (i ? ",\n" : "") + render_json(plans[i], 2);
    std::cout << out << "\n  ]\n}\n";
    return all_ok ? kOk : kInvalidPlan;
  }
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

Command add_select_commands(CLI::App& app) {
  // One argument set per place the options can appear: the root command, `select`, `explain`.
  auto root = std::make_shared<SelectArgs>();
  auto sel = std::make_shared<SelectArgs>();
  auto exp = std::make_shared<SelectArgs>();
  add_select_options(app, *root);
  CLI::App* select_cmd = app.add_subcommand("select", "plan attention backends and the page size (the default command)");
  add_select_options(*select_cmd, *sel);
  CLI::App* explain_cmd = app.add_subcommand("explain", "the decision, step by step");
  add_select_options(*explain_cmd, *exp);
  return [&app, root, sel, exp, select_cmd, explain_cmd]() -> std::optional<int> {
    if (*select_cmd) return run_select(*sel, false);
    if (*explain_cmd) return run_select(*exp, true);
    if (!app.get_subcommands().empty()) return std::nullopt;
    if (!root->model && !root->gpu && !root->platform && !root->matrix.release && root->matrix.engine == "sglang")
      throw Failure{kUsage, "--model is required (a kind: mha, mla, gdn, dsa; a model id; or a config.json)\n\n" + app.help()};
    return run_select(*root, false);
  };
}

}  // namespace attnsel::cli
