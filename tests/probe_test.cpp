// The probe through its seam: fake NVML and CUDA driver tables, fake sysfs trees, a fake
// environment. Runs on machines without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/probe.hpp"
#include "attnsel/render_probe.hpp"
#include "matrix/embedded.hpp"
#include "probe/driver_api.hpp"
#include "probe/sources.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif

namespace attnsel {
namespace {

using namespace driver;
using Env = std::map<std::string, std::string>;

const std::string kSysfs = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/sysfs/";
const std::string kNoSysfs = kSysfs + "absent/nodes";

// ---- a fake host: the GPUs, and which calls fail ----

struct FakeGpu {
  std::string name;
  std::string uuid;
  std::string bus_id;
  int major = 0;
  int minor = 0;
  unsigned long long memory = 0;
};

struct FakeHost {
  int init_rc = 0;
  int count_rc = 0;
  std::string driver_version = "550.54.15";
  int cuda_version = 12040;
  std::vector<FakeGpu> gpus;
  std::map<std::pair<std::string, unsigned>, int> failures;  // (call, physical index) -> code
  int shutdowns = 0;
  std::optional<unsigned> reported_count;  // what nvmlDeviceGetCount_v2 says, when not gpus.size()

  int fails(const std::string& call, unsigned index) const {
    const auto it = failures.find({call, index});
    return it == failures.end() ? 0 : it->second;
  }
};

FakeHost g_host;  // reset by every test through Fixture

const FakeGpu kH100{"NVIDIA H100 80GB HBM3", "GPU-3f1a2b4c-0000-1111-2222-333344445555", "00000000:19:00.0", 9, 0,
                    85520809984ULL};
const FakeGpu kA100{"NVIDIA A100-SXM4-80GB", "GPU-7e6d5c4b-aaaa-bbbb-cccc-ddddeeeeffff", "00000000:3B:00.0", 8, 0,
                    85899345920ULL};
const FakeGpu kL40S{"NVIDIA L40S", "GPU-bbcc0000-0000-0000-0000-000000000003", "00000000:5D:00.0", 8, 9,
                    48305799168ULL};
const FakeGpu kB200{"NVIDIA B200", "GPU-bbdd0000-0000-0000-0000-000000000004", "00000000:9A:00.0", 10, 0,
                    191514279936ULL};

// ---- fake NVML ----

nvmlDevice_t handle_of(unsigned index) { return reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1); }
unsigned index_of(nvmlDevice_t handle) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(handle) - 1); }

void copy_out(const std::string& text, char* buffer, unsigned length) {
  std::strncpy(buffer, text.c_str(), length - 1);
  buffer[length - 1] = '\0';
}

