// data/matrix.schema.json against the matrices: the real one conforms, and broken variants that the
// loader rejects the schema rejects too. No JSON Schema library is available, so a small checker for
// exactly the keywords the schema uses lives here; a keyword it does not know is an error, never ignored.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/matrix.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

const std::string kSource = ATTNSEL_SOURCE_DIR;

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

// ---- the checker: a draft 2020-12 subset ----

class SchemaChecker {
 public:
  explicit SchemaChecker(json schema) : root_(std::move(schema)) {}

  // One "pointer: message" line per violation; empty when the document conforms.
  std::vector<std::string> check(const json& doc) const {
    std::vector<std::string> errors;
    visit(root_, doc, "", errors);
    return errors;
  }

 private:
  static bool has_type(const json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "integer") return v.is_number_integer();  // like the loader: 1.0 is not an integer
    if (type == "number") return v.is_number();
    return type == "null" && v.is_null();
  }

  const std::regex& regex(const std::string& pattern) const {
    auto it = regexes_.find(pattern);
    if (it == regexes_.end()) it = regexes_.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
    return it->second;
  }

  // Errors of each branch of oneOf/anyOf; returns how many branches passed.
  std::size_t branches(const json& list, const json& v, const std::string& at, std::vector<std::string>& fewest) const {
    std::size_t passed = 0;
    bool first = true;
    for (const json& branch : list) {
      std::vector<std::string> errors;
      visit(branch, v, at, errors);
      if (errors.empty()) ++passed;
      if (first || errors.size() < fewest.size()) fewest = std::move(errors);
      first = false;
    }
    return passed;
  }

  void visit(const json& s, const json& v, const std::string& at, std::vector<std::string>& out) const {
    auto fail = [&](const std::string& message) { out.push_back((at.empty() ? "/" : at) + ": " + message); };
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail("not allowed here");
      return;
    }
    static const std::set<std::string> annotations = {"$schema", "$defs", "title", "description", "default", "source"};
    for (const auto& [key, arg] : s.items()) {
      if (annotations.count(key)) continue;
      if (key == "$ref") {
        const std::string ref = arg.get<std::string>(), prefix = "#/$defs/", name = ref.substr(std::min(ref.size(), prefix.size()));
        if (ref.rfind(prefix, 0) != 0 || !root_.contains("$defs") || !root_["$defs"].contains(name)) fail("unresolvable $ref " + ref);
        else visit(root_["$defs"][name], v, at, out);
      } else if (key == "type") {
        if (!has_type(v, arg.get<std::string>())) fail("expected " + arg.get<std::string>() + ", got " + v.dump());
      } else if (key == "enum") {
        if (std::find(arg.begin(), arg.end(), v) == arg.end()) fail(v.dump() + " is not one of " + arg.dump());
      } else if (key == "pattern") {
        if (v.is_string() && !std::regex_search(v.get<std::string>(), regex(arg.get<std::string>())))
          fail(v.dump() + " does not match " + arg.get<std::string>());
      } else if (key == "minLength") {
        if (v.is_string() && v.get<std::string>().size() < arg.get<std::size_t>()) fail("shorter than " + arg.dump());
      } else if (key == "minimum" || key == "maximum") {
        if (v.is_number() && (key == "minimum" ? v.get<double>() < arg.get<double>() : v.get<double>() > arg.get<double>()))
          fail(v.dump() + " is out of range (" + key + " " + arg.dump() + ")");
      } else if (key == "minItems" || key == "maxItems") {
        if (v.is_array() && (key == "minItems" ? v.size() < arg.get<std::size_t>() : v.size() > arg.get<std::size_t>()))
          fail(key + " " + arg.dump());
      } else if (key == "items") {
        if (v.is_array())
          for (std::size_t i = 0; i < v.size(); ++i) visit(arg, v[i], at + "/" + std::to_string(i), out);
      } else if (key == "required") {
        if (v.is_object())
          for (const auto& name : arg)
            if (!v.contains(name.get<std::string>())) fail("missing required key " + name.dump());
      } else if (key == "minProperties") {
        if (v.is_object() && v.size() < arg.get<std::size_t>()) fail("needs at least " + arg.dump() + " keys");
      } else if (key == "properties") {
        if (v.is_object())
          for (const auto& [name, sub] : arg.items())
            if (v.contains(name)) visit(sub, v[name], at + "/" + name, out);
      } else if (key == "additionalProperties") {
        if (arg != false) fail("the checker supports only \"additionalProperties\": false");
        const json& known = s.contains("properties") ? s["properties"] : json::object();
        if (v.is_object())
          for (const auto& [name, sub] : v.items())
            if (!known.contains(name)) fail("unknown key \"" + name + "\"");
      } else if (key == "oneOf" || key == "anyOf") {
        std::vector<std::string> fewest;
        const std::size_t passed = branches(arg, v, at, fewest);
        if (passed == 0) {
          fail("matches no branch of " + key + "; the closest fails with:");
          out.insert(out.end(), fewest.begin(), fewest.end());
        } else if (key == "oneOf" && passed > 1) {
          fail("matches " + std::to_string(passed) + " branches of oneOf");
        }
      } else {
        fail("the schema uses \"" + key + "\", which this checker does not support");
      }
    }
  }

  json root_;
  mutable std::map<std::string, std::regex> regexes_;
};

