// `attnsel check --format gitlab`: a GitLab Code Quality report (the CodeClimate issue format GitLab
// reads from a `codequality` report artifact): a JSON array with one issue per finding, written as
// commands are judged.
//
//   {"type": "issue", "check_name": "cell.compute-capability", "description": "[sm90] ...",
//    "severity": "critical", "fingerprint": "<sha-256>", "categories": ["Compatibility"],
//    "location": {"path": "deploy/serve.sh", "lines": {"begin": 15}}, "engine_name": "attnsel"}
//
// Severity: error -> critical (the engine fails or runs wrong), warning -> major, note -> info.
// The fingerprint is the same on every run for the same finding of the same command, so GitLab
// tells new findings from fixed ones between a merge request and its target branch.
#include <map>
#include <ostream>

#include "render/check_common.hpp"

namespace attnsel::detail {
namespace {

using json = nlohmann::json;

// The path of a command given after -- (no file): GitLab needs one.
constexpr const char* kCommandLinePath = "<command line>";

std::string_view gitlab_severity(Severity s) {
  return s == Severity::error ? "critical" : s == Severity::warning ? "major" : "info";
}

class GitlabWriter final : public CheckWriter {
 public:
  GitlabWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), json_(out, o.indent) {
    tally_.strict = o.strict;
    json_.open_array();
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      const std::vector<Finding> findings = findings_of(b, e);
      tally_.add(b, e, findings);
      std::map<std::string, std::size_t> seen;  // equal findings of one command told apart
      for (const Finding& f : findings) {
        const std::string first = fingerprint(f, b->command);
        issue(f, b->command.line, fingerprint(f, b->command, seen[first]++));
      }
    });
  }
  void skipped(const std::vector<Error>& blocks) override {
    tally_.skipped += blocks.size();
    for (const Error& e : blocks) {
      const Finding f = skipped_finding(e);
      LaunchCommand none;
      none.file = f.file;
      issue(f, 0, fingerprint(f, none));
    }
  }
  // Suppressed findings are left out: Code Quality has no suppressed state, and they count toward nothing.
  void file_findings(const std::vector<FileFinding>& findings) override {
    for (const FileFinding& ff : findings) {
      if (ff.suppression) continue;
      const Finding f = file_finding(ff);
      LaunchCommand none;
      none.file = f.file;
      issue(f, 0, fingerprint(f, none, seen_file_[fingerprint(f, none)]++));
    }
  }
  void finish(const CheckInputs&) override {
    json_.close();
    out_.flush();
  }

 private:
  void issue(const Finding& f, int command_line, const std::string& fingerprint) {
    // GitLab needs a line: the finding's, else its command's, else the first.
    const int line = f.line > 0 ? f.line : command_line > 0 ? command_line : 1;
    json j = {{"type", "issue"},
              {"check_name", f.rule},
              {"description", f.targeted_message()},
              {"severity", std::string(gitlab_severity(f.severity))},
              {"fingerprint", fingerprint},
              {"categories", json::array({"Compatibility"})},
              {"location", {{"path", f.file.empty() ? std::string(kCommandLinePath) : f.file}, {"lines", {{"begin", line}}}}},
              {"engine_name", "attnsel"}};
    json_.element(j);
  }

  std::ostream& out_;
  JsonStream json_;
  Tally tally_;
  std::map<std::string, std::size_t> seen_file_;  // equal findings about comments told apart
};

}  // namespace

std::unique_ptr<CheckWriter> make_gitlab_writer(std::ostream& out, const CheckWriterOptions& o) {
  return std::make_unique<GitlabWriter>(out, o);
}

}  // namespace attnsel::detail
