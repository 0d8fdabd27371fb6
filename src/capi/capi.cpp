// The C API (include/attnsel/attnsel.h) over the C++ one. Every entry point checks its handle
// against the table of live handles, catches every exception, and turns attnsel::Error into a
// status and a message kept in the handle.
#include "attnsel/attnsel.h"

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/probe.hpp"
#include "attnsel/render.hpp"
#include "attnsel/render_probe.hpp"
#include "attnsel/select_options.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/version.hpp"
#include "core/json_text.hpp"
#include "core/suggest.hpp"

using namespace attnsel;

namespace {

// The kinds of handle, stored in the table so that a handle passed as another kind is refused.
enum class HandleKind : unsigned {
  matrix = 0x4d545258u, probe = 0x50524f42u, request = 0x52455155u, result = 0x52534c54u, check = 0x43484543u
};

}  // namespace

struct attnsel_matrix {
  static constexpr HandleKind kind = HandleKind::matrix;
  std::shared_ptr<const Matrix> matrix;  // null when loading failed
  std::shared_ptr<const Catalog> catalog;
  std::optional<std::string> release;  // attnsel_matrix_load_engine's: picks the launch grammar
  bool from_file = false;              // loaded from a file or a string: a text's release hint does not apply
  std::string last_error;
};

struct attnsel_probe {
  static constexpr HandleKind kind = HandleKind::probe;
  ProbeReport report;
  std::map<int, std::string> json;  // by indent; map nodes never move, so returned pointers stay valid
  std::optional<std::string> text;
  std::string last_error;
};

struct attnsel_request {
  static constexpr HandleKind kind = HandleKind::request;
  std::shared_ptr<const Matrix> matrix;
  std::shared_ptr<const Catalog> catalog;
  Request request;  // everything but the device and the model flags, which select() resolves
  std::optional<std::string> gpu, cuda;
  std::optional<Platform> platform;
  std::optional<DeviceInfo> probed;
  std::optional<std::string> model;  // as given to set_model: launch flags are read with it
  std::optional<std::string> release;  // the matrix's, for the launch grammar
  std::vector<std::string> launch_flags;
  bool has_model = false;
  bool sliding_window = false, multimodal = false, attention_sinks = false;
  std::string last_error;
};

struct attnsel_result {
  static constexpr HandleKind kind = HandleKind::result;
  Selection selection;
  std::vector<std::string> flags;
  std::vector<std::string> environment;
  std::vector<Diagnostic> diagnostics[3];  // by attnsel_diagnostic_kind
  std::map<int, std::string> json;
  std::optional<std::string> text;
  std::string last_error;
};

struct attnsel_check {
  static constexpr HandleKind kind = HandleKind::check;
  std::shared_ptr<const Matrix> matrix;
  std::shared_ptr<const Catalog> catalog;
  std::optional<std::string> release;
  bool from_file = false;
  CheckRun run;
  std::vector<CheckReport> reports;  // one per input, in the order given (one per file of a path)
  std::vector<ReportFinding> findings;
  WalkOptions walk;                    // attnsel_check_path: --exclude, --include
  std::vector<SkippedPath> skipped;    // every path walks passed over
  std::size_t files_read = 0, files_with_commands = 0, binary = 0;  // of attnsel_check_path
  std::map<std::pair<int, std::size_t>, std::string> json;  // by indent and inputs seen; never erased
  std::string last_error;
};

namespace {

// ---- the table of live handles: checked before any handle is dereferenced ----

class HandleTable {
 public:
  void add(const void* handle, HandleKind kind) {
    const std::unique_lock<std::shared_mutex> lock(mutex_);
    live_.emplace(handle, kind);
  }
  // Only the lock can throw (std::system_error); a handle that cannot be checked is refused.
  bool contains(const void* handle, HandleKind kind) const noexcept {
    try {
      const std::shared_lock<std::shared_mutex> lock(mutex_);
      auto it = live_.find(handle);
      return it != live_.end() && it->second == kind;
    } catch (...) {
      return false;
    }
  }
  bool remove(const void* handle, HandleKind kind) noexcept {
    try {
      const std::unique_lock<std::shared_mutex> lock(mutex_);
      auto it = live_.find(handle);
      if (it == live_.end() || it->second != kind) return false;
      live_.erase(it);
      return true;
    } catch (...) {
      return false;
    }
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<const void*, HandleKind> live_;
};

// Never destroyed: a handle may be freed from another static object's destructor.
HandleTable& handles() {
  static HandleTable* table = new HandleTable;
  return *table;
}

template <class H>
bool live(const H* h) noexcept {
  return h != nullptr && handles().contains(h, H::kind);
}

template <class H, class... Args>
H* create(Args&&... args) {
  auto h = std::make_unique<H>(std::forward<Args>(args)...);
  handles().add(h.get(), H::kind);
  return h.release();
}

template <class H>
attnsel_status destroy(H* h) noexcept {
  if (h == nullptr) return ATTNSEL_OK;
  if (!handles().remove(h, H::kind)) return ATTNSEL_ERR_INVALID_HANDLE;
  delete h;
  return ATTNSEL_OK;
}

attnsel_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return ATTNSEL_ERR_INVALID_ARGUMENT;
    case ErrorCode::unknown_name: return ATTNSEL_ERR_UNKNOWN_NAME;
    case ErrorCode::parse_error: return ATTNSEL_ERR_PARSE;
    case ErrorCode::invalid_matrix: return ATTNSEL_ERR_INVALID_MATRIX;
    case ErrorCode::io_error: return ATTNSEL_ERR_IO;
    case ErrorCode::no_device: return ATTNSEL_ERR_NO_DEVICE;
  }
  return ATTNSEL_ERR_INTERNAL;
}

// Records the message (`what` then `detail`) in the handle, when there is one to keep it, and
// returns the status. Never throws: without memory for the message, the status has to do.
template <class H>
attnsel_status fail(H* h, attnsel_status status, std::string_view what, std::string_view detail = {}) noexcept {
  if (h != nullptr) {
    try {
      h->last_error.assign(what.data(), what.size());
      h->last_error.append(detail.data(), detail.size());
    } catch (...) {
      h->last_error.clear();
    }
  }
  return status;
}

