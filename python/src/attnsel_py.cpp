// attnsel._attnsel: the C++ library for Python (pybind11). Each function answers with plain
// Python data (dicts, lists, JSON text) and errors as values ({"error": {...}}); the package in
// python/attnsel/ turns them into classes and exceptions. The work runs without the GIL.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/fix.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/suppress.hpp"
#include "attnsel/input.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/render_probe.hpp"
#include "attnsel/select_options.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/version.hpp"
#include "attnsel/walk.hpp"

namespace py = pybind11;
using namespace attnsel;

namespace {

std::string_view code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unknown_name: return "unknown_name";
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::invalid_matrix: return "invalid_matrix";
    case ErrorCode::io_error: return "io_error";
    case ErrorCode::no_device: return "no_device";
  }
  return "internal";
}

py::dict finding_dict(const Diagnostic& d) {
  py::dict f;
  f["rule"] = d.rule;
  f["severity"] = std::string(name_of(d.severity));
  f["message"] = d.message;
  f["source"] = d.source;
  f["backend"] = d.backend;
  f["phase"] = d.phase;
  return f;
}

py::dict finding_dict(const CheckDiagnostic& d) {
  py::dict f = finding_dict(d.diagnostic);
  f["flag"] = d.flag;
  f["value"] = d.value;
  f["line"] = d.line;
  return f;
}

// {"error": {...}}: the package raises the exception that fits the code. `findings` are the
// engine's reasons for refusing launch flags, when that is the error.
py::dict error_dict(const Error& e, std::string rule = {}, const std::vector<CheckDiagnostic>& findings = {},
                    std::optional<std::string> description = std::nullopt) {
  py::dict err;
  err["code"] = std::string(code_name(e.code));
  err["message"] = e.message;
  err["where"] = e.where;
  err["rule"] = std::move(rule);
  err["suggestion"] = e.suggestion;
  err["choices"] = e.choices;
  err["description"] = description ? *description : e.describe();
  py::list fs;
  for (const CheckDiagnostic& d : findings) fs.append(finding_dict(d));
  err["findings"] = fs;
  py::dict out;
  out["error"] = err;
  return out;
}

Error usage(std::string message, std::string where) {
  return Error{ErrorCode::invalid_argument, std::move(message), std::move(where), {}, {}};
}

// The built-in matrix of an engine for a release ("0.5.3"; unset: the newest).
Result<std::shared_ptr<const Matrix>> engine_matrix(const std::string& engine, const std::optional<std::string>& release) {
  std::optional<ReleaseVersion> version;
  if (release) {
    version = parse_release(*release);
    if (!version) return usage("expected a release like 0.5.3, got '" + *release + "'", "engine_version");
  }
  auto m = builtin_matrix(engine, version);
  if (!m) {
    Error e = m.error();
    if (e.where == "--engine") e.where = "engine";
    if (e.where == "--engine-version") e.where = "engine_version";
    return e;
  }
  return m;
}

// The select document as `attnsel --json` prints it for one device (docs/schema/select.schema.json).
std::string select_document(const Selection& s) { return render_select_json({s}); }

struct SelectArgs {
  std::optional<std::string> gpu, model, cuda, platform, engine_version;
  std::string engine = "sglang";
  bool sliding_window = false, multimodal = false, attention_sinks = false, strict = false;
  std::string dtype = "auto", prefer = "engine-default";
  std::vector<std::string> engine_flags;
  std::optional<std::vector<std::string>> installed;
  int device = 0;
};

struct Selected {
  std::optional<Selection> selection;
  std::vector<CheckDiagnostic> flag_findings;
  std::optional<Error> error;
  std::string rule;  // of the first refused engine flag
  std::string document, single;
};