// ---- fixtures ----

class MatrixSchema : public testing::Test {
 protected:
  void SetUp() override {
    schema = read_json(kSource + "/data/matrix.schema.json");
    sglang = read_json(kSource + "/data/sglang.json");
    ASSERT_TRUE(schema.is_object()) << "data/matrix.schema.json is not a JSON object";
    ASSERT_TRUE(sglang.is_object()) << "data/sglang.json is not a JSON object";
  }
  std::string joined(const std::vector<std::string>& errors) const {
    std::string out;
    for (const auto& e : errors) out += "\n  " + e;
    return out;
  }
  // "/rules/<i>" of the rule with this id, so that the variants survive edits of the matrix.
  std::string rule(const std::string& id) const {
    for (std::size_t i = 0; i < sglang["rules"].size(); ++i)
      if (sglang["rules"][i]["id"] == id) return "/rules/" + std::to_string(i);
    ADD_FAILURE() << "no rule " << id << " in data/sglang.json";
    return "/rules/0";
  }
  json schema, sglang;
};

TEST_F(MatrixSchema, DescribesAttnselsOwnFormatInDraft2020) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_NE(schema.value("description", "").find("attnsel's own format"), std::string::npos);
  EXPECT_FALSE(schema.value("source", "").empty());
  EXPECT_EQ(sglang["$schema"], "./matrix.schema.json");
}

// Every object schema is closed and every field of it says what it is in one line (editors show it).
TEST_F(MatrixSchema, EveryObjectIsClosedAndEveryFieldDescribed) {
  std::vector<std::pair<std::string, const json*>> todo = {{"", &schema}};
  std::size_t objects = 0;
  while (!todo.empty()) {
    auto [at, node] = todo.back();
    todo.pop_back();
    if (!node->is_object() && !node->is_array()) continue;
    if (node->is_object() && node->value("type", "") == "object") {
      ++objects;
      EXPECT_EQ(node->value("additionalProperties", json(true)), false) << at;
      const json properties = node->value("properties", json::object());
      for (const auto& [name, sub] : properties.items())
        EXPECT_FALSE(sub.value("description", "").empty()) << at << "/properties/" << name;
    }
    for (const auto& [key, child] : node->items()) todo.emplace_back(at + "/" + key, &child);
  }
  EXPECT_GE(objects, 15u);
}

