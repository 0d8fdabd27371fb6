// `attnsel completion bash|zsh|fish` and `attnsel man`: shell completions and the man page, both
// generated from the CLI definition itself (subcommands, options, their help and choices) and from
// the data (GPU names, model ids, engines and releases, the engine's launch flags and their values).
// Nothing here is written by hand twice: a new option or GPU appears in both on the next build.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "attnsel/catalog.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/version.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct OptionSpec {
  std::vector<std::string> names;  // "--gpu", "-h"
  std::string help;
  bool takes_value = false;
  std::vector<std::string> values;  // what to complete after it; empty with takes_value: anything (files)
  bool files = false;               // complete file names after it
};

struct CommandSpec {
  std::string path;  // "" for the root, "matrix lint"
  std::string name;
  std::string help;
  std::vector<OptionSpec> options;
  std::vector<std::string> subcommands;
  std::vector<OptionSpec> positionals;        // "FROM", "INPUTS..." with their help
  bool positional_files = false;             // takes FILE arguments (check)
  std::vector<std::string> positional_values;  // or one of these words (completion's shell)
};

// The choices of an option with a CLI::IsMember check: its description is "{a,b,c}".
std::vector<std::string> member_choices(CLI::Option* o) {
  try {
    const std::string desc = o->get_validator()->get_description();
    if (desc.size() < 2 || desc.front() != '{' || desc.back() != '}') return {};
    std::vector<std::string> out;
    for (auto& v : CLI::detail::split(desc.substr(1, desc.size() - 2), ',')) out.push_back(CLI::detail::trim_copy(v));
    return out;
  } catch (const CLI::OptionNotFound&) {
    return {};
  }
}

// What the data says an option takes.
struct DataValues {
  std::vector<std::string> gpus, models, engines, releases;
  std::vector<OptionSpec> engine_flags;  // the default engine's launch flags, for select and explain
};

DataValues data_values() {
  DataValues d;
  if (auto catalog = builtin_catalog()) {
    const Catalog& c = **catalog;
    for (const GpuArch& a : c.architectures()) d.gpus.push_back(a.arch);
    for (const GpuModel& g : c.gpus()) d.gpus.push_back(g.name);
    d.models = {"mha", "mla", "gdn", "dsa"};
    for (const std::string& id : c.model_ids()) d.models.push_back(id);
  }
  if (auto gens = builtin_generations()) {
    std::set<std::string> seen;
    for (const MatrixGeneration& g : *gens) {
      if (seen.insert(g.engine).second) d.engines.push_back(g.engine);
      d.releases.push_back(to_string(g.since));
    }
  }
  if (auto profile = builtin_profile("sglang")) {
    if (const Grammar* g = (*profile)->grammar("")) {
      for (const GrammarFlag& f : g->flags) {
        OptionSpec o;
        for (const std::string& s : f.names)
          if (s.rfind("--", 0) == 0) o.names.push_back(s);
        if (o.names.empty() || f.removed || f.action == ArgAction::help) continue;
        o.help = "the engine's flag";
        o.takes_value = f.takes_values();
        o.values = f.choices;
        d.engine_flags.push_back(std::move(o));
      }
    }
  }
  return d;
}