Selected run_select(const SelectArgs& a) {
  Selected out;
  auto fail = [&](Error e) {
    out.error = std::move(e);
    return std::move(out);
  };
  auto matrix = engine_matrix(a.engine, a.engine_version);
  if (!matrix) return fail(matrix.error());
  auto catalog = builtin_catalog();
  if (!catalog) return fail(catalog.error());

  SelectOptions o;
  o.model = a.model;
  o.engine_flags = a.engine_flags;
  o.release = a.engine_version;
  o.sliding_window = a.sliding_window;
  o.multimodal = a.multimodal;
  o.attention_sinks = a.attention_sinks;
  o.strict = a.strict;
  auto prefer = parse_preference(a.prefer);
  if (!prefer) {
    Error e{ErrorCode::unknown_name, "unknown preference '" + a.prefer + "'", "prefer",
            {"sglang-default", "prefix-reuse", "throughput"}, {}};
    return fail(e);
  }
  o.prefer = *prefer;
  auto dtype = parse_compute_dtype(a.dtype);
  if (!dtype)
    return fail(Error{ErrorCode::unknown_name, "unknown dtype '" + a.dtype + "'", "dtype",
                      {"auto", "fp16", "bf16", "fp32"}, {}});
  o.dtype = *dtype;
  o.installed = a.installed;
  // The user's own flags may name any file (--config), read bounded, as the CLI does.
  o.read_config = [](const std::string& path, const LaunchCommand&) { return read_input_file(path); };
  auto prepared = prepare_select(*matrix, **catalog, o);
  if (!prepared) return fail(prepared.error());
  out.flag_findings = prepared->findings;
  if (const CheckDiagnostic* first = prepared->first_error()) {
    out.rule = first->diagnostic.rule;
    return fail(usage(prepared->error_text(), first->flag));
  }

  // The device: gpu, else ATTNSEL_GPU, else a platform that needs none, else the probe.
  std::optional<Platform> platform;
  if (a.platform) {
    platform = parse_platform(*a.platform);
    if (!platform) {
      std::vector<std::string> names = {"cuda", "rocm", "npu", "xpu", "cpu", "mps"};
      return fail(Error{ErrorCode::unknown_name, "unknown platform '" + *a.platform + "'", "platform", names, {}});
    }
  }
  std::optional<std::string> gpu = a.gpu;
  std::string origin = "--gpu";
  if (!gpu)
    if (const char* env = std::getenv("ATTNSEL_GPU"); env && *env) gpu = env, origin = "ATTNSEL_GPU";
  Request request = std::move(prepared->request);
  if (gpu || (platform && *platform != Platform::cuda)) {
    auto device = resolve_device(**catalog, DeviceSpec{gpu, platform, a.cuda, origin});
    if (!device) return fail(device.error());
    request.device = std::move(*device);
  } else {
    if (a.device < 0) return fail(usage("must be 0 or more", "device"));
    auto device = device_from_probe(**catalog, probe_devices(), static_cast<std::size_t>(a.device), a.cuda);
    if (!device) return fail(device.error());
    request.device = std::move(*device);
  }
  auto selection = select(*matrix, request);
  if (!selection) return fail(selection.error());
  out.document = select_document(*selection);
  out.single = render_json(*selection);
  out.selection = std::move(*selection);
  return out;
}

py::dict select_py(const SelectArgs& a) {
  Selected r;
  {
    py::gil_scoped_release unlocked;
    r = run_select(a);
  }
  // Refused engine flags read as the CLI prints them: each message names its flag.
  if (r.error) return error_dict(*r.error, r.rule, r.flag_findings, r.rule.empty() ? std::nullopt : std::optional(r.error->message));
  const Selection& s = *r.selection;
  py::dict out;
  out["ok"] = s.ok();
  out["document"] = r.document;
  out["selection"] = r.single;
  out["flags"] = s.flags();
  out["environment"] = s.environment();
  for (const auto& [key, list] : {std::pair<const char*, const std::vector<Finding>*>{"errors", &s.errors},
                                  {"warnings", &s.warnings},
                                  {"notes", &s.notes}}) {
    py::list fs;
    for (const Diagnostic& d : s.describe(*list)) fs.append(finding_dict(d));
    out[key] = fs;
  }
  py::list rejected;
  for (const Rejection& rej : s.rejected) {
    py::dict j;
    j["backend"] = s.name(rej.backend);
    j["slot"] = s.matrix->slot(s.matrix->backend(rej.backend).slot).name;
    py::list reasons;
    for (const Diagnostic& d : s.describe(rej.reasons)) reasons.append(finding_dict(d));
    j["reasons"] = reasons;
    rejected.append(j);
  }
  out["rejected"] = rejected;
  py::list notes;
  for (const CheckDiagnostic& d : r.flag_findings) notes.append(finding_dict(d));
  out["flag_notes"] = notes;
  return out;
}

