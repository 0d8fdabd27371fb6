// parse_launch_args(): Python argparse's behaviour over an engine grammar from data. What the
// engine's parser exits on becomes an error on the flag's line; what it resolves silently (a
// unique prefix, a deprecated spelling) becomes a note. Values the shell fills in are not checked.
#include "attnsel/launch_args.hpp"
#include "check/launch_internal.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
#include <yaml-cpp/yaml.h>

#include "core/yaml_load.hpp"
#define ATTNSEL_ARGS_YAML 1
#else
#define ATTNSEL_ARGS_YAML 0
#endif

#include "check/python_values.hpp"
#include "check/shown_value.hpp"
#include "core/read_file.hpp"
#include "core/suggest.hpp"

namespace attnsel {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool expands(std::string_view s) { return s.find('$') != std::string_view::npos || s.find('`') != std::string_view::npos; }

std::string_view strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The zero of each run of ten decimal digits (Unicode category Nd) past ASCII, Unicode 15.0 (Python
// 3.12's): int() reads "\uff18" (FULLWIDTH DIGIT EIGHT) as 8.
constexpr char32_t kDigitZeros[] = {
    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,   0xC66,   0xCE6,   0xD66,
    0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,  0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,
    0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730,
    0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0};

// Python's whitespace past ASCII (str.isspace()).
bool unicode_space(char32_t c) {
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// The text as int() sees it before parsing: each non-ASCII decimal digit as its ASCII digit and
// each non-ASCII space as a blank; nullopt when a code point is neither (or the UTF-8 is broken),
// which int() refuses.
std::optional<std::string> ascii_for_int(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += s[i++];
      continue;
    }
    const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || n > 4 || i + n > s.size()) return std::nullopt;
    char32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    i += n;
    if (unicode_space(cp)) {
      out += ' ';
      continue;
    }
    const auto zero = std::upper_bound(std::begin(kDigitZeros), std::end(kDigitZeros), cp);
    if (zero == std::begin(kDigitZeros) || cp - *(zero - 1) > 9) return std::nullopt;
    out += static_cast<char>('0' + (cp - *(zero - 1)));
  }
  return out;
}

}  // namespace

// Python's int(text): surrounding blanks, a sign, digits with single underscores between them;
// any Unicode decimal digit is a digit and any Unicode space a blank, as for int().
std::optional<long long> detail::python_int(std::string_view text) {
  std::string converted;
  if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    std::optional<std::string> ascii = ascii_for_int(text);
    if (!ascii) return std::nullopt;
    converted = std::move(*ascii);
    text = converted;
  }
  std::string_view s = strip(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) negative = s.front() == '-', s.remove_prefix(1);
  if (s.empty() || s.front() == '_' || s.back() == '_') return std::nullopt;
  long long value = 0;
  bool overflow = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (s[i - 1] == '_') return std::nullopt;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    if (value > (1LL << 58)) overflow = true;  // Python ints are unbounded: still valid
    else value = value * 10 + (s[i] - '0');
  }
  if (overflow) return negative ? -(1LL << 60) : (1LL << 60);
  return negative ? -value : value;
}

namespace {

using detail::python_int;

// Python's float(text): also inf, infinity and nan in any case, with a sign.
bool python_float(std::string_view s) {
  s = strip(s);
  std::string t;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      const bool between = i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                           std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!between) return false;
      continue;
    }
    t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(s[i]))));
  }
  std::string_view body = t;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) body.remove_prefix(1);
  if (body == "inf" || body == "infinity" || body == "nan") return true;
  if (t.empty() || t.find_first_of("xp") != std::string::npos) return false;  // strtod would take hex floats
  errno = 0;
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool negative_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  s.remove_prefix(1);
  bool digit = false, dot = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (c == '.' && !dot) dot = true;
    else return false;
  }
  return digit;
}

