#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace attnsel::detail {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.size() > 256) return {};  // not a typo
  const std::string needle = lower(name);
  // Plausible: at most a third of the name wrong.
  const std::size_t plausible = std::max<std::size_t>(2, needle.size() / 3);
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& candidate : candidates) {
    const std::string c = lower(candidate);
    const bool prefix = c.rfind(needle, 0) == 0 && needle.size() >= 3;
    // The distance is at least the difference in length: skip what cannot be plausible or better,
    // so that a long unknown word costs little against a grammar of hundreds of flags.
    const std::size_t gap = c.size() > needle.size() ? c.size() - needle.size() : needle.size() - c.size();
    if (!prefix && (gap > plausible || gap >= best_distance)) continue;
    std::size_t d = prefix ? (c == needle ? 0 : 1) : edit_distance(needle, c);
    // A prefix ("flash" -> "flashinfer") is as good as one typo.
    if (prefix) d = std::min<std::size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (best_distance == std::string::npos || best_distance > plausible) return {};
  return best;
}

}  // namespace attnsel::detail
