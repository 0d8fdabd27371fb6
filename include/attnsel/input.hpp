// Reading what attnsel is pointed at, and showing what it read, for the CLI and embedders: the
// library's one bounded reader (src/core/read_file.hpp) and terminal escaping (src/render/text_util.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

// A whole file, at most `limit` bytes (64 MiB by default), regular files only unless
// `allow_special` (FIFOs, /dev/stdin). A FIFO with no writer never blocks. Errors are io_error
// with `path` as where and the reason: "is a directory, not a file", "is a FIFO (named pipe), not
// a regular file", "cannot open: <errno text>", "cannot read: <errno text>", "larger than 64 MiB".
ATTNSEL_API Result<std::string> read_input_file(const std::string& path, std::size_t limit = 64u << 20,
                                                bool allow_special = false);
// Everything readable from `fd` (0 for stdin), at most `limit` bytes; `name` is the where of errors.
ATTNSEL_API Result<std::string> read_input_fd(int fd, std::string_view name, std::size_t limit = 64u << 20);

// `text` made safe for a terminal: control characters (ESC, BEL, CR, C1) and bytes that are not
// UTF-8 become \xNN; with `keep_colors`, SGR colour sequences stay. Newlines and tabs stay.
ATTNSEL_API std::string escape_for_terminal(std::string_view text, bool keep_colors = false);

}  // namespace attnsel
