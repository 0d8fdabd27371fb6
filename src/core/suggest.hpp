// "Did you mean ...?" for unknown names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnsel::detail {

// The candidate closest to `name` by edit distance, or "" when none is plausibly meant.
std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace attnsel::detail
