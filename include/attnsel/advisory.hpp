// Advisories: known engine bugs as data (data/engines/<engine>/advisories.json, docs/advisories.md).
//
// The capability matrix says what an engine can do; an advisory says where a release breaks
// although the configuration is allowed. This header loads them (validated: unknown keys, ids out
// of order, a bad range are errors with the JSON pointer) and matches them against a checked
// command's plan: engine, release, GPU, platform, the backends in effect (the user's or the
// engine's own choice), KV dtype, model, flags and environment. check_command() reports each match
// as a finding `advisory.<ID>`; `attnsel advisories` lists them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/request.hpp"
#include "attnsel/types.hpp"

namespace attnsel {

// A flag or environment condition: {"flag": F} / {"name": V} with value, values, min or absent.
struct AdvisoryCondition {
  std::string name;                  // "--page-size", "SGLANG_USE_AITER"
  std::vector<std::string> values;   // any of them (value is one); empty: any value
  std::optional<double> min;         // the numeric value is at least this
  bool absent = false;               // holds when the flag or variable is not given
  std::string note;
};

struct AdvisoryEvidence {
  std::string url, who, date, text;
};

struct Advisory {
  std::string id;       // "SGL-ADV-0012"
  std::string engine;   // "sglang", "vllm"
  std::string title;
  std::string status;   // fixed, mitigated, open
  std::string effect;   // crash, refuses-to-start, wrong-output, hang, silent-slowdown, oom
  std::optional<ReleaseVersion> introduced, fixed;  // first affected, first fixed; unset: unknown
  std::string introduced_text, fixed_text;          // as written ("0.5.10.post1")
  std::string fix_merged;                           // YYYY-MM-DD, "" when unknown
  std::string range_note;
  bool likely_main_only = false;
  std::vector<std::string> affected_reported;
  // Conditions; an empty one does not constrain.
  std::string runtime = "llm";  // llm or diffusion
  std::string platform;         // cuda, rocm, npu, xpu, cpu; "" any
  std::vector<std::string> gpus, backends, kv_cache_dtypes, model_families, architectures, model_traits, models;
  std::vector<AdvisoryCondition> flags, env;
  std::string summary, workaround, notes;
  std::vector<std::string> issues, fix, related;  // links
  std::vector<AdvisoryEvidence> evidence;

  // The first link to cite: the first issue, else the first fix, else the first related thread.
  const std::string& link() const;
  // crash, refuses-to-start, wrong-output, hang: the launch fails or its answers are wrong.
  bool severe() const;
};

// Parses and validates an advisories document (docs/advisories.md): unknown keys, wrong types,
// an id that is not <PREFIX>-ADV-NNNN in file order, `engine` differing from the file's,
// introduced after fixed, an evidence URL that is not among the links are errors naming the JSON
// pointer. `origin` names the input in messages.
ATTNSEL_API Result<std::vector<Advisory>> load_advisories(std::string_view json_text, std::string_view origin);
// The built-in advisories of an engine (data/engines/<engine>/advisories.json, compiled in), loaded
// once; empty for an engine without a file. Errors: the file is invalid.
ATTNSEL_API Result<std::shared_ptr<const std::vector<Advisory>>> builtin_advisories(std::string_view engine);
// The engines that have built-in advisories, in name order.
ATTNSEL_API std::vector<std::string> advisory_engines();

// What an advisory is matched against: one command's plan on one target.
struct AdvisoryQuery {
  std::string engine;                       // "sglang", "vllm"
  std::string runtime = "llm";              // llm or diffusion
  std::optional<ReleaseVersion> release;    // unset: not known (the newest matrix was assumed)
  std::string release_text;                 // as given
  DeviceInfo device;                        // platform, arch, name
  std::vector<std::string> backends;        // the attention backends in effect, any phase and slot
  bool backends_known = true;               // false: the plan was not made (the command fails before)
  std::string kv_cache_dtype = "auto";      // canonical: auto, bf16, fp16, fp8_e4m3, fp8_e5m2, fp4_e2m1
  ModelTraits model;
  bool model_known = false;                 // traits read from the model table or a config.json
  // Flags as the engine reads them: every name of the flag (aliases), the name written, its last value.
  struct Flag {
    std::vector<std::string> names;
    std::string written;
    std::optional<std::string> value;
  };
  std::vector<Flag> flags;
  bool flags_open_ended = false;            // "$@": an absent flag may be given after all
  std::vector<std::pair<std::string, std::string>> env;  // name, value
};

struct AdvisoryMatch {
  const Advisory* advisory = nullptr;
  Severity severity = Severity::warning;
  // Why this severity, for the message: "release 0.5.9 is inside the affected range [0.5.7, 0.5.10)",
  // "the range is not known (fix merged 2025-10-02)", "fixed in 0.5.10: upgrade if you run an older release".
  std::string standing;
  bool in_range = false;       // the release is known to be affected
  bool traits_assumed = false; // the model's traits were not known: the bug may not apply
  std::string flag;            // the first flag condition that holds with the flag given ("" none)
};

// The advisories whose conditions all hold, with their severity (docs/advisories.md, "Matching and
// severity"): inside a known range, crash/refuses-to-start/wrong-output/hang are errors and
// slowdowns/OOM warnings; an unknown range is a warning; a release at or after the fix, before the
// introduction, or a tagged release for a main-only bug is no match; with the release unknown, a
// fixed bug is a note naming the fix. Traits that could not be read cap the severity at a warning.
ATTNSEL_API std::vector<AdvisoryMatch> match_advisories(const std::vector<Advisory>& advisories,
                                                        const AdvisoryQuery& query);

// Filters for `attnsel advisories`: every non-empty field must hold (case-insensitive).
struct AdvisoryFilter {
  std::string engine, gpu, backend, platform, effect, model;
  std::optional<ReleaseVersion> release;  // affected (or range unknown) at this release
};
ATTNSEL_API bool advisory_selected(const Advisory& a, const AdvisoryFilter& f);
// "affected", "unknown" (the range is not known for it) or "fixed"/"not yet introduced" at `release`.
ATTNSEL_API std::string_view advisory_standing(const Advisory& a, ReleaseVersion release);

// The JSON of one advisory as `attnsel advisories --format json` prints it (the data file's fields).
ATTNSEL_API std::string advisory_json(const Advisory& a, int indent = 2);

}  // namespace attnsel
