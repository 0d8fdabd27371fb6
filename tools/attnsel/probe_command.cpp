// `attnsel probe`: the GPUs this process can see.
#include <iostream>

#include "attnsel/probe.hpp"
#include "attnsel/render_probe.hpp"
#include "cli.hpp"

namespace attnsel::cli {

Command add_probe_command(CLI::App& app) {
  auto format = std::make_shared<FormatChoice>();
  auto fast = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("probe", "list the GPUs of this host (NVML, CUDA driver, ROCm sysfs); exit 3 when none");
  format->add_options(*cmd, {"text", "json"});
  cmd->footer("Exit codes: 0 at least one GPU found, 2 bad usage, 3 no GPU found (say which with --gpu instead).");
  cmd->add_flag("--fast", *fast,
                "read the NVIDIA driver's procfs and the PCI IDs instead of loading NVML where they answer (no memory size)");
  return [cmd, format, fast]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    ProbeOptions options;
    options.fast_path = *fast;
    const ProbeReport report = probe_devices(options);
    if (format->get() == Format::json) std::cout << probe_to_json(report) << "\n";
    else std::cout << render_probe_text(report, use_color());
    if (report.devices.empty() && format->get() != Format::json)
      std::cerr << "attnsel: no GPU on this host; plan or check for one by name: attnsel --gpu sm90 --model ... "
                   "(or H100, B200, MI300X ...; ATTNSEL_GPU=... for every command), attnsel check --gpu sm90,B200 FILE\n";
    return report.devices.empty() ? kProbeFailed : kOk;
  };
}

}  // namespace attnsel::cli
