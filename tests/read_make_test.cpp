// Makefiles and justfiles (src/check/read_make.cpp): recipe lines found with make's and just's
// own substitution, each case a text and the commands it must give (line and arguments).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attnsel/launch.hpp"

namespace attnsel {
namespace {

struct Expected {
  int line;
  std::vector<std::string> args;
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
      {"variables of every flavour, $$ and @/- prefixes", "Makefile",
       "A = $(B)\nB = fa3\nC := $(A)\nD ?= x\nD ?= y\nE = 1\nE += 2\nexport F = 7\n\nrun:\n"
       "\t@-python3 -m sglang.launch_server --attention-backend $(A) --x $(C) --d $(D) --e \"$(E)\" --f $$F --g ${B}\n",
       {{11, {"--attention-backend", "fa3", "--x", "fa3", "--d", "x", "--e", "1 2", "--f", "7", "--g", "fa3"}}}},
      {"continuations keep their lines; a variable the file does not set is the environment's", "GNUmakefile",
       "serve:\n\tpython3 -m sglang.launch_server \\\n\t\t--model-path $(MODEL) \\\n\t\t--tp 8\n",
       {{2, {"--model-path", "${MODEL}", "--tp", "8"}}}},
      {"$(or VAR,default) is the default the environment may override; $(if) and $(shell) are unknown", "Makefile",
       "serve:\n\tpython3 -m sglang.launch_server --model-path $(or $(MODEL_PATH),Qwen/Qwen3-8B) $(if $(TP),--tp "
       "$(TP),) --port $(shell echo 1)\n",
       {{2, {"--model-path", "Qwen/Qwen3-8B", "${if}", "--port", "$(echo 1)"}}}},
      {"target-specific variables and automatic ones", "Makefile",
       "M = a\nqwen: M = Qwen/Qwen3-8B\nqwen: weights\n\tpython3 -m sglang.launch_server --model-path $(M) --served-model-name "
       "$@ --x $<\nother:\n\tpython3 -m sglang.launch_server --model-path $(M)\n",
       {{4, {"--model-path", "Qwen/Qwen3-8B", "--served-model-name", "qwen", "--x", "weights"}},
        {6, {"--model-path", "a"}}}},
      {"define ... endef, conditionals and comments leave the rule open; a recipe after ;", "Makefile",
       "define ARGS\n--tp 8\nendef\nifeq ($(X),1)\nB = fa3\nelse\nB = triton\nendif\n# a comment\n"
       "run: ; python3 -m sglang.launch_server --attention-backend $(B) # trailing\nrun2:\n\n# note\n"
       "ifdef X\n\tpython3 -m sglang.launch_server $(ARGS)\nendif\n",
       {{10, {"--attention-backend", "triton"}}, {15, {"--tp", "8"}}}},
      {".RECIPEPREFIX and .ONESHELL: one script, its variables carry across lines", "rules.mk",
       ".RECIPEPREFIX = >\n.ONESHELL:\nrun:\n> MODEL=Qwen/Qwen3-8B\n> python3 -m sglang.launch_server --model-path "
       "$$MODEL\n",
       {{5, {"--model-path", "Qwen/Qwen3-8B"}}}},
      {"each recipe line is its own shell: a variable set on one line is not seen on the next", "Makefile",
       "run:\n\tMODEL=Qwen/Qwen3-8B\n\tpython3 -m sglang.launch_server --model-path $$MODEL\n",
       {{3, {"--model-path", "$MODEL"}}}},
      {"an expansion bomb is one finding, never 2^40 bytes", "Makefile",
       "A0 = xxxxxxxxxxxxxxxx\nA1 = $(A0)$(A0)\nA2 = $(A1)$(A1)\nA3 = $(A2)$(A2)\nA4 = $(A3)$(A3)\nA5 = $(A4)$(A4)\n"
       "A6 = $(A5)$(A5)\nA7 = $(A6)$(A6)\nA8 = $(A7)$(A7)\nA9 = $(A8)$(A8)\nB0 = $(A9)$(A9)\nB1 = $(B0)$(B0)\n"
       "B2 = $(B1)$(B1)\nB3 = $(B2)$(B2)\nB4 = $(B3)$(B3)\nB5 = $(B4)$(B4)\nB6 = $(B5)$(B5)\nB7 = $(B6)$(B6)\n"
       "B8 = $(B7)$(B7)\nB9 = $(B8)$(B8)\nC0 = $(B9)$(B9)\nC1 = $(C0)$(C0)\nC2 = $(C1)$(C1)\nC3 = $(C2)$(C2)\n"
       "run:\n\tpython3 -m sglang.launch_server --model-path $(C3)\n\tpython3 -m sglang.launch_server --tp 2\n",
       {{27, {"--tp", "2"}}},
       1},
      {"a self-referring variable stops at the depth budget", "Makefile", "A = $(A)x\nrun:\n\tpython3 -m sglang.launch_server --x $(A)\n",
       {{3, {"--x", "${A}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}},
      {"a recipe that does not tokenise and names a launcher is one finding", "Makefile",
       "run:\n\tpython3 -m sglang.launch_server --model-path 'x\nok:\n\tpython3 -m sglang.launch_server --tp 1\n",
       {{4, {"--tp", "1"}}},
       1},
      {"just: variables, parameter defaults, exported values, @ and - marks, {{{{", "justfile",
       "model := \"Qwen/\" + 'Qwen3-8B'\nexport PORT := \"30000\"\n\nserve backend=\"fa3\" tp='1' *rest:\n"
       "    @echo {{{{ literal\n    -python3 -m sglang.launch_server --model-path {{ model }} --attention-backend "
       "{{backend}} --tp {{ tp }} --port $PORT {{rest}}\n",
       {{6, {"--model-path", "Qwen/Qwen3-8B", "--attention-backend", "fa3", "--tp", "1", "--port", "30000", "${rest}"}}}},
      {"just: a parameter without a default and an unknown expression are unknown values", "justfile",
       "serve MODEL:\n    python3 -m sglang.launch_server --model-path {{MODEL}} --x {{ `date` }} --y {{ env_var_or_default(\"B\", "
       "\"fa3\") }}\n",
       {{2, {"--model-path", "${MODEL}", "--x", "${_date_}", "--y", "fa3"}}}},
      {"just: a shebang recipe is one script; a python one is read as Python", "justfile",
       "a:\n  #!/usr/bin/env bash\n  M=Qwen/Qwen3-8B\n  python3 -m sglang.launch_server --model-path $M\n\n"
       "b:\n  #!/usr/bin/env python3\n  import subprocess\n  subprocess.run([\"python3\", \"-m\", \"sglang.launch_server\", "
       "\"--tp\", \"2\"])\n",
       {{4, {"--model-path", "Qwen/Qwen3-8B"}}, {9, {"--tp", "2"}}}},
  };
  return kCases;
}

TEST(ReadMake, Cases) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const LaunchScan scan = scan_launch_input(c.text, c.file);
    ASSERT_EQ(scan.commands.size(), c.commands.size());
    for (std::size_t k = 0; k < c.commands.size(); ++k) {
      EXPECT_EQ(scan.commands[k].line, c.commands[k].line) << k;
      EXPECT_EQ(scan.commands[k].args, c.commands[k].args) << k;
    }
    EXPECT_EQ(scan.skipped.size(), c.skipped);
    for (const Error& e : scan.skipped) EXPECT_EQ(e.where.rfind(c.file, 0), 0u) << e.where;
  }
}

// The args of a recipe line are located on their own lines, as in a script.
TEST(ReadMake, ArgumentsKeepTheirLines) {
  const LaunchScan scan = scan_launch_input(
      "serve:\n\tpython3 -m sglang.launch_server \\\n\t  --model-path x \\\n\t  --attention-backend fa3\n", "Makefile");
  ASSERT_EQ(scan.commands.size(), 1u);
  EXPECT_EQ(scan.commands[0].arg_lines, (std::vector<int>{3, 3, 4, 4}));
}

}  // namespace
}  // namespace attnsel
