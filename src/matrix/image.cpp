// The compiled matrix image (image.hpp): one list of fields per type, read by a Writer at build
// time and by a Reader at run time.
#include "matrix/image.hpp"

#include <algorithm>
#include <bitset>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace attnsel {

// Reaches the private members of Matrix and Catalog (both name it a friend).
struct ImageCodec {
  template <class A>
  static void matrix(A& a, Matrix& m);
  template <class A>
  static void catalog(A& a, Catalog& c);
};

namespace image {
namespace {

constexpr char kMagic[8] = {'A', 'T', 'N', 'S', 'I', 'M', 'G', '\0'};

enum class Section : std::uint8_t { generations = 1, matrix = 2, catalog = 3, profile = 4 };

struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- the two directions ----

class Writer {
 public:
  static constexpr bool reading = false;
  struct Nesting {
    explicit Nesting(Writer&) {}
  };

  void raw(std::uint64_t v, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  template <class T>
  void scalar(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      raw(v ? 1 : 0, 1);
    } else if constexpr (std::is_same_v<T, double>) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof bits);
      raw(bits, 8);
    } else if constexpr (std::is_enum_v<T>) {
      raw(static_cast<std::uint64_t>(static_cast<std::underlying_type_t<T>>(v)), sizeof(T));
    } else {
      static_assert(std::is_integral_v<T>);
      raw(static_cast<std::uint64_t>(v), sizeof(T));  // two's complement; the reader sign-extends
    }
  }
  void count(std::size_t& n) {
    if (n > 0xFFFFFFFFu) throw Malformed("a sequence of more than 2^32 elements");
    raw(n, 4);
  }
  void string(std::string& s) {
    std::size_t n = s.size();
    count(n);
    out_.append(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  static constexpr bool reading = true;
  // A condition inside a condition: a broken blob cannot recurse without end.
  class Nesting {
   public:
    explicit Nesting(Reader& r) : r_(r) {
      if (++r_.depth_ > 64) throw Malformed("conditions nested deeper than 64 levels");
    }
    ~Nesting() { --r_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Reader& r_;
  };

  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  std::uint64_t raw(std::size_t bytes) {
    need(bytes);
    std::uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(&v, p_, bytes);  // the encoding's byte order: one copy
#else
    for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p_[i])) << (8 * i);
#endif
    p_ += bytes;
    return v;
  }
  template <class T>
  void scalar(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::uint64_t b = raw(1);
      if (b > 1) throw Malformed("a boolean that is neither 0 nor 1");
      v = b == 1;
    } else if constexpr (std::is_same_v<T, double>) {
      const std::uint64_t bits = raw(8);
      std::memcpy(&v, &bits, sizeof v);
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(static_cast<std::underlying_type_t<T>>(raw(sizeof(T))));
    } else {
      static_assert(std::is_integral_v<T>);
      std::uint64_t u = raw(sizeof(T));
      if constexpr (std::is_signed_v<T> && sizeof(T) < 8) {
        const std::uint64_t sign = std::uint64_t{1} << (8 * sizeof(T) - 1);
        if (u & sign) u |= ~((sign << 1) - 1);
      }
      v = static_cast<T>(u);
    }
  }
  void count(std::size_t& n) {
    n = static_cast<std::size_t>(raw(4));
    // Every element takes at least a byte: a count beyond what is left is a broken blob.
    if (n > static_cast<std::size_t>(end_ - p_)) throw Malformed("a count larger than the data left");
  }
  void string(std::string& s) { s = std::string(bytes()); }
  // A length-prefixed run of bytes, not copied.
  std::string_view bytes() {
    std::size_t n = 0;
    count(n);
    const std::string_view out(p_, n);
    p_ += n;
    return out;
  }
  bool at_end() const { return p_ == end_; }

  // Non-empty: the data path of the built-in profile being read from the embedded blob (which lives
  // as long as the process); its grammars then decode on first use.
  std::string lazy_profile;

