// docker compose and Kubernetes YAML: container commands and args, scripts kept in strings.
#include "attnsel/catalog.hpp"
#include "check/launch_internal.hpp"
#include "check/shell_lexer.hpp"
#include "check/launcher_match.hpp"
#include "core/yaml_load.hpp"

#include <algorithm>
#include <map>
#include <memory>

#if defined(ATTNSEL_WITH_YAML) && ATTNSEL_WITH_YAML
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#define ATTNSEL_LAUNCH_YAML 1
#else
#define ATTNSEL_LAUNCH_YAML 0
#endif

namespace attnsel {
namespace launch_detail {

bool yaml_looks_like_compose(std::string_view text) {
  for (const PhysicalLine& l : split_lines(text)) {
    if (starts_with(l.text, "apiVersion:") || starts_with(l.text, "kind:")) return false;
    if (starts_with(l.text, "services:")) return true;
  }
  return false;
}

namespace {

#if ATTNSEL_LAUNCH_YAML
class YamlScanner {
 public:
  YamlScanner(std::string_view text, int first_line, bool compose, bool helm, Sink& sink)
      : file_(source_of(text, first_line)), first_line_(first_line), compose_(compose), helm_(helm), sink_(sink) {}

  // Reports invalid YAML to the sink when `report` is set.
  void run(bool report) {
    // envFrom may name a ConfigMap written further down: the file's ConfigMaps are read first.
    if (file_.text.find("envFrom") != npos) {
      reading_config_maps_ = true;
      each_document(/*report=*/false);
      reading_config_maps_ = false;
    }
    each_document(report);
    read_markdown();
  }

 private:
  void each_document(bool report) {
    // One document at a time: yaml-cpp 0.7's LoadAll loops forever on some invalid input (","),
    // jbeder/yaml-cpp#1040, fixed upstream by #1319 (2024, after 0.8.0); Load is not affected.
    const std::vector<PhysicalLine> lines = split_lines(file_.text);
    std::size_t doc_begin = 0;
    for (std::size_t k = 0; k <= lines.size(); ++k) {
      const bool marker = k < lines.size() && starts_with(lines[k].text, "---") &&
                          (lines[k].text.size() == 3 || is_blank(lines[k].text[3]));
      if (k < lines.size() && !marker) continue;
      const std::size_t doc_end = k < lines.size() ? lines[k].offset : file_.text.size();
      load(doc_begin, doc_end, report);  // a bad document is one finding; the next ones are still read
      doc_begin = doc_end;
    }
  }

  bool load(std::size_t begin, std::size_t end, bool report) {
    const std::string_view doc = std::string_view(file_.text).substr(begin, end - begin);
    bool content = false;  // a part with only comments and directives is not a document
    for (const PhysicalLine& l : split_lines(doc)) {
      const std::string_view t = ltrim(l.text);
      content = content || !(t.empty() || t.front() == '#' || t.front() == '%' || starts_with(t, "---"));
    }
    if (!content) return true;
    doc_pos_ = begin;
    doc_end_ = end;
    doc_line_ = file_.lines.line_at(begin) - first_line_;
    // Aliases, budgets and duplicate keys first: a 40-byte alias loop must not run forever.
    if (auto problem = detail::find_yaml_problem(doc)) {
      if (report) sink_.fail("invalid YAML: " + problem->message, first_line_ + doc_line_ + std::max(problem->line, 1) - 1,
                             static_cast<std::size_t>(problem->column));
      return !report;
    }
    try {
      const YAML::Node root = YAML::Load(std::string(doc));
      // Read through a const reference only: yaml-cpp's non-const operator[] inserts the key it
      // looks up, and the walk is iterating that very map (a use after free).
      doc_root_ = &root;
      struct Forget {
        const YAML::Node*& root;
        ~Forget() { root = nullptr; }
      } forget{doc_root_};
      if (reading_config_maps_) {
        collect_config_map(root);
      } else {
        walk(root, 0);
      }
    } catch (const YAML::Exception& e) {
      if (!report) return true;
      if (e.mark.is_null()) {
        sink_.fail("invalid YAML: " + e.msg, 0);
      } else {
        sink_.fail("invalid YAML: " + e.msg, first_line_ + doc_line_ + e.mark.line,
                   static_cast<std::size_t>(e.mark.column) + 1);
      }
      return false;
    }
    return true;
  }

  int line_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() ? first_line_ + doc_line_ : first_line_ + doc_line_ + m.line;
  }
  std::size_t pos_of(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return m.is_null() || m.pos < 0 ? doc_pos_ : doc_pos_ + static_cast<std::size_t>(m.pos);
  }

  // A list of arguments, or a string split the way compose splits it (shell-like, no shell).
  std::vector<ArgWord> words_of(const YAML::Node& node) {
    std::vector<ArgWord> argv;
    if (!node.IsDefined() || node.IsNull()) return argv;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) {
        if (!item.IsScalar()) continue;
        // $(VAR) (Kubernetes), ${VAR} and $VAR (compose), a Helm value: filled in before the program
        // runs. Kubernetes leaves $VAR and ${VAR} alone: the program receives them as written.
        // (A Helm template's {{ ... }} reaches here as ${...}: a value too.)
        bool from_env = false;
        const std::string t = compose_ ? compose_interpolated(item.Scalar(), from_env)
                                       : container_env_filled(item.Scalar(), from_env);
        const bool filled = from_env || (!compose_ && (t.find("$(") != npos || (helm_ && t.find("${") != npos)));
        const WordShape shape = filled ? WordShape::value : WordShape::literal;
        argv.push_back(ArgWord{t, line_of(item), pos_of(item), placeholder_shape(t, shape)});
      }
    } else if (node.IsScalar()) {
      bool from_env = false, compose_filled = false;
      const std::string script = compose_ ? compose_interpolated(node.Scalar(), compose_filled)
                                          : container_env_filled(node.Scalar(), from_env);
      const Lexed lexed = lex_shell(script);
      if (!lexed.error.empty()) {
        if (sink_.mentions_launcher(script)) sink_.fail(lexed.error + " in a YAML command string", line_of(node));
        return argv;
      }
      Locator locate(&file_, pos_of(node), line_of(node));
      for (const SimpleCommand& command : lexed.commands) {
        for (const Word& w : command) {
          ArgWord a = locate.next(w.text);
          // compose splits the string without a shell: where it fills nothing in ($$ only), every word
          // reaches the program as written.
          a.shape = placeholder_shape(w.text, from_env                      ? widen(w.shape, WordShape::value)
                                              : compose_ && !compose_filled ? WordShape::literal
                                                                            : w.shape);
          argv.push_back(std::move(a));
        }
      }
    }
    return argv;
  }

