// NVIDIA devices through NVML: what nvidia-smi reports, without creating a CUDA context.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "probe/loader.hpp"
#include "probe/sources.hpp"

namespace attnsel {
namespace driver {
namespace {

struct CodeName {
  nvmlReturn_t code;
  const char* name;
  const char* meaning;  // nullptr: the name says it
};

constexpr CodeName kNvmlCodes[] = {
    {NVML_SUCCESS, "NVML_SUCCESS", nullptr},
    {NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED", nullptr},
    {NVML_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT", nullptr},
    {NVML_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED", "this device does not support the query"},
    {NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION", "no permission to open the NVIDIA device files"},
    {NVML_ERROR_ALREADY_INITIALIZED, "NVML_ERROR_ALREADY_INITIALIZED", nullptr},
    {NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND", nullptr},
    {NVML_ERROR_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE", nullptr},
    {NVML_ERROR_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER", "a power cable is not attached"},
    {NVML_ERROR_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED", "the NVIDIA kernel driver is not loaded"},
    {NVML_ERROR_TIMEOUT, "NVML_ERROR_TIMEOUT", nullptr},
    {NVML_ERROR_IRQ_ISSUE, "NVML_ERROR_IRQ_ISSUE", "the kernel detected an interrupt problem with a GPU"},
    {NVML_ERROR_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND", nullptr},
    {NVML_ERROR_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND", "this NVML is older than the call"},
    {NVML_ERROR_CORRUPTED_INFOROM, "NVML_ERROR_CORRUPTED_INFOROM", "the GPU's infoROM is corrupted"},
    {NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST", "the GPU fell off the bus"},
    {NVML_ERROR_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED", "the GPU needs a reset"},
    {NVML_ERROR_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM", "the operating system or a cgroup blocked the GPU"},
    {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
     "libnvidia-ml and the kernel driver differ in version (reboot or reload the driver after an upgrade)"},
    {NVML_ERROR_IN_USE, "NVML_ERROR_IN_USE", nullptr},
    {NVML_ERROR_MEMORY, "NVML_ERROR_MEMORY", nullptr},
    {NVML_ERROR_NO_DATA, "NVML_ERROR_NO_DATA", nullptr},
    {NVML_ERROR_INSUFFICIENT_RESOURCES, "NVML_ERROR_INSUFFICIENT_RESOURCES", nullptr},
    {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", nullptr},
    {NVML_ERROR_DEPRECATED, "NVML_ERROR_DEPRECATED", nullptr},
    {NVML_ERROR_NOT_READY, "NVML_ERROR_NOT_READY", nullptr},
    {NVML_ERROR_GPU_NOT_FOUND, "NVML_ERROR_GPU_NOT_FOUND", nullptr},
    {NVML_ERROR_INVALID_STATE, "NVML_ERROR_INVALID_STATE", nullptr},
    {NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN", nullptr},
};

}  // namespace

NvmlApi load_nvml() {
  NvmlApi api;
  void* library = dlopen(api.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    api.load_error = dl_error();
    return api;
  }
  bind_symbol(library, {"nvmlInit_v2"}, api.nvmlInit_v2);
  bind_symbol(library, {"nvmlShutdown"}, api.nvmlShutdown);
  bind_symbol(library, {"nvmlDeviceGetCount_v2"}, api.nvmlDeviceGetCount_v2);
  bind_symbol(library, {"nvmlDeviceGetHandleByIndex_v2"}, api.nvmlDeviceGetHandleByIndex_v2);
  bind_symbol(library, {"nvmlSystemGetDriverVersion"}, api.nvmlSystemGetDriverVersion);
  bind_symbol(library, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
       api.nvmlSystemGetCudaDriverVersion_v2);
  bind_symbol(library, {"nvmlDeviceGetName"}, api.nvmlDeviceGetName);
  bind_symbol(library, {"nvmlDeviceGetUUID"}, api.nvmlDeviceGetUUID);
  bind_symbol(library, {"nvmlDeviceGetMemoryInfo"}, api.nvmlDeviceGetMemoryInfo);
  bind_symbol(library, {"nvmlDeviceGetCudaComputeCapability"}, api.nvmlDeviceGetCudaComputeCapability);
  bind_symbol(library, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, api.nvmlDeviceGetPciInfo);
  return api;
}

std::string missing_required(const NvmlApi& api) {
  std::string out;
  append_if_null(out, api.nvmlInit_v2, "nvmlInit_v2");
  append_if_null(out, api.nvmlShutdown, "nvmlShutdown");
  append_if_null(out, api.nvmlDeviceGetCount_v2, "nvmlDeviceGetCount_v2");
  append_if_null(out, api.nvmlDeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  return out;
}

std::string missing_optional(const NvmlApi& api) {
  std::string out;
  append_if_null(out, api.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  append_if_null(out, api.nvmlSystemGetCudaDriverVersion_v2, "nvmlSystemGetCudaDriverVersion_v2");
  append_if_null(out, api.nvmlDeviceGetName, "nvmlDeviceGetName");
  append_if_null(out, api.nvmlDeviceGetUUID, "nvmlDeviceGetUUID");
  append_if_null(out, api.nvmlDeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
  append_if_null(out, api.nvmlDeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability");
  append_if_null(out, api.nvmlDeviceGetPciInfo, "nvmlDeviceGetPciInfo");
  return out;
}

std::string describe_nvml(nvmlReturn_t code) {
  for (const CodeName& known : kNvmlCodes) {
    if (known.code != code) continue;
    if (known.meaning == nullptr) return fmt::format("{} ({})", known.name, code);
    return fmt::format("{} ({}): {}", known.name, code, known.meaning);
  }
  return fmt::format("NVML error {}", code);
}

}  // namespace driver

namespace probe {

using namespace driver;  // the C names, as in NVIDIA's documentation

namespace {

// NVML fills fixed buffers; never trust the terminator.
std::string from_buffer(const char* buffer, std::size_t size) { return std::string(buffer, strnlen(buffer, size)); }

// A failed call on one visible device: recorded as an attempt and as a warning.
struct DeviceCalls {
  ProbeLog& log;
  unsigned physical;  // NVML's index

  bool check(const char* call, nvmlReturn_t rc) const {
    if (rc == NVML_SUCCESS) return true;
    const std::string why = describe_nvml(rc);
    log.add(call, false, fmt::format("NVML device {}: {}", physical, why));
    log.warn(fmt::format("NVML device {}: {} failed: {}", physical, call, why));
    return false;
  }
};

}  // namespace

std::optional<std::vector<DeviceInfo>> probe_nvml(const NvmlApi& api, const Environment& env, ProbeLog& log) {
  if (!api.load_error.empty()) {
    log.add(api.library, false, "not loaded: " + api.load_error);
    return std::nullopt;
  }
  if (const std::string missing = missing_required(api); !missing.empty()) {
    log.add(api.library, false, "loaded, but lacks " + missing);
    return std::nullopt;
  }
  const std::string lacks = missing_optional(api);
  log.add(api.library, true, lacks.empty() ? "loaded" : "loaded; lacks " + lacks);

  // NVML's init/shutdown reference count is not safe against concurrent probes from one process
  // (ThreadSanitizer reports a race inside libnvidia-ml): one probe at a time.
  static std::mutex nvml_mutex;
  std::lock_guard<std::mutex> one_at_a_time(nvml_mutex);
  log.begin("nvmlInit_v2");
  if (const nvmlReturn_t rc = api.nvmlInit_v2(); rc != NVML_SUCCESS) {
    log.add("nvmlInit_v2", false, describe_nvml(rc));
    return std::nullopt;
  }
  log.add("nvmlInit_v2", true, "ok");
  struct Shutdown {
    const NvmlApi& api;
    ~Shutdown() { api.nvmlShutdown(); }
  } shutdown{api};

  std::string driver_version;
  if (api.nvmlSystemGetDriverVersion != nullptr) {
    char buffer[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    log.begin("nvmlSystemGetDriverVersion");
    if (const nvmlReturn_t rc = api.nvmlSystemGetDriverVersion(buffer, sizeof buffer); rc == NVML_SUCCESS) {
      driver_version = from_buffer(buffer, sizeof buffer);
    } else {
      log.add("nvmlSystemGetDriverVersion", false, describe_nvml(rc));
    }
  }

  std::optional<CudaVersion> cuda;
  if (api.nvmlSystemGetCudaDriverVersion_v2 != nullptr) {
    int version = 0;
    log.begin("nvmlSystemGetCudaDriverVersion_v2");
    if (const nvmlReturn_t rc = api.nvmlSystemGetCudaDriverVersion_v2(&version); rc != NVML_SUCCESS) {
      log.add("nvmlSystemGetCudaDriverVersion_v2", false, describe_nvml(rc));
    } else if (version > 0) {
      cuda = CudaVersion{cuda_major(version), cuda_minor(version)};
    }
  }

  unsigned count = 0;
  log.begin("nvmlDeviceGetCount_v2");
  if (const nvmlReturn_t rc = api.nvmlDeviceGetCount_v2(&count); rc != NVML_SUCCESS) {
    log.add("nvmlDeviceGetCount_v2", false, describe_nvml(rc));
    return std::nullopt;
  }
  log.add("nvmlDeviceGetCount_v2", true, fmt::format("{} {}", count, count == 1 ? "device" : "devices"));
  if (count > kMaxProbedDevices) {
    log.warn(fmt::format("NVML reports {} devices; reading the first {} (no machine has more)", count, kMaxProbedDevices));
    count = static_cast<unsigned>(kMaxProbedDevices);
  }

  // Every physical device's handle and UUID first: CUDA_VISIBLE_DEVICES may name devices by UUID.
  std::vector<nvmlDevice_t> handles(count, nullptr);
  std::vector<nvmlReturn_t> handle_errors(count, NVML_SUCCESS);
  std::vector<std::string> uuids(count);
  for (unsigned i = 0; i < count && !log.cancelled(); ++i) {
    log.begin("nvmlDeviceGetHandleByIndex_v2");
    handle_errors[i] = api.nvmlDeviceGetHandleByIndex_v2(i, &handles[i]);
    if (handle_errors[i] != NVML_SUCCESS) {
      handles[i] = nullptr;
      log.add("nvmlDeviceGetHandleByIndex_v2", false, fmt::format("NVML device {}: {}", i, describe_nvml(handle_errors[i])));
      continue;
    }
    if (api.nvmlDeviceGetUUID != nullptr) {
      char buffer[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      log.begin("nvmlDeviceGetUUID");
      if (api.nvmlDeviceGetUUID(handles[i], buffer, sizeof buffer) == NVML_SUCCESS) {
        uuids[i] = from_buffer(buffer, sizeof buffer);
      }
    }
  }

  std::vector<std::size_t> visible;
  for (std::size_t i = 0; i < count; ++i) visible.push_back(i);
  if (env.cuda_visible_devices) {
    Visibility selection = select_visible(*env.cuda_visible_devices, uuids);
    log.add("CUDA_VISIBLE_DEVICES", true, fmt::format("\"{}\": {}", *env.cuda_visible_devices, selection.note));
    visible = std::move(selection.physical);
  }

  std::vector<DeviceInfo> devices;
  for (std::size_t position = 0; position < visible.size() && !log.cancelled(); ++position) {
    const auto physical = static_cast<unsigned>(visible[position]);
    if (handles[physical] == nullptr) {
      log.warn(fmt::format("NVML device {}: no handle: {}", physical, describe_nvml(handle_errors[physical])));
      continue;
    }
    const nvmlDevice_t handle = handles[physical];
    const DeviceCalls calls{log, physical};

    DeviceInfo device;
    device.platform = Platform::cuda;
    device.origin = "NVML";
    device.index = static_cast<int>(position);
    device.driver_version = driver_version;
    device.cuda = cuda;
    device.uuid = uuids[physical];

    if (api.nvmlDeviceGetName != nullptr) {
      char buffer[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
      log.begin("nvmlDeviceGetName");
      if (calls.check("nvmlDeviceGetName", api.nvmlDeviceGetName(handle, buffer, sizeof buffer))) {
        device.name = from_buffer(buffer, sizeof buffer);
      }
    }
    if (api.nvmlDeviceGetCudaComputeCapability != nullptr) {
      int major = 0;
      int minor = 0;
      log.begin("nvmlDeviceGetCudaComputeCapability");
      if (calls.check("nvmlDeviceGetCudaComputeCapability",
                      api.nvmlDeviceGetCudaComputeCapability(handle, &major, &minor))) {
        device.compute_capability = ComputeCapability{major, minor};
        device.arch = sm_name(*device.compute_capability);
      }
    }
    if (api.nvmlDeviceGetMemoryInfo != nullptr) {
      nvmlMemory_t memory{};
      log.begin("nvmlDeviceGetMemoryInfo");
      if (calls.check("nvmlDeviceGetMemoryInfo", api.nvmlDeviceGetMemoryInfo(handle, &memory))) {
        device.memory_bytes = memory.total;
      }
    }
    if (api.nvmlDeviceGetPciInfo != nullptr) {
      nvmlPciInfo_t pci{};
      log.begin("nvmlDeviceGetPciInfo");
      if (calls.check("nvmlDeviceGetPciInfo", api.nvmlDeviceGetPciInfo(handle, &pci))) {
        device.pci_bus_id = from_buffer(pci.busId, sizeof pci.busId);
      }
    }
    devices.push_back(std::move(device));
  }

  warn_about_device_order(devices, env, log);
  return devices;
}

}  // namespace probe
}  // namespace attnsel