void collect(CLI::App* app, const std::string& path, const DataValues& data, std::vector<CommandSpec>& out) {
  CommandSpec c;
  c.path = path;
  c.name = app->get_name();
  c.help = app->get_description();
  for (CLI::Option* o : app->get_options()) {
    if (o->get_positional()) {  // completed as words, else files
      c.positional_values = member_choices(o);
      c.positional_files = c.positional_values.empty();
      std::string name = o->get_name();
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
      c.positionals.push_back(OptionSpec{{name + (o->get_expected_max() > 1 ? "..." : "")}, o->get_description(), true, {}, false});
      continue;
    }
    OptionSpec s;
    for (const auto& n : o->get_lnames()) s.names.push_back("--" + n);
    for (const auto& n : o->get_snames()) s.names.push_back("-" + n);
    s.help = o->get_description();
    s.takes_value = o->get_expected_max() > 0;
    s.values = member_choices(o);
    const std::string& first = s.names.front();
    if (first == "--gpu") s.values = data.gpus;
    else if (first == "--model") s.values = data.models;
    else if (first == "--engine") s.values = data.engines;
    else if (first == "--engine-version") s.values = data.releases;
    else if (first == "--matrix" || first == "--stdin-filename") s.files = true;
    c.options.push_back(std::move(s));
  }
  // The root command, select and explain read the engine's launch flags too.
  if (path.empty() || path == "select" || path == "explain")
    c.options.insert(c.options.end(), data.engine_flags.begin(), data.engine_flags.end());
  std::vector<CLI::App*> subs = app->get_subcommands([](CLI::App*) { return true; });
  for (CLI::App* sub : subs) c.subcommands.push_back(sub->get_name());
  out.push_back(c);
  for (CLI::App* sub : subs) collect(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), data, out);
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    std::string q;
    for (char ch : w) {
      if (ch == '\'') q += "'\\''";
      else q += ch;
    }
    out += (out.empty() ? "'" : " '") + q + "'";
  }
  return out;
}

std::string bash_script(const std::vector<CommandSpec>& commands) {
  std::string out =
      "# bash completion for attnsel, generated by `attnsel completion bash` (attnsel " + std::string(version()) +
      ").\n# Install: attnsel completion bash > /etc/bash_completion.d/attnsel   (or source it from ~/.bashrc)\n\n"
      "_attnsel() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path='' i w\n"
      "  # The subcommand path so far: words that name a subcommand of the path before them.\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${COMP_WORDS[i]}\n"
      "    [[ $w == -- ]] && return 0  # a launch command to check: the shell's own completion is not ours\n"
      "    case \"${path}|${w}\" in\n";
  for (const CommandSpec& c : commands)
    for (const std::string& sub : c.subcommands)
      out += fmt::format("      '{}|{}') path='{}' ;;\n", c.path, sub, c.path.empty() ? sub : c.path + " " + sub);
  out += "    esac\n  done\n  local IFS=$'\\n' opts='' subs='' values='' files=0\n  case \"$path\" in\n";
  for (const CommandSpec& c : commands) {
    std::vector<std::string> words;
    for (const auto& o : c.options) words.insert(words.end(), o.names.begin(), o.names.end());
    out += fmt::format("    '{}')\n      opts=$(printf '%s\\n' {})\n", c.path, shell_words(words));
    if (!c.subcommands.empty()) out += fmt::format("      subs=$(printf '%s\\n' {})\n", shell_words(c.subcommands));
    out += "      case \"$prev\" in\n";
    for (const auto& o : c.options) {
      if (!o.takes_value) continue;
      std::string names;
      for (const auto& n : o.names) names += (names.empty() ? "" : "|") + n;
      if (o.files) out += fmt::format("        {}) files=1 ;;\n", names);
      else if (!o.values.empty()) out += fmt::format("        {}) values=$(printf '%s\\n' {}) ;;\n", names, shell_words(o.values));
      else out += fmt::format("        {}) return 0 ;;\n", names);
    }
    out += "      esac\n";
    if (c.positional_files) out += "      [[ $cur != -* && -z $values ]] && files=1\n";
    if (!c.positional_values.empty())
      out += fmt::format("      [[ $cur != -* && -z $values ]] && values=$(printf '%s\\n' {})\n", shell_words(c.positional_values));
    out += "      ;;\n";
  }
  out +=
      "  esac\n"
      "  if ((files)); then COMPREPLY=($(compgen -f -- \"$cur\")); return 0; fi\n"
      "  if [[ -n $values ]]; then\n"
      "    # A comma-separated list (--gpu sm90,B200): the last item is completed, the ones before kept; a value\n"
      "    # with a space (RTX 5090) is inserted escaped, one word.\n"
      "    local head='' last=$cur v\n"
      "    if [[ $cur == *,* ]]; then head=${cur%,*},; last=${cur##*,}; fi\n"
      "    COMPREPLY=()\n"
      "    for v in $(compgen -W \"$values\" -- \"$last\"); do COMPREPLY+=(\"$head$(printf '%q' \"$v\")\"); done\n"
      "    return 0\n"
      "  fi\n"
      "  # Options once a dash is typed (the engine's own flags are hundreds); subcommands before.\n"
      "  if [[ $cur == -* || -z $subs ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "  else COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\")); fi\n"
      "}\n"
      "complete -F _attnsel attnsel\n";
  return out;
}

