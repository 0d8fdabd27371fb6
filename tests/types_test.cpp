// The domain vocabulary: version parsing, half-open version ranges, enum spellings.
#include <gtest/gtest.h>

#include <cctype>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "attnsel/types.hpp"

namespace attnsel {

// Readable failures: "12.8" instead of a byte dump.
void PrintTo(const Version& v, std::ostream* os) { *os << to_string(v); }

namespace {

// ---- parse_version ----

struct VersionCase {
  std::string_view text;
  std::optional<Version> expected;  // nullopt: must be rejected
};

void PrintTo(const VersionCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

// Test names spell the input: "12.8" -> 12_dot_8, "" -> empty.
std::string version_case_name(const testing::TestParamInfo<VersionCase>& p) {
  std::string name;
  for (char c : p.param.text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
      continue;
    }
    switch (c) {
      case '.': name += "_dot_"; break;
      case '-': name += "_minus_"; break;
      case '+': name += "_plus_"; break;
      case ',': name += "_comma_"; break;
      case ' ': name += "_space_"; break;
      default: name += "_other_"; break;
    }
  }
  return name.empty() ? "empty" : name;
}

class ParseVersionTest : public testing::TestWithParam<VersionCase> {};

TEST_P(ParseVersionTest, ParsesOrRejects) {
  const VersionCase& c = GetParam();
  const std::optional<Version> got = parse_version(c.text);
  ASSERT_EQ(got.has_value(), c.expected.has_value()) << "input \"" << c.text << "\"";
  if (c.expected) {
    EXPECT_EQ(*got, *c.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Good, ParseVersionTest,
                         testing::Values(VersionCase{"12", Version{12, 0}}, VersionCase{"12.8", Version{12, 8}},
                                         VersionCase{"13.0", Version{13, 0}}, VersionCase{"9.0", Version{9, 0}},
                                         VersionCase{"12.1", Version{12, 1}}, VersionCase{"0.0", Version{0, 0}},
                                         VersionCase{"10.3", Version{10, 3}}, VersionCase{"999.999", Version{999, 999}}),
                         version_case_name);

INSTANTIATE_TEST_SUITE_P(Bad, ParseVersionTest,
                         testing::Values(VersionCase{"", std::nullopt}, VersionCase{"12.", std::nullopt},
                                         VersionCase{".8", std::nullopt}, VersionCase{".", std::nullopt},
                                         VersionCase{"12.x", std::nullopt}, VersionCase{"x.1", std::nullopt},
                                         VersionCase{"1.2.3", std::nullopt}, VersionCase{"-1.0", std::nullopt},
                                         VersionCase{"12.-1", std::nullopt}, VersionCase{"+1.0", std::nullopt},
                                         VersionCase{"99999.0", std::nullopt}, VersionCase{"1000.0", std::nullopt},
                                         VersionCase{"12.1000", std::nullopt}, VersionCase{"9999999", std::nullopt},
                                         VersionCase{" 12.8", std::nullopt}, VersionCase{"12.8 ", std::nullopt},
                                         VersionCase{"12,8", std::nullopt}, VersionCase{"sm90", std::nullopt},
                                         VersionCase{"9.0a", std::nullopt}),
                         version_case_name);

TEST(VersionTest, OrdersByMajorThenMinor) {
  EXPECT_LT((Version{9, 0}), (Version{10, 0}));
  EXPECT_LT((Version{12, 0}), (Version{12, 1}));
  EXPECT_LT((Version{9, 9}), (Version{10, 0}));  // numeric, not lexical: 9.9 < 10.0
  EXPECT_GT((Version{12, 10}), (Version{12, 9}));
  EXPECT_LE((Version{12, 8}), (Version{12, 8}));
  EXPECT_GE((Version{12, 8}), (Version{12, 8}));
  EXPECT_NE((Version{12, 8}), (Version{12, 9}));
}

TEST(VersionTest, FormatsAsMajorDotMinor) {
  EXPECT_EQ(to_string(Version{12, 8}), "12.8");
  EXPECT_EQ(to_string(Version{13, 0}), "13.0");
  EXPECT_EQ(sm_name(ComputeCapability{9, 0}), "sm90");
  EXPECT_EQ(sm_name(ComputeCapability{10, 3}), "sm103");
  EXPECT_EQ(sm_name(ComputeCapability{12, 1}), "sm121");
}

TEST(VersionTest, RoundTripsThroughText) {
  for (Version v : {Version{0, 0}, Version{7, 5}, Version{12, 8}, Version{999, 999}}) {
    auto back = parse_version(to_string(v));
    ASSERT_TRUE(back.has_value()) << to_string(v);
    EXPECT_EQ(*back, v);
  }
}

// ---- VersionRange: half-open [min, max), a missing bound is unbounded ----

TEST(VersionRangeTest, MinIsInclusiveMaxIsExclusive) {
  const VersionRange hopper{Version{9, 0}, Version{10, 0}};
  EXPECT_FALSE(hopper.contains(Version{8, 9}));
  EXPECT_TRUE(hopper.contains(Version{9, 0}));
  EXPECT_TRUE(hopper.contains(Version{9, 9}));
  EXPECT_FALSE(hopper.contains(Version{10, 0}));
  EXPECT_FALSE(hopper.contains(Version{12, 0}));
}

TEST(VersionRangeTest, MissingBoundsAreUnbounded) {
  const VersionRange at_least{Version{12, 8}, std::nullopt};
  EXPECT_FALSE(at_least.contains(Version{12, 7}));
  EXPECT_TRUE(at_least.contains(Version{12, 8}));
  EXPECT_TRUE(at_least.contains(Version{999, 999}));

  const VersionRange below{std::nullopt, Version{12, 3}};
  EXPECT_TRUE(below.contains(Version{0, 0}));
  EXPECT_TRUE(below.contains(Version{12, 2}));
  EXPECT_FALSE(below.contains(Version{12, 3}));

  const VersionRange any{};
  EXPECT_TRUE(any.contains(Version{0, 0}));
  EXPECT_TRUE(any.contains(Version{999, 999}));
}

TEST(VersionRangeTest, EmptyRangeContainsNothing) {
  const VersionRange empty{Version{9, 0}, Version{9, 0}};
  EXPECT_FALSE(empty.contains(Version{9, 0}));
  EXPECT_FALSE(empty.contains(Version{8, 0}));
  EXPECT_FALSE(empty.contains(Version{10, 0}));
}

TEST(VersionRangeTest, FormatsWithItsBounds) {
  EXPECT_EQ(to_string(VersionRange{Version{9, 0}, Version{10, 0}}), "[9.0, 10.0)");
  EXPECT_EQ(to_string(VersionRange{Version{7, 5}, std::nullopt}), ">= 7.5");
  EXPECT_EQ(to_string(VersionRange{std::nullopt, Version{12, 3}}), "< 12.3");
  EXPECT_EQ(to_string(VersionRange{}), "any");
}

// ---- enum spellings: name_of and parse_* are inverse, and the "valid: ..." lists match ----

template <class E, class Parse>
std::string check_round_trip(int count, Parse parse) {
  std::string joined;
  for (int i = 0; i < count; ++i) {
    const E value = static_cast<E>(i);
    const std::string_view name = name_of(value);
    EXPECT_FALSE(name.empty()) << "enum value " << i;
    const std::optional<E> back = parse(name);
    EXPECT_TRUE(back.has_value()) << "\"" << name << "\" does not parse";
    if (back) {
      EXPECT_EQ(static_cast<int>(*back), i) << "\"" << name << "\" parses to another value";
    }
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

TEST(EnumNamesTest, PlatformRoundTripsAndListsEveryName) {
  EXPECT_EQ(check_round_trip<Platform>(kPlatformCount, parse_platform), platform_names());
  EXPECT_EQ(name_of(Platform::rocm), "rocm");
}

TEST(EnumNamesTest, KindRoundTripsAndListsEveryName) {
  EXPECT_EQ(check_round_trip<AttentionKind>(kKindCount, parse_kind), kind_names());
  EXPECT_EQ(name_of(AttentionKind::dsa), "dsa");
}

TEST(EnumNamesTest, KvDtypeRoundTripsAndListsEveryName) {
  EXPECT_EQ(check_round_trip<KvCacheDtype>(kKvDtypeCount, parse_kv_dtype), kv_dtype_names());
  EXPECT_EQ(name_of(KvCacheDtype::auto_), "auto");
  EXPECT_EQ(name_of(KvCacheDtype::fp8_e4m3), "fp8_e4m3");
}

TEST(EnumNamesTest, KvDtypeAcceptsSglangLongSpelling) {
  EXPECT_EQ(parse_kv_dtype("bfloat16"), KvCacheDtype::bf16);
  EXPECT_EQ(name_of(*parse_kv_dtype("bfloat16")), "bf16");  // canonical spelling out
}

TEST(EnumNamesTest, PhasePreferenceSeverityRoundTrip) {
  check_round_trip<Phase>(kPhaseCount, parse_phase);
  check_round_trip<Preference>(3, parse_preference);
  check_round_trip<Severity>(3, parse_severity);
  EXPECT_EQ(name_of(Preference::prefix_reuse), "prefix-reuse");  // CLI spelling, not the C++ one
  EXPECT_EQ(parse_preference("sglang-default"), Preference::sglang_default);
  EXPECT_EQ(parse_preference("engine-default"), Preference::sglang_default);
}

TEST(EnumNamesTest, UnknownAndNearMissNamesAreRejected) {
  EXPECT_FALSE(parse_platform("").has_value());
  EXPECT_FALSE(parse_platform("CUDA").has_value());  // spellings are exact, as on SGLang's command line
  EXPECT_FALSE(parse_platform("hip").has_value());
  EXPECT_FALSE(parse_kind("MLA").has_value());
  EXPECT_FALSE(parse_kind("gqa").has_value());
  EXPECT_FALSE(parse_kv_dtype("fp8").has_value());
  EXPECT_FALSE(parse_kv_dtype("auto_").has_value());  // the C++ enumerator name is not a spelling
  EXPECT_FALSE(parse_phase("both").has_value());
  EXPECT_FALSE(parse_preference("prefix_reuse").has_value());
  EXPECT_FALSE(parse_severity("warn").has_value());
}

}  // namespace
}  // namespace attnsel