template <class H>
attnsel_status fail(H* h, const Error& e) noexcept {
  try {
    return fail(h, status_of(e.code), e.describe());
  } catch (...) {
    return fail(h, status_of(e.code), "");
  }
}

// Runs `body` with every exception turned into a status; `h` receives the message.
template <class H, class F>
attnsel_status guarded(H* h, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(h, ATTNSEL_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(h, ATTNSEL_ERR_INTERNAL, "internal error: ", e.what());
  } catch (...) {
    return fail(h, ATTNSEL_ERR_INTERNAL, "internal error: an unknown exception");
  }
}

// Strings from C must be UTF-8: they end up in JSON (overlong forms and surrogates refused).
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned code = 0, min = 0;
    if ((lead & 0xE0u) == 0xC0u) n = 1, code = lead & 0x1Fu, min = 0x80;
    else if ((lead & 0xF0u) == 0xE0u) n = 2, code = lead & 0x0Fu, min = 0x800;
    else if ((lead & 0xF8u) == 0xF0u) n = 3, code = lead & 0x07u, min = 0x10000;
    else return false;
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

template <class H>
std::optional<attnsel_status> check_text(H* h, const char* text, std::string_view what) {
  if (text != nullptr && !valid_utf8(text))
    return fail(h, ATTNSEL_ERR_INVALID_ARGUMENT, std::string(what) + ": not valid UTF-8");
  return std::nullopt;
}

std::string_view status_text(attnsel_status s) {
  switch (s) {
    case ATTNSEL_OK: return "ok";
    case ATTNSEL_ERR_INVALID_HANDLE: return "invalid handle (null, freed, or of another kind)";
    case ATTNSEL_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ATTNSEL_ERR_UNKNOWN_NAME: return "unknown name";
    case ATTNSEL_ERR_OUT_OF_RANGE: return "index out of range";
    case ATTNSEL_ERR_PARSE: return "not valid JSON";
    case ATTNSEL_ERR_INVALID_MATRIX: return "invalid matrix";
    case ATTNSEL_ERR_IO: return "file could not be read";
    case ATTNSEL_ERR_NO_DEVICE: return "no device";
    case ATTNSEL_ERR_INVALID_STATE: return "the handle cannot do this in its state";
    case ATTNSEL_ERR_OUT_OF_MEMORY: return "out of memory";
    case ATTNSEL_ERR_INTERNAL: return "internal error";
    case ATTNSEL_STATUS_FORCE_INT: break;
  }
  return "unknown status";
}

// ---- matrix ----

// Like sqlite3_open: the handle exists, and is in *out, even when loading fails.
template <class Load>
attnsel_status load_into(attnsel_matrix** out, Load&& load, const char* release = nullptr, bool from_file = false) noexcept {
  if (out == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  attnsel_matrix* h = nullptr;
  try {
    h = create<attnsel_matrix>();
  } catch (...) {
    return ATTNSEL_ERR_OUT_OF_MEMORY;
  }
  *out = h;
  return guarded(h, [&] {
    Result<std::shared_ptr<const Matrix>> loaded = load();
    if (!loaded) return fail(h, loaded.error());
    auto catalog = builtin_catalog();
    if (!catalog) return fail(h, ATTNSEL_ERR_INTERNAL, "the built-in catalog is invalid: " + catalog.error().describe());
    h->matrix = std::move(*loaded);
    h->catalog = std::move(*catalog);
    if (release != nullptr) h->release = release;
    h->from_file = from_file;
    return ATTNSEL_OK;
  });
}

attnsel_status loaded_matrix(const attnsel_matrix* m) {
  if (!live(m)) return ATTNSEL_ERR_INVALID_HANDLE;
  return m->matrix ? ATTNSEL_OK : ATTNSEL_ERR_INVALID_STATE;
}

// ---- probe ----

attnsel_status probed(attnsel_probe* p, std::size_t index, const DeviceInfo** device) {
  if (!live(p)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (index >= p->report.devices.size())
    return fail(p, ATTNSEL_ERR_OUT_OF_RANGE,
                "device " + std::to_string(index) + ": the probe found " + std::to_string(p->report.devices.size()));
  *device = &p->report.devices[index];
  return ATTNSEL_OK;
}

// ---- request ----

std::optional<Phase> phase_of(attnsel_phase p) {
  if (p == ATTNSEL_PHASE_PREFILL) return Phase::prefill;
  if (p == ATTNSEL_PHASE_DECODE) return Phase::decode;
  return std::nullopt;
}

bool valid_phase(attnsel_phase p) {
  return p == ATTNSEL_PHASE_ALL || p == ATTNSEL_PHASE_PREFILL || p == ATTNSEL_PHASE_DECODE;
}

Error unknown(std::string_view what, std::string_view name, std::vector<std::string> choices, std::string where) {
  Error e;
  e.code = ErrorCode::unknown_name;
  e.message = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  e.where = std::move(where);
  e.suggestion = detail::closest_match(name, choices);
  e.choices = std::move(choices);
  return e;
}

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

// The slot a name refers to (NULL: the first, attention), as an Error naming the valid ones.
Result<SlotId> slot_of(const Matrix& m, const char* name) {
  if (name == nullptr) return SlotId{0};
  if (auto id = m.find_slot(name)) return *id;
  std::vector<std::string> names;
  for (const Slot& s : m.slots()) names.push_back(s.name);
  return unknown("slot", name, std::move(names), "slot");
}

// The device of a request, resolved the way the CLI resolves --gpu/--platform/--cuda or a probed GPU.
Result<DeviceInfo> device_of(const attnsel_request& r) {
  if (r.probed) {
    DeviceInfo d = *r.probed;
    if (r.cuda) {
      auto v = parse_version(*r.cuda);
      if (!v) return Error{ErrorCode::invalid_argument, "expected a CUDA version like 12.8, got '" + *r.cuda + "'", "--cuda", {}, {}};
      d.cuda = v;
    }
    assume_cuda(*r.catalog, d);
    return d;
  }
  if (!r.gpu && (!r.platform || *r.platform == Platform::cuda))
    return Error{ErrorCode::no_device,
                 "no device: call attnsel_request_set_gpu (sm90, H100, B200 ...), attnsel_request_set_probed_device, "
                 "or attnsel_request_set_platform with a non-CUDA platform",
                 "", {}, {}};
  return resolve_device(*r.catalog, DeviceSpec{r.gpu, r.platform, r.cuda, "--gpu"});
}

// The launch flags read as `attnsel select` reads them, with the request's model; what a setter
// set wins over the flags.
Result<Request> request_from_launch_flags(const attnsel_request& h) {
  SelectOptions o;
  o.model = h.model;
  o.engine_flags = h.launch_flags;
  o.release = h.release;
  o.strict = h.request.strict;
  o.prefer = h.request.prefer;
  auto prepared = prepare_select(h.matrix, *h.catalog, o);
  if (!prepared) return prepared.error();
  if (const CheckDiagnostic* first = prepared->first_error())
    return Error{ErrorCode::invalid_argument, prepared->error_text(), first->flag, {}, {}};
  Request r = std::move(prepared->request);
  const Request& set = h.request;
  for (const char* slot : {"attention", "linear", "sparse"}) {
    const BackendChoice* given = set.choice_for(slot);
    auto* target = const_cast<BackendChoice*>(r.choice_for(slot));  // r is ours to change
    if (given->all) target->all = given->all;
    if (given->prefill) target->prefill = given->prefill;
    if (given->decode) target->decode = given->decode;
  }
  if (set.kv_cache_dtype != KvCacheDtype::auto_) r.kv_cache_dtype = set.kv_cache_dtype;
  if (set.page_size) r.page_size = set.page_size;
  if (set.speculative_topk != 0) r.speculative_topk = set.speculative_topk;
  if (set.speculative_attention_mode != Phase::prefill) r.speculative_attention_mode = set.speculative_attention_mode;
  r.deterministic = r.deterministic || set.deterministic;
  r.disable_radix_cache = r.disable_radix_cache || set.disable_radix_cache;
  return r;
}

// ---- result ----

const std::vector<Diagnostic>* diagnostics(attnsel_result* r, attnsel_diagnostic_kind kind) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k > 2) return nullptr;
  return &r->diagnostics[k];
}

}  // namespace

