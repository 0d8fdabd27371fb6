#include "render/envelope.hpp"

#include "attnsel/encode.hpp"
#include "attnsel/render.hpp"
#include "attnsel/version.hpp"
#include "core/json_text.hpp"

namespace attnsel::detail {

namespace {

// The three keys as their own document, then `body`'s text spliced after them: the same bytes as
// one combined dump, without copying the body into a new object.
template <class Json>
std::string with_envelope(std::string_view kind, Json&& body, int indent) {
  nlohmann::ordered_json head;
  head["schema_version"] = kJsonSchemaVersion;
  head["attnsel_version"] = version();
  head["kind"] = kind;
  std::string text = json_text(head, indent);
  for (const char* key : {"schema_version", "attnsel_version", "kind"}) body.erase(key);
  if (body.empty()) return text;
  const std::string rest = json_text(body, indent);
  const bool pretty = clamp_indent(indent) >= 0;  // "{\n" ... "\n}" rather than "{" ... "}"
  text.resize(text.size() - (pretty ? 2 : 1));
  text += pretty ? ",\n" : ",";
  text.append(rest, pretty ? 2 : 1);
  return text;
}

}  // namespace

// Every JSON document goes to a log some day: `##[` and bidi controls written as \u escapes.
std::string envelope_text(std::string_view kind, nlohmann::json body, int indent) {
  return encode_output(with_envelope(kind, std::move(body), indent), OutputChannel::json);
}

std::string envelope_text(std::string_view kind, nlohmann::ordered_json body, int indent) {
  return encode_output(with_envelope(kind, std::move(body), indent), OutputChannel::json);
}

}  // namespace attnsel::detail

namespace attnsel {

std::string render_json_document(std::string_view kind, std::string_view body, int indent) {
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) parsed = nlohmann::ordered_json::object();
  return detail::envelope_text(kind, std::move(parsed), indent);
}

}  // namespace attnsel