  // A compose value as compose interpolates it: $$ is a literal $; `filled` is set when any other $
  // (${VAR}, $VAR, ${VAR:-default}) is there, a value from the environment.
  static std::string compose_interpolated(const std::string& text, bool& filled) {
    if (text.find('$') == npos) return text;
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$') {
        out += '$';
        ++i;
        continue;
      }
      filled = filled || text[i] == '$';
      out += text[i];
    }
    // Filled in somewhere: the text is kept as written (its $$ too), each $ an unknown value.
    return filled ? text : out;
  }

  // A container's command or args as Kubernetes passes them: each $(NAME) the container's env (or
  // a ConfigMap of this file it takes with envFrom) sets becomes its value, $$ is a literal $, and
  // any other $(NAME) stays as written. `filled` is set when a value came from the env.
  std::string container_env_filled(const std::string& text, bool& filled) const {
    if (text.find("$(") == npos) return text;
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
      if (text.compare(i, 2, "$$") == 0) {
        out += '$';
        i += 2;
        continue;
      }
      const std::size_t close = text.compare(i, 2, "$(") == 0 ? text.find(')', i + 2) : npos;
      const std::string* value = close == npos ? nullptr : env_value(std::string_view(text).substr(i + 2, close - i - 2));
      if (!value || out.size() + value->size() > kMaxFilledBytes) {
        out += text[i++];
        continue;
      }
      out += *value;
      filled = true;
      i = close + 1;
    }
    return out;
  }

  // The value the innermost env being walked gives NAME; null when none does.
  const std::string* env_value(std::string_view name) const {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it)
      if (it->first == name) return &it->second;
    return nullptr;
  }

  // A ConfigMap's data, by its name, for the containers that take it with envFrom.
  void collect_config_map(const YAML::Node& root) {
    if (!root.IsMap() || !root["kind"].IsDefined() || !root["kind"].IsScalar() || root["kind"].Scalar() != "ConfigMap")
      return;
    const YAML::Node meta = root["metadata"], data = root["data"];
    if (!meta.IsDefined() || !meta.IsMap() || !meta["name"].IsDefined() || !meta["name"].IsScalar() ||
        !data.IsDefined() || !data.IsMap() || config_maps_.size() >= kMaxConfigMaps)
      return;
    Environment& values = config_maps_[meta["name"].Scalar()];
    for (const auto& kv : data)
      if (kv.first.IsScalar() && kv.second.IsScalar() && values.size() < kMaxEnvEntries)
        values.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }

  // env: [{name, value}] (Kubernetes), env: ["K=V"] / environment: {K: V} (dstack, compose),
  // envs: {K: V} (SkyPilot): the values this map's scripts see.
  void collect_env(const YAML::Node& map) {
    collect_env_from(map["envFrom"]);  // first: a name in env wins over the same name from envFrom
    for (const char* key : {"env", "envs", "environment"}) {
      const YAML::Node e = map[key];
      if (!e.IsDefined()) continue;
      if (e.IsMap()) {
        for (const auto& kv : e)
          if (kv.first.IsScalar() && kv.second.IsScalar()) add_env(kv.first.Scalar(), kv.second.Scalar());
      } else if (e.IsSequence()) {
        for (const YAML::Node& item : e) {
          if (item.IsScalar()) {
            const std::string& t = item.Scalar();
            const std::size_t eq = t.find('=');
            if (eq != npos) add_env(t.substr(0, eq), t.substr(eq + 1));
          } else if (item.IsMap() && item["name"].IsDefined() && item["name"].IsScalar() && item["value"].IsDefined() &&
                     item["value"].IsScalar()) {
            add_env(item["name"].Scalar(), item["value"].Scalar());
          }
        }
      }
    }
  }

  // envFrom: [{configMapRef: {name: X}, prefix: P}]: the data of ConfigMap X, when this file holds it.
  void collect_env_from(const YAML::Node& sources) {
    if (!sources.IsDefined() || !sources.IsSequence()) return;
    for (const YAML::Node& source : sources) {
      if (!source.IsMap()) continue;
      const YAML::Node ref = source["configMapRef"];
      if (!ref.IsDefined() || !ref.IsMap() || !ref["name"].IsDefined() || !ref["name"].IsScalar()) continue;
      const auto data = config_maps_.find(ref["name"].Scalar());
      if (data == config_maps_.end()) continue;
      const YAML::Node prefix = source["prefix"];
      const std::string p = prefix.IsDefined() && prefix.IsScalar() ? prefix.Scalar() : std::string();
      for (const auto& [name, value] : data->second) add_env(p + name, value);
    }
  }

  void add_env(const std::string& name, const std::string& value) {
    if (env_.size() < kMaxEnvEntries && value.find('$') == npos) env_.emplace_back(name, value);
  }

  Context context() const { return Context{&file_, env_.empty() ? nullptr : &env_}; }

  void walk(const YAML::Node& node, int depth) {
    if (depth > kMaxYamlDepth) return;
    const std::size_t env_mark = env_.size();
    if (node.IsMap()) collect_env(node);
    walk_node(node, depth);
    env_.resize(env_mark);  // a map's env reaches its own subtree only
  }

  void walk_node(const YAML::Node& node, int depth) {
    if (node.IsMap() && depth == 0 && !helm_ && !compose_) {
      // A config file (`--config cfg.yaml`) given on its own: judged as the command that loads it.
      if (engine_config(node, false)) return;
      // An orchestrator's config whose services carry engine flags (dynamo's `SGLangWorker:`).
      bool any = false;
      for (const auto& kv : node)
        if (kv.first.IsScalar() && ends_with(kv.first.Scalar(), "Worker") && kv.second.IsMap())
          any = engine_config(kv.second, true) || any;
      if (any) return;
    }
    if (node.IsMap() && depth == 0 && !helm_ && !compose_ && recipe(node)) {
      // The rest of a recipe (its `guide: |`, read as Markdown) is walked as any document is.
      for (const auto& kv : node)
        if (kv.first.IsScalar() && kv.first.Scalar() != "model" && kv.first.Scalar() != "features" &&
            kv.first.Scalar() != "hardware_overrides")
          walk(kv.second, depth + 1);
      return;
    }
    if (node.IsMap() && !compose_ && model_hardware(node)) return;
    if (node.IsMap() && !compose_ && flag_strings(node)) return;
    if (node.IsMap()) {
      // compose: entrypoint + command; Kubernetes containers: command + args.
      const char* program_key = compose_ ? "entrypoint" : "command";
      const char* args_key = compose_ ? "command" : "args";
      std::vector<ArgWord> argv = words_of(node[program_key]);
      std::vector<ArgWord> rest = words_of(node[args_key]);
      const bool has_program = !argv.empty();
      argv.insert(argv.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
      const std::size_t before = sink_.found.size();
      if (!has_program && !argv.empty() && model_command_args(argv, node)) {
        // llm-d-modelservice's container: `modelCommand: vllmServe` runs the launcher on `args`
      } else if (!has_program && !argv.empty() && entrypoint_args(argv, node)) {
        // the image's entrypoint is a launcher: compose `command` / Kubernetes `args` are its arguments
      } else if (!argv.empty()) {
        extract(resolve_defaults(argv), context(), 0, sink_);
      }
      if (!has_program && sink_.found.size() == before) flag_list(node[args_key], node);
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && (kv.first.Scalar() == program_key || kv.first.Scalar() == args_key)) continue;
        if (kv.first.IsScalar() && camel_engine_config(kv.first.Scalar(), kv.second, node)) continue;
        if (kv.first.IsScalar() && is_flag_list_key(kv.first.Scalar()) && flag_list(kv.second, node)) continue;
        if (kv.first.IsScalar() && engine_section(kv.first.Scalar(), kv.second)) continue;
        const YAML::Node* outer = key_;
        key_ = &kv.first;
        walk(kv.second, depth + 1);
        key_ = outer;
      }
    } else if (node.IsSequence()) {
      const YAML::Node* outer = key_;
      key_ = nullptr;
      for (const YAML::Node& item : node) walk(item, depth + 1);
      key_ = outer;
    } else if (node.IsScalar() && sink_.mentions_launcher(node.Scalar())) {
      if (markdown_block(node)) return;  // a recipe's `guide: |`: read as Markdown after the walk
      // Scripts kept in YAML (a ConfigMap's start.sh, a CI step's `run: |`): best effort.
      scan_script(ArgWord{node.Scalar(), line_of(node), pos_of(node)}, context(), 1, OnLexError::ignore,
                  sink_);
    }
  }

  // A literal block scalar holding Markdown with a fenced code block (vllm-project/recipes@8959cf64
  // models/*/*.yaml `guide: |`, the deployment guide the site renders): kept to be read as Markdown
  // on the file's own lines (read_markdown). Its lines must be the file's lines less their
  // indentation, as `|` keeps them; a scalar that is not (folded, quoted, in a template) is not
  // kept. Only in a YAML file of its own (not a block of a document, not a Helm template).
  bool markdown_block(const YAML::Node& node) {
    if (first_line_ != 1 || helm_ || markdown_.size() >= kMaxMarkdownBlocks) return false;
    const std::string& text = node.Scalar();
    std::vector<std::string_view> own;
    for (const PhysicalLine& l : split_lines(text)) own.push_back(l.text);
    if (!own.empty() && own.back().empty()) own.pop_back();
    if (!std::any_of(own.begin(), own.end(), [](std::string_view l) {
          const std::string_view t = ltrim(l);
          return starts_with(t, "```") || starts_with(t, "~~~");
        }))
      return false;
    if (file_lines_.empty()) file_lines_ = split_lines(file_.text);
    for (const int start : {line_of(node) + 1, line_of(node)}) {  // the scalar's first line: below its `|`
      if (start < 1 || static_cast<std::size_t>(start - 1) + own.size() > file_lines_.size()) continue;
      bool same = true;
      for (std::size_t i = 0; i < own.size() && same; ++i) {
        const std::string_view written = file_lines_[static_cast<std::size_t>(start - 1) + i].text;
        same = own[i].empty() ? trim(written).empty()
                              : ends_with(written, own[i]) && trim(written.substr(0, written.size() - own[i].size())).empty();
      }
      if (!same) continue;
      markdown_.push_back({start, std::string(text)});
      return true;
    }
    return false;
  }

  // The kept Markdown, on the file's lines (every other line blank), read as a Markdown document.
  void read_markdown() {
    if (markdown_.empty()) return;
    if (file_lines_.empty()) file_lines_ = split_lines(file_.text);
    std::vector<std::string_view> at(file_lines_.size());
    for (const auto& [start, text] : markdown_) {
      std::size_t k = static_cast<std::size_t>(start - 1);
      for (const PhysicalLine& l : split_lines(text))
        if (k < at.size()) at[k++] = l.text;
    }
    std::string overlay;
    for (const std::string_view l : at) {
      overlay += l;
      overlay += '\n';
    }
    scan_markdown(overlay, sink_);
    sink_.markdown_overlay = std::move(overlay);
    markdown_.clear();
  }

  // A container of llm-d-modelservice's Helm values (llm-d/llm-d@126f65d6
  // guides/inference-scheduling/ms-inference-scheduling/values.yaml: `decode.containers[].{image,
  // modelCommand: vllmServe, args: [...]}`, the model `modelArtifacts.uri: hf://ORG/NAME` at the
  // document's top): `modelCommand` names a launcher as its program and subcommand in camelCase
  // (vllmServe: `vllm serve`); `args` are its flags. True when read.
  bool model_command_args(const std::vector<ArgWord>& args, const YAML::Node& owner) {
    const YAML::Node command = owner["modelCommand"];
    if (!command.IsDefined() || !command.IsScalar()) return false;
    const std::string wanted = lower(command.Scalar());
    const Launcher* launcher = nullptr;
    for (const Launcher& l : *sink_.launchers) {
      if (l.program.empty()) continue;
      std::string joined = l.program;
      for (const std::string& word : l.subcommand) joined += word;
      if (lower(joined) == wanted) {
        launcher = &l;
        break;
      }
    }
    if (!launcher) return false;
    std::vector<ArgWord> argv;
    const YAML::Node artifacts =
        doc_root_ && doc_root_->IsMap() ? (*doc_root_)["modelArtifacts"] : YAML::Node();
    const YAML::Node uri = artifacts.IsDefined() && artifacts.IsMap() ? artifacts["uri"] : YAML::Node();
    const bool with_model = uri.IsDefined() && uri.IsScalar() && starts_with(uri.Scalar(), "hf://") && uri.Scalar().size() > 5;
    if (with_model) argv.push_back(ArgWord{uri.Scalar().substr(5), line_of(uri), 0});
    std::vector<ArgWord> rest = resolve_defaults(args);
    argv.insert(argv.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    std::string invoked = launcher->program;
    for (const std::string& word : launcher->subcommand) invoked += " " + word;
    LaunchCommand cmd = launch_command(sink_, *launcher, std::move(invoked), line_of(owner["args"]), argv);
    cmd.positional_model = with_model;
    sink_.found.push_back(std::move(cmd));
    return true;
  }

  // A container without its own program (compose `entrypoint`, Kubernetes `command`) whose image's
  // entrypoint is a launcher (vllm/vllm-openai runs `vllm serve`): `args` are that launcher's. True
  // when read.
  bool entrypoint_args(const std::vector<ArgWord>& args, const YAML::Node& owner) {
    const YAML::Node image = owner["image"];
    if (!image.IsDefined() || !image.IsScalar()) return false;
    const Launcher* launcher = launcher_of_image(image.Scalar(), *sink_.launchers);
    if (!launcher) return false;
    const std::vector<ArgWord> argv = resolve_defaults(args);
    sink_.found.push_back(
        launch_command(sink_, *launcher, image.Scalar(), argv.empty() ? line_of(owner) : argv.front().line, argv));
    return true;
  }

  // A mapping whose keys are the flags of one engine's launcher (at least two, one of them
  // hyphenated, three in four keys or more; in a `section` the keys holding mappings are not
  // counted): judged as `LAUNCHER --config FILE`, FILE read from this text (LaunchCommand::written).
  // A mapping as many engines' flags is no one's. True when judged.
  bool engine_config(const YAML::Node& map, bool section) {
    if (map["apiVersion"].IsDefined() || map["kind"].IsDefined() || map["services"].IsDefined()) return false;
    std::vector<std::string> keys;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) return false;
      if (section && kv.second.IsMap()) continue;
      keys.push_back(kv.first.Scalar());
    }
    if (keys.size() < 2) return false;
    const Launcher* best = nullptr;
    std::size_t best_count = 0;
    bool tie = false;
    std::vector<std::string> engines;
    for (const Launcher& l : *sink_.launchers) {
      if (std::find(engines.begin(), engines.end(), l.engine) != engines.end()) continue;
      engines.push_back(l.engine);
      auto profile = builtin_profile(l.engine);
      const Grammar* grammar = profile ? (*profile)->grammar(l.grammar) : nullptr;
      if (!grammar || grammar->config_flag.empty()) continue;
      std::size_t count = 0;
      bool hyphenated = false;
      for (const std::string& k : keys)
        if (grammar->exact("--" + k)) {
          ++count;
          hyphenated = hyphenated || k.find('-') != npos;
        }
      if (count < 2 || !hyphenated || count * 4 < keys.size() * 3) continue;
      if (count == best_count) {
        tie = true;
      } else if (count > best_count) {
        best = &l, best_count = count, tie = false;
      }
    }
    if (!best || tie) return false;
    const std::size_t slash = sink_.file.find_last_of('/');
    std::string name = slash == npos ? sink_.file : sink_.file.substr(slash + 1);
    if (!(ends_with(name, ".yaml") || ends_with(name, ".yml"))) name += ".yaml";  // a YAML block of a document
    // The mapping's own lines: the whole document, or a section's block with its indentation removed.
    const int first = line_of(map.begin()->first);
    std::string text;
    if (!section) {
      text = std::string(std::string_view(file_.text).substr(doc_pos_, doc_end_ - doc_pos_));
    } else {
      const std::size_t indent = static_cast<std::size_t>(std::max(map.begin()->first.Mark().column, 0));
      const std::vector<PhysicalLine> lines = split_lines(std::string_view(file_.text).substr(pos_of(map.begin()->first) - indent));
      for (const PhysicalLine& l : lines) {
        const std::string_view t = ltrim(l.text);
        const std::size_t own = l.text.size() - t.size();
        if (!t.empty() && t.front() != '#' && own < indent) break;
        text.append(l.text.substr(std::min(indent, own))).append("\n");
      }
    }
    const int doc_first = section ? first : first_line_ + doc_line_;
    std::string invoked = best->module.empty() ? best->program : "python3 -m " + best->module;
    for (const std::string& word : best->subcommand) invoked += " " + word;
    LaunchCommand cmd = launch_command(sink_, *best, std::move(invoked), first,
                                       {ArgWord{"--config", first, 0}, ArgWord{name, first, 0}});
    cmd.positional_model = false;
    cmd.written.push_back({name, std::make_shared<const std::string>(std::move(text)), doc_first, false, section});
    sink_.found.push_back(std::move(cmd));
    return true;
  }

  // A map under a key naming an engine's config (`vllm_config:`, `sglangConfig:`, `vllm-config:`):
  // the engine's flags as a --config file (engine_config), or a map of such per role (srt-slurm's
  // `backend.vllm_config.{prefill,decode}`), each its own command. True when one was read.
  bool engine_section(const std::string& key, const YAML::Node& value) {
    if (!value.IsMap() || key.size() < 7) return false;
    const std::string k = lower(key);
    bool named = false;
    for (const Launcher& l : *sink_.launchers)
      for (const char* tail : {"_config", "config", "-config"})
        named = named || k == l.engine + tail;
    if (!named) return false;
    if (engine_config(value, true)) return true;
    bool any = false;
    for (const auto& kv : value)
      if (kv.first.IsScalar() && kv.second.IsMap()) any = engine_config(kv.second, true) || any;
    return any;
  }

  // A Helm chart's engine section whose keys are the engine's flags in camelCase, beside the model
  // (vllm-project/production-stack@a6c01db0 helm/values.yaml `servingEngineSpec.modelSpec[]`:
  // `modelURL`, `vllmConfig: {enablePrefixCaching: true, maxModelLen: 4096, dtype, tensorParallelSize,
  // extraArgs: [...]}`; the chart's deployment template writes each key as its kebab-case flag,
  // `true` as the bare flag). The key is ENGINE + "Config" for a launcher's engine; three in four of
  // its keys (extraArgs aside) must be that engine's flags. Read as `flags --model MODEL ...`, the
  // extraArgs last. True when read.
  bool camel_engine_config(const std::string& key, const YAML::Node& section, const YAML::Node& owner) {
    if (!section.IsMap() || key.size() < 7 || !ends_with(key, "Config")) return false;
    const Launcher* launcher = engine_called(key.substr(0, key.size() - 6));
    if (!launcher) return false;
    auto profile = builtin_profile(launcher->engine);
    const Grammar* grammar = profile ? (*profile)->grammar(launcher->grammar) : nullptr;
    if (!grammar) return false;
    std::vector<ArgWord> argv;
    const YAML::Node model = owner["modelURL"];
    if (model.IsDefined() && model.IsScalar() && !model.Scalar().empty()) {
      argv.push_back(ArgWord{"--model", line_of(model), 0});
      argv.push_back(ArgWord{model.Scalar(), line_of(model), 0});
    }
    std::size_t keys = 0, known = 0;
    YAML::Node extra;
    for (const auto& kv : section) {
      if (!kv.first.IsScalar()) return false;
      const std::string& name = kv.first.Scalar();
      if (is_flag_list_key(name)) {
        extra.reset(kv.second);  // rebinds; `extra = kv.second` would overwrite the node extra held
        continue;
      }
      ++keys;
      std::string flag = "--";  // camelCase -> --kebab-case
      for (char c : name) {
        if (std::isupper(static_cast<unsigned char>(c))) {
          flag += '-';
          flag += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
          flag += c;
        }
      }
      if (!grammar->exact(flag) || !kv.second.IsScalar()) continue;
      ++known;
      const int line = line_of(kv.first);
      const std::string& v = kv.second.Scalar();
      if (v == "true" || v == "True") {
        argv.push_back(ArgWord{flag, line, 0});
      } else if (v == "false" || v == "False") {
        if (grammar->exact("--no-" + flag.substr(2))) argv.push_back(ArgWord{"--no-" + flag.substr(2), line, 0});
      } else {
        argv.push_back(ArgWord{flag, line, 0});
        argv.push_back(ArgWord{v, line_of(kv.second), pos_of(kv.second)});
      }
    }
    if (keys == 0 || known * 4 < keys * 3) return false;
    std::vector<ArgWord> rest = resolve_defaults(words_of(extra));
    argv.insert(argv.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    LaunchCommand cmd = launch_command(sink_, *launcher, "flags", argv.empty() ? line_of(section) : argv.front().line, argv);
    cmd.positional_model = false;
    sink_.found.push_back(std::move(cmd));
    return true;
  }

  // The launcher of the only engine whose grammar knows three in four of the options of `argv`
  // (a model's form that names no engine); null when none or several do.
  const Launcher* engine_of_flags(const std::vector<ArgWord>& argv) const {
    const Launcher* found = nullptr;
    std::vector<std::string> engines;
    for (const Launcher& l : *sink_.launchers) {
      if (std::find(engines.begin(), engines.end(), l.engine) != engines.end()) continue;
      engines.push_back(l.engine);
      if (!mostly_flags_of(l, argv)) continue;
      if (found) return nullptr;
      found = &l;
    }
    return found;
  }

  // The launcher of ENGINE that runs a program (`vllm serve`), else its first (a module).
  const Launcher* launcher_of_engine(const std::string& engine) const {
    const Launcher* first = nullptr;
    for (const Launcher& l : *sink_.launchers) {
      if (l.engine != engine) continue;
      if (!l.program.empty()) return &l;
      if (!first) first = &l;
    }
    return first;
  }

  // `LAUNCHER MODEL ARGS...`: a program launcher (`vllm serve`) reads MODEL positionally, a module
  // is given it with the flag its grammar binds to the model (the profile's bindings).
  void push_model_command(const Launcher& l, const YAML::Node& model, std::vector<ArgWord> args, int line) {
    std::vector<ArgWord> argv;
    std::string invoked = l.module.empty() ? l.program : "python3 -m " + l.module;
    for (const std::string& word : l.subcommand) invoked += " " + word;
    if (!l.module.empty()) {
      auto profile = builtin_profile(l.engine);
      const Grammar* grammar = profile ? (*profile)->grammar(l.grammar) : nullptr;
      const GrammarFlag* flag = grammar ? grammar->for_field("model") : nullptr;
      if (!flag || flag->names.empty()) return;  // no way to give it the model: not read
      argv.push_back(ArgWord{flag->names.front(), line_of(model), 0});
    }
    argv.push_back(ArgWord{model.Scalar(), line_of(model), 0});
    argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    LaunchCommand cmd = launch_command(sink_, l, std::move(invoked), line, argv);
    cmd.positional_model = l.module.empty();
    sink_.found.push_back(std::move(cmd));
  }

  // A model recipe of vllm-project/recipes (@8959cf64 models/<org>/<model>.yaml): `model: {model_id,
  // min_vllm_version, base_args: [...]}`, `features.<name>.args`, `hardware_overrides.<hw>.extra_args`.
  // The engine is the one `min_<ENGINE>_version` names. The site builds a command as base args,
  // then the hardware override of the GPU's generation, then the features the user enables, last
  // (src/lib/command-synthesis.js buildArgs, @8959cf64): so one command for the base args, one per
  // feature, one per hardware override, and one per override and feature, each override's within
  // its entry (judged on its hardware; the others are not judged there: entry_targets). A feature
  // reading names its feature (LaunchCommand::branch). True when read.
  bool recipe(const YAML::Node& root) {
    const YAML::Node model = root["model"];
    if (!model.IsDefined() || !model.IsMap() || !model["model_id"].IsDefined() || !model["model_id"].IsScalar() ||
        !model["base_args"].IsDefined() || !model["base_args"].IsSequence())
      return false;
    const Launcher* launcher = nullptr;
    for (const auto& kv : model)
      if (kv.first.IsScalar() && starts_with(kv.first.Scalar(), "min_") && ends_with(kv.first.Scalar(), "_version"))
        launcher = launcher ? launcher : launcher_of_engine(kv.first.Scalar().substr(4, kv.first.Scalar().size() - 12));
    if (!launcher) return false;
    const YAML::Node id = model["model_id"];
    const std::vector<ArgWord> base = shell_words(resolve_defaults(words_of(model["base_args"])));
    struct Part {
      std::string name;
      std::vector<ArgWord> args;
    };
    auto parts_of = [&](const YAML::Node& section, const char* key) {
      std::vector<Part> out;
      if (!section.IsDefined() || !section.IsMap()) return out;
      for (const auto& kv : section) {
        if (!kv.first.IsScalar() || !kv.second.IsDefined() || !kv.second.IsMap() || !kv.second[key].IsDefined() ||
            !kv.second[key].IsSequence())
          continue;
        std::vector<ArgWord> own = shell_words(resolve_defaults(words_of(kv.second[key])));
        if (!own.empty()) out.push_back(Part{kv.first.Scalar(), std::move(own)});
      }
      return out;
    };
    const std::vector<Part> features = parts_of(root["features"], "args");
    const std::vector<Part> overrides = parts_of(root["hardware_overrides"], "extra_args");
    auto push = [&](const std::vector<const std::vector<ArgWord>*>& pieces, int line, const Part* feature) {
      std::vector<ArgWord> args = base;
      for (const std::vector<ArgWord>* p : pieces) args.insert(args.end(), p->begin(), p->end());
      const std::size_t before = sink_.found.size();
      push_model_command(*launcher, id, std::move(args), line);
      if (feature && sink_.found.size() > before)
        sink_.found.back().branch =
            fmt::format("features.{} is enabled (line {})", feature->name, feature->args.front().line);
    };
    push({}, line_of(model["base_args"]), nullptr);
    for (const Part& f : features) push({&f.args}, f.args.front().line, &f);
    for (const Part& o : overrides) {
      push({&o.args}, o.args.front().line, nullptr);
      for (const Part& f : features) push({&o.args, &f.args}, o.args.front().line, &f);
    }
    return true;
  }

  // A recipe's list item that is a flag with its value in one string (`- "--max-model-len auto"`):
  // the site writes it into the command unquoted (command-synthesis.js@8959cf64 resolveCommand:
  // an item starting with `-` is pushed as written), so the shell gives the engine its words.
  static std::vector<ArgWord> shell_words(std::vector<ArgWord> args) {
    std::vector<ArgWord> out;
    for (ArgWord& a : args) {
      const bool split = starts_with(a.text, "-") && a.text.find_first_of(" \t") != npos &&
                         a.text.find_first_of("'\"\\$`") == npos;
      if (!split) {
        out.push_back(std::move(a));
        continue;
      }
      std::size_t at = 0;
      while (at < a.text.size()) {
        const std::size_t b = a.text.find_first_not_of(" \t", at);
        if (b == npos) break;
        const std::size_t e = std::min(a.text.find_first_of(" \t", b), a.text.size());
        ArgWord w = a;
        w.text = a.text.substr(b, e - b);
        out.push_back(std::move(w));
        at = e;
      }
    }
    return out;
  }

  // A model of sgl-project/sgl-cookbook's data (@7b5bd9c0 data/models/src/v0.5.8/*.yaml):
  // `{model_path, hardware: {<GPU>: {tp, extra_args: [...]}}}`. Each GPU entry with extra_args is
  // one command: `--tp N` then its extra_args, for the engine whose flags they are. True when read.
  bool model_hardware(const YAML::Node& map) {
    const YAML::Node path = map["model_path"], hardware = map["hardware"];
    if (!path.IsDefined() || !path.IsScalar() || !hardware.IsDefined() || !hardware.IsMap()) return false;
    bool any = false;
    for (const auto& kv : hardware) {
      if (!kv.second.IsDefined() || !kv.second.IsMap() || !kv.second["extra_args"].IsDefined() || !kv.second["extra_args"].IsSequence()) continue;
      std::vector<ArgWord> args;
      const YAML::Node tp = kv.second["tp"];
      std::vector<ArgWord> own = resolve_defaults(words_of(kv.second["extra_args"]));
      const Launcher* engine = engine_of_flags(own);
      if (!engine || !(engine = launcher_of_engine(engine->engine))) continue;
      if (tp.IsDefined() && tp.IsScalar()) {
        args.push_back(ArgWord{"--tensor-parallel-size", line_of(tp), 0});
        args.push_back(ArgWord{tp.Scalar(), line_of(tp), pos_of(tp)});
      }
      const int line = own.empty() ? line_of(kv.first) : own.front().line;
      args.insert(args.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
      push_model_command(*engine, path, std::move(args), line);
      any = true;
    }
    return any;
  }

  // Flag strings under keys named `*_flags` (SemiAnalysisAI/InferenceX@843c6254
  // benchmarks/multi_node/amd_utils/models_vllm.yaml: `<model>: {prefill_flags: "--tensor-parallel-size
  // 8 ...", decode_flags: "...", env: "K=V ..."}`, each passed to `vllm serve` by the role's script):
  // each string split as the shell splits it, the flags of the one engine that knows three in four
  // of them. The key holding the map is the model where the model catalog knows it by that name
  // (`Kimi-K2.5-MXFP4:` is an MLA model, not an unnamed one checked as MHA). True when one was read.
  bool flag_strings(const YAML::Node& map) {
    bool any = false;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar() || !ends_with(kv.first.Scalar(), "_flags") || !kv.second.IsScalar() ||
          !starts_with(ltrim(kv.second.Scalar()), "--"))
        continue;
      std::vector<ArgWord> argv = resolve_defaults(words_of(kv.second));
      const Launcher* engine = engine_of_flags(argv);
      if (!engine || argv.empty()) continue;
      const Launcher* launcher = launcher_of_engine(engine->engine);
      if (launcher && key_ && key_->IsScalar() && known_model(key_->Scalar())) {
        push_model_command(*launcher, *key_, std::move(argv), line_of(kv.second));
      } else {
        LaunchCommand cmd = launch_command(sink_, *engine, "flags", argv.front().line, argv);
        cmd.positional_model = false;
        sink_.found.push_back(std::move(cmd));
      }
      any = true;
    }
    return any;
  }

  // Whether the model catalog knows a model by this name (an id, an architecture or a family's
  // name pattern).
  static bool known_model(const std::string& name) {
    static const auto catalog = builtin_catalog();
    return catalog && !name.empty() && name.size() <= 256 && resolve_model_reference(**catalog, name).has_value();
  }

  static bool is_flag_list_key(const std::string& key) {
    return key == "extraArgs" || key == "extra_args" || key == "extraArguments" || key == "serverArgs" ||
           key == "server_args" || key == "engineArgs" || key == "launchArgs";
  }

  // A list of --flags (container args without a command, Helm values extraArgs) in a document
  // that names an engine's image or launcher: that engine's flags. True when read.
  // `owner` is the map holding the list: its own `image`, or its `engine` (kubeai's Model:
  // `engine: VLLM`, as substratusai/kubeai@7550a00f manifests/models/*.yaml write it), when it has
  // one, decides the engine; an `url: hf://ORG/NAME` beside an `engine` is the model.
  // A list whose map names no image is the engine's only when its options are, three in four or
  // more, flags of that engine: another program's args in the same document (an Envoy sidecar's
  // `proxy.args: [--service-node, ..., --concurrency, 8]`) are not.
  bool flag_list(const YAML::Node& node, const YAML::Node& owner) {
    if (!node.IsDefined() || !node.IsSequence() || node.size() == 0 || !node[0].IsScalar() ||
        !starts_with(node[0].Scalar(), "--"))
      return false;
    const YAML::Node image = owner["image"];
    std::string named;  // the image's repository, "" when the map names none
    if (image.IsDefined() && image.IsScalar()) named = image.Scalar();
    if (image.IsDefined() && image.IsMap() && image["repository"].IsDefined() && image["repository"].IsScalar())
      named = image["repository"].Scalar();
    // A map naming its engine (kubeai's Model: `spec: {engine: VLLM, url: hf://ORG/NAME, args: [...]}`).
    const Launcher* by_key = image.IsDefined() ? nullptr : engine_named(owner["engine"]);
    const Launcher* engine = image.IsDefined() ? engine_of_text(named + "\n")
                             : by_key         ? by_key
                                              : engine_of_text(std::string_view(file_.text).substr(doc_pos_));
    if (!engine) return false;
    std::vector<ArgWord> argv = resolve_defaults(words_of(node));
    if (!image.IsDefined() && !by_key && !mostly_flags_of(*engine, argv)) return false;
    // Its model, as a URL the map gives beside the flags (hf://ORG/NAME): the engine's --model.
    const YAML::Node url = owner["url"];
    if (by_key && url.IsDefined() && url.IsScalar() && starts_with(url.Scalar(), "hf://") && url.Scalar().size() > 5 &&
        std::none_of(argv.begin(), argv.end(), [](const ArgWord& w) { return starts_with(w.text, "--model"); })) {
      argv.insert(argv.begin(), ArgWord{url.Scalar().substr(5), line_of(url), pos_of(url)});
      argv.insert(argv.begin(), ArgWord{"--model", line_of(url), pos_of(url)});
    }
    LaunchCommand cmd = launch_command(sink_, *engine, "flags", argv.empty() ? line_of(node) : argv.front().line, argv);
    cmd.positional_model = false;  // bare flags: no launcher word, so no positional model
    sink_.found.push_back(std::move(cmd));
    return true;
  }

  // Whether three in four or more of the options among `argv` (words starting with '-', a value
  // after '=' left out) are flags of the launcher's grammar, as written or with '_' for '-' where
  // the grammar reads them so. Words the shell fills in are not counted; none counted: false.
  static bool mostly_flags_of(const Launcher& launcher, const std::vector<ArgWord>& argv) {
    auto profile = builtin_profile(launcher.engine);
    const Grammar* grammar = profile ? (*profile)->grammar(launcher.grammar) : nullptr;
    if (!grammar) return false;
    std::size_t options = 0, known = 0;
    for (const ArgWord& w : argv) {
      if (w.shape != WordShape::literal || w.text.size() < 2 || w.text.front() != '-' || w.text == "--") continue;
      if (std::isdigit(static_cast<unsigned char>(w.text[1])) || w.text[1] == '.') continue;  // a negative number
      std::string option = w.text.substr(0, w.text.find('='));
      ++options;
      if (grammar->underscore_dashes)
        for (std::size_t k = 2; k < option.size() && option[k] != '.'; ++k)
          if (option[k] == '_') option[k] = '-';
      if (grammar->dotted_keys && option.find('.') != npos) option = option.substr(0, option.find('.'));
      if (grammar->exact(option)) ++known;
    }
    return options > 0 && known * 4 >= options * 3;
  }

  // The launcher of the engine a scalar names, in any case ("VLLM", "sglang"); null for another.
  const Launcher* engine_named(const YAML::Node& value) const {
    return value.IsDefined() && value.IsScalar() ? engine_called(value.Scalar()) : nullptr;
  }
  const Launcher* engine_called(std::string_view name) const {
    const std::string engine = lower(name);
    for (const Launcher& l : *sink_.launchers)
      if (l.engine == engine) return &l;
    return nullptr;
  }

  // The first launcher whose engine the document names: an image ".../ENGINE:tag" or the launcher.
  const Launcher* engine_of_text(std::string_view doc) const {
    for (const Launcher& l : *sink_.launchers) {
      if (!l.module.empty() && doc.find(l.module) != npos) return &l;
      const std::string repo = "/" + l.engine;
      for (std::size_t at = doc.find(repo); at != npos; at = doc.find(repo, at + 1)) {
        const std::size_t end = at + repo.size();
        if (end >= doc.size() || doc[end] == ':' || doc[end] == '"' || doc[end] == '\'' || doc[end] == '\n' ||
            doc[end] == ' ' || doc[end] == '@')
          return &l;
      }
    }
    return nullptr;
  }

  static constexpr std::size_t kMaxEnvEntries = 4096;
  static constexpr std::size_t kMaxConfigMaps = 256;
  static constexpr std::size_t kMaxFilledBytes = 1u << 16;  // one word with its $(NAME)s filled in

  Source file_;
  int first_line_;
  bool reading_config_maps_ = false;  // the first pass of run(): ConfigMaps only
  std::map<std::string, Environment, std::less<>> config_maps_;  // name -> data, for envFrom
  bool compose_;
  bool helm_;  // a Helm template read as YAML (helm_as_yaml): its ${...} are template values
  Sink& sink_;
  const YAML::Node* doc_root_ = nullptr;  // the document being walked (set by load while it walks)
  const YAML::Node* key_ = nullptr;       // the key of the map being walked; null in a sequence
  static constexpr std::size_t kMaxMarkdownBlocks = 64;
  std::vector<std::pair<int, std::string>> markdown_;  // Markdown block scalars: first line, text
  std::vector<PhysicalLine> file_lines_;                // of file_.text, split when first needed
  std::size_t doc_pos_ = 0;  // where the document being walked starts in file_
  std::size_t doc_end_ = 0;  // and ends
  std::vector<std::pair<std::string, std::string>> env_;  // the env of the maps being walked
  int doc_line_ = 0;         // and its line, relative to first_line_
};
#endif

}  // namespace

