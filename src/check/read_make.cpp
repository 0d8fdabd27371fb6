// Makefiles and justfiles: the recipe lines, each run by a shell, with the file's own variables
// put in first the way make and just do it.
//
// make: a recipe line starts with a tab (or .RECIPEPREFIX) under a rule; `\` continues it; its
// @, - and + prefixes are make's, not the shell's; $(VAR) and ${VAR} are the variables the file
// assigns (=, :=, ::=, ?=, +=, != and define, target-specific ones included), $$ is a literal $.
// A variable the file does not set comes from the environment (make passes it on): it stays
// ${VAR}, an unknown value to the shell reader; $(shell CMD) becomes $(CMD); other functions are
// unknown values. Conditionals are not evaluated: an assignment in either branch is taken in order.
//
// just: a recipe's body lines (indented under `name params: deps`), each run by a shell unless the
// body starts with a shebang; {{ expr }} is a variable, a parameter's default, a string or a
// concatenation of them; anything else (backticks, most functions) is an unknown value.
#include <map>
#include <set>

#include <fmt/format.h>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

constexpr std::size_t kMaxExpandedBytes = 1u << 20;  // what one line may become, as the shell reader's words
constexpr int kMaxExpandDepth = 32;                   // variables referring to variables (A = $(A) is make's error)
constexpr std::size_t kMaxVariables = 4096;
constexpr std::size_t kMaxFileExpansion = 64u << 20;  // what all the references of one file may expand to

// An unknown value as the shell reader sees one: ${NAME}, with what a shell name cannot hold made '_'.
std::string unknown_value(std::string_view what) {
  std::string out = "${";
  std::size_t n = 0;
  for (char c : what) {
    if (++n > 64) break;
    out += is_alnum(c) || c == '_' ? c : '_';
  }
  if (n == 0) out += '_';
  return out + "}";
}

// Whether a line ends in an odd number of backslashes: it goes on on the next line.
bool continues(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && line[line.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

// Where a `$(` or `${` at `open` closes (nested pairs of the same kind counted); npos if never.
std::size_t closing_paren(std::string_view s, std::size_t open) {
  const char o = s[open], c = o == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    if (s[i] == c && --depth == 0) return i;
  }
  return npos;
}

// The first `ch` of `s` outside $(...) and ${...}.
std::size_t find_outside_refs(std::string_view s, char ch) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
      const std::size_t close = closing_paren(s, i + 1);
      if (close == npos) return npos;
      i = close;
      continue;
    }
    if (s[i] == ch) return i;
  }
  return npos;
}

// ---- make ----

struct MakeVariable {
  std::string value;
  bool recursive = true;  // `=`: expanded where used; `:=`: expanded once, where assigned
};

struct MakeAssignment {
  std::string name, op, value;
  bool exported = false;
};

// NAME OP VALUE, with export/override/private before it; nullopt for anything else (a rule).
std::optional<MakeAssignment> parse_assignment(std::string_view t) {
  MakeAssignment a;
  for (;;) {
    bool stripped = false;
    for (std::string_view word : {"export", "override", "private"}) {
      if (starts_with(t, word) && t.size() > word.size() && is_blank(t[word.size()])) {
        a.exported = a.exported || word == "export";
        t = ltrim(t.substr(word.size()));
        stripped = true;
      }
    }
    if (!stripped) break;
  }
  const std::size_t eq = find_outside_refs(t, '=');
  if (eq == npos) return std::nullopt;
  std::size_t op = eq;
  if (op > 0 && (t[op - 1] == '?' || t[op - 1] == '+' || t[op - 1] == '!')) {
    --op;
  } else {
    while (op > 0 && eq - op < 3 && t[op - 1] == ':') --op;
  }
  const std::string_view name = trim(t.substr(0, op));
  if (name.empty() || name.find_first_of(" \t:#") != npos) return std::nullopt;
  a.name = std::string(name);
  a.op = std::string(t.substr(op, eq + 1 - op));
  a.value = std::string(ltrim(t.substr(eq + 1)));
  return a;
}

// The text of a makefile line before its comment (an unescaped #).
std::string strip_make_comment(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      out += '#';
      ++i;
      continue;
    }
    if (line[i] == '#') break;
    out += line[i];
  }
  return out;
}

struct Rule {
  std::string target;               // the first target ($@)
  std::vector<std::string> prereqs;  // $< is the first, $^ all
  // Each recipe line: its physical pieces with their file lines and columns.
  struct Piece {
    std::string_view text;
    int line = 0;
    std::size_t column = 1;
  };
  std::vector<std::vector<Piece>> recipe;
};

