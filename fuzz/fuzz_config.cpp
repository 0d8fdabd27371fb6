// libFuzzer target: the Hugging Face config.json reader (traits_from_config).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::model_config(data, size);
}
