#include "attnsel/error.hpp"

#include <fmt/format.h>

namespace attnsel {

std::string Error::describe() const {
  std::string out = where.empty() ? message : fmt::format("{}: {}", where, message);
  if (!suggestion.empty()) out += fmt::format(" (did you mean '{}'?)", suggestion);
  if (!choices.empty()) out += fmt::format("; valid: {}", fmt::join(choices, ", "));
  return out;
}

}  // namespace attnsel
