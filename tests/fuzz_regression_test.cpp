// The fuzz targets (fuzz/targets.hpp) in the normal build: every saved crash
// (tests/fixtures/fuzz-regressions/<target>/) and every seed of the corpora replays cleanly.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../fuzz/targets.hpp"

namespace {

namespace fs = std::filesystem;
using Target = int (*)(const std::uint8_t*, std::size_t);

struct Named {
  const char* name;
  Target target;
};
const Named kTargets[] = {
    {"matrix_loader", attnsel::fuzz::matrix_loader}, {"launch", attnsel::fuzz::launch_commands},
    {"config", attnsel::fuzz::model_config},         {"gpu_name", attnsel::fuzz::gpu_name},
    {"select", attnsel::fuzz::selection},             {"check_file", attnsel::fuzz::check_file},
    {"backend_config", attnsel::fuzz::backend_config}, {"yaml_budget", attnsel::fuzz::yaml_budget},
    {"output_encoders", attnsel::fuzz::output_encoders}, {"process_files", attnsel::fuzz::process_files},
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t replay(Target target, const fs::path& dir) {
  std::size_t n = 0;
  if (!fs::is_directory(dir)) return n;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.front() == '.' || entry.path().extension() == ".md") continue;
    SCOPED_TRACE(entry.path().string());
    const std::string bytes = read(entry.path());
    EXPECT_EQ(target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
    ++n;
  }
  return n;
}

TEST(FuzzRegressions, EverySavedInputReplaysCleanly) {
  const fs::path root = fs::path(ATTNSEL_TESTS_DIR) / "fixtures" / "fuzz-regressions";
  for (const auto& t : kTargets) replay(t.target, root / t.name);
  // A folder that names no target would be skipped silently: catch it.
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(std::any_of(std::begin(kTargets), std::end(kTargets),
                            [&](const Named& t) { return entry.path().filename() == t.name; }))
        << entry.path();
  }
}

// The seeds each target starts from (fuzz/make_corpus.sh), so that the harnesses build and run here too.
TEST(FuzzRegressions, SeedsReplayCleanly) {
  const fs::path source(ATTNSEL_SOURCE_DIR), tests(ATTNSEL_TESTS_DIR);
  EXPECT_GT(replay(attnsel::fuzz::matrix_loader, source / "data"), 2u);
  EXPECT_GT(replay(attnsel::fuzz::matrix_loader, tests / "fixtures" / "matrices" / "bad"), 30u);
  EXPECT_GT(replay(attnsel::fuzz::model_config, tests / "fixtures" / "configs"), 5u);
  EXPECT_GT(replay(attnsel::fuzz::selection, source / "fuzz" / "seeds" / "select"), 5u);
  EXPECT_GT(replay(attnsel::fuzz::backend_config, source / "fuzz" / "seeds" / "backend_config"), 5u);
  EXPECT_GT(replay(attnsel::fuzz::yaml_budget, source / "fuzz" / "seeds" / "yaml_budget"), 3u);
  for (const char* name : {"sm90", "sm_90a", "H100\n12.8", "NVIDIA H100 80GB HBM3", "sm_9999\n12.x", "gfx942\n12.8"})
    attnsel::fuzz::gpu_name(reinterpret_cast<const std::uint8_t*>(name), std::char_traits<char>::length(name));
  // The hostile inputs of issue 26 through every output encoder, split at a few places each.
  std::size_t hostile = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tests / "fixtures" / "hostile")) {
    if (!entry.is_regular_file()) continue;
    for (char cut : {0, 7, 40, 101}) {
      const std::string bytes = std::string(1, cut) + read(entry.path());
      EXPECT_EQ(attnsel::fuzz::output_encoders(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
    }
    ++hostile;
  }
  EXPECT_GT(hostile, 30u);
  // The walk fixtures as each kind of build and process file.
  std::size_t walked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tests / "fixtures" / "walk")) {
    if (!entry.is_regular_file()) continue;
    for (char kind = 0; kind < 8; ++kind) {
      const std::string bytes = std::string(1, kind) + read(entry.path());
      EXPECT_EQ(attnsel::fuzz::process_files(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
    }
    ++walked;
  }
  EXPECT_GT(walked, 20u);
  for (const auto& entry : fs::directory_iterator(tests / "fixtures" / "check")) {
    if (!entry.is_regular_file()) continue;
    for (char format = 0; format < 10; ++format) {
      const std::string bytes = std::string(1, format) + read(entry.path());
      attnsel::fuzz::launch_commands(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      attnsel::fuzz::check_file(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
  }
}

}  // namespace