extern "C" {

const char* attnsel_status_string(attnsel_status status) { return status_text(status).data(); }

const char* attnsel_version(void) { return attnsel::version(); }

// ---- matrix ----

attnsel_status attnsel_matrix_load_builtin(attnsel_matrix** out) {
  return load_into(out, [] { return builtin_matrix(); });
}

attnsel_status attnsel_matrix_load_file(const char* path, attnsel_matrix** out) {
  return load_into(out, [&]() -> Result<std::shared_ptr<const Matrix>> {
    if (path == nullptr) return Error{ErrorCode::invalid_argument, "no path (NULL)", "path", {}, {}};
    return load_matrix_file(path);
  }, nullptr, true);
}

attnsel_status attnsel_matrix_load_string(const char* json, size_t size, const char* origin, attnsel_matrix** out) {
  return load_into(out, [&]() -> Result<std::shared_ptr<const Matrix>> {
    if (json == nullptr && size != 0) return Error{ErrorCode::invalid_argument, "no JSON text (NULL) but a size", "json", {}, {}};
    if (origin != nullptr && !valid_utf8(origin)) return Error{ErrorCode::invalid_argument, "not valid UTF-8", "origin", {}, {}};
    const std::string_view text = json == nullptr ? std::string_view() : std::string_view(json, size);
    return load_matrix(text, origin != nullptr ? origin : "string");
  }, nullptr, true);
}

attnsel_status attnsel_matrix_load_engine(const char* engine, const char* release, attnsel_matrix** out) {
  return load_into(out, [&]() -> Result<std::shared_ptr<const Matrix>> {
    if (engine != nullptr && !valid_utf8(engine)) return Error{ErrorCode::invalid_argument, "not valid UTF-8", "engine", {}, {}};
    if (release != nullptr && !valid_utf8(release)) return Error{ErrorCode::invalid_argument, "not valid UTF-8", "release", {}, {}};
    std::optional<ReleaseVersion> version;
    if (release != nullptr) {
      version = parse_release(release);
      if (!version)
        return Error{ErrorCode::invalid_argument, "expected a release like 0.5.3, got '" + std::string(release) + "'",
                     "--engine-version", {}, {}};
    }
    return builtin_matrix(engine != nullptr ? engine : "sglang", version);
  }, release);
}

attnsel_status attnsel_matrix_engine(const attnsel_matrix* matrix, const char** engine) {
  if (attnsel_status s = loaded_matrix(matrix)) return s;
  if (engine == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *engine = matrix->matrix->info().engine.c_str();
  return ATTNSEL_OK;
}

attnsel_status attnsel_matrix_version(const attnsel_matrix* matrix, const char** version) {
  if (attnsel_status s = loaded_matrix(matrix)) return s;
  if (version == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *version = matrix->matrix->info().version.c_str();
  return ATTNSEL_OK;
}

attnsel_status attnsel_matrix_schema_version(const attnsel_matrix* matrix, int* schema_version) {
  if (attnsel_status s = loaded_matrix(matrix)) return s;
  if (schema_version == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *schema_version = matrix->matrix->info().schema_version;
  return ATTNSEL_OK;
}

const char* attnsel_matrix_last_error(const attnsel_matrix* matrix) {
  return live(matrix) ? matrix->last_error.c_str() : status_text(ATTNSEL_ERR_INVALID_HANDLE).data();
}

attnsel_status attnsel_matrix_free(attnsel_matrix* matrix) { return destroy(matrix); }

// ---- probe ----

attnsel_status attnsel_probe_run(unsigned timeout_ms, attnsel_probe** out) {
  if (out == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(*out, [&] {
    ProbeOptions options;
    if (timeout_ms != 0) options.timeout = std::chrono::milliseconds(timeout_ms);
    ProbeReport report = probe_devices(options);
    // Name NVIDIA devices the way --gpu does (sm90); the catalog knows the spelling.
    auto catalog = builtin_catalog();
    for (DeviceInfo& d : report.devices) {
      if (!d.arch.empty() || !d.compute_capability) continue;
      const GpuArch* arch = catalog ? (*catalog)->find_arch(*d.compute_capability) : nullptr;
      d.arch = arch != nullptr ? arch->arch : sm_name(*d.compute_capability);
    }
    attnsel_probe* h = create<attnsel_probe>();
    h->report = std::move(report);
    *out = h;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_device_count(attnsel_probe* probe, size_t* count) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (count == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  *count = probe->report.devices.size();
  return ATTNSEL_OK;
}

attnsel_status attnsel_probe_device_name(attnsel_probe* probe, size_t index, const char** name) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(probe, [&] {
    const DeviceInfo* d = nullptr;
    if (attnsel_status s = probed(probe, index, &d)) return s;
    if (name == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "name: NULL");
    *name = d->name.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_device_platform(attnsel_probe* probe, size_t index, const char** platform) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(probe, [&] {
    const DeviceInfo* d = nullptr;
    if (attnsel_status s = probed(probe, index, &d)) return s;
    if (platform == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "platform: NULL");
    *platform = name_of(d->platform).data();  // the names are string literals
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_device_arch(attnsel_probe* probe, size_t index, const char** arch) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(probe, [&] {
    const DeviceInfo* d = nullptr;
    if (attnsel_status s = probed(probe, index, &d)) return s;
    if (arch == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "arch: NULL");
    *arch = d->arch.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_device_compute_capability(attnsel_probe* probe, size_t index, int* major, int* minor) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(probe, [&] {
    const DeviceInfo* d = nullptr;
    if (attnsel_status s = probed(probe, index, &d)) return s;
    if (major == nullptr || minor == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "major, minor: NULL");
    *major = d->compute_capability ? d->compute_capability->major : 0;
    *minor = d->compute_capability ? d->compute_capability->minor : 0;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_json(attnsel_probe* probe, int indent, const char** json) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (json == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "json: NULL");
  return guarded(probe, [&] {
    indent = detail::clamp_indent(indent);  // nlohmann reads past its indent buffer beyond ~1024 spaces a line
    auto it = probe->json.find(indent);
    if (it == probe->json.end()) it = probe->json.emplace(indent, probe_to_json(probe->report, indent)).first;
    *json = it->second.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_probe_text(attnsel_probe* probe, const char** text) {
  if (!live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (text == nullptr) return fail(probe, ATTNSEL_ERR_INVALID_ARGUMENT, "text: NULL");
  return guarded(probe, [&] {
    if (!probe->text) probe->text = render_probe_text(probe->report, false);
    *text = probe->text->c_str();
    return ATTNSEL_OK;
  });
}

const char* attnsel_probe_last_error(const attnsel_probe* probe) {
  return live(probe) ? probe->last_error.c_str() : status_text(ATTNSEL_ERR_INVALID_HANDLE).data();
}

attnsel_status attnsel_probe_free(attnsel_probe* probe) { return destroy(probe); }

// ---- request ----

attnsel_status attnsel_request_new(const attnsel_matrix* matrix, attnsel_request** out) {
  if (out == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  if (attnsel_status s = loaded_matrix(matrix)) return s;
  return guarded(*out, [&] {
    attnsel_request* h = create<attnsel_request>();
    h->matrix = matrix->matrix;
    h->catalog = matrix->catalog;
    h->release = matrix->release;
    *out = h;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_gpu(attnsel_request* request, const char* gpu) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, gpu, "gpu")) return *bad;
    if (gpu != nullptr) {
      auto device = resolve_device(*request->catalog, DeviceSpec{std::string(gpu), std::nullopt, std::nullopt, "--gpu"});
      if (!device) return fail(request, device.error());
      request->gpu = gpu;
      request->probed.reset();
    } else {
      request->gpu.reset();
    }
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_platform(attnsel_request* request, const char* platform) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, platform, "platform")) return *bad;
    if (platform == nullptr) {
      request->platform.reset();
      return ATTNSEL_OK;
    }
    auto p = parse_platform(platform);
    if (!p) return fail(request, unknown("platform", platform, split_names(platform_names()), "--platform"));
    request->platform = p;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_cuda(attnsel_request* request, const char* version) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, version, "cuda")) return *bad;
    if (version == nullptr) {
      request->cuda.reset();
      return ATTNSEL_OK;
    }
    if (!parse_version(version))
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "--cuda: expected a CUDA version like 12.8, got '" + std::string(version) + "'");
    request->cuda = version;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_probed_device(attnsel_request* request, attnsel_probe* probe, size_t index) {
  if (!live(request) || !live(probe)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (index >= probe->report.devices.size())
      return fail(request, ATTNSEL_ERR_OUT_OF_RANGE,
                  "device " + std::to_string(index) + ": the probe found " + std::to_string(probe->report.devices.size()));
    DeviceInfo d = probe->report.devices[index];
    if (d.platform == Platform::cuda && !d.compute_capability)
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "the probe found GPU " + std::to_string(index) +
                      " but not its compute capability; name it with attnsel_request_set_gpu");
    d.origin = "probe: " + d.origin + ", device " + std::to_string(index);
    request->probed = std::move(d);
    request->gpu.reset();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_model(attnsel_request* request, const char* model) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, model, "model")) return *bad;
    if (model == nullptr) {
      request->request.model = ModelTraits{};
      request->model.reset();
      request->has_model = false;
      return ATTNSEL_OK;
    }
    auto traits = resolve_model(*request->catalog, model);
    if (!traits) {
      Error e = traits.error();
      if (e.where.empty()) e.where = "--model";
      return fail(request, e);
    }
    request->request.model = std::move(*traits);
    request->model = model;
    request->has_model = true;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_kv_cache_dtype(attnsel_request* request, const char* dtype) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, dtype, "kv_cache_dtype")) return *bad;
    if (dtype == nullptr) {
      request->request.kv_cache_dtype = KvCacheDtype::auto_;
      return ATTNSEL_OK;
    }
    auto d = parse_kv_dtype(dtype);
    if (!d) return fail(request, unknown("KV cache dtype", dtype, split_names(kv_dtype_names()), "kv_cache_dtype"));
    request->request.kv_cache_dtype = *d;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_page_size(attnsel_request* request, int page_size) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (page_size < 0 || page_size > (1 << 20))
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "--page-size: " + std::to_string(page_size) + " is not in [1, 1048576] (0: SGLang's default)");
    if (page_size == 0) request->request.page_size.reset();
    else request->request.page_size = page_size;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_speculative_topk(attnsel_request* request, int topk) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (topk < 0 || topk > (1 << 16))
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "--speculative-eagle-topk: " + std::to_string(topk) + " is not in [0, 65536]");
    request->request.speculative_topk = topk;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_speculative_attention_mode(attnsel_request* request, attnsel_phase phase) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    auto p = phase_of(phase);
    if (!p)
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "--speculative-attention-mode: expected ATTNSEL_PHASE_PREFILL or ATTNSEL_PHASE_DECODE");
    request->request.speculative_attention_mode = *p;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_backend(attnsel_request* request, const char* slot, attnsel_phase phase,
                                           const char* backend) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, slot, "slot")) return *bad;
    if (auto bad = check_text(request, backend, "backend")) return *bad;
    if (!valid_phase(phase))
      return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, "phase: expected ATTNSEL_PHASE_ALL, _PREFILL or _DECODE");
    const Matrix& m = *request->matrix;
    auto s = slot_of(m, slot);
    if (!s) return fail(request, s.error());
    const Slot& info = m.slot(*s);
    // choice_for has only a const form; the request here is ours to change.
    auto* choice = const_cast<BackendChoice*>(request->request.choice_for(info.name));
    if (choice == nullptr)
      return fail(request, ATTNSEL_ERR_UNKNOWN_NAME, "slot '" + info.name + "' cannot be set through this API");
    const std::string& flag = phase == ATTNSEL_PHASE_ALL       ? info.flag
                              : phase == ATTNSEL_PHASE_PREFILL ? info.prefill_flag
                                                               : info.decode_flag;
    if (backend != nullptr && !m.find_backend(backend, *s))
      return fail(request, unknown(info.title + " backend", backend, m.backend_names(*s), flag.empty() ? info.name : flag));
    std::optional<std::string>& target = phase == ATTNSEL_PHASE_ALL       ? choice->all
                                         : phase == ATTNSEL_PHASE_PREFILL ? choice->prefill
                                                                          : choice->decode;
    if (backend != nullptr) target = backend;
    else target.reset();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_flag(attnsel_request* request, attnsel_flag flag, int enabled) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  const bool on = enabled != 0;
  switch (flag) {
    case ATTNSEL_FLAG_SLIDING_WINDOW: request->sliding_window = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_MULTIMODAL: request->multimodal = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_ATTENTION_SINKS: request->attention_sinks = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_DETERMINISTIC: request->request.deterministic = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_DISABLE_RADIX_CACHE: request->request.disable_radix_cache = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_STRICT: request->request.strict = on; return ATTNSEL_OK;
    case ATTNSEL_FLAG_FORCE_INT: break;
  }
  return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, "flag: not an attnsel_flag value");
}

attnsel_status attnsel_request_set_prefer(attnsel_request* request, const char* preference) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (auto bad = check_text(request, preference, "prefer")) return *bad;
    if (preference == nullptr) {
      request->request.prefer = Preference::sglang_default;
      return ATTNSEL_OK;
    }
    auto p = parse_preference(preference);
    if (!p) return fail(request, unknown("preference", preference, {"sglang-default", "prefix-reuse", "throughput"}, "--prefer"));
    request->request.prefer = *p;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_request_set_launch_flags(attnsel_request* request, const char* const* argv, size_t argc) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(request, [&] {
    if (argv == nullptr && argc != 0) return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, "argv: NULL but argc is not 0");
    std::vector<std::string> flags;
    for (size_t i = 0; i < argc; ++i) {
      if (argv[i] == nullptr)
        return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, "argv[" + std::to_string(i) + "]: NULL");
      if (auto bad = check_text(request, argv[i], "argv[" + std::to_string(i) + "]")) return *bad;
      flags.emplace_back(argv[i]);
    }
    // Read now for what the grammar alone refuses; read again at select, with the model.
    auto profile = builtin_profile(request->matrix->info().engine);
    if (!profile && !flags.empty()) return fail(request, profile.error());
    const Grammar* grammar = profile ? (*profile)->grammar("", request->release.value_or("")) : nullptr;
    if (!flags.empty() && grammar == nullptr)
      return fail(request, ATTNSEL_ERR_INVALID_STATE, "the " + (*profile)->engine + " profile has no launch grammar");
    if (grammar != nullptr) {
      LaunchCommand command;
      command.launcher = "flags";
      command.args = flags;
      command.arg_lines.assign(flags.size(), 0);
      ParseOptions options;
      options.engine_title = (*profile)->title;
      std::string errors;
      for (const ArgFinding& f : parse_launch_args(command, *grammar, options).findings) {
        if (f.severity != Severity::error) continue;
        errors += (errors.empty() ? "" : "\n") + f.message;
        if (!f.suggestion.empty()) errors += " (did you mean " + f.suggestion + "?)";
      }
      if (!errors.empty()) return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, errors);
    }
    request->launch_flags = std::move(flags);
    return ATTNSEL_OK;
  });
}

const char* attnsel_request_last_error(const attnsel_request* request) {
  return live(request) ? request->last_error.c_str() : status_text(ATTNSEL_ERR_INVALID_HANDLE).data();
}

attnsel_status attnsel_request_free(attnsel_request* request) { return destroy(request); }

// ---- select ----

attnsel_status attnsel_select(attnsel_request* request, attnsel_result** out) {
  if (!live(request)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (out == nullptr) return fail(request, ATTNSEL_ERR_INVALID_ARGUMENT, "out: NULL");
  *out = nullptr;
  return guarded(request, [&] {
    if (!request->has_model && request->launch_flags.empty())
      return fail(request, ATTNSEL_ERR_INVALID_STATE, "no model: call attnsel_request_set_model first");
    Request r = request->request;
    if (!request->launch_flags.empty()) {
      auto from_flags = request_from_launch_flags(*request);
      const bool no_model = !from_flags && from_flags.error().where == "--model" &&
                            from_flags.error().code == ErrorCode::invalid_argument;
      if (no_model)
        return fail(request, ATTNSEL_ERR_INVALID_STATE,
                    "no model: call attnsel_request_set_model, or give the engine's model flag among the launch flags");
      if (!from_flags) return fail(request, from_flags.error());
      r = std::move(*from_flags);
    }
    auto device = device_of(*request);
    if (!device) return fail(request, device.error());
    r.device = std::move(*device);
    r.model.sliding_window |= request->sliding_window;
    r.model.multimodal |= request->multimodal;
    r.model.attention_sinks |= request->attention_sinks;
    auto selection = select(request->matrix, r);
    if (!selection) return fail(request, selection.error());

    auto result = std::make_unique<attnsel_result>();
    result->selection = std::move(*selection);
    const Selection& s = result->selection;
    result->flags = s.flags();
    result->environment = s.environment();
    result->diagnostics[ATTNSEL_DIAGNOSTIC_ERROR] = s.describe(s.errors);
    result->diagnostics[ATTNSEL_DIAGNOSTIC_WARNING] = s.describe(s.warnings);
    result->diagnostics[ATTNSEL_DIAGNOSTIC_NOTE] = s.describe(s.notes);
    handles().add(result.get(), attnsel_result::kind);
    *out = result.release();
    return ATTNSEL_OK;
  });
}

// ---- result ----

attnsel_status attnsel_result_ok(attnsel_result* result, int* ok) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (ok == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "ok: NULL");
  *ok = result->selection.ok() ? 1 : 0;
  return ATTNSEL_OK;
}

attnsel_status attnsel_result_backend(attnsel_result* result, const char* slot, attnsel_phase phase,
                                      const char** backend) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (backend == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "backend: NULL");
  return guarded(result, [&] {
    if (auto bad = check_text(result, slot, "slot")) return *bad;
    if (!valid_phase(phase))
      return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "phase: expected ATTNSEL_PHASE_ALL, _PREFILL or _DECODE");
    const Selection& s = result->selection;
    auto id = slot_of(*s.matrix, slot);
    if (!id) return fail(result, id.error());
    *backend = nullptr;
    const SlotPlan* plan = s.slot(s.matrix->slot(*id).name);
    if (plan == nullptr) return ATTNSEL_OK;
    BackendId chosen = kNoBackend;
    if (auto p = phase_of(phase)) chosen = plan->phase[static_cast<int>(*p)].backend;
    else if (!plan->hybrid()) chosen = plan->phase[0].backend;
    if (chosen != kNoBackend) *backend = s.name(chosen).c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_result_page_size(attnsel_result* result, int* page_size) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (page_size == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "page_size: NULL");
  *page_size = result->selection.page.page_size;
  return ATTNSEL_OK;
}

namespace {

// A result's list of strings (flags, environment settings): its length, and one item by index.
attnsel_status list_count(attnsel_result* result, const std::vector<std::string>& list, size_t* count) {
  if (count == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  *count = list.size();
  return ATTNSEL_OK;
}

attnsel_status list_item(attnsel_result* result, const std::vector<std::string>& list, size_t index, const char** out,
                         const char* what) {
  return guarded(result, [&] {
    if (out == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, std::string(what) + ": NULL");
    if (index >= list.size())
      return fail(result, ATTNSEL_ERR_OUT_OF_RANGE,
                  std::string(what) + " " + std::to_string(index) + ": the plan has " + std::to_string(list.size()));
    *out = list[index].c_str();
    return ATTNSEL_OK;
  });
}

}  // namespace

attnsel_status attnsel_result_flag_count(attnsel_result* result, size_t* count) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  return list_count(result, result->flags, count);
}

attnsel_status attnsel_result_flag(attnsel_result* result, size_t index, const char** flag) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  return list_item(result, result->flags, index, flag, "flag");
}

