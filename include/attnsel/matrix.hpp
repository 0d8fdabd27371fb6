// The capability matrix: backends, their cells, rules and automatic-selection priorities,
// loaded from JSON (data/*.json) into an immutable, typed, index-based structure.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/types.hpp"

namespace attnsel {

using BackendId = std::uint16_t;
using SlotId = std::uint8_t;
inline constexpr BackendId kNoBackend = 0xFFFF;
inline constexpr std::size_t kMaxBackends = 128;
using BackendSet = std::bitset<kMaxBackends>;

// A set of enum values in one word.
template <class E>
class EnumSet {
 public:
  constexpr EnumSet() = default;
  constexpr EnumSet(std::initializer_list<E> values) {
    for (E v : values) insert(v);
  }
  static constexpr EnumSet from_bits(std::uint32_t bits) {
    EnumSet s;
    s.bits_ = bits;
    return s;
  }
  static constexpr EnumSet all(int count) {
    EnumSet s;
    s.bits_ = (1u << count) - 1;
    return s;
  }
  constexpr void insert(E v) { bits_ |= bit(v); }
  constexpr bool contains(E v) const { return (bits_ & bit(v)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr std::uint32_t bits() const { return bits_; }
  friend constexpr bool operator==(EnumSet a, EnumSet b) { return a.bits_ == b.bits_; }
  friend constexpr bool operator!=(EnumSet a, EnumSet b) { return a.bits_ != b.bits_; }

 private:
  static constexpr std::uint32_t bit(E v) { return 1u << static_cast<unsigned>(v); }
  std::uint32_t bits_ = 0;
};

// What every rule-like entry carries: a stable id, a message template and its provenance.
// A model-visible feature a backend may lack (sliding window, sinks ...).
enum class Feature : std::uint8_t { sliding_window, multimodal, attention_sinks, chunked_prefix_cache };
inline constexpr int kFeatureCount = 4;
ATTNSEL_API std::string_view name_of(Feature f);

struct RuleInfo {
  std::string id;
  Severity severity = Severity::error;
  std::string message;  // template: {backend} {phase} {kind} {gpu} {cuda} {kv_dtype} {topk} {page_size} {from} {to} {supported}
  std::string source;   // upstream document or code location
  std::string note;     // why a conflict was decided this way, if any
  std::string pointer;  // JSON pointer of the entry in its matrix file
};

// Integers in a half-open range [min, max) that are multiples of `multiple_of` (1: every one).
struct IntRange {
  std::optional<int> min;
  std::optional<int> max;
  int multiple_of = 1;
  ATTNSEL_API bool matches(int v) const;
};

// Integer predicate: any of some values and ranges (`8`, `[32, 64]`, `{"min": 2}`,
// `[64, {"multiple_of": 8, "max": 257}]`).
struct IntMatch {
  std::vector<int> values;
  std::vector<IntRange> ranges;
  ATTNSEL_API bool matches(int v) const;
  bool empty() const { return values.empty() && ranges.empty(); }
};

// A condition over a request and, where the scope allows, a candidate backend and phase.
// Fields combine with AND; `all`, `any` and `not` nest. An absent field matches anything.
struct Condition {
  enum Field : std::uint64_t {
    f_backend = 1u << 0, f_phase = 1u << 1, f_prefill_backend = 1u << 2, f_decode_backend = 1u << 3,
    f_any_backend = 1u << 4, f_hybrid = 1u << 5, f_kind = 1u << 6, f_platform = 1u << 7, f_cc = 1u << 8,
    f_cuda = 1u << 9, f_kv_dtype = 1u << 10, f_topk = 1u << 11, f_page_size = 1u << 12,
    f_page_size_explicit = 1u << 13, f_backend_explicit = 1u << 14, f_sliding_window = 1u << 15,
    f_multimodal = 1u << 16, f_attention_sinks = 1u << 17, f_deterministic = 1u << 18, f_family = 1u << 19,
    f_spec_mode = 1u << 20, f_radix_cache = 1u << 21, f_kv_dtype_explicit = 1u << 22, f_dtype = 1u << 23,
    f_installed = 1u << 24, f_architecture = 1u << 25, f_kv_heads = 1u << 26, f_head_dim = 1u << 27,
    f_config_has = 1u << 28, f_config_lacks = 1u << 29, f_kv_dtype_written = 1u << 30, f_phase_flag = 1u << 31,
    f_heads_per_rank = 1ull << 32, f_replaced = 1ull << 33,
  };
  std::uint64_t fields = 0;  // which of the fields below are set (including nested ones, see uses())

  BackendSet backend, prefill_backend, decode_backend, any_backend;
  EnumSet<Phase> phase;
  EnumSet<AttentionKind> kind;
  EnumSet<Platform> platform;
  EnumSet<KvCacheDtype> kv_dtype;
  EnumSet<ComputeDtype> dtype;
  std::vector<std::string> installed;  // every package listed is installed
  std::vector<VersionRange> cc, cuda;
  IntMatch topk, page_size;
  bool hybrid = false, page_size_explicit = false, backend_explicit = false, sliding_window = false,
       multimodal = false, attention_sinks = false, deterministic = false, radix_cache = false,
       kv_dtype_explicit = false;
  // The candidate was named with its phase's own flag (--prefill-attention-backend), not the slot's joint one.
  bool phase_flag = false;
  // The candidate runs because the engine replaced another backend by a rule that sets `backend`
  // (SGLang's fa3 -> triton for fp8_e5m2), not because it was named or chosen: a check the engine
  // makes before that replacement tests `replaced: false`.
  bool replaced = false;
  Phase spec_mode = Phase::prefill;
  std::vector<std::string> family;
  std::vector<std::string> architecture;  // the model's architecture is one of these
  IntMatch kv_heads, head_dim;            // a model whose value is unknown never matches
  // Attention heads on each GPU: the model's heads divided by the tensor-parallel size (vLLM's
  // get_num_attention_heads); a model whose head count is unknown never matches.
  IntMatch heads_per_rank;
  // Every key is in (config_has), or none is in (config_lacks), the model's config.json; a model not
  // read from a config.json matches neither, so rules on them stay quiet rather than guess.
  std::vector<std::string> config_has, config_lacks;
  // The KV cache dtype as the user wrote it is one of these, in the engine's own spelling (vLLM's
  // "fp8" and "fp8_e4m3" are one attnsel dtype but not one choice to every backend); a request
  // that names none matches none.
  std::vector<std::string> kv_dtype_written;

  std::vector<Condition> all, any, none;  // none: "not" (matches when no entry matches)

  // Every field used here or in nested conditions.
  ATTNSEL_API std::uint64_t uses() const;
};

// any: in-kernel paging of any size; emulated: the wrapper emulates pages > 1; fixed: only `sizes`;
// multiple: any multiple of `multiple_of` (vLLM's MultipleOf(16) kernel block sizes).
enum class PageMode : std::uint8_t { any, emulated, fixed, multiple };
struct PageSupport {
  PageMode mode = PageMode::emulated;
  std::vector<int> sizes;  // for fixed: the only sizes the kernel runs with
  int multiple_of = 1;     // for multiple
  ATTNSEL_API bool allows(int page_size) const;
};

// Speculative decoding (EAGLE) draft tree width the backend can verify.
enum class TopkSupport : std::uint8_t {
  none,           // no speculative decoding
  one,            // topk = 1 only
  many_at_page1,  // topk > 1 only with page size 1
  any,
};
ATTNSEL_API std::string_view name_of(TopkSupport t);

// One backend's capabilities for some attention kinds on some platforms.
struct Cell {
  EnumSet<AttentionKind> kinds;
  EnumSet<Platform> platforms;
  std::vector<VersionRange> compute_capability;  // empty: no constraint
  std::optional<CudaVersion> min_cuda;
  EnumSet<Phase> phases;
  PageSupport page_size;
  EnumSet<KvCacheDtype> kv_dtypes;
  EnumSet<ComputeDtype> dtypes = EnumSet<ComputeDtype>::all(kComputeDtypeCount);  // model compute dtypes
  std::vector<std::string> requires_packages;  // optional Python packages the kernel needs
  TopkSupport speculative = TopkSupport::none;
  std::optional<int> preferred_page_size;  // a page size the backend is documented to run best with
  IntMatch head_sizes;                     // the head sizes the kernels take; empty: any
  // Optional features; absent means "no".
  bool features[kFeatureCount] = {false, false, false, false};  // indexed by Feature
  bool has(Feature f) const { return features[static_cast<int>(f)]; }
  std::string source;
  std::string note;
  std::string pointer;
};

// A role a backend plays: "attention" (full attention), "linear" (GDN kernels), "sparse" (DSA sub-backends).
struct Slot {
  std::string name;
  std::string title;
  EnumSet<AttentionKind> kinds;   // model kinds that have this slot
  bool joint = true;              // automatic selection picks one backend for every phase
  bool phased = true;             // false: one backend for the whole forward pass (no prefill/decode split)
  std::string flag;               // sets every phase, e.g. --attention-backend
  std::string prefill_flag;       // e.g. --prefill-attention-backend
  std::string decode_flag;        // e.g. --decode-attention-backend
  std::vector<std::string> flag_aliases;  // deprecated spellings still accepted (--nsa-prefill-backend)
  std::optional<BackendId> sglang_default;  // the value SGLang uses when the flag is absent (not auto-selected)
  // Planned only while an earlier slot runs one of these backends in some phase (DSA's sparse
  // sub-backends run inside the DSA attention backend alone); unset: whenever the model's kind has it.
  std::optional<SlotId> only_with_slot;
  std::vector<BackendId> only_with;
  std::string source;
  // SGLang: with the phases named apart, the joint flag still gets the engine's automatic choice,
  // and that backend's page-size rewrite applies though no phase runs it (server_args.py
  // _handle_attention_backend_compatibility). The finding told when it changes the page size.
  std::optional<RuleInfo> split_default;
};

// A parameter of a backend's --attention-backend-config.
struct ConfigParam {
  enum class Type : std::uint8_t { string, integer, number, boolean, int_list };
  std::string name;
  Type type = Type::string;
  bool required = false;
  std::optional<double> min, max;  // inclusive, for integer and number
  std::string default_text;        // for people
  std::string description;
};
ATTNSEL_API std::string_view name_of(ConfigParam::Type t);

struct Backend {
  std::string name;
  std::string title;
  SlotId slot = 0;
  std::vector<std::string> aliases;  // deprecated names ("nsa" for "dsa")
  std::vector<Cell> cells;
  std::vector<ConfigParam> config;  // --attention-backend-config parameters, if the backend takes any
  std::string config_source;
  std::string source;
  std::string note;
  std::string pointer;
};

enum class RuleScope : std::uint8_t {
  request,  // normalises the request before candidates are evaluated (kv dtype "auto" -> fp8_e4m3)
  backend,  // evaluated for every candidate backend in every phase
  plan,     // evaluated once on the chosen backends and page size
};

// What SGLang does silently when a rule fires.
struct Effect {
  std::optional<int> page_size;
  std::optional<BackendId> backend;
  std::optional<KvCacheDtype> kv_dtype;
  // The model's compute dtype from here on (vLLM runs Gemma in float32 where a GPU has no bfloat16).
  std::optional<ComputeDtype> dtype;
  // The engine runs the model as this attention kind (vLLM runs MiniCPM3 as multi-head attention).
  std::optional<AttentionKind> kind;
  // The speculative top-k the engine runs with from here on (SGLang v0.4.6 lowers it to 1 at a
  // page size above 1).
  std::optional<int> topk;
  bool disable_radix_cache = false;
  // The engine ignores the backend named for the phase and chooses as if none had been named
  // (vLLM v0.11: an MLA backend in VLLM_ATTENTION_BACKEND for a model without MLA).
  bool ignore_choice = false;
  bool any() const { return page_size || backend || kv_dtype || dtype || kind || topk || disable_radix_cache || ignore_choice; }
};

struct Rule {
  RuleInfo info;
  RuleScope scope = RuleScope::backend;
  SlotId slot = 0;  // backend scope: the slot whose candidates it judges (default: the first, attention)
  Condition when;
  Effect set;
  bool strict_error = false;  // a warning that --strict turns into an error
};

// One step of SGLang's automatic selection: when `when` holds, SGLang picks `backend`.
struct SelectionEntry {
  RuleInfo info;
  SlotId slot = 0;
  EnumSet<Phase> phases;  // phases this entry decides (slots that are not joint decide per phase)
  Condition when;
  BackendId backend = kNoBackend;   // the engine's pick: backends.front()
  // A priority list (vLLM's _get_backend_priorities): the engine runs the first of these that
  // is valid for the request. One entry for a plain `backend`.
  std::vector<BackendId> backends;
};

// What a feature needs and how bad lacking it is (per matrix, in "features").
struct FeatureRule {
  RuleInfo info;
  Condition when;              // request-scope: when the model needs the feature
  std::uint32_t slots = ~0u;   // bit per slot the check applies to
};

struct MatrixInfo {
  std::string engine;         // "sglang"
  std::string title;          // the engine's name in messages ("SGLang", "vLLM"); the engine name when not given
  std::string version;        // the matrix's own version
  std::string engine_version; // the upstream release or commit it describes
  int schema_version = 1;
  bool paged_kv_cache = true;  // false for engines without a paged KV cache (diffusion): no page-size plan
  bool any_model = false;      // "models": "any": the choice does not depend on the model's attention kind
  // false: the engine's automatic walk takes a candidate whatever the page size (vLLM before v0.18
  // validated no kernel block size); one that cannot run the page is still the engine's choice
  bool selection_checks_page_size = true;
  std::string description;
  std::string source;
  std::string origin;         // where it was loaded from: "built-in", a file path
  std::string extends;        // the file it extends, if any (after composition)
};

// How the engine sizes the attention block of a hybrid model (Mamba or gated-delta-net layers beside
// attention) so that one block of the attention cache is at least one sequence's recurrent state:
// the block becomes alignment x ceil(state bytes / (alignment x attention bytes per token)) when the
// planned size is smaller (vLLM's HybridAttentionMambaModelConfig and, later,
// Platform._align_hybrid_block_size). The matrix's "hybrid_page" object; absent: no such step.
struct HybridAlignmentRule {
  Condition when;  // judged as a plan-scope condition on the chosen attention backend
  int alignment = 16;
};
struct HybridPagePolicy {
  int alignment = 16;                   // tokens: the raised block is a multiple of it
  std::vector<HybridAlignmentRule> alignment_rules;  // the first that holds sets the alignment
  bool alignment_from_backend = false;  // the chosen backend's smallest kernel block, where its cell names one
  bool align_to_block_size = false;     // the alignment is at least the planned block size
  bool only_given_block_size = false;   // a block size the user did not give is left at the default
  bool before_selection = false;        // a given block is raised before the backends are chosen (vLLM <= 0.21)
  std::vector<std::string> float32_state_architectures;  // the SSM state kept in float32 unless told otherwise
  RuleInfo info;                        // the note the plan carries when it raises the block ({from}, {to})
};

// The engine's own rules (Matrix::builtin).
enum class BuiltinRule : std::uint8_t {
  kind, platform, compute_capability, cuda, phase, kv_dtype, page_size, speculative, unknown_device,  // a cell's columns
  dtype, requires_package, requires_unknown, head_size,
  no_backend, default_fails, slot_unused, page_conflict, page_rewrite_conflict,
  config_unused, config_unknown_key, config_type, config_range, config_required,
  count
};

// Immutable once loaded; share it across threads freely.
class ATTNSEL_API Matrix {
 public:
  const MatrixInfo& info() const { return info_; }
  const std::vector<Slot>& slots() const { return slots_; }
  const std::vector<Backend>& backends() const { return backends_; }
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<SelectionEntry>& selection() const { return selection_; }
  // Null when the matrix declares no rule for the feature (then it is never checked).
  const FeatureRule* feature_rule(Feature f) const;
  int default_page_size() const { return default_page_size_; }
  const std::optional<HybridPagePolicy>& hybrid_page() const { return hybrid_page_; }
  // Rules of the engine itself: a cell's columns (platform, compute capability, KV dtype ...) and
  // outcomes such as "no backend can run this", indexed by BuiltinRule.
  const RuleInfo& builtin(BuiltinRule r) const { return builtin_[static_cast<std::size_t>(r)]; }

  // By name or alias; nullopt when unknown.
  std::optional<BackendId> find_backend(std::string_view name) const;
  std::optional<BackendId> find_backend(std::string_view name, SlotId slot) const;
  std::optional<SlotId> find_slot(std::string_view name) const;
  const Backend& backend(BackendId id) const { return backends_[id]; }
  const Slot& slot(SlotId id) const { return slots_[id]; }
  // The names valid in a slot, for error messages.
  std::vector<std::string> backend_names(SlotId slot) const;
  // The cell of a backend that covers a kind on a platform, or null.
  // The cell for this kind and platform; where a backend has several (disjoint compute capability
  // ranges), the one covering `cc`, else the first (whose range check then rejects the GPU).
  const Cell* cell_for(BackendId id, AttentionKind kind, Platform platform,
                       std::optional<ComputeCapability> cc = std::nullopt) const;
  const Rule* find_rule(std::string_view id) const;

  // Rules per scope and, for backend scope, per backend (rules naming no backend apply to all).
  const std::vector<const Rule*>& rules_in(RuleScope scope) const { return by_scope_[static_cast<int>(scope)]; }
  const std::vector<const Rule*>& backend_rules(BackendId id) const { return by_backend_[id]; }
  // Whether some rule's condition tests this field (nested conditions included): the engine skips
  // work no rule asks for (Condition::replaced).
  bool rules_test(Condition::Field field) const { return (rule_fields_ & field) != 0; }

 private:
  friend class MatrixBuilder;
  friend struct ImageCodec;  // the compiled matrix image (src/matrix/image.cpp)
  MatrixInfo info_;
  std::vector<Slot> slots_;
  std::vector<Backend> backends_;
  std::vector<Rule> rules_;
  std::vector<SelectionEntry> selection_;
  std::vector<FeatureRule> features_;
  std::optional<std::size_t> feature_index_[kFeatureCount];
  int default_page_size_ = 1;
  std::optional<HybridPagePolicy> hybrid_page_;
  std::vector<RuleInfo> builtin_;
  std::vector<const Rule*> by_scope_[3];
  std::vector<std::vector<const Rule*>> by_backend_;
  std::uint64_t rule_fields_ = 0;  // every Condition field some rule's condition uses
};


// An engine release: "0.5.3", "v0.5.3", "0.5" (patch 0), "0.5.3.post1" (post releases count as 0.5.3).
struct ReleaseVersion {
  int major = 0, minor = 0, patch = 0;
  friend bool operator<(ReleaseVersion a, ReleaseVersion b) {
    if (a.major != b.major) return a.major < b.major;
    if (a.minor != b.minor) return a.minor < b.minor;
    return a.patch < b.patch;
  }
  friend bool operator==(ReleaseVersion a, ReleaseVersion b) { return !(a < b) && !(b < a); }
  friend bool operator<=(ReleaseVersion a, ReleaseVersion b) { return !(b < a); }
};
ATTNSEL_API std::optional<ReleaseVersion> parse_release(std::string_view text);
ATTNSEL_API std::string to_string(ReleaseVersion v);

// One generation of an engine's matrix: the file that describes releases from `since` on
// (data/engines/<engine>/generations.json lists them).
struct MatrixGeneration {
  std::string engine;      // "sglang", "sglang-diffusion"
  ReleaseVersion since;
  std::string file;        // "sglang-0.5.3.json"
  std::string label;       // "v0.5.3 to v0.5.9"
  std::string source;      // how the generation was dated
  bool default_engine = false;
};
ATTNSEL_API Result<std::vector<MatrixGeneration>> builtin_generations();
// The newest release a built-in generation of `engine` is known to cover (the upper end of a
// label "v0.5.3 to v0.5.9", else its `since`); nullopt for an engine without one. A release newer
// than this is checked against the newest matrix, with a warning.
ATTNSEL_API std::optional<ReleaseVersion> newest_known_release(std::string_view engine);

// The built-in matrix of an engine for a release: the newest generation not newer than `release`
// (the newest of all without one). Unknown engines and releases older than every generation
// are errors (unknown_name / invalid_argument) that list what exists.
ATTNSEL_API Result<std::shared_ptr<const Matrix>> builtin_matrix(std::string_view engine,
                                                                std::optional<ReleaseVersion> release = std::nullopt);
// The built-in matrix a check judges a release of `engine` against: builtin_matrix(engine, release),
// except that a release older than every generation gets the oldest generation, with `oldest` set to
// the first release it describes (rule check.release-older: the release's own launch grammar and
// advisories still apply). Errors only as builtin_matrix() does for other reasons.
struct JudgedMatrix {
  std::shared_ptr<const Matrix> matrix;
  std::optional<ReleaseVersion> oldest;  // set: the release predates every generation
};
ATTNSEL_API Result<JudgedMatrix> builtin_matrix_to_judge(std::string_view engine, const ReleaseVersion& release);
// A built-in matrix file by name ("sglang-0.4.6.json"); cached, shared.
ATTNSEL_API Result<std::shared_ptr<const Matrix>> builtin_matrix_file(std::string_view file);

// Loading. `origin` names the input in messages ("data/engines/sglang/matrix-0.5.12.json", "built-in").
// A document with "extends" is composed onto its base first (a file next to it, or a built-in one).
ATTNSEL_API Result<std::shared_ptr<const Matrix>> load_matrix(std::string_view json_text, std::string_view origin);
ATTNSEL_API Result<std::shared_ptr<const Matrix>> load_matrix_file(const std::string& path);
// The default engine's newest built-in matrix (sglang, its newest generation).
ATTNSEL_API Result<std::shared_ptr<const Matrix>> builtin_matrix();
// Its info alone, without loading the matrix where the compiled image has it.
ATTNSEL_API Result<MatrixInfo> builtin_matrix_info();

}  // namespace attnsel
