// Shared pieces of the launch-command readers (src/check/read_*.cpp): source text and its line
// map, the words of one argv, the sink that collects commands and errors, and the entry points
// each reader offers the others. Internal to the library.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnsel/launch.hpp"
#include "attnsel/profile.hpp"

namespace attnsel::launch_detail {

inline constexpr std::size_t npos = std::string_view::npos;
inline constexpr int kMaxNesting = 4;       // sh -c inside sh -c, heredocs inside heredocs
inline constexpr int kMaxYamlDepth = 256;
inline constexpr std::size_t kMaxEnvironmentWork = 256u << 20;  // Sink::environment_work

// ---- small string helpers ----

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// std::isalpha and std::isalnum without a call into the C library for ASCII, on which every
// locale agrees; other bytes are the locale's to classify, as before.
inline bool is_alpha(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x80) return (u | 0x20) >= 'a' && (u | 0x20) <= 'z';
  return std::isalpha(u) != 0;
}
inline bool is_alnum(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x80) return ((u | 0x20) >= 'a' && (u | 0x20) <= 'z') || (u >= '0' && u <= '9');
  return std::isalnum(u) != 0;
}

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

inline std::string_view ltrim(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

inline std::string_view rtrim(std::string_view s) {
  std::size_t n = s.size();
  while (n > 0 && is_blank(s[n - 1])) --n;
  return s.substr(0, n);
}

inline std::string_view trim(std::string_view s) { return rtrim(ltrim(s)); }

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string_view basename(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == npos ? path : path.substr(slash + 1);
}


// Physical lines without their "\n" (and without a trailing "\r"), with their offsets.
struct PhysicalLine {
  std::string_view text;
  std::size_t offset = 0;
};

std::vector<PhysicalLine> split_lines(std::string_view text);

// ---- source text and where its offsets came from ----

// Maps offsets in a text (possibly rebuilt from pieces of a file) to 1-based lines of the file.
class LineMap {
 public:
  // From `offset` on, the text is line `line` of the file, starting at column `column`.
  void mark(std::size_t offset, int line, std::size_t column = 1) { points_.push_back({offset, line, column}); }
  void reserve(std::size_t points) { points_.reserve(points); }

  int line_at(std::size_t offset) const {
    const Point* p = point_at(offset);
    return p ? p->line : 0;
  }
  std::size_t column_at(std::size_t offset) const {
    const Point* p = point_at(offset);
    return p ? offset - p->offset + p->column : offset + 1;
  }

 private:
  struct Point {
    std::size_t offset;
    int line;
    std::size_t column;
  };
  const Point* point_at(std::size_t offset) const {
    auto it = std::upper_bound(points_.begin(), points_.end(), offset,
                               [](std::size_t o, const Point& p) { return o < p.offset; });
    if (it == points_.begin()) return points_.empty() ? nullptr : &points_.front();
    return &*std::prev(it);
  }
  std::vector<Point> points_;
};

struct Source {
  std::string text;
  LineMap lines;

  void append(std::string_view piece, int line, std::size_t column = 1) {
    lines.mark(text.size(), line, column);
    text.append(piece);
  }
};

Source source_of(std::string_view text, int first_line);

// ---- one argv, and where the found commands go ----

struct ArgWord {
  std::string text;
  int line = 0;
  std::size_t raw = 0;  // where the word was written in the context's source, to locate nested words
  WordShape shape = WordShape::literal;
};

// Whether a word holds a name a template fills in before launch: REPLACE_ENV_X (llm-d-benchmark
// renders those), YOUR_MODEL_PATH, __PORT__. The name is a run of letters, digits and '_' of its
// own (not the tail of another name); REPLACE_ and YOUR_ must be followed by one, __X__ be upper case.
inline bool holds_template_name(std::string_view text) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (std::size_t at = 0; at < text.size();) {
    if (!name_char(text[at])) {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && name_char(text[end])) ++end;
    const std::string_view name = text.substr(at, end - at);
    auto prefixed = [&](std::string_view prefix) {
      if (name.size() <= prefix.size()) return false;
      for (std::size_t k = 0; k < prefix.size(); ++k)
        if (std::toupper(static_cast<unsigned char>(name[k])) != prefix[k]) return false;
      return std::isalnum(static_cast<unsigned char>(name[prefix.size()])) != 0;
    };
    if (prefixed("REPLACE_") || prefixed("YOUR_")) return true;
    if (name.size() >= 5 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__" &&
        std::none_of(name.begin(), name.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }) &&
        std::any_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
      return true;
    at = end;
  }
  return false;
}

