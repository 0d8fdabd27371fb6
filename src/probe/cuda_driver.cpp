// NVIDIA devices through libcuda, for hosts without NVML (Jetson, some containers). cuInit loads
// the driver but creates no context; libcuda applies CUDA_VISIBLE_DEVICES itself.
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "probe/loader.hpp"
#include "probe/sources.hpp"

namespace attnsel {
namespace driver {
namespace {

struct CodeName {
  CUresult code;
  const char* name;
  const char* meaning;  // nullptr: the name says it
};

constexpr CodeName kCudaCodes[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", nullptr},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", nullptr},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", nullptr},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", nullptr},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", nullptr},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "this libcuda is the toolkit's link stub, not the driver's (check LD_LIBRARY_PATH)"},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", nullptr},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is exclusive to another process"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "the driver sees no CUDA device (check CUDA_VISIBLE_DEVICES)"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", nullptr},
    {CUDA_ERROR_DEVICE_NOT_LICENSED, "CUDA_ERROR_DEVICE_NOT_LICENSED", "no vGPU license"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", nullptr},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", nullptr},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", nullptr},
    {CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY",
     "a driver daemon is not running (fabricmanager on NVSwitch systems)"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "libcuda and the kernel driver differ in version"},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "the forward-compatibility libcuda does not support this GPU"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", nullptr},
};

}  // namespace

CudaDriverApi load_cuda_driver() {
  CudaDriverApi api;
  void* library = dlopen(api.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    api.load_error = dl_error();
    return api;
  }
  bind_symbol(library, {"cuInit"}, api.cuInit);
  bind_symbol(library, {"cuDeviceGetCount"}, api.cuDeviceGetCount);
  bind_symbol(library, {"cuDeviceGet"}, api.cuDeviceGet);
  bind_symbol(library, {"cuDriverGetVersion"}, api.cuDriverGetVersion);
  bind_symbol(library, {"cuDeviceGetName"}, api.cuDeviceGetName);
  bind_symbol(library, {"cuDeviceTotalMem_v2"}, api.cuDeviceTotalMem_v2);
  bind_symbol(library, {"cuDeviceGetAttribute"}, api.cuDeviceGetAttribute);
  bind_symbol(library, {"cuDeviceGetPCIBusId"}, api.cuDeviceGetPCIBusId);
  bind_symbol(library, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, api.cuDeviceGetUuid);
  return api;
}

std::string missing_required(const CudaDriverApi& api) {
  std::string out;
  append_if_null(out, api.cuInit, "cuInit");
  append_if_null(out, api.cuDeviceGetCount, "cuDeviceGetCount");
  append_if_null(out, api.cuDeviceGet, "cuDeviceGet");
  return out;
}

