// A POSIX-shell-style tokeniser for launch scripts: words with quotes removed, split into simple
// commands, heredoc bodies remembered. It expands nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/launch.hpp"

namespace attnsel::launch_detail {

struct Word {
  std::string text;       // quotes removed, escapes resolved, $VAR and $(...) kept literally
  std::size_t begin = 0;  // where the word starts in the tokenised text
  WordShape shape = WordShape::literal;  // what the shell makes of its expansions
  bool array = false;                    // NAME=( ... ) or NAME+=( ... ): text is "NAME=" / "NAME+="
  std::vector<Word> elements;            // the array's words
};
using SimpleCommand = std::vector<Word>;

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  // A heredoc body whose delimiter is unquoted (<<EOF, not <<'EOF'): the shell expands it as it
  // writes it, so its \$, \` and \\ are a $, ` and \ in the text written.
  bool expands = false;
  // The file the command holding the heredoc writes it to: `cat > cfg.yaml <<EOF`, `cat <<EOF >cfg.yaml`,
  // `tee cfg.yaml <<EOF`; "" for any other command (a heredoc fed to a program, a script run).
  std::string writes;
};

struct Lexed {
  std::vector<SimpleCommand> commands;  // split at newlines, ; & && || | ( )
  std::vector<Span> heredocs;           // bodies of <<EOF ... EOF, to be searched in turn
  std::string error;                    // "" when the text tokenised
  std::size_t error_at = 0;
};

Lexed lex_shell(std::string_view text);

// The same tokeniser, handing each simple command to `on_command` as soon as it ends instead of
// collecting them (Lexed::commands stays empty): a whole script's words are never all held at
// once. The commands, their order and the error are lex_shell's; a command cut short by the
// error is not handed over, as lex_shell drops it.
Lexed lex_shell(std::string_view text, const std::function<void(SimpleCommand&)>& on_command);

// The quote a line of a command leaves open: `open` is the one open where the line starts (0 for
// none), the result the one open at its end ('\'' or '"'; 0 for none). A console transcript's
// `$ curl -d '{` continues, to the line that closes the quote, as the shell reads it. Quotes in a
// comment are not quotes; a backslash escapes outside single quotes. Linear in the line.
char open_quote_after(std::string_view line, char open);

// The wider of two shapes: words > value > literal.
inline WordShape widen(WordShape a, WordShape b) { return a > b ? a : b; }

}  // namespace attnsel::launch_detail
