// What a deployment file says about its target, besides its commands: the GPU (node selectors,
// affinities, instance types, dstack and SkyPilot resources), the engine release (image tags,
// pinned pip installs) and the model (the commands' model values). Hardware names and cloud
// instance types are generic; engine names come from the profiles' launchers.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "advisory/check_advisories.hpp"
#include "attnsel/catalog.hpp"
#include "attnsel/launch_args.hpp"
#include "check/launch_internal.hpp"

namespace attnsel {
namespace {

using launch_detail::ends_with;
using launch_detail::lower;
using launch_detail::npos;
using launch_detail::PhysicalLine;
using launch_detail::split_lines;
using launch_detail::starts_with;
using launch_detail::trim;

// Cloud instance types whose GPU is not written in their name (prefix -> GPU).
struct InstanceType {
  std::string_view prefix;
  std::string_view gpu;
};
constexpr InstanceType kInstanceTypes[] = {
    {"p5.", "H100"},        {"p5e.", "H200"},        {"p5en.", "H200"},       {"p4d.", "A100"},
    {"p4de.", "A100"},      {"p6-b200.", "B200"},    {"p6e-gb200.", "GB200"}, {"p6-b300.", "B300"},
    {"g6e.", "L40S"},       {"g6.", "L4"},           {"g5.", "A10G"},         {"a3-highgpu", "H100"},
    {"a3-megagpu", "H100"}, {"a3-edgegpu", "H100"},  {"a3-ultragpu", "H200"}, {"a4-highgpu", "B200"},
    {"a4x-highgpu", "GB200"}, {"a2-highgpu", "A100"}, {"a2-ultragpu", "A100"}, {"g2-standard", "L4"},
};

// Upper case, with '-' and '_' read as spaces: how a title or label is matched against GPU names
// ("NVIDIA-RTX-A6000", "rtx_4090").
std::string gpu_match_form(std::string_view text) {
  std::string up(text);
  for (char& c : up) c = c == '-' || c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return up;
}

// A GPU name a text may carry: its match form and the spelling --gpu takes.
struct GpuName {
  std::string match;
  std::string name;
};

// Every name and alias of the built-in GPU catalog (data/gpus.json), with and without its spaces,
// longest first, so that "RTX PRO 6000" is found before "RTX 6000" could be. A one-word alias
// without a digit ("Orin", "Thor") is an ordinary word in prose and is left out; the full names
// stay. A variant's alias that holds the GPU's name ("H100 80GB HBM3", "Instinct MI300X") stands
// for the GPU's name; another product's ("RTX 3080", "A6000") keeps its own, which --gpu takes too.
const std::vector<GpuName>& catalog_gpu_names() {
  static const std::vector<GpuName> names = [] {
    std::vector<GpuName> out;
    const auto catalog = builtin_catalog();
    if (!catalog) return out;
    auto add = [&](const std::string& written, const std::string& gpu) {
      const bool digit = std::any_of(written.begin(), written.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (!digit && written.find(' ') == std::string::npos) return;
      const std::string match = gpu_match_form(written);
      const std::string& name = match.find(gpu_match_form(gpu)) != std::string::npos ? gpu : written;
      out.push_back({match, name});
      // Written without its spaces, as Slurm GRES names and some labels do ("rtxa6000", "rtx4090").
      if (std::string compact = match; compact.find(' ') != std::string::npos) {
        compact.erase(std::remove(compact.begin(), compact.end(), ' '), compact.end());
        out.push_back({std::move(compact), name});
      }
    };
    for (const GpuModel& g : (*catalog)->gpus()) {
      add(g.name, g.name);
      for (const std::string& alias : g.aliases) add(alias, g.name);
    }
    std::stable_sort(out.begin(), out.end(), [](const GpuName& a, const GpuName& b) { return a.match.size() > b.match.size(); });
    return out;
  }();
  return names;
}

// The line a label or value sits on after `key:` / `key=`; empty when the line has none.
std::string_view value_after(std::string_view line, std::size_t key_end) {
  std::string_view rest = line.substr(key_end);
  const std::size_t sep = rest.find_first_of(":=");
  if (sep == npos) return {};
  rest = trim(rest.substr(sep + 1));
  while (!rest.empty() && (rest.front() == '"' || rest.front() == '\'' || rest.front() == '[' || rest.front() == '{'))
    rest.remove_prefix(1);
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != '"' && rest[end] != '\'' && rest[end] != ',' && rest[end] != ']' &&
         rest[end] != '}' && rest[end] != ' ' && rest[end] != '#')
    ++end;
  return rest.substr(0, end);
}

// A release "X.Y.Z" from an image tag or pinned version ("v0.5.5-cu126" -> "0.5.5"); "" if none.
std::string release_of(std::string_view tag) {
  if (!tag.empty() && (tag.front() == 'v' || tag.front() == 'V')) tag.remove_prefix(1);
  std::string out;
  int parts = 0;
  std::size_t i = 0;
  while (i < tag.size() && parts < 4) {
    std::size_t j = i;
    while (j < tag.size() && std::isdigit(static_cast<unsigned char>(tag[j]))) ++j;
    if (j == i) break;
    if (!out.empty()) out += '.';
    out.append(tag.substr(i, j - i));
    ++parts;
    if (j >= tag.size() || tag[j] != '.') break;
    i = j + 1;
  }
  return parts >= 2 ? out : std::string();
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-'; }

// A hint is kept once per value, at its first mention, and a file keeps at most kMaxHints of a
// kind: a script that names one model on 100,000 lines has one model hint, and the hints that
// every command's JSON repeats stay small.
constexpr std::size_t kMaxHints = 32;

void add_hint(std::vector<ContextHint>& hints, ContextHint hint) {
  if (hints.size() >= kMaxHints) return;
  for (const ContextHint& h : hints)
    if (h.value == hint.value && h.engine == hint.engine) return;
  hints.push_back(std::move(hint));
}

// Lines a file has at most this many of are read for hints; the rest are not.
constexpr std::size_t kMaxContextLines = 1000000;

// How common a byte is in scripts and manifests, roughly: letters by their frequency in English,
// blanks, quotes and the punctuation of paths, keys and variables above them all.
int commonness(unsigned char c) {
  constexpr std::string_view kLetters = "zqxjkvbpygfwmucldrhsnioate";  // rarest first
  const std::size_t letter = kLetters.find(static_cast<char>(c | 0x20));
  if (std::isalpha(c) && letter != npos) return static_cast<int>(letter);
  if (std::isdigit(c)) return 12;
  if (std::string_view(" \t\n\"'-_/.=:${}").find(static_cast<char>(c)) != npos) return 30;
  return 10;
}

// Where `needle` next occurs in `text` from `from` on: memchr finds its least common byte (the
// text is searched in large strides), then the whole needle is compared.
std::size_t find_needle(std::string_view text, std::size_t from, std::string_view needle, std::size_t anchor) {
  for (std::size_t at = from + anchor; at < text.size();) {
    const void* hit = std::memchr(text.data() + at, needle[anchor], text.size() - at);
    if (hit == nullptr) return npos;
    const std::size_t h = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
    if (text.compare(h - anchor, needle.size(), needle) == 0) return h - anchor;
    at = h + 1;
  }
  return npos;
}

// The indices of the lines (below kMaxContextLines) that hold at least one of `needles`, in order:
// the only lines a search for them needs to look at. Each needle is searched in the whole text
// at once, which is much faster than looking for every needle on every line. `every_line`: all
// lines below the limit (the reference the tests compare with).
std::vector<std::size_t> lines_holding(std::string_view text, const std::vector<PhysicalLine>& lines,
                                       std::vector<std::string_view> needles, bool every_line) {
  std::vector<std::size_t> found;
  const std::size_t limit = std::min(lines.size(), kMaxContextLines);
  const bool whole_lines = !every_line && std::all_of(needles.begin(), needles.end(), [](std::string_view n) {
    return !n.empty() && n.find_first_of("\r\n") == npos;
  });
  if (!whole_lines) {  // a needle that could match across lines, or everywhere: every line
    for (std::size_t k = 0; k < limit; ++k) found.push_back(k);
    return found;
  }
  // A needle that holds another needs no search of its own: its lines are the other's too.
  std::sort(needles.begin(), needles.end(), [](std::string_view a, std::string_view b) { return a.size() < b.size(); });
  std::vector<std::string_view> searched;
  for (std::string_view n : needles)
    if (std::none_of(searched.begin(), searched.end(), [&](std::string_view m) { return n.find(m) != npos; }))
      searched.push_back(n);
  auto line_of = [&](std::size_t offset) {
    return static_cast<std::size_t>(std::upper_bound(lines.begin(), lines.end(), offset,
                                                     [](std::size_t o, const PhysicalLine& l) { return o < l.offset; }) -
                                    lines.begin()) - 1;
  };
  for (std::string_view n : searched) {
    std::size_t anchor = 0;
    for (std::size_t i = 1; i < n.size(); ++i)
      if (commonness(static_cast<unsigned char>(n[i])) < commonness(static_cast<unsigned char>(n[anchor]))) anchor = i;
    std::size_t from = 0;
    while (from < text.size()) {
      const std::size_t hit = find_needle(text, from, n, anchor);
      if (hit == npos) break;
      const std::size_t k = line_of(hit);
      if (k >= limit) break;
      found.push_back(k);
      if (k + 1 >= lines.size()) break;
      from = lines[k + 1].offset;  // the rest of this line adds nothing
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

// The GPUs a SkyPilot `accelerators:` value (the text after the key on line k) lets the job run
// on, in order: one ("H100:8"), an any-of set or list on the line ({H200:8, H100:8, A100:8},
// [H100:8, A100:8]), or a block list below it ("- H100:8"). Each keeps its count ("A100:8").
std::vector<std::string_view> accelerator_choices(std::string_view value, const std::vector<PhysicalLine>& lines,
                                                  std::size_t k) {
  constexpr std::size_t kMaxChoices = 16;
  std::vector<std::string_view> out;
  auto add = [&](std::string_view v) {
    v = trim(v);
    while (!v.empty() && (v.front() == '"' || v.front() == '\'' || v.front() == '{' || v.front() == '[')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '"' || v.back() == '\'' || v.back() == '}' || v.back() == ']')) v.remove_suffix(1);
    v = trim(v);
    if (!v.empty() && out.size() < kMaxChoices) out.push_back(v);
  };
  value = trim(value.substr(0, value.find(" #")));
  if (!value.empty()) {
    for (std::size_t at = 0; at <= value.size();) {
      const std::size_t comma = std::min(value.find(',', at), value.size());
      add(value.substr(at, comma - at));
      at = comma + 1;
    }
    return out;
  }
  // The lines below, indented under the key: `- H100:8` or `H100: 8` each.
  auto indent = [](std::string_view l) { return l.size() - launch_detail::ltrim(l).size(); };
  const std::size_t key_indent = indent(lines[k].text);
  for (std::size_t j = k + 1; j < lines.size() && out.size() < kMaxChoices; ++j) {
    const std::string_view next = trim(lines[j].text);
    if (next.empty() || next.front() == '#') continue;
    if (indent(lines[j].text) <= key_indent && !starts_with(next, "- ")) break;
    if (indent(lines[j].text) < key_indent) break;
    add(starts_with(next, "- ") ? next.substr(2, next.find(" #") == npos ? npos : next.find(" #") - 2)
                                : next.substr(0, next.find(" #")));
  }
  return out;
}

}  // namespace

std::string gpu_from_label(std::string_view label) {
  const std::string low = lower(trim(label));
  std::string_view l = low;
  if (starts_with(l, "standard_")) l.remove_prefix(9);
  for (const InstanceType& t : kInstanceTypes)
    if (starts_with(l, t.prefix)) return std::string(t.gpu);
  const std::string up = gpu_match_form(label);
  for (const GpuName& gpu : catalog_gpu_names()) {
    for (std::size_t at = up.find(gpu.match); at != npos; at = up.find(gpu.match, at + 1)) {
      const bool before = at == 0 || !std::isalnum(static_cast<unsigned char>(up[at - 1])) ||
                          (at >= 6 && up.compare(at - 6, 6, "NVIDIA") == 0);
      const std::size_t end = at + gpu.match.size();
      const bool after = end >= up.size() || !std::isdigit(static_cast<unsigned char>(up[end]));
      if (before && after) return gpu.name;
    }
  }
  return {};
}

namespace {

// The value written after `at` ("= X", ": X", " X"): one word, quotes removed.
std::string env_value(std::string_view rest) {
  rest = trim(rest);
  if (rest.empty()) return {};
  const char quote = rest.front() == '"' || rest.front() == '\'' ? rest.front() : '\0';
  if (quote) {
    const std::size_t close = rest.find(quote, 1);
    return std::string(rest.substr(1, close == npos ? npos : close - 1));
  }
  return std::string(rest.substr(0, rest.find_first_of(" \t;&|\\#")));
}

// Settings of the variables the built-in profiles read from the environment: `NAME=VALUE` (shell,
// `export`, `env`, Dockerfile `ENV`, compose lists), `ENV NAME VALUE`, `NAME: VALUE` (compose
// maps) and Kubernetes `- name: NAME` with `value: VALUE` below it.
void find_environment(std::string_view text, const std::vector<PhysicalLine>& lines, FileContext& ctx, bool every_line) {
  std::vector<std::pair<std::string, std::string>> variables;  // name, engine
  for (const auto& profile : builtin_profiles())
    for (const auto& b : profile->environment) variables.emplace_back(b.variable, profile->engine);
  for (const auto& v : detail::advisory_environment())
    if (std::find(variables.begin(), variables.end(), v) == variables.end()) variables.push_back(v);  // what advisories condition on
  if (variables.empty()) return;
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  // A setting names its variable on its own line.
  std::vector<std::string_view> names;
  for (const auto& v : variables) names.push_back(v.first);
  for (const std::size_t k : lines_holding(text, lines, names, every_line)) {
    const std::string_view line = lines[k].text;
    for (const auto& [name, engine] : variables) {
      const std::size_t at = line.find(name);
      if (at == npos || (at > 0 && word_char(line[at - 1])) ||
          (at + name.size() < line.size() && word_char(line[at + name.size()])))
        continue;
      std::string_view after = line.substr(at + name.size());
      std::string value;
      if (!after.empty() && (after.front() == '=' || after.front() == ':')) {
        value = env_value(after.substr(1));
      } else if (starts_with(trim(line), "ENV ") && !after.empty() && after.front() == ' ') {
        value = env_value(after);
      } else if (trim(line.substr(0, at)).size() >= 5 && ends_with(trim(line.substr(0, at)), "name:")) {
        // Kubernetes: the value is on one of the next lines of the same list entry.
        for (std::size_t j = k + 1; j < lines.size() && j <= k + 3; ++j) {
          const std::string_view next = trim(lines[j].text);
          if (starts_with(next, "value:")) {
            value = env_value(next.substr(6));
            break;
          }
          if (starts_with(next, "- ")) break;
        }
      }
      if (value.empty() || value.find('$') != npos) continue;
      ctx.environment.push_back(ContextHint{value, name, std::string(trim(line)), engine, static_cast<int>(k) + 1});
      if (ctx.environment.size() >= 64) return;
    }
  }
}

// ---- GPUs and platforms scoped to a part of the file ----

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Whether the built-in GPU catalog knows a name: a hint is a target only then ("sm61" in a heading
// on what is not supported is no target, and never an unknown --gpu).
bool known_gpu(const std::string& name) {
  static const auto catalog = builtin_catalog();
  if (!catalog) return true;
  thread_local std::map<std::string, bool, std::less<>> known;  // a few dozen names; a document asks thousands of times
  if (auto it = known.find(name); it != known.end()) return it->second;
  if (known.size() >= 256) known.clear();
  return known[name] = static_cast<bool>((*catalog)->resolve_gpu(name));
}

// Words that negate the GPU names after them in a clause: "Non-Hopper", "not on H100", "except
// B200", "without A100", "other than H20".
bool negating_word(std::string_view w, std::string_view before) {
  for (std::string_view n : {"NON", "NOT", "EXCEPT", "EXCLUDING", "WITHOUT", "NOR", "UNLIKE", "BESIDES"})
    if (w == n) return true;
  return w == "THAN" && (before == "OTHER" || before == "RATHER");
}

// Words that may stand between a negation and the GPU names it negates ("not supported on the
// H100 or H200", "except on 8x B200"): the clause goes on through them.
bool clause_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {"OR", "AND", "ON", "FOR", "IN", "WITH", "THE", "A", "AN", "ANY",
                                                "SUPPORTED", "AVAILABLE", "YET", "USE", "RUN", "RUNS", "WORK",
                                                "WORKS", "GPU", "GPUS", "NVIDIA", "AMD", "INSTINCT", "ALSO"};
  if (std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords)) return true;
  // A count written before a name: "8X".
  return w.size() >= 2 && w.back() == 'X' && std::all_of(w.begin(), w.end() - 1, [](char c) { return is_digit(c); });
}

// The GPUs a title or sentence names ("8x H100", "MI300X", "B200/GB200", "sm90", "gfx942"), each
// once, in order: the names --gpu takes, those the catalog knows. A name the text negates is none
// of them: "Non-Hopper", "not on H100 or H200", "except B200", "other than H20" (the negation
// reaches over a list of names and the small words of its clause, up to a '.', ':', ';' or bracket).
std::vector<std::string> gpus_named(std::string_view text) {
  const std::string up = gpu_match_form(text.substr(0, 512));
  std::vector<std::pair<std::size_t, std::string>> found;  // offset, name
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // every name's span, for the negation's lists
  std::vector<std::pair<std::size_t, std::size_t>> taken;  // the spans already matched, by longer names
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (const GpuName& gpu : catalog_gpu_names()) {
    for (std::size_t at = up.find(gpu.match); at != npos; at = up.find(gpu.match, at + 1)) {
      // "8xH100": a count written before the name.
      const bool counted = at >= 2 && up[at - 1] == 'X' && is_digit(up[at - 2]);
      const bool before = at == 0 || !alnum(up[at - 1]) || counted || (at >= 6 && up.compare(at - 6, 6, "NVIDIA") == 0);
      const std::size_t end = at + gpu.match.size();
      if (!before || (end < up.size() && is_digit(up[end]))) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const auto& s) { return s.first <= at && at < s.second; })) continue;
      taken.emplace_back(at, end);
      spans.emplace_back(at, end);
      found.emplace_back(at, gpu.name);
    }
  }
  // Architecture families a document names instead of a GPU: Hopper is sm90 (H100, H200, H20,
  // H800 alike); Blackwell in serving docs the data-center sm100 (B200, GB200).
  for (const auto& [family, arch] : {std::pair<std::string_view, std::string_view>{"HOPPER", "sm90"},
                                     {"BLACKWELL", "sm100"}, {"AMPERE", "sm80"}}) {
    for (std::size_t at = up.find(family); at != npos; at = up.find(family, at + 1)) {
      const std::size_t end = at + family.size();
      if ((at > 0 && alnum(up[at - 1])) || (end < up.size() && alnum(up[end]))) continue;
      spans.emplace_back(at, end);
      found.emplace_back(at, std::string(arch));
    }
  }
  // Architectures as --gpu takes them: sm90, sm100, gfx942.
  for (std::string_view arch : {"SM", "GFX"}) {
    for (std::size_t at = up.find(arch); at != npos; at = up.find(arch, at + 1)) {
      if (at > 0 && alnum(up[at - 1])) continue;
      std::size_t end = at + arch.size();
      if (end < up.size() && up[end] == '_') ++end;
      const std::size_t digits = end;
      while (end < up.size() && is_digit(up[end])) ++end;
      if (end - digits < 2 || end - digits > 4 || (end < up.size() && alnum(up[end]))) continue;
      spans.emplace_back(at, end);
      found.emplace_back(at, lower(arch) + up.substr(digits, end - digits));
    }
  }
  // Whether the name at `at` is negated: the words before it, back to the clause's start.
  auto negated = [&](std::size_t at) {
    std::size_t i = at;
    for (int words = 0; i > 0 && words < 12;) {
      const char c = up[i - 1];
      if (c == ' ' || c == '\t' || c == ',' || c == '/' || c == '&' || c == '+') {
        --i;
        continue;
      }
      if (!alnum(c)) return false;  // '.', ':', ';', brackets: the clause began after it
      std::size_t b = i;
      while (b > 0 && alnum(up[b - 1])) --b;
      const std::string_view w(up.data() + b, i - b);
      std::size_t pb = b;
      while (pb > 0 && up[pb - 1] == ' ') --pb;
      std::size_t pa = pb;
      while (pa > 0 && alnum(up[pa - 1])) --pa;
      if (negating_word(w, std::string_view(up.data() + pa, pb - pa))) return true;
      const bool name = std::any_of(spans.begin(), spans.end(), [&](const auto& s) { return s.first <= b && b < s.second; });
      if (!name && !clause_word(w)) return false;
      if (name)  // the whole name ("RTX 6000"), whatever its words
        for (const auto& s : spans)
          if (s.first <= b && b < s.second) b = std::min(b, s.first);
      i = b;
      ++words;
    }
    return false;
  };
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found)
    if (!negated(f.first) && known_gpu(f.second) && std::find(out.begin(), out.end(), f.second) == out.end())
      out.push_back(std::move(f.second));
  return out;
}

