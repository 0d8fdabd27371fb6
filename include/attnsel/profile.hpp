// An engine profile (data/engines/<engine>/profile.json): what attnsel knows about one serving
// engine besides its capability matrix. The launchers that start it, and which grammar parses
// each one's arguments. The C++ knows no engine by name; everything here comes from the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

// One way to start an engine: `python -m MODULE ARGS...` or `PROGRAM SUBCOMMAND... ARGS...`.
struct Launcher {
  std::string engine;                   // the profile it belongs to
  std::string label;                    // how messages name it
  std::string module;                   // python -m MODULE; empty for a program
  std::string program;                  // the program's basename; empty for a module
  std::vector<std::string> subcommand;  // the words after the program that select this launcher
  std::string grammar;                  // which of the engine's grammars parses the arguments
  bool positional_model = false;        // a first word that is not a flag names the model
  // Container images whose entrypoint is this launcher ("vllm/vllm-openai"): `docker run IMAGE ARGS`
  // and a container of the image given only args run it with ARGS. Repositories without registry or tag.
  std::vector<std::string> images;
  std::string source;
};

// How argparse treats an option (Python's argparse actions; custom Action classes keep their name).
enum class ArgAction : std::uint8_t {
  store, store_true, store_false, store_const, append, count, boolean_optional, help, version, other
};
// How argparse converts the value (the `type=` callable); other callables are not checked.
enum class ArgType : std::uint8_t { string, integer, number, json, other };

// One option of an engine's command line, as the engine's argparse parser declares it.
struct GrammarFlag {
  std::vector<std::string> names;             // every option string; the first is canonical
  std::vector<std::string> deprecated_names;  // names among `names` the engine warns about
  std::string dest;
  ArgAction action = ArgAction::store;
  std::string action_name;  // as declared, for ArgAction::other
  ArgType type = ArgType::string;
  std::string type_name;  // as declared, for ArgType::other
  int nargs_min = 1;      // how many values it takes: nargs None -> 1..1, '?' -> 0..1, '*' -> 0..max, '+' -> 1..max
  int nargs_max = 1;
  std::vector<std::string> choices;  // empty: any value
  bool required = false;
  bool deprecated = false;   // the engine warns when it is used
  bool removed = false;      // the engine refuses it (a deprecated flag whose action raises)
  std::string replacement;   // what to write instead, for deprecated and removed flags
  int line = 0;        // where the engine declares it (in the grammar's source)
  std::string field;   // the request field it sets (the profile's bindings); "" when none
  // Request fields read from keys of its JSON value (`--attention-config '{"backend": X}'`, and
  // with dotted keys `-ac.backend X`).
  struct KeyField {
    std::string key, field;
  };
  std::vector<KeyField> key_fields;
  bool upper_case = false;                  // the engine reads the bound value case-insensitively, as upper case
  std::vector<std::string> unset_values;    // bound values that mean "not given" ("auto"), compared after case
  bool takes_values() const { return nargs_max > 0; }
};

// An engine's command-line grammar at one release: every flag, and argparse's settings.
struct Grammar {
  std::string name;            // the launchers' grammar name ("server", "diffusion")
  std::string since;           // the first engine release it describes
  std::string engine_version;  // the release or commit it was extracted from
  std::string source;
  bool allow_abbrev = true;  // argparse resolves unique prefixes of long options
  // false: attnsel knows only some of the engine's flags, so an unknown flag is a note, not an error
  bool complete = true;
  std::string config_flag;   // loads a YAML file whose keys are flag names; "" when none
  std::string config_merge;  // how that file merges with the command line, for people
  // vLLM's FlexibleArgumentParser: `--max_model_len` is `--max-model-len` (underscores before the
  // first '.' or '='), and `--json-flag.key VALUE` sets one key of a JSON flag.
  bool underscore_dashes = false;
  bool dotted_keys = false;
  std::vector<GrammarFlag> flags;

  const GrammarFlag* exact(std::string_view option) const;
  // Every flag with an option string that starts with `prefix`, once per flag.
  std::vector<const GrammarFlag*> prefixed(std::string_view prefix) const;
  // The flag bound to a request field, or null.
  const GrammarFlag* for_field(std::string_view field) const;
  std::vector<std::string> option_names() const;

  // Sorted option strings with the index of their flag; built by the loader.
  std::vector<std::pair<std::string, std::size_t>> index;
};

// An engine's grammars, per launcher grammar name, newest `since` last. Reads like a
// std::vector<Grammar>; a grammar may be decoded on first use (the built-in profiles decode from
// the compiled image only the grammar asked for), once per process and thread-safe. A copy shares
// the decoded grammars; changing one through a non-const access changes only that list.
class ATTNSEL_API GrammarList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Grammar;
    using difference_type = std::ptrdiff_t;
    using pointer = const Grammar*;
    using reference = const Grammar&;
    const_iterator() = default;
    const_iterator(const GrammarList* list, std::size_t at) : list_(list), at_(at) {}
    reference operator*() const { return (*list_)[at_]; }
    pointer operator->() const { return &(*list_)[at_]; }
    const_iterator& operator++() { ++at_; return *this; }
    const_iterator operator++(int) { const_iterator before = *this; ++at_; return before; }
    bool operator==(const const_iterator& o) const { return at_ == o.at_ && list_ == o.list_; }
    bool operator!=(const const_iterator& o) const { return !(*this == o); }

   private:
    const GrammarList* list_ = nullptr;
    std::size_t at_ = 0;
  };

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The grammar, decoded if it was not yet.
  const Grammar& operator[](std::size_t i) const;
  Grammar& operator[](std::size_t i);
  const Grammar& front() const { return (*this)[0]; }
  const Grammar& back() const { return (*this)[size() - 1]; }
  Grammar& back() { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  // A grammar's name and `since` without decoding it.
  const std::string& name(std::size_t i) const;
  const std::string& since(std::size_t i) const;
  // Whether the grammar has been decoded (for tests and measurements).
  bool decoded(std::size_t i) const;

  void push_back(Grammar g);
  // A grammar decoded on first use: `decode` runs once, in whichever thread asks first, and must
  // return a grammar of this name and `since`.
  void push_back_lazy(std::string name, std::string since, std::function<Grammar()> decode);

 private:
  struct Entry;
  Entry& own(std::size_t i);
  std::vector<std::shared_ptr<Entry>> entries_;
};