void scan_yaml(std::string_view text, int first_line, InputFormat format, bool report, Sink& sink) {
#if ATTNSEL_LAUNCH_YAML
  const bool compose = format == InputFormat::compose || (format != InputFormat::kubernetes &&
                                                          format != InputFormat::helm && yaml_looks_like_compose(text));
  YamlScanner(text, first_line, compose, format == InputFormat::helm, sink).run(report);
#else
  (void)text;
  (void)first_line;
  (void)format;
  if (report && !sink.fatal) {
    sink.fatal = Error{ErrorCode::invalid_argument,
                       "this build of attnsel has no YAML support (it was built without yaml-cpp); "
                       "compose and Kubernetes files cannot be checked",
                       sink.file, {}, {}};
  }
#endif
}

namespace {

// A line that is only a template action: its text between {{ and }}, trim markers and blanks
// removed; nullopt for any other line.
std::optional<std::string_view> action_of(std::string_view line) {
  std::string_view t = trim(line);
  if (!starts_with(t, "{{") || !ends_with(t, "}}") || t.find("}}") != t.size() - 2) return std::nullopt;
  t = t.substr(2, t.size() - 4);
  while (!t.empty() && (t.front() == '-' || is_blank(t.front()))) t.remove_prefix(1);
  while (!t.empty() && (t.back() == '-' || is_blank(t.back()))) t.remove_suffix(1);
  return t;
}

std::string_view first_word(std::string_view t) { return t.substr(0, t.find_first_of(" \t(")); }

// The if/else blocks of a Helm template, each written on lines of their own: how many branches
// each has and the line where each branch after the first begins. A block's lines are read one
// branch at a time (each pass takes one branch of every block): both branches of
// `{{ if }} command: [...] {{ else }} command: [...] {{ end }}` are judged, and their keys never
// meet as duplicates.
class HelmBranches {
 public:
  explicit HelmBranches(const std::vector<PhysicalLine>& lines) : lines_(lines) {
    std::vector<int> open;  // the blocks enclosing the line: an if's id, or -1 for range/with/define
    for (std::size_t k = 0; k < lines.size(); ++k) {
      const std::optional<std::string_view> a = action_of(lines[k].text);
      if (!a) continue;
      const std::string_view w = first_word(*a);
      if (w == "if") {
        open.push_back(static_cast<int>(branch_lines_.size()));
        branch_lines_.emplace_back();
      } else if (w == "range" || w == "with" || w == "define" || w == "block") {
        open.push_back(-1);
      } else if (w == "else" && !open.empty() && open.back() >= 0) {
        auto& starts = branch_lines_[static_cast<std::size_t>(open.back())];
        if (starts.size() < kMaxBranches) starts.push_back(static_cast<int>(k) + 1);
      } else if (w == "end" && !open.empty()) {
        open.pop_back();
      }
    }
    for (const auto& starts : branch_lines_) passes_ = std::max(passes_, starts.size() + 1);
  }

