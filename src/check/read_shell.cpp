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
#include <set>

#include <fmt/format.h>

#include "attnsel/types.hpp"
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
  bool colon = false;         // ${NAME:-default}: the default stands for an empty value too
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
  if (s[op] == ':') {
    r.colon = true;
    ++op;
  }
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
      // ${X:-default} with X set empty in the file (X= then : "${X:=2}"): the default.
      if (v && r->has_fallback && r->colon && !v->array && r->fallback.find('$') == npos &&
          (v->words.empty() || (v->words.size() == 1 && v->words.front().text.empty() &&
                                v->words.front().shape == WordShape::literal)))
        v = nullptr;
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
      // X=${X:-} (empty unless the environment sets it) inside a longer word: substituted, it would
      // vanish ("--model-path $DIR/$NAME" read as "--model-path /"); it stays written, unknown.
      if (v && !v->array && v->words.size() == 1 && v->words.front().text.empty() &&
          v->words.front().shape != WordShape::literal)
        v = nullptr;
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

// What `$(echo WORDS)` or `$(printf '%s ' WORDS)` prints (args=$(echo serve --model-path X ...)):
// the words expanded and joined by a space, as echo writes them (printf's trailing blank, which
// splitting drops, left off). A variable the file leaves unknown stays written ($MODEL_PATH), to be
// judged as such where the output is split again (args=($args)). nullopt for any other text (echo
// -e, another printf format), a word holding a command substitution, or past kMaxWordBytes.
std::optional<std::string> echo_output(std::string_view text, const Expander& expander) {
  const bool echo = starts_with(text, "$(echo ");
  if (!(echo || starts_with(text, "$(printf ")) || text.back() != ')') return std::nullopt;
  const Lexed lexed = lex_shell(text.substr(2, text.size() - 3));
  if (!lexed.error.empty() || lexed.commands.size() != 1 || lexed.commands[0].empty()) return std::nullopt;
  const SimpleCommand& c = lexed.commands[0];
  std::size_t first = 1;
  if (!echo) {  // printf FORMAT WORDS: only a format that writes each word and a blank
    if (c.size() < 2 || (c[1].text != "%s " && c[1].text != "%s\\n" && c[1].text != "%s\\t")) return std::nullopt;
    first = 2;
  }
  std::vector<ArgWord> words;
  for (std::size_t k = first; k < c.size(); ++k) {
    const Word& w = c[k];
    if (echo && k == 1 && starts_with(w.text, "-")) return std::nullopt;  // echo -e, -n: another output
    if (w.text.find('`') != npos || w.text.find("$(") != npos) return std::nullopt;  // a command's output
    expander.expand(ArgWord{w.text, 0, 0, w.shape}, words);
  }
  std::string out;
  for (const ArgWord& w : words) {
    if (w.text.find('`') != npos || w.text.find("$(") != npos || out.size() + w.text.size() + 1 > kMaxWordBytes)
      return std::nullopt;
    out += (out.empty() ? "" : " ") + w.text;
  }
  return out;
}

// `X=1 Y=( ... )`, `export X=1`, `declare -a X=( ... )`, `readonly X=...`: records them. False for
// any other command (whose leading assignments only set its own environment).
// Where the assignments of a command that only assigns begin (after `export -x` ...); nullopt for
// any other command (whose leading assignments only set its own environment).
std::optional<std::size_t> assignments_begin(const SimpleCommand& command) {
  std::size_t k = 0;
  static constexpr std::string_view kDeclarations[] = {"export", "declare", "typeset", "local", "readonly"};
  if (!command.empty() &&
      std::find(std::begin(kDeclarations), std::end(kDeclarations), command[0].text) != std::end(kDeclarations)) {
    k = 1;
    while (k < command.size() && starts_with(command[k].text, "-")) ++k;
  }
  if (k == command.size()) return k > 0 ? std::optional<std::size_t>(k) : std::nullopt;
  for (std::size_t j = k; j < command.size(); ++j)
    if (!is_assignment(command[j].text) && k == 0) return std::nullopt;  // (export NAME: declared, no value)
  return k;
}

