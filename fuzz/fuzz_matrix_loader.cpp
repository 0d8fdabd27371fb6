// libFuzzer target: the matrix loader (load_matrix), then render and select on what it accepts.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::matrix_loader(data, size);
}
