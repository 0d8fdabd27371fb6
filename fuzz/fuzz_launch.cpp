// libFuzzer target: find_launch_commands in every input format, parse_launch_flags, launch_command_from_argv.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::launch_commands(data, size);
}
