// The fuzz targets, as plain functions: each fuzz/fuzz_<target>.cpp hands libFuzzer's input to one
// of them, and tests/fuzz_regression_test.cpp replays the saved crashes through the normal build.
// A target returns normally for every input; anything else (a crash, a sanitizer report, a broken
// invariant through fuzz_check) is a bug.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/backend_config.hpp"
#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/encode.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"
#include "attnsel/walk.hpp"
#include "core/yaml_load.hpp"

namespace attnsel::fuzz {

// An invariant every input must keep; aborts so that libFuzzer saves the input.
inline void fuzz_check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = *builtin_catalog();
  return *c;
}

inline const std::shared_ptr<const Matrix>& matrix() {
  static const std::shared_ptr<const Matrix> m = *builtin_matrix();
  return m;
}

// Errors must say something and where (a file:line:col, a JSON pointer or a flag).
inline void check_error(const Error& e) {
  fuzz_check(!e.message.empty(), "an Error without a message");
  fuzz_check(!e.describe().empty(), "Error::describe() is empty");
}

// ---- the matrix loader ----

inline int matrix_loader(const std::uint8_t* data, std::size_t size) {
  auto m = load_matrix(as_text(data, size), "fuzz.json");
  if (!m) {
    check_error(m.error());
    return 0;
  }
  // A matrix the loader accepts renders and selects without crashing.
  const Matrix& matrix = **m;
  (void)render_matrix(matrix, MatrixFormat::table);
  (void)render_matrix(matrix, MatrixFormat::json);
  Request r;
  r.device = *resolve_device(catalog(), DeviceSpec{std::string("sm90"), std::nullopt, std::nullopt, "--gpu"});
  for (AttentionKind kind : {AttentionKind::mha, AttentionKind::mla, AttentionKind::gdn, AttentionKind::dsa}) {
    r.model.kind = kind;
    auto s = select(*m, r);
    if (!s) continue;
    for (const auto* list : {&s->errors, &s->warnings, &s->notes}) (void)s->describe(*list);
    (void)s->flags();
  }
  return 0;
}

// ---- the launch-command parser ----

// A command's arguments read with its engine's launch grammar (the default engine's for bare flags).
inline ParsedArgs parse_args_of(const LaunchCommand& c) {
  auto profile = builtin_profile(c.engine.empty() ? "sglang" : c.engine);
  if (!profile) return {};
  const Grammar* g = (*profile)->grammar(c.grammar);
  return g ? parse_launch_args(c, *g) : ParsedArgs{};
}

// The first byte picks the format and the file name; the rest is the file's text.
inline int launch_commands(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  struct Kind {
    InputFormat format;
    const char* name;
  };
  static const Kind kinds[] = {
      {InputFormat::detect, "launch.sh"},       {InputFormat::shell, "run"},
      {InputFormat::dockerfile, "Dockerfile"},  {InputFormat::compose, "docker-compose.yml"},
      {InputFormat::kubernetes, "deploy.yaml"}, {InputFormat::markdown, "README.md"},
      {InputFormat::detect, "Dockerfile"},      {InputFormat::detect, "compose.yaml"},
      {InputFormat::detect, "k8s.yml"},         {InputFormat::detect, "notes.md"},
      {InputFormat::python, "launch.py"},       {InputFormat::helm, "templates/deploy.yaml"},
      {InputFormat::rst, "guide.rst"},          {InputFormat::asciidoc, "guide.adoc"},
  };
  const Kind& k = kinds[data[0] % (sizeof kinds / sizeof kinds[0])];
  const std::string_view text = as_text(data + 1, size - 1);
  (void)detect_input_format(k.name, text);
  // The whole-file scan: every skipped block an Error with a place, shapes parallel to args.
  const LaunchScan scan = scan_launch_input(text, k.name, k.format);
  for (const Error& e : scan.skipped) check_error(e);
  for (const LaunchCommand& c : scan.commands)
    fuzz_check(c.arg_shapes.empty() || c.arg_shapes.size() == c.args.size(), "arg_shapes not parallel to args");
  auto commands = find_launch_commands(text, k.name, k.format);
  if (!commands) {
    check_error(commands.error());
    return 0;
  }
  for (const LaunchCommand& c : *commands) {
    fuzz_check(c.arg_lines.empty() || c.arg_lines.size() == c.args.size(), "arg_lines not parallel to args");
    const ParsedArgs parsed = parse_args_of(c);
    for (const ParsedArgs::Given& g : parsed.given) fuzz_check(g.flag != nullptr, "a given flag without its grammar entry");
  }
  // The same bytes as an argv: words split at NUL or newline.
  std::vector<std::string> argv(1);
  for (char ch : text) {
    if (ch == '\0' || ch == '\n') argv.emplace_back();
    else argv.back() += ch;
  }
  auto cmd = launch_command_from_argv(argv);
  if (cmd) (void)parse_args_of(*cmd);
  else check_error(cmd.error());
  return 0;
}