class Makefile {
 public:
  Makefile(std::string_view text, Sink& sink) : text_(text), sink_(sink) {}

  void run() {
    const std::vector<PhysicalLine> lines = split_lines(text_);
    std::optional<Rule> rule;
    std::vector<Rule> rules;
    for (std::size_t i = 0; i < lines.size();) {
      const std::string_view l = lines[i].text;
      if (rule && !l.empty() && l.front() == prefix_) {
        std::vector<Rule::Piece> pieces;
        std::size_t j = i;
        for (;; ++j) {
          std::string_view piece = lines[j].text;
          if (!piece.empty() && piece.front() == prefix_) piece.remove_prefix(1);
          pieces.push_back({piece, static_cast<int>(j) + 1, static_cast<std::size_t>(piece.data() - lines[j].text.data()) + 1});
          if (!continues(lines[j].text) || j + 1 >= lines.size()) break;
        }
        if (!trim(pieces.front().text).empty() || pieces.size() > 1) rule->recipe.push_back(std::move(pieces));
        i = j + 1;
        continue;
      }
      // A makefile line: continuations joined with a space.
      std::string logical;
      const std::size_t first = i;
      for (;; ++i) {
        const std::string_view piece = lines[i].text;
        if (continues(piece) && i + 1 < lines.size()) {
          logical.append(rtrim(piece.substr(0, piece.size() - 1))).append(" ");
          continue;
        }
        logical.append(piece);
        ++i;
        break;
      }
      const std::string_view raw = trim(logical);
      if (starts_with(raw, "define ") || raw == "define" || starts_with(raw, "export define ") ||
          starts_with(raw, "override define ")) {
        i = define(raw, lines, i);
        continue;
      }
      const std::string code = strip_make_comment(logical);
      const std::string_view t = trim(code);
      if (t.empty()) continue;  // blank and comment lines leave a rule open
      if (is_conditional(t)) continue;
      if (rule) rules.push_back(std::move(*rule));
      rule.reset();
      if (starts_with(t, "include ") || starts_with(t, "-include ") || starts_with(t, "sinclude ") ||
          starts_with(t, "vpath") || starts_with(t, "unexport")) continue;
      if (auto a = parse_assignment(t)) {
        assign(*a, variables_);
        continue;
      }
      if (starts_with(t, "export ")) {  // export NAME...: the environment of recipes gets them
        for (std::string_view rest = ltrim(t.substr(7)); !rest.empty(); rest = ltrim(rest)) {
          const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
          exported_.insert(std::string(rest.substr(0, end)));
          rest = rest.substr(end);
        }
        continue;
      }
      rule = parse_rule(t, code, lines[first], static_cast<int>(first) + 1);
    }
    if (rule) rules.push_back(std::move(*rule));
    // Special targets hold for the whole makefile, wherever they are.
    for (const Rule& r : rules) {
      export_all_ = export_all_ || r.target == ".EXPORT_ALL_VARIABLES";
      oneshell_ = oneshell_ || r.target == ".ONESHELL";
    }
    const Environment env = environment();
    for (const Rule& r : rules) run_recipe(r, env);
  }

 private:
  static bool is_conditional(std::string_view t) {
    for (std::string_view d : {"ifeq", "ifneq", "ifdef", "ifndef", "else", "endif"})
      if (t == d || (starts_with(t, d) && t.size() > d.size() && (is_blank(t[d.size()]) || t[d.size()] == '(')))
        return true;
    return false;
  }

  // define NAME [=|:=] ... endef: the lines between are the value. Returns the line after endef.
  std::size_t define(std::string_view header, const std::vector<PhysicalLine>& lines, std::size_t next) {
    std::string_view h = header;
    bool exported = false;
    for (std::string_view word : {"export ", "override "}) {
      if (starts_with(h, word)) {
        exported = exported || word == "export ";
        h = ltrim(h.substr(word.size()));
      }
    }
    h = trim(h.substr(6));
    bool recursive = true;
    for (std::string_view op : {"::=", ":=", "?=", "+=", "="}) {
      if (ends_with(h, op)) {
        recursive = op == "=" || op == "?=" || op == "+=";
        h = rtrim(h.substr(0, h.size() - op.size()));
        break;
      }
    }
    std::string value;
    int depth = 1;
    std::size_t k = next;
    for (; k < lines.size(); ++k) {
      const std::string_view t = trim(lines[k].text);
      if (starts_with(t, "define ") || t == "define") ++depth;
      if ((t == "endef" || starts_with(t, "endef ")) && --depth == 0) break;
      if (value.size() < kMaxExpandedBytes) value.append(value.empty() ? "" : "\n").append(lines[k].text);
    }
    if (!h.empty() && h.find_first_of(" \t") == npos) {
      if (variables_.size() < kMaxVariables || variables_.count(std::string(h)))
        variables_[std::string(h)] = MakeVariable{recursive ? value : expand(value, nullptr, 0), recursive};
      if (exported) exported_.insert(std::string(h));
    }
    return k + 1;
  }