bool record_assignments(const SimpleCommand& command, const Source* src, std::size_t shift, Variables& vars, Sink& sink,
                        int fallback_line = 0) {
  const std::optional<std::size_t> begin = assignments_begin(command);
  if (!begin) return false;
  const std::size_t k = *begin;
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
      } else if (std::optional<std::string> echoed = echo_output(a.text, expander)) {
        value.words.push_back(ArgWord{std::move(*echoed), a.line, a.raw, WordShape::value});
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

// A word that is the user's value with no default in it: $OPTARG, $1 ... $9, ${2}, "$@".
bool is_user_value(std::string_view text) {
  if (text == "$OPTARG" || text == "${OPTARG}" || text == "$@" || text == "$*") return true;
  if (text.size() == 2 && text[0] == '$') return std::isdigit(static_cast<unsigned char>(text[1])) != 0;
  return text.size() >= 4 && starts_with(text, "${") && text.back() == '}' &&
         std::all_of(text.begin() + 2, text.end() - 1, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The names a word refers to ($NAME, ${NAME}, ${NAME[@]}, ${NAME:-x}).
std::vector<std::string_view> names_in(std::string_view text) {
  std::vector<std::string_view> names;
  for (std::size_t i = text.find('$'); i != npos; i = text.find('$', i + 1))
    if (const std::optional<Reference> r = reference_at(text, i)) names.push_back(r->name);
  return names;
}

// Every name a text may read: $NAME, ${NAME...} whatever follows the name (${A:-${B}} gives A and
// B), ${#NAME}, ${!NAME}. A superset of names_in(), for deciding what can never matter.
template <typename F>
void each_name_read(std::string_view text, F&& on_name) {
  for (std::size_t i = text.find('$'); i != npos; i = text.find('$', i + 1)) {
    std::size_t b = i + 1;
    if (b < text.size() && text[b] == '{') ++b;
    if (b < text.size() && (text[b] == '#' || text[b] == '!')) ++b;
    std::size_t e = b;
    while (e < text.size() && is_name_char(text[e])) ++e;
    if (e > b && !std::isdigit(static_cast<unsigned char>(text[b]))) on_name(text.substr(b, e - b));
  }
}

// Whether a command may launch, or decides which branch runs, as written: a test ([ ], [[ ]], test,
// case), a word that may start a launcher or a shell (may_start_launcher), a longer text naming a
// launcher (a script for -c, eval), or a word that is one reference ($CMD, "${ARGS[@]}") and not an
// option's value (`--model $MODEL` is one; `srun --nodes=1 $CMD` is not). A client's
// `--vllm-server-url "$URL"` is none of these.
bool may_matter(const SimpleCommand& c, const Sink& sink) {
  if (!sink.launchers) return true;
  const std::string_view head = c[0].text;
  if (head == "[" || head == "[[" || head == "test" || head == "case" || head == "eval") return true;
  std::size_t last_m = npos;  // the last word starting "-m": a module may follow an interpreter before it
  for (std::size_t k = 0; k < c.size(); ++k)
    if (starts_with(c[k].text, "-m")) last_m = k;
  for (std::size_t k = 0; k < c.size(); ++k) {
    const std::string& t = c[k].text;
    if (t == "eval" || may_start_launcher(t, last_m != npos && last_m > k, *sink.launchers) ||
        (t.find_first_of(" \t\n") != npos && sink.mentions_launcher(t)))
      return true;
    if (const std::optional<Reference> r = reference_at(t, 0); r && r->end == t.size()) {
      const std::string& prev = k > 0 ? c[k - 1].text : std::string();
      if (!(starts_with(prev, "-") && prev.find('=') == npos)) return true;
    }
  }
  return false;
}

// The variables whose values can reach a command that may launch (may_matter): the names such
// commands read, and the names read by the assignments of those, transitively. A branch that
// assigns only other variables changes no launch command's words: it needs no set of values of its
// own (open-r1's generate.slurm parses 16 options for its data client; its launch reads one).
// nullopt where the script does not tokenise (then every variable counts). One more pass of the
// lexer, made only for a script whose branches assign.
std::optional<std::set<std::string, std::less<>>> variables_that_matter(std::string_view text, const Sink& sink) {
  static constexpr std::string_view kKeywords[] = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}",
                                                   "fi", "done", "esac", "time"};
  std::set<std::string, std::less<>> matter;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> reads;  // assigned name -> names its value reads
  const auto on_command = [&](SimpleCommand& command) {
    std::size_t k = 0;
    while (k < command.size() &&
           std::find(std::begin(kKeywords), std::end(kKeywords), command[k].text) != std::end(kKeywords))
      ++k;
    if (k == command.size()) return;
    const SimpleCommand rest(command.begin() + static_cast<std::ptrdiff_t>(k), command.end());
    if (const std::optional<std::size_t> begin = assignments_begin(rest)) {
      for (std::size_t j = *begin; j < rest.size(); ++j) {
        const Word& w = rest[j];
        const std::size_t eq = w.text.find('=');
        if (eq == npos || eq == 0) continue;
        const std::string name = w.text.substr(0, w.text[eq - 1] == '+' ? eq - 1 : eq);
        auto& slot = reads[name];
        const auto add = [&](std::string_view n) { slot.emplace(n); };
        each_name_read(std::string_view(w.text).substr(eq + 1), add);
        for (const Word& e : w.elements) each_name_read(e.text, add);
      }
      return;
    }
    if (never_launches(basename(rest[0].text)) || !may_matter(rest, sink)) return;
    for (const Word& w : rest) each_name_read(w.text, [&](std::string_view n) { matter.emplace(n); });
  };
  const Lexed lexed = lex_shell(text, on_command);
  if (!lexed.error.empty()) return std::nullopt;
  for (const Span& h : lexed.heredocs)  // a heredoc's text may be a script run later
    each_name_read(text.substr(h.begin, h.end - h.begin), [&](std::string_view n) { matter.emplace(n); });
  std::vector<std::string> todo(matter.begin(), matter.end());
  while (!todo.empty()) {
    const std::string name = std::move(todo.back());
    todo.pop_back();
    auto it = reads.find(name);
    if (it == reads.end()) continue;
    for (const std::string& n : it->second)
      if (matter.insert(n).second) todo.push_back(n);
    reads.erase(it);  // each assignment's names followed once
  }
  return matter;
}

// What a test in an if's condition compares, in one set of values: the word's text with the
// variables it names substituted (an array's elements joined by a space, as "${A[@]}" inside a
// longer word is); `literal` when no part came from a default the environment may replace
// (${X:-8}). nullopt where any part is not known.
struct Operand {
  std::string text;
  bool literal = true;
};
std::optional<Operand> operand_of(const Word& w, const Variables& vars) {
  Operand out;
  const Expander expander(vars);
  const std::string& t = w.text;
  for (std::size_t i = 0; i < t.size();) {
    if (t[i] == '`') return std::nullopt;
    if (t[i] != '$') {
      out.text += t[i++];
      continue;
    }
    const std::optional<Reference> r = reference_at(t, i);
    if (!r) return std::nullopt;
    std::vector<ArgWord> parts;
    if (r->all_elements) {
      auto v = vars.find(r->name);
      if (v == vars.end()) return std::nullopt;  // an array the file never assigned
      parts = expander.expand_all(v->second.words);
    } else {
      expander.expand(ArgWord{t.substr(i, r->end - i), 0, 0, WordShape::value}, parts);
      if (parts.size() != 1) return std::nullopt;
    }
    if (!expander.overflow().empty()) return std::nullopt;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].text.find_first_of("$`") != npos || out.text.size() + parts[k].text.size() > kMaxWordBytes)
        return std::nullopt;
      out.text += (k ? " " : "") + parts[k].text;
      out.literal = out.literal && parts[k].shape == WordShape::literal;
    }
    i = r->end;
  }
  return out;
}

// The words inside one test (`[ ... ]`, `[[ ... ]]`, `test ...`), its `!`s outside and inside
// counted; nullopt for a command that is not one test.
struct TestWords {
  std::size_t b = 0, e = 0;  // c[b, e): the operands and operator
  bool negate = false;
  bool double_bracket = false;
};
std::optional<TestWords> test_words(const SimpleCommand& c) {
  TestWords t;
  t.e = c.size();
  while (t.b < t.e && c[t.b].text == "!") t.negate = !t.negate, ++t.b;
  if (t.b == t.e) return std::nullopt;
  const std::string& open = c[t.b].text;
  t.double_bracket = open == "[[";
  if (t.double_bracket || open == "[") {
    if (c[t.e - 1].text != (t.double_bracket ? "]]" : "]")) return std::nullopt;
    --t.e;
  } else if (open != "test") {
    return std::nullopt;
  }
  ++t.b;
  while (t.b < t.e && c[t.b].text == "!") t.negate = !t.negate, ++t.b;
  return t;
}

