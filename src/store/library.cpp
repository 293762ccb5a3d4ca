#include "store/library.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "store/json_columns.hpp"
#include "store/store.hpp"
#include "util/hash.hpp"

namespace kernelopt::store {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// "KOLB": marks a file as a kernelopt library (PRAGMA application_id), so another SQLite file is refused.
constexpr std::int64_t kApplicationId = 0x4B4F4C42;
constexpr int kLibraryVersion = 1;

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE entries (
  id                   INTEGER PRIMARY KEY,
  fingerprint          TEXT NOT NULL UNIQUE,
  kernel_name          TEXT NOT NULL,
  kind                 TEXT NOT NULL,
  input_kind           TEXT NOT NULL,
  original_source_hash TEXT NOT NULL,
  source               TEXT NOT NULL,
  source_hash          TEXT NOT NULL,
  code                 TEXT NOT NULL,
  config_json          TEXT,
  grid_json            TEXT,
  origin               TEXT NOT NULL,
  speedup              REAL NOT NULL,
  ci_low               REAL NOT NULL,
  ci_high              REAL NOT NULL,
  device               TEXT NOT NULL,
  torch_version        TEXT NOT NULL,
  triton_version       TEXT NOT NULL,
  run_id               INTEGER NOT NULL,
  run_out_dir          TEXT NOT NULL,
  created_at           TEXT NOT NULL,
  evidence_json        TEXT
);
)sql";

const std::string kColumns =
    "SELECT id, fingerprint, kernel_name, kind, input_kind, original_source_hash, source, source_hash, code, "
    "config_json, grid_json, origin, speedup, ci_low, ci_high, device, torch_version, triton_version, run_id, "
    "run_out_dir, created_at, evidence_json FROM entries ";

std::int64_t pragma_int(Database& db, const char* pragma) {
  Statement st = db.prepare(std::string("PRAGMA ") + pragma);
  return st.step() ? st.column_int64(0) : 0;
}



LibraryEntry read_entry(const Statement& st) {
  LibraryEntry e;
  e.id = st.column_int64(0);
  e.fingerprint = st.column_text(1);
  e.kernel_name = st.column_text(2);
  e.kind = st.column_text(3);
  e.input_kind = st.column_text(4);
  e.original_source_hash = st.column_text(5);
  e.source = st.column_text(6);
  e.source_hash = st.column_text(7);
  e.code = st.column_text(8);
  e.config = read_json(st, 9, "library");
  e.grid = read_json(st, 10, "library");
  e.origin = st.column_text(11);
  e.speedup = st.column_double(12);
  e.ci_low = st.column_double(13);
  e.ci_high = st.column_double(14);
  e.device = st.column_text(15);
  e.torch_version = st.column_text(16);
  e.triton_version = st.column_text(17);
  e.run_id = st.column_int64(18);
  e.run_out_dir = st.column_text(19);
  e.created_at = st.column_text(20);
  e.evidence = read_json(st, 21, "library");
  return e;
}

void bind_entry(Statement& st, const LibraryEntry& e) {
  st.bind(1, e.fingerprint)
      .bind(2, e.kernel_name)
      .bind(3, e.kind)
      .bind(4, e.input_kind)
      .bind(5, e.original_source_hash)
      .bind(6, e.source)
      .bind(7, e.source_hash)
      .bind(8, e.code);
  bind_json(st, 9, e.config);
  bind_json(st, 10, e.grid);
  st.bind(11, e.origin)
      .bind(12, e.speedup)
      .bind(13, e.ci_low)
      .bind(14, e.ci_high)
      .bind(15, e.device)
      .bind(16, e.torch_version)
      .bind(17, e.triton_version)
      .bind(18, e.run_id)
      .bind(19, e.run_out_dir)
      .bind(20, e.created_at);
  bind_json(st, 21, e.evidence);
}

/// Refuses an existing file that is not a kernelopt library, reading its SQLite header directly
/// (https://www.sqlite.org/fileformat.html: magic at 0, user_version at 60, application_id at 68),
/// so a foreign file is never opened, locked or switched to another journal mode.
void check_header(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::file_size(path, ec) == 0) return;  // new: the schema is created
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 100> h{};
  in.read(reinterpret_cast<char*>(h.data()), static_cast<std::streamsize>(h.size()));
  static constexpr char kMagic[] = "SQLite format 3";
  if (in.gcount() < 100 || std::memcmp(h.data(), kMagic, sizeof kMagic) != 0) {
    throw StoreError(path.string() + ": not a kernelopt library file (not an SQLite database)");
  }
  auto be32 = [&](size_t at) {
    return (std::int64_t{h[at]} << 24) | (std::int64_t{h[at + 1]} << 16) | (std::int64_t{h[at + 2]} << 8) | h[at + 3];
  };
  if (be32(68) != kApplicationId) throw StoreError(path.string() + ": not a kernelopt library file");
  if (be32(60) > kLibraryVersion) {
    throw StoreError(fmt::format("{}: library format {} is newer than this build reads ({})", path.string(), be32(60),
                                 kLibraryVersion));
  }
}

