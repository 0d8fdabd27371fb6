// What `attnsel select` is asked, turned into a Request the way the CLI turns it: attnsel's own
// options (--model, --sliding-window, --prefer ...) over the engine's launch flags, read with the
// engine profile's grammar exactly as the engine's argparse would read them. The CLI, the C API
// and the Python module share it, so the three give the same plan for the same words.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/request.hpp"

namespace attnsel {

struct SelectOptions {
  // --model: a kind, a model id, an architecture, a config.json or model directory. Unset: the
  // engine's own model flag among `engine_flags` (--model-path); a matrix of any_model needs none.
  std::optional<std::string> model;
  // The engine's launch flags, one argv item each: {"--attention-backend", "fa3", "--page-size", "64"}.
  std::vector<std::string> engine_flags;
  // The engine release whose launch grammar reads them ("0.5.3"); unset: the newest grammar.
  std::optional<std::string> release;
  bool sliding_window = false, multimodal = false, attention_sinks = false;
  bool strict = false;  // documented caveats are errors
  Preference prefer = Preference::sglang_default;
  ComputeDtype dtype = ComputeDtype::auto_;
  // Optional Python packages present (diffusion backends); unset: nobody said, requirements are caveats.
  std::optional<std::vector<std::string>> installed;
  // Reads the files the flags name (--config FILE, a backend config file); unset: noted as not read.
  ConfigFileReader read_config;
};

// A request for every device: `findings` are what reading the engine flags found, errors (the
// engine would exit on them) and notes (a unique prefix read as argparse reads it, a value assumed).
struct SelectRequest {
  Request request;  // everything but the device
  std::vector<CheckDiagnostic> findings;

  // No error among the findings: the request may be planned.
  ATTNSEL_API bool ok() const;
  // The error findings, one line each, prefixed with their flag and value where the message does
  // not name the flag ("--attention-backend fa9: ..."); "" when ok().
  ATTNSEL_API std::string error_text() const;
  // The first error finding, or null.
  ATTNSEL_API const CheckDiagnostic* first_error() const;
};

// Errors (an Error, not findings): an unknown model (unknown_name, where "--model", with the valid
// kinds and the closest match), no model at all (invalid_argument, where "--model"), a config.json
// that cannot be read, and engine flags for a matrix whose engine has no profile (invalid_argument).
ATTNSEL_API Result<SelectRequest> prepare_select(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                                 const SelectOptions& options);

// The optional Python packages a matrix asks about (cells' requires_packages, `installed` tests of
// rules and selection entries), each once, in matrix order. Empty for most matrices.
ATTNSEL_API std::vector<std::string> optional_packages(const Matrix& matrix);

// Device `index` of the CUDA and ROCm GPUs a probe found, ready to plan for: named as --gpu names
// it (sm90), `cuda` (X.Y) replacing the driver's version, the catalog's assumption where there is
// none. Errors: no_device (nothing found: the message says what was tried), invalid_argument (an
// index past the count, a malformed `cuda`, a device the probe could not read).
ATTNSEL_API Result<DeviceInfo> device_from_probe(const Catalog& catalog, const ProbeReport& report, std::size_t index,
                                                 const std::optional<std::string>& cuda = std::nullopt);

}  // namespace attnsel
