// Finds SGLang launch commands in argv, shell scripts, Dockerfiles, compose/Kubernetes YAML and
// Markdown, and reads their attention flags. No I/O, no printing: callers pass text in and get
// commands or an Error back.
//
// Flag spellings follow SGLang's argparse parser (python/sglang/srt/server_args.py): dashes only,
// `--model` for `--model-path`, `--tp` as argparse's abbreviation of `--tp-size`,
// `--nsa-{prefill,decode}-backend` as deprecated aliases of `--dsa-{prefill,decode}-backend`.
#include "attnsel/launch.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
#include <yaml-cpp/yaml.h>
#define ATTNSEL_LAUNCH_YAML 1
#else
#define ATTNSEL_LAUNCH_YAML 0
#endif

namespace attnsel {
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr int kMaxNesting = 4;       // sh -c inside sh -c, heredocs inside heredocs
constexpr int kMaxQuoteNesting = 64;  // "$( "$( ... )" )" in one word
constexpr int kMaxYamlDepth = 256;

// ---- small string helpers ----

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view ltrim(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

std::string_view rtrim(std::string_view s) {
  std::size_t n = s.size();
  while (n > 0 && is_blank(s[n - 1])) --n;
  return s.substr(0, n);
}

std::string_view trim(std::string_view s) { return rtrim(ltrim(s)); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view basename(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == npos ? path : path.substr(slash + 1);
}

bool mentions_sglang(std::string_view text) { return text.find("sglang") != npos; }

// Physical lines without their "\n" (and without a trailing "\r"), with their offsets.
struct PhysicalLine {
  std::string_view text;
  std::size_t offset = 0;
};

std::vector<PhysicalLine> split_lines(std::string_view text) {
  std::vector<PhysicalLine> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, start});
    start = nl + 1;
  }
  return lines;
}

// ---- source text and where its offsets came from ----

// Maps offsets in a text (possibly rebuilt from pieces of a file) to 1-based lines of the file.
class LineMap {
 public:
  // From `offset` on, the text is line `line` of the file, starting at column `column`.
  void mark(std::size_t offset, int line, std::size_t column = 1) { points_.push_back({offset, line, column}); }

  int line_at(std::size_t offset) const {
    const Point* p = point_at(offset);
    return p ? p->line : 0;
  }
  std::size_t column_at(std::size_t offset) const {
    const Point* p = point_at(offset);
    return p ? offset - p->offset + p->column : offset + 1;
  }

 private:
  struct Point {
    std::size_t offset;
    int line;
    std::size_t column;
  };
  const Point* point_at(std::size_t offset) const {
    auto it = std::upper_bound(points_.begin(), points_.end(), offset,
                               [](std::size_t o, const Point& p) { return o < p.offset; });
    if (it == points_.begin()) return points_.empty() ? nullptr : &points_.front();
    return &*std::prev(it);
  }
  std::vector<Point> points_;
};

struct Source {
  std::string text;
  LineMap lines;

  void append(std::string_view piece, int line, std::size_t column = 1) {
    lines.mark(text.size(), line, column);
    text.append(piece);
  }
};

Source source_of(std::string_view text, int first_line) {
  Source src;
  src.text.reserve(text.size());
  src.lines.mark(0, first_line);
  int line = first_line;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == npos ? text.size() : nl + 1;
    src.append(text.substr(start, end - start), line);
    ++line;
    start = end;
  }
  return src;
}

// ---- shell tokenising ----

struct Word {
  std::string text;       // quotes removed, escapes resolved, $VAR and $(...) kept literally
  std::size_t begin = 0;  // where the word starts in the tokenised text
};
using SimpleCommand = std::vector<Word>;

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct Lexed {
  std::vector<SimpleCommand> commands;  // split at newlines, ; & && || | ( )
  std::vector<Span> heredocs;           // bodies of <<EOF ... EOF, to be searched in turn
  std::string error;                    // "" when the text tokenised
  std::size_t error_at = 0;
};

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

Lexed lex_shell(std::string_view text) { return ShellLexer(text).run(); }

// ---- recognising a launch command in one argv ----

struct ArgWord {
  std::string text;
  int line = 0;
  std::size_t raw = 0;  // where the word was written in the context's source, to locate nested words
};

struct Sink {
  const std::vector<Launcher>* launchers = nullptr;
  std::string file;
  std::vector<LaunchCommand> found;
  std::optional<Error> error;

  void fail(std::string message, int line, std::optional<std::size_t> column = std::nullopt) {
    if (error) return;
    std::string where = file.empty() ? std::string("<command line>") : file;
    if (line > 0) where += ":" + std::to_string(line);
    if (line > 0 && column) where += ":" + std::to_string(*column);
    error = Error{ErrorCode::parse_error, std::move(message), std::move(where), {}, {}};
  }
};

// Finds the words of a nested script (sh -c "...", a YAML string) in the text where they were
// written, in order, so that each gets its own line. A word not written verbatim there (it had
// escapes) keeps the line of the word before it.
class Locator {
 public:
  Locator(const Source* src, std::size_t from, int line) : src_(src), pos_(from), line_(line) {}

