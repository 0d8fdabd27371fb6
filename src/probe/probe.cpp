// probe_devices: runs the sources on a worker thread and waits at most the timeout for them.
#include "attnsel/probe.hpp"

#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "probe/driver_api.hpp"
#include "probe/sources.hpp"

namespace attnsel {
namespace probe {

void ProbeLog::begin(std::string step) {
  const std::lock_guard<std::mutex> lock(mutex_);
  current_ = std::move(step);
}

void ProbeLog::add(std::string source, bool ok, std::string detail) {
  const std::lock_guard<std::mutex> lock(mutex_);
  attempts_.push_back(ProbeAttempt{std::move(source), ok, std::move(detail)});
}

void ProbeLog::warn(std::string text) {
  const std::lock_guard<std::mutex> lock(mutex_);
  warnings_.push_back(std::move(text));
}

std::string ProbeLog::current_step() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

std::vector<ProbeAttempt> ProbeLog::attempts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return attempts_;
}

std::vector<std::string> ProbeLog::warnings() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return warnings_;
}

void validate_probed(DeviceInfo& device) {
  std::string why;
  if (device.compute_capability) {
    const ComputeCapability cc = *device.compute_capability;
    // Every NVIDIA GPU so far is 1.0 to 12.x; minors are single digits. Leave room for new majors.
    if (cc.major < 1 || cc.major > 99 || cc.minor < 0 || cc.minor > 9)
      why = fmt::format("the driver reports compute capability {}.{}, which no GPU has", cc.major, cc.minor);
  }
  if (device.platform == Platform::rocm && !device.arch.empty()) {
    // gfx + major (1 or 2 digits) + minor and stepping (one hex digit each): gfx90a, gfx942, gfx1101.
    const std::string& a = device.arch;
    const bool ok = a.rfind("gfx", 0) == 0 && a.size() >= 6 && a.size() <= 7 &&
                    a.find_first_not_of("0123456789abcdef", 3) == std::string::npos;
    if (!ok) why = fmt::format("sysfs reports GPU target {}, which no AMD GPU has", a.substr(0, 40));
  }
  if (why.empty()) return;
  device.invalid = why;
  device.compute_capability.reset();
  device.arch.clear();
}

void warn_about_device_order(const std::vector<DeviceInfo>& devices, const Environment& env, ProbeLog& log) {
  std::set<std::string> kinds;
  for (const DeviceInfo& device : devices) kinds.insert(device.name + "/" + device.arch);
  if (kinds.size() > 1 && env.cuda_device_order.value_or("") != "PCI_BUS_ID") {
    log.warn(
        "these GPUs differ, and CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID: "
        "the indices above follow PCI order, so set CUDA_DEVICE_ORDER=PCI_BUS_ID for them to match CUDA's");
  }
}

}  // namespace probe

namespace {

// Shared by the caller and the worker, which may outlive the caller when a driver call hangs.
struct ProbeRun {
  std::optional<driver::NvmlApi> nvml;  // a fake; nullopt: dlopen the real one
  std::optional<driver::CudaDriverApi> cuda_driver;
  std::string sysfs_root;
  bool fast_path = false;
  std::string nvidia_procfs_root;
  std::string pci_devices_root;
  probe::Environment env;
  probe::ProbeLog log;

  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::vector<DeviceInfo> devices;  // appended as each source finishes
  std::vector<std::string> answered_by;

