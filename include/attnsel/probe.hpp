// Finds the GPUs this process can see: NVML, else the CUDA driver (both through dlopen, no CUDA
// toolkit needed, no CUDA context created), and ROCm's KFD topology in sysfs.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/device.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

namespace driver {
struct NvmlApi;        // src/probe/driver_api.hpp
struct CudaDriverApi;  // src/probe/driver_api.hpp
}  // namespace driver

// One thing the probe tried, for people: {"libnvidia-ml.so.1", false, "not found: ..."},
// {"nvmlInit_v2", false, "NVML_ERROR_DRIVER_NOT_LOADED (9): ..."}.
struct ProbeAttempt {
  std::string source;
  bool ok = false;
  std::string detail;
};

struct ProbeReport {
  // NVIDIA devices first (index as this process numbers them, after CUDA_VISIBLE_DEVICES),
  // then AMD ones (after ROCR_/HIP_VISIBLE_DEVICES). Indices count per platform.
  std::vector<DeviceInfo> devices;
  std::vector<ProbeAttempt> attempts;  // in order, successes too
  // The sources whose devices are listed, in order: "procfs" (the fast path), "NVML", "CUDA driver", "sysfs".
  std::vector<std::string> answered_by;
  std::vector<std::string> warnings;   // devices found but something is off (a failed call, an ordering caveat)
  bool timed_out = false;              // the probe gave up waiting; `attempts` names the step that hung
};

struct ProbeOptions {
  // Seams for tests; null means dlopen the real library.
  const driver::NvmlApi* nvml = nullptr;
  const driver::CudaDriverApi* cuda_driver = nullptr;

  // The fast path for NVIDIA GPUs: the kernel driver's procfs files and the PCI device ID in sysfs,
  // mapped to a compute capability by data/pci-ids.json, without loading NVML (whose nvmlInit is
  // nearly all of a probe's time). It answers every field but memory_bytes, and only when it can
  // answer all of them as NVML would; otherwise (no driver, an unknown device ID or driver branch,
  // a MIG instance in CUDA_VISIBLE_DEVICES ...) NVML answers as without it. `attempts` says which.
  bool fast_path = false;
  std::string nvidia_procfs_root = "/proc/driver/nvidia";  // version, gpus/<pci address>/information
  std::string pci_devices_root = "/sys/bus/pci/devices";   // <pci address>/{vendor,device,class}

  // ROCm's KFD topology: one directory per node, each with a `properties` file.
  std::string sysfs_root = "/sys/class/kfd/kfd/topology/nodes";

  // Reads CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES;
  // empty means the process environment. Called on the caller's thread only.
  std::function<std::optional<std::string>(const std::string& name)> getenv;

  // The probe runs on a worker thread; past this the caller gets the devices of the sources
  // that finished and the attempts so far.
  std::chrono::milliseconds timeout{5000};
};

// Never throws and never waits longer than options.timeout (a hung driver call is left behind
// on a detached thread). An empty `devices` is not an error here: the caller decides.
ATTNSEL_API ProbeReport probe_devices(const ProbeOptions& options = {});

}  // namespace attnsel
