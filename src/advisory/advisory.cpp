// Loading advisories: data/engines/<engine>/advisories.json read strictly (every key known, every
// error with its JSON pointer), and the cross-checks docs/advisories.md lists that a schema cannot
// make (ids in file order, engine, range order, evidence among the links).
#include "attnsel/advisory.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "matrix/embedded.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {

const std::string& Advisory::link() const {
  static const std::string none;
  if (!issues.empty()) return issues.front();
  if (!fix.empty()) return fix.front();
  if (!related.empty()) return related.front();
  return none;
}

bool Advisory::severe() const {
  return effect == "crash" || effect == "refuses-to-start" || effect == "wrong-output" || effect == "hang";
}

namespace {

using detail::fail;
using detail::json;
using detail::ObjectReader;

const std::set<std::string, std::less<>> kEffects = {"crash", "refuses-to-start", "wrong-output",
                                                     "silent-slowdown", "hang", "oom"};
const std::set<std::string, std::less<>> kStatuses = {"fixed", "mitigated", "open"};
const std::set<std::string, std::less<>> kPlatforms = {"cuda", "rocm", "npu", "xpu", "cpu"};

std::string prefix_of(std::string_view engine) {
  if (engine == "sglang") return "SGL";
  std::string p(engine);
  for (char& c : p) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return p;
}

std::string one_of(ObjectReader& r, std::string_view key, const std::set<std::string, std::less<>>& valid) {
  std::string v = r.string(key);
  if (!valid.count(v)) {
    std::string list;
    for (const auto& s : valid) list += (list.empty() ? "" : ", ") + s;
    fail(r.child(key), fmt::format("'{}' is not one of: {}", detail::shorten(v, 60), list));
  }
  return v;
}

std::optional<ReleaseVersion> release_of(ObjectReader& r, std::string_view key, std::string& text) {
  const json* j = r.get(key);
  if (!j || j->is_null()) return std::nullopt;
  text = detail::expect_string(*j, r.child(key));
  auto v = parse_release(text);
  if (!v) fail(r.child(key), fmt::format("'{}' is not a release like 0.5.9 or 0.25.1", detail::shorten(text, 60)));
  return v;
}

std::vector<AdvisoryCondition> conditions(ObjectReader& r, std::string_view key, std::string_view name_key) {
  std::vector<AdvisoryCondition> out;
  const json* list = r.get(key);
  if (!list || list->is_null()) return out;
  if (!list->is_array()) fail(r.child(key), fmt::format("expected an array, got {}", detail::type_name(*list)));
  for (std::size_t i = 0; i < list->size(); ++i) {
    ObjectReader c((*list)[i], r.child(key) + "/" + std::to_string(i));
    AdvisoryCondition cond;
    cond.name = c.string(name_key);
    if (auto v = c.optional_string("value")) cond.values.push_back(*v);
    if (c.has("values")) {
      auto vs = c.strings("values");
      cond.values.insert(cond.values.end(), vs.begin(), vs.end());
    }
    if (const json* m = c.get("min")) {
      if (!m->is_number()) fail(c.child("min"), fmt::format("expected a number, got {}", detail::type_name(*m)));
      cond.min = m->get<double>();
    }
    cond.absent = c.boolean("absent", false);
    cond.note = c.optional_string("note").value_or("");
    if (c.has("value") && c.has("values")) fail(c.pointer(), "value and values together: give one");
    if (cond.absent && (!cond.values.empty() || cond.min))
      fail(c.pointer(), "an absent condition takes no value, values or min");
    c.finish();
    out.push_back(std::move(cond));
  }
  return out;
}

std::vector<std::string> optional_strings(ObjectReader& r, std::string_view key) {
  const json* j = r.get(key);
  if (!j || j->is_null()) return {};
  std::vector<std::string> out;
  if (!j->is_array()) fail(r.child(key), fmt::format("expected an array of strings, got {}", detail::type_name(*j)));
  for (std::size_t i = 0; i < j->size(); ++i)
    out.push_back(detail::expect_string((*j)[i], r.child(key) + "/" + std::to_string(i)));
  return out;
}

bool github_thread(std::string_view url) {
  constexpr std::string_view kPrefix = "https://github.com/";
  if (url.substr(0, kPrefix.size()) != kPrefix) return false;
  return url.find("/issues/") != std::string_view::npos || url.find("/pull/") != std::string_view::npos;
}

Advisory read_advisory(const json& j, const std::string& pointer, const std::string& engine, std::size_t index) {
  ObjectReader r(j, pointer);
  Advisory a;
  r.get("$comment");
  a.id = r.string("id");
  const std::string want = fmt::format("{}-ADV-{:04}", prefix_of(engine), index + 1);
  if (a.id != want)
    fail(r.child("id"), fmt::format("'{}' is out of order: advisories are numbered in file order, this one is {}",
                                    detail::shorten(a.id, 40), want));
  a.engine = r.string("engine");
  if (a.engine != engine) fail(r.child("engine"), fmt::format("'{}' in the file of engine {}", a.engine, engine));
  a.title = r.string("title");
  a.status = one_of(r, "status", kStatuses);
  a.effect = one_of(r, "effect", kEffects);
  r.require("introduced");  // null when unknown, but never left out
  r.require("fixed");
  a.introduced = release_of(r, "introduced", a.introduced_text);
  a.fixed = release_of(r, "fixed", a.fixed_text);
  if (a.introduced && a.fixed && *a.fixed < *a.introduced)
    fail(r.child("fixed"), fmt::format("fixed {} is before introduced {}", a.fixed_text, a.introduced_text));
  if (const json* f = r.get("fix_merged"); f && !f->is_null()) a.fix_merged = detail::expect_string(*f, r.child("fix_merged"));
  if (const json* n = r.get("range_note"); n && !n->is_null()) a.range_note = detail::expect_string(*n, r.child("range_note"));
  a.likely_main_only = r.boolean("likely_main_only", false);
  a.affected_reported = optional_strings(r, "affected_reported");
  if (auto rt = r.optional_string("runtime")) {
    if (*rt != "llm" && *rt != "diffusion") fail(r.child("runtime"), fmt::format("'{}' is not llm or diffusion", *rt));
    a.runtime = *rt;
  }
  if (const json* p = r.get("platform"); p && !p->is_null()) {
    a.platform = detail::expect_string(*p, r.child("platform"));
    if (!kPlatforms.count(a.platform))
      fail(r.child("platform"), fmt::format("'{}' is not one of: cpu, cuda, npu, rocm, xpu", a.platform));
  }
  a.gpus = optional_strings(r, "gpus");
  a.backends = optional_strings(r, "backends");
  a.kv_cache_dtypes = optional_strings(r, "kv_cache_dtype");
  for (std::size_t i = 0; i < a.kv_cache_dtypes.size(); ++i)
    if (const auto d = parse_kv_dtype(a.kv_cache_dtypes[i]); !d || name_of(*d) != a.kv_cache_dtypes[i])
      fail(r.child("kv_cache_dtype") + "/" + std::to_string(i),
           fmt::format("'{}' is not a canonical KV dtype ({})", detail::shorten(a.kv_cache_dtypes[i], 40),
                       kv_dtype_names()));
  a.model_families = optional_strings(r, "model_families");
  a.architectures = optional_strings(r, "architectures");
  a.model_traits = optional_strings(r, "model_traits");
  a.models = optional_strings(r, "models");
  a.flags = conditions(r, "flags", "flag");
  for (std::size_t i = 0; i < a.flags.size(); ++i)
    if (a.flags[i].name.rfind("-", 0) != 0)
      fail(fmt::format("{}/flags/{}/flag", pointer, i), fmt::format("'{}' is no flag (--name)", a.flags[i].name));
  a.env = conditions(r, "env", "name");
  a.summary = r.string("summary");
  a.workaround = r.optional_string("workaround").value_or("");
  if (const json* n = r.get("notes"); n && !n->is_null()) a.notes = detail::expect_string(*n, r.child("notes"));
  {
    ObjectReader links(r.require("links"), r.child("links"));
    a.issues = optional_strings(links, "issues");
    a.fix = optional_strings(links, "fix");
    a.related = optional_strings(links, "related");
    links.finish();
    for (const auto* list : {&a.issues, &a.fix, &a.related})
      for (const std::string& url : *list)
        if (!github_thread(url))
          fail(r.child("links"), fmt::format("'{}' is not a GitHub issue or pull request URL", detail::shorten(url, 80)));
  }
  if (a.fix.empty() && a.status != "open")
    fail(r.child("status"), fmt::format("'{}' without a fix link: an advisory without one is open", a.status));
  const json& ev = r.require("evidence");
  if (!ev.is_array() || ev.empty()) fail(r.child("evidence"), "expected a non-empty array");
  for (std::size_t i = 0; i < ev.size(); ++i) {
    ObjectReader e(ev[i], r.child("evidence") + "/" + std::to_string(i));
    AdvisoryEvidence item;
    item.url = e.string("url");
    item.who = e.optional_string("who").value_or("");
    item.date = e.optional_string("date").value_or("");
    item.text = e.string("text");
    e.finish();
    const bool linked = std::count(a.issues.begin(), a.issues.end(), item.url) ||
                        std::count(a.fix.begin(), a.fix.end(), item.url) ||
                        std::count(a.related.begin(), a.related.end(), item.url);
    if (!linked) fail(e.child("url"), fmt::format("'{}' is not one of the advisory's links", detail::shorten(item.url, 80)));
    a.evidence.push_back(std::move(item));
  }
  r.finish();
  return a;
}

}  // namespace

