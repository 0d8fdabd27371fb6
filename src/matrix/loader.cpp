// Reads a matrix JSON document into a Matrix, validating as it goes: types, unknown keys,
// names that must exist, scope rules of conditions, cyclic backend rewrites.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <tuple>
#include <map>

#include <fmt/format.h>

#include "attnsel/matrix.hpp"
#include "core/json_text.hpp"
#include "core/read_file.hpp"
#include "core/suggest.hpp"
#include "matrix/compose.hpp"
#include "matrix/embedded.hpp"
#include "matrix/image.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {

using detail::escape_pointer;
using detail::expect_int;
using detail::expect_string;
using detail::fail;
using detail::json;
using detail::ObjectReader;

inline constexpr int kSchemaVersion = 1;
inline constexpr int kMaxPageSize = 1 << 20;
inline constexpr int kMaxTopk = 1 << 16;

// Whether no compute capability falls in both lists of half-open ranges; an empty list covers every GPU.
bool disjoint_cc(const std::vector<VersionRange>& a, const std::vector<VersionRange>& b) {
  if (a.empty() || b.empty()) return false;
  for (const auto& x : a)
    for (const auto& y : b) {
      const bool x_below_y = x.max && y.min && !(*y.min < *x.max);  // x ends at or before y starts
      const bool y_below_x = y.max && x.min && !(*x.min < *y.max);
      if (!x_below_y && !y_below_x) return false;
    }
  return true;
}

class MatrixBuilder {
 public:
  explicit MatrixBuilder(Matrix& m) : m_(m) {}

  void build(const json& root, std::string_view origin) {
    m_.info_.origin = std::string(origin);
    ObjectReader r(root, "");
    r.get("$schema");
    if (const json* from = r.get("$composed_from")) m_.info_.extends = expect_string(*from, "/$composed_from");
    int schema = expect_int(r.require("schema_version"), "/schema_version", 0, 1000);
    if (schema != kSchemaVersion)
      fail("/schema_version", fmt::format("this attnsel reads schema_version {}, the file has {}", kSchemaVersion, schema));
    m_.info_.schema_version = schema;
    read_info(r.require("matrix"), "/matrix");
    read_slots(r.require("slots"), "/slots");
    // Backends before anything that names them.
    read_backends(r.require("backends"), "/backends");
    if (hybrid_page_json_) read_hybrid_page(*hybrid_page_json_, "/matrix/hybrid_page");  // its rules name backends
    if (const json* f = r.get("features")) read_features(*f, "/features");
    read_rules(r.require("rules"), "/rules");
    read_selection(r.require("selection"), "/selection");
    r.finish();
    check_rewrite_cycles();
    index();
    make_builtin_rules();
  }

 private:
  // ---- small readers ----

  template <class E>
  EnumSet<E> enum_set(const json& j, const std::string& ptr, std::optional<E> (*parse)(std::string_view),
                      std::string_view valid) {
    EnumSet<E> out;
    auto one = [&](const json& v, const std::string& p) {
      std::string s = expect_string(v, p);
      auto e = parse(s);
      if (!e) fail(p, fmt::format("unknown value \"{}\"; valid: {}", s, valid));
      out.insert(*e);
    };
    if (j.is_array()) {
      if (j.empty()) fail(ptr, "expected at least one value");
      for (std::size_t i = 0; i < j.size(); ++i) one(j[i], fmt::format("{}/{}", ptr, i));
    } else if (j.is_string()) {
      one(j, ptr);
    } else {
      fail(ptr, fmt::format("expected a string or an array of strings (valid: {}), got {}", valid, detail::type_name(j)));
    }
    return out;
  }

  static Version version(const json& j, const std::string& ptr) {
    std::string s = expect_string(j, ptr);
    auto v = parse_version(s);
    if (!v) fail(ptr, fmt::format("expected a version like \"9.0\" or \"12.8\", got \"{}\"", s));
    return *v;
  }

  static std::vector<VersionRange> ranges(const json& j, const std::string& ptr) {
    std::vector<VersionRange> out;
    auto one = [&](const json& v, const std::string& p) {
      ObjectReader r(v, p);
      VersionRange range;
      if (const json* lo = r.get("min")) range.min = version(*lo, r.child("min"));
      if (const json* hi = r.get("max")) range.max = version(*hi, r.child("max"));
      r.finish();
      if (!range.min && !range.max) fail(p, "a range needs \"min\", \"max\" or both");
      if (range.min && range.max && !(*range.min < *range.max))
        fail(p, fmt::format("empty range: min {} is not below max {} (ranges are half-open [min, max))",
                            to_string(*range.min), to_string(*range.max)));
      out.push_back(range);
    };
    if (j.is_array()) {
      if (j.empty()) fail(ptr, "expected at least one range");
      for (std::size_t i = 0; i < j.size(); ++i) one(j[i], fmt::format("{}/{}", ptr, i));
    } else {
      one(j, ptr);
    }
    return out;
  }

  static IntRange int_range(const json& j, const std::string& ptr, int max) {
    ObjectReader r(j, ptr);
    IntRange range;
    if (const json* lo = r.get("min")) range.min = expect_int(*lo, r.child("min"), 0, max);
    if (const json* hi = r.get("max")) range.max = expect_int(*hi, r.child("max"), 0, max);
    if (const json* m = r.get("multiple_of")) range.multiple_of = expect_int(*m, r.child("multiple_of"), 1, max);
    r.finish();
    if (!range.min && !range.max && range.multiple_of == 1) fail(ptr, "a range needs \"min\", \"max\" or \"multiple_of\"");
    if (range.min && range.max && *range.min >= *range.max)
      fail(ptr, "empty range: min must be below max (half-open [min, max))");
    return range;
  }

  static IntMatch int_match(const json& j, const std::string& ptr, int max) {
    IntMatch m;
    auto one = [&](const json& v, const std::string& at) {
      if (v.is_object()) m.ranges.push_back(int_range(v, at, max));
      else if (v.is_number_integer()) m.values.push_back(expect_int(v, at, 0, max));
      else fail(at, fmt::format("expected an integer or {{\"min\", \"max\", \"multiple_of\"}}, got {}", detail::type_name(v)));
    };
    if (j.is_array()) {
      if (j.empty()) fail(ptr, "expected at least one value");
      for (std::size_t i = 0; i < j.size(); ++i) one(j[i], fmt::format("{}/{}", ptr, i));
    } else if (j.is_number_integer() || j.is_object()) {
      one(j, ptr);
    } else {
      fail(ptr, fmt::format("expected an integer, {{\"min\", \"max\", \"multiple_of\"}} or an array of them, got {}",
                            detail::type_name(j)));
    }
    return m;
  }

  static bool boolean(const json& j, const std::string& ptr) {
    if (!j.is_boolean()) fail(ptr, fmt::format("expected true or false, got {}", detail::type_name(j)));
    return j.get<bool>();
  }