attnsel_status attnsel_result_environment_count(attnsel_result* result, size_t* count) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  return list_count(result, result->environment, count);
}

attnsel_status attnsel_result_environment(attnsel_result* result, size_t index, const char** setting) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  return list_item(result, result->environment, index, setting, "setting");
}

attnsel_status attnsel_result_diagnostic_count(attnsel_result* result, attnsel_diagnostic_kind kind, size_t* count) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (count == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  const std::vector<Diagnostic>* ds = diagnostics(result, kind);
  if (ds == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "kind: not an attnsel_diagnostic_kind");
  *count = ds->size();
  return ATTNSEL_OK;
}

attnsel_status attnsel_result_diagnostic(attnsel_result* result, attnsel_diagnostic_kind kind, size_t index,
                                         const char** rule, const char** message, const char** source) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(result, [&] {
    const std::vector<Diagnostic>* ds = diagnostics(result, kind);
    if (ds == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "kind: not an attnsel_diagnostic_kind");
    if (index >= ds->size())
      return fail(result, ATTNSEL_ERR_OUT_OF_RANGE, "diagnostic " + std::to_string(index) + ": there are " +
                                                        std::to_string(ds->size()));
    const Diagnostic& d = (*ds)[index];
    if (rule != nullptr) *rule = d.rule.c_str();
    if (message != nullptr) *message = d.message.c_str();
    if (source != nullptr) *source = d.source.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_result_json(attnsel_result* result, int indent, const char** json) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (json == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "json: NULL");
  return guarded(result, [&] {
    indent = detail::clamp_indent(indent);  // nlohmann reads past its indent buffer beyond ~1024 spaces a line
    auto it = result->json.find(indent);
    if (it == result->json.end()) it = result->json.emplace(indent, render_json(result->selection, indent)).first;
    *json = it->second.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_result_text(attnsel_result* result, const char** text) {
  if (!live(result)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (text == nullptr) return fail(result, ATTNSEL_ERR_INVALID_ARGUMENT, "text: NULL");
  return guarded(result, [&] {
    if (!result->text) result->text = render_text(result->selection, RenderOptions{});
    *text = result->text->c_str();
    return ATTNSEL_OK;
  });
}

const char* attnsel_result_last_error(const attnsel_result* result) {
  return live(result) ? result->last_error.c_str() : status_text(ATTNSEL_ERR_INVALID_HANDLE).data();
}

attnsel_status attnsel_result_free(attnsel_result* result) { return destroy(result); }

// ---- check ----

attnsel_status attnsel_check_new(const attnsel_matrix* matrix, attnsel_check** out) {
  if (out == nullptr) return ATTNSEL_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  if (attnsel_status s = loaded_matrix(matrix)) return s;
  return guarded(*out, [&] {
    attnsel_check* h = create<attnsel_check>();
    h->matrix = matrix->matrix;
    h->catalog = matrix->catalog;
    h->run.release = matrix->release;
    h->run.release_from_input = !matrix->from_file;
    h->run.options.release = matrix->release;
    // `sglang generate` and `--model-type diffusion` commands are judged with the diffusion profile.
    if (auto diffusion = builtin_matrix("sglang-diffusion", std::nullopt)) h->run.options.diffusion_matrix = *diffusion;
    *out = h;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_set_gpus(attnsel_check* check, const char* gpus) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (auto bad = check_text(check, gpus, "gpus")) return *bad;
    if (gpus == nullptr) {
      check->run.gpus.reset();
      return ATTNSEL_OK;
    }
    auto targets = resolve_check_targets(*check->catalog, gpus, check->run.cuda);  // refused now, not per input
    if (!targets) return fail(check, targets.error());
    check->run.gpus = gpus;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_set_cuda(attnsel_check* check, const char* version) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (auto bad = check_text(check, version, "cuda")) return *bad;
    if (version == nullptr) {
      check->run.cuda.reset();
      return ATTNSEL_OK;
    }
    if (!parse_version(version))
      return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT,
                  "--cuda: expected a CUDA version like 12.8, got '" + std::string(version) + "'");
    check->run.cuda = version;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_set_strict(attnsel_check* check, int strict) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  check->run.options.strict = strict != 0;
  return ATTNSEL_OK;
}

attnsel_status attnsel_check_set_model_kind(attnsel_check* check, const char* kind) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (auto bad = check_text(check, kind, "model_kind")) return *bad;
    if (kind == nullptr) {
      check->run.options.model_kind.reset();
      return ATTNSEL_OK;
    }
    auto k = parse_kind(kind);
    if (!k) return fail(check, unknown("model kind", kind, split_names(kind_names()), "--model-kind"));
    check->run.options.model_kind = k;
    return ATTNSEL_OK;
  });
}

namespace {

// The findings that count: a suppressed one is in the JSON's "suppressed" alone.
std::vector<ReportFinding> counted_findings(const CheckReport& report) {
  std::vector<ReportFinding> found = report_findings(report);
  found.erase(std::remove_if(found.begin(), found.end(), [](const ReportFinding& f) { return f.suppression.has_value(); }),
              found.end());
  return found;
}

attnsel_status run_check(attnsel_check* check, const CheckInput& input, const CheckRun& run) {
  auto report = check_input(check->matrix, *check->catalog, input, run);
  if (!report) return fail(check, report.error());
  std::vector<ReportFinding> found = counted_findings(*report);
  check->reports.push_back(std::move(*report));
  check->findings.insert(check->findings.end(), std::make_move_iterator(found.begin()),
                         std::make_move_iterator(found.end()));
  return ATTNSEL_OK;
}

}  // namespace

attnsel_status attnsel_check_argv(attnsel_check* check, const char* const* argv, size_t argc) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (argv == nullptr || argc == 0)
      return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "argv: no launch command (NULL or argc 0)");
    CheckInput input;
    input.argv.emplace();
    for (size_t i = 0; i < argc; ++i) {
      if (argv[i] == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "argv[" + std::to_string(i) + "]: NULL");
      if (auto bad = check_text(check, argv[i], "argv[" + std::to_string(i) + "]")) return *bad;
      input.argv->emplace_back(argv[i]);
    }
    CheckRun run = check->run;
    run.options.read_config = config_reader_within({});  // the current directory, as `attnsel check --` does
    return run_check(check, input, run);
  });
}

