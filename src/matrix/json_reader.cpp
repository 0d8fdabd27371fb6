#include "matrix/json_reader.hpp"

#include <fmt/format.h>

#include "core/suggest.hpp"

namespace attnsel::detail {
namespace {

// Byte offset -> 1-based line and column.
std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// nlohmann keeps the last of duplicate keys silently; a matrix with two "fa3" keys is a bug we want to see.
struct DuplicateKeyCheck {
  std::vector<std::set<std::string>> stack;
  std::string duplicate;
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: stack.emplace_back(); break;
      case json::parse_event_t::object_end: if (!stack.empty()) stack.pop_back(); break;
      case json::parse_event_t::key:
        if (!stack.empty() && !stack.back().insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
        break;
      default: break;
    }
    return true;
  }
};

}  // namespace

std::string_view type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

Result<json> parse_json(std::string_view text, std::string_view origin) {
  // Parse once with position-aware errors; nlohmann reports the byte where it stopped.
  DuplicateKeyCheck dup;
  json parsed;
  try {
    parsed = json::parse(text.begin(), text.end(), std::ref(dup), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while parsing ..." -> the tail.
    auto pos = what.find(": ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    Error err{ErrorCode::parse_error, shorten(what, 300), fmt::format("{}:{}:{}", origin, line, col), {}, {}};
    return err;
  } catch (const json::exception& e) {
    // out_of_range.406 (a number like 1e400) and friends: no position from nlohmann here.
    std::string what = e.what();
    auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return Error{ErrorCode::parse_error, shorten(what, 300), std::string(origin), {}, {}};
  }
  if (!dup.duplicate.empty())
    return Error{ErrorCode::parse_error, fmt::format("duplicate key \"{}\" (JSON objects must not repeat a key)", shorten(dup.duplicate, 64)),
                 std::string(origin), {}, {}};
  return parsed;
}

void fail(const std::string& pointer, const std::string& message) { throw ReadError(pointer, message); }

std::string escape_pointer(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string expect_string(const json& j, const std::string& pointer) {
  if (!j.is_string()) fail(pointer, fmt::format("expected a string, got {}", type_name(j)));
  return j.get<std::string>();
}

int expect_int(const json& j, const std::string& pointer, int min, int max) {
  const bool is_int = j.is_number_integer();
  bool in_range = false;
  if (j.is_number_unsigned()) {
    const auto v = j.get<std::uint64_t>();
    in_range = v <= static_cast<std::uint64_t>(max) && static_cast<std::int64_t>(v) >= min;
  } else if (is_int) {
    const auto v = j.get<std::int64_t>();
    in_range = v <= max && v >= min;
  }
  if (!in_range) {
    std::string got = j.is_number() ? shorten(j.dump(), 40) : std::string(type_name(j));
    fail(pointer, fmt::format("expected an integer in [{}, {}], got {}", min, max, got));
  }
  return j.get<int>();
}

ObjectReader::ObjectReader(const json& j, std::string pointer) : j_(j), pointer_(std::move(pointer)) {
  if (!j_.is_object()) fail(pointer_, fmt::format("expected an object, got {}", type_name(j_)));
}

std::string ObjectReader::child(std::string_view key) const { return pointer_ + "/" + escape_pointer(key); }

bool ObjectReader::has(std::string_view key) {
  asked_.emplace(key);
  return j_.find(std::string(key)) != j_.end();
}

const json* ObjectReader::get(std::string_view key) {
  asked_.emplace(key);
  auto it = j_.find(std::string(key));
  if (it == j_.end()) return nullptr;
  read_.emplace(key);
  return &*it;
}

const json& ObjectReader::require(std::string_view key) {
  const json* v = get(key);
  if (!v) fail(pointer_, fmt::format("missing required key \"{}\"", key));
  return *v;
}

std::string ObjectReader::string(std::string_view key) { return expect_string(require(key), child(key)); }

std::optional<std::string> ObjectReader::optional_string(std::string_view key) {
  const json* v = get(key);
  if (!v) return std::nullopt;
  return expect_string(*v, child(key));
}

bool ObjectReader::boolean(std::string_view key, bool fallback) {
  const json* v = get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(child(key), fmt::format("expected true or false, got {}", type_name(*v)));
  return v->get<bool>();
}

std::vector<std::string> ObjectReader::strings(std::string_view key) {
  const json* v = get(key);
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
    return out;
  }
  if (!v->is_array()) fail(child(key), fmt::format("expected a string or an array of strings, got {}", type_name(*v)));
  for (std::size_t i = 0; i < v->size(); ++i) out.push_back(expect_string((*v)[i], fmt::format("{}/{}", child(key), i)));
  return out;
}

void ObjectReader::finish() const {
  // Every key a reader asked for, present or not, is a valid one: suggest among them.
  std::vector<std::string> known(asked_.begin(), asked_.end());
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (read_.count(it.key())) continue;
    const std::string key = shorten(it.key(), 64);
    std::string hint = closest_match(it.key(), known);
    fail(pointer_ + "/" + escape_pointer(key),
         hint.empty() ? fmt::format("unknown key \"{}\"; valid keys here: {}", key, fmt::join(known, ", "))
                      : fmt::format("unknown key \"{}\" (did you mean \"{}\"?)", key, hint));
  }
}

std::string shorten(std::string_view text, std::size_t max) {
  // Printable ASCII as is, everything else escaped: messages stay valid UTF-8 and one line.
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7F) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02X}", c);
  }
  return out;
}

}  // namespace attnsel::detail