// ---- the readers of build and process files, and the walk's globs ----

// The first byte picks the file name (Makefile, justfile, Procfile, a systemd unit, Jinja
// templates, MDX); the rest is the file's text, and also a glob (its first line) matched against
// a path (the rest), the first byte's low bit saying whether the path is a folder.
inline int process_files(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const names[] = {"Makefile", "rules.mk", "justfile", "Procfile",
                                      "sglang.service", "serve.sh.j2", "values.yaml.j2", "guide.mdx"};
  const char* name = names[data[0] % (sizeof names / sizeof names[0])];
  const std::string_view text = as_text(data + 1, size - 1);
  fuzz_check(recognised_format(name, text).has_value(), "a reader's own file name not recognised");
  const LaunchScan scan = scan_launch_input(text, name);
  for (const Error& e : scan.skipped) check_error(e);
  for (const LaunchCommand& c : scan.commands) {
    fuzz_check(c.arg_shapes.empty() || c.arg_shapes.size() == c.args.size(), "arg_shapes not parallel to args");
    fuzz_check(c.arg_lines.empty() || c.arg_lines.size() == c.args.size(), "arg_lines not parallel to args");
  }
  const std::size_t nl = text.find('\n');
  if (nl != std::string_view::npos) (void)glob_match(text.substr(0, nl), text.substr(nl + 1), (data[0] & 1) != 0);
  return 0;
}

// ---- whole-file check: scan, judge every command for two GPUs, write every format ----

// The first byte picks the format as launch_commands does; the rest is the file. At most 16
// commands are judged (the scan itself is not capped).
inline int check_file(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const names[] = {"launch.sh", "run", "Dockerfile", "docker-compose.yml", "deploy.yaml",
                                      "README.md", "launch.py", "templates/deploy.yaml", "guide.rst", "guide.adoc"};
  static const InputFormat formats[] = {InputFormat::detect,   InputFormat::shell,  InputFormat::dockerfile,
                                        InputFormat::compose,  InputFormat::kubernetes, InputFormat::markdown,
                                        InputFormat::python,   InputFormat::helm,   InputFormat::rst,
                                        InputFormat::asciidoc};
  const std::size_t k = data[0] % (sizeof names / sizeof names[0]);
  const LaunchScan scan = scan_launch_input(as_text(data + 1, size - 1), names[k], formats[k]);
  if (scan.fatal) {
    check_error(*scan.fatal);
    return 0;
  }
  static const std::vector<CheckTarget> targets = *resolve_check_targets(catalog(), "sm90,sm100", std::nullopt);
  const CheckOptions options;  // no read_config: files a command names are noted, never opened
  std::ostringstream text, json_out, github;
  std::vector<std::unique_ptr<CheckWriter>> writers;
  writers.push_back(make_check_writer(CheckFormat::text, text));
  writers.push_back(make_check_writer(CheckFormat::json, json_out));
  writers.push_back(make_check_writer(CheckFormat::github, github));
  std::size_t judged = 0;
  for (const LaunchCommand& cmd : scan.commands) {
    if (judged++ == 16) break;
    const std::vector<CommandCheck> checks = check_command(matrix(), catalog(), cmd, targets, options);
    fuzz_check(checks.size() == targets.size(), "check_command returned one result per target");
    for (const auto& w : writers) w->command(checks, &scan.context);
  }
  for (const auto& w : writers) {
    w->skipped(scan.skipped);
    w->finish();
  }
  fuzz_check(nlohmann::json::accept(json_out.str()), "check's JSON output does not parse");
  return 0;
}

// ---- the config.json reader ----

inline int model_config(const std::uint8_t* data, std::size_t size) {
  auto t = traits_from_config(catalog(), as_text(data, size), "config.json");
  if (!t) check_error(t.error());
  return 0;
}

// ---- GPU names and CUDA versions ----

// The first line is a --gpu value, the second a --cuda value.
inline int gpu_name(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  const std::size_t nl = text.find('\n');
  const std::string gpu(text.substr(0, nl));
  auto d = catalog().resolve_gpu(gpu);
  if (!d) check_error(d.error());
  (void)parse_version(gpu);
  DeviceSpec spec{gpu, std::nullopt, std::nullopt, "--gpu"};
  if (nl != std::string_view::npos) spec.cuda = std::string(text.substr(nl + 1));
  auto r = resolve_device(catalog(), spec);
  if (!r) check_error(r.error());
  else fuzz_check(r->platform != Platform::cuda || r->cuda.has_value(), "a CUDA device without a CUDA version");
  return 0;
}