std::string zsh_quote(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return "'" + out + "'";
}

std::string zsh_script(const std::vector<CommandSpec>& commands) {
  std::string out = "#compdef attnsel\n# zsh completion for attnsel, generated by `attnsel completion zsh` (attnsel " +
                    std::string(version()) +
                    ").\n# Install: attnsel completion zsh > \"${fpath[1]}/_attnsel\"   (or: source <(attnsel completion zsh))\n\n"
                    "_attnsel() {\n"
                    "  local path='' i w prev=${words[CURRENT-1]}\n"
                    "  for ((i = 2; i < CURRENT; i++)); do\n"
                    "    w=${words[i]}\n"
                    "    [[ $w == -- ]] && { _normal; return; }\n"
                    "    case \"${path}|${w}\" in\n";
  for (const CommandSpec& c : commands)
    for (const std::string& sub : c.subcommands)
      out += fmt::format("      '{}|{}') path='{}' ;;\n", c.path, sub, c.path.empty() ? sub : c.path + " " + sub);
  out += "    esac\n  done\n  case \"$path\" in\n";
  for (const CommandSpec& c : commands) {
    out += fmt::format("    '{}')\n      case \"$prev\" in\n", c.path);
    for (const auto& o : c.options) {
      if (!o.takes_value) continue;
      std::string names;
      for (const auto& n : o.names) names += (names.empty() ? "" : "|") + n;
      if (o.files) out += fmt::format("        {}) _files; return ;;\n", names);
      else if (!o.values.empty()) {
        std::string vals;
        for (const auto& v : o.values) vals += " " + zsh_quote(v);
        out += fmt::format("        {}) compadd --{}; return ;;\n", names, vals);
      } else {
        out += fmt::format("        {}) _message {}; return ;;\n", names, zsh_quote(o.help.empty() ? "a value" : o.help));
      }
    }
    out += "      esac\n";
    std::string described;
    for (const auto& o : c.options)
      for (const auto& n : o.names) described += " " + zsh_quote(n + ":" + o.help);
    std::string subs;
    for (const auto& s : c.subcommands) subs += " " + zsh_quote(s);
    for (const auto& s : c.positional_values) subs += " " + zsh_quote(s);
    if (!subs.empty()) out += fmt::format("      [[ $PREFIX != -* ]] && compadd --{}\n", subs);
    if (c.positional_files) out += "      [[ $PREFIX != -* ]] && _files\n";
    out += fmt::format("      local -a opts=({})\n      _describe -t options option opts\n      ;;\n", described);
  }
  out += "  esac\n}\n\nif [[ $zsh_eval_context[-1] == loadautofunc ]]; then _attnsel \"$@\"; else compdef _attnsel attnsel; fi\n";
  return out;
}

std::string fish_quote(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out += '\\';
    out += ch;
  }
  return "'" + out + "'";
}