  ArgWord next(std::string text) {
    ArgWord w{std::move(text), line_, pos_};
    if (src_ && !w.text.empty() && pos_ < src_->text.size()) {
      // Words of one command sit close together; a bounded window keeps huge inputs linear.
      const std::size_t window = w.text.size() * 5 + 4096;
      const std::size_t at = std::string_view(src_->text).substr(pos_, window).find(w.text);
      if (at != npos) {
        pos_ += at;
        line_ = src_->lines.line_at(pos_);
        w.line = line_;
        w.raw = pos_;
        pos_ += w.text.size();
      }
    }
    return w;
  }

 private:
  const Source* src_;
  std::size_t pos_;
  int line_;
};

bool is_assignment(std::string_view w) {
  if (w.empty() || !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i] == '=') return true;
    if (!(std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_')) return false;
  }
  return false;
}

// python, python3, python3.12
bool is_python(std::string_view base) {
  if (!starts_with(base, "python")) return false;
  for (char c : base.substr(6)) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return false;
  }
  return true;
}

bool is_shell(std::string_view base) {
  return base == "sh" || base == "bash" || base == "dash" || base == "zsh" || base == "ash" ||
         base == "ksh";
}

// Commands that mention a launcher without running it.
bool never_launches(std::string_view base) {
  static constexpr std::string_view kWords[] = {"echo",  "printf", "grep",  "egrep", "fgrep", "rg",
                                                "pgrep", "pkill",  "which", "type",  "man"};
  return std::find(std::begin(kWords), std::end(kWords), base) != std::end(kWords);
}

struct LauncherMatch {
  const Launcher* launcher = nullptr;
  std::string name;  // as written: "python3 -m <module>", "<program> <subcommand>"
  std::size_t args_begin = 0;
};

// The launcher of an engine profile that argv[k] starts, if any.
std::optional<LauncherMatch> match_launcher(const std::vector<ArgWord>& argv, std::size_t k,
                                            const std::vector<Launcher>& launchers) {
  const std::string_view word = argv[k].text;
  const std::string_view base = basename(word);
  const std::size_t n = argv.size();
  for (const Launcher& l : launchers) {
    if (l.program.empty() || base != l.program || k + l.subcommand.size() >= n) continue;
    bool same = true;
    for (std::size_t s = 0; same && s < l.subcommand.size(); ++s) same = argv[k + 1 + s].text == l.subcommand[s];
    if (!same) continue;
    std::string name(base);
    for (const std::string& s : l.subcommand) name += " " + s;
    return LauncherMatch{&l, std::move(name), k + 1 + l.subcommand.size()};
  }
  // An interpreter named by a variable ($PYTHON -m module) counts too.
  if (!is_python(base) && !starts_with(word, "$")) return std::nullopt;
  std::size_t j = k + 1;
  while (j < n && starts_with(argv[j].text, "-") && !starts_with(argv[j].text, "-m")) {
    const std::string& opt = argv[j].text;
    if (opt == "-c" || opt == "-") return std::nullopt;  // python -c CODE, or a script on stdin
    if (opt == "-X" || opt == "-W") ++j;                 // these take a value
    ++j;
  }
  if (j >= n) return std::nullopt;
  std::string module;
  std::size_t next = j + 1;
  if (argv[j].text == "-m") {
    if (j + 1 >= n) return std::nullopt;
    module = argv[j + 1].text;
    next = j + 2;
  } else if (starts_with(argv[j].text, "-m")) {
    module = argv[j].text.substr(2);
  } else {
    return std::nullopt;
  }
  for (const Launcher& l : launchers)
    if (!l.module.empty() && l.module == module) return LauncherMatch{&l, std::string(base) + " -m " + module, next};
  return std::nullopt;
}

// `bash -c SCRIPT`, `sh -lc SCRIPT`, `bash -o pipefail -c SCRIPT`: the index of SCRIPT.
std::optional<std::size_t> match_shell_script(const std::vector<ArgWord>& argv, std::size_t k) {
  if (!is_shell(basename(argv[k].text))) return std::nullopt;
  for (std::size_t j = k + 1; j < argv.size(); ++j) {
    const std::string& t = argv[j].text;
    if (!starts_with(t, "-") || t == "-" || t == "--") return std::nullopt;  // a script file we cannot see
    if (starts_with(t, "--")) continue;                                     // --login, --norc
    if (t.find('c') != npos) return j + 1 < argv.size() ? std::optional<std::size_t>(j + 1) : std::nullopt;
    if (t == "-o") ++j;
  }
  return std::nullopt;
}

enum class OnLexError { fail, fail_if_sglang, ignore };

struct Context {
  const Source* source = nullptr;  // where ArgWord::raw points, for nested scripts
};

void scan_script(const ArgWord& script, const Context& ctx, int depth, OnLexError on_error, Sink& sink);

