// The run directory's layout and its no-overwrite rule. See run_dir.hpp.
#include "engine/run_dir.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace fs = std::filesystem;

namespace kernelopt::engine {

namespace {
constexpr const char* kMarker = "kernelopt-run.json";  // identifies a directory as a run of one problem
}

RunDir RunDir::prepare(const fs::path& dir, const fs::path& problem, const std::string& problem_hash) {
  RunDir r;
  r.dir_ = fs::absolute(dir);
  r.problem_hash_ = problem_hash;
  std::error_code ec;
  const bool exists = fs::exists(r.dir_, ec);
  if (ec) throw UserError(fmt::format("{}: cannot look at it: {}", dir.string(), ec.message()));
  if (exists) {
    if (!fs::is_directory(r.dir_)) throw UserError(fmt::format("{}: exists and is not a directory", dir.string()));
    const bool empty = fs::is_empty(r.dir_, ec);
    if (ec) throw UserError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
    if (!empty) {
      if (!fs::exists(r.dir_ / kMarker)) {
        throw UserError(fmt::format("{}: not empty and not a kernelopt run; choose another --out", dir.string()));
      }
      nlohmann::json marker;
      try {
        marker = nlohmann::json::parse(util::read_file(r.dir_ / kMarker));
      } catch (const std::exception&) {
        marker = nullptr;
      }
      const auto field = [&](const char* key) {
        return marker.is_object() && marker.contains(key) && marker[key].is_string() ? marker[key].get<std::string>()
                                                                                     : std::string();
      };
      if (field("problem_hash").empty()) {
        throw UserError(fmt::format("{}: its {} is unreadable, so it may not be a kernelopt run; choose another --out",
                                    dir.string(), kMarker));
      }
      if (field("problem_hash") != problem_hash) {
        const std::string other = field("problem");
        throw UserError(fmt::format("{}: holds a run of a different problem ({}); choose another --out", dir.string(),
                                    other.empty() ? "?" : other));
      }
    }
  }
  try {
    util::ensure_dir(r.dir_);
    util::ensure_dir(r.dir_ / "logs");
    util::ensure_dir(r.dir_ / "candidates");
    util::ensure_dir(r.dir_ / "optimized");
    nlohmann::json marker = {{"problem", fs::absolute(problem).string()}, {"problem_hash", problem_hash},
                             {"kernelopt", util::version()}};
    util::write_file_atomic(r.dir_ / kMarker, marker.dump(1) + "\n");
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: cannot write the run directory: {}", dir.string(), e.what()));
  }
  return r;
}

void RunDir::write_optimized(int index, const std::string& source, bool changed) {
  util::write_file_atomic(dir_ / "optimized" / fmt::format("module{}.py", index), source);
  auto it = std::find_if(modules_.begin(), modules_.end(), [&](const Entry& e) { return e.index == index; });
  if (it == modules_.end()) {
    modules_.push_back({index, changed});
  } else {
    it->changed = changed;
  }
}

void RunDir::write_manifest() const {
  nlohmann::json mods = nlohmann::json::array();
  for (const auto& e : modules_) {
    mods.push_back({{"index", e.index},
                    {"baseline", fmt::format("baseline/module{}.py", e.index)},
                    {"optimized", e.changed ? nlohmann::json(fmt::format("optimized/module{}.py", e.index))
                                            : nlohmann::json(nullptr)}});
  }
  nlohmann::json manifest = {{"kernelopt", util::version()}, {"problem", "problem.py"},
                             {"problem_hash", problem_hash_}, {"weights", "weights.pt"}, {"modules", mods}};
  util::write_file_atomic(dir_ / "manifest.json", manifest.dump(1) + "\n");
}

bool RunDir::any_optimized() const {
  return std::any_of(modules_.begin(), modules_.end(), [](const Entry& e) { return e.changed; });
}

}  // namespace kernelopt::engine
