// Values as findings quote them: a value of megabytes (a 60 MB --attention-backend) is quoted by
// its head and length, never whole, so that no message, annotation or report grows with it.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace attnsel::detail {

inline constexpr std::size_t kShownValueBytes = 256;

// The value whole up to kShownValueBytes, else its head (cut between UTF-8 characters) and its size.
inline std::string shown_value(std::string_view value) {
  if (value.size() <= kShownValueBytes) return std::string(value);
  std::size_t cut = kShownValueBytes;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}… ({} bytes)", value.substr(0, cut), value.size());
}

// A finding's message and value with each quotation of a long value shortened to shown_value().
inline void shorten_quotations(std::string& message, std::string& value) {
  if (value.size() <= kShownValueBytes) return;
  const std::string shown = shown_value(value);
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = message.find(value, from)) != std::string::npos; from = at + value.size())
    out.append(message, from, at - from).append(shown);
  message = out.append(message, from, std::string::npos);
  value = shown;
}

}  // namespace attnsel::detail