/// Opens path as a library: an empty file gets the schema; a file of another kind is refused.
Database open_library(const fs::path& path) {
  const std::string name = path.string();
  check_header(path);
  try {
    // one self-contained file to share: a rollback journal, not WAL's -wal/-shm companions
    Database db = Database::open(path, "delete");
    std::int64_t app = pragma_int(db, "application_id");
    std::int64_t version = pragma_int(db, "user_version");
    // Each pragma above is its own read; another process may commit the schema between them (app read
    // as 0, version as ours), so any zero sends this open to the locked check below, which reads again.
    if (app == 0 || version == 0) {
      // Check and create under one write lock, with no read open before it: two processes opening a
      // new library at once then queue on BEGIN IMMEDIATE (a reader asking for the write lock while
      // another holds it gets SQLITE_BUSY at once, the busy handler skipped), and the second sees the schema.
      Transaction tx(db);
      const bool empty = [&] {
        Statement tables = db.prepare("SELECT COUNT(*) FROM sqlite_master");
        return tables.step() && tables.column_int64(0) == 0;
      }();
      if (empty) {
        db.exec(kSchemaV1);
        db.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};", kApplicationId, kLibraryVersion));
      }
      tx.commit();
      if (empty) return db;
      app = pragma_int(db, "application_id");
      version = pragma_int(db, "user_version");
    }
    if (app != kApplicationId) throw StoreError(name + ": not a kernelopt library file");
    if (version > kLibraryVersion) {
      throw StoreError(fmt::format("{}: library format {} is newer than this build reads ({})", name, version,
                                   kLibraryVersion));
    }
    return db;
  } catch (const StoreError& e) {
    const std::string what = e.what();
    if (what.rfind(name, 0) == 0) throw;
    if (what.find("not a database") != std::string::npos || what.find("malformed") != std::string::npos) {
      throw StoreError(name + ": not a kernelopt library file (not an SQLite database, or damaged)");
    }
    throw StoreError(name + ": cannot open the library: " + what);
  }
}

bool put_locked(Database& db, const LibraryEntry& in, PutResult& result, std::string* conflict, bool supersede) {
  LibraryEntry e = in;
  if (e.fingerprint.empty()) throw StoreError("library: an entry needs a fingerprint");
  if (!std::isfinite(e.speedup) || !std::isfinite(e.ci_low) || !std::isfinite(e.ci_high)) {
    throw StoreError("library: non-finite speedup for " + e.kernel_name);
  }
  if (e.source_hash.empty()) e.source_hash = util::sha256_hex(e.source);
  if (e.created_at.empty()) e.created_at = utc_now_iso8601();

  Statement sel = db.prepare(kColumns + "WHERE fingerprint = ?1");
  sel.bind(1, e.fingerprint);
  if (!sel.step()) {
    Statement ins = db.prepare(
        "INSERT INTO entries(fingerprint, kernel_name, kind, input_kind, original_source_hash, source, source_hash, "
        "code, config_json, grid_json, origin, speedup, ci_low, ci_high, device, torch_version, triton_version, "
        "run_id, run_out_dir, created_at, evidence_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)");
    bind_entry(ins, e);
    ins.run();
    result = PutResult::added;
    return true;
  }
  const LibraryEntry old = read_entry(sel);
  // the texts themselves, not the stored hashes: a damaged entry's hash may still name the good text
  if (old.source == e.source && old.code == e.code) {
    result = PutResult::unchanged;
    return false;
  }
  const bool faster = supersede || e.speedup > old.speedup;
  if (conflict && supersede) {
    *conflict = fmt::format("{} ({}): the stored winner {} failed this run's gates; replaced by {} ({:.3f}x)",
                            e.fingerprint.substr(0, 12), e.kernel_name, old.source_hash.substr(0, 8),
                            e.source_hash.substr(0, 8), e.speedup);
  } else if (conflict) {
    *conflict = fmt::format("{} ({}): kept the {} winner, {:.3f}x ({}) over {:.3f}x ({})",
                            e.fingerprint.substr(0, 12), e.kernel_name, faster ? "incoming" : "existing",
                            faster ? e.speedup : old.speedup, faster ? e.source_hash.substr(0, 8) : old.source_hash.substr(0, 8),
                            faster ? old.speedup : e.speedup, faster ? old.source_hash.substr(0, 8) : e.source_hash.substr(0, 8));
  }
  if (!faster) {
    result = PutResult::kept_existing;
    return false;
  }
  Statement upd = db.prepare(
      "UPDATE entries SET fingerprint = ?1, kernel_name = ?2, kind = ?3, input_kind = ?4, original_source_hash = ?5, "
      "source = ?6, source_hash = ?7, code = ?8, config_json = ?9, grid_json = ?10, origin = ?11, speedup = ?12, "
      "ci_low = ?13, ci_high = ?14, device = ?15, torch_version = ?16, triton_version = ?17, run_id = ?18, "
      "run_out_dir = ?19, created_at = ?20, evidence_json = ?21 WHERE id = ?22");
  bind_entry(upd, e);
  upd.bind(22, old.id);
  upd.run();
  result = PutResult::replaced;
  return true;
}

}  // namespace

