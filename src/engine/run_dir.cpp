// The run directory's layout, its lock and its no-overwrite rule; the workspace's store; reports read back.
// See run_dir.hpp.
#include "engine/run_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/optimize.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kernelopt::engine {

namespace {

constexpr const char* kMarker = "kernelopt-run.json";  // identifies a directory as a run of one problem
constexpr const char* kLock = "kernelopt-run.lock";    // held by the live run (util::FileLock)

struct Marker {
  std::string problem, problem_hash;  // problem_hash "" = unreadable
  bool validated = true;              // markers written before validation was recorded: validated
};

Marker read_marker(const fs::path& dir) {
  Marker m;
  try {
    const nlohmann::json j = nlohmann::json::parse(util::read_file(dir / kMarker));
    const auto text = [&](const char* key) {
      return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    m.problem = text("problem");
    m.problem_hash = text("problem_hash");
    if (j.is_object() && j.contains("validated") && j["validated"].is_boolean()) m.validated = j["validated"].get<bool>();
  } catch (const std::exception&) {
    m.problem_hash.clear();
  }
  return m;
}

std::string in_progress(const fs::path& dir, long pid) {
  return fmt::format("{}: a run is in progress there{}", dir.string(), pid > 0 ? fmt::format(" (pid {})", pid) : "");
}

/// The rules on what an existing directory may hold: nothing (but a lock file), or a run of this problem,
/// or a start of another problem that never got past validation.
void check_contents(const fs::path& dir, const fs::path& abs, const std::string& problem_hash) {
  std::error_code ec;
  bool empty = true;
  for (fs::directory_iterator it(abs, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != kLock) empty = false;
  }
  if (ec) throw UserError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
  if (empty) return;
  if (!fs::exists(abs / kMarker)) {
    throw UserError(fmt::format("{}: not empty and not a kernelopt run; choose another --out", dir.string()));
  }
  const Marker m = read_marker(abs);
  if (m.problem_hash.empty()) {
    throw UserError(fmt::format("{}: its {} is unreadable, so it may not be a kernelopt run; choose another --out",
                                dir.string(), kMarker));
  }
  if (m.problem_hash != problem_hash && m.validated) {
    throw UserError(fmt::format("{}: holds a run of a different problem ({}); choose another --out", dir.string(),
                                m.problem.empty() ? "?" : m.problem));
  }
}

}  // namespace

void RunDir::check(const fs::path& dir, const std::string& problem_hash) {
  const fs::path abs = fs::absolute(dir);
  std::error_code ec;
  const bool exists = fs::exists(abs, ec);
  if (ec) throw UserError(fmt::format("{}: cannot look at it: {}", dir.string(), ec.message()));
  if (!exists) return;
  if (!fs::is_directory(abs)) throw UserError(fmt::format("{}: exists and is not a directory", dir.string()));
  if (auto pid = util::FileLock::holder(abs / kLock)) throw UserError(in_progress(dir, *pid));
  check_contents(dir, abs, problem_hash);
}

RunDir RunDir::prepare(const fs::path& dir, const fs::path& problem, const std::string& problem_hash) {
  check(dir, problem_hash);
  const fs::path abs = fs::absolute(dir);
  std::optional<util::FileLock> lock;
  long holder = 0;
  try {
    util::ensure_dir(abs);
    lock = util::FileLock::try_acquire(abs / kLock, &holder);
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: cannot write the run directory: {}", dir.string(), e.what()));
  }
  if (!lock) throw UserError(in_progress(dir, holder));
  check_contents(dir, abs, problem_hash);  // again under the lock: another run may have come in between
  RunDir r(std::move(*lock));
  r.dir_ = abs;
  r.problem_ = fs::absolute(problem);
  r.problem_hash_ = problem_hash;
  const Marker m = fs::exists(abs / kMarker) ? read_marker(abs) : Marker{};
  r.validated_ = m.problem_hash == problem_hash && m.validated;
  try {
    util::ensure_dir(r.dir_ / "logs");
    util::ensure_dir(r.dir_ / "candidates");
    util::ensure_dir(r.dir_ / "optimized");
    r.write_marker();
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: cannot write the run directory: {}", dir.string(), e.what()));
  }
  return r;
}

void RunDir::mark_validated() {
  if (validated_) return;
  validated_ = true;
  write_marker();
}

void RunDir::write_marker() const {
  const nlohmann::json marker = {{"problem", problem_.string()}, {"problem_hash", problem_hash_},
                                 {"kernelopt", util::version()}, {"validated", validated_}};
  util::write_file_atomic(dir_ / kMarker, marker.dump(1) + "\n");
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
  if (!decision_.is_null()) manifest["decision"] = decision_;
  util::write_file_atomic(dir_ / "manifest.json", manifest.dump(1) + "\n");
}

bool RunDir::any_optimized() const {
  return std::any_of(modules_.begin(), modules_.end(), [](const Entry& e) { return e.changed; });
}

store::Store open_workspace_store(const fs::path& workspace) {
  std::error_code ec;
  if (fs::exists(workspace, ec) && !fs::is_directory(workspace, ec)) {
    throw UserError(fmt::format("{}: not a directory (--workspace is the directory of the store runs share)",
                                workspace.string()));
  }
  fs::create_directories(workspace, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create the workspace: {}", workspace.string(), ec.message()));
  if (::access(workspace.c_str(), W_OK) != 0) {
    throw UserError(fmt::format("{}: the workspace is not writable: {}", workspace.string(), std::strerror(errno)));
  }
  try {
    return store::Store::open(workspace / "store.db", /*verify=*/true);
  } catch (const store::StoreError& e) {
    const std::string what = e.what();
    const std::string db = (workspace / "store.db").string();
    throw UserError(what.rfind(db, 0) == 0 ? what : fmt::format("{}: {}", db, what));
  }
}

json read_report(const fs::path& file) {
  const json j = read_json_file(file);
  const auto bad = [&](const std::string& what) {
    return UserError(fmt::format("{}: not a kernelopt report ({})", file.string(), what));
  };
  if (!j.is_object() || !j.contains("modules") || !j["modules"].is_array()) throw bad("no \"modules\" list");
  for (const auto& m : j["modules"]) {
    if (!m.is_object()) throw bad("a module is not an object");
    if (!m.contains("index") || !m["index"].is_number_integer()) throw bad("a module's \"index\" is not an integer");
    if (!m.contains("module_ms") || !m["module_ms"].is_number()) throw bad("a module's \"module_ms\" is not a number");
    if (!m.contains("kernels") || !m["kernels"].is_array()) throw bad("a module's \"kernels\" is not a list");
    for (const auto& k : m["kernels"]) {
      if (!k.is_object() || !k.contains("name") || !k["name"].is_string() || !k.contains("profile") ||
          !k["profile"].is_object()) {
        throw bad("a kernel without a \"name\" or a \"profile\"");
      }
    }
  }
  return j;
}

}  // namespace kernelopt::engine
