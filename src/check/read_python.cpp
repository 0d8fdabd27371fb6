// Python launchers: argv lists (subprocess.run([...]), Popen(cmd), cmd = [...]; cmd += [...];
// cmd.extend([...]); cmd.append(x)) and command strings (os.system("..."), shlex.split(f"..."),
// subprocess.run("...", shell=True)). A token reader, not a Python parser: string literals and
// list displays are read; every other expression is an unknown value.
#include <map>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

constexpr std::size_t kMaxListWords = 4096;

struct Token {
  enum class Kind { string, name, op } kind = Kind::op;
  std::string text;      // a string's value (escapes of \" \' \\ \n resolved), a name, an operator
  bool fstring = false;  // f"..." : its {expr} are values
  std::size_t offset = 0;
  int line = 0;
};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

// The string literal whose quote is at s[i] (`prefix` as written before it: r, b, f, u), read up
// to its closing quote; `i` and `line` move past it.
Token read_string(std::string_view s, std::size_t& i, int& line, const std::string& prefix) {
  Token t{Token::Kind::string, {}, prefix.find('f') != npos, i - prefix.size(), line};
  const bool raw = prefix.find('r') != npos;
  const char q = s[i];
  const bool triple = s.substr(i, 3) == std::string(3, q);
  i += triple ? 3 : 1;
  while (i < s.size()) {
    if (triple ? s.substr(i, 3) == std::string(3, q) : s[i] == q) {
      i += triple ? 3 : 1;
      break;
    }
    if (!triple && s[i] == '\n') break;  // unterminated
    if (s[i] == '\n') ++line;
    if (s[i] == '\\' && !raw && i + 1 < s.size()) {
      const char d = s[i + 1];
      if (d == '\n') {  // a backslash-newline joins the lines: neither is in the string
        ++line;
        i += 2;
        continue;
      }
      t.text += d == 'n' ? '\n' : d == 't' ? '\t' : d;
      i += 2;
      continue;
    }
    t.text += s[i++];
  }
  return t;
}

// Tokens of a Python text; comments dropped. Unterminated strings run to the end of the text.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  int line = 1;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (is_blank(c) || c == '\\') {
      ++i;
    } else if (is_name_char(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      const std::string_view word = s.substr(i, j - i);
      const std::string prefix = lower(word);
      const bool string_prefix = j < s.size() && (s[j] == '"' || s[j] == '\'') && prefix.size() <= 2 &&
                                 prefix.find_first_not_of("rbfu") == npos;
      if (!string_prefix) {
        out.push_back(Token{Token::Kind::name, std::string(word), false, i, line});
        i = j;
        continue;
      }
      i = j;
      out.push_back(read_string(s, i, line, prefix));
    } else if (c == '"' || c == '\'') {
      out.push_back(read_string(s, i, line, ""));
    } else {
      out.push_back(Token{Token::Kind::op, std::string(1, c), false, i, line});
      ++i;
    }
  }
  return out;
}

// A name the file binds to a string: MODEL = "x" (literal), or os.environ.get("K", "x") /
// os.getenv("K", "x") (the default, a value).
struct Constant {
  std::string text;
  WordShape shape = WordShape::literal;
};
using Constants = std::map<std::string, Constant, std::less<>>;

// f"...{expr}..." as a shell word: {NAME} of a known constant is its text, any other {expr}
// becomes ${expr}, an unknown value; {{ }} are braces.
std::string fstring_as_shell(std::string_view text, const Constants& constants) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) {
      out += text[i++];
    } else if (text[i] == '{') {
      const std::size_t close = text.find('}', i);
      const std::string_view field = close == npos ? std::string_view() : text.substr(i + 1, close - i - 1);
      auto it = constants.find(field);
      if (it != constants.end() && it->second.shape == WordShape::literal) {
        out += it->second.text;
        i = close;
      } else {
        out += "${";
      }
    } else {
      out += text[i];
    }
  }
  return out;
}

// A decimal integer literal (8, 1_000) as str() writes it; nullopt for anything else.
std::optional<std::string> int_literal(std::string_view t) {
  std::string digits;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] >= '0' && t[k] <= '9') {
      digits += t[k];
    } else if (t[k] != '_' || k == 0 || k + 1 == t.size() || t[k + 1] == '_') {
      return std::nullopt;
    }
  }
  if (digits.empty() || digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  return digits;
}

class PythonScanner {
 public:
  PythonScanner(std::string_view text, Sink& sink) : src_(source_of(text, 1)), sink_(sink), toks_(tokenize(text)) {
    depth_.reserve(toks_.size());
    int depth = 0;
    for (const Token& t : toks_) {
      depth_.push_back(depth);
      if (t.kind != Token::Kind::op) continue;
      if (t.text[0] == '(' || t.text[0] == '[' || t.text[0] == '{') ++depth;
      if ((t.text[0] == ')' || t.text[0] == ']' || t.text[0] == '}') && depth > 0) --depth;
    }
  }

  void run() {
    for (std::size_t i = 0; i < toks_.size();) i = statement_part(i);
    for (auto& [name, list] : lists_) emit(list);
  }

