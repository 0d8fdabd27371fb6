// A plan as a JSON value: what `attnsel select --format json` prints for one device, and what
// `check --format json` extends for each command (built once, never printed and parsed back).
#pragma once

#include <nlohmann/json.hpp>

#include "attnsel/selection.hpp"

namespace attnsel::detail {

nlohmann::json selection_json(const Selection& s);

}  // namespace attnsel::detail
