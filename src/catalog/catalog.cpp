#include "attnsel/catalog.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "matrix/embedded.hpp"
#include "matrix/image.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {

using detail::expect_int;
using detail::expect_string;
using detail::fail;
using detail::json;
using detail::ObjectReader;

namespace {

// "NVIDIA GeForce RTX 5090" -> "rtx5090"; "sm_90a" -> "sm90a".
std::string normalize(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == '.') out += c;
  }
  for (const char* noise : {"nvidia", "geforce", "tesla", "amd", "instinct", "radeon"}) {
    auto pos = out.find(noise);
    if (pos == 0) out.erase(0, std::string_view(noise).size());
  }
  return out;
}

// "NVIDIA GeForce RTX-5090 (32GB)" -> {"nvidia", "geforce", "rtx", "5090", "32gb"}.
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// `needle` appears as consecutive whole words of `hay`.
bool contains_run(const std::vector<std::string>& hay, const std::vector<std::string>& needle) {
  if (needle.empty() || needle.size() > hay.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (std::equal(needle.begin(), needle.end(), hay.begin() + static_cast<std::ptrdiff_t>(i))) return true;
  return false;
}

Version read_version(ObjectReader& r, const char* key) {
  std::string s = r.string(key);
  auto v = parse_version(s);
  if (!v) fail(r.child(key), fmt::format("expected a version like \"12.8\", got \"{}\"", s));
  return *v;
}

// "90", "100", "121" -> 9.0, 10.0, 12.1 (the last digit is the minor version).
std::optional<ComputeCapability> cc_from_digits(std::string_view digits) {
  if (digits.size() < 2 || digits.size() > 4) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return parse_version(std::string(digits.substr(0, digits.size() - 1)) + "." + std::string(digits.substr(digits.size() - 1)));
}

}  // namespace

struct CatalogBuilder {
  Catalog& c;

  void gpus(const json& root) {
    ObjectReader r(root, "");
    r.get("$schema");
    if (expect_int(r.require("schema_version"), "/schema_version", 0, 1000) != 1) fail("/schema_version", "this attnsel reads schema_version 1");
    {
      ObjectReader a(r.require("assumed_cuda"), "/assumed_cuda");
      c.assumed_cuda_ = read_version(a, "version");
      c.assumed_cuda_source_ = a.string("source");
      a.finish();
    }
    const json& archs = r.require("architectures");
    if (!archs.is_array() || archs.empty()) fail("/architectures", "expected a non-empty array");
    for (std::size_t i = 0; i < archs.size(); ++i) {
      ObjectReader a(archs[i], fmt::format("/architectures/{}", i));
      GpuArch g;
      g.arch = a.string("arch");
      if (c.find_arch(g.arch)) fail(a.child("arch"), fmt::format("duplicate architecture \"{}\"", g.arch));
      std::string platform = a.string("platform");
      auto p = parse_platform(platform);
      if (!p) fail(a.child("platform"), fmt::format("unknown platform \"{}\"; valid: {}", platform, platform_names()));
      g.platform = *p;
      if (a.has("compute_capability")) g.compute_capability = read_version(a, "compute_capability");
      if (g.platform == Platform::cuda && !g.compute_capability) fail(a.pointer(), "a CUDA architecture needs \"compute_capability\"");
      g.family = a.optional_string("family").value_or("");
      if (a.has("min_cuda")) g.min_cuda = read_version(a, "min_cuda");
      if (a.has("max_cuda")) g.max_cuda = read_version(a, "max_cuda");
      g.source = a.string("source");
      a.finish();
      c.archs_.push_back(std::move(g));
    }
    const json& gpus = r.require("gpus");
    if (!gpus.is_array()) fail("/gpus", "expected an array");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      ObjectReader g(gpus[i], fmt::format("/gpus/{}", i));
      GpuModel m;
      m.name = g.string("name");
      m.aliases = g.strings("aliases");
      std::string arch = g.string("arch");
      const GpuArch* a = c.find_arch(arch);
      if (!a) fail(g.child("arch"), fmt::format("unknown architecture \"{}\"", arch));
      m.arch = static_cast<std::size_t>(a - c.archs_.data());
      g.finish();
      c.gpus_.push_back(std::move(m));
    }
    r.finish();
  }

  void models(const json& root) {
    ObjectReader r(root, "");
    r.get("$schema");
    r.optional_string("description");
    if (r.has("sources")) {  // named sources the families cite, for people
      const json& sources = r.require("sources");
      if (!sources.is_object()) fail("/sources", "expected an object of strings");
      for (auto it = sources.begin(); it != sources.end(); ++it) expect_string(it.value(), "/sources/" + it.key());
    }
    if (expect_int(r.require("schema_version"), "/schema_version", 0, 1000) != 1) fail("/schema_version", "this attnsel reads schema_version 1");
    const json& fams = r.require("families");
    if (!fams.is_array()) fail("/families", "expected an array");
    for (std::size_t i = 0; i < fams.size(); ++i) {
      ObjectReader f(fams[i], fmt::format("/families/{}", i));
      ModelFamily m;
      m.name = f.string("name");
      std::string kind = f.string("kind");
      auto k = parse_kind(kind);
      if (!k) fail(f.child("kind"), fmt::format("unknown kind \"{}\"; valid: {}", kind, kind_names()));
      m.kind = *k;
      m.sliding_window = f.boolean("sliding_window", false);
      m.multimodal = f.boolean("multimodal", false);
      m.attention_sinks = f.boolean("attention_sinks", false);
      m.architectures = f.strings("architectures");
      m.models = f.strings("models");
      m.names = f.strings("names");
      for (std::size_t k = 0; k < m.names.size(); ++k) {
        const std::string& n = m.names[k];
        const auto literal = std::count_if(n.begin(), n.end(), [](char c) { return c != '*'; });
        if (literal < 3 || n.find('/') != std::string::npos)
          fail(fmt::format("/families/{}/names/{}", i, k),
               fmt::format("\"{}\" is not a name pattern: at least 3 characters besides '*', and no '/' (patterns match "
                           "the name without organisation)",
                           n));
      }
      if (f.has("head_dim")) m.head_dim = static_cast<int>(expect_int(f.require("head_dim"), f.child("head_dim"), 1, 4096));
      m.source = f.string("source");
      f.finish();
      for (const auto& arch : m.architectures)
        if (c.family_by_architecture(arch)) fail(f.child("architectures"), fmt::format("architecture \"{}\" is in two families", arch));
      c.families_.push_back(std::move(m));
    }
    r.finish();
  }
};