std::string fish_script(const std::vector<CommandSpec>& commands) {
  std::string out = "# fish completion for attnsel, generated by `attnsel completion fish` (attnsel " + std::string(version()) +
                    ").\n# Install: attnsel completion fish > ~/.config/fish/completions/attnsel.fish\n\n"
                    "complete -c attnsel -f\n"
                    "# The subcommand path of the command line so far, as `attnsel completion` names it.\n"
                    "function __attnsel_path\n"
                    "  set -l path ''\n"
                    "  for w in (commandline -opc)[2..-1]\n"
                    "    switch \"$path|$w\"\n";
  for (const CommandSpec& c : commands)
    for (const std::string& sub : c.subcommands)
      out += fmt::format("      case {}\n        set path {}\n", fish_quote(c.path + "|" + sub),
                         fish_quote(c.path.empty() ? sub : c.path + " " + sub));
  out += "    end\n  end\n  echo $path\nend\n\n";
  for (const CommandSpec& c : commands) {
    const std::string cond = fmt::format("-n {}", fish_quote("test (__attnsel_path) = " + fish_quote(c.path)));
    for (const auto& s : c.subcommands) out += fmt::format("complete -c attnsel {} -a {}\n", cond, fish_quote(s));
    for (const auto& s : c.positional_values) out += fmt::format("complete -c attnsel {} -a {}\n", cond, fish_quote(s));
    for (const auto& o : c.options) {
      std::string names;
      for (const auto& n : o.names) names += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
      std::string line = fmt::format("complete -c attnsel {}{}", cond, names);
      if (o.takes_value) line += o.files ? " -r -F" : " -x";
      if (!o.values.empty()) {
        std::string vals;
        for (const auto& v : o.values) vals += (vals.empty() ? "" : " ") + v;
        line += " -a " + fish_quote(vals);
      }
      if (!o.help.empty()) line += " -d " + fish_quote(o.help.substr(0, 80));
      out += line + "\n";
    }
    if (c.positional_files) out += fmt::format("complete -c attnsel {} -F\n", cond);
  }
  return out;
}

