#include "core/yaml_load.hpp"

#include <fmt/format.h>

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "matrix/json_reader.hpp"

namespace attnsel::detail {
namespace {

std::string at(std::string_view origin, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(origin);
  return fmt::format("{}:{}:{}", origin, mark.line + 1, mark.column + 1);
}

// Thrown out of the parser's callbacks to stop it at the first problem.
struct Refusal {
  Error error;
};

class BudgetCheck : public YAML::EventHandler {
 public:
  BudgetCheck(std::string_view origin, const YamlLimits& limits) : origin_(origin), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    leaf(mark, anchor, &value);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (open_anchors_.count(anchor))
      refuse(mark, "an alias refers to the node that contains it (a cycle): refused");
    const auto it = sizes_.find(anchor);
    const std::size_t size = it == sizes_.end() ? 1 : it->second;
    count(mark, size);
    added(mark, size, nullptr);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Collection {
    YAML::anchor_t anchor = 0;
    bool map = false;
    YAML::Mark mark;
    std::size_t nodes = 1;          // itself and everything under it, aliases expanded
    bool expecting_key = true;      // maps only: the next node is a key
    std::unordered_set<std::string> keys;
  };

  [[noreturn]] void refuse(const YAML::Mark& mark, std::string message) {
    throw Refusal{Error{ErrorCode::parse_error, std::move(message), at(origin_, mark), {}, {}}};
  }

  void count(const YAML::Mark& mark, std::size_t n) {
    total_ += n;
    if (total_ > limits_.max_nodes)
      refuse(mark, fmt::format("more than {} YAML nodes once aliases are expanded (an alias expansion bomb?): refused",
                               limits_.max_nodes));
  }

  // A finished node of `n` nodes joins its parent; `key` is its text when it is a scalar.
  void added(const YAML::Mark& mark, std::size_t n, const std::string* key) {
    if (stack_.empty()) return;
    Collection& parent = stack_.back();
    parent.nodes += n;
    if (!parent.map) return;
    if (parent.expecting_key && key && !parent.keys.insert(*key).second)
      refuse(mark, fmt::format("duplicate key \"{}\" (a mapping must not repeat a key)", shorten(*key, 64)));
    parent.expecting_key = !parent.expecting_key;
  }

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string* value) {
    count(mark, 1);
    if (anchor) sizes_[anchor] = 1;
    added(mark, 1, value);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth)
      refuse(mark, fmt::format("YAML nested deeper than {} levels: refused", limits_.max_depth));
    count(mark, 1);
    if (anchor) open_anchors_.insert(anchor);
    Collection c;
    c.anchor = anchor;
    c.map = map;
    c.mark = mark;
    stack_.push_back(std::move(c));
  }

  void close() {
    Collection done = std::move(stack_.back());
    stack_.pop_back();
    if (done.anchor) {
      open_anchors_.erase(done.anchor);
      sizes_[done.anchor] = done.nodes;
    }
    added(done.mark, done.nodes, nullptr);
  }

  std::string_view origin_;
  const YamlLimits& limits_;
  std::size_t total_ = 0;
  std::vector<Collection> stack_;
  std::unordered_map<YAML::anchor_t, std::size_t> sizes_;
  std::unordered_set<YAML::anchor_t> open_anchors_;
};

Error from_yaml_exception(const YAML::Exception& e, std::string_view origin) {
  return Error{ErrorCode::parse_error, e.msg.empty() ? std::string("invalid YAML") : shorten(e.msg, 300), at(origin, e.mark), {}, {}};
}

}  // namespace

std::optional<Error> check_yaml(std::string_view text, std::string_view origin, const YamlLimits& limits) {
  // yaml-cpp reads a NUL as the end of the stream: whatever follows would be dropped unread.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const std::string_view before = text.substr(0, nul);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto line_start = before.rfind('\n');
    const auto col = nul - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    return Error{ErrorCode::parse_error, "a NUL byte: a YAML file is text, and nothing after this byte would be read",
                 fmt::format("{}:{}:{}", origin, line, col), {}, {}};
  }
  std::istringstream in{std::string(text)};
  BudgetCheck budget(origin, limits);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(budget);
  } catch (const Refusal& r) {
    return r.error;
  } catch (const YAML::Exception& e) {
    return from_yaml_exception(e, origin);
  }
  return std::nullopt;
}

std::optional<YamlProblem> find_yaml_problem(std::string_view text, const YamlLimits& limits) {
  auto error = check_yaml(text, "", limits);
  if (!error) return std::nullopt;
  YamlProblem p{error->message, 0, 0};
  // where is ":line:col" with an empty origin.
  if (std::sscanf(error->where.c_str(), ":%d:%d", &p.line, &p.column) != 2) p.line = p.column = 0;
  return p;
}

Result<YAML::Node> load_yaml(std::string_view text, std::string_view origin, const YamlLimits& limits) {
  if (auto refused = check_yaml(text, origin, limits)) return *refused;
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return from_yaml_exception(e, origin);
  }
}

}  // namespace attnsel::detail

#else

namespace attnsel::detail {

std::optional<Error> check_yaml(std::string_view, std::string_view origin, const YamlLimits&) {
  return Error{ErrorCode::invalid_argument, "this attnsel was built without YAML support (yaml-cpp)", std::string(origin), {}, {}};
}

std::optional<YamlProblem> find_yaml_problem(std::string_view, const YamlLimits&) {
  return YamlProblem{"this attnsel was built without YAML support (yaml-cpp)", 0, 0};
}

}  // namespace attnsel::detail

#endif