attnsel_status attnsel_check_text(attnsel_check* check, const char* text, size_t size, const char* file_name) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (text == nullptr && size != 0) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "text: NULL but a size");
    if (auto bad = check_text(check, file_name, "file_name")) return *bad;
    CheckInput input;
    input.text.assign(text == nullptr ? "" : text, size);
    if (file_name != nullptr) input.file_name = file_name;
    CheckRun run = check->run;
    run.options.read_config = config_reader_within(file_name != nullptr ? std::vector<std::string>{file_name}
                                                                        : std::vector<std::string>{});
    return run_check(check, input, run);
  });
}

attnsel_status attnsel_check_add_exclude(attnsel_check* check, const char* glob) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (auto bad = check_text(check, glob, "glob")) return *bad;
    if (glob == nullptr) check->walk.exclude.clear();
    else check->walk.exclude.emplace_back(glob);
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_add_include(attnsel_check* check, const char* glob) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (auto bad = check_text(check, glob, "glob")) return *bad;
    if (glob == nullptr) check->walk.include.clear();
    else check->walk.include.emplace_back(glob);
    return ATTNSEL_OK;
  });
}

namespace {

// --select and --ignore: one checked pattern a call; NULL clears the list.
attnsel_status add_rule_pattern(attnsel_check* check, const char* pattern, bool select) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    const std::string where = select ? "--select" : "--ignore";
    if (auto bad = check_text(check, pattern, select ? "select" : "ignore")) return *bad;
    std::vector<RulePattern>& list = select ? check->run.rules.select : check->run.rules.ignore;
    if (pattern == nullptr) {
      list.clear();
      return ATTNSEL_OK;
    }
    if (auto e = check_rule_pattern(pattern, where)) return fail(check, *e);
    list.push_back(RulePattern{pattern, where});
    return ATTNSEL_OK;
  });
}

}  // namespace

