// Suppression comments and rule selection (include/attnsel/suppress.hpp).
//
// Hostile input: a comment may list a million ids, a file may hold a comment on every line. Reading
// is one pass over the text; each finding is matched through hash maps keyed by the ids, families and
// prefixes of its own rule (linear in the rule's length), never by walking the comments' lists; the
// findings about comments are capped per file.
#include "attnsel/suppress.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "attnsel/rules.hpp"
#include "attnsel/suggest.hpp"
#include "attnsel/walk.hpp"

namespace attnsel {

namespace fs = std::filesystem;

bool rule_pattern_matches(std::string_view pattern, std::string_view rule) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return rule.substr(0, pattern.size()) == pattern;
  }
  if (pattern == rule) return true;
  return rule.size() > pattern.size() && rule[pattern.size()] == '.' && rule.substr(0, pattern.size()) == pattern;
}

namespace {

// Every rule id of the registry, with what a pattern may name: ids, families, prefixes.
struct KnownRules {
  std::vector<std::string> ids;  // sorted
  std::unordered_set<std::string> exact;  // ids and families (each part before a '.')
  std::optional<Error> error;
};

const KnownRules& known_rules() {
  static const KnownRules known = [] {
    KnownRules k;
    auto docs = rule_docs();
    if (!docs) {
      k.error = docs.error();
      return k;
    }
    for (const RuleDoc& d : **docs) {
      k.ids.push_back(d.id);
      k.exact.insert(d.id);
      for (std::size_t dot = d.id.find('.'); dot != std::string::npos; dot = d.id.find('.', dot + 1))
        k.exact.insert(d.id.substr(0, dot));
    }
    // The findings about suppression comments are rules of the registry too (data/rules.json).
    std::sort(k.ids.begin(), k.ids.end());
    return k;
  }();
  return known;
}

bool names_a_rule(std::string_view pattern) {
  const KnownRules& k = known_rules();
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    auto it = std::lower_bound(k.ids.begin(), k.ids.end(), pattern,
                               [](const std::string& id, std::string_view p) { return std::string_view(id) < p; });
    return it != k.ids.end() && std::string_view(*it).substr(0, pattern.size()) == pattern;
  }
  return k.exact.count(std::string(pattern)) > 0;
}

// A pattern as it is echoed in a message: at most 80 bytes (cut at a character).
std::string shown_pattern(std::string_view p) {
  if (p.size() <= 80) return std::string(p);
  std::size_t cut = 80;
  while (cut > 0 && (static_cast<unsigned char>(p[cut]) & 0xC0) == 0x80) --cut;
  return std::string(p.substr(0, cut)) + "…";
}

}  // namespace

std::optional<Error> check_rule_pattern(std::string_view pattern, const std::string& where) {
  const KnownRules& k = known_rules();
  if (k.error) return k.error;
  if (names_a_rule(pattern)) return std::nullopt;
  Error e;
  e.code = ErrorCode::unknown_name;
  e.where = where;
  const std::string p(pattern.substr(0, std::min<std::size_t>(pattern.size(), 200)));
  e.suggestion = closest_name(p, k.ids);  // the ids are hundreds: `attnsel rule --list`, not the message, lists them
  e.message = fmt::format("unknown rule '{}': no rule id, family (args, check, advisory ...) or prefix* of `attnsel "
                          "rule --list` matches it",
                          shown_pattern(pattern));
  return e;
}

std::optional<Error> validate_rule_selection(const RuleSelection& rules) {
  for (const auto* list : {&rules.select, &rules.ignore})
    for (const RulePattern& p : *list)
      if (auto e = check_rule_pattern(p.pattern, p.where)) return e;
  for (const PathRules& r : rules.per_path)
    for (const RulePattern& p : r.ignore)
      if (auto e = check_rule_pattern(p.pattern, p.where)) return e;
  return std::nullopt;
}