 private:
  bool op(std::size_t i, char c) const {
    return i < toks_.size() && toks_[i].kind == Token::Kind::op && toks_[i].text.size() == 1 && toks_[i].text[0] == c;
  }
  bool name(std::size_t i) const { return i < toks_.size() && toks_[i].kind == Token::Kind::name; }

  // The index after the bracket that closes the one at i.
  std::size_t close_of(std::size_t i) const {
    int depth = 0;
    for (std::size_t j = i; j < toks_.size(); ++j) {
      if (toks_[j].kind != Token::Kind::op) continue;
      const char c = toks_[j].text[0];
      if (c == '[' || c == '(' || c == '{') ++depth;
      if ((c == ']' || c == ')' || c == '}') && --depth == 0) return j + 1;
    }
    return toks_.size();
  }

  // The elements of the list display [ ... ] starting at i.
  std::vector<ArgWord> list_at(std::size_t i, std::size_t end) const {
    std::vector<ArgWord> words;
    std::size_t k = i + 1;
    const std::size_t last = end > i + 1 ? end - 1 : end;
    while (k < last) {
      std::size_t e = k;
      int depth = 0;
      while (e < last && !(depth == 0 && op(e, ','))) {
        if (toks_[e].kind == Token::Kind::op) {
          const char c = toks_[e].text[0];
          if (c == '[' || c == '(' || c == '{') ++depth;
          if (c == ']' || c == ')' || c == '}') --depth;
        }
        ++e;
      }
      if (e > k) {
        if (words.size() < kMaxListWords) words_of_element(k, e, words);
      }
      k = e + 1;
    }
    return words;
  }

  void words_of_element(std::size_t k, std::size_t e, std::vector<ArgWord>& words) const {
    const Token& first = toks_[k];
    bool all_strings = true;
    for (std::size_t j = k; j < e; ++j) all_strings = all_strings && toks_[j].kind == Token::Kind::string;
    if (all_strings) {
      ArgWord w{std::string(), first.line, first.offset, WordShape::literal};
      for (std::size_t j = k; j < e; ++j) {
        w.text += toks_[j].text;
        if (toks_[j].fstring && toks_[j].text.find('{') != npos) w.shape = WordShape::value;
      }
      w.shape = placeholder_shape(w.text, w.shape);
      words.push_back(std::move(w));
      return;
    }
    if (op(k, '*') && e == k + 2 && name(k + 1)) {  // *other_list
      auto it = lists_.find(toks_[k + 1].text);
      if (it != lists_.end()) {
        words.insert(words.end(), it->second.begin(), it->second.end());
        return;
      }
      words.push_back(ArgWord{"${*" + toks_[k + 1].text + "}", first.line, first.offset, WordShape::words});
      return;
    }
    if (e == k + 1 && name(k)) {  // a name bound to a string earlier
      auto it = constants_.find(toks_[k].text);
      if (it != constants_.end()) {
        words.push_back(ArgWord{it->second.text, first.line, first.offset, it->second.shape});
        return;
      }
    }
    // Any other expression (str(tp), args.model, os.environ["MODEL"]): one unknown value.
    std::string text;
    for (std::size_t j = k; j < e && text.size() < 200; ++j) text += toks_[j].text;
    // Written ${expr} so that an interpreter given as sys.executable still starts `-m MODULE`.
    words.push_back(ArgWord{"${" + text + "}", first.line, first.offset, WordShape::value});
  }

  void emit(const std::vector<ArgWord>& argv) {
    if (!argv.empty()) extract(argv, Context{&src_}, 0, sink_);
  }

  // The end of the string expression at i: adjacent literals ("a" "b") and literals joined by +.
  std::size_t string_end(std::size_t i) const {
    std::size_t j = i;
    while (j < toks_.size() && toks_[j].kind == Token::Kind::string) {
      ++j;
      if (op(j, '+') && j + 1 < toks_.size() && toks_[j + 1].kind == Token::Kind::string) ++j;
    }
    return j;
  }

  // A string that may be a shell command line.
  void script(std::size_t i) {
    std::string text;
    bool f = false;
    const std::size_t end = string_end(i);
    for (std::size_t j = i; j < end; ++j) {
      if (toks_[j].kind != Token::Kind::string) continue;
      text += toks_[j].text;
      f = f || toks_[j].fstring;
    }
    if (!sink_.mentions_launcher(text)) return;
    ArgWord w{f ? fstring_as_shell(text, constants_) : text, toks_[i].line, toks_[i].offset, WordShape::literal};
    // A string that is a statement of its own (a docstring) is never run: a command written in it
    // is still found, but prose that does not read as shell ("the box's HTTP endpoint") is no
    // block that could not be read.
    scan_script(w, Context{&src_}, 1, bare_statement(i) ? OnLexError::ignore : OnLexError::fail_if_sglang, sink_);
  }