  void assign(const MakeAssignment& a, std::map<std::string, MakeVariable>& into, const Rule* rule = nullptr) {
    if (a.exported) exported_.insert(a.name);
    if (a.name == ".RECIPEPREFIX") {
      const std::string v = expand(a.value, nullptr, 0);
      prefix_ = v.empty() ? '\t' : v.front();
      return;
    }
    auto it = into.find(a.name);
    if (it == into.end() && into.size() >= kMaxVariables) return;
    if (a.op == "?=") {
      if (it == into.end()) into[a.name] = MakeVariable{a.value, true};
    } else if (a.op == "+=") {
      if (it == into.end()) {
        into[a.name] = MakeVariable{a.value, true};
      } else {
        const std::string more = it->second.recursive ? a.value : expand(a.value, rule, 0);
        if (it->second.value.size() + more.size() < kMaxExpandedBytes)
          it->second.value += (it->second.value.empty() ? "" : " ") + more;
      }
    } else if (a.op == "!=") {  // the output of a shell command: known when make runs
      into[a.name] = MakeVariable{"$(" + expand(a.value, rule, 0) + ")", false};
    } else if (a.op == "=") {
      into[a.name] = MakeVariable{a.value, true};
    } else {  // :=, ::=, :::=
      into[a.name] = MakeVariable{expand(a.value, rule, 0), false};
    }
  }