  // How many readings the template needs: the most branches of one block (1 without else).
  std::size_t passes() const { return passes_; }

  // Which lines pass `pass` leaves out: those of the branches it does not take.
  std::vector<bool> left_out(std::size_t pass) const {
    std::vector<bool> out(lines_.size(), false);
    struct Frame {
      int block;
      std::size_t branch;
    };
    std::vector<Frame> open;
    std::size_t next_block = 0;
    std::size_t off = 0;  // how many of the open blocks are on a branch this pass does not take
    auto is_off = [&](const Frame& f) { return f.block >= 0 && f.branch != taken(static_cast<std::size_t>(f.block), pass); };
    for (std::size_t k = 0; k < lines_.size(); ++k) {
      const std::optional<std::string_view> a = action_of(lines_[k].text);
      if (!a) {
        out[k] = off > 0;
        continue;
      }
      const std::string_view w = first_word(*a);
      if (w == "if" || w == "range" || w == "with" || w == "define" || w == "block") {
        open.push_back(Frame{w == "if" ? static_cast<int>(next_block++) : -1, 0});
        off += is_off(open.back()) ? 1 : 0;
      } else if (w == "else" && !open.empty() && open.back().block >= 0) {
        off -= is_off(open.back()) ? 1 : 0;
        ++open.back().branch;
        off += is_off(open.back()) ? 1 : 0;
      } else if (w == "end" && !open.empty()) {
        off -= is_off(open.back()) ? 1 : 0;
        open.pop_back();
      }
    }
    return out;
  }

