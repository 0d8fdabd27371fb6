// The hostile-input foundations (issue 11): the bounded reader, the YAML budget, linear JSON
// parsing, output encoders that never throw. The CLI-level reproducers live in cli_bad_input_test.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/backend_config.hpp"
#include "attnsel/input.hpp"
#include "attnsel/render.hpp"
#include "core/json_text.hpp"
#include "core/read_file.hpp"
#include "core/yaml_load.hpp"
#include "matrix/json_reader.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

namespace fs = std::filesystem;
using detail::read_file_bounded;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/attnsel-hardening-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

// ---- read_file_bounded ----

using ReadFile = Scratch;

TEST_F(ReadFile, ReadsARegularFileWhole) {
  auto text = read_file_bounded(write("a.json", std::string("{}\0x", 4)));
  ASSERT_TRUE(text.ok()) << text.error().describe();
  EXPECT_EQ(*text, std::string("{}\0x", 4));
}

TEST_F(ReadFile, TheLimitIsInclusive) {
  const std::string path = write("b", std::string(1000, 'x'));
  EXPECT_TRUE(read_file_bounded(path, 1000).ok());
  auto over = read_file_bounded(path, 999);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::io_error);
  EXPECT_TRUE(contains(over.error().message, "larger than 999 bytes")) << over.error().message;
}

TEST_F(ReadFile, DirectoriesFifosAndDevicesAreRefusedWithoutReading) {
  auto d = read_file_bounded(dir_.string());
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(contains(d.error().message, "is a directory")) << d.error().message;

  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto f = read_file_bounded(fifo);  // no writer: this used to block forever
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(contains(f.error().message, "FIFO")) << f.error().message;
  auto special = read_file_bounded(fifo, 1024, /*allow_special=*/true);
  ASSERT_TRUE(special.ok()) << "a FIFO without a writer reads as empty when asked for";
  EXPECT_TRUE(special->empty());

  auto zero = read_file_bounded("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(contains(zero.error().message, "character device")) << zero.error().message;
}

TEST_F(ReadFile, AnEndlessDeviceStopsOneBytePastTheLimit) {
  auto zero = read_file_bounded("/dev/zero", 1u << 20, /*allow_special=*/true);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "larger than 1 MiB");
}

TEST_F(ReadFile, ReadErrorsCarryTheErrnoText) {
  auto mem = read_file_bounded("/proc/self/mem");
  ASSERT_FALSE(mem.ok()) << "/proc/self/mem read as an empty file";
  EXPECT_TRUE(contains(mem.error().message, "cannot read: Input/output error")) << mem.error().message;
  auto missing = read_file_bounded((dir_ / "none").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "cannot open: No such file or directory")) << missing.error().message;
  fs::create_symlink("loop", dir_ / "loop");
  auto loop = read_file_bounded((dir_ / "loop").string());
  ASSERT_FALSE(loop.ok());
  EXPECT_TRUE(contains(loop.error().message, "symbolic links")) << loop.error().message;
}

TEST_F(ReadFile, ASparseHugeFileIsRefusedFromItsSize) {
  { std::ofstream(dir_ / "huge"); }
  fs::resize_file(dir_ / "huge", 300u << 20);
  const auto start = std::chrono::steady_clock::now();
  auto huge = read_file_bounded((dir_ / "huge").string());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(contains(huge.error().message, "larger than 64 MiB")) << huge.error().message;
}

TEST(ReadFd, ReadsAPipeUpToTheLimit) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "hello", 5), 5);
  close(fds[1]);
  auto text = detail::read_fd_bounded(fds[0], "<stdin>", 4);
  close(fds[0]);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().where, "<stdin>");
  EXPECT_EQ(text.error().message, "larger than 4 bytes");
}

// ---- parse_json ----

TEST(ParseJson, BytesAfterANulAreAnErrorWithALocation) {
  auto j = detail::parse_json(std::string("{}\n \0{\"x\"", 9), "m.json");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().where, "m.json:2:2");
}

