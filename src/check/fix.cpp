// Fixes of failing launch commands: changed copies of the command, judged as the command was.
#include "attnsel/fix.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "attnsel/catalog.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/suggest.hpp"

namespace attnsel {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Makes `change` in `command`; false when the command does not write that flag with that value
// (a value from a --config file or a variable the shell fills in: not a change of this command).
bool apply_change(LaunchCommand& command, const FlagChange& change) {
  if (change.environment) {
    auto& env = command.environment;
    for (auto it = env.begin(); it != env.end(); ++it) {
      if (it->name != change.flag || it->value != change.from) continue;
      if (change.drops()) env.erase(it);
      else it->value = change.to;
      return true;
    }
    return false;
  }
  auto& args = command.args;
  const auto erase = [&command](std::size_t at, std::size_t count) {
    const auto first = static_cast<std::ptrdiff_t>(at), last = static_cast<std::ptrdiff_t>(at + count);
    command.args.erase(command.args.begin() + first, command.args.begin() + last);
    if (command.arg_lines.size() >= at + count)
      command.arg_lines.erase(command.arg_lines.begin() + first, command.arg_lines.begin() + last);
    if (command.arg_shapes.size() >= at + count)
      command.arg_shapes.erase(command.arg_shapes.begin() + first, command.arg_shapes.begin() + last);
  };
  const std::string joined = change.flag + "=" + change.from;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (command.shape(i) != WordShape::literal) continue;
    if (args[i] == change.flag && i + 1 < args.size() && args[i + 1] == change.from &&
        command.shape(i + 1) == WordShape::literal) {
      if (change.drops()) erase(i, 2);
      else args[i + 1] = change.to;
      return true;
    }
    if (args[i] == joined) {
      if (change.drops()) erase(i, 1);
      else args[i] = change.flag + "=" + change.to;
      return true;
    }
  }
  return false;
}

// A flag an error names, and what it may be changed to, nearest first.
struct Culprit {
  std::string flag, value;
  bool environment = false;
  std::vector<std::string> values;  // replacements; dropping the flag is tried after them
};

// Whether `value` names one of the matrix's backends (so a valid backend may replace it).
bool names_backend(const Matrix& matrix, std::string_view value) {
  return std::any_of(matrix.backends().begin(), matrix.backends().end(),
                     [value](const Backend& b) { return same_name(b.name, value); });
}

// `name` in the case `like` is written in (vLLM's FLASH_ATTN, SGLang's fa3).
std::string cased_like(std::string name, std::string_view like) {
  const bool upper = std::any_of(like.begin(), like.end(), [](char x) { return std::isupper(static_cast<unsigned char>(x)); });
  if (upper)
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char x) { return static_cast<char>(std::toupper(static_cast<unsigned char>(x))); });
  return name;
}