  static std::string required_source(ObjectReader& r) {
    std::string source = r.string("source");
    if (source.find_first_not_of(" \t") == std::string::npos)
      fail(r.child("source"), "every fact needs a source (the upstream document or code it comes from)");
    return source;
  }

  RuleInfo rule_info(ObjectReader& r, bool needs_message) {
    RuleInfo info;
    info.id = r.string("id");
    if (info.id.empty() || info.id.find_first_of(" \t\n") != std::string::npos)
      fail(r.child("id"), "a rule id is a non-empty word without spaces");
    if (const json* s = r.get("severity")) {
      std::string text = expect_string(*s, r.child("severity"));
      auto sev = parse_severity(text);
      if (!sev) fail(r.child("severity"), fmt::format("unknown severity \"{}\"; valid: info, warning, error", text));
      info.severity = *sev;
    }
    if (needs_message) info.message = r.string("message");
    else info.message = r.optional_string("message").value_or("");
    info.source = required_source(r);
    info.note = r.optional_string("note").value_or("");
    info.pointer = r.pointer();
    check_placeholders(info.message, r.child("message"));
    return info;
  }

  static void check_placeholders(const std::string& message, const std::string& ptr) {
    static const char* known[] = {"backend", "phase", "kind",  "gpu",     "cuda",     "kv_dtype", "topk", "page_size",
                                  "from",    "to",    "supported", "platform", "title", "model", "dtype", "detail"};
    for (std::size_t open = message.find('{'); open != std::string::npos; open = message.find('{', open + 1)) {
      auto close = message.find('}', open);
      if (close == std::string::npos) fail(ptr, "unbalanced '{' in message");
      std::string name = message.substr(open + 1, close - open - 1);
      if (std::find(std::begin(known), std::end(known), name) == std::end(known))
        fail(ptr, fmt::format("unknown placeholder {{{}}}; valid: backend, phase, kind, gpu, cuda, kv_dtype, topk, "
                              "page_size, from, to, supported, platform, title, model, dtype, detail",
                              name));
    }
  }