nvmlReturn_t fake_nvml_init() { return g_host.init_rc; }
nvmlReturn_t fake_nvml_shutdown() {
  ++g_host.shutdowns;
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_count(unsigned* count) {
  if (g_host.count_rc != 0) return g_host.count_rc;
  *count = g_host.reported_count ? *g_host.reported_count : static_cast<unsigned>(g_host.gpus.size());
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_handle(unsigned index, nvmlDevice_t* device) {
  if (index >= g_host.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = g_host.fails("handle", index)) return rc;
  *device = handle_of(index);
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_driver_version(char* buffer, unsigned length) {
  copy_out(g_host.driver_version, buffer, length);
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_cuda_version(int* version) {
  *version = g_host.cuda_version;
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_name(nvmlDevice_t device, char* buffer, unsigned length) {
  if (int rc = g_host.fails("name", index_of(device))) return rc;
  copy_out(g_host.gpus.at(index_of(device)).name, buffer, length);
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_uuid(nvmlDevice_t device, char* buffer, unsigned length) {
  copy_out(g_host.gpus.at(index_of(device)).uuid, buffer, length);
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_memory(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (int rc = g_host.fails("memory", index_of(device))) return rc;
  memory->total = g_host.gpus.at(index_of(device)).memory;
  memory->free = memory->total / 2;
  memory->used = memory->total - memory->free;
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_cc(nvmlDevice_t device, int* major, int* minor) {
  if (int rc = g_host.fails("cc", index_of(device))) return rc;
  *major = g_host.gpus.at(index_of(device)).major;
  *minor = g_host.gpus.at(index_of(device)).minor;
  return NVML_SUCCESS;
}
nvmlReturn_t fake_nvml_pci(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  copy_out(g_host.gpus.at(index_of(device)).bus_id, pci->busId, sizeof pci->busId);
  return NVML_SUCCESS;
}

NvmlApi fake_nvml() {
  NvmlApi api;
  api.library = "libnvidia-ml.so.1";
  api.nvmlInit_v2 = fake_nvml_init;
  api.nvmlShutdown = fake_nvml_shutdown;
  api.nvmlDeviceGetCount_v2 = fake_nvml_count;
  api.nvmlDeviceGetHandleByIndex_v2 = fake_nvml_handle;
  api.nvmlSystemGetDriverVersion = fake_nvml_driver_version;
  api.nvmlSystemGetCudaDriverVersion_v2 = fake_nvml_cuda_version;
  api.nvmlDeviceGetName = fake_nvml_name;
  api.nvmlDeviceGetUUID = fake_nvml_uuid;
  api.nvmlDeviceGetMemoryInfo = fake_nvml_memory;
  api.nvmlDeviceGetCudaComputeCapability = fake_nvml_cc;
  api.nvmlDeviceGetPciInfo = fake_nvml_pci;
  return api;
}

NvmlApi missing_nvml() {
  NvmlApi api;
  api.load_error = "libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
  return api;
}

// ---- fake CUDA driver (its own host: NVML and libcuda never run together in these tests) ----

FakeHost g_cuda;
constexpr CUdevice kHandleBase = 100;  // cuDeviceGet's handle differs from the ordinal on purpose

CUresult fake_cu_init(unsigned flags) { return flags == 0 ? g_cuda.init_rc : CUDA_ERROR_INVALID_VALUE; }
CUresult fake_cu_driver_version(int* version) {
  *version = g_cuda.cuda_version;
  return CUDA_SUCCESS;
}
CUresult fake_cu_count(int* count) {
  if (g_cuda.count_rc != 0) return g_cuda.count_rc;
  *count = static_cast<int>(g_cuda.gpus.size());
  return CUDA_SUCCESS;
}
CUresult fake_cu_get(CUdevice* device, int ordinal) {
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= g_cuda.gpus.size()) return CUDA_ERROR_INVALID_DEVICE;
  *device = kHandleBase + ordinal;
  return CUDA_SUCCESS;
}
const FakeGpu* cuda_gpu(CUdevice device) {
  const int ordinal = device - kHandleBase;
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= g_cuda.gpus.size()) return nullptr;
  return &g_cuda.gpus[static_cast<std::size_t>(ordinal)];
}
CUresult fake_cu_name(char* buffer, int length, CUdevice device) {
  const FakeGpu* gpu = cuda_gpu(device);
  if (gpu == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  copy_out(gpu->name, buffer, static_cast<unsigned>(length));
  return CUDA_SUCCESS;
}
CUresult fake_cu_memory(std::size_t* bytes, CUdevice device) {
  const FakeGpu* gpu = cuda_gpu(device);
  if (gpu == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = gpu->memory;
  return CUDA_SUCCESS;
}
CUresult fake_cu_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  const FakeGpu* gpu = cuda_gpu(device);
  if (gpu == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (int rc = g_cuda.fails("attribute", static_cast<unsigned>(device - kHandleBase))) return rc;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *value = gpu->major;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *value = gpu->minor;
  else return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
CUresult fake_cu_pci(char* buffer, int length, CUdevice device) {
  const FakeGpu* gpu = cuda_gpu(device);
  if (gpu == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  copy_out(gpu->bus_id, buffer, static_cast<unsigned>(length));
  return CUDA_SUCCESS;
}
CUresult fake_cu_uuid(CUuuid* uuid, CUdevice device) {
  if (cuda_gpu(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xa0 + i);
  return CUDA_SUCCESS;
}

CudaDriverApi fake_cuda() {
  CudaDriverApi api;
  api.cuInit = fake_cu_init;
  api.cuDriverGetVersion = fake_cu_driver_version;
  api.cuDeviceGetCount = fake_cu_count;
  api.cuDeviceGet = fake_cu_get;
  api.cuDeviceGetName = fake_cu_name;
  api.cuDeviceTotalMem_v2 = fake_cu_memory;
  api.cuDeviceGetAttribute = fake_cu_attribute;
  api.cuDeviceGetPCIBusId = fake_cu_pci;
  api.cuDeviceGetUuid = fake_cu_uuid;
  return api;
}

CudaDriverApi missing_cuda() {
  CudaDriverApi api;
  api.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  return api;
}

// ---- helpers ----

class Probe : public ::testing::Test {
 protected:
  void SetUp() override {
    g_host = FakeHost{};
    g_cuda = FakeHost{};
  }

  ProbeReport run(const NvmlApi& nvml, const CudaDriverApi& cuda, const Env& env = {},
                  const std::string& sysfs = kNoSysfs) {
    ProbeOptions options;
    options.nvml = &nvml;
    options.cuda_driver = &cuda;
    options.sysfs_root = sysfs;
    options.getenv = [env](const std::string& name) -> std::optional<std::string> {
      const auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return probe_devices(options);
  }
};

const ProbeAttempt* find_attempt(const ProbeReport& report, const std::string& source) {
  for (const ProbeAttempt& attempt : report.attempts) {
    if (attempt.source == source) return &attempt;
  }
  return nullptr;
}

std::vector<std::string> sources(const ProbeReport& report) {
  std::vector<std::string> out;
  for (const ProbeAttempt& attempt : report.attempts) out.push_back(attempt.source);
  return out;
}

std::vector<std::string> names(const ProbeReport& report) {
  std::vector<std::string> out;
  for (const DeviceInfo& device : report.devices) out.push_back(device.name);
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The first line of `text` that contains `part`, or "".
std::string line_with(const std::string& text, const std::string& part) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (contains(line, part)) return line;
    start = end + 1;
  }
  return "";
}

// ---- no library, failures, fallbacks ----

TEST_F(Probe, NothingInstalledListsEveryAttempt) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  EXPECT_TRUE(report.devices.empty());
  EXPECT_FALSE(report.timed_out);
  ASSERT_EQ(report.attempts.size(), 3u);
  EXPECT_EQ(report.attempts[0].source, "libnvidia-ml.so.1");
  EXPECT_FALSE(report.attempts[0].ok);
  EXPECT_EQ(report.attempts[0].detail,
            "not loaded: libnvidia-ml.so.1: cannot open shared object file: No such file or directory");
  EXPECT_EQ(report.attempts[1].source, "libcuda.so.1");
  EXPECT_FALSE(report.attempts[1].ok);
  EXPECT_TRUE(contains(report.attempts[1].detail, "cannot open shared object file"));
  EXPECT_EQ(report.attempts[2].source, kNoSysfs);
  EXPECT_FALSE(report.attempts[2].ok);
  EXPECT_EQ(report.attempts[2].detail, "not present (no amdgpu driver with KFD)");
}

struct InitFailure {
  int code;
  std::string expected;  // the start of the attempt's detail
};

void PrintTo(const InitFailure& failure, std::ostream* os) { *os << "code " << failure.code; }

class NvmlInitFailure : public Probe, public ::testing::WithParamInterface<InitFailure> {};

TEST_P(NvmlInitFailure, NamesTheCodeAndFallsBackToLibcuda) {
  g_host.init_rc = GetParam().code;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  EXPECT_TRUE(report.devices.empty());
  EXPECT_EQ(sources(report), (std::vector<std::string>{"libnvidia-ml.so.1", "nvmlInit_v2", "libcuda.so.1", kNoSysfs}));
  const ProbeAttempt* init = find_attempt(report, "nvmlInit_v2");
  ASSERT_NE(init, nullptr);
  EXPECT_FALSE(init->ok);
  EXPECT_EQ(init->detail.rfind(GetParam().expected, 0), 0u) << init->detail;
  EXPECT_EQ(g_host.shutdowns, 0) << "nvmlShutdown after a failed nvmlInit";
}

INSTANTIATE_TEST_SUITE_P(
    Codes, NvmlInitFailure,
    ::testing::Values(
        InitFailure{NVML_ERROR_DRIVER_NOT_LOADED,
                    "NVML_ERROR_DRIVER_NOT_LOADED (9): the NVIDIA kernel driver is not loaded"},
        InitFailure{NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION (4)"},
        InitFailure{NVML_ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH (18): libnvidia-ml and"},
        InitFailure{NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST (15)"},
        InitFailure{NVML_ERROR_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM (17)"},
        InitFailure{NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN (999)"},
        InitFailure{4242, "NVML error 4242"}));

TEST_F(Probe, ZeroDevicesIsAnAnswerNotAFailure) {
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  EXPECT_TRUE(report.devices.empty());
  const ProbeAttempt* count = find_attempt(report, "nvmlDeviceGetCount_v2");
  ASSERT_NE(count, nullptr);
  EXPECT_TRUE(count->ok);
  EXPECT_EQ(count->detail, "0 devices");
  EXPECT_EQ(find_attempt(report, "libcuda.so.1"), nullptr) << "NVML answered: no reason to ask libcuda";
  EXPECT_EQ(g_host.shutdowns, 1);
}

TEST_F(Probe, CountFailureFallsBack) {
  g_host.count_rc = NVML_ERROR_UNKNOWN;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  const ProbeAttempt* count = find_attempt(report, "nvmlDeviceGetCount_v2");
  ASSERT_NE(count, nullptr);
  EXPECT_FALSE(count->ok);
  EXPECT_EQ(count->detail, "NVML_ERROR_UNKNOWN (999)");
  EXPECT_NE(find_attempt(report, "libcuda.so.1"), nullptr);
  EXPECT_EQ(g_host.shutdowns, 1) << "nvmlShutdown after a successful nvmlInit, even on failure";
}

TEST_F(Probe, MissingRequiredSymbolFallsBack) {
  NvmlApi nvml = fake_nvml();
  nvml.nvmlDeviceGetCount_v2 = nullptr;
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  ASSERT_FALSE(report.attempts.empty());
  EXPECT_EQ(report.attempts[0].source, "libnvidia-ml.so.1");
  EXPECT_FALSE(report.attempts[0].ok);
  EXPECT_EQ(report.attempts[0].detail, "loaded, but lacks nvmlDeviceGetCount_v2");
  EXPECT_NE(find_attempt(report, "libcuda.so.1"), nullptr);
}

TEST_F(Probe, MissingOptionalSymbolLeavesItsFieldEmpty) {
  g_host.gpus = {kH100};
  NvmlApi nvml = fake_nvml();
  nvml.nvmlDeviceGetPciInfo = nullptr;
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].pci_bus_id, "");
  EXPECT_EQ(report.devices[0].arch, "sm90");
  EXPECT_EQ(report.attempts[0].detail, "loaded; lacks nvmlDeviceGetPciInfo");
  EXPECT_TRUE(report.attempts[0].ok);
}

// ---- several GPUs, per-device errors ----

TEST_F(Probe, SeveralDifferentGpus) {
  g_host.gpus = {kH100, kA100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);

  ASSERT_EQ(report.devices.size(), 2u);
  const DeviceInfo& h100 = report.devices[0];
  EXPECT_EQ(h100.platform, Platform::cuda);
  EXPECT_EQ(h100.index, 0);
  EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(h100.arch, "sm90");
  EXPECT_EQ(h100.memory_bytes, 85520809984ULL);
  EXPECT_EQ(h100.driver_version, "550.54.15");
  EXPECT_EQ(h100.cuda, (CudaVersion{12, 4}));
  EXPECT_EQ(h100.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(h100.uuid, "GPU-3f1a2b4c-0000-1111-2222-333344445555");
  EXPECT_EQ(h100.origin, "NVML");
  EXPECT_FALSE(h100.cuda_assumed);

  const DeviceInfo& a100 = report.devices[1];
  EXPECT_EQ(a100.index, 1);
  EXPECT_EQ(a100.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(a100.compute_capability, (ComputeCapability{8, 0}));
  EXPECT_EQ(a100.arch, "sm80");
  EXPECT_EQ(a100.memory_bytes, 85899345920ULL);
  EXPECT_EQ(a100.pci_bus_id, "00000000:3B:00.0");

  // Different GPUs, CUDA_DEVICE_ORDER unset: CUDA's numbering may differ from NVML's.
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_TRUE(contains(report.warnings[0], "CUDA_DEVICE_ORDER=PCI_BUS_ID"));
}

TEST_F(Probe, PciBusOrderSilencesTheOrderingWarning) {
  g_host.gpus = {kH100, kA100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  EXPECT_TRUE(run(nvml, cuda, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}).warnings.empty());

  g_host.gpus = {kH100, kH100};
  EXPECT_TRUE(run(nvml, cuda).warnings.empty()) << "identical GPUs: the order does not matter";
}

TEST_F(Probe, CudaVersionDecoding) {
  g_host.gpus = {kB200};
  g_host.cuda_version = 12080;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  ProbeReport report = run(nvml, cuda);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].cuda, (CudaVersion{12, 8}));
  EXPECT_EQ(report.devices[0].arch, "sm100");

  g_host.cuda_version = 13000;
  report = run(nvml, cuda);
  EXPECT_EQ(report.devices[0].cuda, (CudaVersion{13, 0}));
}

TEST_F(Probe, ErrorOnOneDeviceKeepsTheRest) {
  g_host.gpus = {kH100, kA100, kL40S};
  g_host.failures[{"cc", 1}] = NVML_ERROR_GPU_IS_LOST;
  g_host.failures[{"memory", 1}] = NVML_ERROR_NOT_SUPPORTED;
  g_host.failures[{"handle", 2}] = NVML_ERROR_NO_PERMISSION;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});

  ASSERT_EQ(names(report), (std::vector<std::string>{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"}));
  EXPECT_EQ(report.devices[0].compute_capability, (ComputeCapability{9, 0}));
  const DeviceInfo& broken = report.devices[1];
  EXPECT_FALSE(broken.compute_capability.has_value());
  EXPECT_EQ(broken.arch, "");
  EXPECT_FALSE(broken.memory_bytes.has_value());
  EXPECT_EQ(broken.pci_bus_id, "00000000:3B:00.0") << "the other calls still ran";

  const ProbeAttempt* cc = find_attempt(report, "nvmlDeviceGetCudaComputeCapability");
  ASSERT_NE(cc, nullptr);
  EXPECT_FALSE(cc->ok);
  EXPECT_EQ(cc->detail, "NVML device 1: NVML_ERROR_GPU_IS_LOST (15): the GPU fell off the bus");

  ASSERT_EQ(report.warnings.size(), 3u);
  EXPECT_EQ(report.warnings[0],
            "NVML device 1: nvmlDeviceGetCudaComputeCapability failed: NVML_ERROR_GPU_IS_LOST (15): the GPU fell off the bus");
  EXPECT_TRUE(contains(report.warnings[1], "nvmlDeviceGetMemoryInfo failed: NVML_ERROR_NOT_SUPPORTED (3)"));
  EXPECT_EQ(report.warnings[2],
            "NVML device 2: no handle: NVML_ERROR_NO_PERMISSION (4): no permission to open the NVIDIA device files");
}

// ---- CUDA_VISIBLE_DEVICES on the NVML path ----

struct VisibleCase {
  std::string spec;
  std::vector<std::string> expected_names;
};

void PrintTo(const VisibleCase& visible, std::ostream* os) { *os << "CUDA_VISIBLE_DEVICES=\"" << visible.spec << '"'; }

class CudaVisibleDevices : public Probe, public ::testing::WithParamInterface<VisibleCase> {};

TEST_P(CudaVisibleDevices, SelectsAndRenumbers) {
  g_host.gpus = {kH100, kA100, kL40S, kB200};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_VISIBLE_DEVICES", GetParam().spec}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});

  EXPECT_EQ(names(report), GetParam().expected_names) << "CUDA_VISIBLE_DEVICES=\"" << GetParam().spec << "\"";
  for (std::size_t i = 0; i < report.devices.size(); ++i) EXPECT_EQ(report.devices[i].index, static_cast<int>(i));
  const ProbeAttempt* note = find_attempt(report, "CUDA_VISIBLE_DEVICES");
  ASSERT_NE(note, nullptr);
  EXPECT_TRUE(contains(note->detail, "\"" + GetParam().spec + "\""));
  EXPECT_EQ(find_attempt(report, "libcuda.so.1"), nullptr) << "hiding every device is not a failure of NVML";
}

const std::string H100 = kH100.name;
const std::string A100 = kA100.name;
const std::string L40S = kL40S.name;
const std::string B200 = kB200.name;

INSTANTIATE_TEST_SUITE_P(
    Specs, CudaVisibleDevices,
    ::testing::Values(VisibleCase{"1,0", {A100, H100}},                          //
                      VisibleCase{"3", {B200}},                                  //
                      VisibleCase{" 2 , 0 ", {L40S, H100}},                      // spaces
                      VisibleCase{"1gpu", {A100}},                               // strtoul reads the leading digits
                      VisibleCase{"0,", {H100}},                                 // a trailing comma
                      VisibleCase{"0,2,-1,1", {H100, L40S}},                     // CUDA's own example
                      VisibleCase{"0,7,1", {H100}},                              // no device 7: the list ends
                      VisibleCase{"0,x,1", {H100}},                              // not an index: the list ends
                      VisibleCase{"", {}},                                       // empty: no device
                      VisibleCase{"-1", {}},                                     //
                      VisibleCase{"1,1", {}},                                    // repeated: no device
                      VisibleCase{"GPU-7e6d5c4b-aaaa-bbbb-cccc-ddddeeeeffff", {A100}},  // a full UUID
                      VisibleCase{"GPU-bbd,gpu-3F1A", {B200, H100}},             // unique prefixes, any case
                      VisibleCase{"GPU-3f1a2b4c-0000-1111-2222-333344445555,2", {H100, L40S}},  // UUID and index
                      VisibleCase{"GPU-bb", {}},                                 // ambiguous (L40S, B200): no device
                      VisibleCase{"GPU-0000,0", {}},                             // no such UUID: the list ends at once
                      VisibleCase{"2,MIG-4f6e1e9c-1111-2222-3333-444455556666", {L40S}}));  // MIG: not mapped

TEST_F(Probe, CudaVisibleDevicesNoteSaysWhereTheListEnded) {
  g_host.gpus = {kH100, kA100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_VISIBLE_DEVICES", "1,5,0"}});
  const ProbeAttempt* note = find_attempt(report, "CUDA_VISIBLE_DEVICES");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->detail, "\"1,5,0\": device 1 of 2; the list ends where there is no device 5 (2 found)");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].index, 0);
  EXPECT_EQ(report.devices[0].uuid, kA100.uuid);
}

TEST_F(Probe, CudaVisibleDevicesEmptyExplainsTheEmptyResult) {
  g_host.gpus = {kH100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_VISIBLE_DEVICES", ""}});
  EXPECT_TRUE(report.devices.empty());
  const std::string text = render_probe_text(report, false);
  const std::string line = line_with(text, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(line.rfind("  ok    CUDA_VISIBLE_DEVICES ", 0), 0u) << text;
  EXPECT_TRUE(contains(line, " \"\": no device (the list is empty)")) << text;
}

// ---- the CUDA driver fallback ----

const FakeGpu kOrin{"Orin", "", "0000:00:00.0", 8, 7, 30622912512ULL};

TEST_F(Probe, NvmlMissingFallsBackToLibcuda) {
  g_cuda.gpus = {kOrin};
  g_cuda.cuda_version = 12020;
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = fake_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_VISIBLE_DEVICES", "0"}});

  ASSERT_EQ(report.devices.size(), 1u);
  const DeviceInfo& orin = report.devices[0];
  EXPECT_EQ(orin.origin, "CUDA driver");
  EXPECT_EQ(orin.index, 0);
  EXPECT_EQ(orin.name, "Orin");
  EXPECT_EQ(orin.compute_capability, (ComputeCapability{8, 7}));
  EXPECT_EQ(orin.arch, "sm87");
  EXPECT_EQ(orin.cuda, (CudaVersion{12, 2}));
  EXPECT_EQ(orin.memory_bytes, 30622912512ULL);
  EXPECT_EQ(orin.pci_bus_id, "0000:00:00.0");
  EXPECT_EQ(orin.uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  EXPECT_EQ(orin.driver_version, "") << "libcuda does not say the driver's version";

  EXPECT_EQ(sources(report), (std::vector<std::string>{"libnvidia-ml.so.1", "libcuda.so.1", "CUDA_VISIBLE_DEVICES",
                                                       "cuInit", "cuDeviceGetCount", kNoSysfs}));
  EXPECT_EQ(find_attempt(report, "CUDA_VISIBLE_DEVICES")->detail, "\"0\": applied by libcuda");
}

TEST_F(Probe, NvmlAndLibcudaBothFail) {
  g_host.init_rc = NVML_ERROR_DRIVER_NOT_LOADED;
  g_cuda.init_rc = CUDA_ERROR_NO_DEVICE;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = fake_cuda();
  const ProbeReport report = run(nvml, cuda);

  EXPECT_TRUE(report.devices.empty());
  const ProbeAttempt* nvml_init = find_attempt(report, "nvmlInit_v2");
  const ProbeAttempt* cu_init = find_attempt(report, "cuInit");
  ASSERT_NE(nvml_init, nullptr);
  ASSERT_NE(cu_init, nullptr);
  EXPECT_FALSE(nvml_init->ok);
  EXPECT_FALSE(cu_init->ok);
  EXPECT_EQ(cu_init->detail, "CUDA_ERROR_NO_DEVICE (100): the driver sees no CUDA device (check CUDA_VISIBLE_DEVICES)");

  const std::string text = render_probe_text(report, false);
  EXPECT_TRUE(contains(text, "No GPU found. Tried:\n")) << text;
  EXPECT_EQ(line_with(text, "nvmlInit_v2").rfind("  fail  nvmlInit_v2 ", 0), 0u) << text;
  EXPECT_TRUE(contains(line_with(text, "nvmlInit_v2"), " NVML_ERROR_DRIVER_NOT_LOADED (9)")) << text;
  EXPECT_EQ(line_with(text, "cuInit").rfind("  fail  cuInit ", 0), 0u) << text;
  EXPECT_TRUE(contains(line_with(text, "cuInit"), " CUDA_ERROR_NO_DEVICE (100)")) << text;
}

TEST_F(Probe, LibcudaStubLibraryIsExplained) {
  g_cuda.init_rc = CUDA_ERROR_STUB_LIBRARY;
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = fake_cuda();
  const ProbeReport report = run(nvml, cuda);
  const ProbeAttempt* cu_init = find_attempt(report, "cuInit");
  ASSERT_NE(cu_init, nullptr);
  EXPECT_TRUE(contains(cu_init->detail, "CUDA_ERROR_STUB_LIBRARY (34): this libcuda is the toolkit's link stub"));
}

TEST_F(Probe, LibcudaErrorOnOneDevice) {
  g_cuda.gpus = {kOrin, kOrin};
  g_cuda.failures[{"attribute", 0}] = CUDA_ERROR_INVALID_DEVICE;
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = fake_cuda();
  const ProbeReport report = run(nvml, cuda);

  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_FALSE(report.devices[0].compute_capability.has_value());
  EXPECT_EQ(report.devices[1].compute_capability, (ComputeCapability{8, 7}));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "CUDA device 0: cuDeviceGetAttribute failed: CUDA_ERROR_INVALID_DEVICE (101)");
}

// ---- ROCm sysfs ----

TEST_F(Probe, SysfsTwoMi300x) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, kSysfs + "mi300x_x2/nodes");

  ASSERT_EQ(report.devices.size(), 2u);
  const DeviceInfo& first = report.devices[0];
  EXPECT_EQ(first.platform, Platform::rocm);
  EXPECT_EQ(first.origin, "sysfs");
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.arch, "gfx942");
  EXPECT_EQ(first.name, "AMD gfx942") << "\"ip discovery\" is not a name";
  EXPECT_FALSE(first.compute_capability.has_value());
  EXPECT_FALSE(first.cuda.has_value());
  EXPECT_EQ(first.memory_bytes, 206141652992ULL);
  EXPECT_EQ(first.pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(first.uuid, "GPU-1c2d3e4f5a6b7c81");
  EXPECT_EQ(report.devices[1].index, 1);
  EXPECT_EQ(report.devices[1].pci_bus_id, "0000:e1:00.0");

  const ProbeAttempt* sysfs = find_attempt(report, kSysfs + "mi300x_x2/nodes");
  ASSERT_NE(sysfs, nullptr);
  EXPECT_TRUE(sysfs->ok);
  EXPECT_EQ(sysfs->detail, "2 GPU nodes among 3 nodes");
}

TEST_F(Probe, SysfsMixedTargetsInNodeOrder) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, kSysfs + "mixed/nodes");

  ASSERT_EQ(report.devices.size(), 3u);
  EXPECT_EQ(report.devices[0].arch, "gfx950");
  EXPECT_EQ(report.devices[0].pci_bus_id, "0000:81:00.0");
  EXPECT_EQ(report.devices[1].arch, "gfx90a");
  EXPECT_EQ(report.devices[1].name, "aldebaran");
  EXPECT_EQ(report.devices[1].pci_bus_id, "0001:01:00.0");
  EXPECT_EQ(report.devices[1].memory_bytes, 68702699520ULL) << "a private frame-buffer heap is VRAM too";
  EXPECT_EQ(report.devices[2].arch, "gfx1101") << "node 10 comes after node 2";
  EXPECT_EQ(report.devices[2].index, 2);
}

TEST_F(Probe, SysfsCpuOnly) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, kSysfs + "cpu_only/nodes");
  EXPECT_TRUE(report.devices.empty());
  const ProbeAttempt* sysfs = find_attempt(report, kSysfs + "cpu_only/nodes");
  ASSERT_NE(sysfs, nullptr);
  EXPECT_EQ(sysfs->detail, "0 GPU nodes among 1 nodes");
}

TEST_F(Probe, SysfsUnreadableNodeIsReportedAndSkipped) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, kSysfs + "broken/nodes");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].uuid, "GPU-000000000000115c");
  EXPECT_FALSE(report.devices[0].memory_bytes.has_value()) << "no mem_banks";
  const ProbeAttempt* unreadable = find_attempt(report, kSysfs + "broken/nodes/1/properties");
  ASSERT_NE(unreadable, nullptr);
  EXPECT_FALSE(unreadable->ok);
}

TEST_F(Probe, SysfsHonoursHipAndRocrVisibleDevices) {
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const std::string root = kSysfs + "mixed/nodes";

  ProbeReport report = run(nvml, cuda, {{"HIP_VISIBLE_DEVICES", "2,0"}}, root);
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].arch, "gfx1101");
  EXPECT_EQ(report.devices[0].index, 0);
  EXPECT_EQ(report.devices[1].arch, "gfx950");

  // ROCr filters first, then HIP numbers what is left.
  report = run(nvml, cuda, {{"ROCR_VISIBLE_DEVICES", "1,2"}, {"HIP_VISIBLE_DEVICES", "1"}}, root);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].arch, "gfx1101");

  // HIP reads CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is unset.
  report = run(nvml, cuda, {{"CUDA_VISIBLE_DEVICES", "1"}}, root);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].arch, "gfx90a");

  // ROCR_VISIBLE_DEVICES by UUID (unique_id 2222 = 0x8ae).
  report = run(nvml, cuda, {{"ROCR_VISIBLE_DEVICES", "GPU-00000000000008ae"}}, root);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].arch, "gfx90a");
}