 private:
  void need(std::size_t bytes) const {
    if (static_cast<std::size_t>(end_ - p_) < bytes) throw Malformed("truncated");
  }
  const char* p_;
  const char* end_;
  int depth_ = 0;
};

// ---- the generic shapes (declared first so that every overload sees every other) ----

template <class A, class T>
std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>> io(A& a, T& v);
template <class A>
void io(A& a, std::string& s);
template <class A, class T>
void io(A& a, std::vector<T>& v);
template <class A, class T>
void io(A& a, std::optional<T>& o);
template <class A, class T, class U>
void io(A& a, std::pair<T, U>& p);
template <class A, std::size_t N>
void io(A& a, std::bitset<N>& b);
template <class A, class E>
void io(A& a, EnumSet<E>& s);
template <class A, class T, std::size_t N>
void io(A& a, T (&array)[N]);
template <class A>
void io(A& a, GrammarList& list);

template <class A, class... T>
void fields(A& a, T&... members) {
  (io(a, members), ...);
}

// ---- the domain types: every field, in declaration order ----

template <class A> void io(A& a, Version& v) { fields(a, v.major, v.minor); }
template <class A> void io(A& a, VersionRange& r) { fields(a, r.min, r.max); }
template <class A> void io(A& a, ReleaseVersion& v) { fields(a, v.major, v.minor, v.patch); }
template <class A> void io(A& a, RuleInfo& r) { fields(a, r.id, r.severity, r.message, r.source, r.note, r.pointer); }
template <class A> void io(A& a, IntRange& r) { fields(a, r.min, r.max, r.multiple_of); }
template <class A> void io(A& a, IntMatch& m) { fields(a, m.values, m.ranges); }
template <class A>
void io(A& a, Condition& c) {
  const typename A::Nesting nested(a);  // all/any/not nest; the JSON loader allows 32 levels
  fields(a, c.fields, c.backend, c.prefill_backend, c.decode_backend, c.any_backend, c.phase, c.kind, c.platform,
         c.kv_dtype, c.dtype, c.installed, c.cc, c.cuda, c.topk, c.page_size, c.hybrid, c.page_size_explicit,
         c.backend_explicit, c.sliding_window, c.multimodal, c.attention_sinks, c.deterministic, c.radix_cache,
         c.kv_dtype_explicit, c.spec_mode, c.family, c.architecture, c.kv_heads, c.head_dim, c.heads_per_rank, c.config_has, c.config_lacks,
         c.kv_dtype_written, c.phase_flag, c.replaced, c.all, c.any, c.none);
}
template <class A> void io(A& a, PageSupport& p) { fields(a, p.mode, p.sizes, p.multiple_of); }
template <class A>
void io(A& a, Cell& c) {
  fields(a, c.kinds, c.platforms, c.compute_capability, c.min_cuda, c.phases, c.page_size, c.kv_dtypes, c.dtypes,
         c.requires_packages, c.speculative, c.preferred_page_size, c.head_sizes, c.features, c.source, c.note, c.pointer);
}
template <class A>
void io(A& a, Slot& s) {
  fields(a, s.name, s.title, s.kinds, s.joint, s.phased, s.flag, s.prefill_flag, s.decode_flag, s.flag_aliases,
         s.sglang_default, s.only_with_slot, s.only_with, s.source, s.split_default);
}
template <class A>
void io(A& a, ConfigParam& p) {
  fields(a, p.name, p.type, p.required, p.min, p.max, p.default_text, p.description);
}
template <class A>
void io(A& a, Backend& b) {
  fields(a, b.name, b.title, b.slot, b.aliases, b.cells, b.config, b.config_source, b.source, b.note, b.pointer);
}
template <class A> void io(A& a, Effect& e) {
  fields(a, e.page_size, e.backend, e.kv_dtype, e.dtype, e.kind, e.topk, e.disable_radix_cache, e.ignore_choice);
}
template <class A> void io(A& a, Rule& r) { fields(a, r.info, r.scope, r.slot, r.when, r.set, r.strict_error); }
template <class A> void io(A& a, SelectionEntry& e) { fields(a, e.info, e.slot, e.phases, e.when, e.backend, e.backends); }
template <class A> void io(A& a, FeatureRule& f) { fields(a, f.info, f.when, f.slots); }
template <class A>
void io(A& a, MatrixInfo& i) {
  fields(a, i.engine, i.title, i.version, i.engine_version, i.schema_version, i.paged_kv_cache, i.any_model,
         i.selection_checks_page_size,
         i.description, i.source, i.origin, i.extends);
}
template <class A> void io(A& a, HybridAlignmentRule& r) { fields(a, r.when, r.alignment); }
template <class A>
void io(A& a, HybridPagePolicy& p) {
  fields(a, p.alignment, p.alignment_rules, p.alignment_from_backend, p.align_to_block_size, p.only_given_block_size,
         p.before_selection,
         p.float32_state_architectures, p.info);
}
template <class A> void io(A& a, Matrix& m) { ImageCodec::matrix(a, m); }

