// libFuzzer target: the YAML loader's budgets (src/core/yaml_load): aliases, cycles, depth, duplicate keys.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::yaml_budget(data, size);
}
