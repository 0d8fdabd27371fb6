// `attnsel matrix`: the whole matrix as a table, Markdown or JSON (a normalised view, not the file).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/render.hpp"
#include "core/json_text.hpp"
#include "render/envelope.hpp"
#include "render/matrix_json.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

template <class E>
std::vector<std::string> names(EnumSet<E> set, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    if (set.contains(static_cast<E>(i))) out.emplace_back(name_of(static_cast<E>(i)));
  return out;
}

std::string kv_short(EnumSet<KvCacheDtype> set) {
  std::vector<std::string> out;
  for (int i = 1; i < kKvDtypeCount; ++i)  // "auto" is implied
    if (set.contains(static_cast<KvCacheDtype>(i))) out.emplace_back(name_of(static_cast<KvCacheDtype>(i)));
  return fmt::format("{}", fmt::join(out, " "));
}

std::string features(const Cell& c) {
  std::vector<std::string> out;
  if (c.has(Feature::sliding_window)) out.emplace_back("SW");
  if (c.has(Feature::multimodal)) out.emplace_back("MM");
  if (c.has(Feature::attention_sinks)) out.emplace_back("sinks");
  if (c.has(Feature::chunked_prefix_cache)) out.emplace_back("CPC");
  return out.empty() ? "-" : fmt::format("{}", fmt::join(out, " "));
}

struct Row {
  std::vector<std::string> cells;
};

std::vector<std::string> header() {
  return {"backend", "kinds", "platforms", "compute cap.", "phases", "page size", "KV dtypes", "spec. topk", "features"};
}

Row row(const Backend& b, const Cell& c) {
  std::string phases = c.phases == EnumSet<Phase>{Phase::prefill, Phase::decode} ? "both" : fmt::format("{}", fmt::join(names(c.phases, kPhaseCount), " "));
  std::string cc = c.compute_capability.empty() ? "any" : detail::describe_cc_ranges(c.compute_capability);
  if (c.min_cuda) cc += fmt::format(" (CUDA {}+)", to_string(*c.min_cuda));
  return {{b.name, fmt::format("{}", fmt::join(names(c.kinds, kKindCount), " ")),
           fmt::format("{}", fmt::join(names(c.platforms, kPlatformCount), " ")), cc, phases,
           detail::describe_page_support(c.page_size), kv_short(c.kv_dtypes), std::string(name_of(c.speculative)), features(c)}};
}

