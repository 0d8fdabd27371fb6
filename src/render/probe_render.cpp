// Renders a ProbeReport: the data is built by the probe, this file only lays it out.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/render_probe.hpp"
#include "attnsel/types.hpp"
#include "core/json_text.hpp"
#include "render/envelope.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

std::string vendor_of(Platform platform) {
  switch (platform) {
    case Platform::cuda: return "nvidia";
    case Platform::rocm: return "amd";
    default: return std::string(name_of(platform));
  }
}

std::string paint(const std::string& text, bool color, fmt::text_style style) {
  return color ? fmt::format(style, "{}", text) : text;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

// One table row per device; columns are as wide as their widest cell.
std::string device_table(const std::vector<DeviceInfo>& devices, bool color) {
  constexpr std::size_t kColumns = 9;
  using Row = std::array<std::string, kColumns>;
  std::vector<Row> rows;
  rows.push_back(Row{"GPU", "Name", "Arch", "CC", "Memory", "Driver", "CUDA", "PCI bus id", "Source"});
  for (const DeviceInfo& d : devices) {
    rows.push_back(Row{
        d.index ? std::to_string(*d.index) : "-",
        or_dash(d.name),
        or_dash(d.arch),
        d.compute_capability ? to_string(*d.compute_capability) : "-",
        d.memory_bytes ? fmt::format("{} MiB", *d.memory_bytes / kMiB) : "-",
        or_dash(d.driver_version),
        d.cuda ? to_string(*d.cuda) : "-",
        or_dash(d.pci_bus_id),
        or_dash(d.origin),
    });
  }
  std::array<std::size_t, kColumns> width{};
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }

  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < kColumns; ++c) {
      const bool last = c + 1 == kColumns;
      const std::string cell = last ? rows[r][c] : fmt::format("{:<{}}  ", rows[r][c], width[c]);
      line += r == 0 ? paint(cell, color, fmt::emphasis::bold) : cell;
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::ordered_json null_if_empty(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}

nlohmann::ordered_json device_json(const DeviceInfo& d) {
  nlohmann::ordered_json j;
  j["index"] = d.index ? nlohmann::ordered_json(*d.index) : nlohmann::ordered_json(nullptr);
  j["name"] = null_if_empty(d.name);
  j["vendor"] = vendor_of(d.platform);
  j["platform"] = std::string(name_of(d.platform));
  j["compute_capability"] = d.compute_capability ? nlohmann::ordered_json(to_string(*d.compute_capability)) : nlohmann::ordered_json(nullptr);
  j["arch"] = null_if_empty(d.arch);
  j["memory_bytes"] = d.memory_bytes ? nlohmann::ordered_json(*d.memory_bytes) : nlohmann::ordered_json(nullptr);
  j["memory_mib"] = d.memory_bytes ? nlohmann::ordered_json(*d.memory_bytes / kMiB) : nlohmann::ordered_json(nullptr);
  j["driver_version"] = null_if_empty(d.driver_version);
  j["cuda_driver_version"] = d.cuda ? nlohmann::ordered_json(to_string(*d.cuda)) : nlohmann::ordered_json(nullptr);
  j["pci_bus_id"] = null_if_empty(d.pci_bus_id);
  j["uuid"] = null_if_empty(d.uuid);
  j["source"] = null_if_empty(d.origin);
  return j;
}

}  // namespace

std::string render_probe_text(const ProbeReport& report, bool color) {
  const fmt::text_style red = fmt::fg(fmt::terminal_color::red);
  const fmt::text_style green = fmt::fg(fmt::terminal_color::green);
  const fmt::text_style yellow = fmt::fg(fmt::terminal_color::yellow);

  std::string out;
  if (!report.devices.empty()) {
    out += device_table(report.devices, color);
    for (const std::string& warning : report.warnings) out += paint("warning: ", color, yellow) + warning + "\n";
    if (report.timed_out && !report.attempts.empty()) {
      const ProbeAttempt& hung = report.attempts.back();
      out += paint("warning: ", color, yellow) + fmt::format("the probe timed out at {}: {}\n", hung.source, hung.detail);
    }
    return detail::terminal_safe(out, color);  // a driver's name buffer may hold any bytes
  }

  out += paint(report.timed_out ? "No GPU found: the probe timed out." : "No GPU found.", color, fmt::emphasis::bold);
  out += " Tried:\n";
  std::size_t width = 0;
  for (const ProbeAttempt& a : report.attempts) width = std::max(width, a.source.size());
  for (const ProbeAttempt& a : report.attempts) {
    out += "  " + (a.ok ? paint("ok  ", color, green) : paint("fail", color, red));
    out += fmt::format("  {:<{}}  {}\n", a.source, width, a.detail);
  }
  for (const std::string& warning : report.warnings) out += paint("warning: ", color, yellow) + warning + "\n";
  return detail::terminal_safe(out, color);
}

std::string probe_to_json(const ProbeReport& report, int indent) {
  nlohmann::ordered_json j;
  j["devices"] = nlohmann::ordered_json::array();
  for (const DeviceInfo& device : report.devices) j["devices"].push_back(device_json(device));
  j["attempts"] = nlohmann::ordered_json::array();
  for (const ProbeAttempt& a : report.attempts) {
    j["attempts"].push_back({{"source", a.source}, {"ok", a.ok}, {"detail", a.detail}});
  }
  j["answered_by"] = report.answered_by;
  j["warnings"] = report.warnings;
  j["timed_out"] = report.timed_out;
  // Replace, don't throw, on bytes that are not UTF-8 (a driver's name buffer could hold any).
  return detail::envelope_text("probe", std::move(j), indent);
}

}  // namespace attnsel