// ---- the time bound ----

std::atomic<int> g_slow_calls{0};

nvmlReturn_t slow_nvml_init() {
  g_slow_calls.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  return NVML_ERROR_TIMEOUT;  // touches nothing shared: the test is over by then
}

TEST_F(Probe, HungDriverCallTimesOut) {
  NvmlApi nvml = fake_nvml();
  nvml.nvmlInit_v2 = slow_nvml_init;
  const CudaDriverApi cuda = missing_cuda();

  ProbeOptions options;
  options.nvml = &nvml;
  options.cuda_driver = &cuda;
  options.sysfs_root = kNoSysfs;
  options.getenv = [](const std::string&) { return std::optional<std::string>(); };
  options.timeout = std::chrono::milliseconds(150);

  const auto start = std::chrono::steady_clock::now();
  const ProbeReport report = probe_devices(options);
  const auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_LT(elapsed, std::chrono::seconds(2));
  EXPECT_GE(elapsed, std::chrono::milliseconds(140));
  EXPECT_EQ(g_slow_calls.load(), 1);
  EXPECT_TRUE(report.timed_out);
  EXPECT_TRUE(report.devices.empty());
  ASSERT_FALSE(report.attempts.empty());
  EXPECT_EQ(report.attempts.back().source, "nvmlInit_v2");
  EXPECT_FALSE(report.attempts.back().ok);
  EXPECT_EQ(report.attempts.back().detail, "no answer within 150 ms; gave up waiting");

  const std::string text = render_probe_text(report, false);
  EXPECT_TRUE(contains(text, "No GPU found: the probe timed out.")) << text;
}

