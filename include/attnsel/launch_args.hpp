// The argv-to-request step: a launch command's arguments parsed the way the engine's argparse
// parser parses them, from the grammar in its engine profile (unique prefixes, `--flag=value`,
// nargs, types, choices, `--config FILE`), then read through the profile's bindings as the
// request fields attnsel judges. No engine name appears here: everything comes from the profile.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/types.hpp"

namespace attnsel {

// One value as the engine would receive it.
struct ArgValue {
  std::string text;   // as written ("fa3", "$BACKEND")
  std::string flag;   // the option as written ("--attention-back"); "" for a positional MODEL
  int line = 0;       // of the flag (0 for the command-line form); in `origin` when that is set
  WordShape shape = WordShape::literal;
  std::string origin;  // "" for the command itself; the config file it came from otherwise
  // Literal, or the default a shell variable falls back to ("${BACKEND:-fa3}" reads fa3): judged
  // as written, though the environment may override it. Placeholders and $VARs are unknown.
  ATTNSEL_API bool known() const;
};

// Something the parse found. Errors are what the engine's parser would exit on.
struct ArgFinding {
  std::string rule;  // "args.unknown", "args.ambiguous", "args.prefix", "args.type", "args.choice" ...
  Severity severity = Severity::error;
  std::string message;
  std::string flag;        // as written
  std::string value;       // as written, when the finding is about a value
  std::string suggestion;  // the closest valid flag or value
  int line = 0;
  std::string origin;  // the config file, when the finding is in one
};

struct ParsedArgs {
  struct Given {
    const GrammarFlag* flag = nullptr;
    std::string written;  // the option as written
    int line = 0;
    std::vector<ArgValue> values;  // empty for flags that take none
    std::string origin;            // the config file it came from, "" for the command
    std::string key;               // a dotted key of a JSON flag (`-ac.backend X`: "backend"); "" else
    bool unset = false;            // the value means "not given" (the binding's `unset`, "auto")
  };
  const Grammar* grammar = nullptr;
  std::vector<Given> given;  // in the order the engine sees them (config file first)
  std::optional<ArgValue> positional_model;
  std::vector<ArgFinding> findings;
  // A word that may expand to further flags ("$@", "${ARGS[@]}"): what is absent may be there.
  bool open_ended = false;
  int open_ended_line = 0;
  bool exits_early = false;  // a help or version flag: the engine prints and exits without launching
  // Fields read from keys of JSON flags: the last dotted key given, else the key of the last
  // JSON object given (FlexibleArgumentParser applies dotted keys after the whole values).
  std::vector<std::pair<std::string, ArgValue>> keyed;

  // The last value given for a request field (argparse keeps the last), or null.
  const ArgValue* value(std::string_view field) const;
  // The last occurrence of a field's flag (booleans included), or null.
  const Given* flag(std::string_view field) const;
  // Every flag given that no binding reads, canonical spelling, once each.
  std::vector<std::string> unbound() const;
};

// Reads the file a config flag names: (path as written, the command) -> its text, or an Error
// (io_error when it cannot be read; invalid_argument when the caller refuses to read it there).
// A file that is not there (read_input_file's "No such file or directory") and a refused one are
// not read: a note, the command's flags open; any other io_error is the engine exiting.
using ConfigFileReader = std::function<Result<std::string>(const std::string& path, const LaunchCommand& command)>;

struct ParseOptions {
  std::string engine_title;   // for messages: "SGLang would exit: ..."
  ConfigFileReader read_config;  // unset: a config flag's file is noted as not read
  bool positional_model = false;  // the launcher takes MODEL as its first word
  // The grammar describes a later release than the command runs: flags and choices it lacks may
  // have existed then, so they are notes rather than errors.
  bool approximate = false;
  // For an option this grammar lacks that one of the engine's later grammars declares: why, said
  // in a clause ("first in the vLLM 0.13.0 launch grammar ..."); unset or nullopt: none does. Such
  // an option was added after the command's release, which exits on it, complete grammar or not.
  std::function<std::optional<std::string>(std::string_view option)> added_in;
};

ATTNSEL_API ParsedArgs parse_launch_args(const LaunchCommand& command, const Grammar& grammar,
                                         const ParseOptions& options = {});

}  // namespace attnsel
