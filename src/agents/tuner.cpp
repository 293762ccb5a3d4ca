#include "agents/tuner.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kernelopt::agents {
namespace {

using nlohmann::json;

// Search-space bounds. Block sizes are powers of two (Triton requires it).
// Pointwise 1-D: below 128 elements a block wastes most of a warp's lanes; above
// 4096 registers spill for typical fused chains.
const std::vector<std::int64_t> kPointwiseX = {128, 256, 512, 1024, 2048, 4096};
// Pointwise 2-D tiles: a tile of 256..4096 elements keeps both dimensions coalesced
// and within registers (Inductor's own tiled configs lie in this range).
const std::vector<std::int64_t> kTile = {16, 32, 64, 128, 256};
constexpr std::int64_t kTileMin = 256, kTileMax = 4096;
// Looped reductions: rows per program and the reduction chunk. The tile
// XBLOCK*R0_BLOCK is kept in [256, 16384] elements: smaller leaves warps idle,
// larger spills registers (fp32 accumulators per element of the tile).
const std::vector<std::int64_t> kReductionX = {1, 2, 4, 8, 16, 32, 64};
const std::vector<std::int64_t> kReductionR = {64, 128, 256, 512, 1024, 2048, 4096};
constexpr std::int64_t kReductionTileMin = 256, kReductionTileMax = 16384;
// Persistent reductions hold a whole row per program in registers: XBLOCK rows
// of R0 elements, at most 32768 elements per program.
constexpr std::int64_t kPersistentTileMax = 32768;
// 32 threads per warp; 32 warps = 1024 threads, the CUDA block limit.
constexpr std::int64_t kWarpSize = 32;

std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n && p < (std::int64_t{1} << 40)) p <<= 1;
  return p;
}

// size_hints[key] as an integer, or 0 when absent.
std::int64_t hint(const json& kernel, const char* key) {
  const json sh = kernel.value("size_hints", json::object());
  if (!sh.is_object()) return 0;
  auto it = sh.find(key);
  return it != sh.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// Values of `options` not above max(smallest option, next_pow2(hint)); a missing hint caps nothing.
std::vector<std::int64_t> capped(const std::vector<std::int64_t>& options, std::int64_t size_hint) {
  if (size_hint <= 0) return options;
  const std::int64_t cap = std::max(options.front(), next_pow2(size_hint));
  std::vector<std::int64_t> out;
  for (std::int64_t v : options)
    if (v <= cap) out.push_back(v);
  return out;
}

// The candidate configs of one kernel, each a vector of values in `names` order.
struct Space {
  std::vector<std::string> names;                 // block constexprs in kernel order, then "num_warps", "num_stages"
  std::vector<std::vector<std::int64_t>> points;  // one per config
};

void add(Space& s, std::vector<std::int64_t> values) { s.points.push_back(std::move(values)); }

Space pointwise_1d(const json& kernel) {
  Space s{{"XBLOCK", "num_warps", "num_stages"}, {}};
  for (std::int64_t x : capped(kPointwiseX, hint(kernel, "x")))
    for (std::int64_t w : {1, 2, 4, 8, 16})
      if (w <= std::max<std::int64_t>(1, x / kWarpSize)) add(s, {x, w, 1});
  return s;
}

Space pointwise_2d(const json& kernel, const std::vector<std::string>& constexprs) {
  Space s{{constexprs[0], constexprs[1], "num_warps", "num_stages"}, {}};
  for (std::int64_t a : capped(kTile, hint(kernel, constexprs[0] == "XBLOCK" ? "x" : "y")))
    for (std::int64_t b : capped(kTile, hint(kernel, constexprs[1] == "XBLOCK" ? "x" : "y")))
      if (a * b >= kTileMin && a * b <= kTileMax)
        for (std::int64_t w : {2, 4, 8}) add(s, {a, b, w, 1});
  return s;
}

Space reduction(const json& kernel, const std::vector<std::string>& constexprs) {
  Space s{{constexprs[0], constexprs[1], "num_warps", "num_stages"}, {}};
  const bool x_first = constexprs[0] == "XBLOCK";
  for (std::int64_t x : capped(kReductionX, hint(kernel, "x")))
    for (std::int64_t r : capped(kReductionR, hint(kernel, "r0_"))) {
      const std::int64_t tile = x * r;
      if (tile < kReductionTileMin || tile > kReductionTileMax) continue;
      for (std::int64_t w : {2, 4, 8, 16, 32})
        if (w <= tile / kWarpSize)
          for (std::int64_t stages : {1, 2}) add(s, x_first ? std::vector{x, r, w, stages} : std::vector{r, x, w, stages});
    }
  return s;
}

Space persistent_reduction(const json& kernel, std::int64_t r0) {
  Space s{{"XBLOCK", "num_warps", "num_stages"}, {}};
  const std::int64_t x_hint = hint(kernel, "x");
  for (std::int64_t x : kReductionX) {
    if (x * r0 > kPersistentTileMax || (x_hint > 0 && x > next_pow2(x_hint))) continue;
    for (std::int64_t w : {1, 2, 4, 8, 16, 32})
      if (w <= std::max<std::int64_t>(1, x * r0 / kWarpSize)) add(s, {x, w, 1});
  }
  return s;
}

// Warps of a standalone kernel: up to 32 (1024 threads, the CUDA block limit);
// software pipelining depth: 1 to 4 is the useful range for loops over loads.
const std::vector<std::int64_t> kStandaloneWarps = {1, 2, 4, 8, 16, 32};
const std::vector<std::int64_t> kStandaloneStages = {1, 2, 3, 4};

bool is_block_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name.find("BLOCK") != std::string::npos || name.find("RDIM") != std::string::npos;
}