// ---- rendering ----

TEST_F(Probe, TextTableShowsEachDevice) {
  g_host.gpus = {kH100, kA100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  const std::string text = render_probe_text(report, false);
  EXPECT_EQ(text,
            "GPU  Name                   Arch  CC   Memory     Driver     CUDA  PCI bus id        Source\n"
            "0    NVIDIA H100 80GB HBM3  sm90  9.0  81559 MiB  550.54.15  12.4  00000000:19:00.0  NVML\n"
            "1    NVIDIA A100-SXM4-80GB  sm80  8.0  81920 MiB  550.54.15  12.4  00000000:3B:00.0  NVML\n");
  EXPECT_FALSE(contains(text, "\x1b[")) << "no colour unless asked";
  EXPECT_TRUE(contains(render_probe_text(report, true), "\x1b["));
}

TEST_F(Probe, TextShowsWarningsUnderTheTable) {
  g_host.gpus = {kH100, kA100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const std::string text = render_probe_text(run(nvml, cuda), false);
  EXPECT_TRUE(contains(text, "\nwarning: these GPUs differ")) << text;
}

TEST_F(Probe, JsonForNvidiaAndAmd) {
  g_host.gpus = {kH100};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, kSysfs + "mi300x_x2/nodes");
  ASSERT_EQ(report.devices.size(), 3u);

  const nlohmann::json j = nlohmann::json::parse(probe_to_json(report));
  const nlohmann::json& h100 = j.at("devices").at(0);
  EXPECT_EQ(h100.at("index"), 0);
  EXPECT_EQ(h100.at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.at("vendor"), "nvidia");
  EXPECT_EQ(h100.at("platform"), "cuda");
  EXPECT_EQ(h100.at("compute_capability"), "9.0");
  EXPECT_EQ(h100.at("arch"), "sm90");
  EXPECT_EQ(h100.at("memory_bytes"), 85520809984ULL);
  EXPECT_EQ(h100.at("memory_mib"), 81559);
  EXPECT_EQ(h100.at("driver_version"), "550.54.15");
  EXPECT_EQ(h100.at("cuda_driver_version"), "12.4");
  EXPECT_EQ(h100.at("pci_bus_id"), "00000000:19:00.0");
  EXPECT_EQ(h100.at("uuid"), kH100.uuid);
  EXPECT_EQ(h100.at("source"), "NVML");

  const nlohmann::json& mi300x = j.at("devices").at(1);
  EXPECT_EQ(mi300x.at("index"), 0) << "indices count per platform";
  EXPECT_EQ(mi300x.at("vendor"), "amd");
  EXPECT_EQ(mi300x.at("platform"), "rocm");
  EXPECT_TRUE(mi300x.at("compute_capability").is_null());
  EXPECT_TRUE(mi300x.at("cuda_driver_version").is_null());
  EXPECT_TRUE(mi300x.at("driver_version").is_null());
  EXPECT_EQ(mi300x.at("arch"), "gfx942");
  EXPECT_EQ(mi300x.at("memory_mib"), 196592);
  EXPECT_EQ(mi300x.at("source"), "sysfs");

  EXPECT_EQ(j.at("timed_out"), false);
  EXPECT_TRUE(j.at("warnings").is_array());
  ASSERT_TRUE(j.at("attempts").is_array());
  EXPECT_EQ(j.at("attempts").at(0).at("source"), "libnvidia-ml.so.1");
  EXPECT_EQ(j.at("attempts").at(0).at("ok"), true);
  EXPECT_EQ(j.at("attempts").at(0).at("detail"), "loaded");
}

TEST_F(Probe, JsonSurvivesBytesThatAreNotUtf8) {
  g_host.gpus = {kH100};
  g_host.gpus[0].name = "bad \xff name";
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const std::string text = probe_to_json(run(nvml, cuda), -1);
  EXPECT_TRUE(contains(text, "\"name\":\"bad \xEF\xBF\xBD name\"")) << text;
}

// ---- the real thing, whatever this machine has ----

TEST(ProbeReal, NeverThrowsAndSaysWhatItTried) {
  ProbeOptions options;
  options.timeout = std::chrono::milliseconds(10000);
  const ProbeReport report = probe_devices(options);
  EXPECT_FALSE(report.attempts.empty());
  for (const DeviceInfo& device : report.devices) {
    EXPECT_FALSE(device.origin.empty());
    EXPECT_TRUE(device.index.has_value());
  }
  if (report.devices.empty()) {
    EXPECT_TRUE(contains(render_probe_text(report, false), "No GPU found"));
  }
}

// ---- hostile drivers and sysfs trees (issue 11) ----

TEST_F(Probe, ADriverReportingAHundredMillionDevicesIsReadUpTo64) {
  g_host.gpus = {kH100};
  g_host.reported_count = 100000000;
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const auto start = std::chrono::steady_clock::now();
  const ProbeReport report = run(nvml, cuda);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "expected milliseconds";
  EXPECT_FALSE(report.timed_out);
  EXPECT_LE(report.devices.size(), 64u);
  EXPECT_LE(report.attempts.size(), 200u);
  bool warned = false;
  for (const std::string& w : report.warnings) warned = warned || contains(w, "reading the first 64");
  EXPECT_TRUE(warned);
}

struct ImpossibleCc {
  int major;
  int minor;
};
class ImpossibleComputeCapability : public Probe, public ::testing::WithParamInterface<ImpossibleCc> {};

TEST_P(ImpossibleComputeCapability, MarksTheDeviceInvalidAndAsksForGpu) {
  g_host.gpus = {FakeGpu{"NVIDIA H100 80GB HBM3", "GPU-1", "00000000:19:00.0", GetParam().major, GetParam().minor, 1}};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);
  ASSERT_EQ(report.devices.size(), 1u);
  const DeviceInfo& d = report.devices[0];
  EXPECT_TRUE(contains(d.invalid, "which no GPU has")) << d.invalid;
  EXPECT_FALSE(d.compute_capability.has_value());
  EXPECT_TRUE(d.arch.empty());
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_TRUE(contains(report.warnings.back(), "pass --gpu")) << report.warnings.back();
}