namespace {

// `file` relative to `base` ('/'-separated), "" when it is not under it.
std::string relative_to(const std::string& file, const std::string& base) {
  std::error_code ec;
  fs::path p(file);
  if (p.is_relative()) p = fs::current_path(ec) / p;
  fs::path b = base.empty() ? fs::current_path(ec) : fs::path(base);
  if (b.is_relative()) b = fs::current_path(ec) / b;
  const fs::path rel = p.lexically_normal().lexically_relative(b.lexically_normal());
  const std::string s = rel.generic_string();
  if (s.empty() || s == "." || s.rfind("..", 0) == 0) return "";
  return s;
}

std::optional<Suppression> selection_of(const RuleSelection& rules, std::string_view rule, const std::string& rel) {
  if (!rules.select.empty() &&
      std::none_of(rules.select.begin(), rules.select.end(),
                   [&](const RulePattern& p) { return rule_pattern_matches(p.pattern, rule); }))
    return Suppression{Suppression::Kind::external, rules.select.front().where, ""};
  for (const RulePattern& p : rules.ignore)
    if (rule_pattern_matches(p.pattern, rule)) return Suppression{Suppression::Kind::external, p.where, p.pattern};
  if (!rel.empty())
    for (const PathRules& r : rules.per_path)
      if (glob_match(r.glob, rel, false))
        for (const RulePattern& p : r.ignore)
          if (rule_pattern_matches(p.pattern, rule)) return Suppression{Suppression::Kind::external, p.where, p.pattern};
  return std::nullopt;
}

}  // namespace

std::optional<Suppression> selection_suppression(const RuleSelection& rules, std::string_view rule,
                                                 const std::string& file) {
  if (rules.empty()) return std::nullopt;
  return selection_of(rules, rule, rules.per_path.empty() || file.empty() ? std::string() : relative_to(file, rules.base));
}

// ---- comments ----

struct SourceSuppressions::Impl {
  struct Item {
    std::string pattern;
    int line = 0, column = 0;
    bool used = false;
  };
  struct Directive {
    int line = 0, column = 0, target = 0;  // target: the line of code it holds for; 0 none (whole file: file)
    bool file = false;
    bool bare = false;  // no list: every rule
    bool used = false;  // bare: suppressed something
    std::vector<std::size_t> items;  // valid items only
  };
  struct Invalid {
    int line = 0, column = 0;
    std::string message;      // or, for an unknown id, the id (worded when reported, capped)
    bool unknown_id = false;
  };
  // The patterns of some directives, keyed by what a rule is looked up by.
  struct Entry {
    std::vector<std::size_t> items;  // or directives, for `bare`
    bool marked = false;             // its items are marked used already
  };
  struct Index {
    std::unordered_map<std::string, Entry> exact;  // ids and families
    std::unordered_map<std::string, Entry> star;   // prefixes before a '*'
    Entry bare;
    int first = -1, last = -1;  // the target lines it covers (cache key)
  };

  std::string file;
  std::vector<Item> items;
  std::vector<Directive> directives;  // in line order
  std::vector<std::pair<int, std::size_t>> by_target;  // (target, directive), sorted
  std::vector<Invalid> invalid;
  Index whole_file;
  Index range, line_only;  // the last command's lines, the last finding line outside it

  void add(Index& index, std::size_t d) {
    const Directive& dir = directives[d];
    if (dir.bare) {
      index.bare.items.push_back(d);
      return;
    }
    for (std::size_t i : dir.items) {
      const std::string& p = items[i].pattern;
      if (!p.empty() && p.back() == '*') index.star[p.substr(0, p.size() - 1)].items.push_back(i);
      else index.exact[p].items.push_back(i);
    }
  }

  Index& index_for(Index& cache, int first, int last) {
    if (cache.first == first && cache.last == last) return cache;
    cache = Index{};
    cache.first = first;
    cache.last = last;
    auto lo = std::lower_bound(by_target.begin(), by_target.end(), std::make_pair(first, std::size_t{0}));
    for (auto it = lo; it != by_target.end() && it->first <= last; ++it) add(cache, it->second);
    return cache;
  }

  // The first suppression `index` holds for `rule`; every matching item (or bare directive) marked used.
  std::optional<Suppression> lookup(Index& index, std::string_view rule) {
    std::optional<Suppression> found;
    auto take = [&](Entry& e, bool bare) {
      if (e.items.empty()) return;
      if (!found) {
        if (bare) {
          found = Suppression{Suppression::Kind::in_source, fmt::format("{}:{}", file, directives[e.items.front()].line), "*"};
        } else {
          const Item& first = items[e.items.front()];
          found = Suppression{Suppression::Kind::in_source, fmt::format("{}:{}", file, first.line), first.pattern};
        }
      }
      if (e.marked) return;
      e.marked = true;
      for (std::size_t i : e.items) (bare ? directives[i].used : items[i].used) = true;
    };
    const std::string id(rule);
    if (auto it = index.exact.find(id); it != index.exact.end()) take(it->second, false);
    for (std::size_t dot = id.find('.'); dot != std::string::npos; dot = id.find('.', dot + 1))
      if (auto it = index.exact.find(id.substr(0, dot)); it != index.exact.end()) take(it->second, false);
    if (!index.star.empty())
      for (std::size_t k = 0; k <= id.size(); ++k)
        if (auto it = index.star.find(id.substr(0, k)); it != index.star.end()) take(it->second, false);
    take(index.bare, true);
    return found;
  }
};

