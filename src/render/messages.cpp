// Rendering findings: message templates filled with the values of the selection.
#include <algorithm>

#include <fmt/format.h>

#include "attnsel/selection.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

std::string join_kv_dtypes(EnumSet<KvCacheDtype> set) {
  std::vector<std::string> names;
  for (int d = 0; d < kKvDtypeCount; ++d)
    if (set.contains(static_cast<KvCacheDtype>(d))) names.emplace_back(name_of(static_cast<KvCacheDtype>(d)));
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string join_phases(EnumSet<Phase> set) {
  std::vector<std::string> names;
  for (int p = 0; p < kPhaseCount; ++p)
    if (set.contains(static_cast<Phase>(p))) names.emplace_back(name_of(static_cast<Phase>(p)));
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, " and "));
}

std::string describe_topk(TopkSupport t) {
  switch (t) {
    case TopkSupport::none: return "no speculative decoding";
    case TopkSupport::one: return "topk 1 only";
    case TopkSupport::many_at_page1: return "topk > 1 only with page size 1";
    case TopkSupport::any: return "any topk";
  }
  return "?";
}

}  // namespace

Diagnostic Selection::describe(const Finding& f) const {
  Diagnostic d;
  d.rule = f.rule ? f.rule->id : "";
  d.severity = f.severity;
  d.source = f.rule ? f.rule->source : "";
  // The engine's own rules cite the data they judged: the cell, or the backend's config declaration.
  if (d.source.rfind("attnsel engine", 0) == 0) {
    if (f.cell && !f.cell->source.empty()) d.source = f.cell->source;
    else if (f.backend != kNoBackend && d.rule.rfind("config.", 0) == 0 && !matrix->backend(f.backend).config_source.empty())
      d.source = matrix->backend(f.backend).config_source;
    // A slot that runs only inside other backends: the slot's own source says where.
    else if (f.backend != kNoBackend && f.rule == &matrix->builtin(BuiltinRule::slot_unused))
      d.source = matrix->slot(matrix->backend(f.backend).slot).source;
  }
  if (f.backend != kNoBackend) d.backend = name(f.backend);
  if (f.phase >= 0) d.phase = std::string(name_of(static_cast<Phase>(f.phase)));
  if (!f.rule) return d;

  const Matrix& m = *matrix;
  const Request& r = request;
  auto value = [&](int v) -> std::string {
    switch (f.values) {
      case Finding::Values::page_size:
      case Finding::Values::topk: return std::to_string(v);
      case Finding::Values::backend: return v >= 0 && static_cast<std::size_t>(v) < m.backends().size() ? name(static_cast<BackendId>(v)) : "?";
      case Finding::Values::kv_dtype: return std::string(name_of(static_cast<KvCacheDtype>(v)));
      case Finding::Values::dtype: return std::string(name_of(static_cast<ComputeDtype>(v)));
      case Finding::Values::slot: return m.slot(static_cast<SlotId>(v)).title;
      case Finding::Values::none: return std::to_string(v);
    }
    return "?";
  };
  auto supported = [&]() -> std::string {
    const RuleInfo* rule = f.rule;
    if (rule == &m.builtin(BuiltinRule::page_conflict)) {
      std::vector<std::string> parts;
      for (const auto& c : page.constraints)
        parts.push_back(fmt::format("{} ({}): {}", name(c.backend), name_of(c.phase), detail::describe_page_support(*c.support)));
      return fmt::format("{}", fmt::join(parts, "; "));
    }
    if (rule == &m.builtin(BuiltinRule::config_unknown_key) && f.backend != kNoBackend) {
      std::vector<std::string> names;
      for (const auto& p : m.backend(f.backend).config) names.push_back(p.name);
      return fmt::format("{}", fmt::join(names, ", "));
    }
    if (!f.cell) return "";
    const Cell& c = *f.cell;
    if (rule == &m.builtin(BuiltinRule::dtype)) {
      std::vector<std::string> names;
      for (int i = 0; i < kComputeDtypeCount; ++i)
        if (c.dtypes.contains(static_cast<ComputeDtype>(i))) names.emplace_back(name_of(static_cast<ComputeDtype>(i)));
      return fmt::format("{}", fmt::join(names, ", "));
    }
    if (rule == &m.builtin(BuiltinRule::head_size)) return detail::describe_int_match(c.head_sizes);
    if (rule == &m.builtin(BuiltinRule::compute_capability) || rule == &m.builtin(BuiltinRule::unknown_device)) {
      // A backend may split one kind and platform into cells by GPU: name every range they cover.
      std::vector<VersionRange> ranges;
      if (f.backend != kNoBackend)
        for (const Cell& other : m.backend(f.backend).cells)
          if ((other.kinds.bits() & c.kinds.bits()) && (other.platforms.bits() & c.platforms.bits()))
            ranges.insert(ranges.end(), other.compute_capability.begin(), other.compute_capability.end());
      return detail::describe_cc_ranges(ranges.empty() ? c.compute_capability : ranges);
    }
    if (rule == &m.builtin(BuiltinRule::cuda)) return c.min_cuda ? to_string(*c.min_cuda) : "any";
    if (rule == &m.builtin(BuiltinRule::phase)) return join_phases(c.phases);
    if (rule == &m.builtin(BuiltinRule::kv_dtype)) return join_kv_dtypes(c.kv_dtypes);
    if (rule == &m.builtin(BuiltinRule::page_size)) return detail::describe_page_support(c.page_size);
    if (rule == &m.builtin(BuiltinRule::speculative)) return describe_topk(c.speculative);
    return "";
  };

  std::string out;
  const std::string& tmpl = f.rule->message;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out += tmpl[i];
      continue;
    }
    auto close = tmpl.find('}', i);
    if (close == std::string::npos) {
      out += tmpl.substr(i);
      break;
    }
    const std::string key = tmpl.substr(i + 1, close - i - 1);
    i = close;
    if (key == "backend") out += d.backend.empty() ? "the backend" : d.backend;
    else if (key == "title") out += f.backend != kNoBackend ? m.backend(f.backend).title
                                   : f.values == Finding::Values::slot ? value(f.from) : "the backend";
    else if (key == "phase") out += d.phase.empty() ? "every" : d.phase;
    else if (key == "kind") out += std::string(name_of(r.model.kind)).append(" (").append(detail::kind_title(r.model.kind)).append(")");
    else if (key == "platform") out += name_of(r.device.platform);
    else if (key == "gpu") out += detail::describe_gpu(r.device);
    else if (key == "cuda") out += r.device.cuda ? to_string(*r.device.cuda) : "unknown";
    else if (key == "kv_dtype") out += name_of(kv_cache_dtype);
    else if (key == "topk") out += std::to_string(r.speculative_topk);
    else if (key == "page_size") out += f.values == Finding::Values::page_size && f.from ? std::to_string(f.from) : std::to_string(page.page_size);
    else if (key == "from") out += value(f.from);
    else if (key == "to") out += value(f.to);
    else if (key == "supported") out += supported();
    else if (key == "model") out += r.model.id.empty() ? std::string(name_of(r.model.kind)) : r.model.id;
    else if (key == "dtype") out += name_of(r.dtype);
    else if (key == "detail") out += f.detail;
    else out += "{" + key + "}";
  }
  d.message = std::move(out);
  return d;
}

std::vector<Diagnostic> Selection::describe(const std::vector<Finding>& fs) const {
  std::vector<Diagnostic> out;
  out.reserve(fs.size());
  for (const auto& f : fs) out.push_back(describe(f));
  return out;
}

}  // namespace attnsel
