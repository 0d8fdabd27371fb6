// Shell scripts: launch commands in simple commands, in `sh -c` scripts, in `eval`, in heredoc
// bodies, and in commands assembled in variables and arrays (CMD=( ... ); "${CMD[@]}").
//
// Variables the file assigns are resolved; everything else the shell fills in at run time keeps
// its text ($X, $(cmd)) and is marked by its WordShape. A variable assigned `X=${X:-default}`
// resolves to its default with shape `value`: the default is judged, the environment may differ.
#include <algorithm>
#include <functional>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "check/launch_internal.hpp"
#include "check/launcher_match.hpp"
#include "check/shell_lexer.hpp"

namespace attnsel::launch_detail {
namespace {

// Commands that mention a launcher without running it.
bool never_launches(std::string_view base) {
  static constexpr std::string_view kWords[] = {"echo",  "printf", "grep",  "egrep", "fgrep", "rg",
                                                "pgrep", "pkill",  "which", "type",  "man"};
  if (base.size() < 2 || base.size() > 6) return false;  // the lengths of kWords: asked of every command
  return std::find(std::begin(kWords), std::end(kWords), base) != std::end(kWords);
}

bool is_name_char(char c) { return is_alnum(c) || c == '_'; }

// What the file assigned to one variable.
struct Variable {
  std::vector<ArgWord> words;  // an array's elements, or the one word of a scalar
  bool array = false;
};

using Variables = std::map<std::string, Variable, std::less<>>;

constexpr std::size_t kMaxVariableWords = 4096;
// What one word or one command may expand to: X="$X$X" forty times is 2^40 bytes, "${A[@]}"
// spliced a thousand times millions of words. Past these a finding says so, never bad_alloc.
constexpr std::size_t kMaxWordBytes = 1u << 20;
constexpr std::size_t kMaxExpandedWords = 1u << 19;
constexpr int kMaxRestarts = 16;  // bad parts of one script read past before giving up on the rest  // X+=( ... ) in a loop stays bounded

// A reference $NAME, ${NAME}, ${NAME[@]}, ${NAME:-default}: its name and what else it says.
struct Reference {
  std::string_view name;
  std::string_view fallback;  // the default of ${NAME:-default} / ${NAME-default} / ${NAME:=default}
  bool has_fallback = false;
  bool all_elements = false;  // ${NAME[@]} / ${NAME[*]}
  std::size_t end = 0;        // just past the reference
};

std::optional<Reference> reference_at(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size() || s[i] != '$') return std::nullopt;
  Reference r;
  if (s[i + 1] != '{') {
    std::size_t j = i + 1;
    while (j < s.size() && is_name_char(s[j])) ++j;
    if (j == i + 1 || std::isdigit(static_cast<unsigned char>(s[i + 1]))) return std::nullopt;
    r.name = s.substr(i + 1, j - i - 1);
    r.end = j;
    return r;
  }
  std::size_t j = i + 2;
  while (j < s.size() && is_name_char(s[j])) ++j;
  if (j == i + 2 || j >= s.size()) return std::nullopt;
  r.name = s.substr(i + 2, j - i - 2);
  if (s.substr(j, 4) == "[@]}" || s.substr(j, 4) == "[*]}") {
    r.all_elements = true;
    r.end = j + 4;
    return r;
  }
  if (s[j] == '}') {
    r.end = j + 1;
    return r;
  }
  std::size_t op = j;
  if (s[op] == ':') ++op;
  if (op < s.size() && (s[op] == '-' || s[op] == '=')) {
    const std::size_t close = s.find('}', op);
    if (close == npos || s.substr(op + 1, close - op - 1).find_first_of("${") != npos) return std::nullopt;
    r.fallback = s.substr(op + 1, close - op - 1);
    r.has_fallback = true;
    r.end = close + 1;
    return r;
  }
  return std::nullopt;
}

// The script's variables, applied to its words as the shell would, where the file says enough.
class Expander {
 public:
  explicit Expander(const Variables& vars) : vars_(vars) {}

  // Why the last expansion stopped short (a word or a command past its budget); empty when it did not.
  const std::string& overflow() const { return overflow_; }