// roff text: a leading dot or quote would be a request, a backslash an escape.
std::string roff(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\e";
    else if (ch == '-') out += "\\-";
    else out += ch;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string man_page(const std::vector<CommandSpec>& commands, const std::string& footer) {
  std::string out = fmt::format(".TH ATTNSEL 1 \"\" \"attnsel {}\" \"User Commands\"\n", version());
  out += ".SH NAME\nattnsel \\- pick and check attention backends for SGLang and vLLM before the model loads\n";
  out += ".SH SYNOPSIS\n";
  for (const CommandSpec& c : commands) {
    std::string args;
    for (const auto& p : c.positionals) args += fmt::format(" \\fI{}\\fR", roff(p.names.front()));
    if (c.path.empty() || c.path == "select" || c.path == "explain") args += " [\\fIENGINE FLAGS\\fR]";
    if (c.path == "check") args += " | \\-\\- \\fICOMMAND\\fR...";
    out += fmt::format(".B attnsel{}\n[\\fIOPTIONS\\fR]{}\n.br\n", c.path.empty() ? "" : " " + roff(c.path), args);
  }
  out += ".SH DESCRIPTION\n"
         "attnsel knows which attention backend runs on which GPU, CUDA version, model kind, KV cache dtype, "
         "speculative top\\-k and page size, for each engine release, from a declarative capability matrix where every "
         "fact cites its upstream source. It plans the backends and the page size a launch will really use, with every "
         "rejected alternative and the rule that rejected it, and checks launch commands in scripts, Dockerfiles, "
         "manifests and docs before anything reaches a GPU.\n";
  out += ".SH COMMANDS\n";
  for (const CommandSpec& c : commands) {
    out += fmt::format(".SS \"attnsel{}\"\n{}\n", c.path.empty() ? "" : " " + roff(c.path),
                       roff(c.help.empty() ? "plan attention backends and the page size (the default command)" : c.help));
    for (const auto& p : c.positionals) out += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff(p.names.front()), roff(p.help));
    for (const auto& o : c.options) {
      if (o.help == "the engine's flag") continue;  // the engine's own flags: see ENGINE FLAGS
      std::string names;
      for (const auto& n : o.names) names += (names.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff(n));
      out += fmt::format(".TP\n{}{}\n{}\n", names, o.takes_value ? " \\fIVALUE\\fR" : "", roff(o.help));
      if (!o.values.empty() && o.values.size() <= 12) {
        std::string vals;
        for (const auto& v : o.values) vals += (vals.empty() ? "" : ", ") + v;
        out += fmt::format("One of: {}.\n", roff(vals));
      }
    }
  }
  out += ".SH ENGINE FLAGS\nEvery other option of \\fBattnsel\\fR, \\fBselect\\fR and \\fBexplain\\fR is the engine's own "
         "launch flag (\\-\\-attention\\-backend, \\-\\-page\\-size, \\-\\-kv\\-cache\\-dtype, \\-\\-speculative\\-eagle\\-topk "
         "...), read with the engine's launch grammar as the engine would read it: paste a launch command's flags.\n";
  out += ".SH OUTPUT\n\\fB\\-\\-format json\\fR (or \\fB\\-\\-json\\fR) prints one JSON object with \\fIschema_version\\fR, "
         "\\fIattnsel_version\\fR and \\fIkind\\fR first, on every subcommand, usage errors included; the schemas are in "
         "docs/schema/ of the source. \\fB\\-\\-color auto|always|never\\fR; \\fBNO_COLOR\\fR and \\fBTERM=dumb\\fR turn colour off.\n";
  out += ".SH EXIT STATUS\n" + roff(footer) + "\n";
  out += ".SH ENVIRONMENT\n"
         ".TP\n\\fBATTNSEL_GPU\\fR\nthe GPU(s) when \\-\\-gpu is not given\n"
         ".TP\n\\fBATTNSEL_MATRIX\\fR\na matrix file instead of the built\\-in one\n"
         ".TP\n\\fBNO_COLOR\\fR\nset and not empty: no colour\n"
         ".TP\n\\fBGITHUB_STEP_SUMMARY\\fR\nwith check \\-\\-format github, a Markdown report is appended to this file\n";
  // Examples from the data: the default engine's first launcher and a backend of its matrix.
  const std::string launcher = launcher_example();
  out += ".SH EXAMPLES\n.nf\n"
         "attnsel \\-\\-gpu sm90 \\-\\-model mla\n"
         "attnsel explain \\-\\-gpu B200 \\-\\-model deepseek\\-ai/DeepSeek\\-V3\n"
         "attnsel \\-\\-gpu H100 \\-\\-model mha \\-\\-format json\n"
         "attnsel check \\-\\-gpu sm90,sm100 deploy/ Dockerfile\n" +
         fmt::format("attnsel check \\-\\-gpu H100 \\-\\- {} ...\n", roff(launcher)) +
         "attnsel matrix diff 0.5.3 latest \\-\\-exit\\-code\n"
         ".fi\n";
  out += ".SH SEE ALSO\n\\fBnvidia\\-smi\\fR(1); https://github.com/sgl\\-project/sglang\n";
  return out;
}

}  // namespace

Command add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* completion = app.add_subcommand(
      "completion", "print a shell completion script (bash, zsh or fish), generated from the options and the data");
  completion->add_option("shell", *shell, "bash|zsh|fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->footer("Exit codes: 0 printed, 2 bad usage (a shell other than bash, zsh and fish).");
  CLI::App* man = app.add_subcommand("man", "print the man page (roff): attnsel man | man -l -");
  man->footer("Exit codes: 0 printed, 2 bad usage.");
  return [&app, completion, man, shell]() -> std::optional<int> {
    if (!*completion && !*man) return std::nullopt;
    define_all_options();
    std::vector<CommandSpec> commands;
    collect(&app, "", data_values(), commands);
    if (*man) std::cout << man_page(commands, kSelectExitCodes);
    else if (*shell == "bash") std::cout << bash_script(commands);
    else if (*shell == "zsh") std::cout << zsh_script(commands);
    else std::cout << fish_script(commands);
    return kOk;
  };
}

}  // namespace attnsel::cli
