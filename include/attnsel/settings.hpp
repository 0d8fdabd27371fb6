// Settings files: what `attnsel check` is told once for a project rather than on every command line.
//
//   .attnsel.toml                      the keys at the top level
//   pyproject.toml                     the keys under [tool.attnsel]
//
// Keys (kebab-case, as the CLI's flags): gpus (a string "sm90,H100" or a list), cuda,
// engine-version, sglang-version, vllm-version, strict, unknown-model ("note" | "error"),
// model-kind (mha | mla | gdn | dsa), select, ignore (lists of rule patterns, suppress.hpp),
// per-file-ignores (a table: GLOB = [patterns], the glob relative to the settings file's directory),
// exclude, include (lists of walk globs, walk.hpp), gitignore (true | false),
// report-unused-suppressions (true | false). docs/ci.md, "Living with findings", has examples.
//
// A flag given on the command line wins over its key; lists (exclude, include, ignore) add up, but
// --select replaces select.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/suppress.hpp"

namespace attnsel {

struct Settings {
  std::string file;  // the file read, as found or given
  std::optional<std::string> gpus, cuda, engine_version, sglang_version, vllm_version, unknown_model, model_kind;
  std::optional<bool> strict, gitignore, report_unused_suppressions;
  std::vector<std::string> exclude, include;
  RuleSelection rules;  // select, ignore and per-file-ignores; base: the file's directory
  // Where each key given is: key -> "file:line:col", for the errors of values checked later (a GPU name).
  std::map<std::string, std::string> where;
};

// Every key a settings file may hold, in the order of the documentation.
ATTNSEL_API const std::vector<std::string>& settings_keys();

// The settings file that holds for `path` (a file or directory; "" or "-": the current directory):
// in its directory and each one above, nearest first, `.attnsel.toml`, else a `pyproject.toml`
// with a [tool.attnsel] table. The search stops after the first directory that holds `.git` (the
// repository's root) and at the filesystem root. nullopt when none is found. Errors: a
// pyproject.toml that mentions attnsel and is not valid TOML (parse_error, where = file:line:col).
ATTNSEL_API Result<std::optional<std::string>> find_settings_file(const std::string& path);

// A settings file read (the bounded reader, 1 MiB at most) and checked. `pyproject` (or a file named
// pyproject.toml): the keys are those under [tool.attnsel]. Errors, each where = "file:line:col":
// invalid TOML (parse_error, the parser's position), an unknown key (unknown_name, the valid keys and
// the closest), a value of the wrong type or not among its choices (invalid_argument, naming
// them), an unknown rule (unknown_name, the closest id); io_error when it cannot be read.
ATTNSEL_API Result<Settings> read_settings(const std::string& file);
ATTNSEL_API Result<Settings> parse_settings(std::string_view text, const std::string& file, bool pyproject);

}  // namespace attnsel
