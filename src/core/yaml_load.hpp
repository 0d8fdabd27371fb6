// YAML from strangers: yaml-cpp's node API shares aliased nodes, so `x: &a [*a]` is a cycle and
// ten nested aliases of ten are a billion nodes to whoever walks the tree. check_yaml() streams the
// parser's events once and refuses such a document before any tree is built.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "attnsel/error.hpp"

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
#include <yaml-cpp/yaml.h>
#endif

namespace attnsel::detail {

struct YamlLimits {
  std::size_t max_nodes = 1'000'000;  // scalars and collections, every alias counted as its expansion
  int max_depth = 200;                 // nested collections
};

// What check_yaml() found, with a 1-based line and column (0 when unknown) relative to `text`,
// for callers that place findings in a larger file themselves (a YAML block inside a script).
struct YamlProblem {
  std::string message;
  int line = 0;
  int column = 0;
};
std::optional<YamlProblem> find_yaml_problem(std::string_view text, const YamlLimits& limits = {});

// Checks the first document of `text` in one pass over the parser's events, linear in its size:
// an alias to an anchor whose node is still open (a cycle), more than max_nodes nodes once aliases
// are expanded (billion laughs), nesting deeper than max_depth, a key given twice in one mapping,
// and YAML syntax errors. The Error is a parse_error whose where is "origin:line:col".
std::optional<Error> check_yaml(std::string_view text, std::string_view origin, const YamlLimits& limits = {});

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
// check_yaml(), then YAML::Load: the first document as a tree that is safe to walk recursively
// (acyclic, at most max_nodes nodes however it is walked, at most max_depth deep).
Result<YAML::Node> load_yaml(std::string_view text, std::string_view origin, const YamlLimits& limits = {});
#endif

}  // namespace attnsel::detail