  // "triton" names the attention slot's backend; "linear:triton" another slot's.
  BackendId backend_ref(const std::string& text, const std::string& ptr, std::optional<SlotId> slot = std::nullopt) {
    std::string name = text;
    std::optional<SlotId> in = slot;
    if (auto colon = text.find(':'); colon != std::string::npos) {
      auto s = m_.find_slot(text.substr(0, colon));
      if (!s) fail(ptr, unknown_slot(text.substr(0, colon)));
      in = *s;
      name = text.substr(colon + 1);
    }
    SlotId sid = in.value_or(0);
    if (auto id = m_.find_backend(name, sid)) return *id;
    std::string hint = detail::closest_match(name, m_.backend_names(sid));
    fail(ptr, fmt::format("unknown backend \"{}\" in slot \"{}\"{}", detail::shorten(name, 64), m_.slots_[sid].name,
                          hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint)));
  }

  std::string unknown_slot(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& s : m_.slots_) names.push_back(s.name);
    std::string hint = detail::closest_match(name, names);
    return fmt::format("unknown slot \"{}\"{}; valid: {}", detail::shorten(name, 64),
                       hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint), fmt::join(names, ", "));
  }

  SlotId slot_ref(ObjectReader& r, const char* key) {
    std::string name = r.string(key);
    auto sid = m_.find_slot(name);
    if (!sid) fail(r.child(key), unknown_slot(name));
    return *sid;
  }

  BackendSet backend_set(const json& j, const std::string& ptr, SlotId slot) {
    BackendSet set;
    auto one = [&](const json& v, const std::string& p) { set.set(backend_ref(expect_string(v, p), p, slot)); };
    if (j.is_array()) {
      if (j.empty()) fail(ptr, "expected at least one backend");
      for (std::size_t i = 0; i < j.size(); ++i) one(j[i], fmt::format("{}/{}", ptr, i));
    } else {
      one(j, ptr);
    }
    return set;
  }

  // ---- conditions ----

  // Conditions nest (all/any/not); a matrix has no use for more than a few levels.
  static constexpr int kMaxConditionDepth = 32;

  Condition condition(const json& j, const std::string& ptr, RuleScope scope, SlotId slot = 0, int depth = 0) {
    if (depth > kMaxConditionDepth)
      fail(ptr, fmt::format("conditions nest deeper than {} levels", kMaxConditionDepth));
    ObjectReader r(j, ptr);
    Condition c;
    auto take = [&](const char* key, Condition::Field field) -> const json* {
      const json* v = r.get(key);
      if (v) c.fields |= field;
      return v;
    };
    if (auto v = take("backend", Condition::f_backend)) c.backend = backend_set(*v, r.child("backend"), slot);
    if (auto v = take("phase", Condition::f_phase)) c.phase = enum_set<Phase>(*v, r.child("phase"), parse_phase, "prefill, decode");
    if (auto v = take("prefill_backend", Condition::f_prefill_backend)) c.prefill_backend = backend_set(*v, r.child("prefill_backend"), slot);
    if (auto v = take("decode_backend", Condition::f_decode_backend)) c.decode_backend = backend_set(*v, r.child("decode_backend"), slot);
    if (auto v = take("any_backend", Condition::f_any_backend)) c.any_backend = backend_set(*v, r.child("any_backend"), slot);
    if (auto v = take("hybrid", Condition::f_hybrid)) c.hybrid = boolean(*v, r.child("hybrid"));
    if (auto v = take("kind", Condition::f_kind)) c.kind = enum_set<AttentionKind>(*v, r.child("kind"), parse_kind, kind_names());
    if (auto v = take("platform", Condition::f_platform))
      c.platform = enum_set<Platform>(*v, r.child("platform"), parse_platform, platform_names());
    if (auto v = take("cc", Condition::f_cc)) c.cc = ranges(*v, r.child("cc"));
    if (auto v = take("cuda", Condition::f_cuda)) c.cuda = ranges(*v, r.child("cuda"));
    if (auto v = take("kv_dtype", Condition::f_kv_dtype))
      c.kv_dtype = enum_set<KvCacheDtype>(*v, r.child("kv_dtype"), parse_kv_dtype, kv_dtype_names());
    if (auto v = take("dtype", Condition::f_dtype))
      c.dtype = enum_set<ComputeDtype>(*v, r.child("dtype"), parse_compute_dtype, compute_dtype_names());
    if (take("installed", Condition::f_installed)) {
      c.installed = r.strings("installed");
      if (c.installed.empty()) fail(r.child("installed"), "expected at least one package name");
    }
    if (auto v = take("topk", Condition::f_topk)) c.topk = int_match(*v, r.child("topk"), kMaxTopk);
    if (auto v = take("page_size", Condition::f_page_size)) c.page_size = int_match(*v, r.child("page_size"), kMaxPageSize);
    if (auto v = take("page_size_explicit", Condition::f_page_size_explicit))
      c.page_size_explicit = boolean(*v, r.child("page_size_explicit"));
    if (auto v = take("backend_explicit", Condition::f_backend_explicit))
      c.backend_explicit = boolean(*v, r.child("backend_explicit"));
    if (auto v = take("phase_flag", Condition::f_phase_flag)) c.phase_flag = boolean(*v, r.child("phase_flag"));
    if (auto v = take("replaced", Condition::f_replaced)) c.replaced = boolean(*v, r.child("replaced"));
    if (auto v = take("kv_dtype_explicit", Condition::f_kv_dtype_explicit))
      c.kv_dtype_explicit = boolean(*v, r.child("kv_dtype_explicit"));
    if (auto v = take("sliding_window", Condition::f_sliding_window)) c.sliding_window = boolean(*v, r.child("sliding_window"));
    if (auto v = take("multimodal", Condition::f_multimodal)) c.multimodal = boolean(*v, r.child("multimodal"));
    if (auto v = take("attention_sinks", Condition::f_attention_sinks))
      c.attention_sinks = boolean(*v, r.child("attention_sinks"));
    if (auto v = take("deterministic", Condition::f_deterministic)) c.deterministic = boolean(*v, r.child("deterministic"));
    if (auto v = take("radix_cache", Condition::f_radix_cache)) c.radix_cache = boolean(*v, r.child("radix_cache"));
    if (auto v = take("family", Condition::f_family)) {
      c.family = r.strings("family");
      (void)v;
    }
    if (take("architecture", Condition::f_architecture)) {
      c.architecture = r.strings("architecture");
      if (c.architecture.empty()) fail(r.child("architecture"), "expected at least one architecture name");
    }
    for (auto [key, field, keys] : {std::tuple{"config_has", Condition::f_config_has, &c.config_has},
                                    std::tuple{"config_lacks", Condition::f_config_lacks, &c.config_lacks}}) {
      if (!take(key, field)) continue;
      *keys = r.strings(key);
      if (keys->empty()) fail(r.child(key), "expected at least one config.json key");
    }
    if (take("kv_dtype_written", Condition::f_kv_dtype_written)) {
      c.kv_dtype_written = r.strings("kv_dtype_written");
      if (c.kv_dtype_written.empty()) fail(r.child("kv_dtype_written"), "expected at least one KV cache dtype as the engine spells it");
    }
    if (auto v = take("kv_heads", Condition::f_kv_heads)) c.kv_heads = int_match(*v, r.child("kv_heads"), 1 << 20);
    if (auto v = take("head_dim", Condition::f_head_dim)) c.head_dim = int_match(*v, r.child("head_dim"), 1 << 20);
    if (auto v = take("heads_per_rank", Condition::f_heads_per_rank))
      c.heads_per_rank = int_match(*v, r.child("heads_per_rank"), 1 << 20);
    if (auto v = take("speculative_attention_mode", Condition::f_spec_mode)) {
      std::string s = expect_string(*v, r.child("speculative_attention_mode"));
      auto p = parse_phase(s);
      if (!p) fail(r.child("speculative_attention_mode"), fmt::format("unknown value \"{}\"; valid: prefill, decode", s));
      c.spec_mode = *p;
    }
    auto nested_list = [&](const char* key, std::vector<Condition>& out) {
      const json* v = r.get(key);
      if (!v) return;
      if (!v->is_array() || v->empty()) fail(r.child(key), "expected a non-empty array of conditions");
      for (std::size_t i = 0; i < v->size(); ++i)
        out.push_back(condition((*v)[i], fmt::format("{}/{}", r.child(key), i), scope, slot, depth + 1));
    };
    nested_list("all", c.all);
    nested_list("any", c.any);
    if (const json* v = r.get("not")) c.none.push_back(condition(*v, r.child("not"), scope, slot, depth + 1));
    r.finish();

    const std::uint64_t used = c.uses();
    const std::uint64_t candidate = Condition::f_backend | Condition::f_phase | Condition::f_backend_explicit |
                                    Condition::f_phase_flag | Condition::f_replaced;
    // radix_cache is known in every scope: the user's flag after the request-scope rules so far
    // (plan rules may turn it off later, which only plan-scope conditions see).
    const std::uint64_t plan = Condition::f_prefill_backend | Condition::f_decode_backend | Condition::f_any_backend |
                               Condition::f_hybrid;
    if (scope == RuleScope::request && (used & (candidate | plan)))
      fail(ptr, "a request-scope condition cannot test backends, phases or the plan (use scope \"backend\" or \"plan\")");
    if (scope == RuleScope::backend && (used & plan))
      fail(ptr, "a backend-scope condition cannot test prefill_backend, decode_backend, any_backend or hybrid "
                "(use scope \"plan\")");
    return c;
  }

  // ---- sections ----

  void read_info(const json& j, const std::string& ptr) {
    ObjectReader r(j, ptr);
    m_.info_.engine = r.string("engine");
    if (m_.info_.engine.empty()) fail(r.child("engine"), "the engine name is empty");
    m_.info_.version = r.string("version");
    m_.info_.engine_version = r.string("engine_version");
    m_.info_.title = r.optional_string("title").value_or(m_.info_.engine);
    m_.info_.description = r.optional_string("description").value_or("");
    m_.info_.source = required_source(r);
    if (const json* p = r.get("default_page_size")) m_.default_page_size_ = expect_int(*p, r.child("default_page_size"), 1, kMaxPageSize);
    m_.info_.paged_kv_cache = r.boolean("paged_kv_cache", true);
    m_.info_.selection_checks_page_size = r.boolean("selection_checks_page_size", true);
    hybrid_page_json_ = r.get("hybrid_page");  // read once the backends are known
    if (auto models = r.optional_string("models")) {
      if (*models != "any") fail(r.child("models"), "the only value is \"any\" (the choice does not depend on the model)");
      m_.info_.any_model = true;
    }
    r.finish();
  }

  void read_hybrid_page(const json& j, const std::string& ptr) {
    ObjectReader r(j, ptr);
    HybridPagePolicy p;
    p.info = rule_info(r, true);
    if (const json* a = r.get("alignment")) p.alignment = expect_int(*a, r.child("alignment"), 1, kMaxPageSize);
    if (const json* rules = r.get("alignment_rules")) {
      const std::string list = r.child("alignment_rules");
      if (!rules->is_array() || rules->empty() || rules->size() > 16) fail(list, "expected an array of 1 to 16 rules");
      for (std::size_t i = 0; i < rules->size(); ++i) {
        ObjectReader rr((*rules)[i], fmt::format("{}/{}", list, i));
        HybridAlignmentRule rule;
        rule.when = condition(rr.require("when"), rr.child("when"), RuleScope::plan);
        rule.alignment = expect_int(rr.require("alignment"), rr.child("alignment"), 1, kMaxPageSize);
        rr.finish();
        p.alignment_rules.push_back(std::move(rule));
      }
    }
    p.alignment_from_backend = r.boolean("alignment_from_backend", false);
    p.align_to_block_size = r.boolean("align_to_block_size", false);
    p.only_given_block_size = r.boolean("only_given_block_size", false);
    p.before_selection = r.boolean("before_selection", false);
    if (r.has("float32_state_architectures")) p.float32_state_architectures = r.strings("float32_state_architectures");
    r.finish();
    m_.hybrid_page_ = std::move(p);
  }

  void read_slots(const json& j, const std::string& ptr) {
    if (!j.is_array() || j.empty()) fail(ptr, "expected a non-empty array of slots");
    if (j.size() > 8) fail(ptr, "at most 8 slots");
    for (std::size_t i = 0; i < j.size(); ++i) {
      ObjectReader r(j[i], fmt::format("{}/{}", ptr, i));
      Slot s;
      s.name = r.string("name");
      if (s.name.empty() || s.name.find_first_of(": \t") != std::string::npos)
        fail(r.child("name"), "a slot name is a non-empty word without ':' or spaces");
      if (m_.find_slot(s.name)) fail(r.child("name"), fmt::format("duplicate slot \"{}\"", s.name));
      s.title = r.optional_string("title").value_or(s.name);
      s.kinds = enum_set<AttentionKind>(r.require("kinds"), r.child("kinds"), parse_kind, kind_names());
      s.joint = r.boolean("joint", true);
      s.phased = r.boolean("phased", true);
      if (!s.phased && !s.joint) fail(r.child("phased"), "a slot without phases is joint");
      s.flag = r.optional_string("flag").value_or("");
      s.prefill_flag = r.optional_string("prefill_flag").value_or("");
      s.decode_flag = r.optional_string("decode_flag").value_or("");
      if (s.phased && (s.prefill_flag.empty() || s.decode_flag.empty()))
        fail(r.pointer(), "a phased slot needs \"prefill_flag\" and \"decode_flag\"");
      if (s.joint && s.flag.empty()) fail(r.pointer(), "a joint slot needs \"flag\" (it sets every phase)");
      s.flag_aliases = r.strings("flag_aliases");
      if (r.has("default")) pending_slot_defaults_.emplace_back(static_cast<SlotId>(m_.slots_.size()), r.string("default"), r.child("default"));
      if (const json* with = r.get("only_with")) read_only_with(*with, r.child("only_with"), s);
      if (const json* split = r.get("split_default")) {
        if (!s.phased || !s.joint) fail(r.child("split_default"), "only a joint slot with phases has a default for its phases named apart");
        ObjectReader sr(*split, r.child("split_default"));
        s.split_default = rule_info(sr, true);
        sr.finish();
      }
      s.source = required_source(r);
      r.finish();
      m_.slots_.push_back(std::move(s));
    }
  }

  // "only_with": {"slot": "attention", "backends": ["dsa"]}: the slot is planned only while that
  // earlier slot runs one of the backends (resolved once the backends are read).
  void read_only_with(const json& j, const std::string& ptr, Slot& s) {
    ObjectReader r(j, ptr);
    const std::string name = r.string("slot");
    const auto with = m_.find_slot(name);
    if (!with) {
      std::vector<std::string> earlier;
      for (const auto& slot : m_.slots_) earlier.push_back(slot.name);
      fail(r.child("slot"), fmt::format("\"{}\" is not an earlier slot (earlier: {})", detail::shorten(name, 64),
                                        earlier.empty() ? std::string("none") : fmt::format("{}", fmt::join(earlier, ", "))));
    }
    s.only_with_slot = *with;
    const json& backends = r.require("backends");
    if (!backends.is_array() || backends.empty()) fail(r.child("backends"), "expected a non-empty array of backend names");
    for (std::size_t i = 0; i < backends.size(); ++i) {
      const std::string at = fmt::format("{}/{}", r.child("backends"), i);
      if (!backends[i].is_string()) fail(at, "expected a backend name");
      pending_only_with_.emplace_back(static_cast<SlotId>(m_.slots_.size()), backends[i].get<std::string>(), at);
    }
    r.finish();
  }

  Cell cell(const json& j, const std::string& ptr, const std::string& backend_source) {
    ObjectReader r(j, ptr);
    Cell c;
    c.pointer = ptr;
    c.kinds = enum_set<AttentionKind>(r.require("kinds"), r.child("kinds"), parse_kind, kind_names());
    c.platforms = enum_set<Platform>(r.require("platforms"), r.child("platforms"), parse_platform, platform_names());
    if (const json* cc = r.get("compute_capability")) c.compute_capability = ranges(*cc, r.child("compute_capability"));
    if (const json* cu = r.get("min_cuda")) c.min_cuda = version(*cu, r.child("min_cuda"));
    c.phases = r.has("phases") ? enum_set<Phase>(r.require("phases"), r.child("phases"), parse_phase, "prefill, decode")
                               : EnumSet<Phase>{Phase::prefill, Phase::decode};
    const json& page = r.require("page_size");
    if (page.is_string()) {
      std::string mode = page.get<std::string>();
      if (mode == "any") c.page_size.mode = PageMode::any;
      else if (mode == "emulated") c.page_size.mode = PageMode::emulated;
      else fail(r.child("page_size"), fmt::format("expected \"any\", \"emulated\" or an array of sizes, got \"{}\"", mode));
    } else if (page.is_object()) {
      ObjectReader pr(page, r.child("page_size"));
      c.page_size.mode = PageMode::multiple;
      c.page_size.multiple_of = expect_int(pr.require("multiple_of"), pr.child("multiple_of"), 1, kMaxPageSize);
      pr.finish();
    } else if (page.is_array() && !page.empty()) {
      c.page_size.mode = PageMode::fixed;
      for (std::size_t i = 0; i < page.size(); ++i)
        c.page_size.sizes.push_back(expect_int(page[i], fmt::format("{}/{}", r.child("page_size"), i), 1, kMaxPageSize));
      std::sort(c.page_size.sizes.begin(), c.page_size.sizes.end());
    } else {
      fail(r.child("page_size"), fmt::format("expected \"any\", \"emulated\", {{\"multiple_of\": N}} or a non-empty array of sizes, got {}",
                                             detail::type_name(page)));
    }
    if (const json* p = r.get("preferred_page_size")) {
      c.preferred_page_size = expect_int(*p, r.child("preferred_page_size"), 1, kMaxPageSize);
      if (!c.page_size.allows(*c.preferred_page_size))
        fail(r.child("preferred_page_size"), "the preferred page size is not one the cell allows");
    }
    if (const json* h = r.get("head_sizes")) c.head_sizes = int_match(*h, r.child("head_sizes"), 1 << 20);
    c.kv_dtypes = enum_set<KvCacheDtype>(r.require("kv_dtypes"), r.child("kv_dtypes"), parse_kv_dtype, kv_dtype_names());
    if (const json* d = r.get("dtypes")) c.dtypes = enum_set<ComputeDtype>(*d, r.child("dtypes"), parse_compute_dtype, compute_dtype_names());
    c.requires_packages = r.strings("requires");
    std::string spec = r.string("speculative");
    if (spec == "none") c.speculative = TopkSupport::none;
    else if (spec == "topk1") c.speculative = TopkSupport::one;
    else if (spec == "topk>1 at page 1") c.speculative = TopkSupport::many_at_page1;
    else if (spec == "any") c.speculative = TopkSupport::any;
    else fail(r.child("speculative"), fmt::format("unknown value \"{}\"; valid: none, topk1, topk>1 at page 1, any", spec));
    for (int f = 0; f < kFeatureCount; ++f) c.features[f] = r.boolean(name_of(static_cast<Feature>(f)), false);
    c.source = r.optional_string("source").value_or(backend_source);
    c.note = r.optional_string("note").value_or("");
    r.finish();
    return c;
  }

  void read_backends(const json& j, const std::string& ptr) {
    if (!j.is_array() || j.empty()) fail(ptr, "expected a non-empty array of backends");
    if (j.size() > kMaxBackends) fail(ptr, fmt::format("at most {} backends", kMaxBackends));
    for (std::size_t i = 0; i < j.size(); ++i) {
      ObjectReader r(j[i], fmt::format("{}/{}", ptr, i));
      Backend b;
      b.pointer = r.pointer();
      b.name = r.string("name");
      if (b.name.empty() || b.name.find_first_of(": \t") != std::string::npos)
        fail(r.child("name"), "a backend name is a non-empty word without ':' or spaces");
      b.title = r.optional_string("title").value_or(b.name);
      b.slot = slot_ref(r, "slot");
      b.aliases = r.strings("aliases");
      std::vector<std::string> names = b.aliases;
      names.insert(names.begin(), b.name);
      for (const auto& n : names)
        if (m_.find_backend(n, b.slot))
          fail(r.child(n == b.name ? "name" : "aliases"),
               fmt::format("duplicate backend name \"{}\" in slot \"{}\"", n, m_.slots_[b.slot].name));
      b.source = required_source(r);
      b.note = r.optional_string("note").value_or("");
      if (const json* cfg = r.get("config")) read_config(*cfg, r.child("config"), b);
      const json& cells = r.require("cells");
      if (!cells.is_array() || cells.empty()) fail(r.child("cells"), "expected a non-empty array of cells");
      for (std::size_t k = 0; k < cells.size(); ++k) b.cells.push_back(cell(cells[k], fmt::format("{}/{}", r.child("cells"), k), b.source));
      // Two cells covering the same kind on the same platform would make the answer depend on order,
      // unless each names compute capability ranges and no GPU falls in both.
      for (std::size_t a = 0; a < b.cells.size(); ++a)
        for (std::size_t c = a + 1; c < b.cells.size(); ++c)
          if ((b.cells[a].kinds.bits() & b.cells[c].kinds.bits()) && (b.cells[a].platforms.bits() & b.cells[c].platforms.bits()) &&
              !disjoint_cc(b.cells[a].compute_capability, b.cells[c].compute_capability))
            fail(b.cells[c].pointer,
                 fmt::format("overlaps {} (same kind and platform, and compute capability ranges that share a GPU)",
                             b.cells[a].pointer));
      r.finish();
      m_.backends_.push_back(std::move(b));
    }
    for (const auto& [slot, name, p] : pending_slot_defaults_) m_.slots_[slot].sglang_default = backend_ref(name, p, slot);
    for (const auto& [slot, name, p] : pending_only_with_) {
      Slot& sl = m_.slots_[slot];
      const BackendId id = backend_ref(name, p, sl.only_with_slot);
      if (m_.backends_[id].slot != *sl.only_with_slot)
        fail(p, fmt::format("\"{}\" is not a backend of slot \"{}\"", detail::shorten(name, 64), m_.slots_[*sl.only_with_slot].name));
      if (std::find(sl.only_with.begin(), sl.only_with.end(), id) == sl.only_with.end()) sl.only_with.push_back(id);
    }
  }

  // A backend's --attention-backend-config parameters.
  static void read_config(const json& j, const std::string& ptr, Backend& b) {
    ObjectReader r(j, ptr);
    b.config_source = required_source(r);
    const json& params = r.require("parameters");
    if (!params.is_array() || params.empty()) fail(r.child("parameters"), "expected a non-empty array of parameters");
    for (std::size_t i = 0; i < params.size(); ++i) {
      ObjectReader p(params[i], fmt::format("{}/{}", r.child("parameters"), i));
      ConfigParam c;
      c.name = p.string("name");
      if (c.name.empty()) fail(p.child("name"), "a parameter name is not empty");
      for (const auto& other : b.config)
        if (other.name == c.name) fail(p.child("name"), fmt::format("duplicate parameter \"{}\"", c.name));
      const std::string type = p.string("type");
      if (type == "str") c.type = ConfigParam::Type::string;
      else if (type == "int") c.type = ConfigParam::Type::integer;
      else if (type == "float") c.type = ConfigParam::Type::number;
      else if (type == "bool") c.type = ConfigParam::Type::boolean;
      else if (type == "list[int]") c.type = ConfigParam::Type::int_list;
      else fail(p.child("type"), fmt::format("unknown type \"{}\"; valid: str, int, float, bool, list[int]", type));
      c.required = p.boolean("required", false);
      auto bound = [&](const char* key) -> std::optional<double> {
        const json* v = p.get(key);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(p.child(key), fmt::format("expected a number, got {}", detail::type_name(*v)));
        if (c.type != ConfigParam::Type::integer && c.type != ConfigParam::Type::number)
          fail(p.child(key), "only int and float parameters have bounds");
        return v->get<double>();
      };
      c.min = bound("min");
      c.max = bound("max");
      if (c.min && c.max && *c.min > *c.max) fail(p.pointer(), "min is above max");
      if (const json* d = p.get("default")) c.default_text = d->is_string() ? d->get<std::string>() : detail::json_text(*d);
      c.description = p.optional_string("description").value_or("");
      p.finish();
      b.config.push_back(std::move(c));
    }
    r.finish();
  }

  void read_features(const json& j, const std::string& ptr) {
    ObjectReader r(j, ptr);
    for (int f = 0; f < kFeatureCount; ++f) {
      const auto key = name_of(static_cast<Feature>(f));
      const json* v = r.get(key);
      if (!v) continue;
      ObjectReader fr(*v, r.child(key));
      FeatureRule rule;
      rule.info = rule_info(fr, true);
      for (const auto& other : m_.features_)
        if (other.info.id == rule.info.id) fail(fr.child("id"), fmt::format("duplicate rule id \"{}\"", rule.info.id));
      rule.when = condition(fr.require("when"), fr.child("when"), RuleScope::request);
      if (fr.has("slots")) {
        rule.slots = 0;
        for (const auto& name : fr.strings("slots")) {
          auto sid = m_.find_slot(name);
          if (!sid) fail(fr.child("slots"), unknown_slot(name));
          rule.slots |= 1u << *sid;
        }
      }
      fr.finish();
      m_.feature_index_[f] = m_.features_.size();
      m_.features_.push_back(std::move(rule));
    }
    r.finish();
  }

  void read_rules(const json& j, const std::string& ptr) {
    if (!j.is_array()) fail(ptr, "expected an array of rules");
    std::map<std::string, std::string> seen;
    for (const auto& f : m_.features_) seen.emplace(f.info.id, f.info.pointer);
    for (std::size_t i = 0; i < j.size(); ++i) {
      ObjectReader r(j[i], fmt::format("{}/{}", ptr, i));
      Rule rule;
      std::string scope = r.optional_string("scope").value_or("backend");
      if (scope == "request") rule.scope = RuleScope::request;
      else if (scope == "backend") rule.scope = RuleScope::backend;
      else if (scope == "plan") rule.scope = RuleScope::plan;
      else fail(r.child("scope"), fmt::format("unknown scope \"{}\"; valid: request, backend, plan", scope));
      if (r.has("slot")) {
        rule.slot = slot_ref(r, "slot");
        if (rule.scope != RuleScope::backend) fail(r.child("slot"), "only backend-scope rules name a slot");
      }
      rule.info = rule_info(r, true);
      if (auto [it, fresh] = seen.emplace(rule.info.id, r.pointer()); !fresh)
        fail(r.child("id"), fmt::format("duplicate rule id \"{}\" (first at {})", rule.info.id, it->second));
      rule.when = condition(r.require("when"), r.child("when"), rule.scope, rule.slot);
      if (const json* s = r.get("set")) rule.set = effect(*s, r.child("set"), rule);
      rule.strict_error = r.boolean("strict", false);
      if (rule.strict_error && rule.info.severity != Severity::warning)
        fail(r.child("strict"), "only a warning can be made strict");
      r.finish();
      m_.rules_.push_back(std::move(rule));
    }
  }

  Effect effect(const json& j, const std::string& ptr, const Rule& rule) {
    ObjectReader r(j, ptr);
    Effect e;
    if (const json* p = r.get("page_size")) e.page_size = expect_int(*p, r.child("page_size"), 1, kMaxPageSize);
    if (const json* b = r.get("backend")) {
      if (rule.scope != RuleScope::backend || !(rule.when.fields & Condition::f_backend))
        fail(r.child("backend"), "a backend rewrite needs scope \"backend\" and a \"when\" that names the backend it replaces");
      std::string text = expect_string(*b, r.child("backend"));
      // The replacement lives in the slot of the backends it replaces.
      SlotId slot = 0;
      for (BackendId id = 0; id < m_.backends_.size(); ++id)
        if (rule.when.backend.test(id)) slot = m_.backends_[id].slot;
      e.backend = backend_ref(text, r.child("backend"), slot);
    }
    // A request-scope change of one enumerated value: the KV dtype, the compute dtype, the attention kind.
    const auto request_value = [&](const char* key, auto parse, std::string_view valid) {
      const json* v = r.get(key);
      if (!v) return decltype(parse(std::string_view{})){};
      std::string text = expect_string(*v, r.child(key));
      auto value = parse(text);
      if (!value) fail(r.child(key), fmt::format("unknown value \"{}\"; valid: {}", text, valid));
      if (rule.scope != RuleScope::request) fail(r.child(key), fmt::format("a {} change needs scope \"request\"", key));
      return value;
    };
    e.kv_dtype = request_value("kv_dtype", parse_kv_dtype, kv_dtype_names());
    e.dtype = request_value("dtype", parse_compute_dtype, compute_dtype_names());
    e.kind = request_value("kind", parse_kind, kind_names());
    if (const json* t = r.get("topk")) {
      if (rule.scope != RuleScope::request) fail(r.child("topk"), "a topk change needs scope \"request\"");
      e.topk = expect_int(*t, r.child("topk"), 1, kMaxTopk);
    }
    if (e.kv_dtype && e.dtype) fail(r.child("dtype"), "a rule changes one dtype: kv_dtype or dtype, not both (its finding reports one change)");
    if (e.topk && (e.kv_dtype || e.dtype))
      fail(r.child("topk"), "a rule changes one value: topk, kv_dtype or dtype (its finding reports one change)");
    if (const json* ig = r.get("ignored")) {
      if (!boolean(*ig, r.child("ignored"))) fail(r.child("ignored"), "only true is meaningful");
      if (rule.scope != RuleScope::backend || !(rule.when.fields & Condition::f_backend) ||
          !(rule.when.fields & Condition::f_backend_explicit) || !rule.when.backend_explicit)
        fail(r.child("ignored"),
             "an ignored choice needs scope \"backend\" and a \"when\" that names the backend and has \"backend_explicit\": true");
      e.ignore_choice = true;
    }
    if (const json* rc = r.get("radix_cache")) {
      if (boolean(*rc, r.child("radix_cache"))) fail(r.child("radix_cache"), "only false (disable) is meaningful");
      // Request scope: before the candidates are judged (rules that test radix_cache see it); plan scope: after.
      if (rule.scope == RuleScope::backend)
        fail(r.child("radix_cache"), "a radix_cache change needs scope \"request\" or \"plan\"");
      e.disable_radix_cache = true;
    }
    r.finish();
    if (!e.any()) fail(ptr, "\"set\" needs at least one of page_size, backend, kv_dtype, dtype, topk, radix_cache, ignored, kind");
    if (e.page_size && rule.scope != RuleScope::backend) fail(r.child("page_size"), "a page_size rewrite needs scope \"backend\"");
    return e;
  }

  void read_selection(const json& j, const std::string& ptr) {
    if (!j.is_array()) fail(ptr, "expected an array of selection entries");
    std::map<std::string, std::string> seen;
    for (const auto& rule : m_.rules_) seen.emplace(rule.info.id, rule.info.pointer);
    for (const auto& f : m_.features_) seen.emplace(f.info.id, f.info.pointer);
    for (std::size_t i = 0; i < j.size(); ++i) {
      ObjectReader r(j[i], fmt::format("{}/{}", ptr, i));
      SelectionEntry e;
      if (r.has("severity")) fail(r.child("severity"), "selection entries have no severity (they choose, they do not judge)");
      e.info = rule_info(r, false);
      e.info.severity = Severity::info;
      if (auto [it, fresh] = seen.emplace(e.info.id, r.pointer()); !fresh)
        fail(r.child("id"), fmt::format("duplicate rule id \"{}\" (first at {})", e.info.id, it->second));
      e.slot = slot_ref(r, "slot");
      const std::string& slot = m_.slots_[e.slot].name;
      e.phases = r.has("phases") ? enum_set<Phase>(r.require("phases"), r.child("phases"), parse_phase, "prefill, decode")
                                 : EnumSet<Phase>{Phase::prefill, Phase::decode};
      if (m_.slots_[e.slot].joint && e.phases != EnumSet<Phase>{Phase::prefill, Phase::decode})
        fail(r.child("phases"), fmt::format("slot \"{}\" is joint: its entries decide every phase", slot));
      e.when = r.has("when") ? condition(r.require("when"), r.child("when"), RuleScope::request, e.slot) : Condition{};
      if (r.has("backend") == r.has("backends"))
        fail(r.pointer(), "a selection entry names its choice in \"backend\" or its priority list in \"backends\" (one of them)");
      if (r.has("backend")) {
        e.backends.push_back(backend_ref(r.string("backend"), r.child("backend"), e.slot));
      } else {
        const json& list = r.require("backends");
        if (!list.is_array() || list.empty()) fail(r.child("backends"), "expected a non-empty array of backends, in priority order");
        for (std::size_t k = 0; k < list.size(); ++k) {
          const std::string at = fmt::format("{}/{}", r.child("backends"), k);
          const BackendId b = backend_ref(expect_string(list[k], at), at, e.slot);
          if (std::find(e.backends.begin(), e.backends.end(), b) != e.backends.end())
            fail(at, fmt::format("\"{}\" is listed twice", m_.backends_[b].name));
          e.backends.push_back(b);
        }
      }
      e.backend = e.backends.front();
      r.finish();
      m_.selection_.push_back(std::move(e));
    }
  }

  // fa3 -> triton -> fa3 would loop forever in SGLang too; refuse it here.
  void check_rewrite_cycles() {
    const std::size_t n = m_.backends_.size();
    std::vector<std::vector<std::pair<BackendId, const Rule*>>> edges(n);
    for (const auto& rule : m_.rules_) {
      if (!rule.set.backend) continue;
      for (BackendId from = 0; from < n; ++from)
        if (rule.when.backend.test(from)) {
          if (from == *rule.set.backend) fail(rule.info.pointer, fmt::format("rule \"{}\" rewrites {} to itself", rule.info.id, m_.backends_[from].name));
          edges[from].emplace_back(*rule.set.backend, &rule);
        }
    }
    std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<BackendId> path;
    std::function<void(BackendId)> visit = [&](BackendId v) {
      state[v] = 1;
      path.push_back(v);
      for (const auto& [to, rule] : edges[v]) {
        if (state[to] == 1) {
          std::string cycle;
          for (auto it = std::find(path.begin(), path.end(), to); it != path.end(); ++it) cycle += m_.backends_[*it].name + " -> ";
          fail(rule->info.pointer, fmt::format("backend rewrites form a cycle: {}{} (closed by rule \"{}\")", cycle,
                                               m_.backends_[to].name, rule->info.id));
        }
        if (state[to] == 0) visit(to);
      }
      path.pop_back();
      state[v] = 2;
    };
    for (BackendId v = 0; v < n; ++v)
      if (state[v] == 0) visit(v);
  }

  void index() {
    m_.by_backend_.assign(m_.backends_.size(), {});
    for (const auto& rule : m_.rules_) {
      m_.rule_fields_ |= rule.when.uses();
      m_.by_scope_[static_cast<int>(rule.scope)].push_back(&rule);
      if (rule.scope != RuleScope::backend) continue;
      for (BackendId id = 0; id < m_.backends_.size(); ++id) {
        if (m_.backends_[id].slot != rule.slot) continue;
        if (!(rule.when.fields & Condition::f_backend) || rule.when.backend.test(id)) m_.by_backend_[id].push_back(&rule);
      }
    }
  }

  void make_builtin_rules() {
    auto add = [&](const char* id, Severity severity, std::string message) {
      RuleInfo info;
      info.id = id;
      info.severity = severity;
      info.message = std::move(message);
      info.source = "attnsel engine: the backend's cell in the matrix";
      m_.builtin_.push_back(std::move(info));
    };
    // Order matches BuiltinRule.
    add("cell.kind", Severity::error, "{title} has no implementation for {kind} models");
    add("cell.platform", Severity::error, "{title} does not run on {platform}");
    add("cell.compute-capability", Severity::error, "{title} needs compute capability {supported}; this GPU is {gpu}");
    add("cell.cuda", Severity::error, "{title} needs CUDA {supported} or newer; this setup has CUDA {cuda}");
    add("cell.phase", Severity::error, "{title} cannot run the {phase} phase (it runs: {supported})");
    add("cell.kv-dtype", Severity::error, "{title} does not support KV cache dtype {kv_dtype} (supported: {supported})");
    add("cell.page-size", Severity::error, "{title} runs only with page size {supported}; page size {page_size} was asked for");
    add("cell.speculative", Severity::error,
        "{title} does not support speculative decoding with --speculative-eagle-topk {topk} (it supports: {supported})");
    add("cell.unknown-device", Severity::error,
        "{title} needs compute capability {supported}, and this GPU's compute capability is unknown");
    add("cell.dtype", Severity::error, "{title} does not run models in {dtype} (it runs: {supported})");
    add("cell.requires", Severity::error, "{title} needs the Python package '{detail}', which is not installed");
    add("cell.requires-unknown", Severity::warning,
        "{title} needs the Python package '{detail}'; attnsel cannot tell whether it is installed (pass --installed)");
    add("cell.head-size", Severity::error, "{title} does not support head size {detail} (it supports: {supported})");
    add("select.no-backend", Severity::error, "no {title} backend in the matrix can run this configuration (see rejected)");
    const std::string& engine = m_.info_.title;
    add("select.default-fails", Severity::warning,
        fmt::format("{}'s automatic choice here is {{from}}, which cannot run this configuration (see rejected); the plan "
                    "uses {{to}} and passes it explicitly", engine));
    add("select.slot-unused", Severity::warning, "{title} is not run: {detail}");
    add("page.conflict", Severity::error, "no single page size satisfies every chosen backend ({supported})");
    add("page.rewrite-conflict", Severity::error,
        fmt::format("{} would force page size {{from}} for one backend and {{to}} for another: they cannot run together", engine));
    add("config.unused", Severity::warning, "{title} takes no --attention-backend-config: it is ignored");
    add("config.unknown-key", Severity::error, "{title} has no config parameter '{detail}' (it takes: {supported})");
    add("config.type", Severity::error, "config parameter {detail}");
    add("config.range", Severity::error, "config parameter {detail}");
    add("config.required", Severity::error, "{title} needs the config parameter '{detail}' (--attention-backend-config {detail}=...)");
    for (auto& r : m_.builtin_) r.pointer = "";
  }

  Matrix& m_;
  const json* hybrid_page_json_ = nullptr;  // matrix.hybrid_page, read after the backends
  std::vector<std::tuple<SlotId, std::string, std::string>> pending_slot_defaults_;
  std::vector<std::tuple<SlotId, std::string, std::string>> pending_only_with_;
};

