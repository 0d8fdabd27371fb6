#include "attnsel/types.hpp"

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace attnsel {
namespace {

// Versions we accept have small components; anything larger is a typo or hostile input.
constexpr int kMaxComponent = 999;

std::optional<int> parse_component(std::string_view s) {
  if (s.empty() || s.size() > 3) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0 || value > kMaxComponent) return std::nullopt;
  return value;
}

template <class E, std::size_t N>
std::optional<E> parse_enum(std::string_view s, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, kPlatformCount> kPlatforms = {"cuda", "rocm", "npu", "xpu", "cpu", "mps"};
constexpr std::array<std::string_view, kKindCount> kKinds = {"mha", "mla", "gdn", "dsa"};
constexpr std::array<std::string_view, kKvDtypeCount> kKvDtypes = {"auto",     "bf16",     "fp16",    "fp32",
                                                                   "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"};
constexpr std::array<std::string_view, kPhaseCount> kPhases = {"prefill", "decode"};
constexpr std::array<std::string_view, 3> kPreferences = {"engine-default", "prefix-reuse", "throughput"};
constexpr std::array<std::string_view, 3> kSeverities = {"info", "warning", "error"};
constexpr std::array<std::string_view, kComputeDtypeCount> kComputeDtypes = {"auto", "fp16", "bf16", "fp32"};

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  auto dot = text.find('.');
  auto major = parse_component(text.substr(0, dot));
  if (!major) return std::nullopt;
  if (dot == std::string_view::npos) return Version{*major, 0};
  auto minor = parse_component(text.substr(dot + 1));
  if (!minor) return std::nullopt;
  return Version{*major, *minor};
}

std::string to_string(Version v) { return fmt::format("{}.{}", v.major, v.minor); }

std::string sm_name(ComputeCapability cc) { return fmt::format("sm{}{}", cc.major, cc.minor); }

std::string to_string(const VersionRange& r) {
  if (r.min && r.max) return fmt::format("[{}, {})", to_string(*r.min), to_string(*r.max));
  if (r.min) return fmt::format(">= {}", to_string(*r.min));
  if (r.max) return fmt::format("< {}", to_string(*r.max));
  return "any";
}

std::string_view name_of(Platform p) { return kPlatforms[static_cast<std::size_t>(p)]; }
std::string_view name_of(AttentionKind k) { return kKinds[static_cast<std::size_t>(k)]; }
std::string_view name_of(KvCacheDtype d) { return kKvDtypes[static_cast<std::size_t>(d)]; }
std::string_view name_of(Phase p) { return kPhases[static_cast<std::size_t>(p)]; }
std::string_view name_of(Preference p) { return kPreferences[static_cast<std::size_t>(p)]; }
std::string_view name_of(Severity s) { return kSeverities[static_cast<std::size_t>(s)]; }
std::string_view name_of(ComputeDtype d) { return kComputeDtypes[static_cast<std::size_t>(d)]; }

std::optional<Platform> parse_platform(std::string_view s) { return parse_enum<Platform>(s, kPlatforms); }
std::optional<AttentionKind> parse_kind(std::string_view s) { return parse_enum<AttentionKind>(s, kKinds); }
std::optional<KvCacheDtype> parse_kv_dtype(std::string_view s) {
  if (s == "bfloat16") return KvCacheDtype::bf16;  // SGLang's long spelling
  return parse_enum<KvCacheDtype>(s, kKvDtypes);
}
std::optional<Phase> parse_phase(std::string_view s) { return parse_enum<Phase>(s, kPhases); }
std::optional<Preference> parse_preference(std::string_view s) {
  if (s == "sglang-default") return Preference::sglang_default;  // its name before vLLM came
  return parse_enum<Preference>(s, kPreferences);
}
std::optional<Severity> parse_severity(std::string_view s) { return parse_enum<Severity>(s, kSeverities); }
std::optional<ComputeDtype> parse_compute_dtype(std::string_view s) {
  if (s == "bfloat16") return ComputeDtype::bf16;
  if (s == "float16" || s == "half") return ComputeDtype::fp16;
  if (s == "float32" || s == "float") return ComputeDtype::fp32;
  return parse_enum<ComputeDtype>(s, kComputeDtypes);
}

std::string_view platform_names() { return "cuda, rocm, npu, xpu, cpu, mps"; }
std::string_view kind_names() { return "mha, mla, gdn, dsa"; }
std::string_view kv_dtype_names() { return "auto, bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, fp4_e2m1"; }
std::string_view compute_dtype_names() { return "auto, fp16, bf16, fp32"; }

}  // namespace attnsel