TEST(ParseJson, NumberOverflowAndDuplicateKeysHaveLineAndColumn) {
  auto big = detail::parse_json("{\n  \"a\": 1e400\n}", "m.json");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().where, "m.json:2:8");
  EXPECT_TRUE(contains(big.error().message, "1e400"));
  auto dup = detail::parse_json("{\"a\": {\"b\": 1,\n \"b\": 2}}", "m.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().where, "m.json:2:2");
  EXPECT_TRUE(contains(dup.error().message, "duplicate key \"b\""));
  EXPECT_TRUE(detail::parse_json("[{\"b\": 1}, {\"b\": 2}]", "m.json").ok()) << "equal keys in sibling objects are fine";
}

TEST(ParseJson, TooDeepIsAnErrorNotAStackOverflow) {
  auto deep = detail::parse_json(std::string(100000, '[') + std::string(100000, ']'), "d.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_TRUE(contains(deep.error().message, "nested deeper than 4096")) << deep.error().message;
}

TEST(ParseJson, LinearInAnArrayOfManyObjects) {  // the callback parser took 13 s for 200k
  std::string text = "[";
  for (int i = 0; i < 400000; ++i) text += i ? ",{}" : "{}";
  text += "]";
  const auto start = std::chrono::steady_clock::now();
  auto j = detail::parse_json(text, "big.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->size(), 400000u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << "well under a second expected";
}

// ---- the YAML budget ----

TEST(YamlBudget, AnAliasCycleIsRefusedWithItsLine) {
  auto e = detail::check_yaml("apiVersion: v1\nkind: Pod\nx: &a [*a, *a]\n", "p.yaml");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->where, "p.yaml:3:8");
  EXPECT_TRUE(contains(e->message, "a cycle"));
}

TEST(YamlBudget, ABillionLaughsIsRefusedBeforeExpansion) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  auto e = detail::check_yaml(text, "l.yaml");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(contains(e->message, "more than 1000000 YAML nodes")) << e->message;
  EXPECT_TRUE(contains(e->where, "l.yaml:6:")) << e->where;
}