INSTANTIATE_TEST_SUITE_P(Driver, ImpossibleComputeCapability,
                         ::testing::Values(ImpossibleCc{INT_MIN, 0}, ImpossibleCc{99, 99}, ImpossibleCc{0, 0},
                                           ImpossibleCc{9, -1}, ImpossibleCc{INT_MAX, INT_MAX}));

TEST_F(Probe, RealComputeCapabilitiesStayValid) {
  g_host.gpus = {kH100, kL40S, kB200};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  for (const DeviceInfo& d : run(nvml, cuda).devices) EXPECT_TRUE(d.invalid.empty()) << d.name << ": " << d.invalid;
}

// A scratch sysfs tree: nodes/1 with the given properties file (or a link to `link_to`).
class HostileSysfs : public Probe {
 protected:
  void SetUp() override {
    Probe::SetUp();
    char pattern[] = "/tmp/attnsel-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    std::filesystem::create_directories(root_ + "/nodes/1");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(HostileSysfs, PropertiesThatAreDevZeroAreRefusedNotRead) {
  std::filesystem::create_symlink("/dev/zero", root_ + "/nodes/1/properties");
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, root_ + "/nodes");
  EXPECT_TRUE(report.devices.empty());
  const ProbeAttempt* a = find_attempt(report, root_ + "/nodes/1/properties");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->ok);
  EXPECT_TRUE(contains(a->detail, "character device")) << a->detail;
}

