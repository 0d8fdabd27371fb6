// JSON text for output. Strings that reach JSON come from argv, file names, drivers and YAML: any
// bytes. nlohmann's dump() throws on invalid UTF-8 (an abort in a CLI that prints JSON), so every
// dump goes through json_text(): invalid bytes become U+FFFD, and the indent is clamped.
#pragma once

#include <algorithm>
#include <string>

namespace attnsel::detail {

// nlohmann grows its indent buffer once (to 1024 spaces): a larger indent times the depth reads
// past it. 16 spaces a level is wider than anyone asks for and safe to any depth we produce.
inline constexpr int kMaxJsonIndent = 16;

inline int clamp_indent(int indent) { return std::clamp(indent, -1, kMaxJsonIndent); }

// `indent` < 0: one line. Invalid UTF-8 is replaced with U+FFFD, never thrown about.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(clamp_indent(indent), ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace attnsel::detail