const GpuArch* Catalog::find_arch(std::string_view arch) const {
  for (const auto& a : archs_)
    if (a.arch == arch) return &a;
  return nullptr;
}

const GpuArch* Catalog::find_arch(ComputeCapability cc) const {
  for (const auto& a : archs_)
    if (a.compute_capability && *a.compute_capability == cc) return &a;
  return nullptr;
}

CudaVersion Catalog::assumed_cuda_for(const GpuArch& arch) const {
  CudaVersion v = assumed_cuda_;
  if (arch.min_cuda && v < *arch.min_cuda) v = *arch.min_cuda;
  return v;
}

std::vector<std::string> Catalog::gpu_names() const {
  std::vector<std::string> out;
  for (const auto& g : gpus_) out.push_back(g.name);
  for (const auto& a : archs_) out.push_back(a.arch);
  return out;
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> out;
  for (const auto& f : families_) out.insert(out.end(), f.models.begin(), f.models.end());
  return out;
}

const ModelFamily* Catalog::family_by_architecture(std::string_view architecture) const {
  for (const auto& f : families_)
    if (std::find(f.architectures.begin(), f.architectures.end(), architecture) != f.architectures.end()) return &f;
  return nullptr;
}

const ModelFamily* Catalog::family_by_model_id(std::string_view id) const {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  const std::string needle = lower(id);
  for (const auto& f : families_)
    for (const auto& m : f.models)
      if (lower(m) == needle) return &f;
  // A name without its organisation ("DeepSeek-R1", as a local directory names it) matches "org/DeepSeek-R1".
  if (needle.find('/') != std::string::npos) return nullptr;
  for (const auto& f : families_)
    for (const auto& m : f.models) {
      const std::string name = lower(m);
      const std::size_t slash = name.rfind('/');
      if (slash != std::string::npos && name.compare(slash + 1, std::string::npos, needle) == 0) return &f;
    }
  return nullptr;
}

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// `text` matches `pattern` whole, case-insensitively, '*' standing for any run (none included).
// Iterative with one backtrack point: linear in practice, never exponential.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && lower(pattern[p]) == lower(text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

