// The attention flags of one launch command, read the way SGLang's argparse parser reads them.
//
// Flag spellings follow SGLang's argparse parser (python/sglang/srt/server_args.py): dashes only,
// `--model` for `--model-path`, `--tp` as argparse's abbreviation of `--tp-size`,
// `--nsa-{prefill,decode}-backend` as deprecated aliases of `--dsa-{prefill,decode}-backend`.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "attnsel/launch.hpp"

namespace attnsel {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

using ValueField = std::optional<LaunchFlags::Value> LaunchFlags::*;
using BoolField = bool LaunchFlags::*;

struct ValueFlag {
  std::string_view spelling;
  ValueField field;
};

struct BoolFlag {
  std::string_view spelling;
  BoolField field;  // nullptr: a known boolean that attnsel passes over
};

const ValueFlag kValueFlags[] = {
    {"--model-path", &LaunchFlags::model},
    {"--model", &LaunchFlags::model},
    {"--attention-backend", &LaunchFlags::attention_backend},
    {"--prefill-attention-backend", &LaunchFlags::prefill_attention_backend},
    {"--decode-attention-backend", &LaunchFlags::decode_attention_backend},
    {"--page-size", &LaunchFlags::page_size},
    {"--kv-cache-dtype", &LaunchFlags::kv_cache_dtype},
    {"--speculative-algorithm", &LaunchFlags::speculative_algorithm},
    {"--speculative-eagle-topk", &LaunchFlags::speculative_eagle_topk},
    {"--speculative-attention-mode", &LaunchFlags::speculative_attention_mode},
    {"--linear-attn-backend", &LaunchFlags::linear_attn_backend},
    {"--linear-attn-prefill-backend", &LaunchFlags::linear_attn_prefill_backend},
    {"--linear-attn-decode-backend", &LaunchFlags::linear_attn_decode_backend},
    {"--dsa-prefill-backend", &LaunchFlags::nsa_prefill_backend},
    {"--nsa-prefill-backend", &LaunchFlags::nsa_prefill_backend},  // deprecated alias upstream
    {"--dsa-decode-backend", &LaunchFlags::nsa_decode_backend},
    {"--nsa-decode-backend", &LaunchFlags::nsa_decode_backend},  // deprecated alias upstream
    {"--mm-attention-backend", &LaunchFlags::mm_attention_backend},
    {"--tp-size", &LaunchFlags::tp},
    {"--tensor-parallel-size", &LaunchFlags::tp},
    {"--tp", &LaunchFlags::tp},  // argparse's unambiguous abbreviation of --tp-size, used in the docs
    {"--attention-backend-config", &LaunchFlags::attention_backend_config},
    {"--model-kind", &LaunchFlags::model_kind},
    {"--model-type", &LaunchFlags::model_type},
};

const BoolFlag kBoolFlags[] = {
    {"--enable-deterministic-inference", &LaunchFlags::enable_deterministic_inference},
    {"--disable-radix-cache", &LaunchFlags::disable_radix_cache},
    {"--trust-remote-code", nullptr},
    {"--skip-tokenizer-init", nullptr},
    {"--is-embedding", nullptr},
    {"--enable-multimodal", nullptr},
    {"--disable-hybrid-swa-memory", nullptr},
    {"--disable-chunked-prefix-cache", nullptr},
    {"--disable-overlap-schedule", nullptr},
    {"--enable-mixed-chunk", nullptr},
    {"--enable-dp-attention", nullptr},
    {"--enable-dp-lm-head", nullptr},
    {"--enable-p2p-check", nullptr},
    {"--enable-prefill-cp", nullptr},
    {"--enable-metrics", nullptr},
    {"--enable-torch-compile", nullptr},
    {"--enable-nccl-nvls", nullptr},
    {"--enable-symm-mem", nullptr},
    {"--disable-custom-all-reduce", nullptr},
    {"--enable-hierarchical-cache", nullptr},
    {"--enable-hisparse", nullptr},
    {"--enable-multi-layer-eagle", nullptr},
    {"--disable-cuda-graph", nullptr},
    {"--disable-cuda-graph-padding", nullptr},
    {"--disable-prefill-cuda-graph", nullptr},
    {"--disable-decode-cuda-graph", nullptr},
    {"--disable-piecewise-cuda-graph", nullptr},
    {"--disable-flashinfer-autotune", nullptr},
    {"--skip-server-warmup", nullptr},
    {"--log-requests", nullptr},
};

const ValueFlag* find_value_flag(std::string_view spelling) {
  for (const ValueFlag& f : kValueFlags) {
    if (f.spelling == spelling) return &f;
  }
  return nullptr;
}

const BoolFlag* find_bool_flag(std::string_view spelling) {
  for (const BoolFlag& f : kBoolFlags) {
    if (f.spelling == spelling) return &f;
  }
  return nullptr;
}

}  // namespace

