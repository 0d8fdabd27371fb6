#include "matrix/json_reader.hpp"
#include "core/json_text.hpp"

#include <iterator>

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

// Far deeper than any matrix or config (the matrix's own condition limit fires first), shallow
// enough for the recursive walkers and nlohmann's recursive dump().
constexpr std::size_t kMaxJsonDepth = 4096;

// Walks a string_view and tells the parser's owner how far the lexer has read: the only way to put
// a line:col on an error found in a SAX callback (a duplicate key, a too-deep value).
class TrackedIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator(const char* p, const char** read_up_to) : p_(p), read_up_to_(read_up_to) {}
  reference operator*() const { return *p_; }
  TrackedIterator& operator++() {
    *read_up_to_ = ++p_;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator& o) const { return p_ == o.p_; }
  bool operator!=(const TrackedIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** read_up_to_;
};

// Builds the document from the parser's events in linear time. nlohmann's callback parser
// rescans the parent container after every object or array (quadratic in a 200k-element array),
// and its DOM builder keeps the last of duplicate keys silently; a matrix with two "fa3" keys is a
// bug we want to see.
class DomBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit DomBuilder(const char* const* read_up_to) : read_up_to_(read_up_to) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(number_integer_t v) { return value(v); }
  bool number_unsigned(number_unsigned_t v) { return value(v); }
  bool number_float(number_float_t v, const string_t&) { return value(v); }
  bool string(string_t& v) { return value(std::move(v)); }
  bool binary(binary_t& v) { return value(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    auto& object = stack_.back()->get_ref<json::object_t&>();
    auto [it, inserted] = object.emplace(k, nullptr);
    if (!inserted) {
      // The lexer stopped after the closing quote: point at the opening one.
      const std::size_t end = offset();
      stop(end >= k.size() + 2 ? end - k.size() - 2 : 0,
           fmt::format("duplicate key \"{}\" (JSON objects must not repeat a key)", shorten(k, 64)));
      return false;
    }
    member_ = &it->second;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while parsing ..." -> the tail.
    auto pos = what.find(": ");
    if (pos == std::string::npos || what.compare(0, 26, "[json.exception.out_of_ran") == 0) pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    // A number out of range (406) is reported after its last digit: point at its first.
    if (e.id == 406 && position >= last_token.size()) position -= last_token.size() - 1;
    stop(position == 0 ? 0 : position - 1, what);
    return false;
  }

  json root;
  std::optional<std::size_t> error_offset;
  std::string error_message;

 private:
  std::size_t offset() const { return static_cast<std::size_t>(*read_up_to_ - begin_); }
  void stop(std::size_t at, std::string message) {
    if (error_offset) return;
    error_offset = at;
    error_message = std::move(message);
  }

  template <class V>
  json* place(V&& v) {
    if (stack_.empty()) {
      root = json(std::forward<V>(v));
      return &root;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.get_ref<json::array_t&>().emplace_back(std::forward<V>(v));
      return &parent.get_ref<json::array_t&>().back();
    }
    *member_ = json(std::forward<V>(v));
    return member_;
  }
  template <class V>
  bool value(V&& v) {
    place(std::forward<V>(v));
    return true;
  }
  bool open(json::value_t type) {
    if (stack_.size() >= kMaxJsonDepth) {
      stop(offset() == 0 ? 0 : offset() - 1, fmt::format("nested deeper than {} levels", kMaxJsonDepth));
      return false;
    }
    stack_.push_back(place(type));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  const char* const* read_up_to_;
  const char* begin_ = *read_up_to_;
  std::vector<json*> stack_;
  json* member_ = nullptr;
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
  auto located = [&](std::size_t offset, std::string message) {
    // "...; last read: 'TOKEN'": the file's own bytes, which may be a secret; the position says where.
    if (const auto token = message.find("; last read: "); token != std::string::npos) message.resize(token);
    auto [line, col] = line_col(text, offset);
    return Error{ErrorCode::parse_error, shorten(message, 300), fmt::format("{}:{}:{}", origin, line, col), {}, {}};
  };
  // UTF-16 and UTF-32 text is full of NUL bytes: say what it is, at its start.
  const bool bom16 = text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'));
  if (bom16 || (text.size() >= 2 && (text[0] == '\0' || text[1] == '\0')))
    return located(0, "UTF-16 or UTF-32 text (NUL bytes, U+0000): JSON files are read as UTF-8");
  // nlohmann stops at a NUL byte as at the end of input: what follows would be dropped unread.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    return located(nul, "a NUL byte (U+0000): a JSON file is text, and nothing after this byte would be read");
  const char* read_up_to = text.data();
  DomBuilder builder(&read_up_to);
  const TrackedIterator first(text.data(), &read_up_to), last(text.data() + text.size(), &read_up_to);
  try {
    json::sax_parse(first, last, &builder, json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    return located(static_cast<std::size_t>(read_up_to - text.data()), e.what());
  }
  if (builder.error_offset) return located(*builder.error_offset, builder.error_message);
  return std::move(builder.root);
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
    std::string got = j.is_number() ? shorten(json_text(j), 40) : std::string(type_name(j));
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
