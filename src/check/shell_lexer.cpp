#include "check/shell_lexer.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

constexpr int kMaxQuoteNesting = 64;  // "$( "$( ... )" )" in one word

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
      if (i == npos) return npos;
    } else if (c == '`') {
      i = skip_backquote(s, i);
      if (i == npos) return npos;
    } else {
      ++i;
    }
  }
  return npos;
}

// $( ... ), $(( ... )), ${ ... }, <( ... ): from the '$' or '<' to after the matching closer.
std::size_t skip_group(std::string_view s, std::size_t i, int depth) {
  if (depth > kMaxQuoteNesting) return npos;
  const char open = s[i + 1];
  const char close = open == '(' ? ')' : '}';
  int level = 1;
  i += 2;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      i = c == '\'' ? skip_single(s, i) : c == '"' ? skip_double(s, i, depth) : skip_backquote(s, i);
      if (i == npos) return npos;
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
  explicit ShellLexer(std::string_view s) : s_(s) {}

  Lexed run() {
    while (i_ < s_.size() && out_.error.empty()) step();
    if (!out_.error.empty()) return std::move(out_);
    end_command();
    return std::move(out_);
  }

 private:
  enum class Target { none, file, heredoc, heredoc_strip_tabs };
  struct PendingHeredoc {
    std::string delimiter;
    bool strip_tabs = false;
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
    if (target_ == Target::file) {
      target_ = Target::none;  // the file of a redirection is not an argument
    } else if (target_ != Target::none) {
      pending_.push_back({word_, target_ == Target::heredoc_strip_tabs});
      target_ = Target::none;
    } else {
      command_.push_back(Word{std::move(word_), word_begin_});
    }
    word_.clear();
  }

  void end_command() {
    end_word();
    target_ = Target::none;
    if (!command_.empty()) out_.commands.push_back(std::move(command_));
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
          word_ += c;
          ++i_;
        }
        return;
      case '#':
        if (in_word_) break;
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;  // a comment runs to the end of the line
        return;
      case '\n':
        end_command();
        ++i_;
        heredoc_bodies();
        return;
      case ';':
      case '|':
      case '(':
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
        } else {
          redirection();
        }
        return;
      default:
        if (is_blank(c)) {
          end_word();
          ++i_;
          return;
        }
        break;
    }
    start_word();
    word_ += c;
    ++i_;
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
    if (end == npos) return fail(error, i_);
    start_word();
    word_.append(s_.substr(i_ + open_len, end - i_ - open_len - 1));
    i_ = end;
  }

  // Copies $(...), ${...}, `...` and <(...) as written: they are not expanded.
  void literal_group(std::size_t end, const char* error) {
    if (end == npos) return fail(error, i_);
    start_word();
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
        if (end == npos) return fail("unterminated substitution inside double quotes", i_);
        word_.append(s_.substr(i_, end - i_));
        i_ = end;
        continue;
      }
      word_ += c;
      ++i_;
    }
    fail("unterminated double quote", open);
  }

  void ansi_c_quoted() {  // $'...'
    const std::size_t open = i_;
    start_word();
    i_ += 2;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\'') {
        ++i_;
        return;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char d = s_[i_ + 1];
        switch (d) {
          case 'n': word_ += '\n'; break;
          case 't': word_ += '\t'; break;
          case 'r': word_ += '\r'; break;
          case '\\':
          case '\'':
          case '"': word_ += d; break;
          default:
            word_ += c;
            word_ += d;
        }
        i_ += 2;
        continue;
      }
      word_ += c;
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
    Target target = Target::file;
    std::size_t len = 1;
    if (at("&>>")) {
      len = 3;
    } else if (at("&>")) {
      len = 2;
    } else if (at("<<<")) {
      len = 3;  // here-string: its word is data, not an argument
    } else if (at("<<-")) {
      len = 3;
      target = Target::heredoc_strip_tabs;
    } else if (at("<<")) {
      len = 2;
      target = Target::heredoc;
    } else if (at(">>") || at(">&") || at(">|") || at("<&") || at("<>")) {
      len = 2;
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
          out_.heredocs.push_back({body, i_});
          i_ = next;
          closed = true;
          break;
        }
        i_ = next;
      }
      if (!closed) out_.heredocs.push_back({body, s_.size()});
    }
    pending_.clear();
  }

  std::string_view s_;
  std::size_t i_ = 0;
  Lexed out_;
  SimpleCommand command_;
  std::string word_;
  bool in_word_ = false;
  std::size_t word_begin_ = 0;
  Target target_ = Target::none;
  std::vector<PendingHeredoc> pending_;
};

}  // namespace

Lexed lex_shell(std::string_view text) { return ShellLexer(text).run(); }

}  // namespace attnsel::launch_detail