  // TARGETS: PREREQS [; RECIPE], or TARGETS: VAR = VALUE (a target-specific variable).
  std::optional<Rule> parse_rule(std::string_view t, std::string_view code, const PhysicalLine& at, int line) {
    const std::size_t colon = find_outside_refs(t, ':');
    if (colon == npos) return std::nullopt;
    const std::string targets = expand(t.substr(0, colon), nullptr, 0);
    std::string_view rest = t.substr(colon + 1);
    if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);  // double-colon rules
    const std::size_t semi = find_outside_refs(rest, ';');
    const std::string_view prereqs = semi == npos ? rest : rest.substr(0, semi);
    if (auto a = parse_assignment(trim(prereqs))) {
      for (std::string_view rest_targets = ltrim(targets); !rest_targets.empty(); rest_targets = ltrim(rest_targets)) {
        const std::size_t end = std::min(rest_targets.find_first_of(" \t"), rest_targets.size());
        if (target_variables_.size() < kMaxVariables)
          assign(*a, target_variables_[std::string(rest_targets.substr(0, end))]);
        rest_targets = rest_targets.substr(end);
      }
      return std::nullopt;
    }
    Rule r;
    std::string_view first = ltrim(targets);
    r.target = std::string(first.substr(0, std::min(first.find_first_of(" \t"), first.size())));
    const std::string expanded = expand(prereqs, nullptr, 0);
    for (std::string_view p = ltrim(expanded); !p.empty(); p = ltrim(p)) {
      const std::size_t end = std::min(p.find_first_of(" \t|"), p.size());
      if (end > 0) r.prereqs.emplace_back(p.substr(0, end));
      p = p.substr(std::max<std::size_t>(end, 1));
    }
    if (semi != npos) {  // target: prereqs ; recipe
      const std::string_view inline_recipe = ltrim(rest.substr(semi + 1));
      // Where it is in the physical line (the logical line is the same text up to a continuation).
      const std::size_t in_code = static_cast<std::size_t>(inline_recipe.data() - code.data());
      if (!inline_recipe.empty() && in_code <= at.text.size())
        r.recipe.push_back({Rule::Piece{at.text.substr(in_code), line, in_code + 1}});
    }
    return r;
  }

  const MakeVariable* variable(std::string_view name, const Rule* rule) const {
    if (rule) {
      auto t = target_variables_.find(rule->target);
      if (t != target_variables_.end()) {
        auto v = t->second.find(std::string(name));
        if (v != t->second.end()) return &v->second;
      }
    }
    auto v = variables_.find(std::string(name));
    return v == variables_.end() ? nullptr : &v->second;
  }

  // One reference's text: `inner` is what was between $( and ), or the one character after $.
  std::string reference(std::string_view inner, const Rule* rule, int depth) const {
    if (depth >= kMaxExpandDepth || spent_ > kMaxFileExpansion) {
      overflow_ = overflow_ || spent_ > kMaxFileExpansion;
      return unknown_value(inner);
    }
    std::string value = resolve(inner, rule, depth);
    spent_ += value.size();
    return value;
  }

  // A function's arguments: split at the commas outside nested references.
  static std::vector<std::string_view> split_arguments(std::string_view args) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    int nesting = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == '(' || args[i] == '{') ++nesting;
      if ((args[i] == ')' || args[i] == '}') && nesting > 0) --nesting;
      if (args[i] == ',' && nesting == 0) {
        out.push_back(args.substr(start, i - start));
        start = i + 1;
      }
    }
    out.push_back(args.substr(start));
    return out;
  }

  // $(or A,B,...): the first argument that is not empty. One the environment fills in
  // ($(or $(MODEL),default)) with a plain default after it is the shell's ${MODEL:-default}: the
  // default is judged, the environment may differ.
  std::string first_of(const std::vector<std::string_view>& args, const Rule* rule, int depth) const {
    std::optional<std::string> from_environment;
    for (std::string_view a : args) {
      const std::string v(trim(expand(a, rule, depth + 1)));
      if (v.empty()) continue;
      if (v.find('$') == npos) {
        if (!from_environment) return v;
        const bool plain = v.find_first_of(" \t\"'`{}\\") == npos;
        return plain ? from_environment->substr(0, from_environment->size() - 1) + ":-" + v + "}" : *from_environment;
      }
      // An unknown variable alone (${NAME}): the environment's, else what follows.
      const bool alone = starts_with(v, "${") && v.back() == '}' && v.find_first_of("$}", 2) == v.size() - 1;
      if (!alone) return from_environment ? *from_environment : v;
      if (!from_environment) from_environment = v;
    }
    return from_environment ? *from_environment : std::string();
  }

  std::string resolve(std::string_view inner, const Rule* rule, int depth) const {
    if (inner == "@" && rule && rule->target.find('%') == npos) return rule->target;
    if (inner == "<" && rule && !rule->prereqs.empty()) return rule->prereqs.front();
    if ((inner == "^" || inner == "+") && rule) {
      std::string all;
      for (const std::string& p : rule->prereqs) all += (all.empty() ? "" : " ") + p;
      return all;
    }
    const std::size_t blank = inner.find_first_of(" \t");
    if (blank != npos) {  // a function
      const std::string_view function = inner.substr(0, blank);
      if (function == "shell") return "$(" + expand(inner.substr(blank + 1), rule, depth + 1) + ")";
      if (function == "or") return first_of(split_arguments(ltrim(inner.substr(blank + 1))), rule, depth);
      return unknown_value(function);
    }
    if (inner.find(':') != npos) return unknown_value(inner.substr(0, inner.find(':')));  // $(VAR:.c=.o)
    const std::string name = expand(inner, rule, depth + 1);  // computed names: $($(X)_FLAGS)
    const MakeVariable* v = variable(name, rule);
    if (!v) return unknown_value(name);  // the environment's, or nothing
    return v->recursive ? expand(v->value, rule, depth + 1) : v->value;
  }

 public:
  // make's expansion of a text; past the budget the rest is an unknown value and overflow_ is set.
  std::string expand(std::string_view s, const Rule* rule, int depth) const {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      if (out.size() > kMaxExpandedBytes) {
        overflow_ = true;
        return out;
      }
      const std::size_t dollar = s.find('$', i);
      if (dollar == npos || dollar + 1 >= s.size()) {
        out.append(s.substr(i));
        break;
      }
      out.append(s.substr(i, dollar - i));
      const char next = s[dollar + 1];
      if (next == '$') {
        out += '$';
        i = dollar + 2;
      } else if (next == '(' || next == '{') {
        const std::size_t close = closing_paren(s, dollar + 1);
        if (close == npos) {
          out.append(s.substr(dollar));
          break;
        }
        out += reference(s.substr(dollar + 2, close - dollar - 2), rule, depth);
        i = close + 1;
      } else {
        out += reference(s.substr(dollar + 1, 1), rule, depth);
        i = dollar + 2;
      }
    }
    return out;
  }

 private:
  // The exported variables (export, .EXPORT_ALL_VARIABLES): the environment of every recipe line.
  Environment environment() const {
    Environment env;
    for (const auto& [name, v] : variables_) {
      if (!export_all_ && !exported_.count(name)) continue;
      if (!is_assignment(name + "=")) continue;
      std::string value = v.recursive ? expand(v.value, nullptr, 0) : v.value;
      if (value.find('$') == npos && env.size() < kMaxVariables) env.emplace_back(name, std::move(value));
    }
    return env;
  }

  void run_recipe(const Rule& r, const Environment& env) {
    if (r.recipe.empty() || r.target.empty() || r.target.front() == '.') return;
    Source one;  // .ONESHELL: the whole recipe is one script
    for (const std::vector<Rule::Piece>& line : r.recipe) {
      Source src;
      for (std::size_t k = 0; k < line.size(); ++k) {
        std::string_view text = line[k].text;
        std::size_t column = line[k].column;
        if (k == 0) {  // make's own prefixes: @ (silent), - (ignore errors), + (run under -n)
          while (!text.empty() && (is_blank(text.front()) || text.front() == '@' || text.front() == '-' ||
                                   text.front() == '+')) {
            text.remove_prefix(1);
            ++column;
          }
        }
        overflow_ = false;
        std::string expanded = expand(text, &r, 0);
        if (overflow_) {
          sink_.fail(fmt::format("this recipe line expands past {} bytes (or the file past {}); it was not checked", kMaxExpandedBytes, kMaxFileExpansion),
                     line[k].line);
          src = Source();
          break;
        }
        (oneshell_ ? one : src).append(expanded + "\n", line[k].line, column);
      }
      if (!oneshell_ && !src.text.empty()) scan_shell(src, 0, OnLexError::fail_if_sglang, sink_, env.empty() ? nullptr : &env);
    }
    if (oneshell_ && !one.text.empty()) scan_shell(one, 0, OnLexError::fail_if_sglang, sink_, env.empty() ? nullptr : &env);
  }

  std::string_view text_;
  Sink& sink_;
  char prefix_ = '\t';
  bool oneshell_ = false, export_all_ = false;
  std::map<std::string, MakeVariable> variables_;
  std::map<std::string, std::map<std::string, MakeVariable>> target_variables_;
  std::set<std::string> exported_;
  mutable bool overflow_ = false;
  mutable std::size_t spent_ = 0;  // bytes all references of the file expanded to
};