const char* to_string(PutResult r) {
  switch (r) {
    case PutResult::added: return "added";
    case PutResult::replaced: return "replaced";
    case PutResult::kept_existing: return "kept existing";
    case PutResult::unchanged: return "unchanged";
  }
  return "?";
}

Library Library::open(const fs::path& path) {
  const auto parent = path.parent_path();
  if (!parent.empty() && !fs::is_directory(parent)) {
    throw StoreError(path.string() + ": cannot create the library: directory '" + parent.string() + "' does not exist");
  }
  if (fs::is_directory(path)) throw StoreError(path.string() + ": is a directory, not a library file");
  return Library(open_library(path), path);
}

Library Library::open_existing(const fs::path& path) {
  if (!fs::is_regular_file(path)) throw StoreError(path.string() + ": no such library file");
  if (fs::file_size(path) == 0) throw StoreError(path.string() + ": not a kernelopt library file (empty)");
  return Library(open_library(path), path);
}

std::optional<LibraryEntry> Library::find(const std::string& fingerprint) {
  Statement st = db_.prepare(kColumns + "WHERE fingerprint = ?1");
  st.bind(1, fingerprint);
  if (!st.step()) return std::nullopt;
  return read_entry(st);
}

std::optional<LibraryEntry> Library::get(const std::string& key) {
  if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 6) {
    Statement st = db_.prepare(kColumns + "WHERE id = ?1");
    st.bind(1, static_cast<std::int64_t>(std::stoll(key)));
    if (st.step()) return read_entry(st);
    return std::nullopt;
  }
  if (key.size() < 6) return std::nullopt;
  Statement st = db_.prepare(kColumns + "WHERE substr(fingerprint, 1, ?1) = ?2 LIMIT 2");
  st.bind(1, static_cast<std::int64_t>(key.size())).bind(2, key);
  if (!st.step()) return std::nullopt;
  LibraryEntry e = read_entry(st);
  if (st.step()) return std::nullopt;  // ambiguous prefix
  return e;
}

std::vector<LibraryEntry> Library::entries() {
  Statement st = db_.prepare(kColumns + "ORDER BY id");
  std::vector<LibraryEntry> out;
  while (st.step()) out.push_back(read_entry(st));
  return out;
}

PutResult Library::put(const LibraryEntry& entry, std::string* conflict, bool supersede) {
  Transaction tx(db_);
  PutResult result{};
  if (put_locked(db_, entry, result, conflict, supersede)) tx.commit();
  return result;
}

MergeReport Library::merge_from(Library& from) {
  MergeReport report;
  const auto incoming = from.entries();
  Transaction tx(db_);
  for (const auto& e : incoming) {
    PutResult r{};
    std::string conflict;
    put_locked(db_, e, r, &conflict, false);
    switch (r) {
      case PutResult::added: ++report.added; break;
      case PutResult::replaced: ++report.replaced; break;
      case PutResult::kept_existing: ++report.kept_existing; break;
      case PutResult::unchanged: ++report.unchanged; break;
    }
    if (!conflict.empty()) report.conflicts.push_back(conflict);
  }
  tx.commit();
  return report;
}

}  // namespace kernelopt::store
