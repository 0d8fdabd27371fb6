// The probe's sources (NVML, the CUDA driver, ROCm's sysfs) and what they share. Internal.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/device.hpp"
#include "attnsel/error.hpp"
#include "attnsel/probe.hpp"
#include "probe/driver_api.hpp"

namespace attnsel::probe {

// The variables the probe honours, read once on the caller's thread.
struct Environment {
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> hip_visible_devices;
  std::optional<std::string> rocr_visible_devices;
  std::optional<std::string> cuda_device_order;
};

// What the probe tried, recorded as it goes, so a caller that stops waiting can still say
// which step never returned.
class ProbeLog {
 public:
  void begin(std::string step);  // the call about to be made
  void add(std::string source, bool ok, std::string detail);
  void warn(std::string text);

  std::string current_step() const;
  std::vector<ProbeAttempt> attempts() const;
  std::vector<std::string> warnings() const;

  // Set by the caller that stopped waiting: a source checks it between devices and stops, so a
  // worker left behind allocates nothing more.
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  std::string current_;
  std::vector<ProbeAttempt> attempts_;
  std::vector<std::string> warnings_;
};

// A driver or sysfs is an input like any other: at most this many devices are read, whatever
// count it reports (a count of 1e8 is a broken or hostile library, not a machine).
inline constexpr std::size_t kMaxProbedDevices = 64;
// KFD topology nodes (CPUs and GPUs) and memory banks read per node.
inline constexpr std::size_t kMaxSysfsNodes = 256;
// sysfs `properties` and `name` files are a few hundred bytes; read at most this much of each.
inline constexpr std::size_t kMaxSysfsFileBytes = 64u << 10;

// Facts no real GPU reports (compute capability INT_MIN.0 or 99.99, gfx id 2^64-1) are refused
// like the same values given as --gpu: `device.invalid` says why, and the compute capability and
// arch are cleared so that nothing selects for them.
void validate_probed(DeviceInfo& device);

// The physical devices a CUDA_VISIBLE_DEVICES-style list selects, in the order the process
// numbers them, and one line saying so.
struct Visibility {
  std::vector<std::size_t> physical;
  std::string note;
};

// CUDA's rules: entries are indices or UUIDs ("GPU-..." or a unique prefix of one); the first
// invalid entry ends the list ("0,2,-1,1" selects 0 and 2); a repeated or ambiguous entry
// selects nothing. `uuids` has one entry per physical device ("" when unknown).
Visibility select_visible(std::string_view spec, const std::vector<std::string>& uuids);

// nullopt: NVML is unusable here (missing, failed to initialise), so try the CUDA driver.
std::optional<std::vector<DeviceInfo>> probe_nvml(const driver::NvmlApi& api, const Environment& env,
                                                  ProbeLog& log);
std::vector<DeviceInfo> probe_cuda_driver(const driver::CudaDriverApi& api, const Environment& env, ProbeLog& log);
// NVIDIA's CUDA numbering is fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; NVML and procfs
// list devices in PCI order. Warns when that can matter (the devices differ).
void warn_about_device_order(const std::vector<DeviceInfo>& devices, const Environment& env, ProbeLog& log);

// data/pci-ids.json: NVIDIA PCI device IDs -> compute capability, driver branch -> CUDA version.
struct PciIdTable {
  std::uint32_t vendor = 0;
  std::map<std::uint32_t, ComputeCapability> compute_capability;
  std::map<int, CudaVersion> cuda_by_branch;
};
Result<PciIdTable> parse_pci_ids(std::string_view json_text);
const PciIdTable& builtin_pci_ids();

// The fast path: /proc/driver/nvidia/{version,gpus/*/information} and /sys/bus/pci/devices/*/
// {vendor,device,class}, no driver library loaded. nullopt (with the reason in `log`) whenever it
// cannot answer every field NVML would, memory aside: no driver, an unknown driver branch or
// device ID, an excluded GPU, a MIG instance in CUDA_VISIBLE_DEVICES, a file that does not read.
std::optional<std::vector<DeviceInfo>> probe_nvidia_procfs(const std::string& procfs_root, const std::string& pci_root,
                                                           const PciIdTable& table, const Environment& env, ProbeLog& log);

std::vector<DeviceInfo> probe_rocm_sysfs(const std::string& nodes_dir, const Environment& env, ProbeLog& log);

}  // namespace attnsel::probe