TEST_F(MatrixSchema, TheRealMatrixConforms) {
  SchemaChecker checker(schema);
  auto errors = checker.check(sglang);
  EXPECT_TRUE(errors.empty()) << "data/sglang.json:" << joined(errors);
  const json minimal = read_json(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/minimal.json");
  if (minimal.is_object()) {
    EXPECT_TRUE(checker.check(minimal).empty()) << "minimal.json:" << joined(checker.check(minimal));
  }
}

struct Variant {
  const char* what;
  std::string pointer;  // where to write
  json value;           // null: remove the key instead
};

json apply(json doc, const Variant& v) {
  const json::json_pointer p(v.pointer);
  if (v.value.is_null()) doc[p.parent_pointer()].erase(p.back());
  else doc[p] = v.value;
  return doc;
}

// The same documents, judged by the loader and by the schema: both must refuse them.
TEST_F(MatrixSchema, RejectsWhatTheLoaderRejects) {
  SchemaChecker checker(schema);
  const std::string cell = "/backends/0/cells/0";
  const std::vector<Variant> broken = {
      {"unknown key in a cell", cell + "/sliding_windows", true},
      {"bad kind", cell + "/kinds/0", "gqa"},
      {"bad platform", cell + "/platforms", json::array({"cuda", "metal"})},
      {"bad kv dtype", cell + "/kv_dtypes/0", "fp8"},
      {"bad version string", cell + "/compute_capability/min", "12.x"},
      {"three-part version", cell + "/compute_capability/min", "12.8.1"},
      {"huge version", cell + "/min_cuda", "9999"},
      {"range without bounds", cell + "/compute_capability", json::object()},
      {"bad speculative value", cell + "/speculative", "topk2"},
      {"empty page size list", cell + "/page_size", json::array()},
      {"page size as a string", cell + "/page_size", "64"},
      {"backend name with a space", "/backends/0/name", "flash infer"},
      {"backend without source", "/backends/0/source", nullptr},
      {"unknown severity", rule("flashmla-fp8-kv") + "/severity", "warn"},
      {"unknown scope", rule("dsa-kv-auto") + "/scope", "global"},
      {"request scope tests a backend", rule("dsa-kv-auto") + "/when/backend", "fa3"},
      {"request scope tests a phase, nested", rule("fp4-kv-cuda-only") + "/when/not/phase", "decode"},
      {"backend scope tests the plan", rule("flashmla-page-size") + "/when/prefill_backend", "fa3"},
      {"kv dtype rewrite in backend scope", rule("flashmla-page-size") + "/set/kv_dtype", "bf16"},
      {"backend rewrite without when.backend", rule("fa3-fp8-e5m2-to-triton") + "/when/backend", nullptr},
      {"empty set", rule("flashmla-page-size") + "/set", json::object()},
      {"radix cache set to true", rule("deterministic-radix-cache") + "/set/radix_cache", true},
      {"slot on a plan rule", rule("spec-topk-paged") + "/slot", "attention"},
      {"strict on an error", rule("fp4-kv-cuda-only") + "/strict", true},
      {"negative topk", rule("spec-topk-paged") + "/when/topk", -1},
      {"rule without source", rule("dsa-kv-auto") + "/source", nullptr},
      {"rule with empty source", rule("dsa-kv-auto") + "/source", ""},
      {"rule id with a space", rule("dsa-kv-auto") + "/id", "dsa kv auto"},
      {"unknown placeholder", rule("dsa-kv-auto") + "/message", "uses {dtype}"},
      {"unbalanced placeholder", rule("dsa-kv-auto") + "/message", "uses {kv_dtype"},
      {"unknown key in a selection entry", "/selection/0/priority", 1},
      {"unknown feature", "/features/sinks", json::object()},
      {"unknown top-level key", "/rule", json::array()},
      {"schema version 2", "/schema_version", 2},
      {"default page size above the limit", "/matrix/default_page_size", 1 << 21},
  };
  for (const auto& v : broken) {
    SCOPED_TRACE(v.what);
    const json doc = apply(sglang, v);
    EXPECT_FALSE(load_matrix(doc.dump(), v.what).ok()) << "the loader accepts it: not a broken variant";
    EXPECT_FALSE(checker.check(doc).empty()) << "the schema accepts it";
  }
  // And what the loader accepts, the schema accepts.
  const std::vector<Variant> fine = {
      {"bfloat16 spelling", cell + "/kv_dtypes", json::array({"auto", "bfloat16"})},
      {"major-only version", cell + "/min_cuda", "13"},
      {"note on a cell", cell + "/note", "why"},
      {"strict false on an error", rule("fp4-kv-cuda-only") + "/strict", false},
      {"one kind as a string", cell + "/kinds", "mha"},
  };
  for (const auto& v : fine) {
    SCOPED_TRACE(v.what);
    const json doc = apply(sglang, v);
    auto loaded = load_matrix(doc.dump(), v.what);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
  }
}

// The bad-matrix fixtures the schema accepts are exactly the checks only the loader can make (names
// that must exist, duplicates, overlaps, ordering, cycles). A new fixture the schema accepts belongs here
// only if JSON Schema cannot express its check; otherwise tighten the schema.
TEST_F(MatrixSchema, BadFixturesItAcceptsAreLoaderCrossChecks) {
  const std::set<std::string> cross_checks = {
      "backend_unknown_slot.json",   "duplicate_backend.json",  "duplicate_key.json",
      "duplicate_rule_id.json",      "empty_version_range.json", "joint_slot_phases.json",
      "overlapping_cells.json",      "preferred_page_size_not_allowed.json",
      "rewrite_cycle.json",          "rewrite_to_itself.json",  "rule_unknown_backend.json",
      "selection_unknown_backend.json", "selection_unknown_slot.json", "unknown_slot_prefix.json",
  };
  const std::string dir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/bad";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is absent";
  SchemaChecker checker(schema);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const json doc = read_json(entry.path().string());
    if (name == "expectations.json" || doc.is_discarded()) continue;  // not JSON: the parser's business
    const bool accepted = checker.check(doc).empty();
    EXPECT_EQ(accepted, cross_checks.count(name) == 1) << name << (accepted ? ": accepted by the schema" : ": rejected");
  }
}

}  // namespace
}  // namespace attnsel