// The flags the failing findings of `check` name, each with its candidate values: for a backend,
// the backends the selection found valid; for a value the engine refused before selecting (a
// misspelt backend), the matrix's backends closest to it. `matrix` judges commands of its engine.
std::vector<Culprit> culprits_of(const CommandCheck& check, const Matrix& given, bool strict) {
  std::vector<Culprit> out;
  const Selection* s = check.selection ? &*check.selection : nullptr;
  const bool own_engine = check.command.engine.empty() || check.command.engine == given.info().engine;
  const Matrix* matrix = s ? s->matrix.get() : own_engine ? &given : nullptr;
  std::vector<std::string> backend_names;
  if (matrix)
    for (const Backend& b : matrix->backends()) backend_names.push_back(b.name);
  // The first few flags are enough to find the nearest fix (a command with thousands of failing
  // flags stays linear: each is compared with at most these).
  constexpr std::size_t kMaxCulprits = 8;
  const auto add = [&](const std::string& flag, const std::string& value, bool environment) {
    if (flag.empty() || value.empty() || out.size() >= kMaxCulprits) return;
    for (const Culprit& c : out)
      if (c.flag == flag && c.value == value) return;
    Culprit c{flag, value, environment, {}};
    if (s && names_backend(*matrix, value)) {
      for (BackendId b : s->alternatives)
        if (!same_name(s->name(b), value)) c.values.push_back(cased_like(s->name(b), value));
    } else if (matrix && !names_backend(*matrix, value)) {
      for (std::string& name : closest_names(value, backend_names)) c.values.push_back(cased_like(std::move(name), value));
    }
    out.push_back(std::move(c));
  };
  for (const CheckDiagnostic* d : check.all()) {
    const Severity sev = d->diagnostic.severity;
    if (sev != Severity::error && !(strict && sev == Severity::warning)) continue;
    bool environment = false;
    for (const auto& e : check.command.environment)
      if (e.name == d->flag && e.value == d->value) environment = true;
    add(d->flag, d->value, environment);
    // A finding about a backend that names another flag (the KV dtype the backend refuses): the
    // flag that chose the backend is a culprit too.
    if (!d->diagnostic.backend.empty() && !same_name(d->value, d->diagnostic.backend)) {
      const auto& args = check.command.args;
      for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i].rfind("-", 0) == 0 && same_name(args[i + 1], d->diagnostic.backend)) add(args[i], args[i + 1], false);
      for (const auto& e : check.command.environment)
        if (same_name(e.value, d->diagnostic.backend)) add(e.name, e.value, true);
    }
  }
  return out;
}

class Search {
 public:
  Search(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog, const CheckOptions& options,
         std::size_t budget)
      : matrix_(matrix), catalog_(catalog), options_(options), budget_(budget) {
    options_.propose_fixes = false;
  }

  // The command with `changes` made, judged on `targets`; the fix when it passes on every one.
  std::optional<CommandFix> judge(const LaunchCommand& original, const std::vector<FlagChange>& changes,
                                  const std::vector<CheckTarget>& targets) {
    LaunchCommand command = original;
    for (const FlagChange& c : changes)
      if (!apply_change(command, c)) return std::nullopt;
    for (const CheckTarget& target : targets) {
      if (spent_ >= budget_) {
        exhausted_ = true;
        return std::nullopt;
      }
      ++spent_;
      ++judged_;
      const std::vector<CommandCheck> checks = check_command(matrix_, catalog_, command, {target}, options_);
      if (checks.empty() || checks.front().fails(options_.strict) || !checks.front().judged()) return std::nullopt;
    }
    return CommandFix{changes, std::move(command)};
  }

  // The nearest fix for one target: one culprit changed, then two.
  std::optional<CommandFix> nearest(const LaunchCommand& command, const std::vector<Culprit>& culprits,
                                    const CheckTarget& target) {
    const std::vector<CheckTarget> one{target};
    std::vector<std::vector<FlagChange>> singles;
    for (const Culprit& c : culprits) {
      std::vector<FlagChange> options;
      for (const std::string& v : c.values) options.push_back({c.flag, c.value, v, c.environment});
      options.push_back({c.flag, c.value, "", c.environment});
      for (const FlagChange& change : options)
        if (auto fix = judge(command, {change}, one)) return fix;
      singles.push_back(std::move(options));
    }
    // Two flags at once: the first few values of each, nearest first.
    constexpr std::size_t kPairValues = 3;
    for (std::size_t a = 0; a < singles.size(); ++a)
      for (std::size_t b = a + 1; b < singles.size(); ++b)
        for (std::size_t i = 0; i < std::min(kPairValues, singles[a].size()); ++i)
          for (std::size_t j = 0; j < std::min(kPairValues, singles[b].size()); ++j)
            if (auto fix = judge(command, {singles[a][i], singles[b][j]}, one)) return fix;
    return std::nullopt;
  }

  void reset(std::size_t budget) {
    spent_ = 0;
    budget_ = budget;
  }
  std::size_t judged() const { return judged_; }
  bool exhausted() const { return exhausted_; }