// The platform a title names ("AMD (ROCm)", "NVIDIA GPUs", "Ascend NPU", "Intel XPU", "TPU",
// "Gaudi"); "" for none or for several ("NVIDIA and AMD"). "cuda" only from "NVIDIA": "CUDA
// graphs" is a feature. "CPU" only in a short title ("CPU", "On Intel CPUs"): "CPU offload" is not.
std::string platform_named(std::string_view title) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : title.substr(0, 512)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  auto has = [&](std::initializer_list<std::string_view> any) {
    return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
      return std::find(any.begin(), any.end(), w) != any.end();
    });
  };
  if (has({"cpu", "cpus"}) && words.size() <= 4 && !has({"offload", "offloading", "memory", "ram", "cores", "threads"}))
    return "cpu";
  std::vector<std::string> named;
  if (has({"amd", "rocm", "instinct"})) named.push_back("rocm");
  // "CUDA" as a platform ("TP8 — CUDA"), not a feature ("CUDA graphs", "CUDA kernels").
  bool cuda = has({"nvidia"});
  for (std::size_t k = 0; k < words.size() && !cuda; ++k) {
    static constexpr std::string_view kFeatures[] = {"graph", "graphs", "kernel", "kernels", "ipc", "memory",
                                                     "event", "events", "stream", "streams", "error", "errors",
                                                     "oom", "core", "cores", "toolkit", "extension", "extensions"};
    cuda = words[k] == "cuda" &&
           (k + 1 == words.size() || std::find(std::begin(kFeatures), std::end(kFeatures), words[k + 1]) == std::end(kFeatures));
  }
  if (cuda) named.push_back("cuda");
  if (has({"npu", "npus"})) named.push_back("npu");
  if (has({"xpu", "xpus"}) || (has({"intel"}) && has({"gpu", "gpus", "arc"}))) named.push_back("xpu");
  if (has({"tpu", "tpus"})) named.push_back("tpu");
  if (has({"gaudi", "gaudi2", "gaudi3", "hpu", "hpus", "habana"})) named.push_back("hpu");
  if (has({"neuron", "inferentia", "trainium", "inferentia2", "trainium2"})) named.push_back("neuron");
  if (has({"mps"}) || (has({"apple"}) && has({"silicon", "metal", "m1", "m2", "m3", "m4"}))) named.push_back("mps");
  return named.size() == 1 ? named.front() : std::string();
}