// The truth of an if's condition in one set of values, where the file decides it: one test
// (`[ ]`, `[[ ]]` or `test`) of a string's emptiness, equality or, in [[ ]], a regular expression
// without special characters (a substring), under any number of `!`. nullopt for anything else: a
// word the file leaves unknown, a pattern, another test or command.
struct Truth {
  bool value = false;
  bool literal = true;  // decided by what the file writes, no default the environment may replace
};

std::optional<Truth> truth_of(const SimpleCommand& c, const Variables& vars) {
  const std::optional<TestWords> test = test_words(c);
  if (!test) return std::nullopt;
  const std::size_t b = test->b, e = test->e;
  const bool negate = test->negate, double_bracket = test->double_bracket;
  std::vector<Operand> ops;
  auto take = [&](std::size_t k) {
    std::optional<Operand> o = operand_of(c[k], vars);
    // Unquoted in [ ] or test, a value with blanks splits into several words: another test.
    if (o && !double_bracket && c[k].shape == WordShape::words && o->text.find_first_of(" \t\n") != npos) o.reset();
    if (o) ops.push_back(std::move(*o));
    return o.has_value();
  };
  bool value = false;
  const std::size_t n = e - b;
  if (n == 1) {
    if (!take(b)) return std::nullopt;
    value = !ops[0].text.empty();
  } else if (n == 2 && (c[b].text == "-n" || c[b].text == "-z")) {
    if (!take(b + 1)) return std::nullopt;
    value = ops[0].text.empty() == (c[b].text == "-z");
  } else if (n == 3) {
    const std::string& op = c[b + 1].text;
    if (op != "=" && op != "==" && op != "!=" && !(double_bracket && op == "=~")) return std::nullopt;
    if (!take(b) || !take(b + 2)) return std::nullopt;
    const std::string& rhs = ops[1].text;
    if (op == "=~") {  // a regular expression of plain characters matches where it is a substring
      if (rhs.find_first_of("\\.^$*+?()[]{}|") != npos) return std::nullopt;
      value = ops[0].text.find(rhs) != npos;
    } else {
      if (double_bracket && rhs.find_first_of("*?[") != npos) return std::nullopt;  // a pattern
      value = (ops[0].text == rhs) == (op != "!=");
    }
  } else {
    return std::nullopt;
  }
  Truth t;
  t.value = value != negate;
  t.literal = std::all_of(ops.begin(), ops.end(), [](const Operand& o) { return o.literal; });
  return t;
}

// A test of the GPU's compute capability, which only the machine decides: one operand is a variable
// the script fills from nvidia-smi's compute_cap query (CC=$(nvidia-smi --query-gpu=compute_cap
// ...)), the other a capability written out ("10.0"), compared with = == or != in one [ ], [[ ]] or
// test, under any number of `!`. nullopt for anything else.
std::optional<LaunchCommand::CapabilityTest> capability_test(const SimpleCommand& c, const Variables& vars) {
  const std::optional<TestWords> test = test_words(c);
  if (!test || test->e - test->b != 3) return std::nullopt;
  const std::size_t b = test->b;
  const bool negate = test->negate;
  const std::string& op = c[b + 1].text;
  if (op != "=" && op != "==" && op != "!=") return std::nullopt;
  auto queries_capability = [&](const Word& w) {
    const std::optional<Reference> r = reference_at(w.text, 0);
    if (!r || r->end != w.text.size() || r->has_fallback || r->all_elements) return false;
    auto v = vars.find(r->name);
    if (v == vars.end() || v->second.array || v->second.words.size() != 1) return false;
    const std::string& value = v->second.words.front().text;
    return value.find("nvidia-smi") != npos && value.find("compute_cap") != npos;
  };
  auto capability = [](const std::string& t) { return t.find('.') != npos && parse_version(t).has_value(); };
  const Word* value = nullptr;
  if (queries_capability(c[b]) && capability(c[b + 2].text)) value = &c[b + 2];
  else if (queries_capability(c[b + 2]) && capability(c[b].text)) value = &c[b];
  if (!value) return std::nullopt;
  LaunchCommand::CapabilityTest t;
  t.value = value->text;
  t.equal = (op != "!=") != negate;
  return t;
}

// How a script's commands are read where its variables may hold several values: an if/elif/else,
// a case (getopts' included) or a loop assigns on some branches only. Each branch that assigns
// gets its own set of values (the values before the branch with its assignments); a command
// outside the branches is read once per set that changes its words, the script's defaults first,
// each reading marked with the assignments of branches its words use (LaunchCommand::branch).
// Branches of successive constructs combine; where one branch always runs (an else, a `*)`) and
// every branch assigns, the values before the construct are gone. An assignment of the user's
// value ($OPTARG, $2) over a default the script documents keeps the default. Only assignments of
// variables that can reach a launch command or a test take a set (variables_that_matter). At most
// kMaxBranches sets: past that a finding says so, the commands after the branches are read with
// those, and a branch past the bound reads its own commands in a set dropped when it closes.
// Where a top-level if's condition is one test the file decides in a set of values (truth_of), the
// branch that holds there runs in it: its assignments change that set in place, and the branch that
// does not hold is read there only if the test rested on a default the environment may replace
// (`if ! [[ " ${ARGS[@]} " =~ " --model-path " ]]; then ARGS+=(--model-path ...)` adds the flag to
// a script's defaults, never a reading without it). A nested if is decided in the one set its
// branch reads, its holding branch assigning in that branch's set; a nested construct that always
// runs a branch, each of which assigns, stands for its branch's set from then on (superseded_by).
class ScriptReader {
 public:
  // `env`: the values the script starts with (a Makefile's exports, a Dockerfile's ENV); only those
  // `text` names are taken (a Makefile of 5,000 recipe lines copied all of them 5,000 times), and
  // all the scripts of a file together examine and copy at most kMaxEnvironmentWork.
  ScriptReader(const Environment* env, int line, std::size_t raw, std::string_view text, Sink& sink) : text_(text) {
    worlds_.push_back(World{});
    if (!env || env->empty() || sink.environment_spent || text.find('$') == npos) return;
    std::set<std::string_view> named;  // $NAME and ${NAME}
    for (std::size_t i = text.find('$'); i != npos; i = text.find('$', i + 1)) {
      const std::size_t b = i + 1 + (i + 1 < text.size() && text[i + 1] == '{' ? 1 : 0);
      std::size_t e = b;
      while (e < text.size() && is_name_char(text[e])) ++e;
      if (e > b) named.insert(text.substr(b, e - b));
    }
    if (named.empty()) return;
    for (const auto& [name, value] : *env) {
      if (!named.count(name) || !is_assignment(name + "=") || worlds_[0].vars.size() >= kMaxVariableWords) continue;
      sink.environment_work += value.size();
      worlds_[0].vars[name] = Variable{{ArgWord{value, line, raw, WordShape::value}}, false};
    }
    if ((sink.environment_work += env->size()) > kMaxEnvironmentWork) {
      sink.environment_spent = true;
      sink.fail(fmt::format("the values this file's scripts start with (exported variables, ENV) come to more than "
                            "{} MiB over all its scripts; from here on its scripts were read without them",
                            kMaxEnvironmentWork >> 20),
                line);
    }
  }

