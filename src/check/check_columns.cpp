// Columns for check findings: where the flag's token starts on its line, found in the file's text.
// The readers keep lines per argument, not columns (a word may be rebuilt from quoted pieces, a
// YAML scalar or a Markdown block); the flag as written, found once on its line, is certain.
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnsel/check.hpp"

namespace attnsel {
namespace {

// Characters that continue a flag or a word: a flag found next to one is part of something longer.
bool continues_word(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || u >= 0x80;
}

// Characters in `s` counted as a reader of the file counts them (one per code point); -1 when `s`
// is not valid UTF-8 or holds a character outside the BMP (an editor counting UTF-16 units sees two).
int characters(std::string_view s) {
  int n = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    std::size_t len = u < 0x80 ? 1 : (u >> 5) == 0x6 ? 2 : (u >> 4) == 0xE ? 3 : 0;
    if (len == 0 || i + len > s.size()) return -1;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return -1;
    if (len == 2 && u < 0xC2) return -1;  // overlong
    i += len;
    ++n;
  }
  return n;
}

// The whole words of one long line (maximal runs of word characters): where each first occurs, in
// characters (-1 when the text before it cannot be counted), and how often. Built once per line:
// 50,000 findings on one line look their flag up instead of searching the line each.
class LineWords {
 public:
  explicit LineWords(std::string_view line) {
    int chars = 0;
    bool countable = true;
    for (std::size_t i = 0; i < line.size();) {
      if (!continues_word(line[i])) {  // ASCII: one character
        ++chars;
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < line.size() && continues_word(line[j])) ++j;
      auto& w = words_[line.substr(i, j - i)];
      if (w.second++ == 0) w.first = countable ? chars : -1;
      const int n = characters(line.substr(i, j - i));
      if (n < 0) countable = false;
      else chars += n;
      i = j;
    }
  }
  // The column (0-based, in characters) of `word`'s only whole occurrence; -1 when it occurs
  // never, more than once, or after text that cannot be counted.
  int only(std::string_view word) const {
    auto it = words_.find(word);
    return it == words_.end() || it->second.second != 1 ? -1 : it->second.first;
  }

 private:
  std::unordered_map<std::string_view, std::pair<int, int>> words_;
};

constexpr std::size_t kLongLine = 1024;

void locate(CheckDiagnostic& d, const FileLines& lines, std::unordered_map<int, LineWords>& long_lines) {
  d.column = d.end_column = 0;
  std::string_view line;
  if (d.flag.empty() || !lines.get(d.line, line)) return;
  const std::string_view flag = d.flag;
  const int width = characters(flag);
  if (width <= 0) return;
  if (line.size() > kLongLine) {
    // A flag of word characters only is one of the line's words; anything else on a line this
    // long is not searched for (its column stays unknown).
    if (!std::all_of(flag.begin(), flag.end(), continues_word)) return;
    auto it = long_lines.find(d.line);
    if (it == long_lines.end()) it = long_lines.emplace(d.line, LineWords(line)).first;
    const int before = it->second.only(flag);
    if (before < 0) return;
    d.column = before + 1;
    d.end_column = d.column + width;
    return;
  }
  std::size_t found = std::string_view::npos;
  int count = 0;
  for (std::size_t at = line.find(flag); at != std::string_view::npos; at = line.find(flag, at + 1)) {
    const std::size_t end = at + flag.size();
    if (at > 0 && continues_word(line[at - 1])) continue;
    if (end < line.size() && continues_word(line[end])) continue;
    found = at;
    if (++count > 1) return;  // twice on the line: which one is meant is not certain
  }
  if (count != 1) return;
  const int before = characters(line.substr(0, found));
  if (before < 0) return;
  d.column = before + 1;
  d.end_column = d.column + width;
}

}  // namespace

FileLines::FileLines(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) starts_.push_back(i + 1);
}

bool FileLines::get(int line, std::string_view& out) const {
  if (line <= 0 || static_cast<std::size_t>(line) > starts_.size()) return false;
  const std::size_t begin = starts_[static_cast<std::size_t>(line) - 1];
  const std::size_t end =
      static_cast<std::size_t>(line) < starts_.size() ? starts_[static_cast<std::size_t>(line)] - 1 : text_.size();
  if (begin > end) return false;
  out = text_.substr(begin, end - begin);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return true;
}

void locate_columns(std::vector<CommandCheck>& checks, std::string_view file_text) {
  locate_columns(checks, FileLines(file_text));
}

void locate_columns(std::vector<CommandCheck>& checks, const FileLines& lines) {
  std::unordered_map<int, LineWords> long_lines;
  for (CommandCheck& c : checks)
    for (auto* list : {&c.findings, &c.errors, &c.warnings, &c.notes})
      for (CheckDiagnostic& d : *list) locate(d, lines, long_lines);
}

}  // namespace attnsel