// One argv (after tokenising): a launch command, a shell running a script, or neither.
void extract(const std::vector<ArgWord>& argv, const Context& ctx, int depth, Sink& sink) {
  std::size_t first = 0;
  while (first < argv.size() && is_assignment(argv[first].text)) ++first;
  if (first == argv.size() || never_launches(basename(argv[first].text))) return;
  for (std::size_t k = first; k < argv.size(); ++k) {
    if (auto launcher = match_launcher(argv, k, *sink.launchers)) {
      LaunchCommand cmd;
      cmd.file = sink.file;
      cmd.line = argv.front().line;
      cmd.launcher = std::move(launcher->name);
      cmd.engine = launcher->launcher->engine;
      cmd.grammar = launcher->launcher->grammar;
      for (std::size_t j = launcher->args_begin; j < argv.size(); ++j) {
        cmd.args.push_back(argv[j].text);
        cmd.arg_lines.push_back(argv[j].line);
      }
      sink.found.push_back(std::move(cmd));
      return;
    }
    if (auto script = match_shell_script(argv, k)) {
      if (depth < kMaxNesting) scan_script(argv[*script], ctx, depth + 1, OnLexError::fail_if_sglang, sink);
      return;
    }
  }
}

// A script given as one word (sh -c "...", a YAML string); its words are found in the context's
// source for their lines.
void scan_script(const ArgWord& script, const Context& ctx, int depth, OnLexError on_error, Sink& sink) {
  const Lexed lexed = lex_shell(script.text);
  if (!lexed.error.empty()) {
    if (on_error == OnLexError::fail || (on_error == OnLexError::fail_if_sglang && mentions_sglang(script.text))) {
      sink.fail(lexed.error + " in a shell script string", script.line);
    }
    return;
  }
  Locator locate(ctx.source, script.raw, script.line);
  for (const SimpleCommand& command : lexed.commands) {
    std::vector<ArgWord> argv;
    for (const Word& w : command) argv.push_back(locate.next(w.text));
    extract(argv, ctx, depth, sink);
  }
}

void scan_shell(const Source& src, int depth, OnLexError on_error, Sink& sink) {
  const Lexed lexed = lex_shell(src.text);
  if (!lexed.error.empty()) {
    if (on_error == OnLexError::fail ||
        (on_error == OnLexError::fail_if_sglang && mentions_sglang(src.text))) {
      sink.fail(lexed.error, src.lines.line_at(lexed.error_at), src.lines.column_at(lexed.error_at));
    }
    return;
  }
  const Context ctx{&src};
  for (const SimpleCommand& command : lexed.commands) {
    std::vector<ArgWord> argv;
    argv.reserve(command.size());
    for (const Word& w : command) argv.push_back(ArgWord{w.text, src.lines.line_at(w.begin), w.begin});
    extract(argv, ctx, depth, sink);
  }
  if (depth >= kMaxNesting) return;
  for (const Span& body : lexed.heredocs) {
    // A heredoc is data (often a script being written out): search it, never fail on it.
    const Source inner = source_of(std::string_view(src.text).substr(body.begin, body.end - body.begin),
                                   src.lines.line_at(body.begin));
    scan_shell(inner, depth + 1, OnLexError::ignore, sink);
  }
}

// ---- Dockerfile ----

