#include "render/envelope.hpp"

#include "attnsel/render.hpp"
#include "attnsel/version.hpp"
#include "core/json_text.hpp"

namespace attnsel::detail {

namespace {

template <class Json>
std::string with_envelope(std::string_view kind, const Json& body, int indent) {
  nlohmann::ordered_json out;
  out["schema_version"] = kJsonSchemaVersion;
  out["attnsel_version"] = version();
  out["kind"] = kind;
  for (const auto& [key, value] : body.items())
    if (key != "schema_version" && key != "attnsel_version" && key != "kind") out[key] = value;
  return json_text(out, indent);
}

}  // namespace

std::string envelope_text(std::string_view kind, const nlohmann::json& body, int indent) {
  return with_envelope(kind, body, indent);
}

std::string envelope_text(std::string_view kind, const nlohmann::ordered_json& body, int indent) {
  return with_envelope(kind, body, indent);
}

}  // namespace attnsel::detail

namespace attnsel {

std::string render_json_document(std::string_view kind, std::string_view body, int indent) {
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) parsed = nlohmann::ordered_json::object();
  return detail::envelope_text(kind, parsed, indent);
}

}  // namespace attnsel
