// libFuzzer target: GPU names (Catalog::resolve_gpu) and --cuda values (resolve_device).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::gpu_name(data, size);
}