// JSON array of strings (exec form), each located in `file` from `from`; nullopt for shell form.
std::optional<std::vector<ArgWord>> exec_form(std::string_view body, const Source& file, std::size_t from,
                                              int line) {
  const std::string_view t = trim(body);
  if (t.empty() || t.front() != '[') return std::nullopt;
  const nlohmann::json parsed = nlohmann::json::parse(t.begin(), t.end(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) return std::nullopt;  // Docker then runs it via sh -c
  std::vector<ArgWord> argv;
  Locator locate(&file, from, line);
  for (const auto& item : parsed) {
    if (!item.is_string()) return std::nullopt;
    argv.push_back(locate.next(item.get<std::string>()));
  }
  return argv;
}

class DockerfileScanner {
 public:
  DockerfileScanner(std::string_view text, int first_line, Sink& sink)
      : file_(source_of(text, first_line)), first_line_(first_line), sink_(sink) {}

  void run() {
    const std::vector<PhysicalLine> lines = split_lines(file_.text);
    std::size_t li = 0;
    auto skippable = [&](std::size_t k) {
      const std::string_view t = ltrim(lines[k].text);
      return t.empty() || t.front() == '#';
    };
    while (li < lines.size()) {
      if (skippable(li)) {
        ++li;
        continue;
      }
      const std::size_t start = li;
      const std::string_view first = ltrim(lines[li].text);
      const std::size_t kw_end = std::min(first.find_first_of(" \t"), first.size());
      const std::string keyword = lower(first.substr(0, kw_end));
      // The logical instruction: `\` continuations joined, comment and empty lines inside dropped.
      Source body;
      std::string_view piece = first.substr(kw_end);
      int piece_line = line_of(li);
      std::size_t piece_column = static_cast<std::size_t>(piece.data() - lines[li].text.data()) + 1;
      ++li;
      for (;;) {
        const std::string_view t = rtrim(piece);
        if (t.empty() || t.back() != '\\') {
          body.append(piece, piece_line, piece_column);
          break;
        }
        body.append(t.substr(0, t.size() - 1), piece_line, piece_column);
        while (li < lines.size() && skippable(li)) ++li;
        if (li >= lines.size()) break;
        piece = lines[li].text;
        piece_line = line_of(li);
        piece_column = 1;
        ++li;
      }
      instruction(keyword, body, lines[start].offset, line_of(start));
    }
    end_stage();
  }

 private:
  struct Held {  // the stage's last CMD or ENTRYPOINT: only the last one runs
    bool set = false;
    std::optional<std::vector<ArgWord>> exec;
    Source shell;
    int line = 0;
    std::size_t offset = 0;
  };

  int line_of(std::size_t index) const { return first_line_ + static_cast<int>(index); }

  void instruction(const std::string& keyword, Source& body, std::size_t offset, int line) {
    if (keyword == "from") {
      end_stage();
      return;
    }
    if (keyword != "run" && keyword != "cmd" && keyword != "entrypoint") return;
    std::optional<std::vector<ArgWord>> exec = exec_form(body.text, file_, offset, line);
    if (keyword == "run") {
      if (exec) {
        extract(*exec, Context{&file_}, 0, sink_);
      } else {
        scan_shell(body, 0, OnLexError::fail_if_sglang, sink_);
      }
      return;
    }
    Held& held = keyword == "cmd" ? cmd_ : entrypoint_;
    held = Held{true, std::move(exec), std::move(body), line, offset};
  }

  // Docker runs ENTRYPOINT with CMD appended when ENTRYPOINT is in exec form (a shell-form CMD
  // becomes /bin/sh -c "..."), ignores CMD under a shell-form ENTRYPOINT, and runs CMD alone.
  void end_stage() {
    if (entrypoint_.set && entrypoint_.exec) {
      std::vector<ArgWord> argv = *entrypoint_.exec;
      if (cmd_.set && cmd_.exec) {
        argv.insert(argv.end(), cmd_.exec->begin(), cmd_.exec->end());
      } else if (cmd_.set) {
        argv.push_back(ArgWord{"/bin/sh", cmd_.line, cmd_.offset});
        argv.push_back(ArgWord{"-c", cmd_.line, cmd_.offset});
        argv.push_back(ArgWord{std::string(trim(cmd_.shell.text)), cmd_.line, cmd_.offset});
      }
      extract(argv, Context{&file_}, 0, sink_);
    } else if (entrypoint_.set) {
      scan_shell(entrypoint_.shell, 0, OnLexError::fail_if_sglang, sink_);
    } else if (cmd_.set && cmd_.exec) {
      extract(*cmd_.exec, Context{&file_}, 0, sink_);
    } else if (cmd_.set) {
      scan_shell(cmd_.shell, 0, OnLexError::fail_if_sglang, sink_);
    }
    entrypoint_ = Held{};
    cmd_ = Held{};
  }

  Source file_;
  int first_line_;
  Sink& sink_;
  Held entrypoint_;
  Held cmd_;
};

// ---- YAML: docker compose and Kubernetes ----

bool yaml_looks_like_compose(std::string_view text) {
  for (const PhysicalLine& l : split_lines(text)) {
    if (starts_with(l.text, "apiVersion:") || starts_with(l.text, "kind:")) return false;
    if (starts_with(l.text, "services:")) return true;
  }
  return false;
}

#if ATTNSEL_LAUNCH_YAML
class YamlScanner {
 public:
  YamlScanner(std::string_view text, int first_line, bool compose, Sink& sink)
      : file_(source_of(text, first_line)), first_line_(first_line), compose_(compose), sink_(sink) {}

  // Reports invalid YAML to the sink when `report` is set.
  void run(bool report) {
    // One document at a time: yaml-cpp 0.7's LoadAll loops forever on some invalid input (","),
    // jbeder/yaml-cpp#1040, fixed upstream by #1319 (2024, after 0.8.0); Load is not affected.
    const std::vector<PhysicalLine> lines = split_lines(file_.text);
    std::size_t doc_begin = 0;
    for (std::size_t k = 0; k <= lines.size(); ++k) {
      const bool marker = k < lines.size() && starts_with(lines[k].text, "---") &&
                          (lines[k].text.size() == 3 || is_blank(lines[k].text[3]));
      if (k < lines.size() && !marker) continue;
      const std::size_t doc_end = k < lines.size() ? lines[k].offset : file_.text.size();
      if (!load(doc_begin, doc_end, report)) return;
      doc_begin = doc_end;
    }
  }

 private:
  bool load(std::size_t begin, std::size_t end, bool report) {
    const std::string_view doc = std::string_view(file_.text).substr(begin, end - begin);
    bool content = false;  // a part with only comments and directives is not a document
    for (const PhysicalLine& l : split_lines(doc)) {
      const std::string_view t = ltrim(l.text);
      content = content || !(t.empty() || t.front() == '#' || t.front() == '%' || starts_with(t, "---"));
    }
    if (!content) return true;
    doc_pos_ = begin;
    doc_line_ = file_.lines.line_at(begin) - first_line_;
    try {
      walk(YAML::Load(std::string(doc)), 0);
    } catch (const YAML::Exception& e) {
      if (!report) return true;
      if (e.mark.is_null()) {
        sink_.fail("invalid YAML: " + e.msg, 0);
      } else {
        sink_.fail("invalid YAML: " + e.msg, first_line_ + doc_line_ + e.mark.line,
                   static_cast<std::size_t>(e.mark.column) + 1);
      }
      return false;
    }
    return true;
  }

  int line_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() ? first_line_ + doc_line_ : first_line_ + doc_line_ + m.line;
  }
  std::size_t pos_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() || m.pos < 0 ? doc_pos_ : doc_pos_ + static_cast<std::size_t>(m.pos);
  }

  // A list of arguments, or a string split the way compose splits it (shell-like, no shell).
  std::vector<ArgWord> words_of(const YAML::Node& node) {
    std::vector<ArgWord> argv;
    if (!node.IsDefined() || node.IsNull()) return argv;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) {
        if (item.IsScalar()) argv.push_back(ArgWord{item.Scalar(), line_of(item), pos_of(item)});
      }
    } else if (node.IsScalar()) {
      const Lexed lexed = lex_shell(node.Scalar());
      if (!lexed.error.empty()) {
        if (mentions_sglang(node.Scalar())) sink_.fail(lexed.error + " in a YAML command string", line_of(node));
        return argv;
      }
      Locator locate(&file_, pos_of(node), line_of(node));
      for (const SimpleCommand& command : lexed.commands) {
        for (const Word& w : command) argv.push_back(locate.next(w.text));
      }
    }
    return argv;
  }

  void walk(const YAML::Node& node, int depth) {
    if (depth > kMaxYamlDepth) return;
    if (node.IsMap()) {
      // compose: entrypoint + command; Kubernetes containers: command + args.
      const char* program_key = compose_ ? "entrypoint" : "command";
      const char* args_key = compose_ ? "command" : "args";
      std::vector<ArgWord> argv = words_of(node[program_key]);
      std::vector<ArgWord> rest = words_of(node[args_key]);
      argv.insert(argv.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
      if (!argv.empty()) extract(argv, Context{&file_}, 0, sink_);
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && (kv.first.Scalar() == program_key || kv.first.Scalar() == args_key)) continue;
        walk(kv.second, depth + 1);
      }
    } else if (node.IsSequence()) {
      for (const YAML::Node& item : node) walk(item, depth + 1);
    } else if (node.IsScalar() && mentions_sglang(node.Scalar())) {
      // Scripts kept in YAML (a ConfigMap's start.sh, a CI step's `run: |`): best effort.
      scan_script(ArgWord{node.Scalar(), line_of(node), pos_of(node)}, Context{&file_}, 1, OnLexError::ignore,
                  sink_);
    }
  }

  Source file_;
  int first_line_;
  bool compose_;
  Sink& sink_;
  std::size_t doc_pos_ = 0;  // where the document being walked starts in file_
  int doc_line_ = 0;         // and its line, relative to first_line_
};
#endif