namespace {

bool space(char c) { return c == ' ' || c == '\t'; }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (space(s.front()) || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A line that only opens a comment: `#`, `//`, `<!--`, `{#`, `;`, `..` (reStructuredText).
bool comment_line(std::string_view t) {
  return starts(t, "#") || starts(t, "//") || starts(t, "<!--") || starts(t, "{#") || starts(t, ";") || starts(t, "..");
}

// A line that opens or closes a code block: ``` and ~~~ fences, AsciiDoc's ---- and .... and [source].
bool fence_line(std::string_view t) {
  if (starts(t, "```") || starts(t, "~~~") || starts(t, "[source")) return true;
  return t.size() >= 4 && (t.find_first_not_of('-') == std::string_view::npos || t.find_first_not_of('.') == std::string_view::npos);
}

// 1-based character column of byte `at` of `line` (UTF-8 lead bytes counted).
int column_of(std::string_view line, std::size_t at) {
  int col = 1;
  for (std::size_t i = 0; i < at && i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++col;
  return col;
}

// Where the comment opener before byte `at` (the "attnsel:" marker) starts, or npos when none is
// right before it (only blanks between).
std::size_t opener_before(std::string_view line, std::size_t at) {
  std::size_t end = at;
  while (end > 0 && space(line[end - 1])) --end;
  const std::string_view before = line.substr(0, end);
  for (std::string_view op : {"<!--", "{#", "//", "#"})
    if (before.size() >= op.size() && before.substr(before.size() - op.size()) == op) {
      std::size_t start = before.size() - op.size();
      if (op == "#")
        while (start > 0 && line[start - 1] == '#') --start;  // ## and ### alike
      return start;
    }
  // `;` and `..` open a comment only at the start of a line (systemd units, reStructuredText).
  if (const std::string_view t = trimmed(before); t == ";" || t == "..") {
    std::size_t start = 0;
    while (start < line.size() && space(line[start])) ++start;
    return start;
  }
  return std::string_view::npos;
}

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

}  // namespace

SourceSuppressions::SourceSuppressions(std::string_view text, std::string file) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.file = std::move(file);
  constexpr std::string_view kMarker = "attnsel:";
  // Pass 1: each line's kind, and the directives.
  enum Kind : std::uint8_t { blank, comment, fence, code };
  std::vector<Kind> kinds;  // per line, 1-based (kinds[0] unused)
  kinds.push_back(blank);
  int lineno = 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++lineno;
    const std::string_view t = trimmed(line);
    kinds.push_back(t.empty() ? blank : comment_line(t) ? comment : fence_line(t) ? fence : code);
    for (std::size_t at = line.find(kMarker); at != std::string_view::npos; at = line.find(kMarker, at + 1)) {
      const std::size_t opener = opener_before(line, at);
      if (opener == std::string_view::npos) continue;
      Impl::Directive d;
      d.line = lineno;
      d.column = column_of(line, opener);
      const bool after_code = !trimmed(line.substr(0, opener)).empty();
      d.target = after_code ? lineno : -1;  // -1: the next line of code, found below
      std::size_t i = at + kMarker.size();
      while (i < line.size() && space(line[i])) ++i;
      std::size_t w = i;
      while (w < line.size() && ((line[w] >= 'a' && line[w] <= 'z') || line[w] == '-' || (line[w] >= 'A' && line[w] <= 'Z'))) ++w;
      const std::string_view word = line.substr(i, w - i);
      auto invalid = [&](std::string message) {
        m.invalid.push_back({lineno, d.column, std::move(message), false});
      };
      if (word != "ignore" && word != "ignore-file") {
        const std::string suggestion = closest_name(word, {"ignore", "ignore-file"});
        invalid(fmt::format("'attnsel: {}' is not a suppression comment (attnsel: ignore[ID,...] or attnsel: "
                            "ignore-file[ID,...]){}: it suppresses nothing",
                            shown_pattern(word), suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion)));
        break;
      }
      d.file = word == "ignore-file";
      if (w < line.size() && (line[w] == ':' || line[w] == '=')) {
        invalid(fmt::format("'attnsel: {}{}' lists no rule as attnsel reads it: write attnsel: {}[ID,...]; it suppresses "
                            "nothing",
                            word, line[w], word));
        break;
      }
      if (w >= line.size() || line[w] != '[') {
        d.bare = true;
      } else {
        const std::size_t close = line.find(']', w);
        if (close == std::string_view::npos) {
          invalid(fmt::format("'attnsel: {}[' has no closing ']': it suppresses nothing", word));
          break;
        }
        std::size_t p = w + 1;
        int col = column_of(line, p);  // kept up to date as p moves
        std::size_t counted = p;
        bool any = false;
        while (p <= close) {
          std::size_t comma = line.find(',', p);
          if (comma == std::string_view::npos || comma > close) comma = close;
          std::string_view item = line.substr(p, comma - p);
          std::size_t lead = 0;
          while (lead < item.size() && space(item[lead])) ++lead;
          item.remove_prefix(lead);
          while (!item.empty() && space(item.back())) item.remove_suffix(1);
          for (; counted < p + lead; ++counted)
            if ((static_cast<unsigned char>(line[counted]) & 0xC0) != 0x80) ++col;
          const int item_col = col;
          if (item.empty()) {
            if (comma != close || !any)
              invalid(fmt::format("'attnsel: {}[...]' has an empty rule id: list rule ids separated by commas", word));
          } else {
            any = true;
            const bool well_formed =
                std::all_of(item.begin(), item.end() - (item.back() == '*' ? 1 : 0), id_char);
            if (!well_formed) {
              m.invalid.push_back({lineno, item_col,
                                   fmt::format("'{}' is not a rule id: it suppresses nothing", shown_pattern(item)), false});
            } else if (!names_a_rule(item)) {
              m.invalid.push_back({lineno, item_col, std::string(item), true});
            } else {
              d.items.push_back(m.items.size());
              m.items.push_back({std::string(item), lineno, item_col, false});
            }
          }
          p = comma + 1;
        }
        if (!any && d.items.empty()) break;  // `ignore[]`: told above, suppresses nothing
      }
      m.directives.push_back(std::move(d));
      break;  // one directive a line
    }
    if (nl == text.size()) break;
    start = nl + 1;
  }
  // Pass 2: the next line of code after each line, from the bottom up.
  std::vector<int> next_code(kinds.size() + 1, 0);
  for (std::size_t l = kinds.size(); l-- > 1;) next_code[l] = kinds[l] == code ? static_cast<int>(l) : next_code[l + 1];
  for (std::size_t d = 0; d < m.directives.size(); ++d) {
    Impl::Directive& dir = m.directives[d];
    if (dir.target < 0) dir.target = static_cast<std::size_t>(dir.line) + 1 < next_code.size() ? next_code[dir.line + 1] : 0;
    if (dir.file) m.add(m.whole_file, d);
    else if (dir.target > 0) m.by_target.emplace_back(dir.target, d);
  }
  std::sort(m.by_target.begin(), m.by_target.end());
}