  // One word -> the words it becomes.
  void expand(const ArgWord& w, std::vector<ArgWord>& out) const {
    if (out.size() >= kMaxExpandedWords) {
      overflow_ = fmt::format("expands to more than {} arguments", kMaxExpandedWords);
      return;
    }
    if (w.text.find('$') == npos) {
      out.push_back(w);
      return;
    }
    // The whole word is one reference: arrays splice, unquoted scalars split.
    if (auto r = reference_at(w.text, 0); r && r->end == w.text.size()) {
      const Variable* v = find(r->name);
      if (v && (r->all_elements || (v->array && w.shape == WordShape::words))) {
        if (out.size() + v->words.size() > kMaxExpandedWords) {
          overflow_ = fmt::format("expands to more than {} arguments", kMaxExpandedWords);
          return;
        }
        out.insert(out.end(), v->words.begin(), v->words.end());
        return;
      }
      if (v && !v->array && v->words.size() == 1) {
        const ArgWord& value = v->words.front();
        if (w.shape == WordShape::words) {  // unquoted: split on blanks, as IFS would
          const Lexed lexed = lex_shell(value.text);
          if (lexed.error.empty()) {
            const std::size_t before = out.size();
            for (const SimpleCommand& c : lexed.commands)
              for (const Word& x : c) out.push_back(ArgWord{x.text, w.line, w.raw, widen(value.shape, x.shape)});
            // EXTRA=${EXTRA:-} is empty by default; the environment may still fill it: keep the word.
            if (out.size() == before && value.shape != WordShape::literal) out.push_back(w);
            return;
          }
        }
        out.push_back(ArgWord{value.text, w.line, w.raw, value.shape});
        return;
      }
      if (!v && r->has_fallback && r->fallback.find('$') == npos) {
        // ${X:-default} with X unassigned in the file: the default, marked as a value.
        out.push_back(ArgWord{std::string(r->fallback), w.line, w.raw, widen(w.shape, WordShape::value)});
        return;
      }
      out.push_back(w);
      return;
    }
    // References inside a longer word (--model=$MODEL, "$BASE/ckpt"): substituted when known.
    ArgWord result{std::string(), w.line, w.raw, WordShape::literal};
    bool unknown = false;
    for (std::size_t i = 0; i < w.text.size();) {
      auto r = reference_at(w.text, i);
      const Variable* v = r ? find(r->name) : nullptr;
      if (v && !v->array && v->words.size() == 1) {
        if (result.text.size() + v->words.front().text.size() > kMaxWordBytes) {
          overflow_ = fmt::format("a word expands to more than {} bytes", kMaxWordBytes);
          out.push_back(w);  // as written: unknown, never built
          return;
        }
        result.text += v->words.front().text;
        result.shape = widen(result.shape, v->words.front().shape);
        i = r->end;
      } else if (r && !v && r->has_fallback && r->fallback.find('$') == npos) {
        result.text += r->fallback;
        result.shape = widen(result.shape, WordShape::value);
        i = r->end;
      } else {
        if (w.text[i] == '$') unknown = true;
        result.text += w.text[i++];
      }
    }
    if (unknown) result.shape = widen(result.shape, w.shape);
    // A substituted value ends up inside one word here: it no longer splits.
    if (!unknown && result.shape == WordShape::words) result.shape = WordShape::value;
    out.push_back(std::move(result));
  }

  std::vector<ArgWord> expand_all(const std::vector<ArgWord>& argv) const {
    std::vector<ArgWord> out;
    for (const ArgWord& w : argv) {
      expand(w, out);
      if (!overflow_.empty()) break;
    }
    return out;
  }