LaunchFlags parse_launch_flags(const LaunchCommand& cmd) {
  LaunchFlags flags;
  const std::vector<std::string>& args = cmd.args;
  auto line_of = [&](std::size_t k) { return k < cmd.arg_lines.size() ? cmd.arg_lines[k] : cmd.line; };
  auto problem = [&](ErrorCode code, std::string message, std::string where, std::size_t k,
                     std::string suggestion = {}) {
    flags.problems.push_back(Error{code, std::move(message), std::move(where), {}, std::move(suggestion)});
    flags.problem_lines.push_back(line_of(k));
  };
  // argparse takes the next token as the value unless it looks like another long option.
  auto takes_value = [&](std::size_t k) { return k < args.size() && !starts_with(args[k], "--"); };

  std::size_t k = 0;
  if (cmd.launcher == "sglang serve" && !args.empty() && !starts_with(args[0], "-")) {
    flags.model = LaunchFlags::Value{args[0], "", line_of(0)};  // `sglang serve MODEL`
    k = 1;
  }
  while (k < args.size()) {
    const std::string& token = args[k];
    const std::size_t at = k++;
    if (!starts_with(token, "-") || token == "-" || token == "--") {
      problem(ErrorCode::invalid_argument,
              "unexpected argument '" + token + "': SGLang takes no positional arguments here and would exit "
              "with 'unrecognized arguments'",
              token, at);
      continue;
    }
    const std::size_t eq = token.find('=');
    const std::string name = token.substr(0, eq);
    const std::optional<std::string> inline_value =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(token.substr(eq + 1));

    auto read_value = [&]() -> std::optional<std::string> {
      if (inline_value) return inline_value;
      if (takes_value(k)) return args[k++];
      return std::nullopt;
    };

    if (const ValueFlag* f = find_value_flag(name)) {
      const std::optional<std::string> value = read_value();
      if (!value) {
        problem(ErrorCode::invalid_argument, name + " needs a value", name, at);
        continue;
      }
      flags.*(f->field) = LaunchFlags::Value{*value, name, line_of(at)};
      if (f->field == &LaunchFlags::model_kind && cmd.launcher != "flags") {
        problem(ErrorCode::invalid_argument,
                "--model-kind is an option of `attnsel check`, not of SGLang, which would reject it; pass it to "
                "attnsel instead",
                name, at);
      }
      continue;
    }
    if (const BoolFlag* f = find_bool_flag(name)) {
      if (inline_value) {
        problem(ErrorCode::invalid_argument, name + " takes no value (SGLang rejects '" + token + "')", name, at);
        continue;
      }
      if (f->field) {
        flags.*(f->field) = true;
      } else {
        flags.ignored.push_back(name);
      }
      continue;
    }
    std::string dashed = name;
    std::replace(dashed.begin() + (starts_with(dashed, "--") ? 2 : 0), dashed.end(), '_', '-');
    if (dashed != name && (find_value_flag(dashed) || find_bool_flag(dashed))) {
      if (find_value_flag(dashed) && !inline_value && takes_value(k)) ++k;  // its value is not a flag
      problem(ErrorCode::unknown_name,
              "SGLang has no flag " + name + ": its flags are spelled with dashes, and it would exit with "
              "'unrecognized arguments'",
              name, at, dashed);
      continue;
    }
    // Unknown to attnsel: pass it over with everything that cannot be a flag (nargs='+' values).
    flags.ignored.push_back(name);
    if (!inline_value) {
      while (takes_value(k)) ++k;
    }
  }
  return flags;
}

}  // namespace attnsel