TEST_F(HostileSysfs, AGfxIdOfTwoToThe64MinusOneIsInvalid) {
  std::ofstream(root_ + "/nodes/1/properties") << "gfx_target_version 18446744073709551615\n";
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, root_ + "/nodes");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_TRUE(contains(report.devices[0].invalid, "which no AMD GPU has")) << report.devices[0].invalid;
  EXPECT_TRUE(report.devices[0].arch.empty());
}

TEST_F(HostileSysfs, AHugeNameFileIsCutToAName) {
  std::ofstream(root_ + "/nodes/1/properties") << "gfx_target_version 90402\n";
  std::ofstream(root_ + "/nodes/1/name") << std::string(100000, 'x') << "\n";
  const NvmlApi nvml = missing_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda, {}, root_ + "/nodes");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_LE(report.devices[0].name.size(), 256u);
  EXPECT_EQ(report.devices[0].arch, "gfx942");
  EXPECT_TRUE(report.devices[0].invalid.empty());
}

// A driver that hangs in every handle call: once the caller stops waiting, the worker stops
// calling (it used to go on through every device the driver claimed).
std::atomic<int> g_slow_handle_calls{0};
nvmlReturn_t slow_nvml_handle(unsigned, nvmlDevice_t*) {
  ++g_slow_handle_calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  return NVML_ERROR_INVALID_ARGUMENT;
}

TEST_F(Probe, TheWorkerStopsAfterTheTimeout) {
  g_host.reported_count = 64;
  NvmlApi nvml = fake_nvml();
  nvml.nvmlDeviceGetHandleByIndex_v2 = slow_nvml_handle;
  const CudaDriverApi cuda = missing_cuda();
  ProbeOptions options;
  options.nvml = &nvml;
  options.cuda_driver = &cuda;
  options.sysfs_root = kNoSysfs;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  options.timeout = std::chrono::milliseconds(100);
  const ProbeReport report = probe_devices(options);
  EXPECT_TRUE(report.timed_out);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int after_return = g_slow_handle_calls.load();
  EXPECT_LT(after_return, 20) << "64 calls of 40 ms: the worker did not stop";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(g_slow_handle_calls.load(), after_return);
}