// Columns as wide as their content; with a `limit` (the terminal's width) the widest columns give
// way first, never narrower than their heading, and their cells wrap onto more lines.
std::string table(const std::vector<Row>& rows, bool markdown, std::size_t limit) {
  using detail::display_width;
  std::vector<std::size_t> width, floor;
  auto all = rows;
  all.insert(all.begin(), Row{header()});
  for (const auto& r : all)
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(r.cells[i]));
    }
  // A column never gets narrower than its heading or its longest word: names are never cut.
  floor.assign(width.size(), 0);
  for (const auto& r : all)
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      std::size_t word = 0;
      for (unsigned char ch : r.cells[i]) {
        if (ch == ' ' || ch == ',' || ch == '/') word = 0;
        else if ((ch & 0xC0) != 0x80) floor[i] = std::max(floor[i], ++word);
      }
    }
  for (std::size_t i = 0; i < all[0].cells.size(); ++i) floor[i] = std::max(floor[i], display_width(all[0].cells[i]));
  if (!markdown && limit > 0) {
    auto total = [&] {
      std::size_t t = 0;
      for (std::size_t w : width) t += w + 2;
      return t;
    };
    while (total() > limit) {
      std::size_t widest = width.size();
      for (std::size_t i = 0; i < width.size(); ++i)
        if (width[i] > floor[i] && (widest == width.size() || width[i] > width[widest])) widest = i;
      if (widest == width.size()) break;  // every column at its floor: the line stays too long
      --width[widest];
    }
  }
  std::string out;
  auto line = [&](const Row& r) {
    if (markdown) {
      out += "|";
      for (std::size_t i = 0; i < r.cells.size(); ++i)
        out += " " + r.cells[i] + std::string(width[i] - display_width(r.cells[i]), ' ') + " |";
      out += "\n";
      return;
    }
    std::vector<std::vector<std::string>> wrapped;
    std::size_t height = 1;
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      wrapped.push_back(detail::wrap(r.cells[i], width[i]));
      height = std::max(height, wrapped.back().size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string text;
      for (std::size_t i = 0; i < wrapped.size(); ++i) {
        const std::string cell = l < wrapped[i].size() ? wrapped[i][l] : "";
        text += "  " + cell + std::string(width[i] > display_width(cell) ? width[i] - display_width(cell) : 0, ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
  };
  line(all[0]);
  if (markdown) {
    out += "|";
    for (std::size_t w : width) out += std::string(w + 2, '-') + "|";
    out += "\n";
  }
  for (std::size_t i = 1; i < all.size(); ++i) line(all[i]);
  return out;
}

json int_match_json(const IntMatch& im) {
  json out = json::array();
  for (int v : im.values) out.push_back(v);
  for (const IntRange& r : im.ranges) {
    json o = json::object();
    if (r.min) o["min"] = *r.min;
    if (r.max) o["max"] = *r.max;
    if (r.multiple_of != 1) o["multiple_of"] = r.multiple_of;
    out.push_back(o);
  }
  return out.size() == 1 && !im.ranges.empty() ? out[0] : out;
}

json page_support_json(const PageSupport& p) {
  switch (p.mode) {
    case PageMode::fixed: return json(p.sizes);
    case PageMode::multiple: return json{{"multiple_of", p.multiple_of}};
    case PageMode::any: return "any";
    case PageMode::emulated: break;
  }
  return "emulated";
}

json condition_json(const Condition& c, const Matrix& m);

json backends_json(const BackendSet& set, const Matrix& m) {
  json arr = json::array();
  for (BackendId id = 0; id < m.backends().size(); ++id)
    if (set.test(id)) arr.push_back(m.slot(m.backend(id).slot).name + ":" + m.backend(id).name);
  return arr;
}

json ranges_json(const std::vector<VersionRange>& rs) {
  json arr = json::array();
  for (const auto& r : rs) arr.push_back(to_string(r));
  return arr;
}

json condition_json(const Condition& c, const Matrix& m) {
  json j = json::object();
  if (c.fields & Condition::f_backend) j["backend"] = backends_json(c.backend, m);
  if (c.fields & Condition::f_phase) j["phase"] = names(c.phase, kPhaseCount);
  if (c.fields & Condition::f_prefill_backend) j["prefill_backend"] = backends_json(c.prefill_backend, m);
  if (c.fields & Condition::f_decode_backend) j["decode_backend"] = backends_json(c.decode_backend, m);
  if (c.fields & Condition::f_any_backend) j["any_backend"] = backends_json(c.any_backend, m);
  if (c.fields & Condition::f_hybrid) j["hybrid"] = c.hybrid;
  if (c.fields & Condition::f_kind) j["kind"] = names(c.kind, kKindCount);
  if (c.fields & Condition::f_platform) j["platform"] = names(c.platform, kPlatformCount);
  if (c.fields & Condition::f_cc) j["cc"] = ranges_json(c.cc);
  if (c.fields & Condition::f_cuda) j["cuda"] = ranges_json(c.cuda);
  if (c.fields & Condition::f_kv_dtype) j["kv_dtype"] = names(c.kv_dtype, kKvDtypeCount);
  auto ints = [](const IntMatch& im) { return int_match_json(im); };
  if (c.fields & Condition::f_topk) j["topk"] = ints(c.topk);
  if (c.fields & Condition::f_page_size) j["page_size"] = ints(c.page_size);
  if (c.fields & Condition::f_page_size_explicit) j["page_size_explicit"] = c.page_size_explicit;
  if (c.fields & Condition::f_backend_explicit) j["backend_explicit"] = c.backend_explicit;
  if (c.fields & Condition::f_phase_flag) j["phase_flag"] = c.phase_flag;
  if (c.fields & Condition::f_replaced) j["replaced"] = c.replaced;
  if (c.fields & Condition::f_kv_dtype_explicit) j["kv_dtype_explicit"] = c.kv_dtype_explicit;
  if (c.fields & Condition::f_sliding_window) j["sliding_window"] = c.sliding_window;
  if (c.fields & Condition::f_multimodal) j["multimodal"] = c.multimodal;
  if (c.fields & Condition::f_attention_sinks) j["attention_sinks"] = c.attention_sinks;
  if (c.fields & Condition::f_deterministic) j["deterministic"] = c.deterministic;
  if (c.fields & Condition::f_radix_cache) j["radix_cache"] = c.radix_cache;
  if (c.fields & Condition::f_family) j["family"] = c.family;
  if (c.fields & Condition::f_architecture) j["architecture"] = c.architecture;
  if (c.fields & Condition::f_kv_heads) j["kv_heads"] = ints(c.kv_heads);
  if (c.fields & Condition::f_head_dim) j["head_dim"] = ints(c.head_dim);
  if (c.fields & Condition::f_heads_per_rank) j["heads_per_rank"] = ints(c.heads_per_rank);
  if (c.fields & Condition::f_config_has) j["config_has"] = c.config_has;
  if (c.fields & Condition::f_config_lacks) j["config_lacks"] = c.config_lacks;
  if (c.fields & Condition::f_kv_dtype_written) j["kv_dtype_written"] = c.kv_dtype_written;
  if (c.fields & Condition::f_spec_mode) j["speculative_attention_mode"] = std::string(name_of(c.spec_mode));
  for (const auto& sub : c.all) j["all"].push_back(condition_json(sub, m));
  for (const auto& sub : c.any) j["any"].push_back(condition_json(sub, m));
  for (const auto& sub : c.none) j["not"] = condition_json(sub, m);
  return j;
}

std::string scope_name(RuleScope s) {
  switch (s) {
    case RuleScope::request: return "request";
    case RuleScope::backend: return "backend";
    case RuleScope::plan: return "plan";
  }
  return "?";
}

// One list line, wrapped to `width` under its text column (after the id): ids stay readable.
std::string hanging(const std::string& text, std::size_t width) {
  constexpr std::size_t kIndent = 43;
  if (width <= kIndent + 20 || detail::display_width(text) <= width) return text + "\n";
  const std::string head = text.substr(0, kIndent);
  std::string out;
  const std::vector<std::string> lines = detail::wrap(text.substr(kIndent), width - kIndent);
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? std::string(kIndent, ' ') : head) + lines[i] + "\n";
  return out;
}

}  // namespace

