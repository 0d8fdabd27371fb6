// Matrix files that extend another: "extends" names the base, and the file's slots, backends,
// rules and selection entries replace the base's entries with the same key, remove them
// ("remove": true) or add new ones (appended, or placed with "after"/"before").
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "attnsel/error.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel::detail {

struct SourceText {
  std::string text;
  std::string origin;  // for messages and for resolving the next "extends"
};

// Finds the text of a matrix named by "extends", relative to the file that names it.
using MatrixResolver = std::function<Result<SourceText>(std::string_view name, std::string_view from_origin)>;

// The built-in files by name; files next to `from_origin` on disk, then built-in files by name.
MatrixResolver default_resolver();

// The document with every "extends" applied (the result has none). Errors name the overlay file.
Result<json> compose(json document, const std::string& origin, const MatrixResolver& resolve, int depth = 0);

}  // namespace attnsel::detail
