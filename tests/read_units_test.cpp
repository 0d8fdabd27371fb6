// Procfiles, systemd units and Jinja templates (src/check/read_units.cpp): each case a text and the
// commands it must give (line, arguments, and which arguments are only known when it runs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attnsel/launch.hpp"

namespace attnsel {
namespace {

struct Expected {
  int line;
  std::vector<std::string> args;
  std::vector<std::size_t> unknown = {};  // indices of args whose value the environment gives
};

struct Case {
  const char* name;
  const char* file;
  const char* text;
  std::vector<Expected> commands;
  std::size_t skipped = 0;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"Procfile: one command a process, the name before the colon", "Procfile",
       "# comment\nweb: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --port $PORT\n"
       "worker: env X=1 python3 -m sglang.launch_server --tp 2\nnot a process line\n",
       {{2, {"--model-path", "Qwen/Qwen3-8B", "--port", "$PORT"}, {3}}, {3, {"--tp", "2"}}}},
      {"Procfile: a line that does not tokenise is one finding", "Procfile",
       "web: python3 -m sglang.launch_server --model-path 'x\nw2: python3 -m sglang.launch_server --tp 1\n",
       {{2, {"--tp", "1"}}},
       1},
      {"systemd: quotes, C escapes, ${VAR} inside a word and $VAR split as a whole word", "a.service",
       "[Service]\nEnvironment=\"MODEL=Qwen/Qwen3-8B\" ARGS=\"--tp 2 --port 1\"\nEnvironment=B=fa3\n"
       "ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path=${MODEL} \"--served-model-name\" 'a b' "
       "--attention-backend \"${B}\" $ARGS --x $$HOME --y \\x41\n",
       {{4,
         {"--model-path=Qwen/Qwen3-8B", "--served-model-name", "a b", "--attention-backend", "fa3", "--tp", "2", "--port", "1",
          "--x", "$HOME", "--y", "A"},
         {0, 4, 5, 6, 7, 8}}}},
      {"systemd: backslash continuations with comment lines between, and unknown variables", "b.service",
       "[Unit]\nDescription=x\n[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server \\\n"
       "# a comment inside\n  --model-path ${MODEL_DIR} \\\n  $EXTRA_ARGS \\\n  --tp 8\n",
       {{4, {"--model-path", "${MODEL_DIR}", "${EXTRA_ARGS}", "--tp", "8"}, {1, 2}}}},
      {"systemd: prefixes @ - + !, specifiers, ; between commands, an empty Environment= resets", "c@.service",
       "[Service]\nEnvironment=P=1\nEnvironment=\nExecStartPre=-/bin/true ; /usr/bin/python3 -m sglang.launch_server --tp 1\n"
       "ExecStart=@/usr/bin/python3 python3 -m sglang.launch_server --port %i --name %%i --p ${P}\n"
       "ExecStartPost=+/bin/bash -c 'M=Qwen/Qwen3-8B; python3 -m sglang.launch_server --model-path $M'\n",
       {{4, {"--tp", "1"}}, {5, {"--port", "${%i}", "--name", "%i", "--p", "${P}"}, {1, 5}}, {6, {"--model-path", "Qwen/Qwen3-8B"}}}},
      {"systemd: keys outside [Service] and other keys are not commands", "d.service",
       "[Unit]\nExecStart=/usr/bin/python3 -m sglang.launch_server --tp 1\n[Service]\nUser=python3 -m sglang.launch_server\n",
       {}},
      {"systemd: an unterminated quote in a command that names a launcher is one finding", "e.service",
       "[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path 'x\n", {}, 1},
      {"Jinja shell template: statements and comments blanked, values unknown, default() filters judged",
       "serve.sh.j2",
       "#!/bin/bash\n{# a comment #}\n{% if x %}\nexport A={{ a }}\n{% endif %}\npython3 -m sglang.launch_server --model-path "
       "{{ model_path }} --tp {{ tp | default(\"8\") }} --attention-backend {{ b|default('fa3') }}\n",
       {{6, {"--model-path", "${model_path}", "--tp", "8", "--attention-backend", "fa3"}, {1, 3, 5}}}},
      {"Jinja YAML template: read as Helm YAML, {% %} lines blanked", "deploy.yaml.j2",
       "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n"
       "    args:\n{% for a in args %}\n    - \"{{ a }}\"\n{% endfor %}\n    - --tp\n    - \"2\"\n",
       {{6, {"${a}", "--tp", "2"}, {0}}}},
  };
  return kCases;
}

TEST(ReadUnits, Cases) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const LaunchScan scan = scan_launch_input(c.text, c.file);
    ASSERT_EQ(scan.commands.size(), c.commands.size());
    for (std::size_t k = 0; k < c.commands.size(); ++k) {
      const LaunchCommand& cmd = scan.commands[k];
      EXPECT_EQ(cmd.line, c.commands[k].line) << k;
      EXPECT_EQ(cmd.args, c.commands[k].args) << k;
      std::vector<std::size_t> unknown;
      for (std::size_t a = 0; a < cmd.args.size(); ++a)
        if (cmd.shape(a) != WordShape::literal) unknown.push_back(a);
      EXPECT_EQ(unknown, c.commands[k].unknown) << k;
    }
    EXPECT_EQ(scan.skipped.size(), c.skipped);
  }
}

// The unit's Environment= values that an engine reads reach the command's environment.
TEST(ReadUnits, EngineVariablesFromEnvironmentSettings) {
  const LaunchScan scan = scan_launch_input(
      "[Service]\nEnvironment=VLLM_ATTENTION_BACKEND=FLASHINFER\nExecStart=/usr/bin/vllm serve Qwen/Qwen3-8B\n",
      "vllm.service");
  ASSERT_EQ(scan.commands.size(), 1u);
  ASSERT_EQ(scan.commands[0].environment.size(), 1u);
  EXPECT_EQ(scan.commands[0].environment[0].name, "VLLM_ATTENTION_BACKEND");
  EXPECT_EQ(scan.commands[0].environment[0].value, "FLASHINFER");
}

}  // namespace
}  // namespace attnsel