// ---- selection from a fuzzed request ----

// Bytes in, values out; past the end every read is zero.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return v;
  }
  std::string rest_word() {  // up to 24 bytes: an unknown backend name
    std::string s;
    while (pos_ < size_ && s.size() < 24) s += static_cast<char>(data_[pos_++]);
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Layout (see docs/fuzzing.md): device, CUDA major (10 + b % 8; 0: assumed) and minor, kind, family, KV dtype, page size,
// top-k, flag bits, preference, then eight backend choices (attention all/prefill/decode, linear
// all/prefill/decode, sparse prefill/decode): 0 none, 1..N a matrix backend by index, 255 a name
// made of the remaining bytes.
inline Request decode_request(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const Catalog& cat = catalog();
  const Matrix& m = *matrix();
  Request r;
  const auto& archs = cat.architectures();
  const std::size_t device = in.byte() % (archs.size() + 4);
  if (device < archs.size()) {
    r.device = *resolve_device(cat, DeviceSpec{archs[device].arch, std::nullopt, std::nullopt, "--gpu"});
  } else {
    const Platform p[] = {Platform::npu, Platform::xpu, Platform::cpu, Platform::mps};
    r.device = *resolve_device(cat, DeviceSpec{std::nullopt, p[device - archs.size()], std::nullopt, "--platform"});
  }
  const std::uint8_t major = in.byte(), minor = in.byte();
  if (r.device.platform == Platform::cuda && major) r.device.cuda = CudaVersion{10 + major % 8, minor % 10};
  r.model.kind = static_cast<AttentionKind>(in.byte() % kKindCount);
  const std::size_t family = in.byte();
  if (family < cat.families().size()) r.model.family = cat.families()[family].name;
  r.kv_cache_dtype = static_cast<KvCacheDtype>(in.byte() % kKvDtypeCount);
  const std::uint32_t page = in.u32();
  const std::uint32_t topk = in.u32();
  const std::uint8_t bits = in.byte();
  if (bits & 1) r.page_size = static_cast<int>(page % (1u << 20)) + 1;  // the CLI's range: 1 .. 2^20
  r.speculative_topk = static_cast<int>(topk % ((1u << 16) + 1));      // 0 .. 2^16
  r.model.sliding_window = bits & 2;
  r.model.multimodal = bits & 4;
  r.model.attention_sinks = bits & 8;
  r.deterministic = bits & 16;
  r.disable_radix_cache = bits & 32;
  r.strict = bits & 64;
  r.speculative_attention_mode = bits & 128 ? Phase::decode : Phase::prefill;
  r.prefer = static_cast<Preference>(in.byte() % 3);
  std::optional<std::string>* choices[] = {&r.attention.all, &r.attention.prefill, &r.attention.decode,
                                           &r.linear.all,    &r.linear.prefill,    &r.linear.decode,
                                           &r.sparse.prefill, &r.sparse.decode};
  for (auto* choice : choices) {
    const std::uint8_t b = in.byte();
    if (b == 0) continue;
    if (b == 255) *choice = in.rest_word();
    else *choice = m.backend(static_cast<BackendId>((b - 1) % m.backends().size())).name;
  }
  return r;
}

inline int selection(const std::uint8_t* data, std::size_t size) {
  const Request r = decode_request(data, size);
  auto s = select(matrix(), r);
  if (!s) {
    check_error(s.error());
    fuzz_check(s.error().code == ErrorCode::unknown_name, "select() failed with something else than an unknown name");
    return 0;
  }
  fuzz_check(s->ok() == s->errors.empty(), "ok() disagrees with errors");
  for (const auto* list : {&s->errors, &s->warnings, &s->notes})
    for (const Diagnostic& d : s->describe(*list)) fuzz_check(!d.message.empty() && !d.rule.empty(), "an empty diagnostic");
  if (s->ok()) fuzz_check(s->page.page_size >= 1, "a valid plan with a page size below 1");
  (void)s->flags();
  (void)render_text(*s);
  (void)render_explain(*s);
  const std::string j = render_json(*s);
  fuzz_check(nlohmann::json::accept(j), "render_json() is not JSON");
  return 0;
}

// ---- --attention-backend-config ----

// The first byte picks the form: 0 mod 3 a .yaml file, 1 a .json file, 2 the inline text. An accepted
// YAML file was walked whole (aliases expanded) by the reader: the budget is what keeps that bounded.
inline int backend_config(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = as_text(data + 1, size - 1);
  const int form = data[0] % 3;
  auto c = form == 0 ? parse_backend_config_file(text, "fuzz.yaml")
           : form == 1 ? parse_backend_config_file(text, "fuzz.json")
                       : parse_backend_config(text);
  if (!c) {
    check_error(c.error());
    return 0;
  }
  std::vector<std::string> keys;
  for (const auto& entry : c->entries) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  fuzz_check(std::adjacent_find(keys.begin(), keys.end()) == keys.end(), "a parameter given twice was accepted");
  return 0;
}

// ---- the YAML budget (src/core/yaml_load): manifests and backend configs go through it ----

// Small limits, so that the fuzzer reaches them: every refusal is located, none throws or hangs.
inline int yaml_budget(const std::uint8_t* data, std::size_t size) {
  detail::YamlLimits limits;
  limits.max_nodes = 5000;
  limits.max_depth = 40;
  if (auto refused = detail::check_yaml(as_text(data, size), "fuzz.yaml", limits)) {
    check_error(*refused);
    fuzz_check(refused->where.rfind("fuzz.yaml", 0) == 0, "a YAML error that does not name the file");
  }
  return 0;
}

// The output encoders (include/attnsel/encode.hpp) on any bytes, whole and split at every point
// the first byte picks: what reaches a terminal or a log never holds a control character, a bidi
// override, `##[`, or (outside attnsel's own annotations) a line that starts a workflow command;
// the streaming encoder gives what the one-shot one does; github_escape_* leave no CR, LF or `::`.
inline bool encoded_safely(std::string_view out, OutputChannel channel, bool keep_colors) {
  if (out.find("##[") != std::string_view::npos) return false;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c == '\n') {
      line_start = i + 1;
      continue;
    }
    if (c == 0x1B && keep_colors) continue;  // SGR colours, kept on request
    if ((c < 0x20 && c != '\t') || c == 0x7F) return false;
    if (c == 0xC2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) < 0xA0) return false;  // C1
    if (c == 0xE2 && i + 2 < out.size() && static_cast<unsigned char>(out[i + 1]) == 0x80 &&
        ((static_cast<unsigned char>(out[i + 2]) >= 0xAA && static_cast<unsigned char>(out[i + 2]) <= 0xAE) ||
         static_cast<unsigned char>(out[i + 2]) == 0xA8 || static_cast<unsigned char>(out[i + 2]) == 0xA9))
      return false;  // U+202A..U+202E, U+2028, U+2029
    if (c == 0xE2 && i + 2 < out.size() && static_cast<unsigned char>(out[i + 1]) == 0x81 &&
        static_cast<unsigned char>(out[i + 2]) >= 0xA6 && static_cast<unsigned char>(out[i + 2]) <= 0xA9)
      return false;  // U+2066..U+2069
    if (channel != OutputChannel::json && c == ':' && i + 1 < out.size() && out[i + 1] == ':' &&
        out.substr(line_start, i - line_start).find_first_not_of(" \t") == std::string_view::npos)
      return false;
  }
  return true;
}