// Documentation and template placeholders are unknown values: <model-path>, `...`,
// {{ .Values.model }}, REPLACE_ENV_BLOCK_SIZE, YOUR_HF_TOKEN, __PORT__ (holds_template_name).
inline WordShape placeholder_shape(std::string_view text, WordShape shape) {
  if (text == "..." || text == "\u2026") return WordShape::words;
  if (text.find("{{") != npos || text.find("}}") != npos) return shape > WordShape::value ? shape : WordShape::value;
  if (text.size() > 2 && text.front() == '<' && text.back() == '>') return shape > WordShape::value ? shape : WordShape::value;
  if (holds_template_name(text)) return shape > WordShape::value ? shape : WordShape::value;
  return shape;
}

struct Sink {
  const std::vector<Launcher>* launchers = nullptr;
  std::string file;
  std::vector<LaunchCommand> found;
  std::vector<Error> skipped;  // one per block that could not be read; the rest of the file goes on
  std::optional<Error> fatal;  // the whole file could not be read as its format
  // YAML files the text writes (heredocs) or shows (Markdown blocks under a file name), in no
  // particular order; each command gets those written before its line (LaunchCommand::written).
  std::vector<LaunchCommand::WrittenFile> written;
  void write_file(std::string path, std::string_view text, int line, bool expands) {
    if (written.size() >= kMaxWritten || !(ends_with(path, ".yaml") || ends_with(path, ".yml"))) return;
    written.push_back({std::move(path), std::make_shared<const std::string>(text), line, expands, false});
  }
  static constexpr std::size_t kMaxWritten = 64;
  // YAML: the Markdown its literal block scalars hold (vllm-project/recipes' `guide: |`), on the
  // file's own lines, every other line blank: read as Markdown, commands and the GPUs its
  // sections name (scan_launch_input). Empty when the file has none.
  std::string markdown_overlay;
  // Shell commands that cannot launch anything as written (echo ..., cd ..., no launcher, interpreter
  // or shell among their words, nothing to expand) are passed over unexpanded. Off only in tests that
  // prove it changes nothing.
  bool prefilter = true;
  // What the file's scripts have examined and copied of their starting environments (ScriptReader).
  std::size_t environment_work = 0;
  bool environment_spent = false;

  // A block that could not be read: one finding, at file:line:col.
  void fail(std::string message, int line, std::optional<std::size_t> column = std::nullopt) {
    if (skipped.size() >= kMaxSkipped) return;
    std::string where = file.empty() ? std::string("<command line>") : file;
    if (line > 0) where += ":" + std::to_string(line);
    if (line > 0 && column) where += ":" + std::to_string(*column);
    skipped.push_back(Error{ErrorCode::parse_error, std::move(message), std::move(where), {}, {}});
  }

  // Whether a text names one of the launchers (a bad block that does is worth reporting).
  bool mentions_launcher(std::string_view text) const {
    if (!launchers) return false;
    for (const Launcher& l : *launchers) {
      if (!l.module.empty() && text.find(l.module) != npos) return true;
      if (!l.program.empty() && text.find(l.program) != npos) return true;
    }
    return false;
  }

  static constexpr std::size_t kMaxSkipped = 1000;
};

// Finds the words of a nested script (sh -c "...", a YAML string) in the text where they were
// written, in order, so that each gets its own line. A word not written verbatim there (it had
// escapes) keeps the line of the word before it.
class Locator {
 public:
  Locator(const Source* src, std::size_t from, int line) : src_(src), pos_(from), line_(line) {}

