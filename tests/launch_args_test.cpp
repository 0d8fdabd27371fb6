// parse_launch_args(): argparse's behaviour over a grammar from data (the synthetic ToyServe
// profile in tests/fixtures/engines/toy), so nothing here depends on a real engine's flags.
#include <gtest/gtest.h>

#include <algorithm>

#include "attnsel/launch_args.hpp"

namespace attnsel {
namespace {

const std::string kToy = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/engines/toy/";

std::shared_ptr<const EngineProfile> toy() {
  static auto p = load_profile_file(kToy + "profile.json");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().describe());
  return *p;
}

LaunchCommand command(std::vector<std::string> args, std::vector<WordShape> shapes = {}) {
  LaunchCommand c;
  c.launcher = "python3 -m toyserve.api";
  c.engine = "toy";
  c.grammar = "server";
  c.line = 1;
  c.args = std::move(args);
  c.arg_shapes = std::move(shapes);
  for (std::size_t i = 0; i < c.args.size(); ++i) c.arg_lines.push_back(static_cast<int>(i) + 1);
  return c;
}

ParsedArgs parse(std::vector<std::string> args, std::string release = "2.0", std::vector<WordShape> shapes = {},
                 ParseOptions o = {}) {
  o.engine_title = "ToyServe";
  return parse_launch_args(command(std::move(args), std::move(shapes)), *toy()->grammar("server", release), o);
}

std::vector<std::string> rules(const ParsedArgs& p, Severity at_least = Severity::info) {
  std::vector<std::string> out;
  for (const auto& f : p.findings)
    if (f.severity >= at_least) out.push_back(f.rule + " " + f.flag + (f.value.empty() ? "" : "=" + f.value));
  return out;
}

using Rules = std::vector<std::string>;

TEST(LaunchArgs, GrammarsByRelease) {
  EXPECT_EQ(toy()->grammar("server", "1.5")->engine_version, "1.0");
  EXPECT_EQ(toy()->grammar("server", "2.1")->engine_version, "2.0");
  EXPECT_EQ(toy()->grammar("server")->engine_version, "2.0");
  EXPECT_EQ(toy()->grammar("server", "0.1")->engine_version, "1.0");  // older than every grammar: the oldest
  EXPECT_EQ(toy()->grammar("nope"), nullptr);
}

TEST(LaunchArgs, BindingsAndLastValueWins) {
  ParsedArgs p = parse({"--weights", "m", "--kernel", "slow", "--block=32", "--kernel", "fast"});
  EXPECT_TRUE(rules(p).empty()) << ::testing::PrintToString(rules(p));
  ASSERT_NE(p.value("attention.all"), nullptr);
  EXPECT_EQ(p.value("attention.all")->text, "fast");
  EXPECT_EQ(p.value("attention.all")->line, 6);  // the flag's line
  EXPECT_EQ(p.value("page_size")->text, "32");
  EXPECT_EQ(p.value("model")->text, "m");
  EXPECT_EQ(p.value("kv_cache_dtype"), nullptr);
}

TEST(LaunchArgs, UniquePrefixResolvesWithANote) {
  ParsedArgs p = parse({"--weights", "m", "--kern", "fast"});
  EXPECT_EQ(rules(p), Rules{"args.prefix --kern"});
  EXPECT_EQ(p.findings[0].severity, Severity::info);
  EXPECT_EQ(p.findings[0].suggestion, "--kernel");
  EXPECT_EQ(p.value("attention.all")->text, "fast");
}

TEST(LaunchArgs, AmbiguousPrefixUnknownFlagTypoAndUnderscores) {
  EXPECT_EQ(rules(parse({"--weights", "m", "--bl", "4"})), Rules{"args.ambiguous --bl"});
  ParsedArgs typo = parse({"--weights", "m", "--kernle", "fast"});
  EXPECT_EQ(rules(typo), Rules{"args.unknown --kernle"});
  EXPECT_EQ(typo.findings[0].suggestion, "--kernel");
  EXPECT_NE(typo.findings[0].message.find("ToyServe would exit: unrecognized arguments: --kernle"), std::string::npos);
  ParsedArgs underscore = parse({"--weights", "m", "--cache_type", "half"});
  EXPECT_EQ(underscore.findings[0].suggestion, "--cache-type");
}

TEST(LaunchArgs, TypesChoicesAndValues) {
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "x"})), Rules{"args.type --block=x"});
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block", " +1_024 "})).empty());  // Python's int() takes it
  // int() reads any Unicode decimal digit and strips any Unicode space (issue 26, round four).
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block", "\uff18"})).empty());            // FULLWIDTH DIGIT EIGHT
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block", "\u3000\u0661_\u0660\u00a0"})).empty());  // Arabic-Indic 10
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block", "\U0001D7D6"})).empty());         // MATHEMATICAL BOLD 8
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "\u00b2"})), Rules{"args.type --block=\u00b2"});  // ², not Nd
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "+\u30008"})), Rules{"args.type --block=+\u30008"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "0x8"})), Rules{"args.type --block=0x8"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "8\xff"})), Rules{"args.type --block=8\xff"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--block-scale", "1e"})), Rules{"args.type --block-scale=1e"});
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block-scale", "inf"})).empty());
  // argparse reads "-inf" as an option (only -1 and -.5 look like negative numbers to it).
  EXPECT_EQ(rules(parse({"--weights", "m", "--block-scale", "-inf"})),
            (Rules{"args.missing-value --block-scale", "args.unknown -inf"}));
  EXPECT_TRUE(rules(parse({"--weights", "m", "--block-scale", "-0.5"})).empty());  // a negative number is a value
  ParsedArgs choice = parse({"--weights", "m", "--kernel", "fats"});
  EXPECT_EQ(rules(choice), Rules{"args.choice --kernel=fats"});
  EXPECT_EQ(choice.findings[0].suggestion, "fast");
  EXPECT_EQ(rules(parse({"--weights", "m", "--kernel", "turbo"}, "1.0")), Rules{"args.unknown --kernel"});  // not in 1.0
  EXPECT_EQ(rules(parse({"--weights", "m", "--verbose=1"})), Rules{"args.explicit-value --verbose=1"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--block"})), Rules{"args.missing-value --block"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--block", "--verbose"})), Rules{"args.missing-value --block"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--gpus"})), Rules{"args.missing-value --gpus"});
  ParsedArgs many = parse({"--weights", "m", "--gpus", "1", "2", "3", "--verbose"});
  EXPECT_TRUE(rules(many).empty());
  EXPECT_EQ(many.given[1].values.size(), 3u);
  EXPECT_EQ(rules(parse({"--weights", "m", "stray"})), Rules{"args.positional stray"});
  // A custom action whose arity the grammar does not know takes a value if one follows, and needs none.
  EXPECT_TRUE(rules(parse({"--weights", "m", "--legacy", "--verbose"})).empty());
  EXPECT_TRUE(rules(parse({"--weights", "m", "--legacy", "x"})).empty());
  EXPECT_EQ(rules(parse({"--kernel", "fast"})), Rules{"args.required --weights"});
}