struct CheckArgs {
  std::optional<std::vector<std::string>> argv;
  std::string text;
  std::optional<std::string> path;  // a file or directory, walked as `attnsel check PATH` does
  std::optional<std::string> filename, gpus, cuda, engine_version, model_kind;
  std::string engine = "sglang";
  bool strict = false;
  bool unknown_model_error = false;
  std::optional<std::vector<std::string>> installed;
  std::vector<std::string> exclude, include;
  bool gitignore = true;
  std::vector<std::string> select, ignore;  // rule patterns (suppress.hpp)
};

py::dict check_py(const CheckArgs& a) {
  std::vector<CheckReport> reports;
  std::optional<PathCheck> walked;
  std::string document;
  std::optional<Error> error;
  {
    py::gil_scoped_release unlocked;
    auto matrix = engine_matrix(a.engine, a.engine_version);
    auto catalog = builtin_catalog();
    if (!matrix) error = matrix.error();
    else if (!catalog) error = catalog.error();
    CheckRun run;
    run.gpus = a.gpus;
    run.cuda = a.cuda;
    run.release = a.engine_version;
    run.options.strict = a.strict;
    run.options.release = a.engine_version;
    run.options.unknown_model_error = a.unknown_model_error;
    if (a.installed) {
      run.options.installed = *a.installed;
      run.options.installed_known = true;
    }
    if (a.model_kind) {
      run.options.model_kind = parse_kind(*a.model_kind);
      if (!run.options.model_kind && !error)
        error = Error{ErrorCode::unknown_name, "unknown model kind '" + *a.model_kind + "'", "model_kind",
                      {"mha", "mla", "gdn", "dsa"}, {}};
    }
    if (auto diffusion = builtin_matrix("sglang-diffusion", std::nullopt)) run.options.diffusion_matrix = *diffusion;
    for (const auto& [list, key] : {std::pair{&a.select, "select"}, std::pair{&a.ignore, "ignore"}})
      for (const std::string& p : *list) {
        if (auto e = check_rule_pattern(p, key); e && !error) error = *e;
        (std::string(key) == "select" ? run.rules.select : run.rules.ignore).push_back({p, key});
      }
    if (!error && a.path) {
      WalkOptions walk;
      walk.exclude = a.exclude;
      walk.include = a.include;
      walk.gitignore = a.gitignore;
      auto r = check_paths(*matrix, **catalog, {*a.path}, run, walk);
      if (r) {
        document = render_check_json(*r);
        walked = std::move(*r);
      } else {
        error = r.error();
      }
    } else if (!error) {
      CheckInput input;
      input.argv = a.argv;
      input.text = a.text;
      input.file_name = a.filename.value_or("");
      run.options.read_config =
          config_reader_within(a.filename ? std::vector<std::string>{*a.filename} : std::vector<std::string>{});
      auto r = check_input(*matrix, **catalog, input, run);
      if (r) {
        reports.push_back(std::move(*r));
        document = render_check_json(reports);
      } else {
        error = r.error();
      }
    }
  }
  if (error) {
    Error e = *error;
    if (e.where == "--gpu") e.where = "gpus";
    return error_dict(e);
  }
  const std::vector<CheckReport>& all = walked ? walked->reports : reports;
  py::dict out;
  out["ok"] = walked ? !walked->fails(a.strict)
                     : std::none_of(all.begin(), all.end(), [&](const CheckReport& r) { return r.fails(a.strict); });
  out["document"] = document;
  py::list findings, commands, suppressed;
  std::size_t offset = 0;  // a finding's command: its index among every report's commands
  for (const CheckReport& report : all) {
    for (const ReportFinding& f : report_findings(report)) {
      py::dict d = finding_dict(f.finding);
      d["file"] = f.file;
      d["gpu"] = f.gpu;
      d["column"] = f.column;
      d["command"] = f.check ? py::int_(*f.check + offset) : py::object(py::none());
      if (f.suppression) {
        d["suppressed_by"] = f.suppression->by;
        suppressed.append(d);  // counted toward nothing: not among the findings
      } else {
        findings.append(d);
      }
    }
    for (const CommandCheck& c : report.checks) {
      py::dict d;
      d["launcher"] = c.command.launcher;
      d["engine"] = c.command.engine;
      d["args"] = c.command.args;
      d["file"] = c.command.file;
      d["line"] = c.command.line;
      d["gpu"] = c.target.label;
      d["verdict"] = std::string(name_of(c.verdict()));
      d["flags"] = c.selection ? py::cast(c.selection->flags()) : py::object(py::none());
      d["fix"] = c.fix ? py::cast(describe_fix(*c.fix)) : py::object(py::none());
      d["fix_args"] = c.fix ? py::cast(c.fix->command.args) : py::object(py::none());
      d["fix_all_targets"] = c.fix_all_targets ? py::cast(describe_fix(*c.fix_all_targets)) : py::object(py::none());
      commands.append(d);
    }
    offset += report.checks.size();
  }
  out["findings"] = findings;
  out["suppressed"] = suppressed;
  out["commands"] = commands;
  // The release judged against: the one every report agrees on, else "".
  std::string release = all.empty() ? std::string() : all.front().release;
  for (const CheckReport& r : all)
    if (r.release != release) release.clear();
  out["release"] = release;
  py::list files, skipped, warnings;
  if (walked) {
    for (const CheckReport& r : walked->reports) files.append(r.file);
    for (const SkippedPath& sp : walked->walk.skipped) {
      py::dict d;
      d["path"] = sp.path;
      d["directory"] = sp.directory;
      d["reason"] = std::string(name_of(sp.reason));
      d["detail"] = sp.detail;
      skipped.append(d);
    }
    for (const std::string& w : walked->walk.warnings) warnings.append(w);
  }
  out["files"] = files;
  out["skipped"] = skipped;
  out["input_warnings"] = warnings;
  out["binary_skipped"] = walked ? walked->binary : 0;
  return out;
}

