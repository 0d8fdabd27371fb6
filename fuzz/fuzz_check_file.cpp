// libFuzzer target: a whole file through `attnsel check`: scan_launch_input in every format,
// check_command for sm90 and sm100, and the text, JSON and GitHub writers.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::check_file(data, size);
}