TEST(LaunchArgs, DeprecatedSpellingIsANote) {
  ParsedArgs p = parse({"--weights", "m", "--attn-kernel", "fast"});
  EXPECT_EQ(rules(p), Rules{"args.deprecated --attn-kernel"});
  EXPECT_EQ(p.findings[0].severity, Severity::info);
  EXPECT_EQ(p.value("attention.all")->text, "fast");
}

TEST(LaunchArgs, ShellWordsAreUnknownNotErrors) {
  using S = WordShape;
  // "$@" where a flag could be: anything may be there, so a missing required flag is a note.
  ParsedArgs p = parse({"--kernel", "fast", "$@"}, "2.0", {S::literal, S::literal, S::words});
  EXPECT_TRUE(p.open_ended);
  EXPECT_EQ(rules(p, Severity::error), Rules{});
  EXPECT_EQ(rules(p), Rules{"args.required --weights"});
  // A value the shell fills in is taken as the value, unchecked.
  ParsedArgs v = parse({"--weights", "m", "--block", "$BLOCK", "--kernel=$K"}, "2.0",
                       {S::literal, S::literal, S::literal, S::value, S::value});
  EXPECT_TRUE(rules(v).empty()) << ::testing::PrintToString(rules(v));
  EXPECT_FALSE(v.value("page_size")->known());
  EXPECT_FALSE(v.value("attention.all")->known());
}

