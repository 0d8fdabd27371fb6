// AMD devices from the KFD topology the amdgpu driver publishes in sysfs: no ROCm install needed.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/read_file.hpp"
#include "probe/sources.hpp"

namespace attnsel::probe {
namespace {

namespace fs = std::filesystem;

using Properties = std::map<std::string, std::uint64_t>;

// Lines of "key value" with unsigned values, as in KFD's `properties` files; nullopt with the
// reason when the file cannot be read (a FIFO, /dev/zero, more than kMaxSysfsFileBytes).
Result<Properties> read_properties(const fs::path& file) {
  auto text = detail::read_file_bounded(file.string(), kMaxSysfsFileBytes);
  if (!text) return text.error();
  Properties properties;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t value = 0;
    if (fields >> key >> value) properties[key] = value;
  }
  return properties;
}

std::uint64_t get(const Properties& properties, const std::string& key) {
  const auto it = properties.find(key);
  return it == properties.end() ? 0 : it->second;
}

std::string read_line(const fs::path& file) {
  auto text = detail::read_file_bounded(file.string(), kMaxSysfsFileBytes);
  if (!text) return "";
  std::string line = text->substr(0, text->find('\n'));
  if (line.size() > 256) line.resize(256);  // a GPU name, not a document
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

// gfx_target_version is major * 10000 + minor * 100 + stepping; LLVM spells minor and stepping
// in hex: 90402 -> gfx942, 90010 -> gfx90a, 110001 -> gfx1101.
std::string gfx_name(std::uint64_t version) {
  return fmt::format("gfx{}{:x}{:x}", version / 10000, (version / 100) % 100, version % 100);
}

// VRAM: the frame-buffer heaps (public and private) of the node's memory banks.
std::optional<std::uint64_t> vram_bytes(const fs::path& node) {
  std::error_code ec;
  std::uint64_t total = 0;
  bool any = false;
  std::size_t banks = 0;
  for (fs::directory_iterator it(node / "mem_banks", ec), end; !ec && it != end && ++banks <= kMaxSysfsNodes; it.increment(ec)) {
    const Result<Properties> bank = read_properties(it->path() / "properties");
    if (!bank) continue;
    const std::uint64_t heap = get(*bank, "heap_type");
    if (heap == 1 || heap == 2) {
      total += get(*bank, "size_in_bytes");
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

// location_id packs bus, device and function as the PCI spec's BDF: bus << 8 | device << 3 | function.
std::string pci_bus_id(const Properties& properties) {
  const std::uint64_t location = get(properties, "location_id");
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", get(properties, "domain"), (location >> 8) & 0xff,
                     (location >> 3) & 0x1f, location & 0x7);
}

}  // namespace

std::vector<DeviceInfo> probe_rocm_sysfs(const std::string& nodes_dir, const Environment& env, ProbeLog& log) {
  std::error_code ec;
  log.begin(nodes_dir);
  if (!fs::is_directory(nodes_dir, ec)) {
    log.add(nodes_dir, false, "not present (no amdgpu driver with KFD)");
    return {};
  }

  // Node directories are numbered; HIP numbers GPUs in node order.
  std::vector<std::pair<unsigned long, fs::path>> nodes;
  for (fs::directory_iterator it(nodes_dir, ec), end; !ec && it != end && !log.cancelled(); it.increment(ec)) {
    if (nodes.size() == kMaxSysfsNodes) {
      log.warn(fmt::format("{}: more than {} topology nodes; reading the first {}", nodes_dir, kMaxSysfsNodes, kMaxSysfsNodes));
      break;
    }
    const std::string name = it->path().filename().string();
    const bool numbered = !name.empty() && name.size() < 10 &&
                          std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!numbered) continue;
    nodes.emplace_back(std::stoul(name), it->path());
  }
  if (ec) {
    log.add(nodes_dir, false, "unreadable: " + ec.message());
    return {};
  }
  std::sort(nodes.begin(), nodes.end());

  std::vector<DeviceInfo> gpus;
  for (const auto& [id, node] : nodes) {
    if (log.cancelled() || gpus.size() == kMaxProbedDevices) break;
    const Result<Properties> properties = read_properties(node / "properties");
    if (!properties) {
      log.add((node / "properties").string(), false, "unreadable: " + properties.error().message);
      continue;
    }
    const std::uint64_t gfx = get(*properties, "gfx_target_version");
    if (gfx == 0) continue;  // a CPU node

    DeviceInfo device;
    device.platform = Platform::rocm;
    device.origin = "sysfs";
    device.arch = gfx_name(gfx);
    // Kernels that name the node after the IP-discovery path say nothing useful there.
    const std::string name = read_line(node / "name");
    device.name = name.empty() || name == "ip discovery" ? "AMD " + device.arch : name;
    device.memory_bytes = vram_bytes(node);
    if (properties->count("location_id") != 0) device.pci_bus_id = pci_bus_id(*properties);
    if (const std::uint64_t unique_id = get(*properties, "unique_id"); unique_id != 0) {
      device.uuid = fmt::format("GPU-{:016x}", unique_id);  // as ROCR_VISIBLE_DEVICES takes it
    }
    gpus.push_back(std::move(device));
  }
  log.add(nodes_dir, true,
          fmt::format("{} GPU {} among {} nodes", gpus.size(), gpus.size() == 1 ? "node" : "nodes", nodes.size()));

  // ROCr filters first; HIP then numbers what is left, reading HIP_VISIBLE_DEVICES or, failing
  // that, CUDA_VISIBLE_DEVICES.
  auto apply = [&log, &gpus](const char* variable, const std::string& spec) {
    std::vector<std::string> uuids;
    for (const DeviceInfo& gpu : gpus) uuids.push_back(gpu.uuid);
    Visibility selection = select_visible(spec, uuids);
    log.add(variable, true, fmt::format("\"{}\": {}", spec, selection.note));
    std::vector<DeviceInfo> kept;
    for (std::size_t physical : selection.physical) kept.push_back(gpus[physical]);
    gpus = std::move(kept);
  };
  if (env.rocr_visible_devices) apply("ROCR_VISIBLE_DEVICES", *env.rocr_visible_devices);
  if (env.hip_visible_devices) {
    apply("HIP_VISIBLE_DEVICES", *env.hip_visible_devices);
  } else if (env.cuda_visible_devices && !gpus.empty()) {
    apply("CUDA_VISIBLE_DEVICES", *env.cuda_visible_devices);
  }

  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  return gpus;
}

}  // namespace attnsel::probe