  // Whether the string at i starts a statement: outside brackets, first in the file or on a line
  // after a token that ends a statement or opens a block (`def f():`), not after an operator that
  // continues an expression (X = \ "...").
  bool bare_statement(std::size_t i) const {
    if (depth_[i] != 0) return false;
    if (i == 0) return true;
    const Token& prev = toks_[i - 1];
    if (prev.line >= toks_[i].line) return false;
    return prev.kind != Token::Kind::op || prev.text == ":" || prev.text == ")" || prev.text == "]" || prev.text == "}";
  }

  // Reads from token i; returns where to go on.
  std::size_t statement_part(std::size_t i) {
    // NAME = "text"   NAME = os.environ.get("K", "default")   NAME = os.getenv("K", "default")
    if (name(i) && op(i + 1, '=') && !op(i + 2, '=') && i + 2 < toks_.size()) {
      const bool at_statement = i == 0 || toks_[i - 1].line < toks_[i].line;
      if (at_statement && toks_[i + 2].kind == Token::Kind::string &&
          (i + 3 >= toks_.size() || toks_[i + 3].line > toks_[i + 2].line)) {
        if (!toks_[i + 2].fstring && constants_.size() < 4096) constants_[toks_[i].text] = Constant{toks_[i + 2].text, WordShape::literal};
      } else if (at_statement && name(i + 2) && (i + 3 >= toks_.size() || toks_[i + 3].line > toks_[i + 2].line) &&
                 int_literal(toks_[i + 2].text)) {
        // TP = 8: an integer literal, as f"{TP}" writes it (1_000 is 1000).
        if (constants_.size() < 4096) constants_[toks_[i].text] = Constant{*int_literal(toks_[i + 2].text), WordShape::literal};
      } else if (at_statement && name(i + 2) &&
                 (toks_[i + 2].text == "os.environ.get" || toks_[i + 2].text == "os.getenv") && op(i + 3, '(') &&
                 i + 7 < toks_.size() && toks_[i + 4].kind == Token::Kind::string && op(i + 5, ',') &&
                 toks_[i + 6].kind == Token::Kind::string && op(i + 7, ')')) {
        if (constants_.size() < 4096) constants_[toks_[i].text] = Constant{toks_[i + 6].text, WordShape::value};
      } else if (at_statement) {
        constants_.erase(toks_[i].text);  // rebound to what the file does not say (a call, an expression)
      }
    }
    // NAME = [ ... ]   NAME += [ ... ]   NAME.extend([ ... ])   NAME.append(x)
    if (name(i) && op(i + 1, '=') && op(i + 2, '[')) {
      const std::size_t end = close_of(i + 2);
      auto it = lists_.find(toks_[i].text);
      if (it != lists_.end()) emit(it->second);  // the old list ran before it was replaced (or not at all)
      lists_[toks_[i].text] = list_at(i + 2, end);
      return end;
    }
    if (name(i) && op(i + 1, '+') && op(i + 2, '=') && op(i + 3, '[')) {
      const std::size_t end = close_of(i + 3);
      append(toks_[i].text, list_at(i + 3, end));
      return end;
    }
    if (name(i) && op(i + 1, '(') && op(i + 2, '[')) {
      const std::string& n = toks_[i].text;
      const std::size_t dot = n.rfind('.');
      if (dot != npos && n.substr(dot) == ".extend" && lists_.count(n.substr(0, dot))) {
        const std::size_t end = close_of(i + 2);
        append(n.substr(0, dot), list_at(i + 2, end));
        return end;
      }
    }
    if (name(i) && op(i + 1, '(')) {
      const std::string& n = toks_[i].text;
      const std::size_t dot = n.rfind('.');
      if (dot != npos && n.substr(dot) == ".append" && lists_.count(n.substr(0, dot))) {
        const std::size_t end = close_of(i + 1);
        std::vector<ArgWord> one;
        if (end > i + 3) words_of_element(i + 2, end - 1, one);
        append(n.substr(0, dot), std::move(one));
        return end;
      }
    }
    if (op(i, '[')) {  // an anonymous list: subprocess.run([...]), Popen([...])
      const std::size_t end = close_of(i);
      emit(list_at(i, end));
      // Nested lists and strings inside it are read too (a list of commands).
      for (std::size_t j = i + 1; j + 1 < end;) {
        if (op(j, '[')) {
          const std::size_t e = close_of(j);
          emit(list_at(j, e));
          j = e;
        } else {
          ++j;
        }
      }
      return end;
    }
    if (toks_[i].kind == Token::Kind::string) {
      script(i);
      return string_end(i);
    }
    return i + 1;
  }

  void append(const std::string& list, std::vector<ArgWord> more) {
    std::vector<ArgWord>& l = lists_[list];
    for (ArgWord& w : more) {
      if (l.size() >= kMaxListWords) break;
      l.push_back(std::move(w));
    }
  }

  Source src_;
  Sink& sink_;
  std::vector<Token> toks_;
  std::vector<int> depth_;  // per token, the brackets open before it
  std::map<std::string, std::vector<ArgWord>> lists_;
  Constants constants_;
};

}  // namespace

void scan_python(std::string_view text, Sink& sink) { PythonScanner(text, sink).run(); }

}  // namespace attnsel::launch_detail
