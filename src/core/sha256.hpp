// SHA-256 (FIPS 180-4), for fingerprints that must stay the same across runs and machines (GitLab
// Code Quality's fingerprint, SARIF's partialFingerprints). Not for security.
#pragma once

#include <string>
#include <string_view>

namespace attnsel::detail {

// The digest of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace attnsel::detail