void scan_yaml(std::string_view text, int first_line, InputFormat format, bool report, Sink& sink) {
#if ATTNSEL_LAUNCH_YAML
  const bool compose = format == InputFormat::compose ||
                       (format != InputFormat::kubernetes && yaml_looks_like_compose(text));
  YamlScanner(text, first_line, compose, sink).run(report);
#else
  (void)text;
  (void)first_line;
  (void)format;
  if (report && !sink.error) {
    sink.error = Error{ErrorCode::invalid_argument,
                       "this build of attnsel has no YAML support (it was built without yaml-cpp); "
                       "compose and Kubernetes files cannot be checked",
                       sink.file, {}, {}};
  }
#endif
}

// ---- Markdown ----

void scan_markdown(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  std::size_t li = 0;
  while (li < lines.size()) {
    const std::string_view line = lines[li].text;
    const std::size_t indent = line.size() - ltrim(line).size();
    const std::string_view rest = line.substr(indent);
    const char fence_char = rest.empty() ? '\0' : rest.front();
    std::size_t fence_len = 0;
    while (fence_len < rest.size() && rest[fence_len] == fence_char) ++fence_len;
    const std::string_view info = trim(rest.substr(fence_len));
    if ((fence_char != '`' && fence_char != '~') || fence_len < 3 ||
        (fence_char == '`' && info.find('`') != npos)) {
      ++li;
      continue;
    }
    std::string lang = lower(info.substr(0, std::min(info.find_first_of(" \t{"), info.size())));
    if (lang.empty() && !info.empty() && info.front() == '{') {  // pandoc: ```{.bash}
      const std::string_view attrs = info.substr(1);
      const std::size_t dot = attrs.find('.');
      if (dot != npos) lang = lower(attrs.substr(dot + 1, attrs.find_first_of(" }", dot) - dot - 1));
    }
    // The block's lines, with the fence's indentation removed; an unclosed block runs to the end.
    const std::size_t first = li + 1;
    std::size_t end = first;
    while (end < lines.size()) {
      const std::string_view t = trim(lines[end].text);
      std::size_t run = 0;
      while (run < t.size() && t[run] == fence_char) ++run;
      if (run >= fence_len && run == t.size()) break;
      ++end;
    }
    std::vector<std::string_view> block;
    for (std::size_t k = first; k < end; ++k) {
      std::string_view l = lines[k].text;
      std::size_t strip = 0;
      while (strip < indent && strip < l.size() && l[strip] == ' ') ++strip;
      block.push_back(l.substr(strip));
    }
    auto column_of = [&](std::string_view piece, std::size_t k) {
      return static_cast<std::size_t>(piece.data() - lines[first + k].text.data()) + 1;
    };
    li = end + 1;
    const int first_line = static_cast<int>(first) + 1;

    const bool shellish = lang.empty() || lang == "bash" || lang == "sh" || lang == "shell" ||
                          lang == "console" || lang == "zsh" || lang == "shell-session" ||
                          lang == "shellsession" || lang == "terminal";
    if (shellish) {
      bool prompts = lang == "console" || lang == "shell-session" || lang == "shellsession";
      for (std::string_view l : block) prompts = prompts || starts_with(ltrim(l), "$ ");
      Source src;
      src.lines.mark(0, first_line);
      bool continuing = false;
      for (std::size_t k = 0; k < block.size(); ++k) {
        const int n = first_line + static_cast<int>(k);
        std::string_view l = block[k];
        if (prompts) {
          // `$ cmd` lines and their `\` continuations are commands; everything else is output.
          const std::string_view t = ltrim(l);
          if (starts_with(t, "$ ")) {
            l = t.substr(2);
          } else if (!continuing) {
            continue;
          }
          continuing = ends_with(rtrim(l), "\\");
        }
        src.append(std::string(l) + "\n", n, column_of(l, k));
      }
      scan_shell(src, 0, OnLexError::fail_if_sglang, sink);
    } else if (lang == "dockerfile" || lang == "docker" || lang == "containerfile") {
      std::string joined;
      for (std::string_view l : block) joined.append(l).append("\n");
      DockerfileScanner(joined, first_line, sink).run();
    } else if (lang == "yaml" || lang == "yml") {
      std::string joined;
      for (std::string_view l : block) joined.append(l).append("\n");
      scan_yaml(joined, first_line, InputFormat::detect, /*report=*/false, sink);  // snippets may be partial
    }
  }
}

