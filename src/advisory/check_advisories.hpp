// The advisories of a checked command: its plan on one target turned into an AdvisoryQuery, each
// match a finding `advisory.<ID>` (src/check/check.cpp calls this once per target).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attnsel/check.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/matrix.hpp"

namespace attnsel::detail {

// Appends to check.findings one finding per advisory that matches the command on check.target:
// the backends in effect are the plan's (the user's choice or the engine's own), else, without a
// plan, none (advisories on a backend then do not match). `release` is the release judged ("" when
// not known).
void add_advisory_findings(const Matrix& matrix, const LaunchCommand& command, const ParsedArgs& args,
                           const std::string& release, CommandCheck& check);

// The environment variables the built-in advisories condition on, with their engine, once each:
// the launch readers collect their settings (`VAR=1 cmd`, `export`, `ENV`, `env:`) like the
// profiles' own variables.
const std::vector<std::pair<std::string, std::string>>& advisory_environment();

}  // namespace attnsel::detail
