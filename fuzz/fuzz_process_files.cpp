// libFuzzer target: Makefiles, justfiles, Procfiles, systemd units, Jinja templates and MDX through
// scan_launch_input, and the walk's gitignore-style globs.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attnsel::fuzz::process_files(data, size);
}
