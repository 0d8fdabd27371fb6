/* attnsel's C API: a stable ABI over the C++ library, for C programs and for bindings (Rust,
 * Go, Python ctypes). The C++ API (attnsel/selection.hpp and friends) stays the primary one.
 *
 * Conventions (docs/library.md has a worked example):
 * - Every function returns an attnsel_status, except attnsel_status_string, attnsel_version
 *   and the *_last_error functions, which return strings. Values come back through
 *   out-parameters, which are written only when the call returns ATTNSEL_OK (creating
 *   functions set *out to NULL first).
 * - Handles are opaque. Free each with its *_free function; freeing NULL does nothing. A
 *   null, freed or wrong-kind handle gives ATTNSEL_ERR_INVALID_HANDLE and is never
 *   dereferenced: attnsel keeps a table of the handles it handed out. The limit: once freed,
 *   the address may be reused by a newer handle of the same kind, and a stale pointer then
 *   reaches that one. Using a handle in one thread while another frees it is undefined.
 * - Strings are UTF-8 and NUL-terminated. A string a handle returns is owned by that handle
 *   and stays valid until the handle is freed (a *_last_error string: until the next failing
 *   call on the handle). Never free them.
 * - No C++ exception crosses this boundary, and nothing is printed.
 * - Threads: a loaded attnsel_matrix is immutable; any number of threads may use one at once
 *   (attnsel_request_new, attnsel_matrix_* getters). Every other handle is used by one thread
 *   at a time (it may move between threads). attnsel_select is reentrant.
 * - A failing call stores a message in the handle it was given (the request, for
 *   attnsel_select): read it with the handle's *_last_error function.
 */
#ifndef ATTNSEL_ATTNSEL_H
#define ATTNSEL_ATTNSEL_H

#include <stddef.h>

#include "attnsel/export.hpp"
#include "attnsel/version.hpp"

