// Errors are values at the library boundary: a code, a message and where it happened.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "attnsel/export.hpp"

namespace attnsel {

enum class ErrorCode {
  invalid_argument,  // a value the caller passed is malformed (a CUDA version "12.x")
  unknown_name,      // a backend, GPU, dtype ... name that is not in the matrix or catalog
  parse_error,       // input is not valid JSON (where = file:line:col)
  invalid_matrix,    // the matrix is well-formed JSON but wrong (where = JSON pointer)
  io_error,          // a file could not be read
  no_device,         // probing found no usable GPU
};

struct Error {
  ErrorCode code = ErrorCode::invalid_argument;
  std::string message;
  std::string where;                // "file:line:col", "file#/json/pointer", or a flag name
  std::vector<std::string> choices;  // valid names, for unknown_name
  std::string suggestion;            // the closest valid name, if any is close

  // One line for people: "where: message (did you mean 'x'?)".
  ATTNSEL_API std::string describe() const;
};

// A value or an Error. Small on purpose: C++17 has no std::expected.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}   // NOLINT(google-explicit-constructor)
  // The value, constructed in place (no move of a large T).
  template <class... Args>
  explicit Result(std::in_place_t, Args&&... args) : v_(std::in_place_index<0>, std::forward<Args>(args)...) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace attnsel