// ---- just ----

bool just_name_start(char c) { return is_alpha(c) || c == '_'; }
bool just_name_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

// The values of a justfile's variables (or of a recipe's parameters): nullopt where not known, and
// too_large those past kMaxExpandedBytes (x := x + x forty times), never built.
struct JustScope {
  std::map<std::string, std::optional<std::string>, std::less<>> values;
  std::set<std::string, std::less<>> too_large;
};

// A just expression, as far as it can be known without running anything: string literals,
// variables and parameters (`scope`, then `outer`), `+` and `/` between them,
// env_var_or_default()/env() defaults. A value past kMaxExpandedBytes is never built: overflow().
class JustExpression {
 public:
  explicit JustExpression(std::string_view s, const JustScope& scope, const JustScope* outer = nullptr)
      : s_(s), scope_(scope), outer_(outer) {}

  // The value, nullopt when not known; `end` is where the expression stopped.
  std::optional<std::string> parse(std::size_t& end, int depth = 0) {
    std::optional<std::string> v = term(depth);
    for (;;) {
      skip();
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '/')) {
        const char op = s_[i_++];
        std::optional<std::string> rhs = term(depth);
        if (v && rhs && v->size() + rhs->size() < kMaxExpandedBytes) {
          *v += (op == '/' ? "/" : "") + *rhs;
        } else {
          overflow_ = overflow_ || (v && rhs);
          v.reset();
        }
        continue;
      }
      break;
    }
    end = i_;
    return v;
  }

  // Whether the whole text was one expression that could be read.
  bool complete() {
    skip();
    return i_ == s_.size() && !bad_;
  }

  // Whether the value is known to be past kMaxExpandedBytes (and so was not built).
  bool overflow() const { return overflow_; }

 private:
  void skip() {
    while (i_ < s_.size() && is_blank(s_[i_])) ++i_;
  }

  std::optional<std::string> term(int depth) {
    skip();
    if (i_ >= s_.size() || depth > 16) {
      bad_ = true;
      return std::nullopt;
    }
    const char c = s_[i_];
    if (c == '\'' || c == '"') return literal();
    if (c == '(') {
      ++i_;
      std::size_t end = 0;
      std::optional<std::string> v = parse(end, depth + 1);
      skip();
      if (i_ < s_.size() && s_[i_] == ')') ++i_;
      return v;
    }
    if (c == '`') {  // a command's output
      const std::size_t close = s_.find('`', i_ + 1);
      i_ = close == npos ? s_.size() : close + 1;
      return std::nullopt;
    }
    if (!just_name_start(c)) {
      bad_ = true;
      i_ = s_.size();
      return std::nullopt;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && just_name_char(s_[i_])) ++i_;
    const std::string_view name = s_.substr(start, i_ - start);
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {  // a function call: its arguments
      ++i_;
      std::vector<std::optional<std::string>> args;
      for (;;) {
        skip();
        if (i_ >= s_.size()) break;
        if (s_[i_] == ')') {
          ++i_;
          break;
        }
        std::size_t end = 0;
        args.push_back(parse(end, depth + 1));
        skip();
        if (i_ < s_.size() && s_[i_] == ',') ++i_;
        else if (i_ < s_.size() && s_[i_] != ')') {
          i_ = s_.size();
          break;
        }
      }
      // The default of an environment variable: what the recipe gets unless the environment says otherwise.
      if ((name == "env_var_or_default" || name == "env") && args.size() == 2) return args[1];
      return std::nullopt;
    }
    if (name == "if") {  // if ... { } else { }: a branch only known when just runs
      i_ = s_.size();
      return std::nullopt;
    }
    for (const JustScope* scope : {&scope_, outer_}) {
      if (!scope) continue;
      auto it = scope->values.find(name);
      if (it == scope->values.end()) continue;
      if (!it->second && scope->too_large.count(name)) overflow_ = true;
      return it->second;
    }
    return std::nullopt;
  }

  std::optional<std::string> literal() {
    const char q = s_[i_];
    // '''...''' and """...""" on one line: the same as single ones here.
    const bool triple = s_.substr(i_, 3) == std::string(3, q);
    i_ += triple ? 3 : 1;
    std::string out;
    while (i_ < s_.size()) {
      if (triple ? s_.substr(i_, 3) == std::string(3, q) : s_[i_] == q) {
        i_ += triple ? 3 : 1;
        return out;
      }
      if (q == '"' && s_[i_] == '\\' && i_ + 1 < s_.size()) {
        const char e = s_[++i_];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        ++i_;
        continue;
      }
      out += s_[i_++];
    }
    bad_ = true;
    return std::nullopt;
  }

  std::string_view s_;
  const JustScope& scope_;
  const JustScope* outer_;
  std::size_t i_ = 0;
  bool bad_ = false;
  bool overflow_ = false;
};

