// docker compose and Kubernetes YAML: container commands and args, scripts kept in strings.
#include "check/launch_internal.hpp"
#include "check/shell_lexer.hpp"

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
#include <yaml-cpp/yaml.h>
#define ATTNSEL_LAUNCH_YAML 1
#else
#define ATTNSEL_LAUNCH_YAML 0
#endif

namespace attnsel {
namespace launch_detail {

bool yaml_looks_like_compose(std::string_view text) {
  for (const PhysicalLine& l : split_lines(text)) {
    if (starts_with(l.text, "apiVersion:") || starts_with(l.text, "kind:")) return false;
    if (starts_with(l.text, "services:")) return true;
  }
  return false;
}

namespace {

#if ATTNSEL_LAUNCH_YAML
class YamlScanner {
 public:
  YamlScanner(std::string_view text, int first_line, bool compose, Sink& sink)
      : file_(source_of(text, first_line)), first_line_(first_line), compose_(compose), sink_(sink) {}

  // Reports invalid YAML to the sink when `report` is set.
  void run(bool report) {
    // One document at a time: yaml-cpp 0.7's LoadAll loops forever on some invalid input (","),
    // jbeder/yaml-cpp#1040, fixed upstream by #1319 (2024, after 0.8.0); Load is not affected.
    const std::vector<PhysicalLine> lines = split_lines(file_.text);
    std::size_t doc_begin = 0;
    for (std::size_t k = 0; k <= lines.size(); ++k) {
      const bool marker = k < lines.size() && starts_with(lines[k].text, "---") &&
                          (lines[k].text.size() == 3 || is_blank(lines[k].text[3]));
      if (k < lines.size() && !marker) continue;
      const std::size_t doc_end = k < lines.size() ? lines[k].offset : file_.text.size();
      if (!load(doc_begin, doc_end, report)) return;
      doc_begin = doc_end;
    }
  }

 private:
  bool load(std::size_t begin, std::size_t end, bool report) {
    const std::string_view doc = std::string_view(file_.text).substr(begin, end - begin);
    bool content = false;  // a part with only comments and directives is not a document
    for (const PhysicalLine& l : split_lines(doc)) {
      const std::string_view t = ltrim(l.text);
      content = content || !(t.empty() || t.front() == '#' || t.front() == '%' || starts_with(t, "---"));
    }
    if (!content) return true;
    doc_pos_ = begin;
    doc_line_ = file_.lines.line_at(begin) - first_line_;
    try {
      walk(YAML::Load(std::string(doc)), 0);
    } catch (const YAML::Exception& e) {
      if (!report) return true;
      if (e.mark.is_null()) {
        sink_.fail("invalid YAML: " + e.msg, 0);
      } else {
        sink_.fail("invalid YAML: " + e.msg, first_line_ + doc_line_ + e.mark.line,
                   static_cast<std::size_t>(e.mark.column) + 1);
      }
      return false;
    }
    return true;
  }

  int line_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() ? first_line_ + doc_line_ : first_line_ + doc_line_ + m.line;
  }
  std::size_t pos_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() || m.pos < 0 ? doc_pos_ : doc_pos_ + static_cast<std::size_t>(m.pos);
  }

  // A list of arguments, or a string split the way compose splits it (shell-like, no shell).
  std::vector<ArgWord> words_of(const YAML::Node& node) {
    std::vector<ArgWord> argv;
    if (!node.IsDefined() || node.IsNull()) return argv;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) {
        if (item.IsScalar()) argv.push_back(ArgWord{item.Scalar(), line_of(item), pos_of(item)});
      }
    } else if (node.IsScalar()) {
      const Lexed lexed = lex_shell(node.Scalar());
      if (!lexed.error.empty()) {
        if (mentions_sglang(node.Scalar())) sink_.fail(lexed.error + " in a YAML command string", line_of(node));
        return argv;
      }
      Locator locate(&file_, pos_of(node), line_of(node));
      for (const SimpleCommand& command : lexed.commands) {
        for (const Word& w : command) argv.push_back(locate.next(w.text));
      }
    }
    return argv;
  }

  void walk(const YAML::Node& node, int depth) {
    if (depth > kMaxYamlDepth) return;
    if (node.IsMap()) {
      // compose: entrypoint + command; Kubernetes containers: command + args.
      const char* program_key = compose_ ? "entrypoint" : "command";
      const char* args_key = compose_ ? "command" : "args";
      std::vector<ArgWord> argv = words_of(node[program_key]);
      std::vector<ArgWord> rest = words_of(node[args_key]);
      argv.insert(argv.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
      if (!argv.empty()) extract(argv, Context{&file_}, 0, sink_);
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && (kv.first.Scalar() == program_key || kv.first.Scalar() == args_key)) continue;
        walk(kv.second, depth + 1);
      }
    } else if (node.IsSequence()) {
      for (const YAML::Node& item : node) walk(item, depth + 1);
    } else if (node.IsScalar() && mentions_sglang(node.Scalar())) {
      // Scripts kept in YAML (a ConfigMap's start.sh, a CI step's `run: |`): best effort.
      scan_script(ArgWord{node.Scalar(), line_of(node), pos_of(node)}, Context{&file_}, 1, OnLexError::ignore,
                  sink_);
    }
  }

  Source file_;
  int first_line_;
  bool compose_;
  Sink& sink_;
  std::size_t doc_pos_ = 0;  // where the document being walked starts in file_
  int doc_line_ = 0;         // and its line, relative to first_line_
};
#endif

}  // namespace

void scan_yaml(std::string_view text, int first_line, InputFormat format, bool report, Sink& sink) {
#if ATTNSEL_LAUNCH_YAML
  const bool compose = format == InputFormat::compose ||
                       (format != InputFormat::kubernetes && yaml_looks_like_compose(text));
  YamlScanner(text, first_line, compose, sink).run(report);
#else
  (void)text;
  (void)first_line;
  (void)format;
  if (report && !sink.error) {
    sink.error = Error{ErrorCode::invalid_argument,
                       "this build of attnsel has no YAML support (it was built without yaml-cpp); "
                       "compose and Kubernetes files cannot be checked",
                       sink.file, {}, {}};
  }
#endif
}

}  // namespace launch_detail

bool yaml_input_supported() { return ATTNSEL_LAUNCH_YAML != 0; }

}  // namespace attnsel