// ---- attention flags ----

using ValueField = std::optional<LaunchFlags::Value> LaunchFlags::*;
using BoolField = bool LaunchFlags::*;

struct ValueFlag {
  std::string_view spelling;
  ValueField field;
};

struct BoolFlag {
  std::string_view spelling;
  BoolField field;  // nullptr: a known boolean that attnsel passes over
};

const ValueFlag kValueFlags[] = {
    {"--model-path", &LaunchFlags::model},
    {"--model", &LaunchFlags::model},
    {"--attention-backend", &LaunchFlags::attention_backend},
    {"--prefill-attention-backend", &LaunchFlags::prefill_attention_backend},
    {"--decode-attention-backend", &LaunchFlags::decode_attention_backend},
    {"--page-size", &LaunchFlags::page_size},
    {"--kv-cache-dtype", &LaunchFlags::kv_cache_dtype},
    {"--speculative-algorithm", &LaunchFlags::speculative_algorithm},
    {"--speculative-eagle-topk", &LaunchFlags::speculative_eagle_topk},
    {"--speculative-attention-mode", &LaunchFlags::speculative_attention_mode},
    {"--linear-attn-backend", &LaunchFlags::linear_attn_backend},
    {"--linear-attn-prefill-backend", &LaunchFlags::linear_attn_prefill_backend},
    {"--linear-attn-decode-backend", &LaunchFlags::linear_attn_decode_backend},
    {"--dsa-prefill-backend", &LaunchFlags::nsa_prefill_backend},
    {"--nsa-prefill-backend", &LaunchFlags::nsa_prefill_backend},  // deprecated alias upstream
    {"--dsa-decode-backend", &LaunchFlags::nsa_decode_backend},
    {"--nsa-decode-backend", &LaunchFlags::nsa_decode_backend},  // deprecated alias upstream
    {"--mm-attention-backend", &LaunchFlags::mm_attention_backend},
    {"--tp-size", &LaunchFlags::tp},
    {"--tensor-parallel-size", &LaunchFlags::tp},
    {"--tp", &LaunchFlags::tp},  // argparse's unambiguous abbreviation of --tp-size, used in the docs
    {"--attention-backend-config", &LaunchFlags::attention_backend_config},
    {"--model-kind", &LaunchFlags::model_kind},
    {"--model-type", &LaunchFlags::model_type},
};

