// CUDA_VISIBLE_DEVICES as libcuda reads it. NVML ignores the variable, so the NVML path (and
// the sysfs path, for HIP_/ROCR_VISIBLE_DEVICES) applies it here.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probe/sources.hpp"

namespace attnsel::probe {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

// Like strtoul, which libcuda uses: "1gpu" reads as 1. nullopt when no digit leads.
std::optional<long long> leading_integer(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  long long value = 0;
  std::size_t digits = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (value < 1'000'000'000) value = value * 10 + (c - '0');  // saturates: no device has such an index
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return negative ? -value : value;
}

}  // namespace

Visibility select_visible(std::string_view spec, const std::vector<std::string>& uuids) {
  Visibility result;
  if (trim(spec).empty()) {
    result.note = "no device (the list is empty)";
    return result;
  }
  std::string stop;  // why the list ended early, if it did

  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view entry = trim(spec.substr(start, comma - start));
    start = comma + 1;

    if (entry.empty()) break;  // "0," ends like "0"

    std::size_t device = 0;
    if (starts_with_nocase(entry, "GPU-")) {
      std::size_t matches = 0;
      for (std::size_t i = 0; i < uuids.size(); ++i) {
        if (!uuids[i].empty() && starts_with_nocase(uuids[i], entry)) {
          ++matches;
          device = i;
        }
      }
      if (matches > 1) {
        // Following libcuda (and torch.cuda._parse_visible_devices): an ambiguous UUID hides every device.
        result.physical.clear();
        result.note = fmt::format("no device: \"{}\" is a prefix of {} devices' UUIDs", entry, matches);
        return result;
      }
      if (matches == 0) {
        stop = fmt::format("\"{}\" matches no device's UUID", entry);
        break;
      }
    } else if (starts_with_nocase(entry, "MIG-")) {
      stop = fmt::format("\"{}\" is a MIG instance, which the probe does not map", entry);
      break;
    } else {
      const std::optional<long long> index = leading_integer(entry);
      if (!index) {
        stop = fmt::format("\"{}\" is neither a device index nor a UUID", entry);
        break;
      }
      if (*index < 0) {
        stop = fmt::format("\"{}\" is negative", entry);
        break;
      }
      if (static_cast<unsigned long long>(*index) >= uuids.size()) {
        stop = fmt::format("there is no device {} ({} found)", *index, uuids.size());
        break;
      }
      device = static_cast<std::size_t>(*index);
    }

    if (std::find(result.physical.begin(), result.physical.end(), device) != result.physical.end()) {
      // A repeated device also hides every device (torch.cuda._parse_visible_devices documents the same).
      result.physical.clear();
      result.note = fmt::format("no device: \"{}\" names device {} a second time", entry, device);
      return result;
    }
    result.physical.push_back(device);
  }

  if (result.physical.empty()) {
    result.note = "no device";
  } else {
    result.note = fmt::format("{} {} of {}", result.physical.size() == 1 ? "device" : "devices",
                              fmt::join(result.physical, ", "), uuids.size());
  }
  if (!stop.empty()) result.note += fmt::format("; the list ends where {}", stop);
  return result;
}

}  // namespace attnsel::probe
