// `attnsel probe`: the GPUs this process can see.
#include <iostream>

#include "attnsel/probe.hpp"
#include "attnsel/render_probe.hpp"
#include "cli.hpp"

namespace attnsel::cli {

Command add_probe_command(CLI::App& app) {
  auto format = std::make_shared<FormatChoice>();
  CLI::App* cmd = app.add_subcommand("probe", "list the GPUs of this host (NVML, CUDA driver, ROCm sysfs); exit 3 when none");
  format->add_options(*cmd, {"text", "json"});
  return [cmd, format]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    const ProbeReport report = probe_devices();
    if (format->get() == Format::json) std::cout << probe_to_json(report) << "\n";
    else std::cout << render_probe_text(report, use_color());
    return report.devices.empty() ? kProbeFailed : kOk;
  };
}

}  // namespace attnsel::cli
