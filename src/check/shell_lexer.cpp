#include "check/shell_lexer.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

constexpr int kMaxQuoteNesting = 64;  // "$( "$( ... )" )" in one word
constexpr std::size_t kTooDeep = npos - 1;  // skip_* result: nested deeper than kMaxQuoteNesting

bool failed(std::size_t i) { return i >= kTooDeep; }

bool is_name_char(char c) { return is_alnum(c) || c == '_'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A code point as UTF-8 (the locale bash's $'\u...' writes in on every CI runner); false for one
// that UTF-8 cannot hold (a surrogate, past U+10FFFF: bash writes bytes that are no engine's choice
// either; kept as written here).
bool append_utf8(unsigned long cp, std::string& out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return true;
}

// Characters that the lexer copies into the current word and nothing else: not a quote, escape,
// expansion, operator, redirection, newline or blank. '#' is one inside a word.
struct OrdinaryChars {
  bool table[256] = {};
  constexpr OrdinaryChars() {
    for (int c = 0; c < 256; ++c) table[c] = true;
    for (unsigned char c : std::string_view("\\'\"`$\n();|&<> \t\r\f\v")) table[c] = false;
  }
  bool operator()(char c) const { return table[static_cast<unsigned char>(c)]; }
};
constexpr OrdinaryChars kOrdinary;

// Past a comment that starts at i: at its newline, or the end of the text.
std::size_t comment_end(std::string_view s, std::size_t i) {
  const std::size_t nl = s.find('\n', i);
  return nl == npos ? s.size() : nl;
}

// After `<<` or `<<-` inside $( ... ): the delimiter word, its end, and whether tabs are stripped.
struct InnerHeredoc {
  std::string delimiter;
  bool strip_tabs = false;
};

std::size_t read_heredoc_operator(std::string_view s, std::size_t i, std::vector<InnerHeredoc>& pending) {
  InnerHeredoc h;
  i += 2;
  if (i < s.size() && s[i] == '-') {
    h.strip_tabs = true;
    ++i;
  }
  while (i < s.size() && is_blank(s[i])) ++i;
  while (i < s.size() && !is_blank(s[i]) && s[i] != '\n' && s[i] != ';' && s[i] != '|' && s[i] != '&' &&
         s[i] != ')' && s[i] != '(' && s[i] != '<' && s[i] != '>') {
    const char c = s[i];
    if (c == '\'' || c == '"') {
      const std::size_t close = s.find(c, i + 1);
      if (close == npos) return npos;
      h.delimiter.append(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if (c == '\\' && i + 1 < s.size()) {
      h.delimiter += s[i + 1];
      i += 2;
    } else {
      h.delimiter += c;
      ++i;
    }
  }
  if (!h.delimiter.empty()) pending.push_back(std::move(h));
  return i;
}

// At the start of the line after a `<<END` inside $( ... ): past the bodies; npos when unclosed.
std::size_t skip_heredoc_bodies(std::string_view s, std::size_t i, std::vector<InnerHeredoc>& pending) {
  for (const InnerHeredoc& h : pending) {
    bool closed = false;
    while (i < s.size() && !closed) {
      std::size_t nl = s.find('\n', i);
      if (nl == npos) nl = s.size();
      std::string_view line = s.substr(i, nl - i);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (h.strip_tabs)
        while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
      closed = line == h.delimiter;
      i = nl < s.size() ? nl + 1 : s.size();
    }
    if (!closed) return npos;
  }
  pending.clear();
  return i;
}

std::size_t skip_group(std::string_view s, std::size_t i, int depth);

std::size_t skip_single(std::string_view s, std::size_t i) {
  const std::size_t close = s.find('\'', i + 1);
  return close == npos ? npos : close + 1;
}

std::size_t skip_backquote(std::string_view s, std::size_t i) {
  ++i;
  while (i < s.size() && s[i] != '`') i += s[i] == '\\' ? 2 : 1;
  return i < s.size() ? i + 1 : npos;
}

std::size_t skip_double(std::string_view s, std::size_t i, int depth) {
  ++i;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\') {
      i += 2;
    } else if (c == '"') {
      return i + 1;
    } else if (c == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
      i = skip_group(s, i, depth + 1);
      if (failed(i)) return i;
    } else if (c == '`') {
      i = skip_backquote(s, i);
      if (failed(i)) return i;
    } else {
      ++i;
    }
  }
  return npos;
}

// $( ... ), $(( ... )), ${ ... }, <( ... ): from the '$' or '<' to after the matching closer.
std::size_t skip_group(std::string_view s, std::size_t i, int depth) {
  if (depth > kMaxQuoteNesting) return kTooDeep;
  const char open = s[i + 1];
  const char close = open == '(' ? ')' : '}';
  int level = 1;
  std::vector<InnerHeredoc> heredocs;  // $(cat <<END ... END): the bodies are data, quotes and all
  const bool command = open == '(' && !(i + 2 < s.size() && s[i + 2] == '(');  // not $(( arithmetic ))
  i += 2;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (command && c == '<' && i + 1 < s.size() && s[i + 1] == '<' && (i + 2 >= s.size() || s[i + 2] != '<')) {
      i = read_heredoc_operator(s, i, heredocs);
      if (failed(i)) return i;
      continue;
    }
    if (c == '\n' && !heredocs.empty()) {
      i = skip_heredoc_bodies(s, i + 1, heredocs);
      if (failed(i)) return i;
      continue;
    }
    if (command && c == '#' && (i == 0 || is_blank(s[i - 1]) || s[i - 1] == '\n' || s[i - 1] == '(')) {
      i = comment_end(s, i);  // a comment: its quotes are not quotes
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      i = c == '\'' ? skip_single(s, i) : c == '"' ? skip_double(s, i, depth) : skip_backquote(s, i);
      if (failed(i)) return i;
      continue;
    }
    if (c == open) {
      ++level;
    } else if (c == close && --level == 0) {
      return i + 1;
    }
    ++i;
  }
  return npos;
}

// A POSIX-shell-style tokeniser, enough to read launch scripts: quotes, escapes, line
// continuations, comments, operators, redirections and heredocs. It does not expand anything.
class ShellLexer {
 public:
  explicit ShellLexer(std::string_view s, const std::function<void(SimpleCommand&)>* on_command = nullptr)
      : s_(s), on_command_(on_command) {}

  Lexed run() {
    while (i_ < s_.size() && out_.error.empty()) step();
    if (!out_.error.empty()) return std::move(out_);
    end_command();
    return std::move(out_);
  }

 private:
  enum class Target { none, file, output_file, heredoc, heredoc_strip_tabs };
  struct PendingHeredoc {
    std::string delimiter;
    bool strip_tabs = false;
    bool expands = false;  // the delimiter is written without quotes or backslashes
    std::string writes;    // Span::writes, known when its command ends
  };

  bool at(std::string_view p) const { return s_.substr(i_, p.size()) == p; }
  char peek(std::size_t ahead) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  void fail(std::string message, std::size_t where) {
    if (out_.error.empty()) {
      out_.error = std::move(message);
      out_.error_at = where;
    }
  }

  void start_word() {
    if (!in_word_) {
      in_word_ = true;
      word_begin_ = i_;
    }
  }

  void end_word() {
    if (!in_word_) return;
    in_word_ = false;
    if (target_ == Target::file || target_ == Target::output_file) {
      if (target_ == Target::output_file) output_file_ = word_;
      target_ = Target::none;  // the file of a redirection is not an argument
    } else if (target_ != Target::none) {
      const bool quoted = s_.substr(word_begin_, i_ - word_begin_).find_first_of("'\"\\") != npos;
      pending_.push_back({word_, target_ == Target::heredoc_strip_tabs, !quoted, {}});
      target_ = Target::none;
    } else {
      command_.push_back(Word{std::move(word_), word_begin_, shape_, false, {}});
    }
    word_.clear();
    shape_ = WordShape::literal;
  }

  void end_command() {
    end_word();
    target_ = Target::none;
    // The heredocs of this command are written to a file by `cat > FILE` or `tee FILE`.
    if (first_pending_ < pending_.size() && !command_.empty()) {
      std::string writes;
      if (command_[0].text == "cat") writes = output_file_;
      if (command_[0].text == "tee")
        for (std::size_t k = 1; k < command_.size() && writes.empty(); ++k)
          if (!command_[k].text.empty() && command_[k].text[0] != '-') writes = command_[k].text;
      for (std::size_t k = first_pending_; k < pending_.size(); ++k) pending_[k].writes = writes;
    }
    first_pending_ = pending_.size();
    output_file_.clear();
    if (command_.empty()) return;
    if (on_command_) {
      (*on_command_)(command_);
    } else {
      out_.commands.push_back(std::move(command_));
    }
    command_.clear();
  }

  void step() {
    const char c = s_[i_];
    switch (c) {
      case '\\': backslash(); return;
      case '\'': quoted(skip_single(s_, i_), "unterminated single quote", 1); return;
      case '"': double_quoted(); return;
      case '`': literal_group(skip_backquote(s_, i_), "unterminated backquote"); return;
      case '$':
        if (peek(1) == '\'') {
          ansi_c_quoted();
        } else if (peek(1) == '(' || peek(1) == '{') {
          literal_group(skip_group(s_, i_, 0), peek(1) == '(' ? "unterminated $(" : "unterminated ${");
        } else {
          start_word();
          if (is_name_char(peek(1)) || peek(1) == '@' || peek(1) == '*' || peek(1) == '#' || peek(1) == '?' ||
              peek(1) == '!')
            shape_ = WordShape::words;  // unquoted: empty, one or several words after splitting
          word_ += c;
          ++i_;
        }
        return;
      case '#':
        if (in_word_) break;
        i_ = comment_end(s_, i_);  // a comment runs to the end of the line
        return;
      case '\n':
        end_command();
        ++i_;
        heredoc_bodies();
        return;
      case '(':
        if (in_word_ && at_array_assignment()) return array();
        end_command();
        ++i_;
        return;
      case ';':
      case '|':
      case ')':
        end_command();
        ++i_;
        return;
      case '&':
        if (peek(1) == '>') {
          redirection();
        } else {
          end_command();
          ++i_;
        }
        return;
      case '<':
      case '>':
        if (peek(1) == '(') {
          literal_group(skip_group(s_, i_, 0), "unterminated process substitution");
        } else if (c == '<' && placeholder_end() != npos) {
          // A documentation placeholder (<model-path>, <your token>), not a redirection.
          const std::size_t end = placeholder_end();
          start_word();
          shape_ = widen(shape_, WordShape::value);
          word_.append(s_.substr(i_, end - i_));
          i_ = end;
        } else {
          redirection();
        }
        return;
      default:
        if (is_blank(c)) {
          end_word();
          do ++i_;
          while (i_ < s_.size() && is_blank(s_[i_]));  // the blanks after it end nothing more
          return;
        }
        break;
    }
    start_word();
    // The ordinary characters after it join the word at once, as one step each would add them.
    std::size_t end = i_ + 1;
    while (end < s_.size() && kOrdinary(s_[end])) ++end;
    word_.append(s_.data() + i_, end - i_);
    i_ = end;
  }

  static std::string too_deep() {
    return "substitutions nested more than " + std::to_string(kMaxQuoteNesting) + " deep";
  }

  // "${A[@]}", "${@}", "${A[@]:1}": a quoted expansion that still yields several words.
  static bool splices(std::string_view group) {
    return group.size() > 3 && group[1] == '{' &&
           (group.find("[@]") != npos || group.substr(2, 1) == "@");
  }

  // <word> or <several words> up to a '>' on the same line, starting with a letter: a placeholder.
  std::size_t placeholder_end() const {
    if (in_word_ || !std::isalpha(static_cast<unsigned char>(peek(1)))) return npos;
    for (std::size_t j = i_ + 1; j < s_.size() && j < i_ + 80; ++j) {
      const char d = s_[j];
      if (d == '>') return j + 1 < s_.size() && !is_blank(s_[j + 1]) && s_[j + 1] != '\n' && s_[j + 1] != '\\' &&
                                   s_[j + 1] != ';' && s_[j + 1] != '"' && s_[j + 1] != '\''
                               ? npos
                               : j + 1;
      if (d == '\n' || d == '<' || d == '|' || d == ';' || d == '&' || d == '$' || d == '"' || d == '\'') return npos;
    }
    return npos;
  }

  // NAME=( or NAME+=(, written unquoted.
  bool at_array_assignment() const {
    if (i_ < word_begin_ || i_ - word_begin_ != word_.size() || word_.size() < 2 || word_.back() != '=') return false;
    std::string_view name(word_);
    name.remove_suffix(1);
    if (!name.empty() && name.back() == '+') name.remove_suffix(1);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(), is_name_char);
  }

  // The words of NAME=( ... ), over as many lines as it takes, comments allowed.
  void array() {
    const std::size_t end = skip_group(s_, i_ - 1, 0);  // skip_group reads the opener at s_[i_]
    if (end == kTooDeep) return fail(too_deep(), i_);
    if (end == npos) return fail("unterminated array assignment (", i_);
    Word w{std::move(word_), word_begin_, WordShape::literal, true, {}};
    const std::size_t inner = i_ + 1;
    Lexed elements = ShellLexer(s_.substr(inner, end - 1 - inner)).run();
    if (!elements.error.empty()) return fail(elements.error, inner + elements.error_at);
    for (SimpleCommand& c : elements.commands) {
      for (Word& e : c) {
        e.begin += inner;
        w.elements.push_back(std::move(e));
      }
    }
    word_.clear();
    in_word_ = false;
    shape_ = WordShape::literal;
    i_ = end;
    if (target_ == Target::none) command_.push_back(std::move(w));
  }

  void backslash() {
    if (i_ + 1 >= s_.size()) {  // a lone backslash at the very end escapes nothing
      ++i_;
      return;
    }
    if (peek(1) == '\n') {
      i_ += 2;  // line continuation
      return;
    }
    if (peek(1) == '\r' && peek(2) == '\n') {
      i_ += 3;
      return;
    }
    start_word();
    word_ += s_[i_ + 1];
    i_ += 2;
  }

  // Copies the inside of a '...' quote: `end` is after the closing quote.
  void quoted(std::size_t end, const char* error, std::size_t open_len) {
    if (failed(end)) return fail(error, i_);
    start_word();
    word_.append(s_.substr(i_ + open_len, end - i_ - open_len - 1));
    i_ = end;
  }

  // Copies $(...), ${...}, `...` and <(...) as written: they are not expanded.
  void literal_group(std::size_t end, const char* error) {
    if (end == kTooDeep) return fail(too_deep(), i_);
    if (end == npos) return fail(error, i_);
    start_word();
    shape_ = WordShape::words;  // unquoted: the shell splits what it yields
    word_.append(s_.substr(i_, end - i_));
    i_ = end;
  }

  void double_quoted() {
    const std::size_t open = i_;
    start_word();
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char d = s_[i_ + 1];
        if (d == '\n') {
          i_ += 2;
        } else if (d == '\r' && peek(2) == '\n') {
          i_ += 3;
        } else if (d == '$' || d == '`' || d == '"' || d == '\\') {
          word_ += d;
          i_ += 2;
        } else {
          word_ += c;
          ++i_;
        }
        continue;
      }
      if ((c == '$' && (peek(1) == '(' || peek(1) == '{')) || c == '`') {
        const std::size_t end = c == '`' ? skip_backquote(s_, i_) : skip_group(s_, i_, 0);
        if (end == kTooDeep) return fail(too_deep(), i_);
        if (end == npos) return fail("unterminated substitution inside double quotes", i_);
        const std::string_view group = s_.substr(i_, end - i_);
        shape_ = widen(shape_, splices(group) ? WordShape::words : WordShape::value);
        word_.append(group);
        i_ = end;
        continue;
      }
      if (c == '$' && (is_name_char(peek(1)) || peek(1) == '@' || peek(1) == '*' || peek(1) == '#' ||
                       peek(1) == '?' || peek(1) == '!')) {
        shape_ = widen(shape_, peek(1) == '@' ? WordShape::words : WordShape::value);  // "$@" stays many words
      }
      // Up to the next character this loop treats specially, copied at once.
      std::size_t end = i_ + 1;
      while (end < s_.size() && s_[end] != '"' && s_[end] != '\\' && s_[end] != '$' && s_[end] != '`') ++end;
      word_.append(s_.data() + i_, end - i_);
      i_ = end;
    }
    fail("unterminated double quote", open);
  }

  void ansi_c_quoted() {  // $'...', with bash's escapes; a NUL byte ends the word's value, as in bash
    const std::size_t open = i_;
    start_word();
    i_ += 2;
    bool ended = false;  // after \0: the rest up to the quote is dropped
    const auto put = [&](char c) {
      if (c == '\0') ended = true;
      if (!ended) word_ += c;
    };
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\'') {
        ++i_;
        return;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char d = s_[i_ + 1];
        i_ += 2;
        switch (d) {
          case 'n': put('\n'); break;
          case 't': put('\t'); break;
          case 'r': put('\r'); break;
          case 'a': put('\a'); break;
          case 'b': put('\b'); break;
          case 'e':
          case 'E': put('\x1b'); break;
          case 'f': put('\f'); break;
          case 'v': put('\v'); break;
          case '\\':
          case '\'':
          case '"':
          case '?': put(d); break;
          case 'c':  // \cX: control-X
            if (i_ < s_.size()) {
              const char x = s_[i_++];
              put(x == '?' ? '\x7f' : static_cast<char>(std::toupper(static_cast<unsigned char>(x)) & 0x1F));
            } else {
              put('\\');
              put('c');
            }
            break;
          case 'x':
          case 'u':
          case 'U': {  // 1-2, 1-4 or 1-8 hexadecimal digits
            const std::size_t most = d == 'x' ? 2 : d == 'u' ? 4 : 8;
            unsigned long value = 0;
            std::size_t n = 0;
            while (n < most && i_ + n < s_.size() && hex_digit(s_[i_ + n]) >= 0)
              value = value * 16 + static_cast<unsigned long>(hex_digit(s_[i_ + n++]));
            std::string bytes;
            bool encoded = n > 0;
            if (encoded && d == 'x') bytes += static_cast<char>(value);
            else if (encoded) encoded = append_utf8(value, bytes);
            if (!encoded) bytes = std::string("\\") + d + std::string(s_.substr(i_, n));  // as bash keeps it
            for (char b : bytes) put(b);
            i_ += n;
            break;
          }
          default:
            if (d >= '0' && d <= '7') {  // \nnn: one to three octal digits
              unsigned value = static_cast<unsigned>(d - '0');
              for (int n = 1; n < 3 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++n)
                value = value * 8 + static_cast<unsigned>(s_[i_++] - '0');
              put(static_cast<char>(value & 0xFF));
            } else {
              put(c);
              put(d);
            }
        }
        continue;
      }
      put(c);
      ++i_;
    }
    fail("unterminated $'...' quote", open);
  }

  void redirection() {
    if (in_word_) {
      // "2>" : a file descriptor number belongs to the operator, not to the command.
      const bool fd = !word_.empty() && i_ - word_begin_ == word_.size() &&
                      std::all_of(word_.begin(), word_.end(),
                                  [](char d) { return std::isdigit(static_cast<unsigned char>(d)) != 0; });
      if (fd) {
        in_word_ = false;
        word_.clear();
      } else {
        end_word();
      }
    }
    Target target = s_[i_] == '>' ? Target::output_file : Target::file;
    std::size_t len = 1;
    if (at("&>>")) {
      len = 3;
      target = Target::output_file;
    } else if (at("&>")) {
      len = 2;
      target = Target::output_file;
    } else if (at("<<<")) {
      len = 3;  // here-string: its word is data, not an argument
    } else if (at("<<-")) {
      len = 3;
      target = Target::heredoc_strip_tabs;
    } else if (at("<<")) {
      len = 2;
      target = Target::heredoc;
    } else if (at(">>") || at(">|")) {
      len = 2;
    } else if (at(">&") || at("<&") || at("<>")) {
      len = 2;
      target = Target::file;
    }
    i_ += len;
    target_ = target;
  }

  // After the newline that ends a line with <<EOF: skip the bodies, remembering where they are.
  void heredoc_bodies() {
    for (const PendingHeredoc& h : pending_) {
      const std::size_t body = i_;
      bool closed = false;
      while (i_ < s_.size()) {
        std::size_t nl = s_.find('\n', i_);
        if (nl == npos) nl = s_.size();
        std::string_view line = s_.substr(i_, nl - i_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (h.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        const std::size_t next = nl < s_.size() ? nl + 1 : s_.size();
        if (line == h.delimiter) {
          out_.heredocs.push_back({body, i_, h.expands, h.writes});
          i_ = next;
          closed = true;
          break;
        }
        i_ = next;
      }
      if (!closed) out_.heredocs.push_back({body, s_.size(), h.expands, h.writes});
    }
    pending_.clear();
    first_pending_ = 0;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  Lexed out_;
  SimpleCommand command_;
  std::string word_;
  bool in_word_ = false;
  WordShape shape_ = WordShape::literal;
  std::size_t word_begin_ = 0;
  Target target_ = Target::none;
  std::vector<PendingHeredoc> pending_;
  std::size_t first_pending_ = 0;  // the pending heredocs of the command being read start here
  std::string output_file_;        // the command's `> FILE`, for its heredocs
  const std::function<void(SimpleCommand&)>* on_command_ = nullptr;
};

}  // namespace

char open_quote_after(std::string_view line, char open) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (open == '\'') {
      if (c == '\'') open = 0;
    } else if (c == '\\') {
      ++i;  // escaped, in double quotes too (\" \\ \$)
    } else if (open == '"') {
      if (c == '"') open = 0;
    } else if (c == '\'' || c == '"') {
      open = c;
    } else if (c == '#' && (i == 0 || is_blank(line[i - 1]))) {
      break;  // a comment
    }
  }
  return open;
}

Lexed lex_shell(std::string_view text) { return ShellLexer(text).run(); }

Lexed lex_shell(std::string_view text, const std::function<void(SimpleCommand&)>& on_command) {
  return ShellLexer(text, &on_command).run();
}

}  // namespace attnsel::launch_detail