 private:
  std::shared_ptr<const Matrix> matrix_;
  const Catalog& catalog_;
  CheckOptions options_;
  std::size_t budget_;
  std::size_t spent_ = 0, judged_ = 0;
  bool exhausted_ = false;
};

}  // namespace

CommandFixes propose_fixes(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                           const std::vector<CommandCheck>& checks, const CheckOptions& options,
                           std::size_t budget_per_target) {
  CommandFixes out;
  out.per_target.resize(checks.size());
  if (checks.empty() || !matrix) return out;
  const LaunchCommand& command = checks.front().command;
  // Each candidate is the whole command judged again: a command longer than any real launch line
  // (a hostile one with 40,000 arguments) gets no fix rather than minutes of judging.
  if (command.args.size() > kFixMaxArguments) {
    out.budget_exhausted = true;
    return out;
  }
  Search search(matrix, catalog, options, budget_per_target);
  bool any_failing = false;
  std::vector<std::vector<Culprit>> culprits(checks.size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (!checks[i].fails(options.strict)) continue;
    any_failing = true;
    culprits[i] = culprits_of(checks[i], *matrix, options.strict);
    if (culprits[i].empty()) continue;
    search.reset(budget_per_target);
    out.per_target[i] = search.nearest(command, culprits[i], checks[i].target);
  }
  if (!any_failing) return out;

  // One command for every target: each per-target fix, then each backend every failing target's
  // selection found valid, then the culprits dropped (the engine's own choice on each GPU).
  std::vector<CheckTarget> targets;
  for (const CommandCheck& c : checks) targets.push_back(c.target);
  std::vector<std::vector<FlagChange>> candidates;
  const auto add = [&candidates](std::vector<FlagChange> changes) {
    if (changes.empty()) return;
    if (std::find(candidates.begin(), candidates.end(), changes) == candidates.end())
      candidates.push_back(std::move(changes));
  };
  for (const auto& fix : out.per_target)
    if (fix) add(fix->changes);
  std::vector<Culprit> shared;  // culprits of the first failing target that every failing target has
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (!checks[i].fails(options.strict)) continue;
    if (shared.empty()) {
      shared = culprits[i];
      continue;
    }
    std::vector<Culprit> kept;
    for (Culprit c : shared) {
      const auto other = std::find_if(culprits[i].begin(), culprits[i].end(),
                                      [&c](const Culprit& o) { return o.flag == c.flag && o.value == c.value; });
      if (other == culprits[i].end()) continue;
      std::vector<std::string> both;
      for (const std::string& v : c.values)
        if (std::find(other->values.begin(), other->values.end(), v) != other->values.end()) both.push_back(v);
      c.values = std::move(both);
      kept.push_back(std::move(c));
    }
    shared = std::move(kept);
  }
  for (const Culprit& c : shared)
    for (const std::string& v : c.values) add({{c.flag, c.value, v, c.environment}});
  std::vector<FlagChange> drops;
  for (const Culprit& c : shared) drops.push_back({c.flag, c.value, "", c.environment});
  for (const FlagChange& d : drops) add({d});
  if (drops.size() > 1) add(drops);

  search.reset(budget_per_target * targets.size());
  for (const auto& changes : candidates)
    if ((out.all_targets = search.judge(command, changes, targets))) break;
  out.judged = search.judged();
  out.budget_exhausted = search.exhausted();
  return out;
}

namespace {

// A value as a shell would need it written: as it is when plain, else in single quotes.
std::string shell_word(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-.,/:=+@%").find(c) != std::string_view::npos;
  });
  if (plain) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string describe_fix(const CommandFix& fix) {
  std::string out;
  for (const FlagChange& c : fix.changes) {
    if (!out.empty()) out += "; ";
    const std::string written = c.flag + (c.environment ? "=" : " ") + shell_word(c.from);
    if (c.drops()) out += "drop " + written;
    else out += written + " -> " + shell_word(c.to);
  }
  return out;
}

}  // namespace attnsel
