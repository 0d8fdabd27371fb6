// Columns for check findings: where the flag's token starts on its line, found in the file's text.
// The readers keep lines per argument, not columns (a word may be rebuilt from quoted pieces, a
// YAML scalar or a Markdown block); the flag as written, found once on its line, is certain.
#include <string_view>
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

class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }
  // Line `line` (1-based) without its "\n" and a trailing "\r"; false when there is no such line.
  bool get(int line, std::string_view& out) const {
    if (line <= 0 || static_cast<std::size_t>(line) > starts_.size()) return false;
    const std::size_t begin = starts_[static_cast<std::size_t>(line) - 1];
    std::size_t end = static_cast<std::size_t>(line) < starts_.size() ? starts_[static_cast<std::size_t>(line)] - 1
                                                                      : text_.size();
    if (begin > end) return false;
    out = text_.substr(begin, end - begin);
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    return true;
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
};

void locate(CheckDiagnostic& d, const LineIndex& lines) {
  d.column = d.end_column = 0;
  std::string_view line;
  if (d.flag.empty() || !lines.get(d.line, line)) return;
  const std::string_view flag = d.flag;
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
  const int width = characters(flag);
  if (before < 0 || width <= 0) return;
  d.column = before + 1;
  d.end_column = d.column + width;
}

}  // namespace

void locate_columns(std::vector<CommandCheck>& checks, std::string_view file_text) {
  const LineIndex lines(file_text);
  for (CommandCheck& c : checks)
    for (auto* list : {&c.findings, &c.errors, &c.warnings, &c.notes})
      for (CheckDiagnostic& d : *list) locate(d, lines);
}

}  // namespace attnsel