// What a line written for one platform holds: its images, devices, resources and variables.
struct PlatformMarker {
  std::string_view needle;
  std::string_view platform;
  std::string_view source;  // how the output names it
  bool word = false;        // the needle must end a word: an image named without a tag
};
constexpr PlatformMarker kPlatformMarkers[] = {
    {"rocm/", "rocm", "ROCm image or path"},
    {"-rocm", "rocm", "ROCm image"},
    {"/dev/kfd", "rocm", "ROCm device /dev/kfd"},
    {"HIP_VISIBLE_DEVICES", "rocm", "HIP_VISIBLE_DEVICES"},
    {"ROCR_VISIBLE_DEVICES", "rocm", "ROCR_VISIBLE_DEVICES"},
    {"amd.com/gpu", "rocm", "resource amd.com/gpu"},
    {"nvidia.com/gpu:", "cuda", "resource nvidia.com/gpu"},
    {"NVIDIA_VISIBLE_DEVICES", "cuda", "NVIDIA_VISIBLE_DEVICES"},
    {"--runtime=nvidia", "cuda", "NVIDIA container runtime"},
    {"--runtime nvidia", "cuda", "NVIDIA container runtime"},
    {"runtime: nvidia", "cuda", "NVIDIA container runtime"},
    {"ASCEND_RT_VISIBLE_DEVICES", "npu", "ASCEND_RT_VISIBLE_DEVICES"},
    {"ZE_AFFINITY_MASK", "xpu", "ZE_AFFINITY_MASK"},
    {"google.com/tpu", "tpu", "resource google.com/tpu"},
    {"gke-tpu-accelerator", "tpu", "node label cloud.google.com/gke-tpu-accelerator"},
    {"HABANA_VISIBLE_DEVICES", "hpu", "HABANA_VISIBLE_DEVICES"},
    {"vault.habana.ai", "hpu", "Habana image"},
    {"NEURON_RT_VISIBLE_CORES", "neuron", "NEURON_RT_VISIBLE_CORES"},
    {"-cann", "npu", "Ascend (CANN) image"},
    {"-xpu", "xpu", "XPU image"},
    {"nvidia/cuda", "cuda", "CUDA image"},
    {"driver: nvidia", "cuda", "NVIDIA device reservation"},
};

