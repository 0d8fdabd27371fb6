// NVIDIA devices without loading a driver library: the kernel driver's procfs files
// (/proc/driver/nvidia/version, /proc/driver/nvidia/gpus/<bus>/information), the PCI device ID in
// sysfs, and data/pci-ids.json for the compute capability. Each file is a few hundred bytes; the
// whole probe reads a handful of them. It answers only when it can answer every field NVML would
// (memory aside); anything unknown or unusual returns nullopt and NVML answers instead.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/read_file.hpp"
#include "matrix/embedded.hpp"
#include "matrix/json_reader.hpp"
#include "probe/sources.hpp"

namespace attnsel::probe {
namespace {

namespace fs = std::filesystem;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// "0x2330\n" -> 0x2330; nullopt for anything else.
std::optional<std::uint32_t> hex_value(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (!is_hex(text) || text.size() > 8) return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(std::string(text), nullptr, 16));
}

// A PCI address as the kernel writes it: "0000:18:00.0" (domain:bus:device.function).
struct PciAddress {
  std::uint32_t domain = 0, bus = 0, device = 0, function = 0;
  friend bool operator<(const PciAddress& a, const PciAddress& b) {
    return std::tie(a.domain, a.bus, a.device, a.function) < std::tie(b.domain, b.bus, b.device, b.function);
  }
};

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  text = trim(text);
  // dddd:bb:dd.f; domains may be wider than four digits (VMD), never narrower.
  const auto c1 = text.find(':');
  const auto c2 = text.find(':', c1 == std::string_view::npos ? c1 : c1 + 1);
  const auto dot = text.find('.', c2 == std::string_view::npos ? c2 : c2 + 1);
  if (c1 == std::string_view::npos || c2 == std::string_view::npos || dot == std::string_view::npos) return std::nullopt;
  const std::string_view domain = text.substr(0, c1), bus = text.substr(c1 + 1, c2 - c1 - 1),
                         device = text.substr(c2 + 1, dot - c2 - 1), function = text.substr(dot + 1);
  if (domain.size() < 4 || domain.size() > 8 || bus.size() != 2 || device.size() != 2 || function.size() != 1) return std::nullopt;
  if (!is_hex(domain) || !is_hex(bus) || !is_hex(device) || !is_hex(function)) return std::nullopt;
  PciAddress a;
  a.domain = *hex_value(domain);
  a.bus = *hex_value(bus);
  a.device = *hex_value(device);
  a.function = *hex_value(function);
  if (a.device > 0x1f || a.function > 7) return std::nullopt;
  return a;
}

// "Key:   value" lines, as in the driver's `information` file.
std::map<std::string, std::string, std::less<>> key_values(std::string_view text) {
  std::map<std::string, std::string, std::less<>> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out.emplace(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return out;
}

// The driver version from the first line of /proc/driver/nvidia/version:
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023" or
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (...)".
std::optional<std::string> driver_version_from(std::string_view text) {
  const std::string_view line = text.substr(0, text.find('\n'));
  if (line.rfind("NVRM version:", 0) != 0) return std::nullopt;
  std::string_view rest = line.substr(13);
  while (!rest.empty()) {
    rest = trim(rest);
    const std::string_view word = rest.substr(0, rest.find_first_of(" \t"));
    rest.remove_prefix(word.size());
    // Digits and dots, at least one dot, starting and ending with a digit: 535.104.05, 550.54.
    const bool version = word.size() >= 3 && word.size() <= 24 && std::isdigit(static_cast<unsigned char>(word.front())) &&
                         std::isdigit(static_cast<unsigned char>(word.back())) && word.find('.') != std::string_view::npos &&
                         word.find_first_not_of("0123456789.") == std::string_view::npos;
    if (version) return std::string(word);
  }
  return std::nullopt;
}

}  // namespace

// ---- data/pci-ids.json ----

const PciIdTable& builtin_pci_ids() {
  static const PciIdTable table = [] {
    auto loaded = parse_pci_ids(embedded::find("pci-ids.json"));
    return loaded ? std::move(*loaded) : PciIdTable{};  // tests load it strictly; a broken one cannot ship
  }();
  return table;
}

