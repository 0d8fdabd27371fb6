// `attnsel check`'s reading, in process: where the time of bench/check_throughput.sh goes before
// any command is judged. Bytes per second of a tree of scripts through scan_launch_input (as the
// library's callers get it, and as check reads it: no context hints for files without commands),
// the shell lexer alone, and the context hints alone.
//
// The tree: ATTNSEL_SCAN_TREE (e.g. one made by bench/gen_shell_tree.py), else the repository's
// deploy fixtures. Every file is read into memory first; the runs read no files.
//   python3 bench/gen_shell_tree.py /tmp/tree --mb 20 --files 600
//   ATTNSEL_SCAN_TREE=/tmp/tree build/bench/attnsel_check_scan_bench
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "attnsel/launch.hpp"
#include "check/shell_lexer.hpp"

namespace {

struct File {
  std::string name, text;
};

const std::vector<File>& corpus() {
  static const std::vector<File> files = [] {
    namespace fs = std::filesystem;
    const char* env = std::getenv("ATTNSEL_SCAN_TREE");
    const fs::path root = env && *env ? fs::path(env) : fs::path(ATTNSEL_SOURCE_DIR) / "tests/fixtures/deploy";
    std::vector<File> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      out.push_back({e.path().string(), {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}});
    }
    return out;
  }();
  return files;
}

std::int64_t corpus_bytes() {
  std::int64_t n = 0;
  for (const File& f : corpus()) n += static_cast<std::int64_t>(f.text.size());
  return n;
}

void BM_ScanLaunchInput(benchmark::State& state) {
  for (auto _ : state)
    for (const File& f : corpus()) benchmark::DoNotOptimize(attnsel::scan_launch_input(f.text, f.name));
  state.SetBytesProcessed(state.iterations() * corpus_bytes());
}
BENCHMARK(BM_ScanLaunchInput)->Unit(benchmark::kMillisecond);

void BM_ScanAsCheckReads(benchmark::State& state) {
  attnsel::ScanOptions options;
  options.context_without_commands = false;
  for (auto _ : state)
    for (const File& f : corpus())
      benchmark::DoNotOptimize(attnsel::scan_launch_input(f.text, f.name, attnsel::InputFormat::detect,
                                                          attnsel::builtin_launchers(), options));
  state.SetBytesProcessed(state.iterations() * corpus_bytes());
}
BENCHMARK(BM_ScanAsCheckReads)->Unit(benchmark::kMillisecond);

void BM_LexShell(benchmark::State& state) {
  for (auto _ : state)
    for (const File& f : corpus()) benchmark::DoNotOptimize(attnsel::launch_detail::lex_shell(f.text));
  state.SetBytesProcessed(state.iterations() * corpus_bytes());
}
BENCHMARK(BM_LexShell)->Unit(benchmark::kMillisecond);

void BM_FindFileContext(benchmark::State& state) {
  for (auto _ : state)
    for (const File& f : corpus()) benchmark::DoNotOptimize(attnsel::find_file_context(f.text));
  state.SetBytesProcessed(state.iterations() * corpus_bytes());
}
BENCHMARK(BM_FindFileContext)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