Result<std::vector<Advisory>> load_advisories(std::string_view json_text, std::string_view origin) {
  auto doc = detail::parse_json(json_text, origin);
  if (!doc) return doc.error();
  try {
    ObjectReader top(*doc, "");
    top.get("$schema");
    top.get("description");
    top.get("source");
    top.get("collected");
    if (const json* v = top.get("schema_version"); !v || !v->is_number_integer() || v->get<int>() != 1)
      fail("/schema_version", "expected schema_version 1");
    const std::string engine = top.string("engine");
    const json& list = top.require("advisories");
    if (!list.is_array()) fail("/advisories", fmt::format("expected an array, got {}", detail::type_name(list)));
    std::vector<Advisory> out;
    for (std::size_t i = 0; i < list.size(); ++i)
      out.push_back(read_advisory(list[i], "/advisories/" + std::to_string(i), engine, i));
    top.finish();
    return out;
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", origin, e.pointer), {}, {}};
  }
}

std::vector<std::string> advisory_engines() {
  std::vector<std::string> out;
  constexpr std::string_view kPrefix = "engines/", kSuffix = "/advisories.json";
  for (const auto& f : embedded::files()) {
    const std::string_view n = f.name;
    if (n.size() > kPrefix.size() + kSuffix.size() && n.substr(0, kPrefix.size()) == kPrefix &&
        n.substr(n.size() - kSuffix.size()) == kSuffix)
      out.emplace_back(n.substr(kPrefix.size(), n.size() - kPrefix.size() - kSuffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::shared_ptr<const std::vector<Advisory>>> builtin_advisories(std::string_view engine) {
  static std::mutex mutex;
  static std::map<std::string, Result<std::shared_ptr<const std::vector<Advisory>>>, std::less<>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(engine); it != cache.end()) return it->second;
  const std::string name = fmt::format("engines/{}/advisories.json", engine);
  const std::string_view text = embedded::find(name);
  Result<std::shared_ptr<const std::vector<Advisory>>> result = std::make_shared<const std::vector<Advisory>>();
  if (!text.empty()) {
    auto loaded = load_advisories(text, "data/" + name);
    if (loaded)
      result = std::make_shared<const std::vector<Advisory>>(std::move(*loaded));
    else
      result = loaded.error();
  }
  cache.emplace(std::string(engine), result);
  return result;
}

}  // namespace attnsel