json matrix_json(const Matrix& m) {
  const MatrixInfo& info = m.info();
    json j;
    j["matrix"] = {{"engine", info.engine}, {"version", info.version}, {"engine_version", info.engine_version},
                   {"origin", info.origin}, {"source", info.source}};
    for (const auto& sl : m.slots())
      j["slots"].push_back({{"name", sl.name}, {"title", sl.title}, {"kinds", names(sl.kinds, kKindCount)}, {"joint", sl.joint},
                            {"phased", sl.phased}, {"flag", sl.flag}, {"prefill_flag", sl.prefill_flag},
                            {"decode_flag", sl.decode_flag}, {"flag_aliases", sl.flag_aliases},
                            {"default", sl.sglang_default ? json(m.backend(*sl.sglang_default).name) : json(nullptr)}});
    for (const auto& b : m.backends()) {
      json cells = json::array();
      for (const auto& c : b.cells) {
        json jc = {{"kinds", names(c.kinds, kKindCount)},
                   {"platforms", names(c.platforms, kPlatformCount)},
                   {"compute_capability", ranges_json(c.compute_capability)},
                   {"min_cuda", c.min_cuda ? json(to_string(*c.min_cuda)) : json(nullptr)},
                   {"phases", names(c.phases, kPhaseCount)},
                   {"page_size", page_support_json(c.page_size)},
                   {"kv_dtypes", names(c.kv_dtypes, kKvDtypeCount)},
                   {"speculative", std::string(name_of(c.speculative))},
                   {"source", c.source}};
        if (!c.head_sizes.empty()) jc["head_sizes"] = int_match_json(c.head_sizes);
        for (int f = 0; f < kFeatureCount; ++f) jc[std::string(name_of(static_cast<Feature>(f)))] = c.features[f];
        cells.push_back(jc);
      }
      j["backends"].push_back({{"name", b.name}, {"title", b.title}, {"slot", m.slot(b.slot).name}, {"aliases", b.aliases},
                               {"source", b.source}, {"note", b.note}, {"cells", cells}});
    }
    for (const auto& r : m.rules()) {
      json jr = {{"id", r.info.id}, {"scope", scope_name(r.scope)}, {"severity", std::string(name_of(r.info.severity))},
                 {"when", condition_json(r.when, m)}, {"message", r.info.message}, {"source", r.info.source}};
      if (r.set.page_size) jr["set"]["page_size"] = *r.set.page_size;
      if (r.set.backend) jr["set"]["backend"] = m.backend(*r.set.backend).name;
      if (r.set.kv_dtype) jr["set"]["kv_dtype"] = std::string(name_of(*r.set.kv_dtype));
      if (r.set.dtype) jr["set"]["dtype"] = std::string(name_of(*r.set.dtype));
      if (r.set.kind) jr["set"]["kind"] = std::string(name_of(*r.set.kind));
      if (r.set.topk) jr["set"]["topk"] = *r.set.topk;
      if (r.set.disable_radix_cache) jr["set"]["radix_cache"] = false;
      if (r.set.ignore_choice) jr["set"]["ignored"] = true;
      if (r.strict_error) jr["strict"] = true;
      j["rules"].push_back(jr);
    }
    for (const auto& e : m.selection())
      j["selection"].push_back({{"id", e.info.id}, {"slot", m.slot(e.slot).name}, {"phases", names(e.phases, kPhaseCount)},
                                {"when", condition_json(e.when, m)}, {"backend", m.backend(e.backend).name},
                                {"backends", [&] {
                                   json list = json::array();
                                   for (BackendId b : e.backends) list.push_back(m.backend(b).name);
                                   return list;
                                 }()},
                                {"message", e.info.message},
                                {"source", e.info.source}});
    return j;
}