// The markers, then the engines' own images as their profiles name them (".../sglang:", a
// launcher's "vllm/vllm-openai:" or "vllm/vllm-openai" without a tag): CUDA builds, after every
// marker a line may also hold (a line's first marker in this order is taken; ROCm images say
// -rocm or rocm/).
std::vector<PlatformMarker> platform_markers(const std::vector<Launcher>& launchers, std::vector<std::string>& storage) {
  std::vector<PlatformMarker> out(std::begin(kPlatformMarkers), std::end(kPlatformMarkers));
  for (const Launcher& l : launchers) {
    storage.push_back("/" + l.engine + ":");
    for (const std::string& image : l.images) {
      storage.push_back(image + ":");
      storage.push_back(image);
    }
  }
  std::sort(storage.begin(), storage.end());
  storage.erase(std::unique(storage.begin(), storage.end()), storage.end());
  for (const std::string& image : storage) out.push_back({image, "cuda", "CUDA image", image.back() != ':'});
  return out;
}

// Whether `needle`, found at `at` in `line`, ends a word there: the line ends, or a blank, a
// quote, a digest's '@' or a bracket follows.
bool ends_word(std::string_view line, std::size_t at, std::size_t size) {
  const std::size_t end = at + size;
  return end >= line.size() || std::string_view(" \t\"'@\\)],;").find(line[end]) != npos;
}

constexpr std::size_t kMaxScopedHints = 128;
constexpr std::size_t kMaxParagraphHints = 64;  // of those, from paragraphs (JSON lists them with every result)

