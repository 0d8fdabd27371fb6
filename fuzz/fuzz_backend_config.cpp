// libFuzzer target: --attention-backend-config files (YAML, JSON) and inline text.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::backend_config(data, size);
}