SourceSuppressions::~SourceSuppressions() = default;
SourceSuppressions::SourceSuppressions(SourceSuppressions&&) noexcept = default;
SourceSuppressions& SourceSuppressions::operator=(SourceSuppressions&&) noexcept = default;

const std::string& SourceSuppressions::file() const { return impl_->file; }

std::size_t SourceSuppressions::size() const { return impl_->directives.size(); }

std::optional<Suppression> SourceSuppressions::match(std::string_view rule, int line, int first, int last) {
  Impl& m = *impl_;
  std::optional<Suppression> found = m.lookup(m.whole_file, rule);
  if (first > 0 && last >= first) {
    auto in_command = m.lookup(m.index_for(m.range, first, last), rule);
    if (!found) found = std::move(in_command);
  }
  if (line > 0 && (first == 0 || line < first || line > last)) {
    auto on_line = m.lookup(m.index_for(m.line_only, line, line), rule);
    if (!found) found = std::move(on_line);
  }
  return found;
}

void suppress_findings(std::vector<CommandCheck>& checks, SourceSuppressions* source, const RuleSelection& rules) {
  if (source == nullptr && rules.empty()) return;
  std::string rel_file, rel;  // the per-path name of the last file seen
  bool rel_known = false;
  for (CommandCheck& c : checks) {
    const LaunchCommand& cmd = c.command;
    SourceSuppressions* own = source != nullptr && cmd.line > 0 && cmd.file == source->file() ? source : nullptr;
    int last = cmd.line;
    for (int l : cmd.arg_lines) last = std::max(last, l);
    if (!rules.per_path.empty() && (!rel_known || rel_file != cmd.file)) {
      rel_file = cmd.file;
      rel = cmd.file.empty() ? std::string() : relative_to(cmd.file, rules.base);
      rel_known = true;
    }
    for (auto* list : {&c.findings, &c.errors, &c.warnings, &c.notes}) {
      std::vector<CheckDiagnostic> kept;
      kept.reserve(list->size());
      for (CheckDiagnostic& d : *list) {
        std::optional<Suppression> s;
        if (own) s = own->match(d.diagnostic.rule, d.line, cmd.line, last);
        if (!s && !rules.empty()) s = selection_of(rules, d.diagnostic.rule, rel);
        if (s) c.suppressed.push_back({std::move(d), std::move(*s)});
        else kept.push_back(std::move(d));
      }
      *list = std::move(kept);
    }
    // A fix is for what still counts: none once nothing that could fail the check is left.
    if (c.fix && c.verdict() == Verdict::clean) c.fix.reset();
  }
  // The fix for every target of a command, while some target of it still has something to fix.
  for (std::size_t first = 0; first < checks.size();) {
    std::size_t last = first + 1;
    while (last < checks.size() && checks[last].command.file == checks[first].command.file &&
           checks[last].command.line == checks[first].command.line && checks[last].command.args == checks[first].command.args)
      ++last;
    const bool open = std::any_of(checks.begin() + static_cast<std::ptrdiff_t>(first),
                                  checks.begin() + static_cast<std::ptrdiff_t>(last),
                                  [](const CommandCheck& c) { return c.verdict() != Verdict::clean; });
    if (!open)
      for (std::size_t i = first; i < last; ++i) checks[i].fix_all_targets.reset();
    first = last;
  }
}