attnsel_status attnsel_check_add_select(attnsel_check* check, const char* pattern) {
  return add_rule_pattern(check, pattern, true);
}

attnsel_status attnsel_check_add_ignore(attnsel_check* check, const char* pattern) {
  return add_rule_pattern(check, pattern, false);
}

attnsel_status attnsel_check_path(attnsel_check* check, const char* path) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (path == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "path: NULL");
    if (auto bad = check_text(check, path, "path")) return *bad;
    auto result = check_paths(check->matrix, *check->catalog, {path}, check->run, check->walk);
    if (!result) return fail(check, result.error());
    std::vector<ReportFinding> found;
    for (const CheckReport& r : result->reports) {
      std::vector<ReportFinding> more = counted_findings(r);
      found.insert(found.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
      check->files_with_commands += r.checks.empty() ? 0 : 1;
    }
    check->files_read += result->reports.size();
    check->binary += result->binary;
    check->skipped.insert(check->skipped.end(), result->walk.skipped.begin(), result->walk.skipped.end());
    for (CheckReport& r : result->reports) check->reports.push_back(std::move(r));
    check->findings.insert(check->findings.end(), std::make_move_iterator(found.begin()),
                           std::make_move_iterator(found.end()));
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_skipped_count(attnsel_check* check, size_t* count) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (count == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  *count = check->skipped.size();
  return ATTNSEL_OK;
}

attnsel_status attnsel_check_skipped(attnsel_check* check, size_t index, const char** path, const char** reason,
                                     int* directory) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (index >= check->skipped.size())
      return fail(check, ATTNSEL_ERR_OUT_OF_RANGE, "skipped path " + std::to_string(index) + ": there are " +
                                                       std::to_string(check->skipped.size()));
    const SkippedPath& p = check->skipped[index];
    if (path != nullptr) *path = p.path.c_str();
    if (reason != nullptr) *reason = p.detail.c_str();
    if (directory != nullptr) *directory = p.directory ? 1 : 0;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_ok(attnsel_check* check, int* ok) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (ok == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "ok: NULL");
  bool fails = false;
  for (const CheckReport& r : check->reports) fails = fails || r.fails(check->run.options.strict);
  *ok = fails ? 0 : 1;
  return ATTNSEL_OK;
}

