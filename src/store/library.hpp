/// \file
/// The kernel library: verified winners keyed by the fingerprint of the kernel
/// they replace, in one SQLite file (default <workspace>/library.kolib) that a
/// team can share (`kernelopt library export|import`) and that
/// `kernelopt.backend(FILE)` reads at torch.compile time.
///
/// The fingerprint is computed by the worker (python/kernelopt/library/
/// fingerprint.py, the one definition); this store only keys by it. An entry
/// is evidence, not trust: a run that meets the fingerprint again evaluates the
/// entry through all four gates on its own data.
///
/// Contract: one entry per fingerprint. put() keeps, for a fingerprint, the
/// entry with the higher verified kernel speedup (point estimate; a tie keeps
/// the entry already there; the same source is "unchanged"); import and export
/// go through the same rule and report every conflict. The file is marked with
/// PRAGMA application_id, so a store.db or any other SQLite file is refused as
/// "not a kernelopt library"; the schema is versioned with user_version. It
/// uses a rollback journal (not WAL), so the file alone is the whole library.
/// Failures throw StoreError with a one-line message naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.hpp"

namespace kernelopt::store {

struct LibraryEntry {
  std::int64_t id = 0;
  std::string fingerprint;           ///< sha256 hex from the worker (see file comment)
  std::string kernel_name;           ///< the kernel's name where it was verified (sources use it)
  std::string kind;                  ///< pointwise|reduction|persistent_reduction|triton|...
  std::string input_kind;            ///< inductor (an output module's kernel) | triton (a standalone file's)
  std::string original_source_hash;  ///< sha256 of the kernel it replaces, as Inductor/the user wrote it
  std::string source;                ///< the winning kernel text as stitched into the module
  std::string source_hash;           ///< sha256 of source; filled by put() if empty
  std::string code;                  ///< the LLM-written code it was built from; "" for a launch config
  nlohmann::json config;             ///< launch meta-parameters (null for a standalone kernel)
  nlohmann::json grid;               ///< LLM grid expressions (null or [] = Inductor's)
  std::string origin;                ///< the agent that produced it: tuner|coder|repairer|llm-tuner
  double speedup = 0, ci_low = 0, ci_high = 0;  ///< kernel speedup vs the baseline, 95% bootstrap interval
  std::string device;                ///< device name, e.g. "NVIDIA H200" (also inside the fingerprint)
  std::string torch_version, triton_version;
  std::int64_t run_id = 0;           ///< the run (in its workspace store) that verified it
  std::string run_out_dir;           ///< that run's directory
  std::string created_at;            ///< UTC ISO-8601; filled by put() if empty
  nlohmann::json evidence;           ///< gate summary: {"gates": [...], "end_to_end": {...}}
};

/// What put() did with an entry.
enum class PutResult { added, replaced, kept_existing, unchanged };
const char* to_string(PutResult r);

/// What a merge (import/export) did, entry by entry.
struct MergeReport {
  int added = 0, replaced = 0, kept_existing = 0, unchanged = 0;
  std::vector<std::string> conflicts;  ///< one line per fingerprint where two different winners met
};

class Library {
 public:
  /// Opens the library at path, creating it (and its schema) if the file is
  /// absent or empty. The parent directory must exist.
  static Library open(const std::filesystem::path& path);
  /// Opens a library that must already exist ("no such library file" otherwise).
  static Library open_existing(const std::filesystem::path& path);

  Library(Library&&) noexcept = default;
  Library& operator=(Library&&) noexcept = default;

  const std::filesystem::path& path() const { return path_; }

  std::optional<LibraryEntry> find(const std::string& fingerprint);
  /// By id, or by a unique prefix (>= 6 characters) of a fingerprint.
  std::optional<LibraryEntry> get(const std::string& id_or_fingerprint);
  std::vector<LibraryEntry> entries();  ///< oldest first

  /// Adds the entry, or resolves it against the one with the same fingerprint
  /// (see the file comment). Returns what happened; `conflict`, when given,
  /// receives a one-line description if two different winners met. With
  /// `supersede` (the run re-verified the stored entry for this fingerprint and
  /// it failed a gate) a different source replaces the stored one whatever
  /// their recorded speedups.
  PutResult put(const LibraryEntry& entry, std::string* conflict = nullptr, bool supersede = false);

  /// Every entry of `from` put() into this library, in one transaction.
  MergeReport merge_from(Library& from);

 private:
  Library(Database db, std::filesystem::path path) : db_(std::move(db)), path_(std::move(path)) {}
  Database db_;
  std::filesystem::path path_;
};

}  // namespace kernelopt::store