  ArgWord next(std::string text) {
    ArgWord w{std::move(text), line_, pos_};
    if (src_ && !w.text.empty() && pos_ < src_->text.size()) {
      // Words of one command sit close together; a bounded window keeps huge inputs linear.
      const std::size_t window = w.text.size() * 5 + 4096;
      const std::size_t at = std::string_view(src_->text).substr(pos_, window).find(w.text);
      if (at != npos) {
        pos_ += at;
        line_ = src_->lines.line_at(pos_);
        w.line = line_;
        w.raw = pos_;
        pos_ += w.text.size();
      }
    }
    return w;
  }

 private:
  const Source* src_;
  std::size_t pos_;
  int line_;
};

// VAR=value as the first words of a command.
bool is_assignment(std::string_view w);

enum class OnLexError { fail, fail_if_sglang, ignore };

// Variables the surrounding file sets for its scripts (a container's env, SkyPilot envs, a
// Dockerfile's ENV and ARG): defaults the environment may override, so their words are values.
using Environment = std::vector<std::pair<std::string, std::string>>;

struct Context {
  const Source* source = nullptr;  // where ArgWord::raw points, for nested scripts
  const Environment* env = nullptr;
};

// read_shell.cpp
// One argv (after tokenising): a launch command, a shell running a script, or neither.
void extract(const std::vector<ArgWord>& argv, const Context& ctx, int depth, Sink& sink);
// A script given as one word (sh -c "...", a YAML string).
void scan_script(const ArgWord& script, const Context& ctx, int depth, OnLexError on_error, Sink& sink);
void scan_shell(const Source& src, int depth, OnLexError on_error, Sink& sink, const Environment* env = nullptr);
// ${X:-default} / ${X-default} words resolved to their defaults (shape value), as compose does.
std::vector<ArgWord> resolve_defaults(const std::vector<ArgWord>& argv);
// The launch command of `launcher`, named `name` as written, found in the sink's file at `line`,
// whose arguments are argv[begin...] (their lines, and their shapes when one is not literal).
LaunchCommand launch_command(const Sink& sink, const Launcher& launcher, std::string name, int line,
                             const std::vector<ArgWord>& argv, std::size_t begin = 0);

// read_dockerfile.cpp
void scan_dockerfile(std::string_view text, int first_line, Sink& sink);

// read_yaml.cpp
bool yaml_looks_like_compose(std::string_view text);
void scan_yaml(std::string_view text, int first_line, InputFormat format, bool report, Sink& sink);

// read_markdown.cpp
void scan_markdown(std::string_view text, Sink& sink);
// A code block of a document in language `lang`: its lines (indentation removed), the file line of
// the first, and each line's column in the file.
void scan_code_block(const std::string& lang, const std::vector<std::string_view>& block, int first_line,
                     const std::vector<std::size_t>& columns, Sink& sink);

// read_docs.cpp: reStructuredText and AsciiDoc code blocks.
void scan_rst(std::string_view text, Sink& sink);
void scan_asciidoc(std::string_view text, Sink& sink);

// read_python.cpp: argv lists and command strings in Python launchers.
void scan_python(std::string_view text, Sink& sink);

// read_yaml.cpp: Helm templates, `{{ ... }}` made opaque values, then read as Kubernetes YAML.
void scan_helm(std::string_view text, Sink& sink);

// read_make.cpp: Makefiles (recipe lines, make variables) and justfiles (recipes, variables, parameters).
void scan_makefile(std::string_view text, Sink& sink);
void scan_justfile(std::string_view text, Sink& sink);

// read_units.cpp: Procfiles (`name: command`) and systemd units (ExecStart= with Environment=).
void scan_procfile(std::string_view text, Sink& sink);
void scan_systemd(std::string_view text, Sink& sink);
// read_notebook.cpp: a notebook as the Markdown it renders, on its own lines (sink.fatal when it is
// no notebook; a cell that cannot be placed is a skipped block).
std::string notebook_as_markdown(std::string_view text, Sink& sink);

