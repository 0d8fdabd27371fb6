// How much of their space the sweeps (oracle_test, oracle_vllm_test, whole_space_test) cover.
//
//   ATTNSEL_SWEEP unset or "full": everything. `scripts/dev test` (the README's test command, CI's
//                                  first step) runs the sweeps this way, and only this way judges
//                                  the agreement floors and the stale allowlist entries.
//   ATTNSEL_SWEEP=sample:          a fixed, deterministic share: every kOracleStride-th case of an
//                                  oracle answer set, one CUDA version per architecture in a lint.
//                                  The sanitizer test presets (CMakePresets.json) set it: there the
//                                  sweeps look for memory errors and undefined behaviour in code paths
//                                  a sample already walks, at 10-50 times the Release cost.
// Any other value fails the test that reads it: a typo must not quietly sweep less.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace attnsel::sweep {

enum class Mode { full, sample };

inline constexpr int kOracleStride = 8;  // in sample mode, cases 0, 8, 16, ... of each answer set

inline Mode mode() {
  const char* v = std::getenv("ATTNSEL_SWEEP");
  if (!v || !*v || std::string(v) == "full") return Mode::full;
  if (std::string(v) == "sample") return Mode::sample;
  throw std::invalid_argument("ATTNSEL_SWEEP='" + std::string(v) + "': one of full, sample");
}

// The line a sampled sweep prints, so no log shows a sample as the whole.
inline std::string notice(const std::string& what) {
  return "ATTNSEL_SWEEP=sample: " + what +
         "; the full sweep, with the floors and stale-entry checks, runs in the Release tests (scripts/dev test)\n";
}

}  // namespace attnsel::sweep