template <class A> void io(A& a, GpuArch& g) { fields(a, g.arch, g.platform, g.compute_capability, g.family, g.min_cuda, g.max_cuda, g.source); }
template <class A> void io(A& a, GpuModel& g) { fields(a, g.name, g.aliases, g.arch); }
template <class A>
void io(A& a, ModelFamily& f) {
  fields(a, f.name, f.kind, f.sliding_window, f.multimodal, f.attention_sinks, f.architectures, f.models, f.names, f.head_dim,
         f.source);
}
template <class A> void io(A& a, Catalog& c) { ImageCodec::catalog(a, c); }

template <class A>
void io(A& a, Launcher& l) {
  fields(a, l.engine, l.label, l.module, l.program, l.subcommand, l.grammar, l.positional_model, l.images,
         l.source);
}
template <class A> void io(A& a, GrammarFlag::KeyField& k) { fields(a, k.key, k.field); }
template <class A>
void io(A& a, GrammarFlag& f) {
  fields(a, f.names, f.deprecated_names, f.dest, f.action, f.action_name, f.type, f.type_name, f.nargs_min, f.nargs_max,
         f.choices, f.required, f.deprecated, f.removed, f.replacement, f.line, f.field, f.key_fields, f.upper_case,
         f.unset_values);
}
template <class A>
void io(A& a, Grammar& g) {
  fields(a, g.name, g.since, g.engine_version, g.source, g.allow_abbrev, g.complete, g.config_flag, g.config_merge,
         g.underscore_dashes, g.dotted_keys, g.flags, g.index);
}
template <class A> void io(A& a, Vocabulary& v) { fields(a, v.name, v.spellings, v.source); }
template <class A> void io(A& a, SpeculativeDefaults::Topk& t) { fields(a, t.architectures, t.algorithms, t.topk); }
template <class A>
void io(A& a, SpeculativeDefaults& s) {
  fields(a, s.algorithms, s.algorithm_aliases, s.auto_when_unset, s.topk, s.source);
}
template <class A> void io(A& a, EngineProfile::Handoff& h) { fields(a, h.field, h.value, h.engine, h.source); }
template <class A>
void io(A& a, EngineProfile::EnvRule& r) {
  fields(a, r.id, r.values, r.field, r.min, r.max, r.severity, r.since, r.until, r.message, r.source);
}
template <class A>
void io(A& a, EngineProfile::EnvBinding& e) {
  fields(a, e.variable, e.field, e.replacement, e.deprecated_since, e.ignored_since, e.aliases, e.rules, e.source);
}
template <class A>
void io(A& a, EngineProfile& p) {
  fields(a, p.engine, p.title, p.description, p.source, p.origin, p.launchers, p.grammars, p.vocabularies, p.speculative,
         p.handoffs, p.environment, p.tp_heads_source);
}
template <class A>
void io(A& a, MatrixGeneration& g) {
  fields(a, g.engine, g.since, g.file, g.label, g.source, g.default_engine);
}

