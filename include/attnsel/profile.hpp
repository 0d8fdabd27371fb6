// An engine profile (data/engines/<engine>/profile.json): what attnsel knows about one serving
// engine besides its capability matrix. The launchers that start it, and which grammar parses
// each one's arguments. The C++ knows no engine by name; everything here comes from the data.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

// One way to start an engine: `python -m MODULE ARGS...` or `PROGRAM SUBCOMMAND... ARGS...`.
struct Launcher {
  std::string engine;                   // the profile it belongs to
  std::string label;                    // how messages name it
  std::string module;                   // python -m MODULE; empty for a program
  std::string program;                  // the program's basename; empty for a module
  std::vector<std::string> subcommand;  // the words after the program that select this launcher
  std::string grammar;                  // which of the engine's grammars parses the arguments
  bool positional_model = false;        // a first word that is not a flag names the model
  std::string source;
};

struct EngineProfile {
  std::string engine;
  std::string title;
  std::string description;
  std::string source;
  std::string origin;  // where it was loaded from: "built-in:engines/<engine>/profile.json", a path
  std::vector<Launcher> launchers;
};

// Loading; errors carry the JSON pointer of the offending value. `origin` names the input.
ATTNSEL_API Result<std::shared_ptr<const EngineProfile>> load_profile(std::string_view json_text, std::string_view origin);
// The built-in profiles, loaded once (data/engines/*/profile.json, compiled in).
ATTNSEL_API const std::vector<std::shared_ptr<const EngineProfile>>& builtin_profiles();
// One built-in profile by engine name; unknown_name (with the valid names) otherwise.
ATTNSEL_API Result<std::shared_ptr<const EngineProfile>> builtin_profile(std::string_view engine);
// The launchers of every built-in profile, in profile order.
ATTNSEL_API const std::vector<Launcher>& builtin_launchers();

}  // namespace attnsel