const BoolFlag kBoolFlags[] = {
    {"--enable-deterministic-inference", &LaunchFlags::enable_deterministic_inference},
    {"--disable-radix-cache", &LaunchFlags::disable_radix_cache},
    {"--trust-remote-code", nullptr},
    {"--skip-tokenizer-init", nullptr},
    {"--is-embedding", nullptr},
    {"--enable-multimodal", nullptr},
    {"--disable-hybrid-swa-memory", nullptr},
    {"--disable-chunked-prefix-cache", nullptr},
    {"--disable-overlap-schedule", nullptr},
    {"--enable-mixed-chunk", nullptr},
    {"--enable-dp-attention", nullptr},
    {"--enable-dp-lm-head", nullptr},
    {"--enable-p2p-check", nullptr},
    {"--enable-prefill-cp", nullptr},
    {"--enable-metrics", nullptr},
    {"--enable-torch-compile", nullptr},
    {"--enable-nccl-nvls", nullptr},
    {"--enable-symm-mem", nullptr},
    {"--disable-custom-all-reduce", nullptr},
    {"--enable-hierarchical-cache", nullptr},
    {"--enable-hisparse", nullptr},
    {"--enable-multi-layer-eagle", nullptr},
    {"--disable-cuda-graph", nullptr},
    {"--disable-cuda-graph-padding", nullptr},
    {"--disable-prefill-cuda-graph", nullptr},
    {"--disable-decode-cuda-graph", nullptr},
    {"--disable-piecewise-cuda-graph", nullptr},
    {"--disable-flashinfer-autotune", nullptr},
    {"--skip-server-warmup", nullptr},
    {"--log-requests", nullptr},
};

const ValueFlag* find_value_flag(std::string_view spelling) {
  for (const ValueFlag& f : kValueFlags) {
    if (f.spelling == spelling) return &f;
  }
  return nullptr;
}

const BoolFlag* find_bool_flag(std::string_view spelling) {
  for (const BoolFlag& f : kBoolFlags) {
    if (f.spelling == spelling) return &f;
  }
  return nullptr;
}

}  // namespace

// ---- public API ----

std::string_view name_of(InputFormat f) {
  switch (f) {
    case InputFormat::detect: return "detect";
    case InputFormat::shell: return "shell";
    case InputFormat::dockerfile: return "dockerfile";
    case InputFormat::compose: return "compose";
    case InputFormat::kubernetes: return "kubernetes";
    case InputFormat::markdown: return "markdown";
  }
  return "shell";
}

bool yaml_input_supported() { return ATTNSEL_LAUNCH_YAML != 0; }

InputFormat detect_input_format(std::string_view file_name, std::string_view text) {
  const std::string base = lower(basename(file_name));
  if (base == "dockerfile" || base == "containerfile" || starts_with(base, "dockerfile.") ||
      starts_with(base, "containerfile.") || ends_with(base, ".dockerfile") || ends_with(base, ".containerfile")) {
    return InputFormat::dockerfile;
  }
  if (ends_with(base, ".md") || ends_with(base, ".markdown")) return InputFormat::markdown;
  if (ends_with(base, ".yml") || ends_with(base, ".yaml")) {
    if (starts_with(base, "docker-compose") || starts_with(base, "compose")) return InputFormat::compose;
    return yaml_looks_like_compose(text) ? InputFormat::compose : InputFormat::kubernetes;
  }
  return InputFormat::shell;
}

Result<std::vector<LaunchCommand>> find_launch_commands(std::string_view text, std::string_view file_name,
                                                        InputFormat format, const std::vector<Launcher>& launchers) {
  if (format == InputFormat::detect) format = detect_input_format(file_name, text);
  Sink sink;
  sink.launchers = &launchers;
  sink.file = std::string(file_name);
  switch (format) {
    case InputFormat::detect:
    case InputFormat::shell: scan_shell(source_of(text, 1), 0, OnLexError::fail, sink); break;
    case InputFormat::dockerfile: DockerfileScanner(text, 1, sink).run(); break;
    case InputFormat::compose:
    case InputFormat::kubernetes: scan_yaml(text, 1, format, /*report=*/true, sink); break;
    case InputFormat::markdown: scan_markdown(text, sink); break;
  }
  if (sink.error) return *std::move(sink.error);
  std::stable_sort(sink.found.begin(), sink.found.end(),
                   [](const LaunchCommand& a, const LaunchCommand& b) { return a.line < b.line; });
  return std::move(sink.found);
}