Result<PciIdTable> parse_pci_ids(std::string_view json_text) {
  const auto fail = [](const std::string& where, const std::string& message) {
    return Error{ErrorCode::invalid_matrix, message, "built-in:pci-ids.json#" + where, {}, {}};
  };
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("", "not a JSON object");
  PciIdTable table;
  if (!j.contains("vendor") || !j["vendor"].is_string()) return fail("/vendor", "expected the vendor ID as a hex string");
  const auto vendor = hex_value(j["vendor"].get<std::string>());
  if (!vendor) return fail("/vendor", "expected the vendor ID as a hex string");
  table.vendor = *vendor;
  if (!j.contains("families") || !j["families"].is_array()) return fail("/families", "expected an array");
  for (std::size_t f = 0; f < j["families"].size(); ++f) {
    const auto& family = j["families"][f];
    const std::string at = fmt::format("/families/{}", f);
    if (!family.is_object() || !family.contains("compute_capability") || !family["compute_capability"].is_string() ||
        !family.contains("devices") || !family["devices"].is_object())
      return fail(at, "expected {\"family\", \"compute_capability\", \"devices\"}");
    const auto cc = parse_version(family["compute_capability"].get<std::string>());
    if (!cc) return fail(at + "/compute_capability", "expected a compute capability like \"9.0\"");
    for (const auto& [id, name] : family["devices"].items()) {
      const auto device = hex_value(id);
      if (!device || id.size() != 4 || !name.is_string()) return fail(at + "/devices", fmt::format("\"{}\" is not a 4-digit device ID with a name", id));
      if (!table.compute_capability.emplace(*device, *cc).second)
        return fail(at + "/devices", fmt::format("device ID {} is listed twice", id));
    }
  }
  const auto& cuda = j.contains("cuda_by_driver_branch") ? j["cuda_by_driver_branch"] : nlohmann::json();
  if (!cuda.is_object() || !cuda.contains("branches") || !cuda["branches"].is_object())
    return fail("/cuda_by_driver_branch", "expected {\"branches\": {\"535\": \"12.2\", ...}}");
  for (const auto& [branch, version] : cuda["branches"].items()) {
    const auto v = version.is_string() ? parse_version(version.get<std::string>()) : std::nullopt;
    if (branch.empty() || branch.size() > 4 || branch.find_first_not_of("0123456789") != std::string::npos || !v)
      return fail("/cuda_by_driver_branch/branches", fmt::format("\"{}\" is not a driver branch with a CUDA version", branch));
    table.cuda_by_branch.emplace(std::stoi(branch), *v);
  }
  return table;
}

// ---- the fast path ----