TEST_F(Probe, JsonOfANameThatIsNotUtf8ReplacesTheBytes) {
  g_host.gpus = {FakeGpu{"NVIDIA \xff\xfe H100", "GPU-1", "00000000:19:00.0", 9, 0, 1}};
  const NvmlApi nvml = fake_nvml();
  const CudaDriverApi cuda = missing_cuda();
  const ProbeReport report = run(nvml, cuda);
  std::string json;
  ASSERT_NO_THROW(json = probe_to_json(report, 2));
  EXPECT_TRUE(contains(json, "\xEF\xBF\xBD")) << "U+FFFD replaces each invalid byte";
  // An indent far past nlohmann's 1024-space buffer is clamped, not read past.
  EXPECT_EQ(probe_to_json(report, 100000), probe_to_json(report, 16));
  EXPECT_FALSE(contains(render_probe_text(report, false), "\xff"));
}

// ---- the fast path: /proc/driver/nvidia and /sys/bus/pci (fake trees in tests/fixtures/probe) ----

const std::string kProcfsFixtures = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/probe/";

class FastPath : public Probe {
 protected:
  ProbeReport fast(const std::string& tree, const Env& env = {}, const NvmlApi& nvml = missing_nvml()) {
    return fast_at(kProcfsFixtures + tree + "/proc", kProcfsFixtures + tree + "/pci", env, nvml);
  }
  ProbeReport fast_at(const std::string& proc, const std::string& pci, const Env& env = {},
                      const NvmlApi& nvml = missing_nvml()) {
    const CudaDriverApi cuda = missing_cuda();
    ProbeOptions options;
    options.nvml = &nvml;
    options.cuda_driver = &cuda;
    options.sysfs_root = kNoSysfs;
    options.fast_path = true;
    options.nvidia_procfs_root = proc;
    options.pci_devices_root = pci;
    options.getenv = [env](const std::string& name) -> std::optional<std::string> {
      const auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return probe_devices(options);
  }
  // The fake NVML describing the same two H100s as tests/fixtures/probe/h100x2.
  static void nvml_sees_h100x2() {
    g_host.driver_version = "550.54.15";
    g_host.cuda_version = 12040;
    g_host.gpus = {FakeGpu{"NVIDIA H100 80GB HBM3", "GPU-1f2e3d4c-aaaa-bbbb-cccc-ddddeeeeffff", "00000000:18:00.0", 9, 0, 85899345920ull},
                   FakeGpu{"NVIDIA H100 80GB HBM3", "GPU-8a1b2c3d-0000-1111-2222-333344445555", "00000000:2A:00.0", 9, 0, 85899345920ull}};
  }
};

TEST_F(FastPath, AnswersWithoutNvmlInPciOrder) {
  const ProbeReport report = fast("h100x2");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.answered_by, std::vector<std::string>{"procfs"});
  const DeviceInfo& d = report.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(d.compute_capability);
  EXPECT_EQ(*d.compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(d.arch, "sm90");
  ASSERT_TRUE(d.cuda);
  EXPECT_EQ(*d.cuda, (CudaVersion{12, 4}));  // driver branch 550
  EXPECT_EQ(d.driver_version, "550.54.15");
  EXPECT_EQ(d.pci_bus_id, "00000000:18:00.0");  // NVML's spelling, not procfs's
  EXPECT_EQ(d.uuid, "GPU-1f2e3d4c-aaaa-bbbb-cccc-ddddeeeeffff");
  EXPECT_EQ(d.origin, "procfs");
  EXPECT_EQ(d.index, 0);
  EXPECT_FALSE(d.memory_bytes) << "procfs does not know the memory; the fast path leaves it out";
  EXPECT_EQ(report.devices[1].pci_bus_id, "00000000:2A:00.0");
  EXPECT_EQ(report.devices[1].index, 1);
  // NVML was never loaded: the fast path's attempt is the only NVIDIA one.
  const ProbeAttempt* a = find_attempt(report, kProcfsFixtures + "h100x2/proc");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->ok);
  EXPECT_TRUE(contains(a->detail, "2 GPUs")) << a->detail;
  EXPECT_EQ(find_attempt(report, "libnvidia-ml.so.1"), nullptr);
}

TEST_F(FastPath, EqualsNvmlFieldByField) {
  nvml_sees_h100x2();
  const NvmlApi nvml = fake_nvml();
  const ProbeReport quick = fast("h100x2", {}, nvml);
  const ProbeReport slow = run(nvml, missing_cuda());
  EXPECT_EQ(slow.answered_by, std::vector<std::string>{"NVML"});
  ASSERT_EQ(quick.devices.size(), slow.devices.size());
  for (std::size_t i = 0; i < quick.devices.size(); ++i) {
    const DeviceInfo& a = quick.devices[i];
    const DeviceInfo& b = slow.devices[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.compute_capability, b.compute_capability);
    EXPECT_EQ(a.arch, b.arch);
    EXPECT_EQ(a.cuda, b.cuda);
    EXPECT_EQ(a.driver_version, b.driver_version);
    EXPECT_EQ(a.pci_bus_id, b.pci_bus_id);
    EXPECT_EQ(a.uuid, b.uuid);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.platform, b.platform);
  }
}

TEST_F(FastPath, OpenModuleVersionLineAndMixedGpusWarnAboutOrder) {
  const ProbeReport report = fast("h100-l40s");
  ASSERT_EQ(names(report), (std::vector<std::string>{"NVIDIA H100 80GB HBM3", "NVIDIA L40S"}));
  EXPECT_EQ(report.devices[0].driver_version, "570.86.15");
  EXPECT_EQ(*report.devices[0].cuda, (CudaVersion{12, 8}));
  EXPECT_EQ(report.devices[1].arch, "sm89");
  EXPECT_EQ(report.devices[1].pci_bus_id, "00000000:B8:00.0");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_TRUE(contains(report.warnings[0], "CUDA_DEVICE_ORDER=PCI_BUS_ID"));
  EXPECT_TRUE(fast("h100-l40s", {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}).warnings.empty());
}

TEST_F(FastPath, AnUnknownDeviceIdIsLeftToNvml) {
  g_host.driver_version = "570.86.15";
  g_host.cuda_version = 12080;
  g_host.gpus = {FakeGpu{"NVIDIA B200", "GPU-0b200000-1111-2222-3333-444455556666", "00000000:1B:00.0", 10, 0, 1}};
  const NvmlApi nvml = fake_nvml();
  const ProbeReport report = fast("b200", {}, nvml);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].origin, "NVML");
  EXPECT_EQ(report.devices[0].arch, "sm100");
  EXPECT_EQ(report.answered_by, std::vector<std::string>{"NVML"});
  const ProbeAttempt* a = find_attempt(report, kProcfsFixtures + "b200/proc");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->ok);
  EXPECT_TRUE(contains(a->detail, "device ID 2901 (NVIDIA B200) is not in data/pci-ids.json; NVML answers")) << a->detail;
}

TEST_F(FastPath, NoDriverIsLeftToNvml) {
  const ProbeReport report = fast("absent");
  EXPECT_TRUE(report.devices.empty());
  EXPECT_TRUE(report.answered_by.empty());
  const ProbeAttempt* a = find_attempt(report, kProcfsFixtures + "absent/proc");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(contains(a->detail, "no NVIDIA kernel driver")) << a->detail;
  EXPECT_NE(find_attempt(report, "libnvidia-ml.so.1"), nullptr) << "NVML must still be tried";
}

