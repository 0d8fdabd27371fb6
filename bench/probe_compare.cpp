// attnsel_probe_compare: the probe's fast path (/proc/driver/nvidia, /sys/bus/pci, data/pci-ids.json)
// against NVML on a real GPU host, and one probe of either kind for timing as a process.
//   attnsel_probe_compare compare   both probes, every field side by side; exit 1 on a mismatch
//   attnsel_probe_compare fast      one probe with the fast path; prints each device's compute capability
//   attnsel_probe_compare nvml      one probe without it (NVML, else libcuda)
// bench/device_check.sh and bench/probe_bench.sh run it.
#include <chrono>
#include <cstdio>
#include <string>

#include "attnsel/probe.hpp"

namespace {

using attnsel::DeviceInfo;
using attnsel::ProbeReport;

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "(none)" : out;
}

std::string text(const std::optional<attnsel::Version>& v) { return v ? attnsel::to_string(*v) : "-"; }

ProbeReport probe(bool fast, double* ms) {
  attnsel::ProbeOptions options;
  options.fast_path = fast;
  const auto start = std::chrono::steady_clock::now();
  ProbeReport report = attnsel::probe_devices(options);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void print_attempts(const ProbeReport& r) {
  for (const auto& a : r.attempts) std::printf("    %-40s %s %s\n", a.source.c_str(), a.ok ? "ok  " : "FAIL", a.detail.c_str());
}

int compare() {
  double fast_ms = 0, nvml_ms = 0;
  const ProbeReport quick = probe(true, &fast_ms);
  const ProbeReport slow = probe(false, &nvml_ms);
  std::printf("fast path answered by: %s (%.2f ms in-process)\n", join(quick.answered_by).c_str(), fast_ms);
  print_attempts(quick);
  std::printf("without it, answered by: %s (%.2f ms in-process)\n", join(slow.answered_by).c_str(), nvml_ms);
  print_attempts(slow);
  bool failed = quick.devices.size() != slow.devices.size();
  if (failed) std::printf("MISMATCH: %zu devices against %zu\n", quick.devices.size(), slow.devices.size());
  for (std::size_t i = 0; i < quick.devices.size() && i < slow.devices.size(); ++i) {
    const DeviceInfo& a = quick.devices[i];
    const DeviceInfo& b = slow.devices[i];
    const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
        {"name", {a.name, b.name}},
        {"compute capability", {text(a.compute_capability), text(b.compute_capability)}},
        {"arch", {a.arch, b.arch}},
        {"CUDA (driver)", {text(a.cuda), text(b.cuda)}},
        {"driver version", {a.driver_version, b.driver_version}},
        {"PCI bus id", {a.pci_bus_id, b.pci_bus_id}},
        {"UUID", {a.uuid, b.uuid}},
        {"index", {a.index ? std::to_string(*a.index) : "-", b.index ? std::to_string(*b.index) : "-"}},
    };
    for (const auto& [field, values] : fields) {
      const bool ok = values.first == values.second;
      failed |= !ok;
      std::printf("device %zu %-20s fast=%-42s nvml=%-42s %s\n", i, field, ("'" + values.first + "'").c_str(),
                  ("'" + values.second + "'").c_str(), ok ? "MATCH" : "MISMATCH");
    }
  }
  if (quick.answered_by != std::vector<std::string>{"procfs"})
    std::printf("note: the fast path did not answer on this host (see its attempt above): both columns are NVML's\n");
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "compare";
  if (mode == "compare") return compare();
  if (mode != "fast" && mode != "nvml") {
    std::fprintf(stderr, "usage: attnsel_probe_compare [compare|fast|nvml]\n");
    return 2;
  }
  double ms = 0;
  const ProbeReport r = probe(mode == "fast", &ms);
  for (const DeviceInfo& d : r.devices) std::printf("%s %s\n", text(d.compute_capability).c_str(), d.origin.c_str());
  return r.devices.empty() ? 3 : 0;
}