 private:
  const Variable* find(std::string_view name) const {
    auto it = vars_.find(name);
    return it == vars_.end() ? nullptr : &it->second;
  }
  const Variables& vars_;
  mutable std::string overflow_;
};

// The words of a simple command, with their lines and shapes (placeholders included).
std::vector<ArgWord> words_of(const SimpleCommand& command, const Source& src, std::size_t shift) {
  std::vector<ArgWord> argv;
  argv.reserve(command.size());
  for (const Word& w : command) {
    const std::size_t at = w.begin + shift;
    argv.push_back(ArgWord{w.text, src.lines.line_at(at), at, placeholder_shape(w.text, w.shape)});
  }
  return argv;
}

// `X=1 Y=( ... )`, `export X=1`, `declare -a X=( ... )`, `readonly X=...`: records them. False for
// any other command (whose leading assignments only set its own environment).
bool record_assignments(const SimpleCommand& command, const Source* src, std::size_t shift, Variables& vars, Sink& sink,
                        int fallback_line = 0) {
  std::size_t k = 0;
  static constexpr std::string_view kDeclarations[] = {"export", "declare", "typeset", "local", "readonly"};
  if (!command.empty() &&
      std::find(std::begin(kDeclarations), std::end(kDeclarations), command[0].text) != std::end(kDeclarations)) {
    k = 1;
    while (k < command.size() && starts_with(command[k].text, "-")) ++k;
  }
  if (k == command.size()) return k > 0;
  for (std::size_t j = k; j < command.size(); ++j) {
    if (!is_assignment(command[j].text)) {
      if (k > 0) continue;  // export NAME (no value)
      return false;
    }
  }
  const Expander expander(vars);
  for (std::size_t j = k; j < command.size(); ++j) {
    const Word& w = command[j];
    const std::size_t eq = w.text.find('=');
    if (eq == npos) continue;  // `export NAME` among assignments: declared, not set
    const bool append = eq > 0 && w.text[eq - 1] == '+';
    const std::string name = w.text.substr(0, append ? eq - 1 : eq);
    auto line_of = [&](std::size_t at) { return src ? src->lines.line_at(at + shift) : fallback_line; };
    Variable value;
    if (w.array) {
      value.array = true;
      for (const Word& e : w.elements) {
        const ArgWord a{e.text, line_of(e.begin), e.begin + shift, placeholder_shape(e.text, e.shape)};
        expander.expand(a, value.words);
      }
    } else {
      // The value is one word: unquoted expansions do not split in an assignment.
      const ArgWord a{w.text.substr(eq + 1), line_of(w.begin), w.begin + shift + eq + 1,
                      w.shape == WordShape::words ? WordShape::value : w.shape};
      // X=${X:-default}: the file's default for what the environment may set.
      if (auto r = reference_at(a.text, 0); r && r->end == a.text.size() && r->name == name && r->has_fallback &&
                                            r->fallback.find('$') == npos && vars.find(name) == vars.end()) {
        value.words.push_back(ArgWord{std::string(r->fallback), a.line, a.raw, WordShape::value});
      } else {
        std::vector<ArgWord> out;
        expander.expand(a, out);
        ArgWord one = out.empty() ? a : std::move(out.front());
        if (out.size() > 1) {  // an array spliced into a scalar: its words joined
          one.text.clear();
          for (const ArgWord& x : out) one.text += (one.text.empty() ? "" : " ") + x.text;
          one.shape = WordShape::value;
        }
        value.words.push_back(std::move(one));
      }
    }
    if (!expander.overflow().empty()) {
      // Past the budget: one finding, and the variable is unknown from here on (never half-built).
      sink.fail(fmt::format("{} is assigned a value that {}; the commands that use it were not checked", name,
                            expander.overflow()),
                line_of(w.begin));
      vars.erase(name);
      return true;
    }
    Variable& slot = vars[name];
    if (append && !value.array && !slot.array && !slot.words.empty() && !value.words.empty() &&
        slot.words.front().text.size() + value.words.front().text.size() > kMaxWordBytes) {
      sink.fail(fmt::format("{} grows past {} bytes (X+=...); the commands that use it were not checked", name,
                            kMaxWordBytes),
                line_of(w.begin));
      vars.erase(name);
      return true;
    }
    if (!append) {  // the value replaces what was there
      if (value.words.size() > kMaxVariableWords) value.words.resize(kMaxVariableWords);
      slot = std::move(value);
      continue;
    }
    if (append && !value.array && !slot.array && !slot.words.empty() && !value.words.empty()) {
      slot.words.front().text += value.words.front().text;  // X+=text
      slot.words.front().shape = widen(slot.words.front().shape, value.words.front().shape);
      continue;
    }
    slot.array = slot.array || value.array;
    for (ArgWord& x : value.words) {
      if (slot.words.size() >= kMaxVariableWords) break;
      slot.words.push_back(std::move(x));
    }
  }
  return true;
}

// Whether Expander::expand turns this word into itself, one word with the same text: it refers to
// no variable the file set and has no ${NAME:-default} (the checks expand() makes at each '$').
bool expands_to_itself(const std::string& text, const Variables& vars) {
  for (std::size_t i = text.find('$'); i != npos; i = text.find('$', i + 1)) {
    const std::optional<Reference> r = reference_at(text, i);
    if (r && (r->has_fallback || vars.find(r->name) != vars.end())) return false;
  }
  return true;
}

// Whether extract() can find anything in this command once its words are expanded. Expanding turns
// a leading assignment into one assignment and leaves a word that expands_to_itself() as it is;
// when every word after the assignments does, they decide as written: a command whose first word
// never launches (echo, grep ...), or none of whose words can start a launcher (a program, a shell,
// an interpreter followed by -m).
bool may_extract(const SimpleCommand& command, const Variables& vars, const LauncherStarts& starts) {
  std::size_t first = 0;
  while (first < command.size() && is_assignment(command[first].text)) ++first;
  if (first == command.size()) return false;
  const std::string& head = command[first].text;
  if (!expands_to_itself(head, vars) || head == "eval") return true;
  if (never_launches(basename(head))) return false;
  std::size_t module_flag = 0;  // one past the last word that may be -m MODULE / -mMODULE
  for (std::size_t k = first; k < command.size(); ++k) {
    if (!expands_to_itself(command[k].text, vars)) return true;
    if (starts_with(command[k].text, "-m")) module_flag = k + 1;
  }
  for (std::size_t k = first; k < command.size(); ++k)
    if (starts.may_start(command[k].text, k + 1 < module_flag)) return true;
  return false;
}

// One simple command of a script: an assignment is recorded, anything else searched.
void take_command(const SimpleCommand& command, const Source& src, std::size_t shift, const Context& ctx, int depth,
                  Variables& vars, const LauncherStarts& starts, Sink& sink) {
  if (record_assignments(command, &src, shift, vars, sink)) return;
  if (sink.prefilter && !may_extract(command, vars, starts)) return;
  const Expander expander(vars);
  const std::vector<ArgWord> argv = expander.expand_all(words_of(command, src, shift));
  if (!expander.overflow().empty()) {
    if (!command.empty())
      sink.fail(fmt::format("this command {}; it was not checked", expander.overflow()),
                src.lines.line_at(command.front().begin + shift));
    return;
  }
  extract(argv, ctx, depth, sink);
}

}  // namespace

