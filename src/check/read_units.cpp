// Process definitions: Procfiles (`name: command`, each run by a shell) and systemd units
// (ExecStart= and its kin, split and expanded the way systemd does it, with the unit's
// Environment=); and Jinja templates made readable as what they render to.
#include <map>

#include <fmt/format.h>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {

// ---- Procfile ----

void scan_procfile(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string_view line = lines[k].text;
    // A process: NAME: COMMAND, NAME of letters, digits, '_' and '-' (what Heroku and foreman accept).
    std::size_t name_end = 0;
    while (name_end < line.size() && (is_alnum(line[name_end]) || line[name_end] == '_' || line[name_end] == '-'))
      ++name_end;
    if (name_end == 0 || name_end >= line.size() || line[name_end] != ':') continue;
    const std::string_view command = ltrim(line.substr(name_end + 1));
    if (command.empty()) continue;
    Source src;
    src.append(std::string(command) + "\n", static_cast<int>(k) + 1,
               static_cast<std::size_t>(command.data() - line.data()) + 1);
    scan_shell(src, 0, OnLexError::fail_if_sglang, sink);
  }
}

// ---- systemd units ----

namespace {

// One logical line of a unit: its text (continuations joined, each `\` made a space) and the file
// line of each of its characters.
struct UnitLine {
  std::string text;
  std::vector<int> line_of;  // parallel to text
  int line = 0;              // where it starts
};

// systemd(1)'s unit file syntax: `#` and `;` comments, a trailing backslash joins the next line
// (comment lines between are dropped), [Section] headers.
std::vector<std::pair<std::string, UnitLine>> unit_settings(std::string_view text) {
  std::vector<std::pair<std::string, UnitLine>> out;
  const std::vector<PhysicalLine> lines = split_lines(text);
  std::string section;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string_view t = ltrim(lines[k].text);
    if (t.empty() || t.front() == '#' || t.front() == ';') continue;
    if (t.front() == '[') {
      section = std::string(rtrim(t));
      continue;
    }
    UnitLine u;
    u.line = static_cast<int>(k) + 1;
    std::size_t j = k;
    for (;;) {
      std::string_view piece = j == k ? t : lines[j].text;
      const bool continued = !rtrim(piece).empty() && rtrim(piece).back() == '\\';
      if (continued) piece = rtrim(piece).substr(0, rtrim(piece).size() - 1);
      u.text.append(piece);
      u.line_of.insert(u.line_of.end(), piece.size(), static_cast<int>(j) + 1);
      if (!continued) break;
      u.text += ' ';
      u.line_of.push_back(static_cast<int>(j) + 1);
      // The next line that is not a comment goes on.
      ++j;
      auto comment = [](std::string_view l) { return !ltrim(l).empty() && (ltrim(l).front() == '#' || ltrim(l).front() == ';'); };
      while (j < lines.size() && comment(lines[j].text)) ++j;
      if (j >= lines.size()) break;
    }
    k = j;
    const std::size_t eq = u.text.find('=');
    if (eq == npos) continue;
    std::string key(rtrim(std::string_view(u.text).substr(0, eq)));
    std::size_t value = eq + 1;
    while (value < u.text.size() && is_blank(u.text[value])) ++value;
    UnitLine v;
    v.text = u.text.substr(value);
    v.line_of.assign(u.line_of.begin() + static_cast<std::ptrdiff_t>(std::min(value, u.line_of.size())), u.line_of.end());
    v.line = v.line_of.empty() ? u.line : v.line_of.front();
    out.emplace_back(section + key, std::move(v));
  }
  return out;
}

// A word of a command line, as systemd splits it (extract_first_word with quotes and C escapes).
struct UnitWord {
  std::string text;
  int line = 0;
  bool whole_dollar = false;  // written as $NAME alone: split at whitespace when expanded
  bool quoted = false;
};