py::dict probe_py(double timeout_s) {
  ProbeReport report;
  {
    py::gil_scoped_release unlocked;
    ProbeOptions options;
    if (timeout_s > 0) options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    report = probe_devices(options);
  }
  py::list devices;
  for (const DeviceInfo& d : report.devices) {
    py::dict j;
    j["index"] = d.index ? py::int_(*d.index) : py::object(py::none());
    j["name"] = d.name;
    j["platform"] = std::string(name_of(d.platform));
    j["arch"] = d.arch;
    j["compute_capability"] = d.compute_capability ? py::cast(std::to_string(d.compute_capability->major) + "." +
                                                              std::to_string(d.compute_capability->minor))
                                                   : py::object(py::none());
    j["cuda"] = d.cuda ? py::cast(to_string(*d.cuda)) : py::object(py::none());
    j["memory_bytes"] = d.memory_bytes ? py::int_(*d.memory_bytes) : py::object(py::none());
    j["driver_version"] = d.driver_version;
    j["pci_bus_id"] = d.pci_bus_id;
    j["uuid"] = d.uuid;
    j["source"] = d.origin;
    devices.append(j);
  }
  py::dict out;
  out["devices"] = devices;
  out["document"] = probe_to_json(report);
  out["text"] = render_probe_text(report, false);
  return out;
}

py::object gpus_py() {
  auto catalog = builtin_catalog();
  if (!catalog) return error_dict(catalog.error());
  py::list out;
  for (const GpuModel& g : (*catalog)->gpus()) {
    const GpuArch& arch = (*catalog)->architectures()[g.arch];
    py::dict j;
    j["name"] = g.name;
    j["aliases"] = g.aliases;
    j["arch"] = arch.arch;
    j["platform"] = std::string(name_of(arch.platform));
    j["family"] = arch.family;
    out.append(j);
  }
  return out;
}

py::object backends_py(const std::string& engine, const std::optional<std::string>& release) {
  auto matrix = engine_matrix(engine, release);
  if (!matrix) return error_dict(matrix.error());
  const Matrix& m = **matrix;
  py::list out;
  for (const Backend& b : m.backends()) {
    py::dict j;
    j["name"] = b.name;
    j["title"] = b.title;
    j["slot"] = m.slot(b.slot).name;
    j["aliases"] = b.aliases;
    out.append(j);
  }
  return out;
}