  void publish(std::vector<DeviceInfo> found, const char* source) {
    for (DeviceInfo& device : found) {
      probe::validate_probed(device);
      if (!device.invalid.empty()) log.warn(fmt::format("{}: {}; pass --gpu", device.name.empty() ? "a device" : device.name, device.invalid));
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (!found.empty()) answered_by.emplace_back(source);
    for (DeviceInfo& device : found) devices.push_back(std::move(device));
  }
};

// NVML, else the CUDA driver.
void execute_driver_libraries(ProbeRun& run) {
  if (!run.nvml) {
    run.log.begin("dlopen libnvidia-ml.so.1");
    run.nvml = driver::load_nvml();
  }
  std::optional<std::vector<DeviceInfo>> nvidia = probe::probe_nvml(*run.nvml, run.env, run.log);
  const char* source = "NVML";
  if (!nvidia) {
    if (!run.cuda_driver) {
      run.log.begin("dlopen libcuda.so.1");
      run.cuda_driver = driver::load_cuda_driver();
    }
    nvidia = probe::probe_cuda_driver(*run.cuda_driver, run.env, run.log);
    source = "CUDA driver";
  }
  run.publish(std::move(*nvidia), source);
}

void execute(ProbeRun& run) noexcept {
  try {
    std::optional<std::vector<DeviceInfo>> fast;
    if (run.fast_path)
      fast = probe::probe_nvidia_procfs(run.nvidia_procfs_root, run.pci_devices_root, probe::builtin_pci_ids(), run.env, run.log);
    if (fast) {
      run.publish(std::move(*fast), "procfs");
    } else {
      execute_driver_libraries(run);
    }
    run.publish(probe::probe_rocm_sysfs(run.sysfs_root, run.env, run.log), "sysfs");
  } catch (const std::exception& e) {
    run.log.add(run.log.current_step(), false, fmt::format("stopped by an exception: {}", e.what()));
  } catch (...) {
    run.log.add(run.log.current_step(), false, "stopped by an unknown exception");
  }
  const std::lock_guard<std::mutex> lock(run.mutex);
  run.done = true;
  run.finished.notify_all();
}

probe::Environment read_environment(const ProbeOptions& options) {
  auto lookup = [&options](const char* name) -> std::optional<std::string> {
    if (options.getenv) return options.getenv(name);
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  probe::Environment env;
  env.cuda_visible_devices = lookup("CUDA_VISIBLE_DEVICES");
  env.cuda_device_order = lookup("CUDA_DEVICE_ORDER");
  env.hip_visible_devices = lookup("HIP_VISIBLE_DEVICES");
  env.rocr_visible_devices = lookup("ROCR_VISIBLE_DEVICES");
  return env;
}

}  // namespace

ProbeReport probe_devices(const ProbeOptions& options) {
  try {
    auto run = std::make_shared<ProbeRun>();
    if (options.nvml != nullptr) run->nvml = *options.nvml;
    if (options.cuda_driver != nullptr) run->cuda_driver = *options.cuda_driver;
    run->sysfs_root = options.sysfs_root;
    run->fast_path = options.fast_path;
    run->nvidia_procfs_root = options.nvidia_procfs_root;
    run->pci_devices_root = options.pci_devices_root;
    run->env = read_environment(options);

    std::thread worker;
    try {
      worker = std::thread([run] { execute(*run); });
    } catch (const std::system_error&) {
      execute(*run);  // no thread to be had: probe here, without the time bound
    }

    std::unique_lock<std::mutex> lock(run->mutex);
    const bool finished = run->finished.wait_for(lock, options.timeout, [&run] { return run->done; });
    ProbeReport report;
    report.devices = run->devices;
    report.answered_by = run->answered_by;
    lock.unlock();
    // A worker that answered is joined, so nothing of it (dlerror's thread-local buffer included)
    // outlives the call; one stuck in the driver is left behind, holding its own share of `run`.
    if (worker.joinable()) {
      if (finished) {
        worker.join();
      } else {
        worker.detach();
      }
    }
    report.attempts = run->log.attempts();
    report.warnings = run->log.warnings();
    if (!finished) {
      run->log.cancel();  // the worker stops at its next device; what it holds is freed with `run`
      report.timed_out = true;
      const std::string step = run->log.current_step();
      report.attempts.push_back(ProbeAttempt{
          step.empty() ? "probe" : step, false,
          fmt::format("no answer within {} ms; gave up waiting", options.timeout.count())});
    }
    return report;
  } catch (const std::exception& e) {
    ProbeReport report;
    report.attempts.push_back(ProbeAttempt{"probe", false, fmt::format("could not run: {}", e.what())});
    return report;
  }
}

}  // namespace attnsel