// A tripwire for a field added to a serialized type but not to its io() above: the sizes as this
// layout has them (x86-64, libstdc++). A changed size means: list the new field in io(), bump
// kFormatVersion, then update the size here.
#if defined(__x86_64__) && defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI && !defined(_GLIBCXX_DEBUG)
#define ATTNSEL_IMAGE_FIELDS(T, size) \
  static_assert(sizeof(T) == (size), "a field of " #T " changed: list it in its io() and bump kFormatVersion")
ATTNSEL_IMAGE_FIELDS(Version, 8);
ATTNSEL_IMAGE_FIELDS(VersionRange, 24);
ATTNSEL_IMAGE_FIELDS(ReleaseVersion, 12);
ATTNSEL_IMAGE_FIELDS(RuleInfo, 168);
ATTNSEL_IMAGE_FIELDS(IntRange, 20);
ATTNSEL_IMAGE_FIELDS(IntMatch, 48);
ATTNSEL_IMAGE_FIELDS(Condition, 616);
ATTNSEL_IMAGE_FIELDS(PageSupport, 40);
ATTNSEL_IMAGE_FIELDS(Cell, 288);
ATTNSEL_IMAGE_FIELDS(Slot, 432);
ATTNSEL_IMAGE_FIELDS(ConfigParam, 136);
ATTNSEL_IMAGE_FIELDS(Backend, 272);
ATTNSEL_IMAGE_FIELDS(Effect, 32);
ATTNSEL_IMAGE_FIELDS(Rule, 832);
ATTNSEL_IMAGE_FIELDS(SelectionEntry, 824);
ATTNSEL_IMAGE_FIELDS(FeatureRule, 792);
ATTNSEL_IMAGE_FIELDS(MatrixInfo, 264);
ATTNSEL_IMAGE_FIELDS(Matrix, 824);
ATTNSEL_IMAGE_FIELDS(HybridPagePolicy, 232);
ATTNSEL_IMAGE_FIELDS(HybridAlignmentRule, 624);
ATTNSEL_IMAGE_FIELDS(GpuArch, 136);
ATTNSEL_IMAGE_FIELDS(GpuModel, 64);
ATTNSEL_IMAGE_FIELDS(ModelFamily, 152);
ATTNSEL_IMAGE_FIELDS(Catalog, 112);
ATTNSEL_IMAGE_FIELDS(Launcher, 248);
ATTNSEL_IMAGE_FIELDS(GrammarFlag::KeyField, 64);
ATTNSEL_IMAGE_FIELDS(GrammarFlag, 328);
ATTNSEL_IMAGE_FIELDS(Grammar, 256);
ATTNSEL_IMAGE_FIELDS(Vocabulary, 88);
ATTNSEL_IMAGE_FIELDS(SpeculativeDefaults::Topk, 56);
ATTNSEL_IMAGE_FIELDS(SpeculativeDefaults, 128);
ATTNSEL_IMAGE_FIELDS(EngineProfile::Handoff, 128);
ATTNSEL_IMAGE_FIELDS(EngineProfile::EnvRule, 280);
ATTNSEL_IMAGE_FIELDS(EngineProfile::EnvBinding, 240);
ATTNSEL_IMAGE_FIELDS(EngineProfile, 440);
ATTNSEL_IMAGE_FIELDS(MatrixGeneration, 152);
#undef ATTNSEL_IMAGE_FIELDS
#endif

// ---- the generic shapes ----

template <class A, class T>
std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>> io(A& a, T& v) {
  a.scalar(v);
}

template <class A>
void io(A& a, std::string& s) {
  a.string(s);
}

template <class A, class T>
void io(A& a, std::vector<T>& v) {
  std::size_t n = v.size();
  a.count(n);
  if constexpr (A::reading) {
    // Grown as elements decode, so that a broken count allocates no more than the data holds.
    v.clear();
    v.reserve(std::min<std::size_t>(n, 4096));
    for (std::size_t i = 0; i < n; ++i) io(a, v.emplace_back());
  } else {
    for (T& x : v) io(a, x);
  }
}

template <class A, class T>
void io(A& a, std::optional<T>& o) {
  bool present = o.has_value();
  io(a, present);
  if constexpr (A::reading) {
    if (!present) {
      o.reset();
      return;
    }
    o.emplace();
  }
  if (present) io(a, *o);
}

template <class A, class T, class U>
void io(A& a, std::pair<T, U>& p) {
  io(a, p.first);
  io(a, p.second);
}

template <class A, std::size_t N>
void io(A& a, std::bitset<N>& b) {
  // In 64-bit words, lowest first.
  const std::bitset<N> word_mask(~std::uint64_t{0});
  if constexpr (A::reading) b.reset();
  for (std::size_t base = 0; base < N; base += 64) {
    std::uint64_t word = 0;
    if constexpr (!A::reading) word = ((b >> base) & word_mask).to_ullong();
    io(a, word);
    if constexpr (A::reading) b |= std::bitset<N>(word) << base;
  }
}

template <class A, class E>
void io(A& a, EnumSet<E>& s) {
  std::uint32_t bits = s.bits();
  io(a, bits);
  if constexpr (A::reading) s = EnumSet<E>::from_bits(bits);
}

template <class A, class T, std::size_t N>
void io(A& a, T (&array)[N]) {
  for (T& x : array) io(a, x);
}

// A type's whole encoding; the writer never modifies what it is given.
template <class T>
std::string encode(const T& value) {
  Writer w;
  io(w, const_cast<T&>(value));
  return w.take();
}

// Reads one whole object into `value`; nullopt when it read cleanly to the end.
template <class T>
std::optional<Error> decode_into(std::string_view bytes, T& value, const char* what) {
  try {
    Reader r(bytes);
    io(r, value);
    if (!r.at_end()) throw Malformed("bytes left over");
    return std::nullopt;
  } catch (const Malformed& e) {
    return Error{ErrorCode::invalid_matrix, fmt::format("the matrix image's {} is unreadable: {}", what, e.what()),
                 "matrix image", {}, {}};
  }
}

// Decoded in place: a Matrix holds pointers into its own rules.
template <class T>
Result<std::shared_ptr<const T>> decode_shared(std::string_view bytes, const char* what) {
  auto value = std::make_shared<T>();
  if (auto error = decode_into(bytes, *value, what)) return *error;
  return std::shared_ptr<const T>(std::move(value));
}

// A profile's grammars: each {name, since, length-prefixed encoding}, so that one decodes without
// the others.
Grammar decode_grammar(std::string_view bytes, const std::string& name, const std::string& since,
                       const std::string& profile_path, std::size_t position) {
  Grammar g;
  if (!decode_into(bytes, g, "grammar") && g.name == name && g.since == since) return g;
  // A broken image: the grammar from its JSON, as the library reads it without an image.
  if (auto from_json = detail::load_builtin_profile_json(profile_path); from_json && position < (*from_json)->grammars.size())
    return (*from_json)->grammars[position];
  Grammar unknown;  // never expected: the build's tests decode every grammar
  unknown.name = name;
  unknown.since = since;
  unknown.complete = false;
  return unknown;
}

template <class A>
void io(A& a, GrammarList& list) {
  std::size_t n = list.size();
  a.count(n);
  if constexpr (A::reading) {
    list = GrammarList();
    for (std::size_t i = 0; i < n; ++i) {
      std::string name, since;
      fields(a, name, since);
      const std::string_view body = a.bytes();
      if (!a.lazy_profile.empty()) {
        list.push_back_lazy(name, since, [body, name, since, path = a.lazy_profile, i] {
          return decode_grammar(body, name, since, path, i);
        });
        continue;
      }
      Grammar g;
      if (auto error = decode_into(body, g, "grammar")) throw Malformed(error->message);
      if (g.name != name || g.since != since) throw Malformed("a grammar whose name or release differs from its entry");
      list.push_back(std::move(g));
    }
  } else {
    const GrammarList& grammars = list;  // const: reading decodes, never copies
    for (const Grammar& g : grammars) {
      std::string name = g.name, since = g.since, body = encode(g);
      fields(a, name, since, body);
    }
  }
}

// ---- the directory of sections ----

struct Entry {
  Section kind;
  std::string name;
  std::string_view bytes;
};

// The blob's table of contents, read once; empty when there is no usable blob.
const std::vector<Entry>& directory() {
  static const std::vector<Entry> entries = []() -> std::vector<Entry> {
    const std::string_view blob = embedded_blob();
    if (blob.size() < sizeof kMagic || std::memcmp(blob.data(), kMagic, sizeof kMagic) != 0) return {};
    try {
      Reader r(blob.substr(sizeof kMagic));
      std::uint32_t version = 0;
      io(r, version);
      if (version != kFormatVersion) return {};
      std::size_t count = 0;
      r.count(count);
      std::vector<Entry> out;
      for (std::size_t i = 0; i < count; ++i) {
        Entry e{};
        std::uint32_t offset = 0;
        std::uint32_t size = 0;
        fields(r, e.kind, e.name, offset, size);
        if (offset > blob.size() || size > blob.size() - offset) return {};
        e.bytes = blob.substr(offset, size);
        out.push_back(std::move(e));
      }
      return out;
    } catch (const Malformed&) {
      return {};
    }
  }();
  return entries;
}

const Entry* find(Section kind, std::string_view name) {
  for (const Entry& e : directory())
    if (e.kind == kind && e.name == name) return &e;
  return nullptr;
}

}  // namespace

