// data/matrix.schema.json against the matrices: every built-in one conforms (overlays through the
// schema's "extends" branch), and broken variants that the loader rejects the schema rejects too;
// data/generations.schema.json against each engine's generations.json; data/profile.schema.json and data/grammar.schema.json
// against every engine profile and grammar (data/engines/ and the toy fixture), cross-checked with
// load_profile the same way. No JSON Schema library is available, so a small
// checker for exactly the keywords the schemas use lives here; a keyword it does not know is an error,
// never ignored.
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
#include "attnsel/profile.hpp"

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
        // false: a closed object; a schema: a map (no "properties") whose every value it checks.
        const json& known = s.contains("properties") ? s["properties"] : json::object();
        if (arg.is_object() && s.contains("properties")) fail("the checker supports a schema in \"additionalProperties\" only for maps");
        else if (arg.is_object() && v.is_object())
          for (const auto& [name, sub] : v.items()) visit(arg, sub, at + "/" + name, out);
        else if (arg != false) fail("the checker supports \"additionalProperties\": false or a schema");
        else if (v.is_object())
          for (const auto& [name, sub] : v.items())
            if (!known.contains(name)) fail("unknown key \"" + name + "\"");
      } else if (key == "const") {
        if (v != arg) fail(v.dump() + " is not " + arg.dump());
      } else if (key == "allOf") {
        for (const json& branch : arg) visit(branch, v, at, out);
      } else if (key == "if") {
        // then/else apply by whether the value passes "if"; "if" itself reports nothing.
        std::vector<std::string> errors;
        visit(arg, v, at, errors);
        const char* branch = errors.empty() ? "then" : "else";
        if (s.contains(branch)) visit(s[branch], v, at, out);
      } else if (key == "then" || key == "else") {
        // applied with "if"
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

const std::string kData = kSource + "/data/";

// The matrices in data/, by path under data/: every JSON document with "matrix" or "extends" at the top
// level (profiles, grammars, generations.json, gpus.json and models.json have neither). A new
// generation is checked without a change here.
std::vector<std::string> matrix_files() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kData)) {
    const std::string name = std::filesystem::relative(entry.path(), kData).generic_string();
    if (entry.path().extension() != ".json" || name.find(".schema.") != std::string::npos) continue;
    const json doc = read_json(entry.path().string());
    if (doc.is_object() && (doc.contains("matrix") || doc.contains("extends"))) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Each engine's generations.json, by path under data/.
std::vector<std::string> generation_files() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(kData + "engines"))
    if (std::filesystem::exists(entry.path() / "generations.json"))
      out.push_back("engines/" + entry.path().filename().string() + "/generations.json");
  std::sort(out.begin(), out.end());
  return out;
}
const std::vector<std::string> kMatrixFiles = matrix_files();

std::string joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e;
  return out;
}

// "<array>/<i>" of the entry whose `key` is `value`, so that the variants survive edits of the data.
std::string entry(const json& doc, const std::string& array, const std::string& key, const std::string& value) {
  const json& list = doc[json::json_pointer(array)];
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].value(key, "") == value) return array + "/" + std::to_string(i);
  ADD_FAILURE() << "no entry with " << key << " " << value << " in " << array;
  return array + "/0";
}

class MatrixSchema : public testing::Test {
 protected:
  void SetUp() override {
    schema = read_json(kData + "matrix.schema.json");
    sglang = read_json(kData + "engines/sglang/matrix-0.5.12.json");
    diffusion = read_json(kData + "engines/sglang-diffusion/matrix.json");
    ASSERT_TRUE(schema.is_object()) << "data/matrix.schema.json is not a JSON object";
    ASSERT_TRUE(sglang.is_object()) << "data/engines/sglang/matrix-0.5.12.json is not a JSON object";
    ASSERT_TRUE(diffusion.is_object()) << "data/engines/sglang-diffusion/matrix.json is not a JSON object";
  }
  std::string rule(const std::string& id) const { return entry(sglang, "/rules", "id", id); }
  json schema, sglang, diffusion;
};

// Every object schema is closed and every field of it says what it is in one line (editors show it).
std::size_t check_closed_and_described(const json& schema) {
  std::vector<std::pair<std::string, const json*>> todo = {{"", &schema}};
  std::size_t objects = 0;
  while (!todo.empty()) {
    auto [at, node] = todo.back();
    todo.pop_back();
    if (!node->is_object() && !node->is_array()) continue;
    // A node whose "type" is not a string is a "properties" map with a field named "type".
    if (node->is_object() && node->contains("type") && (*node)["type"] == "object") {
      ++objects;
      // Closed, or a map (no "properties") whose values are described, like a field.
      const json closed = node->value("additionalProperties", json(true));
      if (closed.is_object() && !node->contains("properties")) {
        EXPECT_FALSE(closed.value("description", "").empty()) << at << "/additionalProperties";
      } else {
        EXPECT_EQ(closed, false) << at;
      }
      const json properties = node->value("properties", json::object());
      for (const auto& [name, sub] : properties.items()) {
        EXPECT_TRUE(sub.is_object() && !sub.value("description", "").empty()) << at << "/properties/" << name;
        if (sub.is_object()) {
          EXPECT_EQ(sub.value("description", "").find('\n'), std::string::npos) << at << "/properties/" << name;
        }
      }
    }
    for (const auto& [key, child] : node->items()) todo.emplace_back(at + "/" + key, &child);
  }
  return objects;
}