TEST_F(FastPath, CudaVisibleDevicesByIndexAndUuid) {
  ProbeReport report = fast("h100x2", {{"CUDA_VISIBLE_DEVICES", "1"}});
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].uuid, "GPU-8a1b2c3d-0000-1111-2222-333344445555");
  EXPECT_EQ(report.devices[0].index, 0);
  report = fast("h100x2", {{"CUDA_VISIBLE_DEVICES", "GPU-1f2e,GPU-8a1b"}});
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].pci_bus_id, "00000000:18:00.0");
  report = fast("h100x2", {{"CUDA_VISIBLE_DEVICES", "GPU-8a1b,0"}});
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].pci_bus_id, "00000000:2A:00.0");
  EXPECT_EQ(report.answered_by, std::vector<std::string>{"procfs"});
}

TEST_F(FastPath, AMigInstanceIsLeftToNvml) {
  nvml_sees_h100x2();
  const NvmlApi nvml = fake_nvml();
  const ProbeReport report = fast("h100x2", {{"CUDA_VISIBLE_DEVICES", "MIG-1f2e3d4c-aaaa-bbbb-cccc-ddddeeeeffff"}}, nvml);
  EXPECT_EQ(report.answered_by.size(), 0u);  // NVML does not map MIG instances either: no device
  const ProbeAttempt* a = find_attempt(report, kProcfsFixtures + "h100x2/proc");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->ok);
  EXPECT_TRUE(contains(a->detail, "MIG")) << a->detail;
  EXPECT_NE(find_attempt(report, "nvmlInit_v2"), nullptr);
}

// Variants of h100x2 written at run time: each must make the fast path step aside, never guess.
class BrokenProcfs : public FastPath {
 protected:
  void SetUp() override {
    FastPath::SetUp();
    char pattern[] = "/tmp/attnsel-procfs-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    std::filesystem::copy(kProcfsFixtures + "h100x2", root_, std::filesystem::copy_options::recursive);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string file(const std::string& relative) const { return root_ + "/" + relative; }
  ProbeReport run_broken() {
    nvml_sees_h100x2();
    nvml_ = fake_nvml();
    return fast_at(root_ + "/proc", root_ + "/pci", {}, nvml_);
  }
  void expect_nvml_answered(const ProbeReport& report, const std::string& why) {
    EXPECT_EQ(report.answered_by, std::vector<std::string>{"NVML"});
    const ProbeAttempt* a = find_attempt(report, root_ + "/proc");
    ASSERT_NE(a, nullptr);
    EXPECT_FALSE(a->ok);
    EXPECT_TRUE(contains(a->detail, why)) << a->detail;
  }
  std::string root_;
  NvmlApi nvml_;
};

TEST_F(BrokenProcfs, AnUnknownDriverBranch) {
  std::ofstream(file("proc/version")) << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  999.10.01  Mon Jan  1 00:00:00 UTC 2035\n";
  expect_nvml_answered(run_broken(), "branch 999");
}

TEST_F(BrokenProcfs, AVersionFileWithoutAVersion) {
  std::ofstream(file("proc/version")) << "NVRM version: NVIDIA UNIX x86_64 Kernel Module\n";
  expect_nvml_answered(run_broken(), "names no driver version");
}

TEST_F(BrokenProcfs, AnExcludedGpu) {
  std::string text;
  {
    std::ifstream in(file("proc/gpus/0000:18:00.0/information"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("GPU Excluded:\t No"), 17, "GPU Excluded:\t Yes");
  std::ofstream(file("proc/gpus/0000:18:00.0/information")) << text;
  expect_nvml_answered(run_broken(), "excluded");
}

TEST_F(BrokenProcfs, InformationThatIsDevZeroIsNotRead) {
  std::filesystem::remove(file("proc/gpus/0000:18:00.0/information"));
  std::filesystem::create_symlink("/dev/zero", file("proc/gpus/0000:18:00.0/information"));
  expect_nvml_answered(run_broken(), "character device");
}

TEST_F(BrokenProcfs, ADirectoryThatIsNotAPciAddress) {
  std::filesystem::create_directories(file("proc/gpus/not-a-gpu"));
  expect_nvml_answered(run_broken(), "is not a PCI address");
}

TEST_F(BrokenProcfs, AnotherVendorsDevice) {
  std::ofstream(file("pci/0000:2a:00.0/vendor")) << "0x1002\n";
  expect_nvml_answered(run_broken(), "not an NVIDIA display controller");
}

TEST_F(BrokenProcfs, AMissingPciDevice) {
  std::filesystem::remove_all(file("pci/0000:2a:00.0"));
  expect_nvml_answered(run_broken(), "vendor, device or class unreadable");
}

TEST_F(BrokenProcfs, ABusLocationThatDisagreesWithTheDirectory) {
  std::string text;
  {
    std::ifstream in(file("proc/gpus/0000:2a:00.0/information"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("Bus Location: \t 0000:2a:00.0"), 28, "Bus Location: \t 0000:2b:00.0");
  std::ofstream(file("proc/gpus/0000:2a:00.0/information")) << text;
  expect_nvml_answered(run_broken(), "bus location differs");
}

TEST_F(BrokenProcfs, NoGpus) {
  std::filesystem::remove_all(file("proc/gpus"));
  std::filesystem::create_directories(file("proc/gpus"));
  const ProbeReport report = run_broken();
  EXPECT_EQ(report.devices.size(), 2u);  // NVML's
  expect_nvml_answered(report, "lists no GPU");
}

TEST(PciIds, TheBuiltInTableLoadsAndIsConsistent) {
  auto table = probe::parse_pci_ids(embedded::find("pci-ids.json"));
  ASSERT_TRUE(table) << table.error().describe();
  EXPECT_EQ(table->vendor, 0x10DEu);
  EXPECT_GE(table->compute_capability.size(), 100u);
  EXPECT_EQ(table->compute_capability.at(0x2330), (ComputeCapability{9, 0}));  // H100 SXM
  EXPECT_EQ(table->compute_capability.at(0x20B2), (ComputeCapability{8, 0}));  // A100 SXM 80GB
  EXPECT_EQ(table->compute_capability.at(0x26B9), (ComputeCapability{8, 9}));  // L40S
  EXPECT_EQ(table->compute_capability.at(0x2236), (ComputeCapability{8, 6}));  // A10
  EXPECT_EQ(table->compute_capability.at(0x1E02), (ComputeCapability{7, 5}));  // TITAN RTX
  EXPECT_EQ(table->cuda_by_branch.at(535), (CudaVersion{12, 2}));
  EXPECT_EQ(probe::builtin_pci_ids().compute_capability.size(), table->compute_capability.size());
}

TEST(PciIds, ABrokenTableIsAnErrorWithItsLocation) {
  auto bad = probe::parse_pci_ids(R"({"vendor": "10de", "families": [{"compute_capability": "9.x", "devices": {}}]})");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.error().where, "/families/0/compute_capability")) << bad.error().where;
  bad = probe::parse_pci_ids(R"({"vendor": "10de", "families": [{"compute_capability": "9.0", "devices": {"2330": "a"}},
                                {"compute_capability": "8.0", "devices": {"2330": "b"}}], "cuda_by_driver_branch": {"branches": {}}})");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.error().message, "listed twice")) << bad.error().message;
  EXPECT_FALSE(probe::parse_pci_ids("not json"));
}

}  // namespace
}  // namespace attnsel
