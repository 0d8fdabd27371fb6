// --attention-backend-config in its three forms: a JSON or YAML file, an inline JSON object, or
// key=value pairs ("sparsity=0.5,enable_x=true"). Parsing only; select() checks the values
// against the chosen backend's declared parameters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/request.hpp"

namespace attnsel {

// Inline text: a JSON object, or key=value pairs separated by commas (brackets may hold commas).
ATTNSEL_API Result<BackendConfig> parse_backend_config(std::string_view text);
// File contents: JSON, or YAML when `path` ends in .yaml/.yml (an Error when built without yaml-cpp).
// YAML is loaded with node, depth and alias budgets and rejects duplicate keys (src/core/yaml_load.hpp).
ATTNSEL_API Result<BackendConfig> parse_backend_config_file(std::string_view contents, std::string_view path);

// A backend config is a few parameters; the inline form and files are refused above this size.
inline constexpr std::size_t kMaxBackendConfigBytes = 1u << 20;

// Reads `path` (a regular file, at most kMaxBackendConfigBytes; directories, FIFOs, unreadable files
// are io_errors with the reason) and parses it with parse_backend_config_file().
ATTNSEL_API Result<BackendConfig> load_backend_config_file(const std::string& path);

}  // namespace attnsel