std::vector<ArgWord> resolve_defaults(const std::vector<ArgWord>& argv) {
  if (argv.size() > kMaxExpandedWords) return argv;  // extract() refuses it whole, with a finding
  static const Variables kNone;
  return Expander(kNone).expand_all(argv);
}

LaunchCommand launch_command(const Sink& sink, const Launcher& launcher, std::string name, int line,
                             const std::vector<ArgWord>& argv, std::size_t begin) {
  LaunchCommand cmd;
  cmd.file = sink.file;
  cmd.line = line;
  cmd.launcher = std::move(name);
  cmd.engine = launcher.engine;
  cmd.grammar = launcher.grammar;
  cmd.positional_model = launcher.positional_model;
  bool shaped = false;
  for (std::size_t j = begin; j < argv.size(); ++j) {
    cmd.args.push_back(argv[j].text);
    cmd.arg_lines.push_back(argv[j].line);
    cmd.arg_shapes.push_back(argv[j].shape);
    // A literal $ (single quotes, an exec form) is kept as such: the engine receives it.
    shaped = shaped || argv[j].shape != WordShape::literal || argv[j].text.find_first_of("$`") != npos;
  }
  if (!shaped) cmd.arg_shapes.clear();
  return cmd;
}

bool is_assignment(std::string_view w) {
  if (w.empty() || !(is_alpha(w[0]) || w[0] == '_')) return false;
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i] == '=' || (w[i] == '+' && i + 1 < w.size() && w[i + 1] == '=')) return true;
    if (!(is_alnum(w[i]) || w[i] == '_')) return false;
  }
  return false;
}