class Justfile {
 public:
  Justfile(std::string_view text, Sink& sink) : lines_(split_lines(text)), sink_(sink) {}

  void run() {
    for (std::size_t i = 0; i < lines_.size();) {
      const std::string_view l = lines_[i].text;
      const std::string_view t = trim(l);
      if (t.empty() || l.front() == '#' || is_blank(l.front()) || t.front() == '[') {
        ++i;
        continue;
      }
      if (starts_with(t, "set ")) {
        const std::string_view setting = trim(t.substr(4));
        if (setting == "export" || starts_with(setting, "export :=") || starts_with(setting, "export:="))
          export_all_ = setting.find("false") == npos;
        ++i;
        continue;
      }
      if (starts_with(t, "alias ") || starts_with(t, "import ") || starts_with(t, "mod ")) {
        ++i;
        continue;
      }
      if (assignment(t)) {
        ++i;
        continue;
      }
      i = recipe(i);
    }
  }

 private:
  // [export] NAME := EXPR
  bool assignment(std::string_view t) {
    bool exported = false;
    if (starts_with(t, "export ")) {
      exported = true;
      t = ltrim(t.substr(7));
    }
    std::size_t n = 0;
    while (n < t.size() && just_name_char(t[n])) ++n;
    if (n == 0 || !just_name_start(t[0])) return false;
    const std::string_view rest = ltrim(t.substr(n));
    if (!starts_with(rest, ":=")) return false;
    const std::string name(t.substr(0, n));
    std::size_t end = 0;
    JustExpression e(trim(rest.substr(2)), globals_);
    std::optional<std::string> v = e.parse(end);
    if (!e.complete()) v.reset();
    // All of the file's values together stay within kMaxFileExpansion, as a Makefile's do.
    const bool too_large = e.overflow() || (v && (spent_ += v->size()) > kMaxFileExpansion);
    if (too_large) v.reset();
    if (globals_.values.size() < kMaxVariables || globals_.values.count(name)) {
      globals_.values[name] = v;
      if (too_large) globals_.too_large.insert(name);
      else globals_.too_large.erase(name);
    }
    if (exported) exported_.insert(name);
    return true;
  }

