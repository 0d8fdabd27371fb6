// Domain vocabulary shared by every layer: versions, platforms, attention kinds, KV dtypes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "attnsel/export.hpp"

namespace attnsel {

// A "major.minor" version: compute capabilities (9.0, 12.1) and CUDA versions (12.8, 13.0).
struct Version {
  int major = 0;
  int minor = 0;

  friend constexpr bool operator==(Version a, Version b) { return a.major == b.major && a.minor == b.minor; }
  friend constexpr bool operator!=(Version a, Version b) { return !(a == b); }
  friend constexpr bool operator<(Version a, Version b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
  friend constexpr bool operator<=(Version a, Version b) { return !(b < a); }
  friend constexpr bool operator>(Version a, Version b) { return b < a; }
  friend constexpr bool operator>=(Version a, Version b) { return !(a < b); }
};

using ComputeCapability = Version;
using CudaVersion = Version;

// "12.8" -> {12, 8}; "13" -> {13, 0}. Rejects anything else ("12.x", "", "1.2.3", huge numbers).
ATTNSEL_API std::optional<Version> parse_version(std::string_view text);
ATTNSEL_API std::string to_string(Version v);
// The compute capability as SGLang and nvcc spell it: {9, 0} -> "sm90", {12, 1} -> "sm121".
ATTNSEL_API std::string sm_name(ComputeCapability cc);

// Half-open [min, max); a missing bound is unbounded.
struct VersionRange {
  std::optional<Version> min;
  std::optional<Version> max;

  constexpr bool contains(Version v) const {
    return (!min || v >= *min) && (!max || v < *max);
  }
};
ATTNSEL_API std::string to_string(const VersionRange& r);

enum class Platform : std::uint8_t { cuda, rocm, npu, xpu, cpu, mps };
enum class AttentionKind : std::uint8_t { mha, mla, gdn, dsa };
enum class KvCacheDtype : std::uint8_t { auto_, bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, fp4_e2m1 };
enum class Phase : std::uint8_t { prefill, decode };
enum class Preference : std::uint8_t { sglang_default, prefix_reuse, throughput };
// The dtype a model computes in (diffusion engines choose kernels by it).
enum class ComputeDtype : std::uint8_t { auto_, fp16, bf16, fp32 };
inline constexpr int kComputeDtypeCount = 4;
enum class Severity : std::uint8_t { info, warning, error };

inline constexpr int kPlatformCount = 6;
inline constexpr int kKindCount = 4;
inline constexpr int kKvDtypeCount = 7;
inline constexpr int kPhaseCount = 2;

// Spelling as on SGLang's command line; parse_* return nullopt for unknown names.
ATTNSEL_API std::string_view name_of(Platform p);
ATTNSEL_API std::string_view name_of(AttentionKind k);
ATTNSEL_API std::string_view name_of(KvCacheDtype d);
ATTNSEL_API std::string_view name_of(Phase p);
ATTNSEL_API std::string_view name_of(Preference p);
ATTNSEL_API std::string_view name_of(Severity s);
ATTNSEL_API std::string_view name_of(ComputeDtype d);

ATTNSEL_API std::optional<Platform> parse_platform(std::string_view s);
ATTNSEL_API std::optional<AttentionKind> parse_kind(std::string_view s);
ATTNSEL_API std::optional<KvCacheDtype> parse_kv_dtype(std::string_view s);
ATTNSEL_API std::optional<Phase> parse_phase(std::string_view s);
ATTNSEL_API std::optional<Preference> parse_preference(std::string_view s);
ATTNSEL_API std::optional<Severity> parse_severity(std::string_view s);
ATTNSEL_API std::optional<ComputeDtype> parse_compute_dtype(std::string_view s);

// Every valid spelling, in declaration order, for "valid choices" messages.
ATTNSEL_API std::string_view platform_names();
ATTNSEL_API std::string_view kind_names();
ATTNSEL_API std::string_view kv_dtype_names();
ATTNSEL_API std::string_view compute_dtype_names();

}  // namespace attnsel
