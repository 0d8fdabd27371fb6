#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "attnsel/suggest.hpp"

namespace attnsel {
namespace detail {
namespace {

// Letters and digits only, lower case: "RTX 5090" and "rtx-5090", "--attention-backend" and
// "attention_backend" compare equal.
std::string squash(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The words of a name: "RTX A6000" -> rtx, a6000; "fp8_e4m3" -> fp8, e4m3.
std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.back().empty()) out.emplace_back();
  }
  if (out.back().empty()) out.pop_back();
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

std::size_t gap(const std::string& a, const std::string& b) { return a.size() > b.size() ? a.size() - b.size() : b.size() - a.size(); }

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// How well `candidate` matches what was typed: (tier, distance), lower is better. The tiers, in
// order: the same name spelled differently; the start of a name (an abbreviation); a whole word of
// it ("A6000" in "RTX A6000"); a part of it; typos, by edit distance, at most a third of the name
// wrong; last, the name inside what was typed.
struct Score {
  int tier;
  std::size_t distance;
  bool operator<(const Score& o) const { return std::tie(tier, distance) < std::tie(o.tier, o.distance); }
};
constexpr int kNoMatch = 99;

Score score(const std::string& needle, const std::vector<std::string>& needle_tokens, std::string_view candidate,
            std::size_t worst_distance) {
  const std::string c = squash(candidate);
  if (c.empty()) return {kNoMatch, 0};
  if (c == needle) return {0, 0};
  if (needle.size() >= 2 && starts_with(c, needle)) return {1, c.size() - needle.size()};
  if (needle.size() >= 2) {
    for (const std::string& t : tokens(candidate))
      if (t == needle || (t.size() > needle.size() && starts_with(t, needle))) return {2, c.size() - needle.size()};
    // Every word typed starts a word of the candidate: "rtx pro" -> "RTX PRO 6000".
    if (needle_tokens.size() > 1) {
      const std::vector<std::string> words = tokens(candidate);
      const auto starts_a_word = [&](const std::string& t) {
        return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return starts_with(w, t); });
      };
      if (std::all_of(needle_tokens.begin(), needle_tokens.end(), starts_a_word)) return {2, gap(c, needle)};
    }
  }
  if (needle.size() >= 3 && c.find(needle) != std::string::npos) return {3, c.size() - needle.size()};
  // The distance is at least the difference in length: skip what cannot be plausible or better,
  // so that a long unknown word costs little against a grammar of hundreds of flags. Three
  // characters or fewer allow one typo ("12x" is not "H20").
  const std::size_t plausible = needle.size() <= 3 ? 1 : std::max<std::size_t>(2, needle.size() / 3);
  if (gap(c, needle) <= std::min(plausible, worst_distance)) {
    const std::size_t d = edit_distance(needle, c);
    if (d <= plausible) return {4, d};
  }
  // Last, a name inside what was typed: "NVIDIA H100 80GB HBM3" -> "H100".
  if (c.size() >= 3 && needle.find(c) != std::string::npos) return {5, needle.size() - c.size()};
  return {kNoMatch, 0};
}

}  // namespace

std::vector<std::string> ranked_matches(std::string_view name, const std::vector<std::string>& candidates,
                                        std::size_t limit) {
  if (name.size() > 256 || limit == 0) return {};  // not a typo
  const std::string needle = squash(name);
  if (needle.empty()) return {};
  const std::vector<std::string> needle_tokens = tokens(name);
  std::vector<std::pair<Score, std::size_t>> found;
  std::size_t worst = std::string::npos;  // the edit distance a new typo match must beat once `limit` are found
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Score s = score(needle, needle_tokens, candidates[i], worst);
    if (s.tier == kNoMatch) continue;
    // The same name twice (an alias spelled differently) is suggested once.
    if (std::any_of(found.begin(), found.end(), [&](const auto& f) { return candidates[f.second] == candidates[i]; })) continue;
    found.emplace_back(s, i);
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (found.size() > limit) found.pop_back();
    if (found.size() == limit && found.back().first.tier == 4) worst = found.back().first.distance;
  }
  std::vector<std::string> out;
  for (const auto& f : found) out.push_back(candidates[f.second]);
  return out;
}

std::string closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  std::vector<std::string> best = ranked_matches(name, candidates, 1);
  return best.empty() ? std::string() : best.front();
}

}  // namespace detail

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  return detail::closest_match(name, candidates);
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates, std::size_t limit) {
  return detail::ranked_matches(name, candidates, limit);
}

}  // namespace attnsel