// Splits `value` at blanks; quotes ('...' and "...") group, backslash escapes as in C. False when a
// quote is not closed (systemd refuses the line).
bool split_unit_words(const UnitLine& value, std::vector<UnitWord>& words) {
  const std::string& s = value.text;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    if (i >= s.size()) break;
    UnitWord w;
    w.line = value.line_of[i];
    char quote = '\0';
    const std::size_t start = i;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (quote == '\0' && is_blank(c)) break;
      if (c == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        switch (e) {
          case 'n': w.text += '\n'; break;
          case 't': w.text += '\t'; break;
          case 'r': w.text += '\r'; break;
          case 'a': w.text += '\a'; break;
          case 'b': w.text += '\b'; break;
          case 'f': w.text += '\f'; break;
          case 'v': w.text += '\v'; break;
          case 's': w.text += ' '; break;
          case 'x': {  // \xNN
            auto hex = [](char h) { return std::isxdigit(static_cast<unsigned char>(h)) != 0; };
            if (i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
              w.text += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
              i += 2;
            } else {
              w.text += e;
            }
            break;
          }
          default:
            if (e >= '0' && e <= '7' && i + 2 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' && s[i + 2] >= '0' &&
                s[i + 2] <= '7') {  // \ooo
              w.text += static_cast<char>(std::stoi(s.substr(i, 3), nullptr, 8) & 0xFF);
              i += 2;
            } else {
              w.text += e;  // \\, \", \', and what systemd passes through
            }
            break;
        }
        continue;
      }
      if (quote != '\0' && c == quote) {
        quote = '\0';
        continue;
      }
      if (quote == '\0' && (c == '"' || c == '\'')) {
        quote = c;
        w.quoted = true;
        continue;
      }
      w.text += c;
    }
    if (quote != '\0') return false;
    const std::string_view raw = std::string_view(s).substr(start, i - start);
    w.whole_dollar = !w.quoted && raw.size() > 1 && raw.front() == '$' && raw[1] != '{' && raw[1] != '$';
    words.push_back(std::move(w));
  }
  return true;
}

using UnitEnvironment = std::map<std::string, std::string, std::less<>>;