  // ${NAME:=value} (${NAME=value}) assigns NAME as it expands, in any command (`: "${TP:=2}"`):
  // read as the assignment NAME=${NAME:-value}, the default the environment may override.
  static SimpleCommand default_assignments(const SimpleCommand& command) {
    SimpleCommand out;
    for (const Word& w : command) {
      const std::string& t = w.text;
      for (std::size_t at = t.find("${"); at != npos && out.size() < 16; at = t.find("${", at + 2)) {
        std::size_t k = at + 2;
        while (k < t.size() && (is_alnum(t[k]) || t[k] == '_')) ++k;
        if (k == at + 2 || is_digit_char(t[at + 2])) continue;
        const bool colon = k < t.size() && t[k] == ':';
        const std::size_t op = colon ? k + 1 : k;
        if (op >= t.size() || t[op] != '=') continue;
        const std::size_t close = t.find('}', op);
        if (close == npos || t.find("${", op) < close) continue;  // a nested expansion: not read
        const std::string name = t.substr(at + 2, k - at - 2);
        Word a;
        a.text = name + "=${" + name + (colon ? ":-" : "-") + t.substr(op + 1, close - op - 1) + "}";
        a.begin = w.begin;
        a.shape = WordShape::value;
        out.push_back(std::move(a));
      }
    }
    return out;
  }
  static bool is_digit_char(char c) { return c >= '0' && c <= '9'; }

  // Where one command's words were written: in `src` shifted by `shift`, else at `line`.
  struct Place {
    const Source* src = nullptr;
    std::size_t shift = 0;
    int line = 0;
  };

  // One simple command: a keyword of a conditional is followed, an assignment recorded in the
  // branch it is on, anything else searched once per set of values it can see. `words` gives the
  // command's words where they were written; `starts`, when given, passes over what cannot launch.
  void take(SimpleCommand command, const Place& at, const std::function<std::vector<ArgWord>(const SimpleCommand&)>& words,
            const Context& ctx, int depth, const LauncherStarts* starts, Sink& sink) {
    if (!follow_keyword(command, at, sink) || command.empty()) return;
    if (!stack_.empty() && stack_.back().kind == Kind::conditional && stack_.back().arm < 0)
      decide(command, line_of(command.front(), at));
    if (const SimpleCommand defaults = default_assignments(command); !defaults.empty()) assign(defaults, at, sink);
    if (assignments_begin(command)) {
      assign(command, at, sink);
      return;
    }
    const std::vector<std::size_t> seen = visible_worlds();
    if (starts && sink.prefilter &&
        std::none_of(seen.begin(), seen.end(), [&](std::size_t w) { return may_extract(command, worlds_[w].vars, *starts); }))
      return;
    const std::vector<ArgWord> argv = words(command);
    const std::size_t found_before = sink.found.size();
    struct Reading {
      std::vector<std::string> words;
      std::size_t begin = 0, end = 0;  // its commands in sink.found
      bool by_capability = false;
    };
    std::vector<Reading> read;  // the words each set of values gave, to read each once
    for (const std::size_t w : seen) {
      const Expander expander(worlds_[w].vars);
      const std::vector<ArgWord> expanded = expander.expand_all(argv);
      if (!expander.overflow().empty()) {
        if (!argv.empty())
          sink.fail(fmt::format("this command {}; it was not checked", expander.overflow()), argv.front().line);
        return;
      }
      std::vector<std::string> texts;
      for (const ArgWord& a : expanded) texts.push_back(a.text);
      auto same = std::find_if(read.begin(), read.end(), [&](const Reading& r) { return r.words == texts; });
      if (same != read.end()) {
        // The same words under another compute capability (or none): they run whatever the GPU.
        // (A reading that found no command has none to change.)
        if (same->by_capability && same->begin < same->end && worlds_[w].capability != sink.found[same->begin].capability)
          for (std::size_t k = same->begin; k < same->end; ++k) sink.found[k].capability.reset();
        continue;
      }
      const std::size_t before = sink.found.size();
      extract(expanded, ctx, depth, sink);
      const std::string note = note_for(argv, worlds_[w]);
      for (std::size_t k = before; k < sink.found.size(); ++k) {
        if (sink.found[k].branch.empty()) sink.found[k].branch = note;
        if (!sink.found[k].capability) sink.found[k].capability = worlds_[w].capability;
      }
      read.push_back(Reading{std::move(texts), before, sink.found.size(), worlds_[w].capability.has_value()});
    }
    if (sink.found.size() > found_before) report_broken_line(command, at, sink);
  }

 private:
  struct World {
    Variables vars;
    std::map<std::string, std::string, std::less<>> notes;  // variable -> the branch assignments it holds
    std::optional<LaunchCommand::CapabilityTest> capability;  // the GPU's compute capability this set needs
    // The sets of a nested construct that always runs one of its branches, each of which assigns:
    // they stand for this one from then on (it is read through them, and assigns in them).
    std::vector<std::size_t> superseded_by;
  };
  enum class Kind { conditional, choice, loop };  // if, case, while/until/for/select
  struct Assignment {
    SimpleCommand command;
    Place at;
  };
  struct Construct {
    Kind kind = Kind::conditional;
    int arm = -1;                                // the branch being read; -1 in a condition or before the first
    std::vector<int> arms;                       // every branch seen
    bool catch_all = false;                      // an else or a *): one branch always runs
    std::size_t worlds_before = 0;               // the sets of values there were when it opened
    std::vector<std::vector<Assignment>> log;    // per branch, its assignments (top level only)
    // A top-level if's condition per set of values that existed then (truth_of); empty where it is
    // not one test, or the if is nested.
    std::vector<std::optional<Truth>> holds;
    std::optional<LaunchCommand::CapabilityTest> capability;  // a condition on the GPU's compute capability
    // A nested if's condition in the one set of values its branches read (nested_base), where the
    // file decides it there; nullopt elsewhere.
    std::optional<Truth> nested_holds;
    std::size_t nested_base = 0;
    int tests = 0;        // commands read in the condition
    bool elif = false;    // an elif came: its own condition is not followed
    bool in_else = false;  // the branch being read is the else
  };
  enum class Runs { yes, no, maybe };
  enum class Arm { then, else_, other };  // an if's first branch, its else after no elif, any other