// ---- Matrix members ----

bool IntRange::matches(int v) const {
  return (!min || v >= *min) && (!max || v < *max) && v % multiple_of == 0;
}

bool IntMatch::matches(int v) const {
  return std::find(values.begin(), values.end(), v) != values.end() ||
         std::any_of(ranges.begin(), ranges.end(), [v](const IntRange& r) { return r.matches(v); });
}

bool PageSupport::allows(int page_size) const {
  switch (mode) {
    case PageMode::fixed:
      return std::find(sizes.begin(), sizes.end(), page_size) != sizes.end();
    case PageMode::multiple:
      return page_size % multiple_of == 0;
    case PageMode::any:
    case PageMode::emulated:
      break;
  }
  return true;
}

std::uint64_t Condition::uses() const {
  std::uint64_t u = fields;
  for (const auto& c : all) u |= c.uses();
  for (const auto& c : any) u |= c.uses();
  for (const auto& c : none) u |= c.uses();
  return u;
}

std::string_view name_of(TopkSupport t) {
  switch (t) {
    case TopkSupport::none: return "none";
    case TopkSupport::one: return "topk1";
    case TopkSupport::many_at_page1: return "topk>1 at page 1";
    case TopkSupport::any: return "any";
  }
  return "?";
}

std::string_view name_of(ConfigParam::Type t) {
  switch (t) {
    case ConfigParam::Type::string: return "str";
    case ConfigParam::Type::integer: return "int";
    case ConfigParam::Type::number: return "float";
    case ConfigParam::Type::boolean: return "bool";
    case ConfigParam::Type::int_list: return "list[int]";
  }
  return "?";
}

