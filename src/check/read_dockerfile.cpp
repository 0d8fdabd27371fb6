// Dockerfiles: RUN instructions, and the CMD/ENTRYPOINT that each stage ends with.
#include <nlohmann/json.hpp>

#include "check/launch_internal.hpp"
#include "check/shell_lexer.hpp"

namespace attnsel::launch_detail {
namespace {

// JSON array of strings (exec form), each located in `file` from `from`; nullopt for shell form.
std::optional<std::vector<ArgWord>> exec_form(std::string_view body, const Source& file, std::size_t from,
                                              int line) {
  const std::string_view t = trim(body);
  if (t.empty() || t.front() != '[') return std::nullopt;
  const nlohmann::json parsed = nlohmann::json::parse(t.begin(), t.end(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) return std::nullopt;  // Docker then runs it via sh -c
  std::vector<ArgWord> argv;
  Locator locate(&file, from, line);
  for (const auto& item : parsed) {
    if (!item.is_string()) return std::nullopt;
    argv.push_back(locate.next(item.get<std::string>()));
  }
  return argv;
}

class DockerfileScanner {
 public:
  DockerfileScanner(std::string_view text, int first_line, Sink& sink)
      : file_(source_of(text, first_line)), first_line_(first_line), sink_(sink) {}

  void run() {
    const std::vector<PhysicalLine> lines = split_lines(file_.text);
    std::size_t li = 0;
    auto skippable = [&](std::size_t k) {
      const std::string_view t = ltrim(lines[k].text);
      return t.empty() || t.front() == '#';
    };
    while (li < lines.size()) {
      if (skippable(li)) {
        ++li;
        continue;
      }
      const std::size_t start = li;
      const std::string_view first = ltrim(lines[li].text);
      const std::size_t kw_end = std::min(first.find_first_of(" \t"), first.size());
      const std::string keyword = lower(first.substr(0, kw_end));
      // The logical instruction: `\` continuations joined, comment and empty lines inside dropped.
      Source body;
      std::string_view piece = first.substr(kw_end);
      int piece_line = line_of(li);
      std::size_t piece_column = static_cast<std::size_t>(piece.data() - lines[li].text.data()) + 1;
      ++li;
      for (;;) {
        const std::string_view t = rtrim(piece);
        if (t.empty() || t.back() != '\\') {
          body.append(piece, piece_line, piece_column);
          break;
        }
        body.append(t.substr(0, t.size() - 1), piece_line, piece_column);
        while (li < lines.size() && skippable(li)) ++li;
        if (li >= lines.size()) break;
        piece = lines[li].text;
        piece_line = line_of(li);
        piece_column = 1;
        ++li;
      }
      instruction(keyword, body, lines[start].offset, line_of(start));
    }
    end_stage();
  }

 private:
  struct Held {  // the stage's last CMD or ENTRYPOINT: only the last one runs
    bool set = false;
    std::optional<std::vector<ArgWord>> exec;
    Source shell;
    int line = 0;
    std::size_t offset = 0;
  };

  int line_of(std::size_t index) const { return first_line_ + static_cast<int>(index); }

  void instruction(const std::string& keyword, Source& body, std::size_t offset, int line) {
    if (keyword == "from") {
      end_stage();
      env_.clear();
      return;
    }
    if (keyword == "env" || keyword == "arg") {
      set_env(keyword, body.text);
      return;
    }
    if (keyword != "run" && keyword != "cmd" && keyword != "entrypoint") return;
    std::optional<std::vector<ArgWord>> exec = exec_form(body.text, file_, offset, line);
    if (keyword == "run") {
      if (exec) {
        extract(*exec, context(), 0, sink_);
      } else {
        scan_shell(body, 0, OnLexError::fail_if_sglang, sink_, env());
      }
      return;
    }
    Held& held = keyword == "cmd" ? cmd_ : entrypoint_;
    held = Held{true, std::move(exec), std::move(body), line, offset};
  }

  // Docker runs ENTRYPOINT with CMD appended when ENTRYPOINT is in exec form (a shell-form CMD
  // becomes /bin/sh -c "..."), ignores CMD under a shell-form ENTRYPOINT, and runs CMD alone.
  void end_stage() {
    if (entrypoint_.set && entrypoint_.exec) {
      std::vector<ArgWord> argv = *entrypoint_.exec;
      if (cmd_.set && cmd_.exec) {
        argv.insert(argv.end(), cmd_.exec->begin(), cmd_.exec->end());
      } else if (cmd_.set) {
        argv.push_back(ArgWord{"/bin/sh", cmd_.line, cmd_.offset});
        argv.push_back(ArgWord{"-c", cmd_.line, cmd_.offset});
        argv.push_back(ArgWord{std::string(trim(cmd_.shell.text)), cmd_.line, cmd_.offset});
      }
      extract(argv, context(), 0, sink_);
    } else if (entrypoint_.set) {
      scan_shell(entrypoint_.shell, 0, OnLexError::fail_if_sglang, sink_, env());
    } else if (cmd_.set && cmd_.exec) {
      extract(*cmd_.exec, context(), 0, sink_);
    } else if (cmd_.set) {
      scan_shell(cmd_.shell, 0, OnLexError::fail_if_sglang, sink_, env());
    }
    entrypoint_ = Held{};
    cmd_ = Held{};
  }

  Source file_;
  int first_line_;
  Sink& sink_;
  Held entrypoint_;
  Held cmd_;
  Environment env_;  // the stage's ENV and ARG defaults, for its shell-form commands

  const Environment* env() const { return env_.empty() ? nullptr : &env_; }
  Context context() const { return Context{&file_, env()}; }

  // ENV K=V K2="v 2", ENV K V (the old form), ARG K=V.
  void set_env(const std::string& keyword, std::string_view text) {
    const Lexed lexed = lex_shell(text);
    if (!lexed.error.empty() || lexed.commands.empty()) return;
    const SimpleCommand& words = lexed.commands.front();
    if (words.empty()) return;
    auto add = [&](std::string name, std::string value) {
      if (value.find('$') == npos && env_.size() < 4096) env_.emplace_back(std::move(name), std::move(value));
    };
    if (keyword == "env" && words[0].text.find('=') == npos) {
      std::string value;
      for (std::size_t k = 1; k < words.size(); ++k) value += (k > 1 ? " " : "") + words[k].text;
      add(words[0].text, value);
      return;
    }
    for (const Word& w : words) {
      const std::size_t eq = w.text.find('=');
      if (eq != npos && eq > 0) add(w.text.substr(0, eq), w.text.substr(eq + 1));
    }
  }
};

}  // namespace

void scan_dockerfile(std::string_view text, int first_line, Sink& sink) {
  DockerfileScanner(text, first_line, sink).run();
}

}  // namespace attnsel::launch_detail