inline int output_encoders(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = as_text(data + 1, size - 1);
  const std::size_t cut = text.empty() ? 0 : data[0] % (text.size() + 1);
  for (OutputChannel channel : {OutputChannel::terminal, OutputChannel::github, OutputChannel::json,
                                OutputChannel::markdown}) {
    for (bool colors : {false, true}) {
      const std::string whole = encode_output(text, channel, colors);
      fuzz_check(encoded_safely(whole, channel, colors), "encode_output leaves nothing a terminal or log obeys");
      OutputEncoder streaming(channel, colors);
      std::string pieces;
      streaming.feed(text.substr(0, cut), pieces);
      streaming.feed(text.substr(cut), pieces);
      streaming.finish(pieces);
      fuzz_check(pieces == whole, "the streaming encoder gives what encode_output gives");
    }
    if (channel == OutputChannel::json) continue;
    const std::string value = encode_value(text, channel);
    fuzz_check(encoded_safely(value, channel, false), "encode_value leaves nothing a terminal or log obeys");
    fuzz_check(value.find('\n') == std::string::npos && value.find("::") == std::string::npos,
               "encode_value is one line without ::");
  }
  for (const std::string& e : {github_escape_data(text), github_escape_property(text)})
    fuzz_check(e.find_first_of("\r\n") == std::string::npos && e.find("::") == std::string::npos &&
                   encoded_safely(e, OutputChannel::github, false),
               "github_escape_* leave one line without :: or controls");
  return 0;
}

}  // namespace attnsel::fuzz
