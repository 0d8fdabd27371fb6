// Values as Python reads them: the engines parse their flags with argparse, so `--page-size " 16"`
// and `1_6` are numbers to them.
#pragma once

#include <optional>
#include <string_view>

namespace attnsel::detail {

// Python's int(text): surrounding blanks, a sign, digits with single underscores between them (any
// Unicode decimal digit and space, as int() takes them); past 2^58 a large value of the right sign
// (Python ints are unbounded). nullopt: int() raises.
std::optional<long long> python_int(std::string_view s);

}  // namespace attnsel::detail