// The sentences of a text: split after '.', '!' or '?' and a blank ("e.g. A100" is split too,
// which keeps its names in the sentence after it).
std::vector<std::string_view> sentences_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t k = 0; k + 1 < text.size(); ++k)
    if ((text[k] == '.' || text[k] == '!' || text[k] == '?') && (text[k + 1] == ' ' || text[k + 1] == '\t')) {
      if (const std::string_view s = trim(text.substr(start, k + 1 - start)); !s.empty()) out.push_back(s);
      start = k + 2;
    }
  if (start < text.size())
    if (const std::string_view s = trim(text.substr(start)); !s.empty()) out.push_back(s);
  return out;
}
constexpr std::size_t kMaxMarkerLines = 1u << 14;

// A scoped hint once per value and part, at most kMaxScopedHints of a kind.
void add_scoped(std::vector<ContextHint>& hints, ContextHint hint) {
  if (hints.size() >= kMaxScopedHints) return;
  for (const ContextHint& h : hints)
    if (h.value == hint.value && h.scope_first == hint.scope_first && h.scope_last == hint.scope_last) return;
  hints.push_back(std::move(hint));
}

// The innermost part holding a line, for lines asked in ascending order: the parts that have begun
// are kept on a stack (nested parts above their container) and leave it when they have ended, so a
// whole file costs one pass over its parts, however many lines are asked.
class PartCursor {
 public:
  explicit PartCursor(const std::vector<launch_detail::FilePart>& parts) : parts_(parts) {}

  // The innermost part holding line `l` that `accept` takes; null when none does.
  template <typename Accept>
  const launch_detail::FilePart* at(int l, Accept accept) {
    while (next_ < parts_.size() && parts_[next_].first <= l) open_.push_back(&parts_[next_++]);
    while (!open_.empty() && open_.back()->last < l) open_.pop_back();
    if (open_.size() > 32)  // parts that cross (a tab begun inside a section that ends first) linger below
      open_.erase(std::remove_if(open_.begin(), open_.end(), [&](const launch_detail::FilePart* p) { return p->last < l; }),
                  open_.end());
    for (auto it = open_.rbegin(); it != open_.rend(); ++it)
      if ((*it)->first <= l && l <= (*it)->last && accept((*it)->kind)) return *it;
    return nullptr;
  }

 private:
  const std::vector<launch_detail::FilePart>& parts_;
  std::size_t next_ = 0;
  std::vector<const launch_detail::FilePart*> open_;
};