// read_units.cpp: a Jinja template's text as what it renders to: {% ... %} and {# ... #} blanked
// (their newlines kept), {{ ... }} kept for YAML (the Helm reader makes it a value) or made ${...},
// an unknown value to the shell, Dockerfile and Python readers, when not `keep_values`.
std::string jinja_as_text(std::string_view text, bool keep_values);

// launch_input.cpp: scan_launch_input with its shortcuts chosen. `prefilter` off expands every
// shell command (Sink::prefilter); `every_line` reads every line for context hints instead of
// only the lines that hold a needle. Tests run both ways to prove the shortcuts change nothing.
struct ScanShortcuts {
  bool prefilter = true;
  bool every_line = false;
  ScanOptions options;
};
LaunchScan scan_launch_input(std::string_view text, std::string_view file_name, InputFormat format,
                             const std::vector<Launcher>& launchers, ScanShortcuts shortcuts);

// file_parts.cpp: the parts of a file a GPU or platform is scoped to, in order of their first
// line. A part's title (a heading, a tab's label, an admonition's title, the sentence before a
// code block) may name them; code blocks and YAML documents have none, and scope the markers
// written in them.
struct FilePart {
  // paragraph: a paragraph of a section's text, from its first line to the end of the section,
  // tab or admonition that holds it (title: the paragraph, at most 480 bytes).
  // yaml_key: a YAML mapping key that may name hardware (`B200:`, `amd:`) and the lines under it
  // (title: the key); a GPU it names is the entry's own (ContextHint::entry).
  enum class Kind { section, tab, admonition, prose, comment, code_block, yaml_document, paragraph, yaml_key };
  Kind kind;
  int title_line = 0;  // 1-based; 0 when it has no title
  std::string title;   // markup removed
  int first = 0, last = 0;  // 1-based lines, inclusive
};
std::vector<FilePart> file_parts(const std::vector<PhysicalLine>& lines, InputFormat format);
std::string_view name_of(FilePart::Kind kind);
// A YAML file's blocks by indentation, for each line (1-based; 0 for blank and comment lines): the
// line of the key or item it is written under (0 at the top), and the last line of the block it
// opens. A sequence written at its key's own indent belongs to the key; the text of a block scalar
// (`guide: |`) belongs to its key and opens no block. One pass, the open lines on a stack.
struct YamlBlocks {
  std::vector<int> parent, end;
};
YamlBlocks yaml_blocks(const std::vector<PhysicalLine>& lines);
// launch_context.cpp: whether one word names hardware on its own: a platform ("amd", "nvidia",
// "rocm", "tpu" ...: platform_named) or the family of a GPU architecture of the catalog ("hopper",
// "blackwell"). Case is ignored.
bool hardware_word(std::string_view word);

// launch_context.cpp: find_file_context, every line read when `every_line`; the GPUs and platforms
// scoped to the parts of `format` (none for InputFormat::detect).
FileContext find_file_context(std::string_view text, const std::vector<Launcher>& launchers, bool every_line,
                              InputFormat format = InputFormat::detect, std::string_view file_name = {});

// The lines a command is written on: its first word's to its last argument's.
inline std::pair<int, int> lines_of(const LaunchCommand& cmd) {
  int last = cmd.line;
  for (const int l : cmd.arg_lines) last = std::max(last, l);
  return {cmd.line, last};
}

// launch_context.cpp: the model hints of the commands found.
void add_command_context(std::vector<LaunchCommand>& commands, const std::vector<Launcher>& launchers,
                         FileContext& context);
// The hints of `from` added to `into`, each once, within the caps: the context of a YAML file's
// embedded Markdown (Sink::markdown_overlay) joins the file's.
void merge_file_context(FileContext& into, FileContext from);
// YAML: each setting not yet scoped (ContextHint::scope_first 0) is scoped to the innermost block
// holding it that holds a command too (a container, a compose service, a top-level entry): a
// container's `env:` is its command's, not every command's of the file. A setting whose blocks
// hold no command keeps the whole file.
void scope_yaml_settings(std::string_view text, const std::vector<LaunchCommand>& commands, FileContext& context);

}  // namespace attnsel::launch_detail