TEST(YamlBudget, ProblemsCarryLineAndColumnForCallersThatPlaceThem) {
  auto p = detail::find_yaml_problem("a: 1\nx: &a [*a]\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->line, 2);
  EXPECT_EQ(p->column, 8);
  EXPECT_FALSE(detail::find_yaml_problem("a: 1\n").has_value());
}

TEST(YamlBudget, SharedAnchorsWithinTheBudgetAreFine) {
  EXPECT_FALSE(detail::check_yaml("base: &b {x: 1, y: [1, 2]}\none: *b\ntwo: *b\n", "ok.yaml").has_value());
}

TEST(YamlBudget, DepthAndDuplicateKeys) {
  detail::YamlLimits limits;
  limits.max_depth = 10;
  auto deep = detail::check_yaml(std::string(50, '[') + std::string(50, ']'), "d.yaml", limits);
  ASSERT_TRUE(deep.has_value());
  EXPECT_TRUE(contains(deep->message, "deeper than 10")) << deep->message;
  auto dup = detail::check_yaml("spec:\n  a: 1\n  b: 2\n  a: 3\n", "k.yaml");
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(dup->where, "k.yaml:4:3");
  EXPECT_FALSE(detail::check_yaml("- a: 1\n- a: 2\n", "k.yaml").has_value()) << "sibling mappings may share keys";
  auto nul = detail::check_yaml(std::string("a: 1\nb: \0c: 2\n", 13), "n.yaml");
  ASSERT_TRUE(nul.has_value());
  EXPECT_EQ(nul->where, "n.yaml:2:4");
}

// ---- backend configs ----

TEST(BackendConfigHostile, YamlCycleAndBombAreErrorsNotCrashes) {
  auto cycle = parse_backend_config_file("x: &a [*a]\n", "s.yaml");
  ASSERT_FALSE(cycle.ok());
  EXPECT_EQ(cycle.error().where, "s.yaml:1:8");
  auto key = parse_backend_config_file("? [a, b]\n: 1\n", "s.yaml");
  ASSERT_FALSE(key.ok());
  EXPECT_TRUE(contains(key.error().message, "a parameter name must be a plain string")) << key.error().message;
}

TEST(BackendConfigHostile, InvalidUtf8IsKeptAndRendersWithoutThrowing) {
  auto c = parse_backend_config_file("k: [\"\xff\"]\n", "s.yaml");  // threw from dump() (exit 134)
  ASSERT_TRUE(c.ok()) << c.error().describe();
  ASSERT_EQ(c->entries.size(), 1u);
  EXPECT_EQ(c->entries[0].second.text, "[\"\xEF\xBF\xBD\"]");
}

TEST(BackendConfigHostile, DuplicatePairsAreFoundInLinearTime) {  // 110k pairs took 36 s
  std::string text;
  for (int i = 0; i < 110000; ++i) text += "k" + std::to_string(i) + "=1,";
  std::string pairs = text + "k0=2";
  ASSERT_LT(pairs.size(), kMaxBackendConfigBytes);
  const auto start = std::chrono::steady_clock::now();
  auto c = parse_backend_config(pairs);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << "well under a second expected";
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(contains(c.error().message, "parameter 'k0' is given twice")) << c.error().message;
  EXPECT_TRUE(parse_backend_config(text.substr(0, text.size() - 1)).ok());
}

TEST_F(Scratch, BackendConfigFilesAreReadBounded) {
  auto dir = load_backend_config_file(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_TRUE(contains(dir.error().message, "is a directory"));
  auto big = load_backend_config_file(write("big.json", "{}" + std::string(2u << 20, ' ')));
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(contains(big.error().message, "larger than 1 MiB")) << big.error().message;
  auto ok = load_backend_config_file(write("c.yaml", "sparsity: 0.5\n"));
  ASSERT_TRUE(ok.ok()) << ok.error().describe();
  EXPECT_EQ(ok->origin, (dir_ / "c.yaml").string());
}

// ---- output encoders ----

TEST(JsonText, InvalidUtf8IsReplacedAndTheIndentClamped) {
  nlohmann::json j = {{"name", std::string("bad\xff" "dir")}, {"list", {1, 2}}};
  EXPECT_EQ(detail::json_text(j), "{\"list\":[1,2],\"name\":\"bad\xEF\xBF\xBD" "dir\"}");
  EXPECT_EQ(detail::json_text(j, 100000), detail::json_text(j, 16));
  EXPECT_EQ(detail::json_text(j, -7), detail::json_text(j, -1));
}

TEST(TerminalSafe, EscapesControlsAndKeepsUtf8) {
  using detail::terminal_safe;
  EXPECT_EQ(terminal_safe("a\x1b]0;title\x07" "b", false), "a\\x1B]0;title\\x07b");
  EXPECT_EQ(terminal_safe("x\r\ny\tz", false), "x\\x0D\ny\tz");
  EXPECT_EQ(terminal_safe("H100 \xc3\xa9 \xe2\x9c\x93", false), "H100 \xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(terminal_safe("\xff\xc3(", false), "\\xFF\\xC3(");
  EXPECT_EQ(terminal_safe("\xc2\x9b" "2J", false), "\\xC2\\x9B2J") << "C1 CSI";
  EXPECT_EQ(terminal_safe("\x1b[1;31mred\x1b[0m", true), "\x1b[1;31mred\x1b[0m");
  EXPECT_EQ(terminal_safe("\x1b[1;31mred\x1b[0m", false), "\\x1B[1;31mred\\x1B[0m");
  EXPECT_EQ(terminal_safe("\x1b[2J", true), "\\x1B[2J") << "only colours pass";
}

TEST(PublicInputApi, ForwardsToTheBoundedReaderAndTheEscaper) {
  auto dir = read_input_file("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().message, "is a directory, not a file");
  EXPECT_EQ(escape_for_terminal("a\x1b[2Jb"), "a\\x1B[2Jb");
}

TEST(ColorWanted, HonoursNoColorAndDumbTerminals) {
  const char* term = std::getenv("TERM");
  const std::string saved_term = term ? term : "";
  unsetenv("NO_COLOR");
  setenv("TERM", "xterm-256color", 1);
  EXPECT_TRUE(color_wanted(true));
  EXPECT_FALSE(color_wanted(false));
  setenv("TERM", "dumb", 1);
  EXPECT_FALSE(color_wanted(true));
  setenv("TERM", "xterm", 1);
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(color_wanted(true));
  setenv("NO_COLOR", "", 1);
  EXPECT_TRUE(color_wanted(true)) << "an empty NO_COLOR does not count (no-color.org)";
  unsetenv("NO_COLOR");
  if (term) setenv("TERM", saved_term.c_str(), 1);
  else unsetenv("TERM");
}

}  // namespace
}  // namespace attnsel
