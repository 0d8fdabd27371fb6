// Markdown: fenced code blocks in shell, Dockerfile and YAML languages.
#include "check/launch_internal.hpp"
#include "check/shell_lexer.hpp"

namespace attnsel::launch_detail {

namespace {

// The one YAML file name a short line names ("`Llama3.3_Hopper.yaml`", "Save as config.yaml:",
// title="cfg.yaml"); "" when it names none or several.
std::string yaml_file_named(std::string_view line) {
  if (line.size() > 160) return {};
  std::string found;
  std::size_t count = 0;
  for (const std::string_view suffix : {std::string_view(".yaml"), std::string_view(".yml")}) {
    for (std::size_t at = line.find(suffix); at != npos; at = line.find(suffix, at + 1)) {
      const std::size_t end = at + suffix.size();
      if (end < line.size() && (is_alnum(line[end]) || line[end] == '_' || line[end] == '-')) continue;
      std::size_t begin = at;
      while (begin > 0 && (is_alnum(line[begin - 1]) || std::string_view("._-/").find(line[begin - 1]) != npos)) --begin;
      if (begin == at) continue;
      found = std::string(line.substr(begin, end - begin));
      ++count;
    }
  }
  return count == 1 ? found : std::string();
}

// The key a line of YAML maps at its start ("kind" of "kind: Pod"); "" when it maps none.
std::string_view yaml_key_of(std::string_view line) {
  std::size_t k = 0;
  if (k >= line.size() || !(is_alpha(line[k]) || line[k] == '_')) return {};
  while (k < line.size() && (is_alnum(line[k]) || line[k] == '_' || line[k] == '-' || line[k] == '.')) ++k;
  if (k == line.size() || line[k] != ':' || (k + 1 < line.size() && !is_blank(line[k + 1]))) return {};
  return line.substr(0, k);
}

// Whether a block without a language is a manifest: its first line of code maps a key and a key of
// its top level is a Kubernetes object's (apiVersion, kind) or a compose file's (services). An
// engine config pasted bare stays the file it is written as (a later --config reads it).
bool looks_like_manifest(const std::vector<std::string_view>& block) {
  bool first = true;
  for (const std::string_view l : block) {
    const std::string_view t = trim(l);
    if (t.empty() || t.front() == '#' || t == "---") continue;
    const std::string_view key = yaml_key_of(l);
    if (first && key.empty() && !starts_with(t, "- ")) return false;
    first = false;
    if (key == "apiVersion" || key == "kind" || key == "services") return true;
  }
  return false;
}

}  // namespace

void scan_markdown(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  std::size_t li = 0;
  while (li < lines.size()) {
    const std::string_view line = lines[li].text;
    const std::size_t indent = line.size() - ltrim(line).size();
    const std::string_view rest = line.substr(indent);
    const char fence_char = rest.empty() ? '\0' : rest.front();
    std::size_t fence_len = 0;
    while (fence_len < rest.size() && rest[fence_len] == fence_char) ++fence_len;
    const std::string_view info = trim(rest.substr(fence_len));
    if ((fence_char != '`' && fence_char != '~') || fence_len < 3 ||
        (fence_char == '`' && info.find('`') != npos)) {
      ++li;
      continue;
    }
    std::string lang = lower(info.substr(0, std::min(info.find_first_of(" \t{"), info.size())));
    if (lang.empty() && !info.empty() && info.front() == '{') {  // pandoc: ```{.bash}
      const std::string_view attrs = info.substr(1);
      const std::size_t dot = attrs.find('.');
      if (dot != npos) lang = lower(attrs.substr(dot + 1, attrs.find_first_of(" }", dot) - dot - 1));
    }
    // The block's lines, with the fence's indentation removed; an unclosed block runs to the end.
    const std::size_t first = li + 1;
    std::size_t end = first;
    while (end < lines.size()) {
      const std::string_view t = trim(lines[end].text);
      std::size_t run = 0;
      while (run < t.size() && t[run] == fence_char) ++run;
      if (run >= fence_len && run == t.size()) break;
      ++end;
    }
    std::vector<std::string_view> block;
    for (std::size_t k = first; k < end; ++k) {
      std::string_view l = lines[k].text;
      std::size_t strip = 0;
      while (strip < indent && strip < l.size() && l[strip] == ' ') ++strip;
      block.push_back(l.substr(strip));
    }
    std::vector<std::size_t> columns;
    for (std::size_t k = 0; k < block.size(); ++k)
      columns.push_back(static_cast<std::size_t>(block[k].data() - lines[first + k].text.data()) + 1);
    const std::size_t fence = li;
    li = end + 1;
    if (lang.empty() || lang == "yaml" || lang == "yml") {
      // A YAML block under a file's name ("`cfg.yaml`" on the line before it, ```yaml title="cfg.yaml"):
      // the file a later `--config cfg.yaml` of the document reads.
      std::string name = yaml_file_named(info);
      for (std::size_t back = fence; name.empty() && back > 0 && fence - back < 3; --back) {
        const std::string_view above = trim(lines[back - 1].text);
        if (above.empty()) continue;
        name = yaml_file_named(above);
        break;
      }
      if (!name.empty()) {
        std::string joined;
        for (std::string_view l : block) joined.append(l).append("\n");
        sink.write_file(std::move(name), joined, static_cast<int>(first) + 1, false);
      }
    }
    if (lang.empty() && looks_like_manifest(block)) lang = "yaml";
    scan_code_block(lang, block, static_cast<int>(first) + 1, columns, sink);
  }
}

void scan_code_block(const std::string& lang, const std::vector<std::string_view>& block, int first_line,
                     const std::vector<std::size_t>& columns, Sink& sink) {
  {
    auto column_of = [&](std::string_view piece, std::size_t k) {
      return columns[k] + static_cast<std::size_t>(piece.data() - block[k].data());
    };

    if (lang == "python" || lang == "py" || lang == "python3") {
      std::string joined;
      for (std::string_view l : block) joined.append(l).append("\n");
      Sink inner;
      inner.launchers = sink.launchers;
      inner.file = sink.file;
      scan_python(joined, inner);
      for (LaunchCommand& c : inner.found) {
        c.line += first_line - 1;
        for (int& l : c.arg_lines) l += first_line - 1;
        sink.found.push_back(std::move(c));
      }
      return;
    }
    const bool shellish = lang.empty() || lang == "bash" || lang == "sh" || lang == "shell" ||
                          lang == "console" || lang == "zsh" || lang == "shell-session" ||
                          lang == "shellsession" || lang == "terminal";
    if (shellish) {
      bool prompts = lang == "console" || lang == "shell-session" || lang == "shellsession";
      for (std::string_view l : block) prompts = prompts || starts_with(ltrim(l), "$ ");
      Source src;
      src.lines.mark(0, first_line);
      bool continuing = false;
      char quote = 0;  // a quote a command's line left open: its next lines are the command's
      for (std::size_t k = 0; k < block.size(); ++k) {
        const int n = first_line + static_cast<int>(k);
        std::string_view l = block[k];
        if (prompts) {
          // `$ cmd` lines and their `\` continuations are commands; everything else is output.
          const std::string_view t = ltrim(l);
          if (starts_with(t, "$ ")) {
            l = t.substr(2);
          } else if (!continuing) {
            continue;
          }
          quote = open_quote_after(l, continuing ? quote : 0);
          continuing = quote != 0 || ends_with(rtrim(l), "\\");
        }
        src.append(std::string(l) + "\n", n, column_of(l, k));
      }
      scan_shell(src, 0, OnLexError::fail_if_sglang, sink);
    } else if (lang == "dockerfile" || lang == "docker" || lang == "containerfile") {
      std::string joined;
      for (std::string_view l : block) joined.append(l).append("\n");
      scan_dockerfile(joined, first_line, sink);
    } else if (lang == "yaml" || lang == "yml") {
      std::string joined;
      for (std::string_view l : block) joined.append(l).append("\n");
      scan_yaml(joined, first_line, InputFormat::detect, /*report=*/false, sink);  // snippets may be partial
    }
  }
}

}  // namespace attnsel::launch_detail