// Whether a YAML key is a name of hardware and nothing else, as the keys of an override map are
// (`blackwell`, `amd`, `h100`, `B200`, `mi300x`, `rtx_pro_6000_2x`, `sm90`), not a model's name
// that mentions one (`nvidia-nemotron-nano-12b`, `llama-3.1-8b-instruct-fp8-l4`): only such a key
// makes an entry (ContextHint::entry) or says a platform.
bool hardware_key(std::string_view key) {
  std::string form = gpu_match_form(trim(key));
  // A count before or after the name: "8x", "2X".
  auto count = [](std::string_view w) {
    return w.size() >= 2 && (w.back() == 'X') && std::all_of(w.begin(), w.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
  };
  if (const std::size_t sp = form.rfind(' '); sp != npos && count(std::string_view(form).substr(sp + 1))) form.resize(sp);
  if (const std::size_t sp = form.find(' '); sp != npos && count(std::string_view(form).substr(0, sp))) form.erase(0, sp + 1);
  if (launch_detail::hardware_word(form)) return true;
  const std::string bare = [&] {
    std::string b;
    for (const char c : form)
      if (c != ' ') b += c;
    return b;
  }();
  if (bare.size() >= 3 && (bare.rfind("SM", 0) == 0 || bare.rfind("GFX", 0) == 0) &&
      std::all_of(bare.begin() + (bare[0] == 'S' ? 2 : 3), bare.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
    return known_gpu(lower(bare));
  for (const GpuName& g : catalog_gpu_names())
    if (g.match == form || g.match == bare) return true;
  return false;
}

// The GPUs and platforms of the file's parts: the titles that name them, each for its part; the
// GPU hints read from keys, for the part (section, tab, YAML document) that holds them; the
// platform markers, for the code block or part that holds them, else the whole file.
void scope_hints(std::string_view text, const std::vector<PhysicalLine>& lines, InputFormat format, bool every_line,
                 std::string_view file_name, const std::vector<Launcher>& launchers, FileContext& ctx) {
  using launch_detail::FilePart;
  const std::vector<FilePart> parts = launch_detail::file_parts(lines, format);
  auto container = [](FilePart::Kind k) {
    return k != FilePart::Kind::prose && k != FilePart::Kind::comment && k != FilePart::Kind::code_block &&
           k != FilePart::Kind::paragraph;
  };
  PartCursor keys(parts);  // the hints from keys are in line order
  for (ContextHint& h : ctx.gpus) {
    if (const FilePart* p = keys.at(h.line, container)) {
      h.scope_first = p->first;
      h.scope_last = p->last;
    }
  }
  // A setting written in a YAML entry for some hardware (recipes' `hardware_overrides.amd.extra_env`)
  // is that entry's: it reaches the commands the entry holds, no other (add_command_context).
  PartCursor entries(parts);
  for (ContextHint& e : ctx.environment)
    if (const FilePart* p = entries.at(e.line, [](FilePart::Kind k) { return k == FilePart::Kind::yaml_key; })) {
      e.scope_first = p->first;
      e.scope_last = p->last;
    }
  std::size_t paragraph_hints = 0;
  for (const FilePart& p : parts) {
    if (p.title.empty()) continue;
    const std::string source(launch_detail::name_of(p.kind));
    const bool paragraph = p.kind == FilePart::Kind::paragraph;
    // A paragraph speaks through one sentence: before a block, the last that names a GPU, the
    // nearest to the block (else its last sentence, for the platform it may name); in a section's
    // text, the first that names a GPU.
    std::string_view said = p.title;
    std::vector<std::string> gpus;
    if (p.kind == FilePart::Kind::prose || paragraph) {
      const std::vector<std::string_view> sentences = sentences_of(p.title);
      said = {};
      for (std::size_t k = 0; k < sentences.size() && said.empty(); ++k) {
        const std::string_view sentence = paragraph ? sentences[k] : sentences[sentences.size() - 1 - k];
        gpus = gpus_named(sentence);
        if (!gpus.empty()) said = sentence;
      }
      if (said.empty() && !paragraph && !sentences.empty()) said = sentences.back();
    } else {
      gpus = gpus_named(p.title);
    }
    if (said.empty() || (paragraph && paragraph_hints >= kMaxParagraphHints)) continue;
    const bool key = p.kind == FilePart::Kind::yaml_key;
    const bool entry = key && hardware_key(p.title);  // else a model's name, say, that names a GPU
    for (std::string& gpu : gpus) {
      ContextHint hint{std::move(gpu), source, std::string(said), "", p.title_line, p.first, p.last};
      hint.paragraph = paragraph;
      hint.entry = entry;
      paragraph_hints += paragraph ? 1 : 0;
      add_scoped(ctx.gpus, std::move(hint));
    }
    if (paragraph) continue;  // a paragraph's platform is advice
    if (key && !entry) continue;  // `nvidia-nemotron-nano-12b:` says no platform
    if (std::string platform = platform_named(said); !platform.empty()) {
      ContextHint hint{std::move(platform), source, std::string(said), "", p.title_line, p.first, p.last};
      hint.entry = entry;
      add_scoped(ctx.platforms, std::move(hint));
    }
  }
  const bool document = format == InputFormat::markdown || format == InputFormat::rst || format == InputFormat::asciidoc;
  // The file's name and folder, for the whole file, where nothing inside says more: a GPU
  // ("dsr1_fp8_mi355x_docker.sh", "h100/serve.sh") when the text names none, a platform
  // ("amd_gpu.md", "rocm/serve.sh", "vllm-tpu/deploy.yaml").
  {
    std::string_view name = file_name;  // its last two components
    if (const std::size_t slash = name.find_last_of('/'); slash != npos && slash > 0) {
      const std::size_t up = name.find_last_of('/', slash - 1);
      name = name.substr(up == npos ? 0 : up + 1);
    }
    if (name.size() > 256) name = name.substr(name.size() - 256);
    if (ctx.gpus.empty())
      for (std::string& gpu : gpus_named(name))
        add_scoped(ctx.gpus, ContextHint{std::move(gpu), "file name", std::string(name), "", 0, 0, 0});
    if (std::string platform = platform_named(name); !platform.empty() && platform != "cpu" && platform != "mps")
      add_scoped(ctx.platforms, ContextHint{std::move(platform), "file name", std::string(name), "", 0, 0, 0});
  }
  std::vector<std::string_view> needles;
  std::vector<std::string> images;
  const std::vector<PlatformMarker> marks = platform_markers(launchers, images);
  for (const PlatformMarker& m : marks) needles.push_back(m.needle);
  PartCursor markers(parts);
  std::size_t examined = 0;  // a file of a million image lines is read for the first of them
  for (const std::size_t k : lines_holding(text, lines, needles, every_line)) {
    if (ctx.platforms.size() >= kMaxScopedHints || ++examined > kMaxMarkerLines) break;
    const std::string_view line = lines[k].text;
    const int n = static_cast<int>(k) + 1;
    for (const PlatformMarker& m : marks) {
      std::size_t at = line.find(m.needle);
      while (m.word && at != npos && !ends_word(line, at, m.needle.size())) at = line.find(m.needle, at + 1);
      if (at == npos) continue;
      const bool variable = std::isupper(static_cast<unsigned char>(m.needle.front())) != 0;
      if (variable && at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) continue;
      const FilePart* p =
          markers.at(n, [](FilePart::Kind kind) {
            return kind != FilePart::Kind::prose && kind != FilePart::Kind::comment && kind != FilePart::Kind::paragraph;
          });
      // In a document, only code says where it runs: "the rocm/sglang image" in prose is advice.
      if (document && (!p || p->kind != FilePart::Kind::code_block)) continue;
      std::string_view shown = trim(line);
      if (shown.size() > 160) shown = trim(line.substr(at >= 60 ? at - 60 : 0, 160));
      add_scoped(ctx.platforms, ContextHint{std::string(m.platform), std::string(m.source), std::string(shown), "", n,
                                            p ? p->first : 0, p ? p->last : 0});
      break;  // one marker a line
    }
  }
}

}  // namespace

FileContext find_file_context(std::string_view text, const std::vector<Launcher>& launchers) {
  return launch_detail::find_file_context(text, launchers, /*every_line=*/false);
}

FileContext launch_detail::find_file_context(std::string_view text, const std::vector<Launcher>& launchers,
                                             bool every_line, InputFormat format, std::string_view file_name) {
  FileContext ctx;
  const std::vector<PhysicalLine> lines = split_lines(text);
  // Keys whose value names a GPU or an instance type, and how the output names them.
  struct GpuKey {
    std::string_view key;
    std::string_view source;
  };
  static constexpr GpuKey kGpuKeys[] = {
      {"nvidia.com/gpu.product", "node label nvidia.com/gpu.product"},
      {"cloud.google.com/gke-accelerator", "node label cloud.google.com/gke-accelerator"},
      {"node.kubernetes.io/instance-type", "node label node.kubernetes.io/instance-type"},
      {"beta.kubernetes.io/instance-type", "node label beta.kubernetes.io/instance-type"},
      {"karpenter.k8s.aws/instance-gpu-name", "node label karpenter.k8s.aws/instance-gpu-name"},
      {"amd.com/gpu.product-name", "node label amd.com/gpu.product-name"},
  };
  std::set<std::string> engines;
  for (const Launcher& l : launchers) engines.insert(l.engine);
  // Every hint below starts from a line holding one of these: a key, `gpu:`, `accelerators:`,
  // `repository:` or an engine's name (image tags "/ENGINE:" and pinned packages hold it).
  std::vector<std::string_view> needles;
  for (const GpuKey& g : kGpuKeys) needles.push_back(g.key);
  for (std::string_view n : {"gpu:", "accelerators:", "repository:", "gpu=", "--gres=gpu:", "hardware:", "gpu_type:",
                             "gpu-type:", "gpuType:"})
    needles.push_back(n);
  for (const std::string& e : engines) needles.push_back(e);

  for (const std::size_t k : lines_holding(text, lines, needles, every_line)) {
    const std::string_view line = lines[k].text;
    const int n = static_cast<int>(k) + 1;
    const std::string_view t = trim(line);
    auto add_gpu = [&](std::string_view value, std::string_view source) {
      const std::string gpu = gpu_from_label(value);
      if (!gpu.empty() && known_gpu(gpu)) add_hint(ctx.gpus, ContextHint{gpu, std::string(source), std::string(value), "", n});
    };
    for (const GpuKey& g : kGpuKeys) {
      const std::size_t at = line.find(g.key);
      if (at == npos) continue;
      std::string_view v = value_after(line, at + g.key.size());
      if (v.empty()) {
        // Node affinity: `- key: LABEL` then `operator: In` and `values: [X]` or `- X` below.
        for (std::size_t j = k + 1; j < lines.size() && j <= k + 6 && v.empty(); ++j) {
          const std::string_view u = trim(lines[j].text);
          if (starts_with(u, "values:")) {
            v = value_after(u, 0);
            if (v.empty() && j + 1 < lines.size() && starts_with(trim(lines[j + 1].text), "- "))
              v = trim(trim(lines[j + 1].text).substr(2));
          }
        }
        while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
      }
      if (!v.empty()) add_gpu(v, g.source);
    }
    // Modal `gpu="H200:8"` (or gpu='...'); Slurm `--gres=gpu:h100:8`.
    for (std::string_view key : {"gpu=\"", "gpu='", "--gres=gpu:"}) {
      const std::size_t at = line.find(key);
      if (at == npos || (at > 0 && word_char(line[at - 1]) && key.front() != '-')) continue;
      std::string_view v = line.substr(at + key.size());
      v = v.substr(0, std::min(v.find_first_of("\"' ,:"), v.size()));
      if (!v.empty()) add_gpu(v, key.front() == '-' ? "Slurm --gres" : "gpu=");
    }
    // A job's GPU type (srt-slurm recipes' `resources.gpu_type: "b200"`: SemiAnalysisAI/InferenceX@843c6254
    // benchmarks/multi_node/srt-slurm-recipes/**/*.yaml).
    for (std::string_view key : {"gpu_type:", "gpu-type:", "gpuType:"})
      if (starts_with(t, key) || (starts_with(t, "- ") && starts_with(launch_detail::ltrim(t.substr(2)), key))) {
        std::string_view v = value_after(t, t.find(key) + key.size() - 1);
        while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
        if (!v.empty()) add_gpu(v, "gpu_type");
      }
    if (starts_with(t, "gpu:") || starts_with(t, "- gpu:")) {  // dstack resources
      const std::string_view v = value_after(t, t.find("gpu") + 3);
      if (!v.empty()) add_gpu(v, "dstack resources gpu");
    }
    // A hardware list (vllm-project/recipes@8959cf64 models/*/*.yaml `meta.hardware: {h200: verified,
    // mi300x: verified, b300: unsupported}`): each GPU it names, unless marked unsupported. A key
    // holding a map (sgl-cookbook's `H100: {tp: 16}`) is an entry of its own (file_parts.cpp).
    if (t == "hardware:") {
      const std::size_t indent = line.size() - launch_detail::ltrim(line).size();
      std::size_t child = npos;
      for (std::size_t j = k + 1; j < lines.size() && j <= k + 64; ++j) {
        const std::string_view u = lines[j].text;
        const std::string_view ut = trim(u);
        if (ut.empty() || ut.front() == '#') continue;
        const std::size_t at = u.size() - launch_detail::ltrim(u).size();
        if (at <= indent) break;
        if (child == npos) child = at;
        const std::size_t colon = ut.find(':');
        if (at != child || colon == npos) continue;
        std::string_view mark = trim(ut.substr(colon + 1));
        mark = trim(mark.substr(0, mark.find(" #")));
        while (!mark.empty() && (mark.front() == '"' || mark.front() == '\'')) mark.remove_prefix(1);
        while (!mark.empty() && (mark.back() == '"' || mark.back() == '\'')) mark.remove_suffix(1);
        const std::string said = lower(mark);
        if (said.empty() || said.front() == '{' || said.front() == '[' || said == "unsupported" || said == "false" ||
            said == "no" || said == "none")
          continue;
        const std::string gpu = gpu_from_label(ut.substr(0, colon));
        if (!gpu.empty() && known_gpu(gpu))
          add_hint(ctx.gpus, ContextHint{gpu, "hardware list", std::string(ut), "", static_cast<int>(j) + 1});
      }
    }
    if (starts_with(t, "accelerators:")) {  // SkyPilot resources: each GPU of an any-of set or list
      for (const std::string_view v : accelerator_choices(t.substr(13), lines, k))
        add_gpu(v, "SkyPilot resources accelerators");
    }
    // Releases: an image ".../ENGINE:TAG", a pinned package "ENGINE==X.Y.Z" / "ENGINE[all]==X.Y.Z".
    // `ref` ends with ':' and is where the image reference holds it ("/sglang:", "vllm/vllm-openai:");
    // the hint quotes the whole reference, registry included.
    auto image_tags = [&](const std::string& ref, const std::string& engine, bool whole_repository) {
      for (std::size_t at = line.find(ref); at != npos; at = line.find(ref, at + 1)) {
        if (whole_repository && at > 0 && line[at - 1] != '/' && (word_char(line[at - 1]) || line[at - 1] == '.'))
          continue;  // "myvllm/vllm-openai:" is another repository
        std::size_t b = at;
        while (b > 0 && !std::isspace(static_cast<unsigned char>(line[b - 1])) && line[b - 1] != '"' &&
               line[b - 1] != '\'' && line[b - 1] != '=')
          --b;
        std::size_t end = at + ref.size();
        while (end < line.size() && (word_char(line[end]) || line[end] == '.')) ++end;
        const std::string release = release_of(line.substr(at + ref.size(), end - at - ref.size()));
        if (!release.empty())
          add_hint(ctx.releases, ContextHint{release, "image tag", std::string(line.substr(b, end - b)), engine, n});
      }
    };
    for (const std::string& e : engines) {
      image_tags("/" + e + ":", e, false);
      // An image whose entrypoint is one of the engine's launchers: "vllm/vllm-openai:v0.11.0".
      for (const Launcher& l : launchers)
        if (l.engine == e)
          for (const std::string& image : l.images) image_tags(image + ":", e, true);
      // Helm values: `repository: org/ENGINE` with `tag: vX.Y.Z` beside it in the same map.
      if (starts_with(t, "repository:")) {
        std::string_view repo_value = trim(t.substr(11));
        while (!repo_value.empty() && (repo_value.back() == '"' || repo_value.back() == '\'')) repo_value.remove_suffix(1);
        if (ends_with(repo_value, "/" + e)) {
          const std::size_t indent = line.size() - launch_detail::ltrim(line).size();
          for (std::size_t j = k >= 3 ? k - 3 : 0; j < lines.size() && j <= k + 3; ++j) {
            const std::string_view u = lines[j].text;
            const std::string_view ut = trim(u);
            if (j == k || !starts_with(ut, "tag:") || u.size() - launch_detail::ltrim(u).size() != indent) continue;
            std::string_view tag = trim(ut.substr(4));
            while (!tag.empty() && (tag.front() == '"' || tag.front() == '\'')) tag.remove_prefix(1);
            const std::string release = release_of(tag);
            if (!release.empty())
              add_hint(ctx.releases, ContextHint{release, "image repository and tag", std::string(repo_value) + ":" +
                                                     std::string(tag.substr(0, tag.find_first_of("\"' #"))),
                                                 e, static_cast<int>(j) + 1});
            break;
          }
        }
      }
      for (std::size_t at = line.find(e); at != npos; at = line.find(e, at + 1)) {
        if (at > 0 && (word_char(line[at - 1]) || line[at - 1] == '/' || line[at - 1] == '.')) continue;
        std::size_t j = at + e.size();
        if (j < line.size() && line[j] == '[') {
          const std::size_t close = line.find(']', j);
          if (close == npos) continue;
          j = close + 1;
        }
        if (line.compare(j, 2, "==") != 0) continue;
        std::size_t end = j + 2;
        while (end < line.size() && (word_char(line[end]) || line[end] == '.')) ++end;
        const std::string release = release_of(line.substr(j + 2, end - j - 2));
        if (!release.empty())
          add_hint(ctx.releases, ContextHint{release, "pinned package", std::string(line.substr(at, end - at)), e, n});
      }
    }
  }
  find_environment(text, lines, ctx, every_line);
  scope_hints(text, lines, format, every_line, file_name, launchers, ctx);
  return ctx;
}

namespace launch_detail {

bool hardware_word(std::string_view word) {
  if (word.empty() || word.size() > 32 ||
      !std::all_of(word.begin(), word.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
    return false;
  if (!platform_named(word).empty()) return true;
  static const std::vector<std::string> families = [] {
    std::vector<std::string> out;
    if (const auto catalog = builtin_catalog())
      for (const GpuArch& a : (*catalog)->architectures())
        if (!a.family.empty()) out.push_back(lower(std::string_view(a.family).substr(0, a.family.find(' '))));
    return out;
  }();
  return std::find(families.begin(), families.end(), lower(word)) != families.end();
}

namespace {

// The command whose lines hold a setting (`VAR=x cmd`, `env VAR=x cmd`, `docker run -e VAR=x`, a
// container's env written between its command and args): the setting is that command's alone.
// Null for a setting the file makes for other commands (`export`, Dockerfile ENV, a line of its own).
const LaunchCommand* command_holding(const ContextHint& setting, const std::vector<LaunchCommand>& commands) {
  const std::string_view t = setting.text;
  if (starts_with(t, "export ") || starts_with(t, "ENV ") || starts_with(t, "ARG ")) return nullptr;
  for (const LaunchCommand& cmd : commands) {
    const auto [first, last] = lines_of(cmd);
    if (cmd.file.empty() || setting.line < first || setting.line > last) continue;
    return &cmd;
  }
  return nullptr;
}

// Whether a setting reaches a command: one on the command's own lines only that command (`owner`),
// a shell `export` the commands from its line on, one in a YAML entry for some hardware the
// commands of that entry, any other (YAML env, compose environment, ENV)
// every command of its engine in the file.
bool reaches(const ContextHint& setting, const LaunchCommand* owner, const LaunchCommand& cmd) {
  if (setting.engine != cmd.engine || !setting.holds(cmd.line)) return false;
  if (owner) return owner == &cmd;
  return !starts_with(setting.text, "export ") || cmd.line >= setting.line;
}

}  // namespace

void merge_file_context(FileContext& into, FileContext from) {
  for (ContextHint& h : from.gpus) add_scoped(into.gpus, std::move(h));
  for (ContextHint& h : from.platforms) add_scoped(into.platforms, std::move(h));
  for (ContextHint& h : from.releases) add_hint(into.releases, std::move(h));
  for (ContextHint& h : from.models) add_hint(into.models, std::move(h));
  for (ContextHint& h : from.environment) {
    if (into.environment.size() >= 64) break;
    const bool known = std::any_of(into.environment.begin(), into.environment.end(),
                                   [&](const ContextHint& e) { return e.line == h.line && e.source == h.source; });
    if (!known) into.environment.push_back(std::move(h));
  }
}

void scope_yaml_settings(std::string_view text, const std::vector<LaunchCommand>& commands, FileContext& context) {
  if (commands.empty() || std::all_of(context.environment.begin(), context.environment.end(),
                                      [](const ContextHint& e) { return e.scope_first != 0; }))
    return;
  const std::vector<PhysicalLine> lines = split_lines(text);
  const int n = static_cast<int>(lines.size());
  const YamlBlocks blocks = yaml_blocks(lines);
  const std::vector<int>& parent = blocks.parent;
  const std::vector<int>& end = blocks.end;
  std::vector<int> command_lines;
  for (const LaunchCommand& c : commands)
    if (!c.file.empty() && c.line > 0) command_lines.push_back(c.line);
  std::sort(command_lines.begin(), command_lines.end());
  auto holds_command = [&](int first, int last) {
    const auto it = std::lower_bound(command_lines.begin(), command_lines.end(), first);
    return it != command_lines.end() && *it <= last;
  };
  for (ContextHint& e : context.environment) {
    if (e.scope_first != 0 || e.line < 1 || e.line > n) continue;
    for (int a = parent[static_cast<std::size_t>(e.line)]; a > 0; a = parent[static_cast<std::size_t>(a)]) {
      if (!holds_command(a, end[static_cast<std::size_t>(a)])) continue;
      e.scope_first = a;
      e.scope_last = end[static_cast<std::size_t>(a)];
      break;
    }
  }
}

void add_command_context(std::vector<LaunchCommand>& commands, const std::vector<Launcher>& launchers,
                         FileContext& context) {
  (void)launchers;
  // An entry is one only where it holds a command (sgl-cookbook's `defaults.hardware.H100: {tp: 16}`
  // holds none: it names a GPU of the file, no override of its commands).
  for (std::vector<ContextHint>* hints : {&context.gpus, &context.platforms})
    for (ContextHint& h : *hints)
      if (h.entry)
        h.entry = std::any_of(commands.begin(), commands.end(), [&](const LaunchCommand& c) {
          return !c.file.empty() && h.holds(c.line);
        });
  // A platform marker on a command's own lines (`docker run --device=/dev/kfd rocm/...`) is that
  // command's alone, as a setting there is.
  for (ContextHint& p : context.platforms)
    for (const LaunchCommand& cmd : commands) {
      const auto [first, last] = lines_of(cmd);
      if (cmd.file.empty() || p.line < first || p.line > last) continue;
      p.scope_first = first;
      p.scope_last = last;
      break;
    }
  std::vector<const LaunchCommand*> owners;  // per setting: the one command it belongs to, or null
  for (const ContextHint& e : context.environment) owners.push_back(command_holding(e, commands));
  for (LaunchCommand& cmd : commands) {
    for (std::size_t k = 0; k < context.environment.size(); ++k) {
      const ContextHint& e = context.environment[k];
      if (reaches(e, owners[k], cmd)) cmd.environment.push_back({e.source, e.value, e.line});
    }
    // The arguments as the command's engine reads them: its model flag, or the positional MODEL.
    auto profile = builtin_profile(cmd.engine.empty() ? "sglang" : cmd.engine);
    const Grammar* grammar = profile ? (*profile)->grammar(cmd.grammar) : nullptr;
    if (!grammar) continue;
    ParseOptions options;
    options.positional_model = cmd.positional_model;
    const ParsedArgs args = parse_launch_args(cmd, *grammar, options);
    for (const char* field : {"model", "served_model_name"}) {
      const ArgValue* model = args.value(field);
      if (!model || !model->known()) continue;
      std::string_view name = model->text;
      while (!name.empty() && name.back() == '/') name.remove_suffix(1);
      // A local path names the model by its last component; an org/name id stays whole.
      const bool path = starts_with(name, "/") || starts_with(name, "./") || starts_with(name, "~");
      const std::string value(path ? basename(name) : name);
      add_hint(context.models,
          ContextHint{value, model->flag.empty() ? "positional model" : model->flag, model->text, cmd.engine, model->line});
    }
  }
}

}  // namespace launch_detail
}  // namespace attnsel