Result<LaunchCommand> launch_command_from_argv(const std::vector<std::string>& argv,
                                               const std::vector<Launcher>& launchers) {
  if (argv.empty()) {
    return Error{ErrorCode::invalid_argument,
                 "no command to check: give an SGLang launch command or its flags after --", "", {}, {}};
  }
  // The whole command as one quoted string: tokenise it the way a shell would.
  std::vector<std::vector<ArgWord>> commands;
  if (argv.size() == 1 && argv[0].find_first_of(" \t\n") != std::string::npos) {
    const Lexed lexed = lex_shell(argv[0]);
    if (!lexed.error.empty()) {
      return Error{ErrorCode::parse_error, lexed.error + " in the command", "<command line>", {}, {}};
    }
    for (const SimpleCommand& command : lexed.commands) {
      std::vector<ArgWord> words;
      for (const Word& w : command) words.push_back(ArgWord{w.text, 0, 0});
      commands.push_back(std::move(words));
    }
  } else {
    std::vector<ArgWord> words;
    for (const std::string& a : argv) words.push_back(ArgWord{a, 0, 0});
    commands.push_back(std::move(words));
  }
  for (const std::vector<ArgWord>& words : commands) {
    std::size_t first = 0;
    while (first < words.size() && is_assignment(words[first].text)) ++first;
    if (first < words.size() && starts_with(words[first].text, "-")) {
      LaunchCommand cmd;
      cmd.launcher = "flags";
      for (std::size_t k = first; k < words.size(); ++k) cmd.args.push_back(words[k].text);
      cmd.arg_lines.assign(cmd.args.size(), 0);
      return cmd;
    }
    Sink sink;
    sink.launchers = &launchers;
    extract(words, Context{}, 0, sink);
    if (sink.error) return *std::move(sink.error);
    if (!sink.found.empty()) {
      LaunchCommand cmd = std::move(sink.found.front());
      cmd.line = 0;
      cmd.arg_lines.assign(cmd.args.size(), 0);
      return cmd;
    }
  }
  const std::string shown = argv[0].size() > 80 ? argv[0].substr(0, 77) + "..." : argv[0];
  std::string expected;
  for (const Launcher& l : launchers) {
    if (!expected.empty()) expected += ", ";
    if (l.module.empty()) {
      expected += "`" + l.program;
      for (const std::string& s : l.subcommand) expected += " " + s;
      expected += " ...`";
    } else {
      expected += "`python3 -m " + l.module + " ...`";
    }
  }
  return Error{ErrorCode::invalid_argument,
               "'" + shown + "' does not start a known serving engine: expected " + expected +
                   ", or only its --flags",
               shown, {}, {}};
}

LaunchFlags parse_launch_flags(const LaunchCommand& cmd) {
  LaunchFlags flags;
  const std::vector<std::string>& args = cmd.args;
  auto line_of = [&](std::size_t k) { return k < cmd.arg_lines.size() ? cmd.arg_lines[k] : cmd.line; };
  auto problem = [&](ErrorCode code, std::string message, std::string where, std::size_t k,
                     std::string suggestion = {}) {
    flags.problems.push_back(Error{code, std::move(message), std::move(where), {}, std::move(suggestion)});
    flags.problem_lines.push_back(line_of(k));
  };
  // argparse takes the next token as the value unless it looks like another long option.
  auto takes_value = [&](std::size_t k) { return k < args.size() && !starts_with(args[k], "--"); };

  std::size_t k = 0;
  if (cmd.launcher == "sglang serve" && !args.empty() && !starts_with(args[0], "-")) {
    flags.model = LaunchFlags::Value{args[0], "", line_of(0)};  // `sglang serve MODEL`
    k = 1;
  }
  while (k < args.size()) {
    const std::string& token = args[k];
    const std::size_t at = k++;
    if (!starts_with(token, "-") || token == "-" || token == "--") {
      problem(ErrorCode::invalid_argument,
              "unexpected argument '" + token + "': SGLang takes no positional arguments here and would exit "
              "with 'unrecognized arguments'",
              token, at);
      continue;
    }
    const std::size_t eq = token.find('=');
    const std::string name = token.substr(0, eq);
    const std::optional<std::string> inline_value =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(token.substr(eq + 1));

    auto read_value = [&]() -> std::optional<std::string> {
      if (inline_value) return inline_value;
      if (takes_value(k)) return args[k++];
      return std::nullopt;
    };

    if (const ValueFlag* f = find_value_flag(name)) {
      const std::optional<std::string> value = read_value();
      if (!value) {
        problem(ErrorCode::invalid_argument, name + " needs a value", name, at);
        continue;
      }
      flags.*(f->field) = LaunchFlags::Value{*value, name, line_of(at)};
      if (f->field == &LaunchFlags::model_kind && cmd.launcher != "flags") {
        problem(ErrorCode::invalid_argument,
                "--model-kind is an option of `attnsel check`, not of SGLang, which would reject it; pass it to "
                "attnsel instead",
                name, at);
      }
      continue;
    }
    if (const BoolFlag* f = find_bool_flag(name)) {
      if (inline_value) {
        problem(ErrorCode::invalid_argument, name + " takes no value (SGLang rejects '" + token + "')", name, at);
        continue;
      }
      if (f->field) {
        flags.*(f->field) = true;
      } else {
        flags.ignored.push_back(name);
      }
      continue;
    }
    std::string dashed = name;
    std::replace(dashed.begin() + (starts_with(dashed, "--") ? 2 : 0), dashed.end(), '_', '-');
    if (dashed != name && (find_value_flag(dashed) || find_bool_flag(dashed))) {
      if (find_value_flag(dashed) && !inline_value && takes_value(k)) ++k;  // its value is not a flag
      problem(ErrorCode::unknown_name,
              "SGLang has no flag " + name + ": its flags are spelled with dashes, and it would exit with "
              "'unrecognized arguments'",
              name, at, dashed);
      continue;
    }
    // Unknown to attnsel: pass it over with everything that cannot be a flag (nargs='+' values).
    flags.ignored.push_back(name);
    if (!inline_value) {
      while (takes_value(k)) ++k;
    }
  }
  return flags;
}

}  // namespace attnsel
