// The built-in matrices: each data/engines/<engine>/generations.json lists that engine's generations;
// files load once and are shared.
#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "attnsel/matrix.hpp"
#include "core/suggest.hpp"
#include "matrix/embedded.hpp"
#include "matrix/image.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {

using detail::json;
using detail::ObjectReader;

std::optional<ReleaseVersion> parse_release(std::string_view text) {
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  // "0.5.3.post1", "0.5.3rc0": the release they belong to.
  ReleaseVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  std::size_t i = 0;
  int count = 0;
  while (count < 3) {
    std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 4) ++i;
    if (i == start) return std::nullopt;
    *parts[count++] = std::stoi(std::string(text.substr(start, i - start)));
    if (i == text.size()) break;
    if (text[i] != '.') break;
    ++i;
  }
  if (count < 2) return std::nullopt;
  if (i < text.size()) {
    std::string_view rest = text.substr(i);
    if (!(rest.rfind("post", 0) == 0 || rest.rfind("rc", 0) == 0 || rest.rfind(".post", 0) == 0 || rest.rfind("dev", 0) == 0 ||
          rest.rfind(".dev", 0) == 0))
      return std::nullopt;
  }
  return v;
}

std::string to_string(ReleaseVersion v) { return fmt::format("{}.{}.{}", v.major, v.minor, v.patch); }

namespace detail {

Result<std::vector<MatrixGeneration>> load_builtin_generations_json() {
  // Every data/engines/<engine>/generations.json, engines in alphabetical order.
  std::vector<std::string_view> paths;
  for (const auto& f : embedded::files())
    if (f.name.rfind("engines/", 0) == 0 && f.name.size() > 17 && f.name.substr(f.name.size() - 17) == "/generations.json")
      paths.push_back(f.name);
  const auto folder = [](std::string_view p) { return p.substr(0, p.size() - 17); };  // "engines/<engine>"
  std::sort(paths.begin(), paths.end(), [&](std::string_view a, std::string_view b) { return folder(a) < folder(b); });
  std::vector<MatrixGeneration> out;
  int defaults = 0;
  for (std::string_view path : paths) {
    const std::string origin = "built-in:" + std::string(path);
    const std::string dir(path.substr(0, path.size() - 16));  // "engines/<engine>/"
    auto parsed = detail::parse_json(embedded::find(path), origin);
    if (!parsed) return parsed.error();
    try {
      ObjectReader r(*parsed, "");
      r.get("$schema");
      if (detail::expect_int(r.require("schema_version"), "/schema_version", 0, 1000) != 1)
        detail::fail("/schema_version", "this attnsel reads schema_version 1");
      const std::string engine = r.string("engine");
      if (dir != "engines/" + engine + "/")
        detail::fail("/engine", fmt::format("\"{}\" is not the name of its folder ({})", engine, dir));
      const bool is_default = r.boolean("default", false);
      defaults += is_default ? 1 : 0;
      r.optional_string("description");
      const json& gens = r.require("generations");
      if (!gens.is_array() || gens.empty()) detail::fail("/generations", "expected a non-empty array");
      for (std::size_t g = 0; g < gens.size(); ++g) {
        ObjectReader gr(gens[g], fmt::format("/generations/{}", g));
        MatrixGeneration gen;
        gen.engine = engine;
        gen.default_engine = is_default;
        const std::string since = gr.string("since");
        auto v = parse_release(since);
        if (!v) detail::fail(gr.child("since"), fmt::format("expected a release like \"0.5.3\", got \"{}\"", since));
        gen.since = *v;
        const std::string file = gr.string("file");
        if (file.find('/') != std::string::npos || embedded::find(dir + file).empty())
          detail::fail(gr.child("file"), fmt::format("no built-in file \"{}\" in {}", file, dir));
        gen.file = dir + file;
        gen.label = gr.optional_string("label").value_or("");
        gen.source = gr.string("source");
        gr.finish();
        if (!out.empty() && out.back().engine == engine && !(out.back().since < gen.since))
          detail::fail(gr.child("since"), "generations are listed oldest first");
        out.push_back(std::move(gen));
      }
      r.finish();
    } catch (const detail::ReadError& e) {
      return Error{ErrorCode::invalid_matrix, e.what(), origin + "#" + e.pointer, {}, {}};
    }
  }
  if (out.empty())
    return Error{ErrorCode::invalid_matrix, "no built-in data/engines/*/generations.json", "built-in:engines/", {}, {}};
  if (defaults != 1)
    return Error{ErrorCode::invalid_matrix,
                 fmt::format("exactly one engine's generations.json is the default (\"default\": true); {} are", defaults),
                 "built-in:engines/", {}, {}};
  return out;
}

Result<std::shared_ptr<const Matrix>> load_builtin_matrix_json(std::string_view file) {
  const std::string_view text = embedded::find(file);
  if (text.empty()) return Error{ErrorCode::unknown_name, fmt::format("no built-in matrix \"{}\"", file), "", {}, {}};
  return load_matrix(text, "built-in:" + std::string(file));
}

}  // namespace detail