std::string_view name_of(Feature f) {
  switch (f) {
    case Feature::sliding_window: return "sliding_window";
    case Feature::multimodal: return "multimodal";
    case Feature::attention_sinks: return "attention_sinks";
    case Feature::chunked_prefix_cache: return "chunked_prefix_cache";
  }
  return "?";
}

const FeatureRule* Matrix::feature_rule(Feature f) const {
  const auto& i = feature_index_[static_cast<int>(f)];
  return i ? &features_[*i] : nullptr;
}

std::optional<BackendId> Matrix::find_backend(std::string_view name, SlotId slot) const {
  for (BackendId id = 0; id < backends_.size(); ++id) {
    const auto& b = backends_[id];
    if (b.slot != slot) continue;
    if (b.name == name || std::find(b.aliases.begin(), b.aliases.end(), name) != b.aliases.end()) return id;
  }
  return std::nullopt;
}

std::optional<BackendId> Matrix::find_backend(std::string_view name) const { return find_backend(name, 0); }

std::optional<SlotId> Matrix::find_slot(std::string_view name) const {
  for (SlotId id = 0; id < slots_.size(); ++id)
    if (slots_[id].name == name) return id;
  return std::nullopt;
}

std::vector<std::string> Matrix::backend_names(SlotId slot) const {
  std::vector<std::string> out;
  for (const auto& b : backends_)
    if (b.slot == slot) out.push_back(b.name);
  return out;
}