std::vector<FileFinding> suppression_findings(const SourceSuppressions& source, const RuleSelection& rules,
                                              bool report_unused) {
  constexpr std::size_t kCap = 100;  // findings of each kind per file; then one that says how many more
  const SourceSuppressions::Impl& m = *source.impl_;
  std::vector<FileFinding> out;
  auto add = [&](const std::string& rule, int line, int column, std::string message) {
    FileFinding f;
    f.file = m.file;
    f.finding.diagnostic.rule = rule;
    f.finding.diagnostic.severity = Severity::warning;
    f.finding.diagnostic.message = std::move(message);
    f.finding.diagnostic.source = "attnsel's suppression comments (docs/ci.md)";
    f.finding.line = line;
    f.finding.column = column;
    f.finding.end_column = 0;
    out.push_back(std::move(f));
  };
  std::size_t shown = 0;
  for (const auto& bad : m.invalid) {
    if (shown++ == kCap) {
      add("check.invalid-suppression", bad.line, bad.column,
          fmt::format("{} more invalid suppressions in this file are not shown", m.invalid.size() - kCap));
      break;
    }
    if (!bad.unknown_id) {
      add("check.invalid-suppression", bad.line, bad.column, bad.message);
      continue;
    }
    // The closest ids are looked for only for the ones shown.
    const auto e = check_rule_pattern(bad.message, "");
    add("check.invalid-suppression", bad.line, bad.column,
        fmt::format("unknown rule '{}' in a suppression comment: it suppresses nothing{}", shown_pattern(bad.message),
                    e && !e->suggestion.empty() ? fmt::format(" (did you mean '{}'?)", e->suggestion) : ""));
  }
  if (report_unused) {
    std::size_t unused = 0;
    auto count = [&](int line, int column, std::string message) {
      if (unused++ < kCap) add("check.unused-suppression", line, column, std::move(message));
    };
    int last_line = 0, last_column = 0;
    for (const auto& d : m.directives) {
      const char* where = d.file ? "in this file" : d.target > 0 ? "where it holds" : "(no line of code follows it)";
      if (d.bare) {
        if (!d.used) count(d.line, d.column, fmt::format("unused suppression: no finding {} to suppress", where));
      } else {
        for (std::size_t i : d.items)
          if (!m.items[i].used)
            count(m.items[i].line, m.items[i].column,
                  fmt::format("unused suppression: no {} finding {} to suppress", shown_pattern(m.items[i].pattern), where));
      }
      last_line = d.line;
      last_column = d.column;
    }
    if (unused > kCap)
      add("check.unused-suppression", last_line, last_column,
          fmt::format("{} more unused suppressions in this file are not shown", unused - kCap));
  }
  std::stable_sort(out.begin(), out.end(), [](const FileFinding& a, const FileFinding& b) {
    return std::make_pair(a.finding.line, a.finding.column) < std::make_pair(b.finding.line, b.finding.column);
  });
  if (!rules.empty())
    for (FileFinding& f : out) f.suppression = selection_suppression(rules, f.finding.diagnostic.rule, f.file);
  return out;
}

}  // namespace attnsel