const ModelFamily* Catalog::family_by_name(std::string_view name, std::string* pattern) const {
  if (name.empty() || name.size() > 256) return nullptr;
  const ModelFamily* best = nullptr;
  std::size_t best_literal = 0;
  for (const auto& f : families_)
    for (const auto& n : f.names) {
      const auto literal = static_cast<std::size_t>(std::count_if(n.begin(), n.end(), [](char c) { return c != '*'; }));
      if (literal <= best_literal || !glob_match(n, name)) continue;
      best = &f;
      best_literal = literal;
      if (pattern) *pattern = n;
    }
  return best;
}

Result<DeviceInfo> Catalog::resolve_gpu(std::string_view text) const {
  auto device_for = [&](const GpuArch& a, std::string name) {
    DeviceInfo d;
    d.platform = a.platform;
    d.compute_capability = a.compute_capability;
    d.arch = a.arch;
    d.name = name.empty() ? a.family : std::move(name);
    return d;
  };
  const std::string norm = normalize(text);
  if (norm.empty() || text.size() > 200)
    return Error{ErrorCode::invalid_argument, "expected a GPU name or compute capability (sm90, 9.0, H100, MI300X)", "--gpu", {}, {}};

  // Architecture names and compute capabilities: sm90, sm_90a, sm100f, 9.0, 90, gfx942.
  if (const GpuArch* a = find_arch(norm)) return device_for(*a, "");
  std::optional<ComputeCapability> cc;
  std::string digits = norm;
  for (const char* prefix : {"sm", "compute"})
    if (digits.rfind(prefix, 0) == 0) digits.erase(0, std::string_view(prefix).size());
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f') && digits.size() > 1) digits.pop_back();
  if (digits.find('.') != std::string::npos) cc = parse_version(digits);
  else cc = cc_from_digits(digits);
  if (cc) {
    if (const GpuArch* a = find_arch(*cc)) return device_for(*a, "");
    Error e{ErrorCode::unknown_name,
            fmt::format("unknown compute capability {} ('{}'): no such NVIDIA architecture in the GPU catalog", to_string(*cc), text),
            "--gpu", {}, {}};
    for (const auto& a : archs_) e.choices.push_back(a.arch);
    return e;
  }

  // Catalog names and aliases, exact after normalising; then a name whose words appear, in order and
  // whole, among the text's words (probe names such as "NVIDIA H100 80GB HBM3"), the longest first.
  // Whole words keep "A1000" from reading as an A100.
  const std::vector<std::string> words = tokens(text);
  const GpuModel* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& g : gpus_) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const auto& n : names) {
      std::string nn = normalize(n);
      if (nn == norm) return device_for(archs_[g.arch], g.name);
      const std::vector<std::string> name_words = tokens(n);
      if (nn.size() > best_len && contains_run(words, name_words)) {
        best = &g;
        best_len = nn.size();
      }
    }
  }
  if (best) return device_for(archs_[best->arch], best->name);

  Error e{ErrorCode::unknown_name, fmt::format("unknown GPU '{}'", text), "--gpu", {}, {}};
  std::vector<std::string> normalized;
  for (const auto& g : gpus_) e.choices.push_back(g.name);
  for (const auto& a : archs_) e.choices.push_back(a.arch);
  e.suggestion = detail::closest_match(text, e.choices);
  return e;
}

void assume_cuda(const Catalog& catalog, DeviceInfo& d) {
  if (d.platform != Platform::cuda || d.cuda) return;
  const GpuArch* arch = d.compute_capability ? catalog.find_arch(*d.compute_capability) : nullptr;
  d.cuda = arch ? catalog.assumed_cuda_for(*arch) : catalog.assumed_cuda();
  d.cuda_assumed = true;
}