  static constexpr std::size_t kMaxBranches = 16;
  static constexpr std::size_t kMaxConstructs = 64;  // nesting followed; deeper is read as its enclosing branch
  static constexpr std::size_t kMaxNoteBytes = 240;
  static constexpr std::size_t kMaxLogged = 256;     // assignments of one branch kept to combine with other branches

  // The branch assignments a command's words use, through the variables they name: "" for none.
  static std::string note_for(const std::vector<ArgWord>& argv, const World& world) {
    std::vector<std::string_view> parts;
    for (const ArgWord& a : argv)
      for (std::string_view name : names_in(a.text))
        if (auto it = world.notes.find(name); it != world.notes.end())
          if (std::find(parts.begin(), parts.end(), it->second) == parts.end()) parts.push_back(it->second);
    std::string note;
    for (std::string_view p : parts) note += fmt::format("{}{}", note.empty() ? "" : ", ", p);
    return note;
  }

  // A launch command whose last word is `\ ` at the end of a line (a backslash, then blanks): the
  // shell reads an argument of one blank and ends the command there, so the lines below, meant as
  // its arguments, never reach the engine. One finding, at the backslash.
  static void report_broken_line(const SimpleCommand& command, const Place& at, Sink& sink) {
    if (!at.src || command.empty()) return;
    const Word& last = command.back();
    const std::string_view text = at.src->text;
    const std::size_t b = last.begin + at.shift;
    if (last.text.empty() || last.text.find_first_not_of(" \t") != npos || b + 1 >= text.size() || text[b] != '\\')
      return;
    std::size_t end = b + 1;
    while (end < text.size() && is_blank(text[end])) ++end;
    if (end < text.size() && text[end] != '\n') return;
    sink.fail(fmt::format("a backslash followed by {} ends this line: the shell reads it as an argument of one blank and "
                          "the command ends here, so the lines below are not its arguments; remove what follows the "
                          "backslash",
                          text[b + 1] == '\t' ? "a tab" : "a space"),
              at.src->lines.line_at(b), at.src->lines.column_at(b));
  }

  // `PATTERN)` in a case: the command's last word is followed by `)` where it was written.
  static bool is_pattern(const SimpleCommand& command, const Place& at) {
    if (!at.src) return false;
    const std::string_view text = at.src->text;
    std::size_t i = command.back().begin + at.shift;
    while (i < text.size() && !is_blank(text[i]) && text[i] != '\n' && text[i] != ')' && text[i] != ';') ++i;
    while (i < text.size() && is_blank(text[i])) ++i;
    return i < text.size() && text[i] == ')';
  }

  // Tracks if/case/loops by their keywords; removes a leading keyword (`then X=1`). False when
  // nothing of the command is left to read.
  bool follow_keyword(SimpleCommand& command, const Place& at, Sink& sink) {
    while (!command.empty()) {
      const std::string& head = command[0].text;
      if (head == "if" || head == "case" || head == "while" || head == "until" || head == "for" || head == "select") {
        open(head == "if" ? Kind::conditional : head == "case" ? Kind::choice : Kind::loop);
        if (head != "if" && head != "while" && head != "until") return false;  // `case X in`, `for X in ...`
      } else if (head == "then" || head == "do" || head == "else") {
        if (!stack_.empty()) begin_arm(head == "else");
      } else if (head == "elif") {
        if (!stack_.empty()) {
          stack_.back().arm = -1;  // its condition, then its `then`
          stack_.back().elif = true;
        }
      } else if (head == "fi" || head == "done" || head == "esac") {
        close(at, sink);
      } else if (!stack_.empty() && stack_.back().kind == Kind::choice && is_pattern(command, at)) {
        begin_arm(command.size() == 1 && command[0].text == "*");
        return false;
      } else {
        return true;
      }
      command.erase(command.begin());
    }
    return false;
  }

  void open(Kind kind) {
    if (stack_.size() >= kMaxConstructs) return;
    stack_.emplace_back();
    stack_.back().kind = kind;
    stack_.back().worlds_before = worlds_.size();
  }

  void begin_arm(bool catch_all) {
    Construct& c = stack_.back();
    c.in_else = c.kind == Kind::conditional && catch_all;
    c.arm = next_arm_++;
    c.arms.push_back(c.arm);
    c.catch_all = c.catch_all || catch_all;
    if (stack_.size() == 1) c.log.emplace_back();
  }

  // An if's condition: decided per set of values when it is one test at the top level.
  void decide(const SimpleCommand& condition, int line) {
    Construct& c = stack_.back();
    if (c.elif) return;  // not followed: runs() reads its branches by the first condition alone
    const bool first = c.tests++ == 0;
    if (stack_.size() != 1 || !first) {
      c.holds.clear();
      c.capability.reset();
      // Nested: decided in the set of values of the branch it is in, where there is one to read.
      const std::size_t own = own_world();
      c.nested_holds.reset();
      if (stack_.size() > 1 && first && (own != npos || worlds_.size() == 1)) {
        c.nested_base = own == npos ? 0 : own;
        c.nested_holds = truth_of(condition, worlds_[c.nested_base].vars);
      }
      return;
    }
    c.holds.resize(worlds_.size());
    for (std::size_t w = 0; w < worlds_.size(); ++w) c.holds[w] = truth_of(condition, worlds_[w].vars);
    c.capability = capability_test(condition, worlds_[0].vars);
    if (c.capability) c.capability->line = line;
  }

  static Arm arm_of(const Construct& c) {
    return c.arms.size() == 1 ? Arm::then : c.in_else && !c.elif ? Arm::else_ : Arm::other;
  }