TEST(LaunchArgs, ConfigFileMergesBeforeLaterFlags) {
  ParseOptions o;
  std::string asked;
  o.read_config = [&](const std::string& path, const LaunchCommand&) -> Result<std::string> {
    asked = path;
    return std::string("kernel: slow\nblock: 64\nverbose: true\ngpus: [1, 2]\nbogus: 1\n");
  };
  // The file's flags come before the whole command line: both command-line kernels win over it.
  ParsedArgs p = parse({"--kernel", "turbo", "--weights", "m", "--config", "cfg.yaml", "--kernel", "fast"}, "2.0", {}, o);
  EXPECT_EQ(asked, "cfg.yaml");
  EXPECT_EQ(p.value("attention.all")->text, "fast");  // the command line comes later and wins
  EXPECT_EQ(p.value("page_size")->text, "64");
  EXPECT_EQ(p.value("page_size")->origin, "cfg.yaml");
  EXPECT_EQ(p.value("page_size")->line, 2);
  EXPECT_EQ(rules(p), Rules{"args.unknown --bogus"});
  EXPECT_EQ(p.findings[0].origin, "cfg.yaml");
  EXPECT_EQ(p.findings[0].line, 5);

  ParseOptions unreadable;
  unreadable.read_config = [](const std::string&, const LaunchCommand&) -> Result<std::string> {
    return Error{ErrorCode::io_error, "No such file or directory", "x", {}, {}};
  };
  EXPECT_EQ(rules(parse({"--weights", "m", "--config", "x.yaml"}, "2.0", {}, unreadable)), Rules{"args.config --config=x.yaml"});
  // A hostile config file: an alias cycle is refused, never expanded.
  ParseOptions cycle;
  cycle.read_config = [](const std::string&, const LaunchCommand&) -> Result<std::string> {
    return std::string("kernel: &a [*a]\n");
  };
  ParsedArgs hostile = parse({"--weights", "m", "--config", "c.yaml"}, "2.0", {}, cycle);
  EXPECT_EQ(rules(hostile), Rules{"args.config --config=c.yaml"});
  EXPECT_NE(hostile.findings[0].message.find("cycle"), std::string::npos) << hostile.findings[0].message;
  EXPECT_EQ(rules(parse({"--weights", "m", "--config", "x.json"}, "2.0", {}, o)), Rules{"args.config --config=x.json"});
  EXPECT_EQ(rules(parse({"--weights", "m", "--config", "x.yaml"})), Rules{"args.config --config=x.yaml"});  // not read: a note
  EXPECT_EQ(parse({"--weights", "m", "--config", "x.yaml"}).findings[0].severity, Severity::info);
}

// A FlexibleArgumentParser-style grammar (underscore_dashes, dotted_keys) and bindings that read a
// key of a JSON flag, upper-case the value, and take "auto" as not given.
ParsedArgs parse_flex(std::vector<std::string> args) {
  LaunchCommand c = command(std::move(args));
  c.grammar = "flex";
  return parse_launch_args(c, *toy()->grammar("flex"), ParseOptions{});
}

TEST(LaunchArgs, DottedKeysUnderscoresAndKeyBindings) {
  {
    const ParsedArgs p = parse_flex({"--max_len", "8", "-kc.name", "fast"});
    EXPECT_EQ(rules(p), Rules{});
    ASSERT_NE(p.value("attention.all"), nullptr);
    EXPECT_EQ(p.value("attention.all")->text, "FAST");
  }
  {
    // A dotted key wins over a whole JSON value given later; the last dotted key wins.
    const ParsedArgs p = parse_flex({"--kernel-config.name=slow", "--kernel-config", R"({"name": "turbo"})", "-kc.name", "fast"});
    ASSERT_NE(p.value("attention.all"), nullptr);
    EXPECT_EQ(p.value("attention.all")->text, "FAST");
    EXPECT_TRUE(p.unbound().empty());
  }
  {
    const ParsedArgs p = parse_flex({"--kernel-config", R"({"name": "turbo", "splits": 4})"});
    ASSERT_NE(p.value("attention.all"), nullptr);
    EXPECT_EQ(p.value("attention.all")->text, "TURBO");
  }
  {
    // "auto" means automatic: the field is not given. So is a JSON value without the key.
    EXPECT_EQ(parse_flex({"-kc.name", "auto"}).value("attention.all"), nullptr);
    EXPECT_EQ(parse_flex({"--kernel-conf", R"({"name": "auto"})"}).value("attention.all"), nullptr);  // a prefix too
    EXPECT_EQ(parse_flex({"--kernel-config", R"({"splits": 4})"}).value("attention.all"), nullptr);
    EXPECT_EQ(parse_flex({"--engine-kernel", "Auto"}).value("attention.prefill"), nullptr);
    EXPECT_EQ(parse_flex({"--engine-kernel", "fast"}).value("attention.prefill")->text, "FAST");
  }
  // Underscores are dashes only before the first '.' or '='; a dotted key of a flag that is not
  // there stays unknown, and a dotted key needs its value.
  EXPECT_EQ(rules(parse_flex({"--max_len=8"})), Rules{});
  EXPECT_EQ(rules(parse_flex({"--nope.key", "1"})), Rules{"args.unknown --nope.key"});
  EXPECT_EQ(rules(parse_flex({"-kc.name"})), Rules{"args.missing-value -kc.name"});
  // The ordinary grammar has neither: the underscore spelling is unknown there.
  EXPECT_EQ(rules(parse({"--weights", "m", "--block_size", "16"}), Severity::error).size(), 1u);
}

}  // namespace
}  // namespace attnsel