std::string render_matrix(const Matrix& m, MatrixFormat format, const RenderOptions& o) {
  const MatrixInfo& info = m.info();
  if (format == MatrixFormat::json) return detail::envelope_text("matrix", matrix_json(m), 2) + "\n";

  const bool md = format == MatrixFormat::markdown;
  auto heading = [&](const std::string& text) {
    if (md) return fmt::format("\n## {}\n\n", text);
    return o.color ? fmt::format("\n\033[1m{}\033[0m\n", text) : fmt::format("\n{}\n", text);
  };
  std::string out = md ? fmt::format("# {} attention matrix {}\n\n{}\n", info.engine, info.version, info.engine_version)
                       : fmt::format("{} attention matrix {} ({})\n{}\n", info.engine, info.version, info.origin, info.engine_version);
  for (SlotId s = 0; s < m.slots().size(); ++s) {
    std::vector<Row> rows;
    for (const auto& b : m.backends())
      if (b.slot == s)
        for (const auto& c : b.cells) rows.push_back(row(b, c));
    out += heading(fmt::format("{} backends ({})", m.slot(s).title,
                               m.slot(s).flag.empty() ? m.slot(s).prefill_flag + ", " + m.slot(s).decode_flag : m.slot(s).flag));
    out += table(rows, md, o.width);
  }
  out += md ? "\nFeatures: SW sliding window, MM multimodal, sinks attention sinks, CPC chunked prefix cache. "
              "KV dtypes besides auto.\n"
            : "\n  features: SW sliding window, MM multimodal, sinks attention sinks, CPC chunked prefix cache; KV dtypes besides auto\n";

  out += heading("Automatic selection, in order (first match whose backend can run wins)");
  for (const auto& e : m.selection()) {
    std::string phases = e.phases == EnumSet<Phase>{Phase::prefill, Phase::decode} ? "" : fmt::format(" [{}]", fmt::join(names(e.phases, kPhaseCount), " "));
    out += md ? fmt::format("- `{}` → **{}**{}: {}\n", e.info.id, m.backend(e.backend).name, phases, e.info.message)
              : hanging(fmt::format("  {:<40} → {:<16}{} {}", e.info.id, m.backend(e.backend).name, phases, e.info.message), o.width);
  }
  out += heading("Rules");
  for (const auto& r : m.rules()) {
    std::string effect;
    if (r.set.page_size) effect = fmt::format(" [sets page size {}]", *r.set.page_size);
    if (r.set.backend) effect = fmt::format(" [switches to {}]", m.backend(*r.set.backend).name);
    if (r.set.kv_dtype) effect = fmt::format(" [sets KV dtype {}]", name_of(*r.set.kv_dtype));
    if (r.set.dtype) effect = fmt::format(" [sets the compute dtype {}]", name_of(*r.set.dtype));
    if (r.set.kind) effect = fmt::format(" [runs the model as {}]", name_of(*r.set.kind));
    if (r.set.topk) effect = fmt::format(" [sets speculative topk {}]", *r.set.topk);
    if (r.set.disable_radix_cache) effect = " [disables the radix cache]";
    if (r.set.ignore_choice) effect = " [ignores the choice]";
    out += md ? fmt::format("- `{}` ({}, {}){}: {}\n", r.info.id, scope_name(r.scope), name_of(r.info.severity), effect, r.info.message)
              : hanging(fmt::format("  {:<40} {:<7} {:<7}{} {}", r.info.id, scope_name(r.scope), name_of(r.info.severity), effect, r.info.message),
                        o.width);
  }
  return out;
}

}  // namespace attnsel