std::string quoted_list(const std::vector<std::string>& names, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

struct Token {
  std::string text;
  int line = 0;
  WordShape shape = WordShape::literal;
  std::string origin;
  bool known_literal = false;  // written literally where it was read (a reader's shape, a config file)
};

class Parser {
 public:
  Parser(const LaunchCommand& cmd, const Grammar& g, const ParseOptions& o) : cmd_(cmd), g_(g), o_(o) {
    out_.grammar = &g;
    negative_options_ = std::any_of(g.index.begin(), g.index.end(), [](const auto& e) { return negative_number(e.first); });
  }

  ParsedArgs run() {
    std::vector<Token> tokens;
    for (std::size_t k = 0; k < cmd_.args.size(); ++k)
      tokens.push_back(Token{cmd_.args[k], k < cmd_.arg_lines.size() ? cmd_.arg_lines[k] : cmd_.line, shape_of(k), "",
                             k < cmd_.arg_shapes.size()});
    std::size_t i = 0;
    if (o_.positional_model && !tokens.empty() && !starts_with(tokens[0].text, "-")) {
      out_.positional_model = ArgValue{tokens[0].text, "", tokens[0].line, tokens[0].shape, ""};
      i = 1;
    }
    tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(i));
    expand_config(tokens);
    parse(tokens);
    if (cmd_.launcher != "flags") required();
    bound_values();
    return std::move(out_);
  }

 private:
  void add(std::string rule, Severity severity, std::string message, const Token& at, std::string flag,
           std::string value = {}, std::string suggestion = {}) {
    // A note says the same for every repetition of the same flag (100,000 `--tp`): once, at the first.
    if (severity == Severity::info && !noted_.insert(rule + '\n' + flag + '\n' + message).second) return;
    detail::shorten_quotations(message, value);
    detail::shorten_quotations(message, flag);
    out_.findings.push_back(ArgFinding{std::move(rule), severity, std::move(message), std::move(flag), std::move(value),
                                       std::move(suggestion), at.line, at.origin});
  }

  std::string exits(std::string_view what) const {
    return fmt::format("{} would exit: {}", o_.engine_title.empty() ? std::string("the engine") : o_.engine_title, what);
  }

  // The reader's shape; a command given without shapes (argv) still has its $VAR and $(cmd) unknown.
  // A reader that gave shapes saw how each word was written: its literal '$X' is the engine's too.
  WordShape shape_of(std::size_t k) const {
    const WordShape s = cmd_.shape(k);
    const std::string& text = cmd_.args[k];
    if (s != WordShape::literal || !expands(text) || k < cmd_.arg_shapes.size()) return s;
    const bool list = text == "$@" || text == "$*" ||
                      (starts_with(text, "${") && text.size() > 5 &&
                       (text.compare(text.size() - 4, 4, "[@]}") == 0 || text.compare(text.size() - 4, 4, "[*]}") == 0));
    return list ? WordShape::words : WordShape::value;
  }

  // The value part of --flag=VALUE in token `t`: literal when the reader saw the token literal.
  WordShape value_shape(const Token& t, std::string_view value) const {
    if (!expands(value)) return WordShape::literal;
    return t.shape == WordShape::literal && t.known_literal ? WordShape::literal : WordShape::value;
  }

  // An argument argparse reads as an option rather than a value.
  bool optional_like(const Token& t) const {
    const std::string& s = t.text;
    if (s.size() < 2 || s[0] != '-') return false;
    if (t.shape != WordShape::literal) return !expands(s.substr(0, s.find('=')));  // "--flag=$X" is an option
    if (g_.exact(s) || (starts_with(s, "--") && s.find('=') != std::string::npos && g_.exact(s.substr(0, s.find('=')))))
      return true;
    if (negative_number(s) && !negative_options_) return false;
    if (s.find(' ') != std::string::npos) return false;
    return true;
  }

  // `--config FILE` (the exact token): the file's keys become flags placed before the whole
  // command line, so the command line's own flags win, as both engines merge them: vLLM's
  // FlexibleArgumentParser._pull_args_from_config puts them after the model and before the rest
  // (vllm-project/vllm@00da11e3 vllm/utils/argparse_utils.py), SGLang's
  // ConfigArgumentMerger._insert_config_args returns config_args + the command's
  // (sgl-project/sglang@03bd2f16 python/sglang/srt/server_args_config_parser.py). A file the text
  // writes before the command (a heredoc, a Markdown block under its name) is read from there.
  void expand_config(std::vector<Token>& tokens) {
    if (g_.config_flag.empty()) return;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].text != g_.config_flag || tokens[i].shape != WordShape::literal || i + 1 >= tokens.size()) continue;
      const Token at = tokens[i];
      const std::string path = tokens[i + 1].text;
      if (tokens[i + 1].shape != WordShape::literal) {
        unread(at, path, fmt::format("not read: the {} file is named by the shell when the command runs", g_.config_flag));
        return;
      }
      tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.begin() + static_cast<std::ptrdiff_t>(i + 2));
      const std::string_view ext = std::string_view(path).substr(path.rfind('.') == std::string::npos ? path.size() : path.rfind('.'));
      if (ext != ".yaml" && ext != ".yml") {
        add("args.config", Severity::error, exits(fmt::format("{} takes a .yaml or .yml file, got {}", g_.config_flag, path)), at,
            g_.config_flag, path);
        return;
      }
      std::vector<Token> from_file;
      if (const LaunchCommand::WrittenFile* w = written_before(path)) {
        add("args.config", Severity::info,
            fmt::format("read as this file writes it at line {}{}", w->line,
                        w->expands ? "; the values the shell fills in ($VAR) are not checked" : ""),
            at, g_.config_flag, path);
        if (config_tokens(*w->text, path, at, from_file, w)) tokens.insert(tokens.begin(), from_file.begin(), from_file.end());
        return;
      }
      if (!o_.read_config) {
        unread(at, path, fmt::format("not read: {} files are read only when checking files", g_.config_flag));
        return;
      }
      Result<std::string> text = o_.read_config(path, cmd_);
      if (!text) {
        // Refused here, or not there to open when attnsel runs (a file the deployment provides, a
        // document's example): its flags are unknown, which is no reason to say the engine exits.
        if (text.error().code == ErrorCode::invalid_argument) {
          unread(at, path, fmt::format("not read: {}", text.error().message));
        } else if (detail::names_absent_file(text.error())) {
          unread(at, path, fmt::format("not read: {} {}", path, text.error().message));
        } else {
          add("args.config", Severity::error,
              exits(fmt::format("cannot read {} {}: {}", g_.config_flag, path, text.error().message)), at, g_.config_flag, path);
        }
        return;
      }
      if (config_tokens(*text, path, at, from_file, nullptr)) tokens.insert(tokens.begin(), from_file.begin(), from_file.end());
      return;  // the engine merges one config file
    }
  }

  // A config file not read: any flag may be in it, so what is absent is not assumed absent.
  void unread(const Token& at, const std::string& path, std::string message) {
    add("args.config", Severity::info, message + "; the flags it sets are not checked", at, g_.config_flag, path);
    if (!out_.open_ended) out_.open_ended_line = at.line;
    out_.open_ended = true;
    unread_config_ = path;
  }

  // The last file the text writes before the command under the same file name (its directory
  // aside: `cat > /tmp/cfg.yaml` then `cd /tmp` and `--config cfg.yaml`); null when none.
  const LaunchCommand::WrittenFile* written_before(const std::string& path) const {
    auto name_of = [](std::string_view p) { return p.substr(p.rfind('/') == std::string_view::npos ? 0 : p.rfind('/') + 1); };
    for (auto it = cmd_.written.rbegin(); it != cmd_.written.rend(); ++it)
      if (it->text && name_of(it->path) == name_of(path)) return &*it;
    return nullptr;
  }

  // YAML keys are flag names; true is the flag alone, false omits it (vLLM gives --no-KEY where the
  // grammar has it), a list is several values, a mapping one JSON value (vLLM's load_config_file).
  // `written`: the file is part of the text holding the command, its lines that text's.
  bool config_tokens(const std::string& text, const std::string& path, const Token& at, std::vector<Token>& out,
                     const LaunchCommand::WrittenFile* written) {
#if ATTNSEL_ARGS_YAML
    const std::string origin = written ? std::string() : path;
    const int base = written ? written->line - 1 : 0;
    auto token = [&](std::string t, int line) {
      const WordShape shape = written && written->expands && expands(t) ? WordShape::value : WordShape::literal;
      out.push_back(Token{std::move(t), base + line, shape, origin, shape == WordShape::literal});
    };
    try {
      // A scanned repository's config file is hostile input: aliases and size are budgeted first.
      if (auto problem = detail::find_yaml_problem(text)) {
        add("args.config", Severity::error,
            exits(fmt::format("{} {} is not valid YAML (line {}): {}", g_.config_flag, path, base + problem->line,
                              problem->message)),
            at, g_.config_flag, path);
        return false;
      }
      const YAML::Node root = YAML::Load(text);
      if (root.IsNull()) return true;
      if (!root.IsMap()) {
        add("args.config", Severity::error, exits(fmt::format("{} {} is not a mapping of flag names to values", g_.config_flag, path)),
            at, g_.config_flag, path);
        return false;
      }
      for (const auto& entry : root) {
        if (!entry.first.IsScalar()) continue;
        const std::string key = entry.first.Scalar();
        const int line = entry.first.Mark().line + 1;
        const std::string flag = "--" + key;
        const YAML::Node& value = entry.second;
        const GrammarFlag* f = g_.exact(flag);
        if (!f && written && written->section && value.IsMap()) continue;  // the orchestrator's (ServiceArgs)
        const std::string scalar = value.IsScalar() ? value.Scalar() : std::string();
        if (value.IsScalar() && (scalar == "true" || scalar == "True" || scalar == "false" || scalar == "False")) {
          const bool yes = scalar == "true" || scalar == "True";
          if (f && f->takes_values()) {
            token(flag, line);
            token(scalar, line);
          } else if (yes) {
            token(flag, line);
          } else if (g_.exact("--no-" + key)) {
            token("--no-" + key, line);
          }
          continue;
        }
        if (value.IsSequence() && value.size() == 0) continue;
        token(flag, line);
        if (value.IsSequence()) {
          for (const auto& item : value) token(item.IsScalar() ? item.Scalar() : json_of(item, 0), item.Mark().line + 1);
        } else if (value.IsScalar()) {
          token(value.Scalar(), value.Mark().line + 1);
        } else if (value.IsMap()) {
          token(json_of(value, 0), value.Mark().line + 1);
        }
      }
      return true;
    } catch (const YAML::Exception& e) {
      add("args.config", Severity::error,
          exits(fmt::format("{} {} is not valid YAML (line {}): {}", g_.config_flag, path, base + e.mark.line + 1, e.msg)), at,
          g_.config_flag, path);
      return false;
    }
#else
    (void)text, (void)out, (void)written;
    add("args.config", Severity::info, "not read: this build of attnsel reads no YAML", at, g_.config_flag, path);
    return false;
#endif
  }

