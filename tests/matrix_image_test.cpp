// The compiled matrix image (src/matrix/image.hpp) against the JSON it was built from: every
// built-in generation's matrix, the catalog, every engine profile and the generation list load to
// equal objects, field by field; the library really uses the image; a broken blob is an error.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"
#include "matrix/embedded.hpp"
#include "matrix/image.hpp"
#include "render/matrix_json.hpp"

namespace attnsel {
namespace {

std::vector<std::string> generation_files() {
  auto generations = detail::load_builtin_generations_json();
  EXPECT_TRUE(generations) << generations.error().describe();
  std::vector<std::string> files;
  if (generations)
    for (const auto& g : *generations) files.push_back(g.file);
  return files;
}

TEST(MatrixImage, TheLibraryHasOne) {
  // Without it every built-in would silently come from the JSON and the tests below would compare
  // the JSON with itself.
  EXPECT_FALSE(image::embedded_blob().empty());
  EXPECT_NE(image::matrix("engines/sglang/matrix-0.5.12.json"), nullptr);
  EXPECT_NE(image::catalog(), nullptr);
  EXPECT_NE(image::profile("engines/sglang/profile.json"), nullptr);
  EXPECT_TRUE(image::generations().has_value());
}

TEST(MatrixImage, EveryGenerationEqualsItsJson) {
  const auto files = generation_files();
  ASSERT_GE(files.size(), 5u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto from_json = detail::load_builtin_matrix_json(file);
    ASSERT_TRUE(from_json) << from_json.error().describe();
    const auto from_image = image::matrix(file);
    ASSERT_NE(from_image, nullptr);
    // Every field, through the canonical encoding ...
    EXPECT_EQ(image::serialize(*from_image), image::serialize(**from_json));
    // ... and through the independent renderer of `attnsel matrix --format json`.
    EXPECT_EQ(matrix_json(*from_image).dump(), matrix_json(**from_json).dump());
    // What the library hands out is the image's.
    auto builtin = builtin_matrix_file(file);
    ASSERT_TRUE(builtin);
    EXPECT_EQ(image::serialize(**builtin), image::serialize(**from_json));
    // The rule indexes point into the decoded matrix itself.
    for (const Rule* r : from_image->rules_in(RuleScope::backend)) {
      EXPECT_GE(r, from_image->rules().data());
      EXPECT_LT(r, from_image->rules().data() + from_image->rules().size());
    }
    for (BackendId b = 0; b < from_image->backends().size(); ++b)
      EXPECT_EQ(from_image->backend_rules(b).size(), (*from_json)->backend_rules(b).size());
  }
}

// `attnsel matrix --format json` shows every condition a rule has: a rule's `when` written in a
// generation's JSON comes back with each of its keys (config_has and config_lacks were left out).
TEST(MatrixImage, TheRenderedJsonKeepsEveryConditionKey) {
  std::size_t seen = 0;
  for (const std::string& file : generation_files()) {
    SCOPED_TRACE(file);
    auto from_json = detail::load_builtin_matrix_json(file);
    ASSERT_TRUE(from_json) << from_json.error().describe();
    const std::string rendered = matrix_json(**from_json).dump();
    for (const char* key : {"config_has", "config_lacks"}) {
      const std::string written(embedded::find(file));
      if (written.find(std::string("\"") + key + "\"") == std::string::npos) continue;
      ++seen;
      EXPECT_NE(rendered.find(std::string("\"") + key + "\":[\""), std::string::npos) << key;
    }
  }
  EXPECT_GT(seen, 0u);  // the built-in data has such rules
}

// `attnsel --version` reads only a matrix's info: the image's prefix equals the whole matrix's info.
TEST(MatrixImage, AMatrixInfoDecodesAloneAndEqualsTheMatrixs) {
  const auto same = [](const MatrixInfo& a, const MatrixInfo& b) {
    return std::tie(a.engine, a.title, a.version, a.engine_version, a.schema_version, a.paged_kv_cache, a.any_model,
                    a.description, a.source, a.origin, a.extends) ==
           std::tie(b.engine, b.title, b.version, b.engine_version, b.schema_version, b.paged_kv_cache, b.any_model,
                    b.description, b.source, b.origin, b.extends);
  };
  for (const std::string& file : generation_files()) {
    SCOPED_TRACE(file);
    auto from_json = detail::load_builtin_matrix_json(file);
    ASSERT_TRUE(from_json) << from_json.error().describe();
    const auto info = image::matrix_info(file);
    ASSERT_TRUE(info);
    EXPECT_TRUE(same(*info, (*from_json)->info()));
  }
  EXPECT_FALSE(image::matrix_info("no-such-matrix.json"));
  auto info = builtin_matrix_info();
  auto matrix = builtin_matrix();
  ASSERT_TRUE(info) << info.error().describe();
  ASSERT_TRUE(matrix) << matrix.error().describe();
  EXPECT_TRUE(same(*info, (*matrix)->info()));
  EXPECT_FALSE(info->version.empty());
}

TEST(MatrixImage, TheCatalogEqualsItsJson) {
  auto from_json = detail::load_builtin_catalog_json();
  ASSERT_TRUE(from_json) << from_json.error().describe();
  const auto from_image = image::catalog();
  ASSERT_NE(from_image, nullptr);
  EXPECT_EQ(image::serialize(*from_image), image::serialize(**from_json));
  // Independently of the encoding: every name resolves to the same device.
  ASSERT_EQ(from_image->gpus().size(), (*from_json)->gpus().size());
  for (const std::string& name : (*from_json)->gpu_names()) {
    SCOPED_TRACE(name);
    auto a = from_image->resolve_gpu(name);
    auto b = (*from_json)->resolve_gpu(name);
    ASSERT_EQ(static_cast<bool>(a), static_cast<bool>(b));
    if (!a) continue;
    EXPECT_EQ(a->arch, b->arch);
    EXPECT_EQ(a->name, b->name);
    EXPECT_EQ(a->compute_capability.has_value(), b->compute_capability.has_value());
    EXPECT_EQ(a->platform, b->platform);
  }
  EXPECT_EQ(from_image->model_ids(), (*from_json)->model_ids());
  EXPECT_EQ(from_image->assumed_cuda(), (*from_json)->assumed_cuda());
  auto builtin = builtin_catalog();
  ASSERT_TRUE(builtin);
  EXPECT_EQ(image::serialize(**builtin), image::serialize(**from_json));
}

TEST(MatrixImage, EveryProfileEqualsItsJson) {
  const auto paths = detail::builtin_profile_paths();
  ASSERT_GE(paths.size(), 3u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    auto from_json = detail::load_builtin_profile_json(path);
    ASSERT_TRUE(from_json) << from_json.error().describe();
    const auto from_image = image::profile(path);
    ASSERT_NE(from_image, nullptr);
    // Every grammar, decoded here one by one (the image decodes them on first use) ...
    ASSERT_EQ(from_image->grammars.size(), (*from_json)->grammars.size());
    for (std::size_t g = 0; g < from_image->grammars.size(); ++g) {
      const Grammar& decoded = from_image->grammars[g];
      EXPECT_TRUE(from_image->grammars.decoded(g));
      EXPECT_EQ(decoded.option_names(), (*from_json)->grammars[g].option_names());
      EXPECT_EQ(decoded.name, from_image->grammars.name(g));
      EXPECT_EQ(decoded.since, from_image->grammars.since(g));
    }
    // ... and the whole profile, every grammar's every field.
    EXPECT_EQ(image::serialize(*from_image), image::serialize(**from_json));
    auto builtin = builtin_profile((*from_json)->engine);
    ASSERT_TRUE(builtin);
    EXPECT_EQ(image::serialize(**builtin), image::serialize(**from_json));
  }
  // builtin_profiles() and builtin_profile() hand out the same objects.
  for (const auto& p : builtin_profiles()) EXPECT_EQ(*builtin_profile(p->engine), p);
}

// A built-in profile decodes only the grammars asked for; the sglang profile has several.
TEST(MatrixImage, AProfileDecodesOnlyTheGrammarAskedFor) {
  const auto p = image::profile("engines/sglang/profile.json");
  ASSERT_NE(p, nullptr);
  ASSERT_GE(p->grammars.size(), 2u);
  for (std::size_t g = 0; g < p->grammars.size(); ++g) EXPECT_FALSE(p->grammars.decoded(g)) << g;
  const Grammar* newest = p->grammar("");
  ASSERT_NE(newest, nullptr);
  EXPECT_FALSE(newest->flags.empty());
  std::size_t decoded = 0;
  for (std::size_t g = 0; g < p->grammars.size(); ++g) decoded += p->grammars.decoded(g) ? 1 : 0;
  EXPECT_EQ(decoded, 1u);
  EXPECT_EQ(p->grammar(""), newest);  // once: the same object the second time
}

// Many threads asking for the grammars of a fresh profile at once decode each once, to the JSON's
// (tests/threads_test.cpp's TSan run sees any race here).
TEST(MatrixImage, GrammarsDecodeOnceAcrossThreads) {
  for (const std::string& path : detail::builtin_profile_paths()) {
    SCOPED_TRACE(path);
    auto from_json = detail::load_builtin_profile_json(path);
    ASSERT_TRUE(from_json);
    const auto p = image::profile(path);
    ASSERT_NE(p, nullptr);
    std::vector<std::vector<const Grammar*>> seen(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < seen.size(); ++t)
      threads.emplace_back([&p, &seen, t] {
        for (std::size_t g = 0; g < p->grammars.size(); ++g) {
          const std::size_t at = (g + t) % p->grammars.size();  // each thread in another order
          seen[t].push_back(p->grammar(p->grammars.name(at), p->grammars.since(at)));
        }
      });
    for (std::thread& t : threads) t.join();
    for (std::size_t t = 1; t < seen.size(); ++t)
      for (const Grammar* g : seen[t])
        EXPECT_NE(std::find(seen[0].begin(), seen[0].end(), g), seen[0].end());
    EXPECT_EQ(image::serialize(*p), image::serialize(**from_json));
  }
}

TEST(MatrixImage, TheGenerationListEqualsItsJson) {
  auto from_json = detail::load_builtin_generations_json();
  ASSERT_TRUE(from_json);
  const auto from_image = image::generations();
  ASSERT_TRUE(from_image);
  EXPECT_EQ(image::serialize(*from_image), image::serialize(*from_json));
  auto builtin = builtin_generations();
  ASSERT_TRUE(builtin);
  ASSERT_EQ(builtin->size(), from_json->size());
  for (std::size_t i = 0; i < builtin->size(); ++i) {
    EXPECT_EQ((*builtin)[i].file, (*from_json)[i].file);
    EXPECT_EQ((*builtin)[i].since, (*from_json)[i].since);
    EXPECT_EQ((*builtin)[i].label, (*from_json)[i].label);
  }
}

// The comparison is sensitive: one changed fact deep inside a file changes the encoding.
TEST(MatrixImage, TheEncodingSeesADeepChange) {
  const std::string text(embedded::find("engines/sglang/matrix-0.5.12.json"));
  ASSERT_FALSE(text.empty());
  auto original = load_matrix(text, "built-in:engines/sglang/matrix-0.5.12.json");
  ASSERT_TRUE(original);
  // A cell's page size list is deep: backends -> cells -> page_size.
  std::string changed = text;
  const auto at = changed.find("\"page_size\": [64]");
  ASSERT_NE(at, std::string::npos) << "matrix-0.5.12.json has no cell with page_size [64] any more; pick another fact";
  changed.replace(at, 17, "\"page_size\": [32]");
  auto mutated = load_matrix(changed, "built-in:engines/sglang/matrix-0.5.12.json");
  ASSERT_TRUE(mutated) << mutated.error().describe();
  EXPECT_NE(image::serialize(**original), image::serialize(**mutated));

  auto profile = detail::load_builtin_profile_json("engines/sglang/profile.json");
  ASSERT_TRUE(profile);
  EngineProfile copy = **profile;
  ASSERT_FALSE(copy.grammars.empty());
  ASSERT_FALSE(copy.grammars.back().flags.empty());
  const std::string before = image::serialize(**profile);
  copy.grammars.back().flags.back().unset_values.push_back("auto");
  EXPECT_NE(image::serialize(copy), before);
  EXPECT_EQ(image::serialize(**profile), before);  // the copy changed, not the grammar it shared

  // A grammar of a decoded profile that does not decode is an error, not a crash.
  const std::string bytes = image::serialize(**profile);
  for (std::size_t cut : {bytes.size() / 2, bytes.size() - 1}) EXPECT_FALSE(image::deserialize_profile(bytes.substr(0, cut)));
}

TEST(MatrixImage, RoundTripsThroughItsEncoding) {
  for (const std::string& file : generation_files()) {
    auto m = detail::load_builtin_matrix_json(file);
    ASSERT_TRUE(m);
    const std::string bytes = image::serialize(**m);
    auto back = image::deserialize_matrix(bytes);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(image::serialize(**back), bytes);
  }
}

TEST(MatrixImage, ABrokenEncodingIsAnErrorNotACrash) {
  auto m = detail::load_builtin_matrix_json("engines/sglang/matrix-0.4.6.json");
  ASSERT_TRUE(m);
  const std::string bytes = image::serialize(**m);
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, bytes.size() / 3, bytes.size() - 1}) {
    auto r = image::deserialize_matrix(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(r) << "cut at " << cut;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_matrix);
  }
  EXPECT_FALSE(image::deserialize_matrix(bytes + "x"));  // bytes left over
  // Huge counts anywhere are refused, not allocated.
  std::string corrupt = bytes;
  for (std::size_t i = 0; i + 4 <= corrupt.size(); i += 97) {
    std::string c = corrupt;
    c[i] = '\xff';
    c[i + 1] = '\xff';
    c[i + 2] = '\xff';
    c[i + 3] = '\x7f';
    (void)image::deserialize_matrix(c);  // must return, whatever it returns
  }
  EXPECT_FALSE(image::deserialize_profile(""));
  EXPECT_FALSE(image::deserialize_catalog("abc"));
  EXPECT_FALSE(image::deserialize_generations(std::string(3, '\0')));
}

}  // namespace
}  // namespace attnsel
