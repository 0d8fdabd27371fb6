// What selection needs to know about the hardware. Filled by the probe, by --gpu, or by a test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attnsel/types.hpp"

namespace attnsel {

struct DeviceInfo {
  Platform platform = Platform::cuda;
  std::optional<ComputeCapability> compute_capability;  // NVIDIA only
  std::optional<CudaVersion> cuda;                       // the CUDA version the driver (or user) gives
  std::string arch;    // "sm90", "gfx942", "ascend", "" when unknown
  std::string name;    // "NVIDIA H100 80GB HBM3", "H100" (catalog), "" when unknown

  // Where the facts came from, for people: "--gpu sm90", "NVML", "CUDA driver", "sysfs", "ATTNSEL_GPU".
  std::string origin;
  bool cuda_assumed = false;  // true when `cuda` was not given or probed but defaulted

  // Probe details (absent when the device comes from a name).
  std::optional<int> index;
  std::optional<std::uint64_t> memory_bytes;
  std::string driver_version;
  std::string pci_bus_id;
  std::string uuid;
  // Non-empty when the probe read facts no real GPU has (compute capability 99.99, gfx id 2^64-1):
  // why, for people. compute_capability and arch are then cleared; a caller should refuse to select
  // for this device and ask for --gpu.
  std::string invalid;
};

}  // namespace attnsel
