// Shell scripts: launch commands in simple commands, in `sh -c` scripts and in heredoc bodies.
#include <algorithm>
#include <iterator>

#include "check/launch_internal.hpp"
#include "check/launcher_match.hpp"
#include "check/shell_lexer.hpp"

namespace attnsel::launch_detail {
namespace {

// Commands that mention a launcher without running it.
bool never_launches(std::string_view base) {
  static constexpr std::string_view kWords[] = {"echo",  "printf", "grep",  "egrep", "fgrep", "rg",
                                                "pgrep", "pkill",  "which", "type",  "man"};
  return std::find(std::begin(kWords), std::end(kWords), base) != std::end(kWords);
}

}  // namespace

bool is_assignment(std::string_view w) {
  if (w.empty() || !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i] == '=') return true;
    if (!(std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_')) return false;
  }
  return false;
}

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

}  // namespace attnsel::launch_detail