TEST_F(MatrixSchema, DescribesAttnselsOwnFormatInDraft2020) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_NE(schema.value("description", "").find("attnsel's own format"), std::string::npos);
  EXPECT_FALSE(schema.value("source", "").empty());
  // Overlays are told apart by "extends" at the top level.
  EXPECT_EQ(schema["if"], json({{"required", {"extends"}}}));
  EXPECT_TRUE(schema.contains("then") && schema.contains("else"));
  for (const auto& file : kMatrixFiles) EXPECT_EQ(read_json(kData + file).value("$schema", ""), "../../matrix.schema.json") << file;
  // Both complete matrices and overlays are among them, each in its engine's folder.
  for (const char* file : {"engines/sglang/matrix-0.5.12.json", "engines/sglang/matrix-0.5.3.json", "engines/sglang/matrix-0.4.6.json",
                           "engines/sglang-diffusion/matrix.json", "engines/vllm/matrix.json"})
    EXPECT_NE(std::find(kMatrixFiles.begin(), kMatrixFiles.end(), file), kMatrixFiles.end()) << file;
}

TEST_F(MatrixSchema, EveryObjectIsClosedAndEveryFieldDescribed) { EXPECT_GE(check_closed_and_described(schema), 20u); }

TEST_F(MatrixSchema, TheBuiltInMatricesConform) {
  SchemaChecker checker(schema);
  for (const auto& file : kMatrixFiles) {
    SCOPED_TRACE(file);
    const json doc = read_json(kData + file);
    ASSERT_TRUE(doc.is_object());
    auto errors = checker.check(doc);
    EXPECT_TRUE(errors.empty()) << "data/" << file << ":" << joined(errors);
    auto loaded = load_matrix_file(kData + file);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    if (doc.contains("extends")) {
      // It conforms as an overlay, not by accident as a complete matrix.
      json complete = doc;
      complete.erase("extends");
      EXPECT_FALSE(checker.check(complete).empty()) << file << " would also pass as a complete matrix";
    }
  }
  const json minimal = read_json(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/minimal.json");
  if (minimal.is_object()) {
    EXPECT_TRUE(checker.check(minimal).empty()) << "minimal.json:" << joined(checker.check(minimal));
  }
}

struct Variant {
  const char* what;
  std::string pointer;  // where to write
  json value;           // null: remove the key instead
  bool literal_null = false;  // write null rather than remove
};

json apply(json doc, const Variant& v) {
  const json::json_pointer p(v.pointer);
  if (v.value.is_null() && !v.literal_null) doc[p.parent_pointer()].erase(p.back());
  else doc[p] = v.value;
  return doc;
}

// Each variant of `base` must be refused by both the loader and the schema (broken), or accepted by
// both (fine). `origin` is where the loader believes the document lives: overlays resolve "extends"
// next to it.
void cross_check(const SchemaChecker& checker, const json& base, const std::string& origin, const std::vector<Variant>& broken,
                 const std::vector<Variant>& fine) {
  for (const auto& v : broken) {
    SCOPED_TRACE(v.what);
    const json doc = apply(base, v);
    EXPECT_FALSE(load_matrix(doc.dump(), origin).ok()) << "the loader accepts it: not a broken variant";
    EXPECT_FALSE(checker.check(doc).empty()) << "the schema accepts it";
  }
  for (const auto& v : fine) {
    SCOPED_TRACE(v.what);
    const json doc = apply(base, v);
    auto loaded = load_matrix(doc.dump(), origin);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
  }
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
      {"backend with a blank source", "/backends/0/source", " "},
      {"slot name with a colon", "/slots/0/name", "attention:main"},
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
      {"unknown placeholder", rule("dsa-kv-auto") + "/message", "uses {speed}"},
      {"unbalanced placeholder", rule("dsa-kv-auto") + "/message", "uses {kv_dtype"},
      {"unknown key in a selection entry", "/selection/0/priority", 1},
      {"unknown feature", "/features/sinks", json::object()},
      {"unknown top-level key", "/rule", json::array()},
      {"schema version 2", "/schema_version", 2},
      {"default page size above the limit", "/matrix/default_page_size", 1 << 21},
      // Overlay-only keys in a complete matrix.
      {"after in a complete matrix", rule("dsa-kv-auto") + "/after", "fp4-kv-cuda-only"},
      {"before on a backend of a complete matrix", "/backends/0/before", "triton"},
      {"remove in a complete matrix", "/selection/0/remove", true},
  };
  const std::vector<Variant> fine = {
      {"bfloat16 spelling", cell + "/kv_dtypes", json::array({"auto", "bfloat16"})},
      {"major-only version", cell + "/min_cuda", "13"},
      {"note on a cell", cell + "/note", "why"},
      {"strict false on an error", rule("fp4-kv-cuda-only") + "/strict", false},
      {"one kind as a string", cell + "/kinds", "mha"},
      {"{dtype} and {detail} placeholders", rule("dsa-kv-auto") + "/message", "{title} in {dtype}: {detail}"},
  };
  cross_check(checker, sglang, "variant of data/engines/sglang/matrix-0.5.12.json", broken, fine);
}