#if ATTNSEL_ARGS_YAML
  // A YAML value as the JSON text json.dumps(yaml.safe_load(...)) gives: plain scalars that YAML
  // reads as numbers, booleans or null stay bare, every other scalar is a string.
  static std::string json_of(const YAML::Node& node, int depth) {
    if (depth > 64) return "null";
    if (node.IsMap()) {
      std::string out = "{";
      for (const auto& kv : node) {
        if (out.size() > 1) out += ", ";
        out += nlohmann::json(kv.first.IsScalar() ? kv.first.Scalar() : std::string()).dump(-1, ' ', false,
                                                                                              nlohmann::json::error_handler_t::replace);
        out += ": " + json_of(kv.second, depth + 1);
      }
      return out + "}";
    }
    if (node.IsSequence()) {
      std::string out = "[";
      for (const auto& item : node) out += (out.size() > 1 ? ", " : "") + json_of(item, depth + 1);
      return out + "]";
    }
    if (!node.IsScalar()) return "null";
    const std::string& t = node.Scalar();
    if (node.Tag() != "!") {  // plain, not quoted
      if (t == "true" || t == "True" || t == "TRUE") return "true";
      if (t == "false" || t == "False" || t == "FALSE") return "false";
      if (t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL") return "null";
      if (nlohmann::json::accept(t)) {
        const auto j = nlohmann::json::parse(t, nullptr, false);
        if (j.is_number()) return t;
      }
    }
    return nlohmann::json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
#endif

  void parse(const std::vector<Token>& tokens) {
    std::size_t i = 0;
    bool only_values = false;  // after "--" argparse takes every word as positional
    while (i < tokens.size()) {
      const Token& t = tokens[i];
      if (!only_values && t.text == "--" && t.shape == WordShape::literal) {
        only_values = true;
        ++i;
        continue;
      }
      if (t.shape != WordShape::literal && !optional_like(t)) {
        // "$@", "${ARGS[@]}", "$FLAG": may be any flags at all.
        if (!out_.open_ended) out_.open_ended_line = t.line;
        out_.open_ended = true;
        ++i;
        continue;
      }
      if (only_values || !optional_like(t)) {
        add("args.positional", Severity::error,
            exits(fmt::format("unrecognized arguments: {} (it takes no positional arguments here)", t.text)), t, t.text);
        ++i;
        continue;
      }
      i = option(tokens, i);
    }
  }

  // The flag an option string names, exactly or (allow_abbrev) by a unique prefix; null otherwise.
  const GrammarFlag* resolve(const std::string& name) const {
    if (const GrammarFlag* f = g_.exact(name)) return f;
    if (!g_.allow_abbrev || !starts_with(name, "--")) return nullptr;
    const std::vector<const GrammarFlag*> matches = g_.prefixed(name);
    return matches.size() == 1 ? matches.front() : nullptr;
  }

  // `--attention-config.backend X`, `-ac.backend=X`: one key of a JSON flag (dotted_keys). The
  // value is JSON when it parses and text otherwise, so it is not type-checked here.
  std::optional<std::size_t> dotted(const std::vector<Token>& tokens, std::size_t i, const std::string& name) {
    const std::size_t dot = name.find('.'), eq = name.find('=');
    if (!g_.dotted_keys || dot == std::string::npos || (eq != std::string::npos && eq < dot) || dot + 1 == name.size())
      return std::nullopt;
    const std::string head = name.substr(0, dot);
    const GrammarFlag* flag = resolve(head);
    if (!flag || !flag->takes_values()) return std::nullopt;
    const Token& t = tokens[i];
    ParsedArgs::Given given{flag, head, t.line, {}, t.origin};
    given.key = name.substr(dot + 1, eq == std::string::npos ? std::string::npos : eq - dot - 1);
    std::size_t next = i + 1;
    if (eq != std::string::npos) {
      const std::string value = name.substr(eq + 1);
      given.values.push_back(ArgValue{value, head, t.line, value_shape(t, value), t.origin});
    } else if (next < tokens.size() && !optional_like(tokens[next])) {
      given.values.push_back(ArgValue{tokens[next].text, head, t.line, tokens[next].shape, tokens[next].origin});
      ++next;
    } else {
      add("args.missing-value", Severity::error, exits(fmt::format("argument {}: expected one argument", name)), t, name);
      return next;
    }
    out_.given.push_back(std::move(given));
    return next;
  }

  // What the bindings read: keys of JSON values, case, and values that mean "not given".
  void bound_values() {
    struct Found {
      ArgValue value;
      bool dotted = false;
      bool unset = false;  // a value the binding takes as "not given"
    };
    std::vector<std::pair<std::string, Found>> found;
    for (ParsedArgs::Given& g : out_.given) {
      const GrammarFlag& f = *g.flag;
      auto upper = [&](std::string text) {
        if (f.upper_case) std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
        return text;
      };
      if (!f.field.empty() && g.key.empty())
        for (ArgValue& v : g.values)
          if (v.known()) v.text = upper(v.text);
      auto unset = [&](const std::string& text) {
        return std::find(f.unset_values.begin(), f.unset_values.end(), text) != f.unset_values.end();
      };
      if (!f.field.empty() && g.key.empty() && !g.values.empty()) g.unset = unset(g.values.back().text);
      for (const GrammarFlag::KeyField& k : f.key_fields) {
        if (g.values.empty()) continue;
        const ArgValue& v = g.values.back();
        if (!g.key.empty()) {
          if (g.key != k.key) continue;
          ArgValue keyed = v;
          if (keyed.known()) keyed.text = upper(keyed.text);
          found.push_back({k.field, {keyed, true, unset(keyed.text)}});
          continue;
        }
        if (!v.known()) continue;
        const auto doc = nlohmann::json::parse(v.text, nullptr, /*allow_exceptions=*/false);
        if (!doc.is_object() || !doc.contains(k.key)) continue;
        const auto& item = doc[k.key];
        const std::string text = upper(item.is_string() ? item.get<std::string>() : item.dump());
        found.push_back({k.field, {ArgValue{text, v.flag, v.line, WordShape::literal, v.origin}, false, unset(text)}});
      }
    }
    // Per field: the last dotted key, else the last whole value; a value that means "not given" drops it.
    std::vector<std::string> decided;
    for (bool dotted_pass : {true, false})
      for (auto it = found.rbegin(); it != found.rend(); ++it) {
        if (it->second.dotted != dotted_pass || std::find(decided.begin(), decided.end(), it->first) != decided.end())
          continue;
        decided.push_back(it->first);
        if (!it->second.unset) out_.keyed.emplace_back(it->first, it->second.value);
      }
  }

  // One option at tokens[i] with its values; returns the index after them.
  std::size_t option(const std::vector<Token>& tokens, std::size_t i) {
    const Token& t = tokens[i];
    std::string name = t.text;
    if (g_.underscore_dashes && starts_with(name, "--")) {
      const std::size_t end = std::min(name.find_first_of(".="), name.size());
      std::replace(name.begin() + 2, name.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
    }
    if (auto next = dotted(tokens, i, name)) return *next;
    std::optional<std::string> explicit_value;
    const GrammarFlag* flag = g_.exact(name);
    if (!flag && starts_with(name, "--") && name.find('=') != std::string::npos) {
      explicit_value = name.substr(name.find('=') + 1);
      name = name.substr(0, name.find('='));
      flag = g_.exact(name);
    }
    if (!flag && g_.allow_abbrev && starts_with(name, "--")) {
      const std::vector<const GrammarFlag*> matches = g_.prefixed(name);
      if (matches.size() > 1) {
        std::vector<std::string> names;
        for (const GrammarFlag* m : matches) names.push_back(m->names.front());
        add("args.ambiguous", Severity::error,
            exits(fmt::format("ambiguous option: {} could match {}", name, quoted_list(names, 6))), t, name);
        return skip_values(tokens, i + 1);
      }
      if (matches.size() == 1) {
        flag = matches.front();
        add("args.prefix", Severity::info,
            fmt::format("{} is read as {}: argparse accepts a unique prefix, but a later release may make it ambiguous; "
                        "write the full flag",
                        name, flag->names.front()),
            t, name, {}, flag->names.front());
      }
    }
    if (!flag) {
      unknown(t, name);
      return skip_values(tokens, i + 1);
    }
    if (flag->removed) {
      add("args.removed", Severity::error,
          exits(fmt::format("{} was removed{}", name,
                            flag->replacement.empty() ? std::string() : fmt::format("; use {}", flag->replacement))),
          t, name, {}, flag->replacement);
      return skip_values(tokens, i + 1);
    }
    if (std::find(flag->deprecated_names.begin(), flag->deprecated_names.end(), name) != flag->deprecated_names.end())
      add("args.deprecated", Severity::info, fmt::format("{} is a deprecated spelling of {}", name, flag->names.front()), t,
          name, {}, flag->names.front());
    else if (flag->deprecated)
      add("args.deprecated", Severity::info,
          fmt::format("{} is deprecated{}", name,
                      flag->replacement.empty() ? std::string() : fmt::format("; use {}", flag->replacement)),
          t, name, {}, flag->replacement);

    if (flag->action == ArgAction::help || flag->action == ArgAction::version) {
      add("args.help", Severity::info,
          fmt::format("{} prints the help and exits: nothing is launched, so the rest is not judged", name), t, name);
      out_.exits_early = true;
    }
    ParsedArgs::Given given{flag, name, t.line, {}, t.origin};
    std::size_t next = i + 1;
    if (explicit_value) {
      if (!flag->takes_values()) {
        add("args.explicit-value", Severity::error,
            exits(fmt::format("argument {}: ignored explicit argument '{}' ({} takes no value)", name, *explicit_value, name)),
            t, name, *explicit_value);
        return next;
      }
      given.values.push_back(ArgValue{*explicit_value, name, t.line, value_shape(t, *explicit_value), t.origin});
    } else {
      while (next < tokens.size() && static_cast<int>(given.values.size()) < flag->nargs_max &&
             !optional_like(tokens[next]) &&
             !(tokens[next].text == "--" && tokens[next].shape == WordShape::literal)) {
        const Token& v = tokens[next++];
        given.values.push_back(ArgValue{v.text, name, t.line, v.shape, v.origin});  // findings sit on the flag's line
      }
      const bool maybe_more = std::any_of(given.values.begin(), given.values.end(),
                                          [](const ArgValue& v) { return v.shape == WordShape::words; });
      if (static_cast<int>(given.values.size()) < flag->nargs_min && !maybe_more) {
        const std::string expected = flag->nargs_min == 1 && flag->nargs_max == 1 ? "expected one argument"
                                     : flag->nargs_max > flag->nargs_min      ? "expected at least one argument"
                                                                              : fmt::format("expected {} arguments", flag->nargs_min);
        add("args.missing-value", Severity::error, exits(fmt::format("argument {}: {}", name, expected)), t, name);
        return next;
      }
    }
    for (const ArgValue& v : given.values) check_value(*flag, name, v);
    out_.given.push_back(std::move(given));
    return next;
  }

  std::size_t skip_values(const std::vector<Token>& tokens, std::size_t i) const {
    while (i < tokens.size() && tokens[i].shape == WordShape::literal && !optional_like(tokens[i]) && tokens[i].text != "--") ++i;
    return i;
  }

  void unknown(const Token& t, const std::string& name) {
    std::string dashed = name;
    std::replace(dashed.begin() + (starts_with(dashed, "--") ? 2 : 0), dashed.end(), '_', '-');
    std::string suggestion;
    if (dashed != name && g_.exact(dashed)) suggestion = dashed;
    else {
      if (option_names_.empty()) option_names_ = g_.option_names();
      suggestion = suggest(name, option_names_);
    }
    if (std::optional<std::string> since = o_.added_in ? o_.added_in(name) : std::nullopt) {
      add("args.unknown", Severity::error,
          exits(fmt::format("unrecognized arguments: {} ({})", name, *since)),
          t, name);
      return;
    }
    if (!g_.complete || o_.approximate) {
      add("args.unknown", Severity::info,
          fmt::format("not checked: {} is not in attnsel's {} launch grammar ({}), which is {}", name,
                      o_.engine_title.empty() ? std::string("engine") : o_.engine_title, g_.engine_version,
                      g_.complete ? "of a later release than this command runs" : "incomplete"),
          t, name, {}, suggestion);
      return;
    }
    std::string message = exits(fmt::format("unrecognized arguments: {}", name));
    if (dashed != name && suggestion == dashed) message += " (its flags are spelled with dashes)";
    add("args.unknown", Severity::error, std::move(message), t, name, {}, suggestion);
  }

  void check_value(const GrammarFlag& f, const std::string& name, const ArgValue& v) {
    if (!v.known()) return;
    const Token at{v.text, v.line, v.shape, v.origin};
    std::optional<long long> as_int;
    switch (f.type) {
      case ArgType::integer:
        as_int = python_int(v.text);
        if (!as_int) {
          add("args.type", Severity::error, exits(fmt::format("argument {}: invalid int value: '{}'", name, v.text)), at, name, v.text);
          return;
        }
        break;
      case ArgType::number:
        if (!python_float(v.text)) {
          add("args.type", Severity::error, exits(fmt::format("argument {}: invalid float value: '{}'", name, v.text)), at, name, v.text);
          return;
        }
        break;
      case ArgType::json:
        if (!nlohmann::json::accept(v.text)) {
          add("args.type", Severity::error, exits(fmt::format("argument {}: invalid loads value: '{}'", name, v.text)), at, name, v.text);
          return;
        }
        break;
      default: break;
    }
    if (f.choices.empty()) return;
    const bool valid = std::any_of(f.choices.begin(), f.choices.end(), [&](const std::string& c) {
      if (as_int) return python_int(c) == as_int;
      return c == v.text;
    });
    if (valid) return;
    if (o_.approximate) {
      add("args.choice", Severity::info,
          fmt::format("not checked: '{}' is not among {}'s choices in attnsel's launch grammar of {}, a later release than "
                      "this command runs",
                      v.text, name, g_.engine_version),
          at, name, v.text, suggest(v.text, f.choices));
      return;
    }
    add("args.choice", Severity::error,
        exits(fmt::format("argument {}: invalid choice: '{}' (choose from {})", name, v.text, quoted_list(f.choices, 40))), at,
        name, v.text, suggest(v.text, f.choices));
  }

  void required() {
    for (const GrammarFlag& f : g_.flags) {
      if (!f.required) continue;
      const bool given = std::any_of(out_.given.begin(), out_.given.end(), [&](const auto& gv) { return gv.flag == &f; });
      if (given || (out_.positional_model && !f.field.empty() && f.field == "model")) continue;
      const Token at{"", cmd_.line, WordShape::literal, ""};
      if (out_.open_ended)
        add("args.required", Severity::info,
            unread_config_.empty()
                ? fmt::format("{} is required; it is not written here, so it must come from the words the shell expands",
                              f.names.front())
                : fmt::format("{} is required; it is not written here, so it must come from {} {}, which was not read",
                              f.names.front(), g_.config_flag, unread_config_),
            at, f.names.front());
      else
        add("args.required", Severity::error, exits(fmt::format("the following arguments are required: {}", f.names.front())), at,
            f.names.front());
    }
  }

  // The closest valid name, for the first kMaxSuggestions distinct names of a command, each found
  // once: 50,000 unknown flags cost 64 searches, not 50,000.
  std::string suggest(const std::string& name, const std::vector<std::string>& choices) {
    static constexpr std::size_t kMaxSuggestions = 64;
    const std::string key = name + '\n' + std::to_string(reinterpret_cast<std::uintptr_t>(&choices));
    if (auto it = suggestions_.find(key); it != suggestions_.end()) return it->second;
    if (suggestions_.size() >= kMaxSuggestions) return {};
    return suggestions_[key] = detail::closest_match(name, choices);
  }

  const LaunchCommand& cmd_;
  const Grammar& g_;
  const ParseOptions& o_;
  ParsedArgs out_;
  std::unordered_set<std::string> noted_;
  std::unordered_map<std::string, std::string> suggestions_;
  std::vector<std::string> option_names_;  // g_.option_names(), made once
  bool negative_options_ = false;
  std::string unread_config_;  // the --config file not read, when one was not
};

}  // namespace

const ArgValue* ParsedArgs::value(std::string_view field) const {
  for (const auto& [name, v] : keyed)
    if (name == field) return &v;
  for (auto it = given.rbegin(); it != given.rend(); ++it)
    if (it->flag->field == field && it->key.empty() && !it->values.empty()) return it->unset ? nullptr : &it->values.back();
  if (field == "model" && positional_model) return &*positional_model;
  return nullptr;
}

const ParsedArgs::Given* ParsedArgs::flag(std::string_view field) const {
  for (auto it = given.rbegin(); it != given.rend(); ++it)
    if (it->flag->field == field) return &*it;
  return nullptr;
}

std::vector<std::string> ParsedArgs::unbound() const {
  std::vector<std::string> out;
  for (const Given& g : given)
    if (g.flag->field.empty() && g.flag->key_fields.empty() &&
        std::find(out.begin(), out.end(), g.flag->names.front()) == out.end())
      out.push_back(g.flag->names.front());
  return out;
}

bool ArgValue::known() const {
  if (shape == WordShape::literal) return true;
  // A variable's default as the reader resolved it (one plain word), quoted or not; not one that
  // holds a placeholder (<path>, {{ x }}, ..., REPLACE_ENV_X: launch_detail::placeholder_shape).
  return text.find_first_of("$`<>") == std::string::npos && text.find("{{") == std::string::npos &&
         text.find("...") == std::string::npos && !launch_detail::holds_template_name(text) && !text.empty() &&
         (shape == WordShape::value || text.find_first_of(" \t") == std::string::npos);
}

ParsedArgs parse_launch_args(const LaunchCommand& command, const Grammar& grammar, const ParseOptions& options) {
  return Parser(command, grammar, options).run();
}

}  // namespace attnsel
