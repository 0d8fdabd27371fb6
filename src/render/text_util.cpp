#include "render/text_util.hpp"

#include <fmt/format.h>

namespace attnsel::detail {

std::string describe_cc_ranges(const std::vector<VersionRange>& ranges) {
  std::vector<std::string> parts;
  for (const auto& r : ranges) {
    if (r.min && r.max && r.min->minor == 0 && r.max->minor == 0) {
      for (int major = r.min->major; major < r.max->major; ++major) parts.push_back(fmt::format("{}.x", major));
    } else if (r.min && r.max && (r.max->major * 10 + r.max->minor) - (r.min->major * 10 + r.min->minor) == 1) {
      parts.push_back(to_string(*r.min));
    } else {
      parts.push_back(to_string(r));
    }
  }
  if (parts.empty()) return "any";
  if (parts.size() == 1) return parts[0];
  std::string last = parts.back();
  parts.pop_back();
  return fmt::format("{} or {}", fmt::join(parts, ", "), last);
}

std::string describe_page_support(const PageSupport& p) {
  switch (p.mode) {
    case PageMode::any: return "any (native paging)";
    case PageMode::emulated: return "any (emulated)";
    case PageMode::fixed: break;
  }
  if (p.sizes.size() == 1) return std::to_string(p.sizes[0]);
  std::vector<std::string> s;
  for (int v : p.sizes) s.push_back(std::to_string(v));
  std::string last = s.back();
  s.pop_back();
  return fmt::format("{} or {}", fmt::join(s, ", "), last);
}

std::string describe_gpu(const DeviceInfo& d) {
  std::string arch = d.arch;
  if (arch.empty() && d.compute_capability) arch = sm_name(*d.compute_capability);
  if (arch.empty()) arch = d.platform == Platform::cuda ? "an unknown GPU" : std::string(name_of(d.platform));
  if (!d.name.empty() && d.name != arch) return fmt::format("{} ({})", arch, d.name);
  return arch;
}

std::string kind_title(AttentionKind k) {
  switch (k) {
    case AttentionKind::mha: return "standard multi-head attention";
    case AttentionKind::mla: return "multi-head latent attention";
    case AttentionKind::gdn: return "hybrid GDN linear attention";
    case AttentionKind::dsa: return "DeepSeek sparse attention";
  }
  return "?";
}

}  // namespace attnsel::detail
