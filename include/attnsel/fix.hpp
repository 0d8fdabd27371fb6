// What to change in a failing launch command: the nearest command that passes, per target and for
// every target at once. Found by judging changed copies of the command the way the command itself
// was judged (check_command), so a fix is never a guess: each one was checked. check_command
// attaches them to its checks (CommandCheck::fix) unless CheckOptions::propose_fixes is off.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/check.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

class Catalog;
class Matrix;

// A command's fixes, parallel to the checks check_command returned for it (one per target).
struct CommandFixes {
  // The nearest passing command for each target that fails; nullopt for a target that passes, or
  // where no change of the flags its errors name passes within the budget.
  std::vector<std::optional<CommandFix>> per_target;
  // One command that passes on every target, when one of the candidates does (the per-target fixes,
  // each backend every failing target could run, the engine's own choice); nullopt otherwise.
  std::optional<CommandFix> all_targets;
  std::size_t judged = 0;         // changed commands judged
  bool budget_exhausted = false;  // the search stopped at the budget: a fix may exist that was not tried
};

// Changed copies of a command judged to find its fixes: at most `budget` judgements per target.
inline constexpr std::size_t kFixBudgetPerTarget = 24;
// A command with more arguments than this gets no fix (budget_exhausted): judging it again and again
// would cost more than the check itself. Real launch commands have a few dozen.
inline constexpr std::size_t kFixMaxArguments = 512;

// The fixes of one command from its checks (check_command(matrix, catalog, command, targets,
// options) in target order). Candidates, nearest first: one flag an error names, its value
// replaced by each backend the selection found valid (a backend flag) or dropped; then two such
// flags at once. A candidate is a fix when the changed command has no error on the target (and no
// warning under options.strict). The changed copies are judged without fixes of their own.
ATTNSEL_API CommandFixes propose_fixes(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                       const std::vector<CommandCheck>& checks, const CheckOptions& options = {},
                                       std::size_t budget_per_target = kFixBudgetPerTarget);

// "--attention-backend trtllm_mla -> flashinfer", "drop --page-size 64", changes joined by "; ".
ATTNSEL_API std::string describe_fix(const CommandFix& fix);

}  // namespace attnsel