// One argv (after tokenising): a launch command, a shell running a script, or neither.
void extract(const std::vector<ArgWord>& argv, const Context& ctx, int depth, Sink& sink) {
  if (argv.size() > kMaxExpandedWords) {
    sink.fail(fmt::format("a command with more than {} arguments; it was not checked", kMaxExpandedWords),
              argv.front().line);
    return;
  }
  std::size_t first = 0;
  while (first < argv.size() && is_assignment(argv[first].text)) ++first;
  if (first == argv.size() || never_launches(basename(argv[first].text))) return;
  if (argv[first].text == "eval" && first + 1 < argv.size()) {
    // eval joins its arguments and runs them as a script.
    ArgWord script{std::string(), argv[first + 1].line, argv[first + 1].raw};
    for (std::size_t k = first + 1; k < argv.size(); ++k) script.text += (k > first + 1 ? " " : "") + argv[k].text;
    if (depth < kMaxNesting) scan_script(script, Context{nullptr}, depth + 1, OnLexError::fail_if_sglang, sink);
    return;
  }
  for (std::size_t k = first; k < argv.size(); ++k) {
    std::optional<LauncherMatch> launcher = match_launcher(argv, k, *sink.launchers);
    if (!launcher) {
      // `docker run IMAGE ARGS` of an image whose entrypoint is a launcher: ARGS are its arguments.
      // With --entrypoint, or another image, the words after IMAGE are scanned as a command.
      const std::optional<ContainerRun> run = match_container_run(argv, k);
      if (run && run->entrypoint && !run->entrypoint->text.empty()) {
        // `--entrypoint PROGRAM IMAGE ARGS` runs PROGRAM ARGS.
        std::vector<ArgWord> inner{*run->entrypoint};
        inner.insert(inner.end(), argv.begin() + static_cast<std::ptrdiff_t>(run->image) + 1, argv.end());
        if (depth < kMaxNesting) extract(inner, ctx, depth + 1, sink);
        return;
      }
      const Launcher* entry = run ? launcher_of_image(argv[run->image].text, *sink.launchers) : nullptr;
      if (entry)
        launcher = LauncherMatch{entry, std::string(basename(argv[k].text)) + " run " + argv[run->image].text, run->image + 1};
    }
    if (launcher) {
      sink.found.push_back(launch_command(sink, *launcher->launcher, std::move(launcher->name), argv.front().line,
                                          argv, launcher->args_begin));
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
    if (on_error == OnLexError::fail ||
        (on_error == OnLexError::fail_if_sglang && sink.mentions_launcher(script.text))) {
      sink.fail(lexed.error + " in a shell script string", script.line);
    }
    return;
  }
  Locator locate(ctx.source, script.raw, script.line);
  Variables vars;
  if (ctx.env) {
    for (const auto& [name, value] : *ctx.env) {
      if (is_assignment(name + "=") && vars.size() < kMaxVariableWords)
        vars[name] = Variable{{ArgWord{value, script.line, script.raw, WordShape::value}}, false};
    }
  }
  for (const SimpleCommand& command : lexed.commands) {
    if (record_assignments(command, nullptr, 0, vars, sink, script.line)) continue;
    std::vector<ArgWord> argv;
    for (const Word& w : command) {
      ArgWord a = locate.next(w.text);
      a.shape = placeholder_shape(w.text, w.shape);
      argv.push_back(std::move(a));
    }
    const Expander expander(vars);
    std::vector<ArgWord> expanded = expander.expand_all(argv);
    if (!expander.overflow().empty()) {
      sink.fail(fmt::format("this command {}; it was not checked", expander.overflow()),
                argv.empty() ? script.line : argv.front().line);
      continue;
    }
    extract(expanded, ctx, depth, sink);
  }
}

// A whole script. A part that does not tokenise is one finding; reading goes on at the next line.
void scan_shell(const Source& src, int depth, OnLexError on_error, Sink& sink, const Environment* env) {
  const std::string_view text = src.text;
  const Context ctx{&src, env};
  Variables vars;
  if (env) {
    for (const auto& [name, value] : *env) {
      if (is_assignment(name + "=") && vars.size() < kMaxVariableWords)
        vars[name] = Variable{{ArgWord{value, src.lines.line_at(0), 0, WordShape::value}}, false};
    }
  }
  const LauncherStarts starts(*sink.launchers);
  std::vector<Span> heredocs;
  std::size_t from = 0;
  bool reported = false;  // a block (fail_if_sglang) is one finding; a whole script one per bad part
  int restarts = 0;       // bounded: each restart reads the rest of the text again
  while (from < text.size() && restarts++ < kMaxRestarts) {
    // Each command is searched as soon as it is read: the script's words are never all held at once.
    const std::function<void(SimpleCommand&)> on_command = [&, shift = from](SimpleCommand& command) {
      take_command(command, src, shift, ctx, depth, vars, starts, sink);
    };
    const Lexed lexed = lex_shell(text.substr(from), on_command);
    for (const Span& h : lexed.heredocs) heredocs.push_back({h.begin + from, h.end + from});
    if (lexed.error.empty()) break;
    const std::size_t at = from + lexed.error_at;
    if ((!reported || on_error == OnLexError::fail) && (on_error == OnLexError::fail ||
                      (on_error == OnLexError::fail_if_sglang && sink.mentions_launcher(text)))) {
      sink.fail(lexed.error, src.lines.line_at(at), src.lines.column_at(at));
      reported = true;
    }
    // Go on after the line where the bad part starts.
    const std::size_t nl = text.find('\n', at);
    if (nl == npos) break;
    from = nl + 1;
  }
  if (depth >= kMaxNesting) return;
  for (const Span& body : heredocs) {
    // A heredoc is data (often a script being written out): search it, never fail on it.
    const Source inner = source_of(text.substr(body.begin, body.end - body.begin), src.lines.line_at(body.begin));
    scan_shell(inner, depth + 1, OnLexError::ignore, sink);
  }
}

}  // namespace attnsel::launch_detail