  // Whether the branch of `c` being read runs in set of values `w`.
  static Runs runs(const Construct& c, std::size_t w) {
    if (w >= c.holds.size() || !c.holds[w]) return Runs::maybe;
    return runs(c, *c.holds[w]);
  }
  static Runs runs(const Construct& c, const Truth& t) {
    const Runs other = t.literal ? Runs::no : Runs::maybe;  // a default the environment may replace
    switch (arm_of(c)) {
      case Arm::then: return t.value ? Runs::yes : other;
      case Arm::else_: return t.value ? other : Runs::yes;
      case Arm::other: break;  // an elif's branch, or its else: its own condition is not followed
    }
    return t.value ? other : Runs::maybe;
  }

  // The end of a construct. At the top level, where one of its branches always runs (an else, a
  // `*)`) and each assigns, the sets of values from before it are gone: each earlier branch's set
  // is combined with each of this construct's branches instead. (A branch that may not run adds a
  // set of its own, the defaults with its assignments, combined with no other.)
  void close(const Place& at, Sink& sink) {
    if (stack_.empty()) return;
    Construct c = std::move(stack_.back());
    stack_.pop_back();
    drop_scratch(c);
    if (!stack_.empty()) supersede(c);
    if (!stack_.empty() || c.kind == Kind::loop || !c.catch_all) return;
    const bool every_arm_assigns =
        !c.arms.empty() && std::all_of(c.arms.begin(), c.arms.end(), [&](int arm) { return world_of(arm) != npos; });
    const std::size_t before = std::min(c.worlds_before, worlds_.size());
    if (!every_arm_assigns || before == 0) return;
    const std::size_t branches = static_cast<std::size_t>(
        std::count_if(c.log.begin(), c.log.end(), [](const std::vector<Assignment>& b) { return !b.empty(); }));
    // All or nothing: past the bound the earlier sets stay (this construct's values unknown there).
    if (worlds_.size() - before + (before - 1) * branches > kMaxBranches) {
      for (const std::vector<Assignment>& b : c.log)
        if (!b.empty()) {
          room(at, b.front().command.front(), sink, /*fits=*/false);
          break;
        }
      return;
    }
    for (std::size_t w = 1; w < before; ++w) {
      if (!worlds_[w].superseded_by.empty()) continue;  // read through the sets standing for it, also before
      if (w < c.holds.size() && c.holds[w]) {  // its branch was taken in place
        worlds_.push_back(worlds_[w]);
        continue;
      }
      for (const std::vector<Assignment>& branch : c.log) {
        if (branch.empty()) continue;
        worlds_.push_back(worlds_[w]);
        for (const Assignment& a : branch) assign_in(worlds_.size() - 1, a.command, a.at, nullptr, true);
      }
    }
    worlds_.erase(worlds_.begin(), worlds_.begin() + static_cast<std::ptrdiff_t>(before));
    for (World& world : worlds_) {  // the sets that remain moved down by `before` (none stood for an erased one)
      for (std::size_t& v : world.superseded_by) v -= before;
    }
    arm_world_.clear();  // the construct is closed: no command is read in its branches again
  }

  // The sets of values past kMaxBranches that the branches of `c` read their own commands with:
  // gone with the construct. They are the last sets (any made after them, by constructs nested in
  // the branch, closed first and went before them); everything indexed by set is below the bound.
  void drop_scratch(const Construct& c) {
    while (worlds_.size() > kMaxBranches && !arm_world_.empty() && arm_world_.back().second == worlds_.size() - 1 &&
           std::find(c.arms.begin(), c.arms.end(), arm_world_.back().first) != c.arms.end()) {
      worlds_.pop_back();
      arm_world_.pop_back();
    }
  }

  // A nested construct one of whose branches always runs (an else, a `*)`), each with its own set
  // of values made from the set of the branch around it: that set no longer holds by itself.
  // Where the branch around has no set yet, its branches were made from the script's first set: the
  // branch gets one made from it, which they stand for.
  void supersede(const Construct& c) {
    if (c.kind == Kind::loop || !c.catch_all || c.arms.empty()) return;
    std::size_t outer = own_world();
    const int enclosing = innermost_arm();
    if (outer == npos && enclosing < 0) return;
    std::vector<std::size_t> inner;
    for (const int arm : c.arms) {
      const std::size_t w = world_of(arm);
      // A branch that assigns nothing, one made before the set around it, or a scratch set.
      if (w == npos || (outer != npos && w <= outer) || w >= kMaxBranches) return;
      inner.push_back(w);
    }
    if (outer == npos) {
      if (worlds_.size() >= kMaxBranches) return;
      fork(0);
      outer = worlds_.size() - 1;
      arm_world_.emplace_back(enclosing, outer);
    }
    if (worlds_[outer].superseded_by.empty()) worlds_[outer].superseded_by = std::move(inner);
  }

  // A new set of values for a branch, made from set `from` (as written there: a set made from one a
  // nested construct superseded does not stand for that construct's sets).
  void fork(std::size_t from) {
    worlds_.push_back(worlds_[from]);
    worlds_.back().superseded_by.clear();
  }

  // The sets that stand for set `w` (itself where none was superseded), at most kMaxBranches.
  void standing_for(std::size_t w, std::vector<std::size_t>& out) const {
    if (worlds_[w].superseded_by.empty()) {
      if (std::find(out.begin(), out.end(), w) == out.end() && out.size() < kMaxBranches) out.push_back(w);
      return;
    }
    for (const std::size_t v : worlds_[w].superseded_by) standing_for(v, out);
  }

  std::size_t world_of(int arm) const {
    for (const auto& [a, w] : arm_world_)
      if (a == arm) return w;
    return npos;
  }

  // The set of values of the innermost branch that has one; npos outside every branch that assigns.
  std::size_t own_world() const {
    for (auto c = stack_.rbegin(); c != stack_.rend(); ++c)
      if (c->arm >= 0)
        if (const std::size_t w = world_of(c->arm); w != npos) return w;
    return npos;
  }

  std::vector<std::size_t> visible_worlds() const {
    std::vector<std::size_t> seen;
    if (const std::size_t own = own_world(); own != npos) {
      standing_for(own, seen);
      return seen;
    }
    for (std::size_t k = 0; k < std::min(worlds_.size(), kMaxBranches); ++k)  // another branch's scratch set: not here
      standing_for(k, seen);
    return seen;
  }

