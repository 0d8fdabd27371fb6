// libFuzzer target: select() on a request decoded from the bytes, then describe/flags/render.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::selection(data, size);
}