// A value vocabulary: the engine's spellings, each mapped to attnsel's name or to none
// (the engine accepts it, attnsel has no data for it).
struct Vocabulary {
  std::string name;  // "kv_cache_dtype"
  std::vector<std::pair<std::string, std::optional<std::string>>> spellings;
  std::string source;
  // nullopt: not a spelling of this vocabulary; an empty optional inside: accepted, not modelled.
  std::optional<std::optional<std::string>> find(std::string_view spelling) const;
};

// Speculative-decoding parameters the engine chooses itself when the user leaves them unset.
struct SpeculativeDefaults {
  std::vector<std::string> algorithms;       // the algorithms attnsel models (upper case)
  std::vector<std::pair<std::string, std::string>> algorithm_aliases;  // alias -> algorithm
  std::vector<std::string> auto_when_unset;  // fields that must all be unset for the automatic choice
  struct Topk {
    std::vector<std::string> architectures;  // empty: every other architecture
    std::vector<std::string> algorithms;     // empty: every algorithm
    int topk = 1;
  };
  std::vector<Topk> topk;  // first match wins
  std::string source;
};

struct EngineProfile {
  std::string engine;
  std::string title;
  std::string description;
  std::string source;
  std::string origin;  // where it was loaded from: "built-in:engines/<engine>/profile.json", a path
  std::vector<Launcher> launchers;
  GrammarList grammars;  // per launcher grammar name, newest `since` last
  std::vector<Vocabulary> vocabularies;
  SpeculativeDefaults speculative;
  // Another engine takes over when a field has this value (`--model-type diffusion`).
  struct Handoff {
    std::string field, value, engine, source;
  };
  std::vector<Handoff> handoffs;
  // What a variable's value requires of the rest of the command (SGLANG_ENABLE_SPEC_V2=1 runs the
  // speculative worker that drafts with topk 1 only): a finding when the field's value is outside.
  struct EnvRule {
    std::string id;                   // the finding's rule id
    std::vector<std::string> values;  // the variable's values it applies to, case-insensitive; empty: any
    std::string field;                // the request field it constrains ("speculative.topk")
    std::optional<long long> min, max;  // the field's allowed range, inclusive
    std::string severity = "error";   // info, warning or error
    std::string since, until;         // the releases it applies to: [since, until); "" unbounded
    std::string message;              // "{variable}", "{value}", "{field_value}" filled in
    std::string source;
  };
  // Environment variables the engine reads (or used to read) instead of a flag, or that change
  // what the flags may be.
  struct EnvBinding {
    std::string variable;          // "VLLM_ATTENTION_BACKEND"
    std::string field;             // the request field it stands for; "" when it stands for no flag
    std::string replacement;       // the flag to use instead
    std::string deprecated_since;  // the engine warns from this release ("" never)
    std::string ignored_since;     // the engine no longer reads it from this release ("" still read)
    std::vector<std::pair<std::string, std::string>> aliases;  // older spellings of values -> the current one
    std::vector<EnvRule> rules;
    std::string source;
  };
  std::vector<EnvBinding> environment;
  // Where the engine refuses a tensor-parallel size that does not divide the attention heads
  // (check.tp-heads cites it); "" when the profile knows no such check, and none is made.
  std::string tp_heads_source;

  // The grammar of that name ("": the first launcher's, for bare flags) for a release ("": the
  // newest); null when none.
  const Grammar* grammar(std::string_view name, std::string_view release = {}) const;
  const Vocabulary* vocabulary(std::string_view name) const;
};

// Reads a file a profile names (a grammar), relative to the profile.
using ProfileFileReader = std::function<Result<std::string>(std::string_view relative_path)>;

// Loading; errors carry the JSON pointer of the offending value. `origin` names the input.
ATTNSEL_API Result<std::shared_ptr<const EngineProfile>> load_profile(std::string_view json_text, std::string_view origin,
                                                                      const ProfileFileReader& read_file = {});
// A profile on disk; the files it names are read from its directory.
ATTNSEL_API Result<std::shared_ptr<const EngineProfile>> load_profile_file(const std::string& path);
// The built-in profiles, loaded once (data/engines/*/profile.json, compiled in).
ATTNSEL_API const std::vector<std::shared_ptr<const EngineProfile>>& builtin_profiles();
// One built-in profile by engine name; unknown_name (with the valid names) otherwise.
ATTNSEL_API Result<std::shared_ptr<const EngineProfile>> builtin_profile(std::string_view engine);
// The launchers of every built-in profile, in profile order.
ATTNSEL_API const std::vector<Launcher>& builtin_launchers();

}  // namespace attnsel