  int innermost_arm() const {
    for (auto c = stack_.rbegin(); c != stack_.rend(); ++c)
      if (c->arm >= 0) return c->arm;
    return -1;
  }

  // Whether one more set of values fits (`fits` false: it is known not to); the first time one
  // does not, a finding says so.
  bool room(const Place& at, const Word& where, Sink& sink, bool fits = true) {
    if (fits && worlds_.size() < kMaxBranches) return true;
    if (!bound_reported_)
      sink.fail(fmt::format("more than {} combinations of this script's branches assign variables; the commands are "
                            "checked with the first {} only",
                            kMaxBranches, kMaxBranches),
                line_of(where, at));
    bound_reported_ = true;
    return false;
  }

  void assign(const SimpleCommand& command, const Place& at, Sink& sink) {
    const int arm = innermost_arm();
    if (arm < 0) {  // outside every branch: every set of values takes it
      for (std::size_t w = 0; w < worlds_.size(); ++w)
        if (worlds_[w].superseded_by.empty())  // a superseded set takes it through those standing for it
          assign_in(w, command, at, w == 0 ? &sink : nullptr, false, worlds_);
      return;
    }
    const std::size_t base = own_world() == npos ? 0 : own_world();
    SimpleCommand kept;  // $OPTARG, $2 over a default the script documents: the default stands
    for (const Word& w : command) {
      const std::size_t eq = w.text.find('=');
      const bool user = eq != npos && !w.array && is_user_value(std::string_view(w.text).substr(eq + 1));
      if (user && worlds_[base].vars.count(w.text.substr(0, eq))) continue;
      if (eq != npos && eq > 0 && !matters(w.text.substr(0, w.text[eq - 1] == '+' ? eq - 1 : eq), sink)) continue;
      kept.push_back(w);
    }
    if (kept.empty() || !std::any_of(kept.begin(), kept.end(), [](const Word& w) { return is_assignment(w.text); }))
      return;
    Sink* findings = &sink;  // an assignment's findings are told once, not per set of values
    if (stack_.size() == 1 && !stack_.front().holds.empty()) {
      // A decided if: in place where its branch runs, nowhere where it does not; a set that may
      // take either (the defaults' included) is read as below.
      for (std::size_t k = 0; k < stack_.front().holds.size(); ++k)
        if (runs(stack_.front(), k) == Runs::yes && worlds_[k].superseded_by.empty()) {
          assign_in(k, kept, at, findings, false, worlds_);
          findings = nullptr;
        }
      if (runs(stack_.front(), 0) != Runs::maybe) return;
    }
    // A decided nested if: its branch that runs assigns in the set of values of the branch around
    // it (created as that branch's own where it has none yet); the one that does not, nowhere.
    if (const Construct& inner = stack_.back(); stack_.size() > 1 && inner.arm == arm && inner.nested_holds) {
      const Runs r = runs(inner, *inner.nested_holds);
      if (r == Runs::no) return;
      int outer = -1;
      for (std::size_t k = stack_.size() - 1; k-- > 0;)
        if (stack_[k].arm >= 0) {
          outer = stack_[k].arm;
          break;
        }
      if (r == Runs::yes && outer >= 0) {
        std::size_t e = world_of(outer);
        if (e == npos) {
          room(at, command.front(), sink);  // past the bound: a set its branch alone reads (drop_scratch)
          fork(inner.nested_base);
          e = worlds_.size() - 1;
          arm_world_.emplace_back(outer, e);
        }
        assign_in(e, kept, at, findings, true);
        if (stack_.front().arm == outer && !stack_.front().log.empty() && stack_.front().log.back().size() < kMaxLogged)
          stack_.front().log.back().push_back(Assignment{kept, at});
        return;
      }
    }
    std::size_t w = world_of(arm);
    if (w == npos) {
      // Past the bound the branch still reads its own commands with its assignments (`CMD="python3
      // -m sglang.launch_server ..."; bash -c "$CMD"` inside it), in a set of values that is gone when
      // its construct closes: the commands after it never see it (see drop_scratch).
      room(at, command.front(), sink);
      fork(base);
      w = worlds_.size() - 1;
      arm_world_.emplace_back(arm, w);
      // A branch taken by the GPU's compute capability: its set of values needs that capability
      // (the then branch) or any other (the else); an elif's branches say nothing more.
      const Construct& top = stack_.front();
      if (stack_.size() == 1 && top.capability && arm_of(top) != Arm::other) {
        worlds_[w].capability = top.capability;
        if (arm_of(top) == Arm::else_) worlds_[w].capability->equal = !top.capability->equal;
      }
    }
    assign_in(w, kept, at, findings, true);
    if (stack_.size() >= 1 && stack_.front().arm == arm && !stack_.front().log.empty() &&
        stack_.front().log.back().size() < kMaxLogged)
      stack_.front().log.back().push_back(Assignment{kept, at});
  }

  // Records assignments in one set of values (their findings to `sink` when given: once, not per
  // set) with the notes they carry: a branch's own (`on_branch`), else those of what they use.
  static void assign_in(std::size_t index, const SimpleCommand& command, const Place& at, Sink* sink, bool on_branch,
                        std::vector<World>& worlds) {
    World& world = worlds[index];
    Sink quiet;
    record_assignments(command, at.src, at.shift, world.vars, sink ? *sink : quiet, at.line);
    for (const Word& w : command) {
      const std::size_t eq = w.text.find('=');
      if (eq == npos || !is_assignment(w.text)) continue;
      const std::string name = w.text.substr(0, eq > 0 && w.text[eq - 1] == '+' ? eq - 1 : eq);
      std::string note;
      if (on_branch) {
        std::string set = w.array ? w.text + "(...)" : w.text;
        if (set.size() > 80) set = set.substr(0, 77) + "...";
        note = fmt::format("{} (line {})", set, line_of(w, at));
      }
      std::vector<std::string_view> used = names_in(std::string_view(w.text).substr(eq + 1));  // views into w
      for (const Word& e : w.elements)
        for (std::string_view n : names_in(e.text)) used.push_back(n);
      if (w.text[eq - 1] == '+') used.push_back(name);  // X+=...: what X held too
      for (std::string_view n : used)
        if (auto it = world.notes.find(n); it != world.notes.end() && note.find(it->second) == npos &&
                                           note.size() + it->second.size() < kMaxNoteBytes)
          note += (note.empty() ? "" : ", ") + it->second;
      if (note.empty()) {
        world.notes.erase(name);
      } else {
        world.notes[name] = std::move(note);
      }
    }
  }
  void assign_in(std::size_t index, const SimpleCommand& command, const Place& at, Sink* sink, bool on_branch) {
    std::vector<std::size_t> targets;
    standing_for(index, targets);
    for (const std::size_t t : targets) {
      assign_in(t, command, at, sink, on_branch, worlds_);
      sink = nullptr;  // its findings once
    }
  }