// systemd.service(5) "Command lines": ${NAME} anywhere in a word, $NAME as a whole word (split at
// whitespace), $$ a literal $; % specifiers (%i, %h ...) are known only when the unit runs, %% is %.
// A variable the unit does not set and a specifier stay unknown values (their ${...} text).
std::vector<ArgWord> expand_unit_words(const std::vector<UnitWord>& words, const UnitEnvironment& env) {
  std::vector<ArgWord> out;
  for (const UnitWord& w : words) {
    if (w.whole_dollar) {
      const std::string_view name = std::string_view(w.text).substr(1);
      auto it = env.find(name);
      if (it == env.end()) {
        out.push_back(ArgWord{"${" + std::string(name) + "}", w.line, 0, WordShape::words});
        continue;
      }
      std::string_view rest = it->second;
      while (!(rest = ltrim(rest)).empty()) {
        const std::size_t end = std::min(rest.find_first_of(" \t\n"), rest.size());
        out.push_back(ArgWord{std::string(rest.substr(0, end)), w.line, 0, WordShape::value});
        rest = rest.substr(end);
      }
      continue;
    }
    ArgWord a{std::string(), w.line, 0, WordShape::literal};
    const std::string& t = w.text;
    for (std::size_t i = 0; i < t.size();) {
      if (t.compare(i, 2, "$$") == 0 || t.compare(i, 2, "%%") == 0) {
        a.text += t[i];
        i += 2;
      } else if (t.compare(i, 2, "${") == 0 && t.find('}', i) != npos) {
        const std::size_t close = t.find('}', i);
        const std::string_view name = std::string_view(t).substr(i + 2, close - i - 2);
        auto it = env.find(name);
        a.text += it == env.end() ? t.substr(i, close + 1 - i) : it->second;
        a.shape = WordShape::value;
        i = close + 1;
      } else if (t[i] == '%' && i + 1 < t.size() && is_alpha(t[i + 1])) {
        a.text += "${%" + std::string(1, t[i + 1]) + "}";
        a.shape = WordShape::value;
        i += 2;
      } else {
        a.text += t[i++];
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

bool is_exec_key(std::string_view key) {
  static constexpr std::string_view kKeys[] = {"ExecStart",    "ExecStartPre", "ExecStartPost", "ExecCondition",
                                               "ExecReload",   "ExecStop",     "ExecStopPost"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

}  // namespace

void scan_systemd(std::string_view text, Sink& sink) {
  const auto settings = unit_settings(text);
  // Environment= anywhere in the unit applies to every command of it (systemd reads the whole
  // unit before running anything); a later assignment of a name wins, an empty Environment= resets.
  UnitEnvironment env;
  for (const auto& [key, value] : settings) {
    if (key != "[Service]Environment") continue;
    if (value.text.empty()) {
      env.clear();
      continue;
    }
    std::vector<UnitWord> words;
    if (!split_unit_words(value, words)) continue;
    for (const UnitWord& w : words) {
      const std::size_t eq = w.text.find('=');
      if (eq == npos || eq == 0 || !is_assignment(std::string_view(w.text).substr(0, eq + 1))) continue;
      if (env.size() < 4096) env[w.text.substr(0, eq)] = w.text.substr(eq + 1);
    }
  }
  Environment shell_env(env.begin(), env.end());  // for the scripts of bash -c
  const Context ctx{nullptr, shell_env.empty() ? nullptr : &shell_env};
  for (const auto& [key, value] : settings) {
    const std::string_view section_key = key;
    if (!starts_with(section_key, "[Service]") || !is_exec_key(section_key.substr(9))) continue;
    // The special prefixes: @ (the second word is argv[0]), -, :, +, ! and !!.
    UnitLine command = value;
    std::size_t skip = 0;
    bool argv0 = false;
    while (skip < command.text.size() && std::string_view("@-:+!").find(command.text[skip]) != npos) {
      argv0 = argv0 || command.text[skip] == '@';
      ++skip;
    }
    command.text.erase(0, skip);
    command.line_of.erase(command.line_of.begin(),
                          command.line_of.begin() + static_cast<std::ptrdiff_t>(std::min(skip, command.line_of.size())));
    std::vector<UnitWord> words;
    if (!split_unit_words(command, words)) {
      if (sink.mentions_launcher(command.text)) sink.fail("unterminated quote in " + std::string(section_key.substr(9)) + "=", value.line);
      continue;
    }
    // `;` alone separates commands (ExecStartPre= and the like may hold several).
    std::vector<UnitWord> one;
    auto flush = [&] {
      if (argv0 && !one.empty()) one.erase(one.begin());
      if (!one.empty()) extract(expand_unit_words(one, env), ctx, 0, sink);
      one.clear();
    };
    for (UnitWord& w : words) {
      if (w.text == ";" && !w.quoted) {
        flush();
        continue;
      }
      one.push_back(std::move(w));
    }
    flush();
  }
}

// ---- Jinja templates ----

namespace {

// A line that held only statements (now blanks) after a line ending in `\` becomes `\` itself:
// the command goes on past it, as it does when Jinja renders with trim_blocks (Ansible's default),
// and every line stays where it was.
std::string continue_over_statements(const std::string& rendered, const std::vector<bool>& statement_only) {
  std::string out;
  out.reserve(rendered.size());
  bool continued = false;
  std::size_t k = 0;
  for (const PhysicalLine& l : split_lines(rendered)) {
    const bool blank = trim(l.text).empty();
    if (blank && continued && k < statement_only.size() && statement_only[k]) {
      out += "\\\n";
    } else {
      out.append(l.text).append("\n");
      continued = ends_with(rtrim(l.text), "\\");
    }
    ++k;
  }
  return out;
}

}  // namespace

std::string jinja_as_text(std::string_view text, bool keep_values) {
  // The lines that hold a statement or a comment and nothing else.
  std::vector<bool> statement_only;
  for (const PhysicalLine& l : split_lines(text)) {
    const std::string_view t = trim(l.text);
    statement_only.push_back((starts_with(t, "{%") && ends_with(t, "%}")) || (starts_with(t, "{#") && ends_with(t, "#}")));
  }
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == npos || open + 1 >= text.size()) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open - i));
    const char kind = text[open + 1];
    if (kind != '%' && kind != '#' && (kind != '{' || keep_values)) {
      out += '{';
      i = open + 1;
      continue;
    }
    const std::string_view closing = kind == '%' ? "%}" : kind == '#' ? "#}" : "}}";
    const std::size_t close = text.find(closing, open + 2);
    if (close == npos) {
      out.append(text.substr(open));
      break;
    }
    const std::string_view inside = text.substr(open + 2, close - open - 2);
    if (kind == '{') {
      // An expression: an unknown value named after it (letters, digits and '_'); with a
      // `| default("V")` filter, that default, as the shell's ${NAME:-V}.
      out += "${";
      std::string_view e = trim(inside);
      while (!e.empty() && (e.front() == '-' || e.front() == '+')) e = trim(e.substr(1));
      while (!e.empty() && (e.back() == '-' || e.back() == '+')) e = trim(e.substr(0, e.size() - 1));
      std::string fallback;
      if (const std::size_t bar = e.find('|'); bar != npos) {
        const std::string_view filter = trim(e.substr(bar + 1));
        const std::size_t open_paren = filter.find('(');
        const std::string_view name = trim(filter.substr(0, open_paren));
        if ((name == "default" || name == "d") && open_paren != npos && ends_with(filter, ")")) {
          const std::string_view arg = trim(filter.substr(open_paren + 1, filter.size() - open_paren - 2));
          if (arg.size() >= 2 && (arg.front() == '"' || arg.front() == '\'') && arg.back() == arg.front() &&
              arg.substr(1, arg.size() - 2).find_first_of("\"'${}` \t\n\\") == npos)
            fallback = std::string(arg.substr(1, arg.size() - 2));
        }
        e = trim(e.substr(0, bar));
      }
      std::size_t n = 0;
      for (char c : e) {
        if (c == '\n' || ++n > 64) continue;
        out += is_alnum(c) || c == '_' ? c : '_';
      }
      if (n == 0) out += '_';
      if (!fallback.empty()) out += ":-" + fallback;
      out += '}';
    }
    // Statements and comments leave their newlines: the lines after them stay where they were.
    for (char c : inside)
      if (c == '\n') out += '\n';
    i = close + 2;
  }
  return keep_values ? out : continue_over_statements(out, statement_only);
}

}  // namespace attnsel::launch_detail