#ifdef __cplusplus
extern "C" {
#endif

/* Part of the ABI: values never change; new ones may be added. */
typedef enum attnsel_status {
  ATTNSEL_OK = 0,
  ATTNSEL_ERR_INVALID_HANDLE = 1,   /* a null, freed or wrong-kind handle */
  ATTNSEL_ERR_INVALID_ARGUMENT = 2, /* a null out-pointer, a malformed value ("12.x"), a value out of range */
  ATTNSEL_ERR_UNKNOWN_NAME = 3,     /* a GPU, model, backend, slot, KV dtype ... that attnsel does not know;
                                       the message lists the valid names and the closest match */
  ATTNSEL_ERR_OUT_OF_RANGE = 4,     /* an index at or past the count */
  ATTNSEL_ERR_PARSE = 5,            /* the input is not valid JSON (the message has line:column) */
  ATTNSEL_ERR_INVALID_MATRIX = 6,   /* valid JSON but not a valid matrix (the message has the JSON pointer) */
  ATTNSEL_ERR_IO = 7,               /* a file could not be read */
  ATTNSEL_ERR_NO_DEVICE = 8,        /* the request names no device: set a GPU, a probed device or a non-CUDA platform */
  ATTNSEL_ERR_INVALID_STATE = 9,    /* the handle cannot do this: a matrix that failed to load, a request without a model */
  ATTNSEL_ERR_OUT_OF_MEMORY = 10,
  ATTNSEL_ERR_INTERNAL = 11,        /* a bug in attnsel (an unexpected exception); the message says what */
  ATTNSEL_STATUS_FORCE_INT = 0x7FFFFFFF /* not a status: keeps every enum here int-sized, any value in range */
} attnsel_status;

typedef enum attnsel_phase {
  ATTNSEL_PHASE_ALL = 0, /* setters: every phase; getters: the backend when both phases agree */
  ATTNSEL_PHASE_PREFILL = 1,
  ATTNSEL_PHASE_DECODE = 2,
  ATTNSEL_PHASE_FORCE_INT = 0x7FFFFFFF
} attnsel_phase;

/* Boolean request options, named after SGLang's (and attnsel's) command-line flags. */
typedef enum attnsel_flag {
  ATTNSEL_FLAG_SLIDING_WINDOW = 1,      /* --sliding-window: the model uses sliding-window attention */
  ATTNSEL_FLAG_MULTIMODAL = 2,          /* --multimodal */
  ATTNSEL_FLAG_ATTENTION_SINKS = 3,     /* --attention-sinks (GPT-OSS) */
  ATTNSEL_FLAG_DETERMINISTIC = 4,       /* --enable-deterministic-inference */
  ATTNSEL_FLAG_DISABLE_RADIX_CACHE = 5, /* --disable-radix-cache */
  ATTNSEL_FLAG_STRICT = 6,              /* --strict: documented caveats become errors */
  ATTNSEL_FLAG_FORCE_INT = 0x7FFFFFFF
} attnsel_flag;

typedef enum attnsel_diagnostic_kind {
  ATTNSEL_DIAGNOSTIC_ERROR = 0,   /* why the plan is invalid */
  ATTNSEL_DIAGNOSTIC_WARNING = 1, /* SGLang's silent rewrites, caveats */
  ATTNSEL_DIAGNOSTIC_NOTE = 2,    /* why things were decided */
  ATTNSEL_DIAGNOSTIC_FORCE_INT = 0x7FFFFFFF
} attnsel_diagnostic_kind;

typedef struct attnsel_matrix attnsel_matrix;   /* a loaded capability matrix and the GPU/model catalog */
typedef struct attnsel_probe attnsel_probe;     /* the GPUs this process can see */
typedef struct attnsel_request attnsel_request; /* what to plan for: device, model, launch options */
typedef struct attnsel_result attnsel_result;   /* a selection: the plan, its flags and every reason */
typedef struct attnsel_check attnsel_check;     /* launch commands judged for target GPUs, like `attnsel check` */

/* A fixed description of a status ("invalid handle"); "unknown status" for other values. */
ATTNSEL_API const char* attnsel_status_string(attnsel_status status);
/* The version of the library linked in ("0.1.0"); ATTNSEL_VERSION_STRING is the headers'. */
ATTNSEL_API const char* attnsel_version(void);

/* ---- matrix ----
 * Like sqlite3_open: *out receives a handle even when loading fails (unless out is NULL or
 * memory ran out); its attnsel_matrix_last_error says why, and it must still be freed. */
ATTNSEL_API attnsel_status attnsel_matrix_load_builtin(attnsel_matrix** out);
ATTNSEL_API attnsel_status attnsel_matrix_load_file(const char* path, attnsel_matrix** out);
/* `json` holds `size` bytes (no NUL needed); `origin` names it in messages (NULL: "string"). */
ATTNSEL_API attnsel_status attnsel_matrix_load_string(const char* json, size_t size, const char* origin,
                                                      attnsel_matrix** out);
/* The built-in matrix of an engine ("sglang", "vllm", "sglang-diffusion"; NULL: "sglang") for a
 * release ("0.5.3"; NULL: the newest), like --engine and --engine-version. The release also picks
 * the launch grammar that reads launch flags (attnsel_request_set_launch_flags) and checked
 * commands. Unknown engines and releases: ATTNSEL_ERR_UNKNOWN_NAME; "0.5.x": _INVALID_ARGUMENT. */
ATTNSEL_API attnsel_status attnsel_matrix_load_engine(const char* engine, const char* release, attnsel_matrix** out);
/* The engine the matrix describes ("sglang"). */
ATTNSEL_API attnsel_status attnsel_matrix_engine(const attnsel_matrix* matrix, const char** engine);
ATTNSEL_API attnsel_status attnsel_matrix_version(const attnsel_matrix* matrix, const char** version);
ATTNSEL_API attnsel_status attnsel_matrix_schema_version(const attnsel_matrix* matrix, int* schema_version);
ATTNSEL_API const char* attnsel_matrix_last_error(const attnsel_matrix* matrix);
ATTNSEL_API attnsel_status attnsel_matrix_free(attnsel_matrix* matrix);

/* ---- probe: NVML, else the CUDA driver (through dlopen), and ROCm's sysfs ----
 * Finding no GPU is not an error: the count is 0 and attnsel_probe_text says what was tried.
 * timeout_ms bounds the wait for a hung driver (0: 5000). */
ATTNSEL_API attnsel_status attnsel_probe_run(unsigned timeout_ms, attnsel_probe** out);
ATTNSEL_API attnsel_status attnsel_probe_device_count(attnsel_probe* probe, size_t* count);
ATTNSEL_API attnsel_status attnsel_probe_device_name(attnsel_probe* probe, size_t index, const char** name);
/* "cuda", "rocm" */
ATTNSEL_API attnsel_status attnsel_probe_device_platform(attnsel_probe* probe, size_t index, const char** platform);
/* "sm90", "gfx942"; "" when unknown */
ATTNSEL_API attnsel_status attnsel_probe_device_arch(attnsel_probe* probe, size_t index, const char** arch);
/* 9 and 0 for sm90; 0 and 0 when unknown (AMD GPUs) */
ATTNSEL_API attnsel_status attnsel_probe_device_compute_capability(attnsel_probe* probe, size_t index, int* major,
                                                                   int* minor);
/* The whole report, as `attnsel probe --json` prints it; indent < 0: one line. indent is clamped
   to [-1, 16]: 1100 gives 16 spaces a level. Bytes that are not UTF-8 become U+FFFD. */
ATTNSEL_API attnsel_status attnsel_probe_json(attnsel_probe* probe, int indent, const char** json);
/* For people: one row per device, or what was tried and why it failed. */
ATTNSEL_API attnsel_status attnsel_probe_text(attnsel_probe* probe, const char** text);
ATTNSEL_API const char* attnsel_probe_last_error(const attnsel_probe* probe);
ATTNSEL_API attnsel_status attnsel_probe_free(attnsel_probe* probe);

/* ---- request ----
 * A request keeps its matrix alive: the matrix handle may be freed first. Setters check their
 * value at once (unknown names: ATTNSEL_ERR_UNKNOWN_NAME); NULL (or 0) clears a setting. */
ATTNSEL_API attnsel_status attnsel_request_new(const attnsel_matrix* matrix, attnsel_request** out);
/* --gpu: sm90, sm_90a, 9.0, 90, H100, "RTX 5090", MI300X, gfx942 ... Replaces a probed device. */
ATTNSEL_API attnsel_status attnsel_request_set_gpu(attnsel_request* request, const char* gpu);
/* --platform: cuda, rocm, npu, xpu, cpu, mps. A non-CUDA platform needs no GPU. */
ATTNSEL_API attnsel_status attnsel_request_set_platform(attnsel_request* request, const char* platform);
/* --cuda: "12.8". Without it: the probed driver's, else the catalog's assumption. */
ATTNSEL_API attnsel_status attnsel_request_set_cuda(attnsel_request* request, const char* version);
/* Plans for device `index` of a probe (a copy is taken; the probe may be freed). Replaces --gpu. */
ATTNSEL_API attnsel_status attnsel_request_set_probed_device(attnsel_request* request, attnsel_probe* probe,
                                                             size_t index);
/* --model: mha, mla, gdn, dsa, a model id (deepseek-ai/DeepSeek-V3), an architecture, or a path
 * to a Hugging Face config.json or model directory (read now). */
ATTNSEL_API attnsel_status attnsel_request_set_model(attnsel_request* request, const char* model);
/* --kv-cache-dtype: auto, bf16, fp8_e4m3, fp8_e5m2, fp4_e2m1 ... NULL: auto. */
ATTNSEL_API attnsel_status attnsel_request_set_kv_cache_dtype(attnsel_request* request, const char* dtype);
/* --page-size: 1 to 1048576; 0: SGLang's default. */
ATTNSEL_API attnsel_status attnsel_request_set_page_size(attnsel_request* request, int page_size);
/* --speculative-eagle-topk: 0 (no speculative decoding) to 65536. */
ATTNSEL_API attnsel_status attnsel_request_set_speculative_topk(attnsel_request* request, int topk);
/* --speculative-attention-mode: ATTNSEL_PHASE_PREFILL (the default) or ATTNSEL_PHASE_DECODE. */
ATTNSEL_API attnsel_status attnsel_request_set_speculative_attention_mode(attnsel_request* request,
                                                                         attnsel_phase phase);
/* An explicit backend for a slot of the matrix ("attention", "linear", "sparse"; NULL: attention)
 * in one phase or all: ("attention", ALL, "fa3") is --attention-backend fa3, ("linear",
 * DECODE, "triton") --linear-attn-decode-backend triton. backend NULL clears it. */
ATTNSEL_API attnsel_status attnsel_request_set_backend(attnsel_request* request, const char* slot, attnsel_phase phase,
                                                       const char* backend);
ATTNSEL_API attnsel_status attnsel_request_set_flag(attnsel_request* request, attnsel_flag flag, int enabled);
/* --prefer: sglang-default, prefix-reuse, throughput. */
ATTNSEL_API attnsel_status attnsel_request_set_prefer(attnsel_request* request, const char* preference);
/* The engine's own launch flags, `argc` argv items ({"--attention-backend", "fa3", "--page-size",
 * "64", "--tp", "8"}), read with the matrix's engine's launch grammar (of the matrix's release) as
 * `attnsel select` reads them: argparse's prefixes, --flag=value, types and choices. Flags the
 * grammar refuses (an unknown flag, a bad choice, an ambiguous prefix) give
 * ATTNSEL_ERR_INVALID_ARGUMENT with the engine's own words. They are read again at attnsel_select,
 * with the request's model (or, without one, the flags' own --model-path); a value a setter set
 * (backend, KV dtype, page size, speculative decoding, the deterministic and radix cache flags)
 * wins over the flags'. argc 0 clears them. Files they name (--config) are not read. */
ATTNSEL_API attnsel_status attnsel_request_set_launch_flags(attnsel_request* request, const char* const* argv,
                                                            size_t argc);
ATTNSEL_API const char* attnsel_request_last_error(const attnsel_request* request);
ATTNSEL_API attnsel_status attnsel_request_free(attnsel_request* request);

/* ---- select ----
 * An impossible configuration is not a failure: the call returns ATTNSEL_OK and the result's
 * ok is 0, with the errors that say why. Failures (unknown backend, no model, no device) leave
 * their message in the request. */
ATTNSEL_API attnsel_status attnsel_select(attnsel_request* request, attnsel_result** out);

/* ---- result ---- */
ATTNSEL_API attnsel_status attnsel_result_ok(attnsel_result* result, int* ok);
/* The chosen backend of a slot (NULL: "attention") in a phase; *backend is NULL when the plan
 * has none there (an invalid plan, a slot the model kind lacks, ALL for a hybrid plan). */
ATTNSEL_API attnsel_status attnsel_result_backend(attnsel_result* result, const char* slot, attnsel_phase phase,
                                                  const char** backend);
ATTNSEL_API attnsel_status attnsel_result_page_size(attnsel_result* result, int* page_size);
/* The SGLang launch flags, one argv item each: "--attention-backend", "fa3", "--page-size", "1". */
ATTNSEL_API attnsel_status attnsel_result_flag_count(attnsel_result* result, size_t* count);
ATTNSEL_API attnsel_status attnsel_result_flag(attnsel_result* result, size_t index, const char** flag);
/* NAME=VALUE settings the plan needs where its engine release reads a variable instead of a flag
 * ("VLLM_ATTENTION_BACKEND=FLASH_ATTN" for vLLM v0.11-v0.12); none for most plans. */
ATTNSEL_API attnsel_status attnsel_result_environment_count(attnsel_result* result, size_t* count);
ATTNSEL_API attnsel_status attnsel_result_environment(attnsel_result* result, size_t index, const char** setting);
ATTNSEL_API attnsel_status attnsel_result_diagnostic_count(attnsel_result* result, attnsel_diagnostic_kind kind,
                                                           size_t* count);
/* The rule id ("cell.compute-capability"), the message and its upstream source; any of the
 * three out-pointers may be NULL. */
ATTNSEL_API attnsel_status attnsel_result_diagnostic(attnsel_result* result, attnsel_diagnostic_kind kind,
                                                     size_t index, const char** rule, const char** message,
                                                     const char** source);
/* The whole result as `attnsel --json` prints it; indent < 0: one line. indent is clamped to
   [-1, 16]: 1100 gives 16 spaces a level. Bytes that are not UTF-8 become U+FFFD. */
ATTNSEL_API attnsel_status attnsel_result_json(attnsel_result* result, int indent, const char** json);
/* For people, as `attnsel` prints it (no colours). */
ATTNSEL_API attnsel_status attnsel_result_text(attnsel_result* result, const char** text);
ATTNSEL_API const char* attnsel_result_last_error(const attnsel_result* result);
ATTNSEL_API attnsel_status attnsel_result_free(attnsel_result* result);

/* ---- check: engine launch commands judged for target GPUs, like `attnsel check` ----
 * A check handle holds the options (set them first) and gathers the results of every input given
 * to it. A failing call leaves its message in the check handle (attnsel_check_last_error) and adds
 * nothing. Finding no launch command in a text is not a failure. */
ATTNSEL_API attnsel_status attnsel_check_new(const attnsel_matrix* matrix, attnsel_check** out);
/* Target GPUs as --gpu takes them: "sm90,H100", "npu". NULL: the GPUs each text names (Kubernetes
 * node selectors, instance types ...); an argv names none. */
ATTNSEL_API attnsel_status attnsel_check_set_gpus(attnsel_check* check, const char* gpus);
/* --cuda of the NVIDIA targets: "12.8"; NULL: the catalog's assumption. */
ATTNSEL_API attnsel_status attnsel_check_set_cuda(attnsel_check* check, const char* version);
/* --strict: warnings fail the check, documented caveats are errors. */
ATTNSEL_API attnsel_status attnsel_check_set_strict(attnsel_check* check, int strict);
/* --model-kind: mha, mla, gdn or dsa for a model attnsel cannot resolve; NULL: what the backends imply. */
ATTNSEL_API attnsel_status attnsel_check_set_model_kind(attnsel_check* check, const char* kind);
/* A launch command, `argc` argv items: the launcher and its arguments ("python3", "-m",
 * "sglang.launch_server", ...), bare flags, or the whole command as one string. */
ATTNSEL_API attnsel_status attnsel_check_argv(attnsel_check* check, const char* const* argv, size_t argc);
/* A file's text (`size` bytes, no NUL needed): a shell script, Dockerfile, compose or Kubernetes
 * YAML, Markdown, Python ..., its format from `file_name` (NULL: a shell script). Files the
 * commands name (--config) are read only inside file_name's directory. Unless the matrix came
 * from a file, the release the text names (an image tag, a pinned pip install) picks the matrix. */
ATTNSEL_API attnsel_status attnsel_check_text(attnsel_check* check, const char* text, size_t size,
                                              const char* file_name);
/* A file, or every file a walk of a directory reads, checked as `attnsel check PATH` does: the
 * kinds of files it reads (shell, Dockerfile, YAML, Markdown, Python, Makefile, justfile, Procfile,
 * systemd units ...), folders it passes over (.git, node_modules, vendor, build, dist ...), the
 * directory's .gitignore files, the globs given with attnsel_check_add_exclude/_include. A
 * directory named is walked even when its name is on the skip list. Fails (ATTNSEL_ERR_IO) when a
 * path cannot be read or the walk finds no file to read (the message says what it passed over and
 * how to include it), and ATTNSEL_ERR_INVALID_ARGUMENT when files hold commands and neither the
 * handle nor the files name GPUs; a failing call adds nothing. */
ATTNSEL_API attnsel_status attnsel_check_path(attnsel_check* check, const char* path);
/* --exclude GLOB / --include GLOB of `attnsel check`, one glob a call (gitignore syntax: *, **, a
 * trailing / for folders, a leading / anchors at the walked directory); NULL clears the list. */
ATTNSEL_API attnsel_status attnsel_check_add_exclude(attnsel_check* check, const char* glob);
ATTNSEL_API attnsel_status attnsel_check_add_include(attnsel_check* check, const char* glob);
/* --select RULE / --ignore RULE of `attnsel check`, one rule pattern a call: an id
 * ("args.prefix"), a family ("advisory") or a prefix ending in '*'. A pattern that names no rule
 * is refused (ATTNSEL_ERR_UNKNOWN_NAME, the message naming the closest ids); NULL clears the
 * list. A suppressed finding counts toward nothing: it is listed in the JSON's "suppressed", not
 * among the findings. `# attnsel: ignore[...]` comments in the checked text are honoured. */
ATTNSEL_API attnsel_status attnsel_check_add_select(attnsel_check* check, const char* pattern);
ATTNSEL_API attnsel_status attnsel_check_add_ignore(attnsel_check* check, const char* pattern);
/* The paths walks passed over, never silently: the path, why ("build output", "a .txt file, not a
 * kind check reads", "--exclude 'docs'", ".gitignore:3: *.log") and 1 for a folder. Any
 * out-pointer may be NULL. */
ATTNSEL_API attnsel_status attnsel_check_skipped_count(attnsel_check* check, size_t* count);
ATTNSEL_API attnsel_status attnsel_check_skipped(attnsel_check* check, size_t index, const char** path,
                                                 const char** reason, int* directory);
/* 1 when no checked command fails: no error (with strict: no warning, no unreadable block either). */
ATTNSEL_API attnsel_status attnsel_check_ok(attnsel_check* check, int* ok);
/* The commands judged, once per target GPU. */
ATTNSEL_API attnsel_status attnsel_check_command_count(attnsel_check* check, size_t* count);
ATTNSEL_API attnsel_status attnsel_check_finding_count(attnsel_check* check, size_t* count);
/* Finding `index`: its kind (error, warning or note), rule id ("args.choice",
 * "cell.compute-capability"), message and the line of the offending flag (else the command's;
 * 0 for an argv). Any out-pointer may be NULL. */
ATTNSEL_API attnsel_status attnsel_check_finding(attnsel_check* check, size_t index, attnsel_diagnostic_kind* kind,
                                                 const char** rule, const char** message, int* line);
/* Where it is: the file ("" for an argv), the target GPU as given ("sm90"; "" for what concerns
 * the input as a whole) and the flag as written ("--attention-backend"; "" when none). */
ATTNSEL_API attnsel_status attnsel_check_finding_where(attnsel_check* check, size_t index, const char** file,
                                                       const char** gpu, const char** flag);
/* Every input's results as `attnsel check --format json` prints them; indent as attnsel_result_json. */
ATTNSEL_API attnsel_status attnsel_check_json(attnsel_check* check, int indent, const char** json);
ATTNSEL_API const char* attnsel_check_last_error(const attnsel_check* check);
ATTNSEL_API attnsel_status attnsel_check_free(attnsel_check* check);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* ATTNSEL_ATTNSEL_H */