const Cell* Matrix::cell_for(BackendId id, AttentionKind kind, Platform platform,
                             std::optional<ComputeCapability> cc) const {
  const Cell* first = nullptr;
  for (const auto& c : backends_[id].cells) {
    if (!c.kinds.contains(kind) || !c.platforms.contains(platform)) continue;
    if (!cc || c.compute_capability.empty()) return &c;
    if (std::any_of(c.compute_capability.begin(), c.compute_capability.end(),
                    [&](const VersionRange& r) { return r.contains(*cc); }))
      return &c;
    if (!first) first = &c;
  }
  return first;
}

const Rule* Matrix::find_rule(std::string_view id) const {
  for (const auto& r : rules_)
    if (r.info.id == id) return &r;
  return nullptr;
}

// ---- loading ----

Result<std::shared_ptr<const Matrix>> load_matrix(std::string_view json_text, std::string_view origin) {
  auto parsed = detail::parse_json(json_text, origin);
  if (!parsed) return parsed.error();
  const std::string where(origin);
  auto composed = detail::compose(std::move(*parsed), where, detail::default_resolver());
  if (!composed) return composed.error();
  // Messages about a composed matrix name the overlay and its base.
  const bool extended = composed->contains("$composed_from");
  const std::string named = extended ? fmt::format("{} (extending {})", where, (*composed)["$composed_from"].get<std::string>()) : where;
  auto matrix = std::make_shared<Matrix>();
  try {
    MatrixBuilder(*matrix).build(*composed, origin);
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", named, e.pointer.empty() ? "/" : e.pointer), {}, {}};
  }
  return std::shared_ptr<const Matrix>(std::move(matrix));
}

