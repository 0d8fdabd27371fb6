// A serving engine's start-up, reduced to the attention decision: find the GPU (probe it, or
// take --gpu / ATTNSEL_GPU), plan for the model, print the SGLang launch flags, or refuse to
// start with attnsel's reasons.
//
//   server_startup [--gpu GPU] [--cuda X.Y] [--attention-backend B] [--kv-cache-dtype D]
//                  [--page-size N] MODEL
//
// Exit codes, as attnsel's: 0 a valid plan, 1 no valid plan, 2 bad input, 3 no GPU found.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <attnsel/catalog.hpp>
#include <attnsel/probe.hpp>
#include <attnsel/render_probe.hpp>
#include <attnsel/selection.hpp>
#include <attnsel/version.hpp>

namespace {

int usage(const std::string& why) {
  std::cerr << "server_startup: " << why
            << "\nusage: server_startup [--gpu GPU] [--cuda X.Y] [--attention-backend B] [--kv-cache-dtype D]"
               " [--page-size N] MODEL\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::string> gpu, cuda;
  std::string model;
  attnsel::Request request;
  if (const char* env = std::getenv("ATTNSEL_GPU"); env != nullptr && *env != '\0') gpu = env;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && i + 1 >= argc) return usage(arg + " needs a value");
    if (arg == "--gpu") {
      gpu = argv[++i];
    } else if (arg == "--cuda") {
      cuda = argv[++i];
    } else if (arg == "--attention-backend") {
      request.attention.all = argv[++i];
    } else if (arg == "--kv-cache-dtype") {
      auto dtype = attnsel::parse_kv_dtype(argv[++i]);
      if (!dtype) return usage(std::string("unknown KV cache dtype; valid: ") + std::string(attnsel::kv_dtype_names()));
      request.kv_cache_dtype = *dtype;
    } else if (arg == "--page-size") {
      char* end = nullptr;
      const long size = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || size < 1 || size > (1 << 20)) return usage("--page-size: expected 1 to 1048576");
      request.page_size = static_cast<int>(size);
    } else if (model.empty() && arg.rfind("--", 0) != 0) {
      model = arg;
    } else {
      return usage("unexpected argument " + arg);
    }
  }
  if (model.empty()) return usage("no model given (mha, mla, gdn, dsa, or a model id such as deepseek-ai/DeepSeek-V3)");

  // The built-in matrix and catalog are parsed once per process, immutable, and shared.
  auto matrix = attnsel::builtin_matrix();
  auto catalog = attnsel::builtin_catalog();
  if (!matrix || !catalog) return usage("the built-in data is invalid");
  std::cout << "attnsel " << attnsel::version() << ", matrix " << (*matrix)->info().version << "\n";

  // The device: named, or probed.
  if (gpu) {
    auto device = attnsel::resolve_device(**catalog, attnsel::DeviceSpec{gpu, std::nullopt, cuda, "--gpu"});
    if (!device) return usage(device.error().describe());
    request.device = *device;
  } else {
    attnsel::ProbeReport report = attnsel::probe_devices();
    if (report.devices.empty() || !report.devices[0].compute_capability) {
      std::cerr << attnsel::render_probe_text(report, false)
                << "server_startup: no NVIDIA GPU found; name one with --gpu or ATTNSEL_GPU\n";
      return 3;
    }
    attnsel::DeviceInfo& device = report.devices[0];
    if (const attnsel::GpuArch* arch = (*catalog)->find_arch(*device.compute_capability)) device.arch = arch->arch;
    if (cuda) device.cuda = attnsel::parse_version(*cuda);
    attnsel::assume_cuda(**catalog, device);
    request.device = device;
  }
  std::cout << "GPU   " << request.device.arch << " (" << request.device.origin << ")\n";

  auto traits = attnsel::resolve_model(**catalog, model);
  if (!traits) return usage(traits.error().describe());
  request.model = *traits;

  // Pure and reentrant: every thread of a server may call it with the same matrix.
  auto selection = attnsel::select(*matrix, request);
  if (!selection) return usage(selection.error().describe());  // an unknown backend name
  for (const attnsel::Diagnostic& d : selection->describe(selection->warnings))
    std::cerr << "warning: " << d.message << " [" << d.rule << "]\n";
  if (!selection->ok()) {
    std::cerr << "server_startup: refusing to start; attnsel says this configuration cannot run:\n";
    for (const attnsel::Diagnostic& d : selection->describe(selection->errors))
      std::cerr << "  " << d.message << " [" << d.rule << "]\n";
    return 1;
  }
  std::cout << "launch flags:";
  for (const std::string& flag : selection->flags()) std::cout << ' ' << flag;
  std::cout << "\n";
  return 0;
}
