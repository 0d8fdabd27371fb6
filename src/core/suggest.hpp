// "Did you mean ...?" for unknown names: the one suggester behind every such message (GPU, model,
// backend, flag, matrix key, subcommand). Public as closest_name() in attnsel/suggest.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnsel::detail {

// The candidates plausibly meant by `name`, best first, at most `limit`: the same name spelled
// differently (case, dashes, spaces), then names it starts, then names with a word it starts,
// then names it is part of (or that are part of it), then typos by edit distance.
std::vector<std::string> ranked_matches(std::string_view name, const std::vector<std::string>& candidates,
                                        std::size_t limit);
// The best of ranked_matches, or "" when none is plausibly meant.
std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace attnsel::detail