std::optional<std::vector<DeviceInfo>> probe_nvidia_procfs(const std::string& procfs_root, const std::string& pci_root,
                                                           const PciIdTable& table, const Environment& env, ProbeLog& log) {
  const std::string source = procfs_root;
  const auto cannot = [&](const std::string& why) -> std::optional<std::vector<DeviceInfo>> {
    log.add(source, false, why + "; NVML answers");
    return std::nullopt;
  };
  log.begin(procfs_root + "/version");
  auto version_text = detail::read_file_bounded(procfs_root + "/version", kMaxSysfsFileBytes);
  if (!version_text) return cannot("no NVIDIA kernel driver (" + version_text.error().message + ")");
  const std::optional<std::string> driver = driver_version_from(*version_text);
  if (!driver) return cannot(fmt::format("{}/version names no driver version", procfs_root));
  const int branch = std::atoi(driver->c_str());
  const auto cuda = table.cuda_by_branch.find(branch);
  if (cuda == table.cuda_by_branch.end())
    return cannot(fmt::format("driver {} (branch {}) is not in data/pci-ids.json's CUDA table", *driver, branch));

  // One directory per GPU, named by its PCI address.
  std::vector<std::pair<PciAddress, std::string>> gpus;
  std::error_code ec;
  const std::string gpus_dir = procfs_root + "/gpus";
  for (fs::directory_iterator it(gpus_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (gpus.size() == kMaxProbedDevices) return cannot(fmt::format("more than {} GPUs in {}", kMaxProbedDevices, gpus_dir));
    const std::string name = it->path().filename().string();
    const auto address = parse_pci_address(name);
    if (!address) return cannot(fmt::format("{}/{} is not a PCI address", gpus_dir, detail::shorten(name, 64)));
    gpus.emplace_back(*address, name);
  }
  if (ec) return cannot(fmt::format("{} is unreadable: {}", gpus_dir, ec.message()));
  if (gpus.empty()) return cannot(fmt::format("{} lists no GPU", gpus_dir));
  std::sort(gpus.begin(), gpus.end());  // NVML numbers devices in PCI order

  std::vector<DeviceInfo> devices;
  std::vector<std::string> uuids;
  for (const auto& [address, name] : gpus) {
    if (log.cancelled()) return std::nullopt;
    const std::string information = gpus_dir + "/" + name + "/information";
    log.begin(information);
    auto text = detail::read_file_bounded(information, kMaxSysfsFileBytes);
    if (!text) return cannot(fmt::format("{}: {}", information, text.error().message));
    const auto fields = key_values(*text);
    const auto field = [&fields](std::string_view key) -> std::string {
      const auto it = fields.find(key);
      return it == fields.end() ? std::string() : it->second;
    };
    // A GPU the driver excluded is not one NVML or CUDA enumerates: leave such hosts to NVML.
    if (field("GPU Excluded") != "No") return cannot(fmt::format("{}: the GPU is excluded or says nothing about it", information));
    const std::string model = field("Model");
    const std::string uuid = field("GPU UUID");
    if (model.empty() || model.size() > 96) return cannot(fmt::format("{}: no model name", information));
    if (uuid.rfind("GPU-", 0) != 0 || uuid.size() > 80) return cannot(fmt::format("{}: no GPU UUID", information));
    const auto bus_location = parse_pci_address(field("Bus Location"));
    if (!bus_location || bus_location->bus != address.bus || bus_location->device != address.device ||
        bus_location->domain != address.domain || bus_location->function != address.function)
      return cannot(fmt::format("{}: the bus location differs from the directory's name", information));

    const std::string pci_dir = pci_root + "/" + name;
    log.begin(pci_dir + "/device");
    auto vendor_text = detail::read_file_bounded(pci_dir + "/vendor", kMaxSysfsFileBytes);
    auto device_text = detail::read_file_bounded(pci_dir + "/device", kMaxSysfsFileBytes);
    auto class_text = detail::read_file_bounded(pci_dir + "/class", kMaxSysfsFileBytes);
    if (!vendor_text || !device_text || !class_text) return cannot(fmt::format("{}: vendor, device or class unreadable", pci_dir));
    const auto vendor = hex_value(*vendor_text);
    const auto device_id = hex_value(*device_text);
    const auto pci_class = hex_value(*class_text);
    // Class 0x03xxxx: a display controller (VGA 0x0300, 3D 0x0302).
    if (!vendor || *vendor != table.vendor || !device_id || *device_id > 0xFFFF || !pci_class || (*pci_class >> 16) != 0x03)
      return cannot(fmt::format("{}: not an NVIDIA display controller", pci_dir));
    const auto cc = table.compute_capability.find(*device_id);
    if (cc == table.compute_capability.end())
      return cannot(fmt::format("device ID {:04x} ({}) is not in data/pci-ids.json", *device_id, detail::shorten(model, 64)));

    DeviceInfo d;
    d.platform = Platform::cuda;
    d.origin = "procfs";
    d.name = model;
    d.uuid = uuid;
    d.compute_capability = cc->second;
    d.arch = sm_name(cc->second);
    d.cuda = cuda->second;
    d.driver_version = *driver;
    d.pci_bus_id = fmt::format("{:08X}:{:02X}:{:02X}.{:X}", address.domain, address.bus, address.device, address.function);
    uuids.push_back(uuid);
    devices.push_back(std::move(d));
  }
  // UUIDs and indices are resolved below as libcuda resolves them; MIG instances are left to NVML.
  if (env.cuda_visible_devices && (env.cuda_visible_devices->find("MIG-") != std::string::npos ||
                                   env.cuda_visible_devices->find("mig-") != std::string::npos))
    return cannot("CUDA_VISIBLE_DEVICES names a MIG instance");
  log.add(source, true,
          fmt::format("{} {}; compute capability from data/pci-ids.json, CUDA {} from driver {}", devices.size(),
                      devices.size() == 1 ? "GPU" : "GPUs", to_string(cuda->second), *driver));

  if (env.cuda_visible_devices) {
    Visibility selection = select_visible(*env.cuda_visible_devices, uuids);
    log.add("CUDA_VISIBLE_DEVICES", true, fmt::format("\"{}\": {}", *env.cuda_visible_devices, selection.note));
    std::vector<DeviceInfo> kept;
    for (std::size_t physical : selection.physical) kept.push_back(devices[physical]);
    devices = std::move(kept);
  }
  for (std::size_t i = 0; i < devices.size(); ++i) devices[i].index = static_cast<int>(i);
  warn_about_device_order(devices, env, log);
  return devices;
}

}  // namespace attnsel::probe
