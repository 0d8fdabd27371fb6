// The engine's entry points for the library's own callers.
#pragma once

#include <memory>

#include "attnsel/selection.hpp"

namespace attnsel::detail {

// select(), judging every other candidate at once (Selection::rejected and alternatives are then
// ready): for a caller that reads them after every selection.
ATTNSEL_API Result<Selection> select_judging_all(const std::shared_ptr<const Matrix>& matrix, const Request& request);

}  // namespace attnsel::detail