  // @?NAME PARAMS: DEPS, then the indented body. Returns the line after the body.
  std::size_t recipe(std::size_t at) {
    std::string_view t = trim(lines_[at].text);
    if (!t.empty() && t.front() == '@') t.remove_prefix(1);
    std::size_t n = 0;
    while (n < t.size() && just_name_char(t[n])) ++n;
    std::size_t body_end = at + 1;
    while (body_end < lines_.size() &&
           (trim(lines_[body_end].text).empty() || is_blank(lines_[body_end].text.front())))
      ++body_end;
    if (n == 0 || !just_name_start(t[0])) return at + 1;
    // The parameters, up to the `:` that is not in a quoted default (the variables are looked up
    // behind them, never copied per recipe).
    JustScope params;
    std::set<std::string> exported;  // the parameters exported ($name)
    std::string_view p = t.substr(n);
    bool header = false;
    while (!(p = ltrim(p)).empty()) {
      if (p.front() == ':') {
        header = !starts_with(p, ":=");
        break;
      }
      bool param_exported = false;
      while (!p.empty() && (p.front() == '+' || p.front() == '*' || p.front() == '$')) {
        param_exported = param_exported || p.front() == '$';
        p.remove_prefix(1);
      }
      std::size_t k = 0;
      while (k < p.size() && just_name_char(p[k])) ++k;
      if (k == 0) break;
      const std::string name(p.substr(0, k));
      p = p.substr(k);
      std::optional<std::string> value;
      if (!p.empty() && p.front() == '=') {
        std::string_view d = p.substr(1);
        std::size_t end = 0;
        bool too_large = false;
        if (!d.empty() && (d.front() == '\'' || d.front() == '"' || d.front() == '(')) {
          JustExpression e(d, globals_);
          value = e.parse(end);
          too_large = e.overflow();
        } else {  // a bare name or word ends at a blank or the colon
          while (end < d.size() && !is_blank(d[end]) && d[end] != ':') ++end;
          JustExpression e(d.substr(0, end), globals_);
          std::size_t inner = 0;
          value = e.parse(inner);
          too_large = e.overflow();
        }
        if (too_large) params.too_large.insert(name);
        p = d.substr(std::min(end, d.size()));
      }
      params.values[name] = value;  // no default: given on just's command line, unknown here
      if (param_exported) exported.insert(name);
    }
    if (!header) return at + 1;
    body(at + 1, body_end, params, exported);
    return body_end;
  }

