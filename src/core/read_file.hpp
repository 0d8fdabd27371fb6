// The one way attnsel reads a file or a stream it was pointed at: bounded, regular files only
// unless asked, and every failure names the reason (errno text), never "empty input".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "attnsel/error.hpp"

namespace attnsel::detail {

// Every input attnsel reads (matrix, script, manifest, config) is far below this.
inline constexpr std::size_t kMaxInputBytes = 64u << 20;

// The whole file, or an io_error with `path` as where: "is a directory", "is a FIFO, not a regular
// file", "cannot open: <errno text>", "cannot read: <errno text>", "larger than 64 MiB".
// Never reads more than limit + 1 bytes. The file is opened with O_NONBLOCK and checked with fstat
// before any read, so a FIFO with no writer never blocks. `allow_special` accepts FIFOs, character
// devices and sockets too (/dev/stdin, a process substitution); the size limit still holds.
Result<std::string> read_file_bounded(const std::string& path, std::size_t limit = kMaxInputBytes,
                                      bool allow_special = false);

// Whether an error of read_file_bounded says the path is not there (no such file, or a path through
// a file): a file the deployment provides later, as opposed to one that is there and unreadable.
bool names_absent_file(const Error& error);

// Everything readable from an open descriptor (stdin: fd 0), at most `limit` bytes; `name` is the
// where of errors ("<stdin>"). Does not close fd.
Result<std::string> read_fd_bounded(int fd, std::string_view name, std::size_t limit = kMaxInputBytes);

// "64 MiB", "1 MiB", "512 bytes": how errors state a limit.
std::string describe_size(std::size_t bytes);

}  // namespace attnsel::detail