  // The branches after the first that pass `pass` takes, by the line their {{ else }} is on, for
  // LaunchCommand::branch ("... where the template's {{ else }} at line 13 is taken"); "" for pass 0.
  std::string note(std::size_t pass) const {
    std::string lines;
    std::size_t n = 0;
    for (std::size_t b = 0; b < branch_lines_.size(); ++b) {
      const std::size_t t = taken(b, pass);
      if (t == 0) continue;
      if (++n > 4) {
        lines += ", ...";
        break;
      }
      lines += (lines.empty() ? "" : ", ") + std::to_string(branch_lines_[b][t - 1]);
    }
    if (lines.empty()) return {};
    return n == 1 ? "the template's {{ else }} at line " + lines + " is taken"
                  : "the template's {{ else }} branches at lines " + lines + " are taken";
  }

 private:
  static constexpr std::size_t kMaxBranches = 8;
  // The branch of block `b` that pass `pass` takes: that one, or the block's last when it has fewer.
  std::size_t taken(std::size_t b, std::size_t pass) const { return std::min(pass, branch_lines_[b].size()); }

  const std::vector<PhysicalLine>& lines_;
  std::vector<std::vector<int>> branch_lines_;  // per if block: the lines its else branches begin on
  std::size_t passes_ = 1;
};

}  // namespace