// ---- encoding (build time) ----

Result<std::string> encode_builtin() {
  std::vector<std::pair<Entry, std::string>> sections;
  auto add = [&sections](Section kind, std::string name, std::string bytes) {
    sections.push_back({Entry{kind, std::move(name), {}}, std::move(bytes)});
  };

  auto generations = detail::load_builtin_generations_json();
  if (!generations) return generations.error();
  add(Section::generations, "", serialize(*generations));
  std::vector<std::string> files;
  for (const MatrixGeneration& g : *generations)
    if (std::find(files.begin(), files.end(), g.file) == files.end()) files.push_back(g.file);
  for (const std::string& file : files) {
    auto m = detail::load_builtin_matrix_json(file);
    if (!m) return m.error();
    add(Section::matrix, file, serialize(**m));
  }
  auto catalog = detail::load_builtin_catalog_json();
  if (!catalog) return catalog.error();
  add(Section::catalog, "", serialize(**catalog));
  for (const std::string& path : detail::builtin_profile_paths()) {
    auto p = detail::load_builtin_profile_json(path);
    if (!p) return p.error();
    add(Section::profile, path, serialize(**p));
  }

  // The header's size depends only on the names; offsets follow it.
  Writer header;
  std::uint32_t version = kFormatVersion;
  io(header, version);
  std::size_t count = sections.size();
  header.count(count);
  std::size_t header_size = sizeof kMagic + header.take().size();
  for (auto& [entry, bytes] : sections) header_size += 1 + 4 + entry.name.size() + 4 + 4;

  Writer w;
  io(w, version);
  w.count(count);
  std::size_t offset = header_size;
  for (auto& [entry, bytes] : sections) {
    auto at = static_cast<std::uint32_t>(offset);
    auto size = static_cast<std::uint32_t>(bytes.size());
    fields(w, entry.kind, entry.name, at, size);
    offset += bytes.size();
  }
  std::string blob(kMagic, sizeof kMagic);
  blob += w.take();
  if (blob.size() != header_size) throw std::logic_error("matrix image: the header is not the size computed for it");
  for (auto& [entry, bytes] : sections) blob += bytes;
  return blob;
}