// Elements one program of a standalone kernel holds: the product of the current
// power-of-two block constexprs; 0 when none is known.
std::int64_t standalone_tile(const json& kernel, const json& current) {
  if (!current.is_object() || !kernel.contains("constexprs") || !kernel["constexprs"].is_array()) return 0;
  std::int64_t tile = 0;
  for (const json& c : kernel["constexprs"]) {
    if (!c.is_string() || !is_block_name(c.get<std::string>())) continue;
    auto it = current.find(c.get<std::string>());
    if (it == current.end() || !it->is_number_integer() || it->is_boolean()) continue;
    const std::int64_t v = it->get<std::int64_t>();
    if (v < 1 || (v & (v - 1)) != 0) continue;
    tile = tile == 0 ? v : std::min<std::int64_t>(tile * v, std::int64_t{1} << 40);
  }
  return tile;
}

Space standalone(const json& kernel, const json& current) {
  Space s{{"num_warps", "num_stages"}, {}};
  const std::int64_t tile = standalone_tile(kernel, current);
  const auto loops = kernel.find("num_loops");
  std::vector<std::int64_t> stages = kStandaloneStages;
  if (loops != kernel.end() && loops->is_number_integer() && loops->get<std::int64_t>() == 0) {
    // no loop to pipeline: keep the current depth (read as tuner_space reads it: 1 when absent)
    std::int64_t now = 1;
    if (current.is_object()) {
      const auto it = current.find("num_stages");
      if (it != current.end() && it->is_number_integer()) now = it->get<std::int64_t>();
    }
    stages = {now};
  }
  for (std::int64_t w : kStandaloneWarps)
    if (tile == 0 || w <= std::max<std::int64_t>(1, tile / kWarpSize))
      for (std::int64_t st : stages) add(s, {w, st});
  return s;
}

