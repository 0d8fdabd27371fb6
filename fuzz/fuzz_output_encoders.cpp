// libFuzzer target: the output encoders of every channel (encode_output, encode_value, the
// streaming OutputEncoder split anywhere, github_escape_data/property).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::output_encoders(data, size);
}