Result<std::shared_ptr<const Matrix>> load_matrix_file(const std::string& path) {
  // A matrix is a few hundred KiB: regular files only, at most 64 MiB (not /dev/zero, not a FIFO).
  auto text = detail::read_file_bounded(path);
  if (!text) return text.error();
  return load_matrix(*text, path);
}

Result<std::shared_ptr<const Matrix>> builtin_matrix() {
  auto generations = builtin_generations();
  if (!generations) return generations.error();
  for (const auto& g : *generations)
    if (g.default_engine) return builtin_matrix(g.engine);
  return Error{ErrorCode::invalid_matrix, "no engine's generations.json is the default", "built-in:engines/", {}, {}};
}

Result<MatrixInfo> builtin_matrix_info() {
  auto generations = builtin_generations();
  if (!generations) return generations.error();
  const auto is_default = [](const MatrixGeneration& g) { return g.default_engine; };
  const auto def = std::find_if(generations->begin(), generations->end(), is_default);
  if (def == generations->end())
    return Error{ErrorCode::invalid_matrix, "no engine's generations.json is the default", "built-in:engines/", {}, {}};
  // As builtin_matrix(engine): generations are listed oldest first, so the engine's last is its newest.
  const MatrixGeneration* newest = nullptr;
  for (const auto& g : *generations)
    if (g.engine == def->engine) newest = &g;
  if (auto info = image::matrix_info(newest->file)) return *std::move(info);
  auto m = builtin_matrix_file(newest->file);
  if (!m) return m.error();
  return (*m)->info();
}

}  // namespace attnsel
