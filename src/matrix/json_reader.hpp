// Strict reading of JSON objects: every key is either consumed or reported, every error
// carries the JSON pointer of the offending value. Shared by the matrix, catalog and config readers.
#pragma once

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/error.hpp"

namespace attnsel::detail {

using json = nlohmann::json;

// Thrown inside readers, turned into an Error at the public boundary.
struct ReadError : std::runtime_error {
  ReadError(std::string pointer_, const std::string& message) : std::runtime_error(message), pointer(std::move(pointer_)) {}
  std::string pointer;
};

std::string_view type_name(const json& j);

// Parses text as JSON; syntax errors (and duplicate keys) become parse_error with "origin:line:col".
Result<json> parse_json(std::string_view text, std::string_view origin);

// A view of one JSON object that remembers which keys were read.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string pointer);

  const std::string& pointer() const { return pointer_; }
  std::string child(std::string_view key) const;
  bool has(std::string_view key);
  const json* get(std::string_view key);          // marks the key as read
  const json& require(std::string_view key);      // throws if missing

  std::string string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  bool boolean(std::string_view key, bool fallback);
  std::vector<std::string> strings(std::string_view key);  // a string or an array of strings

  // Throws for every key not read (unknown keys are errors, never ignored).
  void finish() const;

 private:
  const json& j_;
  std::string pointer_;
  std::set<std::string, std::less<>> read_;
  std::set<std::string, std::less<>> asked_;  // every key a reader looked for: the valid ones
};

[[noreturn]] void fail(const std::string& pointer, const std::string& message);
std::string expect_string(const json& j, const std::string& pointer);
int expect_int(const json& j, const std::string& pointer, int min, int max);
std::string escape_pointer(std::string_view key);
// At most `max` characters of `text` for a message, non-printable bytes escaped (\xFF).
std::string shorten(std::string_view text, std::size_t max);

}  // namespace attnsel::detail