  // Whether a branch's assignment of `name` can change a command that may launch (computed once,
  // the first time a branch assigns).
  bool matters(std::string_view name, const Sink& sink) {
    if (!matter_computed_) {
      matter_ = variables_that_matter(text_, sink);
      matter_computed_ = true;
    }
    return !matter_ || matter_->count(name) > 0;
  }

  static int line_of(const Word& w, const Place& at) { return at.src ? at.src->lines.line_at(w.begin + at.shift) : at.line; }

  std::vector<World> worlds_;
  std::vector<Construct> stack_;
  std::vector<std::pair<int, std::size_t>> arm_world_;  // branch -> its set of values
  int next_arm_ = 0;
  bool bound_reported_ = false;
  std::string_view text_;  // the script, for variables_that_matter
  std::optional<std::set<std::string, std::less<>>> matter_;
  bool matter_computed_ = false;
};

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

namespace {

// Past kMaxNesting a nested script (sh -c, eval, a heredoc, docker run --entrypoint) is not read;
// one that names a launcher is a block that could not be read, never dropped silently (else five
// levels of `sh -c` would hide any command from the check).
bool read_nested(int depth, std::string_view text, int line, Sink& sink) {
  if (depth < kMaxNesting) return true;
  if (sink.mentions_launcher(text))
    sink.fail(fmt::format("a script nested more than {} deep (sh -c, eval, heredocs); it was not read", kMaxNesting), line);
  return false;
}

std::string joined(const std::vector<ArgWord>& words) {
  std::string out;
  for (const ArgWord& w : words) out += (out.empty() ? "" : " ") + w.text;
  return out;
}

}  // namespace

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
    if (read_nested(depth, script.text, script.line, sink))
      scan_script(script, Context{nullptr}, depth + 1, OnLexError::fail_if_sglang, sink);
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
        else read_nested(depth, joined(inner), argv[k].line, sink);  // said, where it names a launcher
        return;
      }
      const Launcher* entry = run ? launcher_of_image(argv[run->image].text, *sink.launchers) : nullptr;
      if (entry)
        launcher = LauncherMatch{entry, std::string(basename(argv[k].text)) + " run " + argv[run->image].text, run->image + 1};
    }
    if (launcher) {
      // The command's first line, or the launcher's where it was written earlier: `exec "${CMD[@]}"`
      // runs the command the array CMD=( ... ) spelled out above.
      const int line = argv[k].line > 0 && argv[k].line < argv.front().line ? argv[k].line : argv.front().line;
      sink.found.push_back(launch_command(sink, *launcher->launcher, std::move(launcher->name), line, argv,
                                          launcher->args_begin));
      return;
    }
    if (auto script = match_shell_script(argv, k)) {
      if (read_nested(depth, argv[*script].text, argv[*script].line, sink))
        scan_script(argv[*script], ctx, depth + 1, OnLexError::fail_if_sglang, sink);
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
  ScriptReader reader(ctx.env, script.line, script.raw, script.text, sink);
  const auto located = [&](const SimpleCommand& command) {
    std::vector<ArgWord> argv;
    for (const Word& w : command) {
      ArgWord a = locate.next(w.text);
      a.shape = placeholder_shape(w.text, w.shape);
      argv.push_back(std::move(a));
    }
    return argv;
  };
  for (const SimpleCommand& command : lexed.commands)
    reader.take(command, ScriptReader::Place{nullptr, 0, script.line}, located, ctx, depth, nullptr, sink);
}

// A whole script. A part that does not tokenise is one finding; reading goes on at the next line.
void scan_shell(const Source& src, int depth, OnLexError on_error, Sink& sink, const Environment* env) {
  const std::string_view text = src.text;
  const Context ctx{&src, env};
  ScriptReader reader(env, src.lines.line_at(0), 0, src.text, sink);
  const LauncherStarts starts(*sink.launchers);
  std::vector<Span> heredocs;
  std::size_t from = 0;
  bool reported = false;  // a block (fail_if_sglang) is one finding; a whole script one per bad part
  int restarts = 0;       // bounded: each restart reads the rest of the text again
  while (from < text.size() && restarts++ < kMaxRestarts) {
    // Each command is searched as soon as it is read: the script's words are never all held at once.
    const std::function<void(SimpleCommand&)> on_command = [&, shift = from](SimpleCommand& command) {
      const auto written = [&](const SimpleCommand& c) { return words_of(c, src, shift); };
      reader.take(std::move(command), ScriptReader::Place{&src, shift, 0}, written, ctx, depth, &starts, sink);
    };
    const Lexed lexed = lex_shell(text.substr(from), on_command);
    for (const Span& h : lexed.heredocs) heredocs.push_back({h.begin + from, h.end + from, h.expands, h.writes});
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
  for (const Span& body : heredocs) {
    // A heredoc is data (often a script being written out): search it, never fail on it (but past
    // the nesting budget, where it is not searched).
    std::string_view data = text.substr(body.begin, body.end - body.begin);
    if (!read_nested(depth, data, src.lines.line_at(body.begin), sink)) continue;
    // The script as written out: an unquoted delimiter's \$, \` and \\ are what the written
    // script holds ("\${ARGS[@]}" is its own array, expanded when it runs, never a literal word).
    std::string written;
    if (body.expands && data.find('\\') != npos) {
      written.reserve(data.size());
      for (std::size_t k = 0; k < data.size(); ++k) {
        if (data[k] == '\\' && k + 1 < data.size() && (data[k + 1] == '$' || data[k + 1] == '`' || data[k + 1] == '\\'))
          ++k;
        written += data[k];
      }
      data = written;
    }
    // A YAML file written out (`cat > cfg.yaml <<EOF`): what a later `--config cfg.yaml` reads.
    if (!body.writes.empty()) sink.write_file(body.writes, data, src.lines.line_at(body.begin), body.expands);
    const Source inner = source_of(data, src.lines.line_at(body.begin));
    scan_shell(inner, depth + 1, OnLexError::ignore, sink);
  }
}

}  // namespace attnsel::launch_detail