attnsel_status attnsel_check_command_count(attnsel_check* check, size_t* count) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (count == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  size_t n = 0;
  for (const CheckReport& r : check->reports) n += r.checks.size();
  *count = n;
  return ATTNSEL_OK;
}

attnsel_status attnsel_check_finding_count(attnsel_check* check, size_t* count) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (count == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "count: NULL");
  *count = check->findings.size();
  return ATTNSEL_OK;
}

attnsel_status attnsel_check_finding(attnsel_check* check, size_t index, attnsel_diagnostic_kind* kind,
                                     const char** rule, const char** message, int* line) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (index >= check->findings.size())
      return fail(check, ATTNSEL_ERR_OUT_OF_RANGE, "finding " + std::to_string(index) + ": there are " +
                                                       std::to_string(check->findings.size()));
    const CheckDiagnostic& f = check->findings[index].finding;
    if (kind != nullptr)
      *kind = f.diagnostic.severity == Severity::error     ? ATTNSEL_DIAGNOSTIC_ERROR
              : f.diagnostic.severity == Severity::warning ? ATTNSEL_DIAGNOSTIC_WARNING
                                                           : ATTNSEL_DIAGNOSTIC_NOTE;
    if (rule != nullptr) *rule = f.diagnostic.rule.c_str();
    if (message != nullptr) *message = f.diagnostic.message.c_str();
    if (line != nullptr) *line = f.line;
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_finding_where(attnsel_check* check, size_t index, const char** file, const char** gpu,
                                           const char** flag) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  return guarded(check, [&] {
    if (index >= check->findings.size())
      return fail(check, ATTNSEL_ERR_OUT_OF_RANGE, "finding " + std::to_string(index) + ": there are " +
                                                       std::to_string(check->findings.size()));
    const ReportFinding& f = check->findings[index];
    if (file != nullptr) *file = f.file.c_str();
    if (gpu != nullptr) *gpu = f.gpu.c_str();
    if (flag != nullptr) *flag = f.finding.flag.c_str();
    return ATTNSEL_OK;
  });
}