std::string missing_optional(const CudaDriverApi& api) {
  std::string out;
  append_if_null(out, api.cuDriverGetVersion, "cuDriverGetVersion");
  append_if_null(out, api.cuDeviceGetName, "cuDeviceGetName");
  append_if_null(out, api.cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2");
  append_if_null(out, api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  append_if_null(out, api.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  append_if_null(out, api.cuDeviceGetUuid, "cuDeviceGetUuid");
  return out;
}

std::string describe_cuda(CUresult code) {
  for (const CodeName& known : kCudaCodes) {
    if (known.code != code) continue;
    if (known.meaning == nullptr) return fmt::format("{} ({})", known.name, code);
    return fmt::format("{} ({}): {}", known.name, code, known.meaning);
  }
  return fmt::format("CUDA error {}", code);
}

}  // namespace driver

namespace probe {

using namespace driver;  // the C names, as in NVIDIA's documentation

namespace {

// As nvidia-smi and CUDA_VISIBLE_DEVICES spell it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string format_uuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

struct DeviceCalls {
  ProbeLog& log;
  int ordinal;

  bool check(const char* call, CUresult rc) const {
    if (rc == CUDA_SUCCESS) return true;
    const std::string why = describe_cuda(rc);
    log.add(call, false, fmt::format("CUDA device {}: {}", ordinal, why));
    log.warn(fmt::format("CUDA device {}: {} failed: {}", ordinal, call, why));
    return false;
  }
};

}  // namespace

std::vector<DeviceInfo> probe_cuda_driver(const CudaDriverApi& api, const Environment& env, ProbeLog& log) {
  if (!api.load_error.empty()) {
    log.add(api.library, false, "not loaded: " + api.load_error);
    return {};
  }
  if (const std::string missing = missing_required(api); !missing.empty()) {
    log.add(api.library, false, "loaded, but lacks " + missing);
    return {};
  }
  const std::string lacks = missing_optional(api);
  log.add(api.library, true, lacks.empty() ? "loaded" : "loaded; lacks " + lacks);
  if (env.cuda_visible_devices) {
    log.add("CUDA_VISIBLE_DEVICES", true, fmt::format("\"{}\": applied by libcuda", *env.cuda_visible_devices));
  }

  // Answers before cuInit, and even when cuInit fails.
  std::optional<CudaVersion> cuda;
  if (api.cuDriverGetVersion != nullptr) {
    int version = 0;
    log.begin("cuDriverGetVersion");
    if (const CUresult rc = api.cuDriverGetVersion(&version); rc != CUDA_SUCCESS) {
      log.add("cuDriverGetVersion", false, describe_cuda(rc));
    } else if (version > 0) {
      cuda = CudaVersion{cuda_major(version), cuda_minor(version)};
    }
  }

  log.begin("cuInit");
  if (const CUresult rc = api.cuInit(0); rc != CUDA_SUCCESS) {
    log.add("cuInit", false, describe_cuda(rc));
    return {};
  }
  log.add("cuInit", true, "ok");

  int count = 0;
  log.begin("cuDeviceGetCount");
  if (const CUresult rc = api.cuDeviceGetCount(&count); rc != CUDA_SUCCESS) {
    log.add("cuDeviceGetCount", false, describe_cuda(rc));
    return {};
  }
  log.add("cuDeviceGetCount", true, fmt::format("{} {}", count, count == 1 ? "device" : "devices"));
  if (count > static_cast<int>(kMaxProbedDevices)) {
    log.warn(fmt::format("the CUDA driver reports {} devices; reading the first {} (no machine has more)", count, kMaxProbedDevices));
    count = static_cast<int>(kMaxProbedDevices);
  }

  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count && !log.cancelled(); ++ordinal) {
    const DeviceCalls calls{log, ordinal};
    CUdevice handle = 0;
    log.begin("cuDeviceGet");
    if (!calls.check("cuDeviceGet", api.cuDeviceGet(&handle, ordinal))) continue;

    DeviceInfo device;
    device.platform = Platform::cuda;
    device.origin = "CUDA driver";
    device.index = ordinal;
    device.cuda = cuda;

    if (api.cuDeviceGetName != nullptr) {
      char buffer[256] = {};
      log.begin("cuDeviceGetName");
      if (calls.check("cuDeviceGetName", api.cuDeviceGetName(buffer, sizeof buffer, handle))) {
        device.name = std::string(buffer, strnlen(buffer, sizeof buffer));
      }
    }
    if (api.cuDeviceGetAttribute != nullptr) {
      int major = 0;
      int minor = 0;
      log.begin("cuDeviceGetAttribute");
      if (calls.check("cuDeviceGetAttribute",
                      api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle)) &&
          calls.check("cuDeviceGetAttribute",
                      api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle))) {
        device.compute_capability = ComputeCapability{major, minor};
        device.arch = sm_name(*device.compute_capability);
      }
    }
    if (api.cuDeviceTotalMem_v2 != nullptr) {
      std::size_t bytes = 0;
      log.begin("cuDeviceTotalMem_v2");
      if (calls.check("cuDeviceTotalMem_v2", api.cuDeviceTotalMem_v2(&bytes, handle))) device.memory_bytes = bytes;
    }
    if (api.cuDeviceGetPCIBusId != nullptr) {
      char buffer[64] = {};
      log.begin("cuDeviceGetPCIBusId");
      if (calls.check("cuDeviceGetPCIBusId", api.cuDeviceGetPCIBusId(buffer, sizeof buffer, handle))) {
        device.pci_bus_id = std::string(buffer, strnlen(buffer, sizeof buffer));
      }
    }
    if (api.cuDeviceGetUuid != nullptr) {
      CUuuid uuid{};
      log.begin("cuDeviceGetUuid");
      if (calls.check("cuDeviceGetUuid", api.cuDeviceGetUuid(&uuid, handle))) device.uuid = format_uuid(uuid);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace probe
}  // namespace attnsel
