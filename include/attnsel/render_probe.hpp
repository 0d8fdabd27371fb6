// The probe's report for people (a table) and for programs (JSON).
#pragma once

#include <string>

#include "attnsel/export.hpp"
#include "attnsel/probe.hpp"

namespace attnsel {

// One row per device, then any warnings. With no device, what was tried and why it failed.
// `color` adds ANSI colours (for a terminal).
ATTNSEL_API std::string render_probe_text(const ProbeReport& report, bool color);

// {"devices": [...], "attempts": [...], "warnings": [...], "timed_out": false}, dumped with
// `indent` (-1: one line). Unknown fields are null; each device has index, name, vendor,
// platform, compute_capability ("9.0"), arch, memory_bytes, memory_mib, driver_version,
// cuda_driver_version ("12.4"), pci_bus_id, uuid and source.
ATTNSEL_API std::string probe_to_json(const ProbeReport& report, int indent = 2);

}  // namespace attnsel