Result<DeviceInfo> resolve_device(const Catalog& catalog, const DeviceSpec& spec) {
  DeviceInfo d;
  if (spec.gpu && spec.gpu->find(',') != std::string::npos)
    return Error{ErrorCode::invalid_argument,
                 fmt::format("{} names several GPUs; a device is one of them (plan each: attnsel --gpu A,B plans for "
                             "every GPU of the list)",
                             spec.origin),
                 spec.origin, {}, {}};
  if (spec.gpu) {
    auto r = catalog.resolve_gpu(*spec.gpu);
    if (!r) {
      Error e = r.error();
      e.where = spec.origin;
      return e;
    }
    d = *r;
    d.origin = fmt::format("{} {}", spec.origin, *spec.gpu);
    if (spec.platform && *spec.platform != d.platform)
      return Error{ErrorCode::invalid_argument,
                   fmt::format("--platform {} contradicts {} {} ({})", name_of(*spec.platform), spec.origin, *spec.gpu, name_of(d.platform)),
                   "--platform", {}, {}};
  } else if (spec.platform == Platform::rocm) {
    auto r = catalog.resolve_gpu("MI300X");
    if (r) d = *r;
    d.origin = "assumed for --platform rocm (pass --gpu to choose)";
  } else if (spec.platform && *spec.platform != Platform::cuda) {
    d.platform = *spec.platform;
    d.arch = std::string(name_of(*spec.platform));
    d.origin = fmt::format("--platform {}", name_of(*spec.platform));
  } else {
    return Error{ErrorCode::invalid_argument, "no GPU given: pass --gpu (sm90, H100, B200 ...) or a non-CUDA --platform", "--gpu", {}, {}};
  }
  if (spec.cuda) {
    auto v = parse_version(*spec.cuda);
    if (!v) return Error{ErrorCode::invalid_argument, fmt::format("expected a CUDA version like 12.8, got '{}'", *spec.cuda), "--cuda", {}, {}};
    if (d.platform != Platform::cuda)
      return Error{ErrorCode::invalid_argument, fmt::format("--cuda applies to NVIDIA GPUs; this is {}", name_of(d.platform)), "--cuda", {}, {}};
    // A driver that supports this CUDA cannot drive a GPU outside the architecture's CUDA range.
    if (const GpuArch* arch = d.compute_capability ? catalog.find_arch(*d.compute_capability) : nullptr) {
      if (arch->min_cuda && *v < *arch->min_cuda)
        return Error{ErrorCode::invalid_argument,
                     fmt::format("{} ({}) needs CUDA {} or newer; CUDA {} cannot run it", arch->arch, arch->family,
                                 to_string(*arch->min_cuda), to_string(*v)),
                     "--cuda", {}, {}};
      if (arch->max_cuda && *v >= *arch->max_cuda)
        return Error{ErrorCode::invalid_argument,
                     fmt::format("{} ({}) is not supported from CUDA {} on; CUDA {} cannot run it", arch->arch, arch->family,
                                 to_string(*arch->max_cuda), to_string(*v)),
                     "--cuda", {}, {}};
    }
    d.cuda = v;
  }
  assume_cuda(catalog, d);
  return d;
}

Result<std::shared_ptr<const Catalog>> load_catalog(std::string_view gpus_json, std::string_view gpus_origin,
                                                    std::string_view models_json, std::string_view models_origin) {
  auto catalog = std::make_shared<Catalog>();
  CatalogBuilder builder{*catalog};
  auto gpus = detail::parse_json(gpus_json, gpus_origin);
  if (!gpus) return gpus.error();
  try {
    builder.gpus(*gpus);
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", gpus_origin, e.pointer), {}, {}};
  }
  auto models = detail::parse_json(models_json, models_origin);
  if (!models) return models.error();
  try {
    builder.models(*models);
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", models_origin, e.pointer), {}, {}};
  }
  return std::shared_ptr<const Catalog>(std::move(catalog));
}

Result<std::shared_ptr<const Catalog>> detail::load_builtin_catalog_json() {
  return load_catalog(embedded::find("gpus.json"), "built-in:gpus.json", embedded::find("models.json"), "built-in:models.json");
}

Result<std::shared_ptr<const Catalog>> builtin_catalog() {
  // The compiled image when the library has one, else the JSON.
  static const Result<std::shared_ptr<const Catalog>> cached = []() -> Result<std::shared_ptr<const Catalog>> {
    if (auto from_image = image::catalog()) return from_image;
    return detail::load_builtin_catalog_json();
  }();
  return cached;
}

}  // namespace attnsel