std::vector<std::string> string_list(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const json& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

bool same_set(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

Space space_for(const json& kernel, const json& current) {
  if (!kernel.is_object()) return {};
  const std::string kind = kernel.value("kind", std::string());
  if (kind == "triton_jit") return standalone(kernel, current);
  const std::vector<std::string> cx = string_list(kernel.value("constexprs", json::array()));
  if (kind == "pointwise" && cx == std::vector<std::string>{"XBLOCK"}) return pointwise_1d(kernel);
  if (kind == "pointwise" && same_set(cx, {"XBLOCK", "YBLOCK"})) return pointwise_2d(kernel, cx);
  if (kind == "reduction" && same_set(cx, {"XBLOCK", "R0_BLOCK"})) return reduction(kernel, cx);
  if (kind == "persistent_reduction" && cx == std::vector<std::string>{"XBLOCK"}) {
    const json fixed = kernel.value("fixed_constexprs", json::object());
    if (fixed.is_object() && fixed.contains("R0_BLOCK") && fixed["R0_BLOCK"].is_number_integer() &&
        fixed["R0_BLOCK"].get<std::int64_t>() > 0)
      return persistent_reduction(kernel, fixed["R0_BLOCK"].get<std::int64_t>());
  }
  return {};
}

// current_config's value for `name`; Triton's defaults for num_warps (4) and
// num_stages (1) when absent; -1 (matches nothing) for an absent block.
std::int64_t current_value(const json& current, const std::string& name) {
  if (current.is_object()) {
    auto it = current.find(name);
    if (it != current.end() && it->is_number_integer()) return it->get<std::int64_t>();
  }
  if (name == "num_warps") return 4;
  if (name == "num_stages") return 1;
  return -1;
}

double log2_step(std::int64_t from, std::int64_t to) {
  return std::fabs(std::log2(static_cast<double>(std::max<std::int64_t>(to, 1))) -
                   std::log2(static_cast<double>(std::max<std::int64_t>(from, 1))));
}

// Blocks the kernel has no mask for: Inductor writes `xmask = tl.full(..., True, ...)` where its
// row count is a multiple of every block it would use, so a block that does not divide that count
// would leave a partial last program reading and writing past the end.
bool divides_unmasked(const json& kernel, const Space& space, const std::vector<std::int64_t>& values) {
  const auto it = kernel.find("unmasked_numel");
  if (it == kernel.end() || !it->is_object()) return true;
  for (std::size_t i = 0; i < space.names.size(); ++i) {
    const auto n = it->find(space.names[i]);
    if (n != it->end() && n->is_number_integer() && values[i] > 0 && n->get<std::int64_t>() % values[i] != 0)
      return false;
  }
  return true;
}

// A line of DRAM and L2 traffic: a program whose reads of a row position fill it wastes no bandwidth.
constexpr std::int64_t kLineBytes = 128;

// A reduction whose rows interleave in memory: the bytes of a row that lie together before the next row's
// (the artifact's row_run_bytes, e.g. 32: a group norm's 8 channels of a pixel over channels-last data) when
// under a line; 0 for any other kernel.
std::int64_t interleaved_row_bytes(const json& kernel) {
  const auto run = kernel.find("row_run_bytes");
  if (run == kernel.end() || !run->is_number_integer() || kernel.value("kind", std::string()) != "reduction") return 0;
  const auto bytes = run->get<std::int64_t>();
  return bytes > 0 && bytes < kLineBytes ? bytes : 0;
}

// Whether the config's XBLOCK adjacent rows, `run_bytes` each, fill a line.
bool fills_lines(std::int64_t run_bytes, const Space& space, const std::vector<std::int64_t>& values) {
  for (std::size_t i = 0; i < space.names.size(); ++i) {
    if (space.names[i] == "XBLOCK") return values[i] * run_bytes >= kLineBytes;
  }
  return true;
}

}  // namespace

std::vector<json> tuner_space(const json& kernel, const json& current_config, int max_configs) {
  if (max_configs <= 0) return {};
  const Space space = space_for(kernel, current_config);

  std::vector<std::int64_t> current;
  for (const std::string& name : space.names) current.push_back(current_value(current_config, name));

  struct Ranked {
    int changed;
    double step;
    std::vector<std::int64_t> values;
  };
  std::vector<Ranked> ranked;
  std::set<std::vector<std::int64_t>> seen;
  for (const std::vector<std::int64_t>& values : space.points) {
    if (values == current || !seen.insert(values).second || !divides_unmasked(kernel, space, values)) continue;
    Ranked r{0, 0.0, values};
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] != current[i]) {
        ++r.changed;
        r.step += log2_step(current[i], values[i]);
      }
    ranked.push_back(std::move(r));
  }
  const auto nearer = [](const Ranked& a, const Ranked& b) {
    return std::tie(a.changed, a.step, a.values) < std::tie(b.changed, b.step, b.values);
  };
  std::sort(ranked.begin(), ranked.end(), nearer);

  // Rows that interleave in memory get programs of adjacent rows that fill whole lines: such configs, which the
  // nearest-first sweep would not reach, fill the first half (the nearest of them first; the rest as ranked).
  if (const std::int64_t run_bytes = interleaved_row_bytes(kernel); run_bytes > 0) {
    const auto preferred_end = std::stable_partition(
        ranked.begin(), ranked.end(), [&](const Ranked& r) { return fills_lines(run_bytes, space, r.values); });
    const std::size_t first = std::min(static_cast<std::size_t>(preferred_end - ranked.begin()),
                                       static_cast<std::size_t>((max_configs + 1) / 2));
    std::stable_sort(ranked.begin() + static_cast<std::ptrdiff_t>(first), ranked.end(), nearer);
  }

  std::vector<json> out;
  for (const Ranked& r : ranked) {
    if (static_cast<int>(out.size()) >= max_configs) break;
    json config = json::object();
    for (std::size_t i = 0; i < space.names.size(); ++i) config[space.names[i]] = r.values[i];
    out.push_back(std::move(config));
  }
  return out;
}

}  // namespace kernelopt::agents
