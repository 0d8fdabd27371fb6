// `attnsel check --format concise`: one line per finding, as compilers write them and editors and
// problem matchers read them (.github/attnsel-problem-matcher.json):
//
//   deploy/serve.sh:15:70: error: [sm90] --attention-backend trtllm_mla: ... [cell.compute-capability]
//
// The column is left out where it is not certain, the line where there is none; a command given
// after -- has no file ("attnsel: error: ..."). GPUs are named as in the annotations: "[sm90]" when
// only some of the targets have the finding. Every value goes through the GitHub channel's encoder
// (controls shown, `::` and `##[` defused): the line is read by log parsers.
#include <ostream>

#include "attnsel/encode.hpp"
#include "render/check_common.hpp"

namespace attnsel::detail {
namespace {

std::string shown(std::string_view s) { return encode_value(s, OutputChannel::github); }

class ConciseWriter final : public CheckWriter {
 public:
  ConciseWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), quiet_(o.quiet) { tally_.strict = o.strict; }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      const std::vector<Finding> findings = findings_of(b, e);
      tally_.add(b, e, findings);
      for (const Finding& f : findings)
        if (!quiet_ || f.fails(tally_.strict)) line(f);
    });
  }
  void skipped(const std::vector<Error>& blocks) override {
    tally_.skipped += blocks.size();
    for (const Error& e : blocks) line(skipped_finding(e));  // an incomplete verdict: shown even with -q
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) all.push_back(file_finding(ff));
    tally_.add_file(all);
    for (const Finding& f : all)
      if (!f.suppression && (!quiet_ || f.fails(tally_.strict))) line(f);
  }
  void finish(const CheckInputs&) override {
    const bool something_failed = tally_.failing > 0 || tally_.skipped > 0 || tally_.file_failing > 0;
    if ((tally_.commands > 0 || tally_.skipped > 0) && (!quiet_ || something_failed))
      out_ << "attnsel: " << shown(tally_.commands_line()) << "; " << tally_.findings_line() << "\n";
    out_.flush();
  }

 private:
  void line(const Finding& f) {
    const std::string place = concise_place(f.file, f.line, f.column);
    out_ << (place.empty() ? std::string("attnsel: ") : place) << severity_word(f.severity) << ": "
         << shown(f.targeted_message()) << " [" << shown(f.rule) << "]\n";
  }

  std::ostream& out_;
  bool quiet_;
  Tally tally_;
};

}  // namespace

std::unique_ptr<CheckWriter> make_concise_writer(std::ostream& out, const CheckWriterOptions& o) {
  return std::make_unique<ConciseWriter>(out, o);
}

}  // namespace attnsel::detail