// The fields the diffusion profile brought: phased slots, compute dtypes, packages, backend config.
TEST_F(MatrixSchema, RejectsWhatTheLoaderRejectsInTheNewFields) {
  SchemaChecker checker(schema);
  const json& d = diffusion;
  const std::string fa = entry(d, "/backends", "name", "fa"), sta = entry(d, "/backends", "name", "sliding_tile_attn"),
                    vsa = entry(d, "/backends", "name", "video_sparse_attn");
  const std::string sta_param = sta + "/config/parameters/0";  // mask_strategy_file_path: str, required
  const std::string vsa_param = vsa + "/config/parameters/0";  // sparsity: float, 0 to 1
  const std::string fa_rule = entry(d, "/rules", "id", "fa-runtime-missing");
  const std::vector<Variant> broken = {
      {"bad dtype in a cell", fa + "/cells/0/dtypes/1", "fp8"},
      {"empty dtype list", fa + "/cells/0/dtypes", json::array()},
      {"bad dtype in a condition", entry(d, "/selection", "id", "auto-rocm-fa") + "/when/dtype", "int8"},
      {"requires as a number", sta + "/cells/0/requires", 1},
      {"installed as an empty list", fa_rule + "/when/not/installed", json::array()},
      {"installed as an object", fa_rule + "/when/not/installed", json::object()},
      {"config parameter with min on a str", sta_param + "/min", 0},
      {"config parameter with max on a list[int]", entry(d, "/backends", "name", "vmoba_attn") + "/config/parameters/2/max", 8},
      {"config parameter min as a string", vsa_param + "/min", "0"},
      {"config parameter of an unknown type", sta_param + "/type", "string"},
      {"config parameter without a name", sta_param + "/name", nullptr},
      {"config parameter with an empty name", sta_param + "/name", ""},
      {"config parameter with an unknown key", sta_param + "/choices", json::array({"a"})},
      {"config parameter required as a string", sta_param + "/required", "yes"},
      {"config without parameters", sta + "/config/parameters", json::array()},
      {"config without source", sta + "/config/source", nullptr},
      {"phased slot missing prefill_flag", "/slots/0/phased", true},
      {"slot without phases that is not joint", "/slots/0/joint", false},
      {"joint slot without flag", "/slots/0/flag", nullptr},
      {"joint slot with an empty flag", "/slots/0/flag", ""},
      {"models other than any", "/matrix/models", "llm"},
      {"paged_kv_cache as a string", "/matrix/paged_kv_cache", "no"},
  };
  const std::vector<Variant> fine = {
      {"dtype long spelling", fa + "/cells/0/dtypes", "bfloat16"},
      {"dtype in a backend rule", fa_rule + "/when/dtype", json::array({"fp16", "bf16"})},
      {"installed as one string", fa_rule + "/when/not/installed", "flash_attn"},
      {"requires as one string", sta + "/cells/0/requires", "st_attn"},
      {"requires empty", sta + "/cells/0/requires", json::array()},
      {"int parameter with bounds", sta + "/config/parameters/2/min", 0},
      {"float parameter with an integer bound", vsa_param + "/max", 2},
      {"default of any type", sta + "/config/parameters/1/default", json::array({1, 2})},
      {"unphased slot with per-phase flags", "/slots/0/prefill_flag", "--prefill-attention-backend"},
      {"phased slot with both flags", "/slots/0", json({{"name", "attention"}, {"kinds", "mha"}, {"flag", "--attention-backend"},
                                                        {"prefill_flag", "--p"}, {"decode_flag", "--d"}, {"source", "test"}})},
      {"paged KV cache", "/matrix/paged_kv_cache", true},
  };
  cross_check(checker, diffusion, "variant of data/engines/sglang-diffusion/matrix.json", broken, fine);
}

// Overlays: the loader composes them with their base from disk, and both judge the same documents.
TEST_F(MatrixSchema, RejectsWhatTheLoaderRejectsInOverlays) {
  SchemaChecker checker(schema);
  const json overlay = read_json(kData + "engines/sglang/matrix-0.5.3.json");
  ASSERT_TRUE(overlay.is_object());
  const std::string origin = kData + "engines/sglang/matrix-0.5.3.json";
  const std::string removal = entry(overlay, "/rules", "id", "fa4-sm90-decode-slowdown");
  const std::string placed = entry(overlay, "/rules", "id", "fa4-page-size");
  const std::vector<Variant> broken = {
      {"extends as a number", "/extends", 3},
      {"unknown top-level key", "/backend", json::array()},
      {"removal with another key", removal + "/severity", "warning"},
      {"remove: false", removal + "/remove", false},
      {"removal without its key", removal + "/id", nullptr},
      {"backend removal without its slot", entry(overlay, "/backends", "name", "triton") + "/slot", nullptr},
      {"a new rule without source", placed + "/source", nullptr},
      {"after as a number", placed + "/after", 3},
      {"schema version 2", "/schema_version", 2},
      {"a required matrix key set to null", "/matrix/source", nullptr, true},
      {"slots as an object", "/slots", json::object()},
      {"a feature that is not a rule", "/features", json({{"multimodal", true}})},
      {"an unknown matrix key", "/matrix/engine_versions", "x"},
  };
  json before = overlay[json::json_pointer(placed)];
  before.erase("after");
  before["before"] = "trtllm-mha-page-size";
  const std::vector<Variant> fine = {
      {"null description", "/matrix/description", nullptr, true},
      {"a feature removed with null", "/features", json({{"multimodal", nullptr}})},
      {"a new rule placed before an existing one", placed, before},
      {"a new rule appended", placed + "/after", nullptr},
      {"empty features", "/features", json::object()},
  };
  cross_check(checker, overlay, origin, broken, fine);
  // An overlay may change nothing at all.
  const json bare = {{"extends", "matrix-0.5.12.json"}};
  EXPECT_TRUE(load_matrix(bare.dump(), origin).ok());
  EXPECT_TRUE(checker.check(bare).empty()) << joined(checker.check(bare));
  // Overlays written before the files moved into data/engines/<engine>/ still find their built-in base.
  for (const char* former : {"sglang.json", "sglang-main.json", "sglang-diffusion.json", "vllm.json"})
    EXPECT_TRUE(load_matrix(json({{"extends", former}}).dump(), "/nowhere/overlay.json").ok()) << former;
}