py::object optional_packages_py(const std::string& engine, const std::optional<std::string>& release) {
  auto matrix = engine_matrix(engine, release);
  if (!matrix) return error_dict(matrix.error());
  return py::cast(optional_packages(**matrix));
}

}  // namespace

PYBIND11_MODULE(_attnsel, m) {
  m.doc() = "attnsel's C++ library; use the attnsel package, not this module";
  m.attr("version") = attnsel::version();
  m.attr("ATTNSEL_VERSION_STRING") = ATTNSEL_VERSION_STRING;

  m.def(
      "select",
      [](std::optional<std::string> gpu, std::optional<std::string> model, std::optional<std::string> cuda,
         std::string engine, std::optional<std::string> engine_version, std::optional<std::string> platform,
         bool sliding_window, bool multimodal, bool attention_sinks, std::string dtype, bool strict, std::string prefer,
         std::vector<std::string> engine_flags, std::optional<std::vector<std::string>> installed, int device) {
        SelectArgs a;
        a.gpu = std::move(gpu);
        a.model = std::move(model);
        a.cuda = std::move(cuda);
        a.engine = std::move(engine);
        a.engine_version = std::move(engine_version);
        a.platform = std::move(platform);
        a.sliding_window = sliding_window;
        a.multimodal = multimodal;
        a.attention_sinks = attention_sinks;
        a.dtype = std::move(dtype);
        a.strict = strict;
        a.prefer = std::move(prefer);
        a.engine_flags = std::move(engine_flags);
        a.installed = std::move(installed);
        a.device = device;
        return select_py(a);
      },
      py::arg("gpu"), py::arg("model"), py::arg("cuda"), py::arg("engine"), py::arg("engine_version"),
      py::arg("platform"), py::arg("sliding_window"), py::arg("multimodal"), py::arg("attention_sinks"),
      py::arg("dtype"), py::arg("strict"), py::arg("prefer"), py::arg("engine_flags"), py::arg("installed"),
      py::arg("device"));

  m.def(
      "check",
      [](std::optional<std::vector<std::string>> argv, std::string text, std::optional<std::string> path,
         std::optional<std::string> filename, std::optional<std::string> gpus, std::optional<std::string> cuda,
         std::string engine, std::optional<std::string> engine_version, bool strict,
         std::optional<std::string> model_kind, bool unknown_model_error,
         std::optional<std::vector<std::string>> installed, std::vector<std::string> exclude,
         std::vector<std::string> include, bool gitignore, std::vector<std::string> select,
         std::vector<std::string> ignore) {
        CheckArgs a;
        a.argv = std::move(argv);
        a.text = std::move(text);
        a.path = std::move(path);
        a.filename = std::move(filename);
        a.gpus = std::move(gpus);
        a.cuda = std::move(cuda);
        a.engine = std::move(engine);
        a.engine_version = std::move(engine_version);
        a.strict = strict;
        a.model_kind = std::move(model_kind);
        a.unknown_model_error = unknown_model_error;
        a.installed = std::move(installed);
        a.exclude = std::move(exclude);
        a.include = std::move(include);
        a.gitignore = gitignore;
        a.select = std::move(select);
        a.ignore = std::move(ignore);
        return check_py(a);
      },
      py::arg("argv"), py::arg("text"), py::arg("path"), py::arg("filename"), py::arg("gpus"), py::arg("cuda"),
      py::arg("engine"), py::arg("engine_version"), py::arg("strict"), py::arg("model_kind"),
      py::arg("unknown_model_error"), py::arg("installed"), py::arg("exclude"), py::arg("include"),
      py::arg("gitignore"), py::arg("select"), py::arg("ignore"));

  m.def("probe", &probe_py, py::arg("timeout"));
  m.def("gpus", &gpus_py);
  m.def("backends", &backends_py, py::arg("engine"), py::arg("engine_version"));
  m.def("optional_packages", &optional_packages_py, py::arg("engine"), py::arg("engine_version"));
}