// ---- decoding (run time) ----

std::optional<std::vector<MatrixGeneration>> generations() {
  const Entry* e = find(Section::generations, "");
  if (e == nullptr) return std::nullopt;
  auto decoded = deserialize_generations(e->bytes);
  if (!decoded) return std::nullopt;
  return std::move(*decoded);
}

std::shared_ptr<const Matrix> matrix(std::string_view file) {
  const Entry* e = find(Section::matrix, file);
  if (e == nullptr) return nullptr;
  auto decoded = deserialize_matrix(e->bytes);
  return decoded ? *decoded : nullptr;
}

std::optional<MatrixInfo> matrix_info(std::string_view file) {
  const Entry* e = find(Section::matrix, file);
  if (e == nullptr) return std::nullopt;
  try {
    Reader r(e->bytes);  // the info is a matrix's first field
    MatrixInfo info;
    io(r, info);
    return info;
  } catch (const Malformed&) {
    return std::nullopt;
  }
}

std::shared_ptr<const Catalog> catalog() {
  const Entry* e = find(Section::catalog, "");
  if (e == nullptr) return nullptr;
  auto decoded = deserialize_catalog(e->bytes);
  return decoded ? *decoded : nullptr;
}

std::shared_ptr<const EngineProfile> profile(std::string_view path) {
  const Entry* e = find(Section::profile, path);
  if (e == nullptr) return nullptr;
  // Everything but the grammars now; each grammar when first asked for (a CLI run uses one of ~5).
  auto value = std::make_shared<EngineProfile>();
  try {
    Reader r(e->bytes);
    r.lazy_profile = std::string(path);
    io(r, *value);
    if (!r.at_end()) return nullptr;
  } catch (const Malformed&) {
    return nullptr;
  }
  return value;
}