Result<std::vector<MatrixGeneration>> builtin_generations() {
  // The compiled image when the library has one (it was validated when the library was built).
  static const Result<std::vector<MatrixGeneration>> cached = []() -> Result<std::vector<MatrixGeneration>> {
    if (auto from_image = image::generations()) return std::move(*from_image);
    return detail::load_builtin_generations_json();
  }();
  return cached;
}

Result<std::shared_ptr<const Matrix>> builtin_matrix_file(std::string_view file) {
  // Each file is loaded once per process (from the image, else its JSON); matrices are immutable and shared.
  static std::mutex mutex;
  // Never destroyed: freeing the matrices at exit would cost a CLI run more than loading them.
  static auto& cache = *new std::map<std::string, Result<std::shared_ptr<const Matrix>>, std::less<>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(file); it != cache.end()) return it->second;
  Result<std::shared_ptr<const Matrix>> loaded = [&]() -> Result<std::shared_ptr<const Matrix>> {
    if (auto from_image = image::matrix(file)) return from_image;
    return detail::load_builtin_matrix_json(file);
  }();
  return cache.emplace(std::string(file), std::move(loaded)).first->second;
}

Result<std::shared_ptr<const Matrix>> builtin_matrix(std::string_view engine, std::optional<ReleaseVersion> release) {
  auto generations = builtin_generations();
  if (!generations) return generations.error();
  std::vector<std::string> engines;
  const MatrixGeneration* pick = nullptr;
  const MatrixGeneration* oldest = nullptr;
  for (const auto& g : *generations) {
    if (std::find(engines.begin(), engines.end(), g.engine) == engines.end()) engines.push_back(g.engine);
    if (g.engine != engine) continue;
    if (!oldest) oldest = &g;
    if (!release || g.since <= *release) pick = &g;  // listed oldest first: the last that fits wins
  }
  if (!oldest) {
    Error e{ErrorCode::unknown_name, fmt::format("unknown engine '{}'", engine), "--engine", engines, {}};
    e.suggestion = detail::closest_match(engine, engines);
    return e;
  }
  if (!pick)
    return Error{ErrorCode::invalid_argument,
                 fmt::format("{} {} is older than every matrix attnsel has (the oldest describes {} from {})", engine,
                             to_string(*release), engine, to_string(oldest->since)),
                 // The option every engine shares; attnsel check names --sglang-version/--vllm-version instead
                 // when one of them gave the release.
                 "--engine-version", {}, {}};
  return builtin_matrix_file(pick->file);
}

Result<JudgedMatrix> builtin_matrix_to_judge(std::string_view engine, const ReleaseVersion& release) {
  if (auto m = builtin_matrix(engine, release)) return JudgedMatrix{*m, std::nullopt};
  auto generations = builtin_generations();
  if (!generations) return generations.error();
  for (const auto& g : *generations)  // listed oldest first
    if (g.engine == engine) {
      if (!(release < g.since)) break;  // not older than every generation: builtin_matrix's error stands
      auto oldest = builtin_matrix_file(g.file);
      if (!oldest) return oldest.error();
      return JudgedMatrix{*oldest, g.since};
    }
  return builtin_matrix(engine, release).error();
}

std::optional<ReleaseVersion> newest_known_release(std::string_view engine) {
  auto gens = builtin_generations();
  if (!gens) return std::nullopt;
  std::optional<ReleaseVersion> newest;
  for (const MatrixGeneration& g : *gens) {
    if (g.engine != engine) continue;
    std::optional<ReleaseVersion> top = g.since;
    const std::size_t to = g.label.rfind(" to v");
    if (to != std::string::npos)
      if (auto upper = parse_release(g.label.substr(to + 5))) top = *upper;
    if (!newest || *newest < *top) newest = top;
  }
  return newest;
}

}  // namespace attnsel
