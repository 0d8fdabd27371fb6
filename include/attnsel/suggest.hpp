// "Did you mean ...?": the suggester behind every "unknown ..." message of attnsel, for programs
// that report their own unknown names (a CLI's options, a config's keys) the same way.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/export.hpp"

namespace attnsel {

// The candidate `name` most plausibly means, or "" when none is close. Ranked: the same name
// spelled differently (case, dashes, spaces: "rtx5090" is "RTX 5090"), then a name it starts
// ("H10" -> "H100"), a name with a word it starts ("A6000" -> "RTX A6000"), a name it is part of
// or that is part of it ("--gpuu" -> "--gpu"), then typos by edit distance ("flashinfr").
ATTNSEL_API std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);
// The best `limit` of them, best first.
ATTNSEL_API std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                                   std::size_t limit = 3);

}  // namespace attnsel
