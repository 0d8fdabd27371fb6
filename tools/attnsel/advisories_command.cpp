// `attnsel advisories`: the known engine bugs (data/engines/<engine>/advisories.json), listed and
// filtered by engine, GPU, backend, release, effect and model; text or JSON (kind "advisories").
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/advisory.hpp"
#include "attnsel/check.hpp"
#include "attnsel/input.hpp"
#include "attnsel/render.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

std::string range_of(const Advisory& a) {
  if (a.likely_main_only) return fmt::format("main only{}", a.fix_merged.empty() ? "" : ", fixed " + a.fix_merged);
  const std::string from = a.introduced ? a.introduced_text : "?";
  if (a.fixed) return fmt::format("[{}, {})", from, a.fixed_text);
  if (a.status == "open") return fmt::format("[{}, open)", from);
  return fmt::format("[{}, ?){}", from, a.fix_merged.empty() ? "" : " fix merged " + a.fix_merged);
}

std::string conditions_of(const Advisory& a) {
  std::vector<std::string> parts;
  auto list = [&](const char* what, const std::vector<std::string>& v) {
    if (!v.empty()) parts.push_back(fmt::format("{} {}", what, fmt::join(v, "|")));
  };
  if (a.runtime != "llm") parts.push_back(a.runtime);
  if (!a.platform.empty()) parts.push_back(a.platform);
  list("gpu", a.gpus);
  list("backend", a.backends);
  list("kv", a.kv_cache_dtypes);
  list("model", a.model_families);
  list("arch", a.architectures);
  list("traits", a.model_traits);
  for (const AdvisoryCondition& c : a.flags) {
    if (c.absent) parts.push_back("without " + c.name);
    else if (!c.values.empty()) parts.push_back(fmt::format("{} {}", c.name, fmt::join(c.values, "|")));
    else if (c.min) parts.push_back(fmt::format("{} >= {}", c.name, *c.min));
    else parts.push_back(c.name);
  }
  for (const AdvisoryCondition& c : a.env)
    parts.push_back(c.absent ? "without " + c.name
                             : c.values.empty() ? c.name : fmt::format("{}={}", c.name, fmt::join(c.values, "|")));
  return parts.empty() ? std::string("any configuration") : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

Command add_advisories_command(CLI::App& app) {
  struct Args {
    std::string engine, gpu, backend, release, effect, model;
    FormatChoice format;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("advisories", "list the known engine bugs attnsel checks commands against "
                                                   "(docs/advisories.md), filtered by engine, GPU, backend and release");
  cmd->footer("Exit codes: 0 listed (none matching is not an error), 2 bad usage (an unknown engine, GPU or release).");
  cmd->add_option("--engine", args->engine, "an engine with advisories (default: every engine)");
  cmd->add_option("--gpu", args->gpu, "a GPU or architecture (sm90, H100, B200, gfx942): advisories that can apply to it");
  cmd->add_option("--backend", args->backend, "an attention backend as the engine spells it (fa3, FLASHINFER)");
  cmd->add_option("--engine-version,--release", args->release,
                  "a release (0.5.9): advisories it is affected by or whose range is not known");
  cmd->add_option("--effect", args->effect, "crash, refuses-to-start, wrong-output, hang, silent-slowdown or oom");
  cmd->add_option("--model", args->model, "a model family (gpt-oss, deepseek-v3) or architecture class");
  args->format.add_options(*cmd, {"table", "json"});

  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    const std::vector<std::string> engines = advisory_engines();
    if (!args->engine.empty() && std::find(engines.begin(), engines.end(), args->engine) == engines.end())
      fail(Error{ErrorCode::unknown_name, fmt::format("no advisories for engine '{}'", args->engine), "--engine", engines, {}});
    AdvisoryFilter filter;
    filter.engine = args->engine;
    filter.backend = args->backend;
    filter.effect = args->effect;
    filter.model = args->model;
    if (!args->release.empty()) {
      filter.release = parse_release(args->release);
      if (!filter.release)
        fail(Error{ErrorCode::invalid_argument, fmt::format("expected a release like 0.5.9, got '{}'", args->release),
                   "--engine-version", {}, {}});
    }
    std::vector<std::string> gpu_keys;  // the architecture and the catalog name
    if (!args->gpu.empty()) {
      auto targets = resolve_check_targets(*catalog_or_fail(), args->gpu, std::nullopt);
      if (!targets) fail(targets.error());
      for (const CheckTarget& t : *targets) {
        gpu_keys.push_back(t.device.arch);
        if (!t.device.name.empty()) gpu_keys.push_back(t.device.name);
      }
    }
    std::vector<const Advisory*> selected;
    std::vector<std::shared_ptr<const std::vector<Advisory>>> keep;
    for (const std::string& engine : engines) {
      auto list = builtin_advisories(engine);
      if (!list) fail(list.error());
      keep.push_back(*list);
      for (const Advisory& a : **list) {
        if (!advisory_selected(a, filter)) continue;
        if (!gpu_keys.empty() && !a.gpus.empty() &&
            std::none_of(gpu_keys.begin(), gpu_keys.end(), [&](const std::string& g) {
              AdvisoryFilter one;
              one.gpu = g;
              return advisory_selected(a, one);
            }))
          continue;
        selected.push_back(&a);
      }
    }
    if (args->format.get() == Format::json) {
      std::string body = "{\"advisories\": [";
      for (std::size_t i = 0; i < selected.size(); ++i) body += (i ? "," : "") + advisory_json(*selected[i], -1);
      body += "]}";
      std::cout << render_json_document("advisories", body) << "\n";
      return kOk;
    }
    for (const Advisory* a : selected) {
      std::cout << fmt::format("{}  {}  {}  {}\n", a->id, a->effect, range_of(*a), escape_for_terminal(a->title));
      std::cout << fmt::format("    when: {}\n", escape_for_terminal(conditions_of(*a)));
      if (!a->workaround.empty()) std::cout << fmt::format("    workaround: {}\n", escape_for_terminal(a->workaround));
      if (!a->link().empty()) std::cout << fmt::format("    {}\n", a->link());
    }
    std::cout << fmt::format("{} advisor{}{}\n", selected.size(), selected.size() == 1 ? "y" : "ies",
                             selected.empty() ? " match" : "; attnsel check reports them as advisory.<ID> findings");
    return kOk;
  };
}

}  // namespace attnsel::cli