std::string serialize(const Matrix& m) { return encode(m); }
std::string serialize(const Catalog& c) { return encode(c); }
std::string serialize(const EngineProfile& p) { return encode(p); }
std::string serialize(const std::vector<MatrixGeneration>& g) { return encode(g); }

Result<std::shared_ptr<const Matrix>> deserialize_matrix(std::string_view bytes) { return decode_shared<Matrix>(bytes, "matrix"); }
Result<std::shared_ptr<const Catalog>> deserialize_catalog(std::string_view bytes) { return decode_shared<Catalog>(bytes, "catalog"); }
Result<std::shared_ptr<const EngineProfile>> deserialize_profile(std::string_view bytes) {
  return decode_shared<EngineProfile>(bytes, "engine profile");
}
Result<std::vector<MatrixGeneration>> deserialize_generations(std::string_view bytes) {
  std::vector<MatrixGeneration> out;
  if (auto error = decode_into(bytes, out, "generation list")) return *error;
  return out;
}

}  // namespace image

// ---- the private parts ----

template <class A>
void ImageCodec::matrix(A& a, Matrix& m) {
  using image::fields;
  fields(a, m.info_, m.slots_, m.backends_, m.rules_, m.selection_, m.features_, m.feature_index_, m.default_page_size_,
         m.hybrid_page_, m.builtin_, m.rule_fields_);
  // The rule indexes point into rules_: stored as positions.
  auto rule_refs = [&](std::vector<const Rule*>& refs) {
    std::vector<std::uint32_t> positions;
    if constexpr (!A::reading)
      for (const Rule* r : refs) positions.push_back(static_cast<std::uint32_t>(r - m.rules_.data()));
    image::io(a, positions);
    if constexpr (A::reading) {
      refs.clear();
      for (std::uint32_t p : positions) {
        if (p >= m.rules_.size()) throw image::Malformed("a rule index out of range");
        refs.push_back(&m.rules_[p]);
      }
    }
  };
  for (auto& scope : m.by_scope_) rule_refs(scope);
  std::size_t backends = m.by_backend_.size();
  a.count(backends);
  if constexpr (A::reading) m.by_backend_.assign(backends, {});
  for (auto& refs : m.by_backend_) rule_refs(refs);
}

template <class A>
void ImageCodec::catalog(A& a, Catalog& c) {
  image::fields(a, c.archs_, c.gpus_, c.families_, c.assumed_cuda_, c.assumed_cuda_source_);
}

}  // namespace attnsel