  // {{ expr }} in a body line: the value where known, else an unknown value; {{{{ is a literal {{.
  // nullopt when the line would be longer than kMaxExpandedBytes (it is not built).
  std::optional<std::string> interpolate(std::string_view s, const JustScope& params) const {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t open = s.find("{{", i);
      if (open == npos) {
        out.append(s.substr(i));
        break;
      }
      out.append(s.substr(i, open - i));
      if (s.substr(open, 4) == "{{{{") {
        out += "{{";
        i = open + 4;
        continue;
      }
      const std::size_t close = s.find("}}", open + 2);
      if (close == npos) {
        out.append(s.substr(open));
        break;
      }
      const std::string_view expr = trim(s.substr(open + 2, close - open - 2));
      JustExpression e(expr, params, &globals_);
      std::size_t end = 0;
      std::optional<std::string> v = e.parse(end);
      if (e.overflow() || (v && out.size() + v->size() > kMaxExpandedBytes)) return std::nullopt;
      out += v && e.complete() ? *v : unknown_value(expr);
      i = close + 2;
    }
    return out;
  }

  // A recipe line past the budget: said, never checked as if it were shorter.
  void too_large(int line) {
    sink_.fail(fmt::format("this recipe line expands past {} bytes (or the file's variables past {}); it was not checked",
                           kMaxExpandedBytes, kMaxFileExpansion),
               line);
  }

  void body(std::size_t from, std::size_t to, const JustScope& params, const std::set<std::string>& exported_params) {
    // The exported variables the body names ($NAME, ${NAME}) reach its shell, looked up by name: a
    // recipe never walks or copies all of the file's variables (5,000 recipes under `set export`
    // copied them 5,000 times), and all the recipes' environments together stay within
    // kMaxFileExpansion.
    std::set<std::string_view> named;
    for (std::size_t k = from; k < to; ++k) {
      const std::string_view l = lines_[k].text;
      for (std::size_t i = l.find('$'); i != npos; i = l.find('$', i + 1)) {
        const std::size_t b = i + 1 + (i + 1 < l.size() && l[i + 1] == '{' ? 1 : 0);
        std::size_t e = b;
        while (e < l.size() && (is_alnum(l[e]) || l[e] == '_')) ++e;
        if (e > b) named.insert(l.substr(b, e - b));
      }
    }
    Environment env;
    for (std::string_view name : named) {
      const auto param = params.values.find(name);
      const bool is_param = param != params.values.end();
      const auto global = is_param ? globals_.values.end() : globals_.values.find(name);
      const std::optional<std::string>* v = is_param ? &param->second : global != globals_.values.end() ? &global->second : nullptr;
      const bool exported = export_all_ || (is_param ? exported_params.count(std::string(name)) > 0
                                                     : exported_.count(std::string(name)) > 0);
      if (!v || !*v || !exported || !is_assignment(std::string(name) + "=")) continue;
      if ((env_spent_ += (*v)->size()) > kMaxFileExpansion) return too_large(static_cast<int>(from) + 1);
      env.emplace_back(name, **v);
    }
    const Environment* env_ptr = env.empty() ? nullptr : &env;
    // The body's indentation: that of its first line.
    std::size_t first = from;
    while (first < to && trim(lines_[first].text).empty()) ++first;
    if (first >= to) return;
    const std::size_t indent = lines_[first].text.size() - ltrim(lines_[first].text).size();
    auto strip = [&](std::string_view l) {
      std::size_t k = 0;
      while (k < indent && k < l.size() && is_blank(l[k])) ++k;
      return l.substr(k);
    };
    const std::string_view shebang = strip(lines_[first].text);
    if (starts_with(shebang, "#!")) {  // one script, run by its interpreter
      std::string script;
      Source src;
      for (std::size_t k = first; k < to; ++k) {
        const std::string_view l = strip(lines_[k].text);
        const std::optional<std::string> line = interpolate(l, params);
        if (!line || script.size() + line->size() > kMaxFileExpansion) return too_large(static_cast<int>(k) + 1);
        const std::string text = *line + "\n";
        script += text;
        src.append(text, static_cast<int>(k) + 1, static_cast<std::size_t>(l.data() - lines_[k].text.data()) + 1);
      }
      if (shebang.find("python") != npos) {
        Sink inner;
        inner.launchers = sink_.launchers;
        inner.file = sink_.file;
        scan_python(script, inner);
        for (LaunchCommand& c : inner.found) {
          c.line += static_cast<int>(first);
          for (int& l : c.arg_lines) l += static_cast<int>(first);
          sink_.found.push_back(std::move(c));
        }
        for (Error& e : inner.skipped) sink_.skipped.push_back(std::move(e));
      } else {
        scan_shell(src, 0, OnLexError::fail_if_sglang, sink_, env_ptr);
      }
      return;
    }
    // Each line (with its `\` continuations) is run by a shell of its own.
    for (std::size_t k = first; k < to;) {
      Source src;
      bool head = true;
      for (; k < to; ++k) {
        std::string_view l = strip(lines_[k].text);
        std::size_t column = static_cast<std::size_t>(l.data() - lines_[k].text.data()) + 1;
        if (head) {
          while (!l.empty() && (l.front() == '@' || l.front() == '-')) {  // just's quiet and ignore-errors marks
            l.remove_prefix(1);
            ++column;
          }
        }
        head = false;
        const std::optional<std::string> line = interpolate(l, params);
        if (!line) {
          too_large(static_cast<int>(k) + 1);
          src = Source();
          while (k < to && continues(strip(lines_[k].text))) ++k;  // the rest of this shell line too
          ++k;
          break;
        }
        src.append(*line + "\n", static_cast<int>(k) + 1, column);
        if (!continues(l)) {
          ++k;
          break;
        }
      }
      if (!trim(src.text).empty()) scan_shell(src, 0, OnLexError::fail_if_sglang, sink_, env_ptr);
    }
  }

  std::vector<PhysicalLine> lines_;
  Sink& sink_;
  JustScope globals_;
  std::size_t spent_ = 0;      // bytes of all the variables' values
  std::size_t env_spent_ = 0;  // bytes of all the recipes' environments
  std::set<std::string> exported_;
  bool export_all_ = false;
};

}  // namespace

void scan_makefile(std::string_view text, Sink& sink) { Makefile(text, sink).run(); }

void scan_justfile(std::string_view text, Sink& sink) { Justfile(text, sink).run(); }

}  // namespace attnsel::launch_detail