// Overlay fixtures the schema accepts are the checks that need the base: what is replaced, removed or
// referenced, and "extends" chains.
TEST_F(MatrixSchema, OverlayFixturesItAcceptsAreLoaderCrossChecks) {
  const std::map<std::string, bool> expected = {
      {"adds_backend.json", true},        {"cycle_a.json", true},      {"cycle_b.json", true},
      {"dangling_reference.json", true},  {"removes_missing.json", true}, {"unknown_key.json", false},
  };
  const std::string dir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/extends";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is absent";
  SchemaChecker checker(schema);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const json doc = read_json(entry.path().string());
    ASSERT_TRUE(doc.is_object()) << name;
    auto it = expected.find(name);
    ASSERT_NE(it, expected.end()) << name << ": a new fixture; say here whether the schema accepts it";
    EXPECT_EQ(checker.check(doc).empty(), it->second) << name << joined(checker.check(doc));
    const bool loads = load_matrix_file(entry.path().string()).ok();
    EXPECT_EQ(loads, name == "adds_backend.json") << name;
  }
}

// The bad-matrix fixtures the schema accepts are exactly the checks only the loader can make (names
// that must exist, duplicates, overlaps, ordering, cycles). A new fixture the schema accepts belongs here
// only if JSON Schema cannot express its check; otherwise tighten the schema.
TEST_F(MatrixSchema, BadFixturesItAcceptsAreLoaderCrossChecks) {
  const std::set<std::string> cross_checks = {
      "backend_unknown_slot.json",   "duplicate_backend.json",  "duplicate_key.json",
      "duplicate_rule_id.json",      "empty_version_range.json", "int_range_empty.json", "joint_slot_phases.json",
      "overlapping_cells.json",      "preferred_page_size_not_allowed.json",
      "rewrite_cycle.json",          "rewrite_to_itself.json",  "rule_unknown_backend.json",
      "selection_backends_twice.json", "selection_unknown_backend.json", "selection_unknown_slot.json",
      "unknown_slot_prefix.json",    "only_with_unknown_slot.json", "only_with_later_slot.json",
      "only_with_unknown_backend.json", "split_default_unphased_slot.json", "split_default_bad_placeholder.json",
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

// ---- the generations: data/engines/<engine>/generations.json ----

class GenerationsSchema : public testing::Test {
 protected:
  void SetUp() override {
    schema = read_json(kData + "generations.schema.json");
    ASSERT_TRUE(schema.is_object()) << "data/generations.schema.json is not a JSON object";
    for (const auto& file : generation_files()) registries[file] = read_json(kData + file);
    ASSERT_GE(registries.size(), 3u) << "sglang, sglang-diffusion and vllm each have a generations.json";
    registry = registries.at("engines/sglang/generations.json");
  }
  json schema, registry;
  std::map<std::string, json> registries;
};

TEST_F(GenerationsSchema, DescribesTheGenerationsInDraft2020) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_FALSE(schema.value("source", "").empty());
  EXPECT_GE(check_closed_and_described(schema), 2u);
  for (const auto& [file, doc] : registries) EXPECT_EQ(doc.value("$schema", ""), "../../generations.schema.json") << file;
}

TEST_F(GenerationsSchema, EveryEngineConformsAndTheyNameEveryMatrixFile) {
  SchemaChecker checker(schema);
  int defaults = 0;
  for (const auto& [file, doc] : registries) {
    auto errors = checker.check(doc);
    EXPECT_TRUE(errors.empty()) << "data/" << file << ":" << joined(errors);
    EXPECT_EQ("engines/" + doc.value("engine", "") + "/generations.json", file) << "an engine's folder is named after it";
    defaults += doc.value("default", false) ? 1 : 0;
  }
  EXPECT_EQ(defaults, 1) << "exactly one engine is the default";
  // The reader (built in) accepts them; the files they name are the matrices in data/, every one of
  // them (a matrix nobody can select is a forgotten generation).
  auto generations = builtin_generations();
  ASSERT_TRUE(generations.ok()) << generations.error().describe();
  std::set<std::string> files;
  for (const auto& g : *generations) files.insert(g.file);
  EXPECT_EQ(files, std::set<std::string>(kMatrixFiles.begin(), kMatrixFiles.end()));
}

// The reader parses only the built-in generations, so its broken variants are judged by the schema alone;
// "since" is cross-checked with parse_release, which the reader uses.
TEST_F(GenerationsSchema, RejectsBrokenGenerations) {
  SchemaChecker checker(schema);
  const std::string gen = "/generations/0";
  const std::vector<Variant> broken = {
      {"schema version 2", "/schema_version", 2},
      {"no engine", "/engine", nullptr},
      {"no generations", "/generations", json::array()},
      {"unknown key", "/defaults", true},
      {"default as a string", "/default", "yes"},
      {"unknown key in a generation", gen + "/until", "0.5.2"},
      {"generation without source", gen + "/source", nullptr},
      {"generation without file", gen + "/file", nullptr},
      {"since as a number", gen + "/since", 0.46},
      {"since not a release", gen + "/since", "0.4.x"},
  };
  for (const auto& v : broken) {
    SCOPED_TRACE(v.what);
    EXPECT_FALSE(checker.check(apply(registry, v)).empty()) << "the schema accepts it";
  }
  const json& release = schema["$defs"]["release"];
  for (const char* text : {"0.5.3", "v0.5.3", "0.5", "0.5.3.post1", "0.5.3post1", "0.5.3rc0", "0.5.3.dev1", "1234.0.0", "0.5.3.4",
                           "0.5.3x", "0.5.", "5", "12345.0", "0.5.3.rc1", "", "V1.2", "0.5.3.", "0.5.3..post1", "0.5rc1",
                           "0.5.rc1", "0.5.3-rc1", "x0.5.3"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(SchemaChecker(release).check(json(text)).empty(), parse_release(text).has_value());
  }
}

// ---- engine profiles and launch grammars: data/profile.schema.json, data/grammar.schema.json ----

const std::string kEngines = kData + "engines/";
const std::string kToy = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/engines/toy/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every file of data/engines/*/ whose name matches: a new engine is checked without a change here.
std::vector<std::string> engine_files(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& dir : std::filesystem::directory_iterator(kEngines)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      const std::string name = file.path().filename().string();
      if (name.rfind(prefix, 0) == 0 && file.path().extension() == ".json") out.push_back(file.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads the files a profile names from `dir`, as load_profile_file does; `overrides` replace some.
ProfileFileReader files_in(const std::string& dir, std::map<std::string, std::string> overrides = {}) {
  return [dir, overrides](std::string_view relative) -> Result<std::string> {
    if (auto it = overrides.find(std::string(relative)); it != overrides.end()) return it->second;
    const std::string path = dir + std::string(relative);
    if (!std::filesystem::is_regular_file(path)) return Error{ErrorCode::io_error, "no such file", path, {}, {}};
    return read_text(path);
  };
}

class ProfileSchema : public testing::Test {
 protected:
  void SetUp() override {
    schema = read_json(kData + "profile.schema.json");
    sglang = read_json(kEngines + "sglang/profile.json");
    toy = read_json(kToy + "profile.json");
    ASSERT_TRUE(schema.is_object()) << "data/profile.schema.json is not a JSON object";
    ASSERT_TRUE(sglang.is_object()) << "data/engines/sglang/profile.json is not a JSON object";
    ASSERT_TRUE(toy.is_object()) << "tests/fixtures/engines/toy/profile.json is not a JSON object";
  }
  std::string launcher(const std::string& label) const { return entry(sglang, "/launchers", "label", label); }
  std::string binding(const std::string& field) const { return entry(sglang, "/bindings", "field", field); }
  json schema, sglang, toy;
};

TEST_F(ProfileSchema, DescribesTheProfileInDraft2020) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_FALSE(schema.value("source", "").empty());
  EXPECT_GE(check_closed_and_described(schema), 8u);
  const auto profiles = engine_files("profile");
  EXPECT_GE(profiles.size(), 2u);
  for (const auto& file : profiles) EXPECT_EQ(read_json(file).value("$schema", ""), "../../profile.schema.json") << file;
  // The release pattern is the registry's: one spelling of parse_release's rule.
  EXPECT_EQ(schema["$defs"]["release"]["pattern"], read_json(kData + "generations.schema.json")["$defs"]["release"]["pattern"]);
}

TEST_F(ProfileSchema, TheBuiltInProfilesAndTheToyConform) {
  SchemaChecker checker(schema);
  std::vector<std::string> files = engine_files("profile");
  files.push_back(kToy + "profile.json");
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const json doc = read_json(file);
    ASSERT_TRUE(doc.is_object());
    auto errors = checker.check(doc);
    EXPECT_TRUE(errors.empty()) << file << ":" << joined(errors);
    auto loaded = load_profile_file(file);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
  }
}

// Each variant must be refused by both the loader and the schema (broken), or accepted by both (fine).
// The loader reads the grammar files the variant names from `dir`.
void cross_check_profile(const SchemaChecker& checker, const json& base, const std::string& dir,
                         const std::vector<Variant>& broken, const std::vector<Variant>& fine) {
  for (const auto& v : broken) {
    SCOPED_TRACE(v.what);
    const json doc = apply(base, v);
    EXPECT_FALSE(load_profile(doc.dump(), "variant", files_in(dir)).ok()) << "the loader accepts it: not a broken variant";
    EXPECT_FALSE(checker.check(doc).empty()) << "the schema accepts it";
  }
  for (const auto& v : fine) {
    SCOPED_TRACE(v.what);
    const json doc = apply(base, v);
    auto loaded = load_profile(doc.dump(), "variant", files_in(dir));
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
  }
}

TEST_F(ProfileSchema, RejectsWhatTheLoaderRejects) {
  SchemaChecker checker(schema);
  const std::string module = launcher("sglang.launch_server"), program = launcher("sglang serve");
  const std::string grammar = "/grammars/0", topk = "/speculative/auto_topk/0", handoff = "/handoffs/0";
  const std::vector<Variant> broken = {
      {"schema version 2", "/schema_version", 2},
      {"schema version as a string", "/schema_version", "1"},
      {"unknown top-level key", "/launcher", json::array()},
      {"no engine", "/engine", nullptr},
      {"no title", "/title", nullptr},
      {"no source", "/source", nullptr},
      {"no launchers", "/launchers", nullptr},
      {"launchers as an object", "/launchers", json::object()},
      {"description as a number", "/description", 1},
      {"a launcher with a module and a program", module + "/program", "sglang"},
      {"a launcher with neither", module + "/module", nullptr},
      {"a launcher with an empty module only", module + "/module", ""},
      {"a module with a subcommand", module + "/subcommand", json::array({"serve"})},
      {"a module with an empty-string subcommand", module + "/subcommand", ""},
      {"a launcher without source", module + "/source", nullptr},
      {"a launcher without grammar", module + "/grammar", nullptr},
      {"a launcher without label", module + "/label", nullptr},
      {"a launcher with an unknown key", module + "/args", json::array()},
      {"positional_model as a string", program + "/positional_model", "yes"},
      {"subcommand as a number", program + "/subcommand", 1},
      {"a grammar without file or files", grammar + "/file", nullptr},
      {"a grammar with an empty files list", "/grammars/2/files", json::array()},
      {"a grammar with an empty files list beside file", grammar + "/files", json::array()},
      {"a grammar without name", grammar + "/name", nullptr},
      {"since not a release", grammar + "/since", "0.5.x"},
      {"since as a number", grammar + "/since", 0.5},
      {"file as a list", grammar + "/file", json::array({"grammar-main.json"})},
      {"a grammar with an unknown key", grammar + "/until", "0.5.13"},
      {"grammars as an object", "/grammars", json::object()},
      {"a binding without field", binding("page_size") + "/field", nullptr},
      {"a binding's flags as a number", binding("page_size") + "/flags", 1},
      {"a binding with an unknown key", binding("page_size") + "/flag", "--page-size"},
      {"bindings as an object", "/bindings", json::object()},
      {"vocabularies as an array", "/vocabularies", json::array()},
      {"a vocabulary without spellings", "/vocabularies/kv_cache_dtype/spellings", nullptr},
      {"a vocabulary without source", "/vocabularies/kv_cache_dtype/source", nullptr},
      {"a spelling mapped to a number", "/vocabularies/kv_cache_dtype/spellings/auto", 1},
      {"spellings as an array", "/vocabularies/kv_cache_dtype/spellings", json::array({"auto"})},
      {"speculative without auto_topk", "/speculative/auto_topk", nullptr},
      {"speculative without source", "/speculative/source", nullptr},
      {"an alias mapped to a list", "/speculative/aliases/NEXTN", json::array({"EAGLE"})},
      {"topk 0", topk + "/topk", 0},
      {"topk above 65536", topk + "/topk", 65537},
      {"topk as a string", topk + "/topk", "1"},
      {"an auto_topk entry without topk", topk + "/topk", nullptr},
      {"an auto_topk entry with an unknown key", topk + "/model", "x"},
      {"algorithms as a number", "/speculative/algorithms", 3},
      {"a handoff without engine", handoff + "/engine", nullptr},
      {"a handoff without source", handoff + "/source", nullptr},
      {"a handoff value as a boolean", handoff + "/value", true},
  };
  const std::vector<Variant> fine = {
      {"any $schema", "/$schema", "https://example.org/x.json"},
      {"no description", "/description", nullptr},
      {"an empty module beside a program", program + "/module", ""},
      {"a module with no subcommand words", module + "/subcommand", json::array()},
      {"one subcommand as a string", program + "/subcommand", "serve"},
      {"files beside file (files win)", grammar + "/files", json::array({"grammar-0.5.12.json"})},
      {"files as one string", "/grammars/2/files", "grammar-router-main.json"},
      {"an empty since", grammar + "/since", ""},
      {"no since", grammar + "/since", nullptr},
      {"since with v and a suffix", grammar + "/since", "v0.5.12.post1"},
      {"no grammars at all", "/grammars", nullptr},
      {"a binding's flags as one string", binding("page_size") + "/flags", "--page-size"},
      {"a binding without flags", binding("page_size") + "/flags", nullptr},
      {"a spelling mapped to null", "/vocabularies/kv_cache_dtype/spellings/auto", nullptr, true},
      {"no vocabularies", "/vocabularies", nullptr},
      {"no algorithms", "/speculative/algorithms", nullptr},
      {"no aliases", "/speculative/aliases", nullptr},
      {"auto_when_unset as one string", "/speculative/auto_when_unset", "speculative.topk"},
      {"topk 65536", topk + "/topk", 65536},
      {"no speculative", "/speculative", nullptr},
      {"no handoffs", "/handoffs", nullptr},
  };
  cross_check_profile(checker, sglang, kEngines + "sglang/", broken, fine);
}

// What only the loader can judge: names that must exist, files that must load. The schema accepts these.
TEST_F(ProfileSchema, CrossChecksAreTheLoadersAlone) {
  SchemaChecker checker(schema);
  const std::vector<Variant> loader_only = {
      {"a launcher naming a grammar the profile lacks", launcher("sglang.launch_server") + "/grammar", "serverr"},
      {"a grammar file that does not exist", "/grammars/0/file", "grammar-0.4.0.json"},
      {"a grammar file that is not a grammar", "/grammars/0/file", "profile.json"},
  };
  for (const auto& v : loader_only) {
    SCOPED_TRACE(v.what);
    const json doc = apply(sglang, v);
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
    EXPECT_FALSE(load_profile(doc.dump(), "variant", files_in(kEngines + "sglang/")).ok());
  }
  // A profile loaded from text cannot name files.
  EXPECT_FALSE(load_profile(toy.dump(), "text").ok());
}

// "since" is judged by parse_release in the loader; the schema's pattern agrees on every spelling.
TEST_F(ProfileSchema, SinceAgreesWithParseRelease) {
  const SchemaChecker since(json({{"$defs", schema["$defs"]}, {"anyOf", schema["$defs"]["grammar"]["properties"]["since"]["anyOf"]}}));
  for (const char* text : {"0.5.3", "v0.5.3", "0.5", "0.5.3.post1", "0.5.3post1", "0.5.3rc0", "0.5.3.dev1", "1234.0.0", "0.5.3.4",
                           "0.5.3x", "0.5.", "5", "12345.0", "0.5.3.rc1", "V1.2", "0.5.3.", "0.5.3..post1", "0.5rc1", "0.5.rc1",
                           "0.5.3-rc1", "x0.5.3", "main", "1.0"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(since.check(json(text)).empty(), parse_release(text).has_value());
    json doc = toy;
    doc["grammars"][0]["since"] = text;
    EXPECT_EQ(load_profile(doc.dump(), "variant", files_in(kToy)).ok(), parse_release(text).has_value());
  }
  EXPECT_TRUE(since.check(json("")).empty());
}

class GrammarSchema : public testing::Test {
 protected:
  void SetUp() override {
    schema = read_json(kData + "grammar.schema.json");
    toy = read_json(kToy + "grammar-1.0.json");
    ASSERT_TRUE(schema.is_object()) << "data/grammar.schema.json is not a JSON object";
    ASSERT_TRUE(toy.is_object()) << "tests/fixtures/engines/toy/grammar-1.0.json is not a JSON object";
  }
  std::string flag(const std::string& name) const {
    const json& flags = toy["flags"];
    for (std::size_t i = 0; i < flags.size(); ++i)
      if (flags[i]["names"][0] == name) return "/flags/" + std::to_string(i);
    ADD_FAILURE() << "no flag " << name;
    return "/flags/0";
  }
  json schema, toy;
};

// The loader reads a grammar only through a profile: a one-grammar profile whose file is `grammar`.
Result<std::shared_ptr<const EngineProfile>> load_grammar(const json& grammar) {
  const json profile = {{"schema_version", 1}, {"engine", "g"}, {"title", "G"}, {"source", "test"},
                        {"launchers", json::array({{{"label", "g"}, {"program", "g"}, {"grammar", "g"}, {"source", "test"}}})},
                        {"grammars", json::array({{{"name", "g"}, {"file", "g.json"}}})}};
  return load_profile(profile.dump(), "grammar variant", files_in("/nonexistent/", {{"g.json", grammar.dump()}}));
}

TEST_F(GrammarSchema, DescribesTheGrammarInDraft2020) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_FALSE(schema.value("source", "").empty());
  EXPECT_GE(check_closed_and_described(schema), 2u);
  // Every built-in grammar names the schema first, as tools/profile/extract_argparse.py writes it.
  const auto grammars = engine_files("grammar-");
  EXPECT_GE(grammars.size(), 5u);
  for (const auto& file : grammars) {
    const std::string text = read_text(file);
    EXPECT_EQ(text.find("\"$schema\": \"../../grammar.schema.json\","), text.find('"')) << file;
  }
  EXPECT_NE(read_text(kSource + "/tools/profile/extract_argparse.py").find("\"$schema\": \"../../grammar.schema.json\""),
            std::string::npos);
}

TEST_F(GrammarSchema, TheBuiltInGrammarsAndTheToysConform) {
  SchemaChecker checker(schema);
  std::vector<std::string> files = engine_files("grammar-");
  files.push_back(kToy + "grammar-1.0.json");
  files.push_back(kToy + "grammar-2.0.json");
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const json doc = read_json(file);
    ASSERT_TRUE(doc.is_object());
    auto errors = checker.check(doc);
    EXPECT_TRUE(errors.empty()) << file << ":" << joined(errors);
    auto loaded = load_grammar(doc);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
  }
}

TEST_F(GrammarSchema, RejectsWhatTheLoaderRejects) {
  SchemaChecker checker(schema);
  const std::string weights = flag("--weights"), gpus = flag("--gpus"), kernel = flag("--attn-kernel");
  const std::vector<Variant> broken = {
      {"no source", "/source", nullptr},
      {"no flags", "/flags", nullptr},
      {"flags as an object", "/flags", json::object()},
      {"an unknown top-level key", "/parser", "x"},
      {"allow_abbrev as a string", "/allow_abbrev", "true"},
      {"complete as a number", "/complete", 0},
      {"add_help as null", "/add_help", nullptr, true},
      {"engine_version as a number", "/engine_version", 1.0},
      {"config_flag as a number", "/config_flag", 1},
      {"config_merge as a list", "/config_merge", json::array()},
      {"a positional", "/positionals", json::array({{{"dest", "model"}}})},
      {"positionals as null", "/positionals", nullptr, true},
      {"positionals as an object", "/positionals", json::object()},
      {"a flag that is a string", weights, "--weights"},
      {"a flag without names", weights + "/names", nullptr},
      {"empty names", weights + "/names", json::array()},
      {"a name without a dash", weights + "/names/0", "weights"},
      {"a lone dash", weights + "/names/1", "-"},
      {"an empty name", weights + "/names", ""},
      {"names as a number", weights + "/names", 1},
      {"a -h beside add_help", weights + "/names/1", "-h"},
      {"--help beside add_help", weights + "/names", "--help"},
      {"an unknown flag key", weights + "/metavar", "PATH"},
      {"dest as a number", weights + "/dest", 1},
      {"action as null", weights + "/action", nullptr, true},
      {"type as a number", weights + "/type", 1},
      {"nargs 2 as a string", gpus + "/nargs", "2"},
      {"nargs REMAINDER", gpus + "/nargs", "..."},
      {"nargs -1", gpus + "/nargs", -1},
      {"nargs above 1000", gpus + "/nargs", 1001},
      {"nargs as a float", gpus + "/nargs", 1.5},
      {"choices as a string", kernel + "/choices", "fast"},
      {"choices as an object", kernel + "/choices", json::object()},
      {"required as a string", weights + "/required", "yes"},
      {"deprecated as null", weights + "/deprecated", nullptr, true},
      {"removed as a number", weights + "/removed", 1},
      {"replacement as a number", weights + "/replacement", 1},
      {"deprecated_names as a number", weights + "/deprecated_names", 1},
      {"line -1", weights + "/line", -1},
      {"line above 10000000", weights + "/line", 10000001},
      {"line as a string", weights + "/line", "10"},
      {"line as a float", weights + "/line", 10.0},
  };
  const std::vector<Variant> fine = {
      {"any $schema", "/$schema", "../../grammar.schema.json"},
      {"no engine_version", "/engine_version", nullptr},
      {"informational top-level keys of any type", "/note", json::object({{"a", 1}})},
      {"extracted_by and prog", "/prog", 3},
      {"complete false", "/complete", false},
      {"config_flag null", "/config_flag", nullptr, true},
      {"config_merge null", "/config_merge", nullptr, true},
      {"no config_flag", "/config_flag", nullptr},
      {"empty positionals", "/positionals", json::array()},
      {"an empty flags list", "/flags", json::array()},
      {"--help when add_help is false", "/flags", json::array({{{"names", {"-h", "--help"}}, {"action", "help"}}})},
      {"names as one string", weights + "/names", "--weights"},
      {"a two-character name", weights + "/names", json::array({"-w", "--"})},
      {"an unknown action", weights + "/action", "MyAction"},
      {"type null", weights + "/type", nullptr, true},
      {"an unknown type", weights + "/type", "Path"},
      {"nargs null", gpus + "/nargs", nullptr, true},
      {"nargs 0", gpus + "/nargs", 0},
      {"nargs 1000", gpus + "/nargs", 1000},
      {"nargs ?", gpus + "/nargs", "?"},
      {"nargs *", gpus + "/nargs", "*"},
      {"choices null", kernel + "/choices", nullptr, true},
      {"choices of numbers", kernel + "/choices", json::array({1, 2.5, true})},
      {"default of any type", weights + "/default", json::array({1})},
      {"const of any type", weights + "/const", json::object()},
      {"help text", weights + "/help", "Path to the weights."},
      {"file", weights + "/file", "toy/args.py"},
      {"choices_expr", kernel + "/choices_expr", "KERNELS"},
      {"choices_unresolved", kernel + "/choices_unresolved", true},
      {"default_suppressed", weights + "/default_suppressed", true},
      {"help_suppressed", weights + "/help_suppressed", true},
      {"deprecated with a replacement", weights + "/replacement", "--model"},
      {"replacement null", weights + "/replacement", nullptr, true},
      {"removed", weights + "/removed", true},
      {"deprecated_names as one string", weights + "/deprecated_names", "-w"},
      {"line null", weights + "/line", nullptr, true},
      {"line 0", weights + "/line", 0},
  };
  for (const auto& v : broken) {
    SCOPED_TRACE(v.what);
    const json doc = apply(toy, v);
    EXPECT_FALSE(load_grammar(doc).ok()) << "the loader accepts it: not a broken variant";
    EXPECT_FALSE(checker.check(doc).empty()) << "the schema accepts it";
  }
  for (const auto& v : fine) {
    SCOPED_TRACE(v.what);
    json doc = apply(toy, v);
    if (std::string(v.what) == "--help when add_help is false") doc["add_help"] = false;
    auto loaded = load_grammar(doc);
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
  }
}

// Option strings declared twice (argparse refuses them) are the loader's check alone.
TEST_F(GrammarSchema, DuplicateOptionStringsAreTheLoadersAlone) {
  SchemaChecker checker(schema);
  for (const Variant& v : {Variant{"across flags", flag("--block") + "/names/0", "--weights"},
                           Variant{"within a flag", flag("--block") + "/names", json::array({"--block", "--block"})}}) {
    SCOPED_TRACE(v.what);
    const json doc = apply(toy, v);
    EXPECT_TRUE(checker.check(doc).empty()) << joined(checker.check(doc));
    EXPECT_FALSE(load_grammar(doc).ok());
  }
}

}  // namespace
}  // namespace attnsel
