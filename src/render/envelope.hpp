// The output contract (docs/output.md): every JSON document attnsel prints is one object that starts
// with schema_version, attnsel_version and kind, whatever the subcommand.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace attnsel::detail {

// `body`'s keys after the contract's three, as text (invalid UTF-8 replaced, never thrown). Pass
// the body with std::move where it is not needed afterwards: a large one is not copied then.
std::string envelope_text(std::string_view kind, nlohmann::json body, int indent);
std::string envelope_text(std::string_view kind, nlohmann::ordered_json body, int indent);

}  // namespace attnsel::detail
