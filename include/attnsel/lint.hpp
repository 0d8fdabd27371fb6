// Whole-space consistency of a matrix: automatic selection checked against explicit validation
// over every catalog GPU x CUDA version x model x KV dtype x top-k x page size x sliding window.
//
// For each configuration the engine chooses automatically; a valid plan is then replayed as if the
// user had passed it (same request, the plan's backends per slot and phase, the plan's page size).
// A replay that is rejected, or that ends on another page size or backend, is a matrix
// inconsistency. A configuration with no automatic plan although some explicit combination of
// backends is valid is a missed case. Rules and selection entries that never fire anywhere and
// backends that are never chosen nor valid are reported too.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/export.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/request.hpp"

namespace attnsel {

struct LintOptions {
  // CUDA versions tried on every NVIDIA architecture, filtered by the architecture's [min_cuda, max_cuda).
  std::vector<std::string> cuda_versions = {"12.1", "12.3", "12.4", "12.6", "12.8", "12.9", "13.0"};
  // Platforms that need no GPU (resolve_device with --platform); ROCm comes from the catalog's architectures.
  std::vector<Platform> gpu_less_platforms = {Platform::npu, Platform::xpu, Platform::cpu, Platform::mps};
  std::vector<KvCacheDtype> kv_dtypes = {KvCacheDtype::auto_, KvCacheDtype::bf16, KvCacheDtype::fp8_e4m3,
                                         KvCacheDtype::fp8_e5m2, KvCacheDtype::fp4_e2m1};
  std::vector<int> topks = {0, 1, 2};
  std::vector<std::optional<int>> page_sizes = {std::nullopt, 1, 16, 32, 64, 128};
  // Models: the four kinds always; with model_families also one model per family of the model table
  // (its family name, sliding window, multimodal and attention-sink traits), which rules may single out.
  bool model_families = false;
  bool deterministic = false;  // also every configuration with --enable-deterministic-inference
  // Per configuration, each backend explicitly in each phase it has a cell for: what makes a rule that
  // only judges explicit or non-chosen backends fire, and tells whether a backend is ever valid.
  bool explicit_probes = true;
  // When automatic selection fails, try every explicit combination of backends (every slot, every phase).
  bool search_missed = true;
  std::size_t max_examples = 20;  // distinct problems kept (one example per distinct problem)
  // Threads sweeping the space; 0: one per core (std::thread::hardware_concurrency()). The report is
  // the same whatever the count.
  std::size_t threads = 0;
};

enum class LintProblemKind : std::uint8_t {
  replay_rejected,  // the automatic plan, passed explicitly, is invalid
  replay_differs,   // passed explicitly, it runs another backend or page size
  missed,           // no automatic plan, yet an explicit combination is valid
  engine_error,     // select() returned an Error (never expected: every name comes from the matrix)
};
ATTNSEL_API std::string_view name_of(LintProblemKind k);

// One distinct problem: its kind, what went wrong, how many configurations show it, and the first one.
struct LintProblem {
  LintProblemKind kind = LintProblemKind::replay_rejected;
  std::string detail;       // "replay rejected: cell.page-size (fa4, decode)", "page 64 -> 128" ...
  std::size_t count = 0;    // configurations with this same problem
  std::string args;         // the first configuration, as attnsel arguments
  std::string replay_args;  // the explicit replay (for missed: a valid explicit combination)
};

// A matrix entry that never fired (a rule) or matched (a selection entry) anywhere in the space.
struct DeadEntry {
  std::string id;
  std::string what;     // "rule", "selection", "feature"
  std::string pointer;  // where it is in the matrix file
  // Request fields its condition reads that this space does not vary ("family", "deterministic" ...):
  // empty means it is dead; otherwise it is only not exercised by this space.
  std::vector<std::string> outside_space;
};

struct LintReport {
  std::size_t configurations = 0;  // requests in the space
  std::size_t devices = 0, models = 0;
  std::size_t selections = 0;      // select() calls: automatic, replays, probes, searches
  std::size_t auto_valid = 0, auto_invalid = 0;
  std::size_t replay_rejected = 0, replay_differs = 0, missed = 0, engine_errors = 0;  // configurations
  std::vector<LintProblem> problems;  // distinct problems, most frequent first (at most max_examples)
  std::vector<DeadEntry> dead;        // in matrix order: rules, features, then selection entries
  std::vector<std::string> unreachable_backends;  // "slot:name": never chosen automatically, never valid
  std::vector<std::string> explicit_only_backends;  // valid somewhere, never chosen automatically
  std::vector<std::string> fired;     // every rule or entry id that fired, sorted (for tests)

  std::size_t inconsistencies() const { return replay_rejected + replay_differs + missed + engine_errors; }
  bool consistent() const { return inconsistencies() == 0; }
  // Dead entries whose conditions read only fields the space varies.
  ATTNSEL_API std::size_t dead_count() const;
};

// Sweeps the space, on options.threads threads. Pure: no I/O, no clock; callers time it.
ATTNSEL_API LintReport lint_matrix(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                   const LintOptions& options = {});

// The report for people, and as one JSON object; `seconds` is the sweep's wall time (0: not shown).
ATTNSEL_API std::string render_lint_text(const LintReport& report, double seconds);
ATTNSEL_API std::string render_lint_json(const LintReport& report, double seconds, int indent = 2);

}  // namespace attnsel
