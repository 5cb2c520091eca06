// SPDX-License-Identifier: GPL-2.0
// A main() for the fuzz targets outside libFuzzer (any compiler): replays
// the inputs named on the command line, then, with "-mutate N SEED", feeds
// N random mutations of them. The unit tests use it to run the fuzz
// targets' checks on every build; userspace/fuzz/run.sh does the real,
// coverage-guided fuzzing with clang.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::vector<uint8_t>> inputs;
  long mutations = 0;
  unsigned long seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-mutate") && i + 2 < argc) {
      mutations = strtol(argv[i + 1], nullptr, 0);
      seed = strtoul(argv[i + 2], nullptr, 0);
      i += 2;
      continue;
    }
    std::ifstream f(argv[i], std::ios::binary);
    if (!f) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    inputs.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  for (auto &in : inputs) LLVMFuzzerTestOneInput(in.data(), in.size());
  std::mt19937_64 rng(seed);
  for (long m = 0; m < mutations && !inputs.empty(); m++) {
    std::vector<uint8_t> in = inputs[rng() % inputs.size()];
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; e++) {
      switch (rng() % 4) {
        case 0:
          if (!in.empty()) in[rng() % in.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
          break;
        case 1:
          if (!in.empty()) in[rng() % in.size()] = static_cast<uint8_t>(rng());
          break;
        case 2:
          if (!in.empty()) in.resize(rng() % in.size());
          break;
        default:
          in.insert(in.begin() + (in.empty() ? 0 : rng() % in.size()), static_cast<uint8_t>(rng()));
      }
    }
    LLVMFuzzerTestOneInput(in.data(), in.size());
  }
  printf("replayed %zu inputs and %ld mutations\n", inputs.size(), mutations);
  return 0;
}