// {{ ... }} made YAML-safe and opaque: a line that is only a template action is blanked, an
// inline one becomes ${...} (an unknown value to the shell reader); `left_out` lines are blanked
// too. Lines stay where they were.
std::string helm_as_yaml(const std::vector<PhysicalLine>& lines, const std::vector<bool>& left_out) {
  std::string out;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string_view line = lines[k].text;
    if ((k < left_out.size() && left_out[k]) || action_of(line)) {
      out += "\n";
      continue;
    }
    std::string_view rest = line;
    while (!rest.empty()) {
      const std::size_t open = rest.find("{{");
      const std::size_t close = open == npos ? npos : rest.find("}}", open + 2);
      if (close == npos) {
        out.append(rest);
        break;
      }
      out.append(rest.substr(0, open));
      out += "${";
      for (char c : trim(rest.substr(open + 2, close - open - 2))) {
        out += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' ? c : '_';
      }
      out += "}";
      rest = rest.substr(close + 2);
    }
    out += "\n";
  }
  return out;
}

// A Helm template, read once per branch of its if/else blocks (HelmBranches): a command or
// finding read in an earlier pass is not repeated; one first read in a later pass names its branch.
void scan_helm(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  const HelmBranches branches(lines);
  for (std::size_t pass = 0; pass < branches.passes(); ++pass) {
    const std::size_t found = sink.found.size(), skipped = sink.skipped.size();
    scan_yaml(helm_as_yaml(lines, branches.left_out(pass)), 1, InputFormat::helm, /*report=*/true, sink);
    if (pass == 0) continue;
    auto seen_cmd = [&](const LaunchCommand& c) {
      return std::any_of(sink.found.begin(), sink.found.begin() + static_cast<std::ptrdiff_t>(found),
                         [&](const LaunchCommand& o) { return o.line == c.line && o.args == c.args && o.launcher == c.launcher; });
    };
    sink.found.erase(std::remove_if(sink.found.begin() + static_cast<std::ptrdiff_t>(found), sink.found.end(), seen_cmd),
                     sink.found.end());
    for (std::size_t k = found; k < sink.found.size(); ++k) sink.found[k].branch = branches.note(pass);
    auto seen_error = [&](const Error& e) {
      return std::any_of(sink.skipped.begin(), sink.skipped.begin() + static_cast<std::ptrdiff_t>(skipped),
                         [&](const Error& o) { return o.where == e.where && o.message == e.message; });
    };
    sink.skipped.erase(std::remove_if(sink.skipped.begin() + static_cast<std::ptrdiff_t>(skipped), sink.skipped.end(), seen_error),
                       sink.skipped.end());
  }
}

}  // namespace launch_detail

bool yaml_input_supported() { return ATTNSEL_LAUNCH_YAML != 0; }

}  // namespace attnsel