attnsel_status attnsel_check_json(attnsel_check* check, int indent, const char** json) {
  if (!live(check)) return ATTNSEL_ERR_INVALID_HANDLE;
  if (json == nullptr) return fail(check, ATTNSEL_ERR_INVALID_ARGUMENT, "json: NULL");
  return guarded(check, [&] {
    // Every successful input adds a report, a skipped path or a binary file: the sum tells them apart.
    const std::pair<int, std::size_t> key{detail::clamp_indent(indent),
                                          check->reports.size() + check->skipped.size() + check->binary};
    auto it = check->json.find(key);
    if (it == check->json.end()) {
      CheckInputs inputs;  // what paths walked add to the summary; texts count as their commands' files
      inputs.files = check->files_read;
      inputs.files_with_commands = check->files_with_commands;
      inputs.binary_skipped = check->binary;
      for (const SkippedPath& p : check->skipped) ++(p.directory ? inputs.skipped_directories : inputs.skipped_files);
      it = check->json.emplace(key, render_check_json(check->reports, inputs, key.first)).first;
    }
    *json = it->second.c_str();
    return ATTNSEL_OK;
  });
}

const char* attnsel_check_last_error(const attnsel_check* check) {
  return live(check) ? check->last_error.c_str() : status_text(ATTNSEL_ERR_INVALID_HANDLE).data();
}

attnsel_status attnsel_check_free(attnsel_check* check) { return destroy(check); }

}  // extern "C"
