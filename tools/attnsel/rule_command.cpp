// `attnsel rule ID` and `attnsel rule --list`: the rule pages (include/attnsel/rules.hpp), as text,
// JSON (kinds "rule" and "rules") or Markdown (`attnsel rule --list --format markdown` is
// docs/rules.md). An unknown id exits 2 with the nearest ids.
#include <iostream>
#include <memory>

#include "attnsel/rules.hpp"
#include "cli.hpp"

namespace attnsel::cli {

Command add_rule_command(CLI::App& app) {
  struct Args {
    std::string id;
    bool list = false;
    FormatChoice format;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "rule", "what a rule id means, where it comes from, an example, how to fix and how to ignore it");
  cmd->add_option("id", args->id, "the rule id a finding names (cell.compute-capability, args.unknown, advisory.SGL-ADV-0001)");
  cmd->add_flag("--list", args->list, "every rule: id, origin, level and summary (markdown: the whole of docs/rules.md)");
  args->format.add_options(*cmd, {"text", "json", "markdown"});
  cmd->footer("Exit codes: 0 the page was printed, 2 an unknown rule id (the nearest ids are named) or bad usage.");

  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    const Format format = args->format.get();
    const RenderOptions render{format == Format::text && use_color()};
    if (args->list) {
      if (!args->id.empty()) throw Failure{kUsage, "give a rule id or --list, not both"};
      auto docs = rule_docs();
      if (!docs) fail(docs.error());
      if (format == Format::json) {
        std::cout << render_rule_list_json(**docs) << "\n";
      } else if (format == Format::markdown) {
        std::vector<RuleDoc> pages;  // the examples run: the page shows what they report
        pages.reserve((*docs)->size());
        for (const RuleDoc& d : **docs) {
          auto page = run_rule_examples(d);
          if (!page) fail(page.error());
          pages.push_back(std::move(*page));
        }
        std::cout << render_rule_list_markdown(pages);
      } else {
        std::cout << render_rule_list_text(**docs, render);
      }
      return kOk;
    }
    if (args->id.empty()) throw Failure{kUsage, "give a rule id (attnsel rule cell.compute-capability) or --list"};
    auto doc = lookup_rule(args->id);
    // The message names the nearest ids already; JSON's error document gets them as suggestion and choices.
    if (!doc) throw Failure{kUsage, doc.error().where + ": " + doc.error().message, doc.error()};
    auto page = run_rule_examples(**doc);
    if (!page) fail(page.error());
    if (format == Format::json) std::cout << render_rule_json(*page) << "\n";
    else if (format == Format::markdown) std::cout << render_rule_markdown(*page);
    else std::cout << render_rule_text(*page, render);
    return kOk;
  };
}

}  // namespace attnsel::cli
