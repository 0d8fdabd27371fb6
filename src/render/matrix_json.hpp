// A matrix as normalised JSON: what `attnsel matrix --format json` prints and what diffs compare.
#pragma once

#include <nlohmann/json.hpp>

#include "attnsel/matrix.hpp"

namespace attnsel {

nlohmann::json matrix_json(const Matrix& m);

}  // namespace attnsel
