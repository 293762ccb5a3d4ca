#include "store/store.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <sqlite3.h>

#include "store/json_columns.hpp"
#include "store/schema.hpp"

namespace kernelopt::store {
namespace {

using nlohmann::json;


void bind_text_or_null(Statement& st, int idx, const std::string& value) {
  if (value.empty())
    st.bind(idx, nullptr);
  else
    st.bind(idx, value);
}


const std::string kRunColumns =
    "SELECT id, created_at, input_path, input_hash, out_dir, status, options_json, finished_at, summary_json "
    "FROM runs ";

RunRecord read_run(const Statement& st) {
  RunRecord r;
  r.id = st.column_int64(0);
  r.created_at = st.column_text(1);
  r.input_path = st.column_text(2);
  r.input_hash = st.column_text(3);
  r.out_dir = st.column_text(4);
  r.status = st.column_text(5);
  r.options = read_json(st, 6, "store");
  r.finished_at = st.column_text(7);
  r.summary = read_json(st, 8, "store");
  return r;
}

const std::string kCandidateColumns =
    "SELECT id, run_id, module, kernel, source_hash, origin, meta_json, status, created_at FROM candidates ";

CandidateRecord read_candidate(const Statement& st) {
  CandidateRecord c;
  c.id = st.column_int64(0);
  c.run_id = st.column_int64(1);
  c.module = static_cast<int>(st.column_int64(2));
  c.kernel = st.column_text(3);
  c.source_hash = st.column_text(4);
  c.origin = st.column_text(5);
  c.meta = read_json(st, 6, "store");
  c.status = st.column_text(7);
  c.created_at = st.column_text(8);
  return c;
}

const std::string kLlmColumns =
    "SELECT id, created_at, run_id, agent, tag, provider, model, request_hash, request_json, response_text, "
    "input_tokens, output_tokens, cost_usd FROM llm_exchanges ";

LlmExchangeRecord read_llm_exchange(const Statement& st) {
  LlmExchangeRecord r;
  r.id = st.column_int64(0);
  r.created_at = st.column_text(1);
  r.run_id = st.column_int64(2);
  r.agent = st.column_text(3);
  r.tag = st.column_text(4);
  r.provider = st.column_text(5);
  r.model = st.column_text(6);
  r.request_hash = st.column_text(7);
  r.request_json = st.column_text(8);
  r.response_text = st.column_text(9);
  r.input_tokens = st.column_int64(10);
  r.output_tokens = st.column_int64(11);
  r.cost_usd = st.column_double(12);
  return r;
}

}  // namespace

std::string utc_now_iso8601() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t secs = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}

namespace {

/// SQLite's words in a StoreError message ("sqlite: exec failed: database disk image is malformed [SQL: ...]"):
/// what follows the last "failed: ", up to the SQL.
std::string reason(const std::string& message) {
  std::string text = message.substr(0, message.find(" [SQL: "));
  const size_t at = text.rfind(": ");
  return at == std::string::npos ? text : text.substr(at + 2);
}

}  // namespace

Store Store::open(const std::filesystem::path& db_path, bool verify) {
  const auto parent = db_path.parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw StoreError("store: cannot open '" + db_path.string() + "': directory '" + parent.string() +
                     "' does not exist");
  try {
    Database db = Database::open(db_path);
    if (verify) {
      // every page read once (SQLite's quick_check): a truncated file shows now, not mid-run
      Statement check = db.prepare("PRAGMA quick_check(1)");
      if (check.step() && check.column_text(0) != "ok") throw StoreError(check.column_text(0), SQLITE_CORRUPT);
    }
    migrate(db);
    return Store(std::move(db));
  } catch (const StoreError& e) {
    if (e.sqlite_code() != SQLITE_CORRUPT && e.sqlite_code() != SQLITE_NOTADB) throw;
    throw StoreError(db_path.string() + ": damaged or not a kernelopt store (" + reason(e.what()) +
                         "); move it aside (mv " + db_path.string() + " " + db_path.string() +
                         ".damaged) to start a new store: the verdicts and timings it holds are lost, the kernel "
                         "library (a file of its own) is not",
                     e.sqlite_code());
  }
}

// --- runs -------------------------------------------------------------------

std::int64_t Store::create_run(const RunRecord& run) {
  Statement st = db_.prepare(
      "INSERT INTO runs(created_at, input_path, input_hash, out_dir, status, options_json, finished_at, "
      "summary_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  st.bind(1, run.created_at.empty() ? utc_now_iso8601() : run.created_at)
      .bind(2, run.input_path)
      .bind(3, run.input_hash)
      .bind(4, run.out_dir)
      .bind(5, run.status);
  bind_json(st, 6, run.options);
  bind_text_or_null(st, 7, run.finished_at);
  bind_json(st, 8, run.summary);
  st.run();
  return db_.last_insert_rowid();
}

void Store::set_run_status(std::int64_t run_id, const std::string& status, const json& summary) {
  Statement st = db_.prepare(
      "UPDATE runs SET status = ?1, summary_json = COALESCE(?2, summary_json), "
      "finished_at = COALESCE(?3, finished_at) WHERE id = ?4");
  st.bind(1, status);
  bind_json(st, 2, summary);
  if (status == "done" || status == "failed")
    st.bind(3, utc_now_iso8601());
  else
    st.bind(3, nullptr);
  st.bind(4, run_id);
  st.run();
  if (db_.changes() == 0) throw StoreError("store: no run with id " + std::to_string(run_id));
}

std::optional<RunRecord> Store::run(std::int64_t id) {
  Statement st = db_.prepare(kRunColumns + "WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_run(st);
}

std::vector<RunRecord> Store::runs() {
  Statement st = db_.prepare(kRunColumns + "ORDER BY id");
  std::vector<RunRecord> out;
  while (st.step()) out.push_back(read_run(st));
  return out;
}

std::optional<RunRecord> Store::latest_run_for_out_dir(const std::string& out_dir) {
  Statement st = db_.prepare(kRunColumns + "WHERE out_dir = ?1 ORDER BY id DESC LIMIT 1");
  st.bind(1, out_dir);
  if (!st.step()) return std::nullopt;
  return read_run(st);
}

// --- kernels ----------------------------------------------------------------

void Store::upsert_kernel(std::int64_t run_id, int module, const std::string& name, const std::string& kind,
                          const std::string& source_hash, const json& profile) {
  Statement st = db_.prepare(
      "INSERT INTO kernels(run_id, module, name, kind, source_hash, profile_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
      "ON CONFLICT(run_id, module, name) DO UPDATE SET kind = excluded.kind, "
      "source_hash = excluded.source_hash, profile_json = excluded.profile_json");
  st.bind(1, run_id).bind(2, module).bind(3, name).bind(4, kind).bind(5, source_hash);
  bind_json(st, 6, profile);
  st.run();
}

std::vector<KernelRecord> Store::kernels(std::int64_t run_id) {
  Statement st = db_.prepare(
      "SELECT id, run_id, module, name, kind, source_hash, profile_json FROM kernels WHERE run_id = ?1 "
      "ORDER BY module, name");
  st.bind(1, run_id);
  std::vector<KernelRecord> out;
  while (st.step()) {
    out.push_back({st.column_int64(0), st.column_int64(1), static_cast<int>(st.column_int64(2)), st.column_text(3),
                   st.column_text(4), st.column_text(5), read_json(st, 6, "store")});
  }
  return out;
}

// --- candidates -------------------------------------------------------------

std::pair<CandidateRecord, bool> Store::add_candidate(const CandidateRecord& candidate) {
  CandidateRecord rec = candidate;
  if (rec.status.empty()) rec.status = "pending";
  if (rec.created_at.empty()) rec.created_at = utc_now_iso8601();

  Transaction tx(db_);
  Statement ins = db_.prepare(
      "INSERT INTO candidates(run_id, module, kernel, source_hash, origin, meta_json, status, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT(run_id, module, kernel, source_hash) DO NOTHING");
  ins.bind(1, rec.run_id).bind(2, rec.module).bind(3, rec.kernel).bind(4, rec.source_hash).bind(5, rec.origin);
  bind_json(ins, 6, rec.meta);
  ins.bind(7, rec.status).bind(8, rec.created_at);
  ins.run();
  if (db_.changes() == 1) {
    rec.id = db_.last_insert_rowid();
    tx.commit();
    return {rec, true};
  }

  Statement sel = db_.prepare(kCandidateColumns +
                              "WHERE run_id = ?1 AND module = ?2 AND kernel = ?3 AND source_hash = ?4");
  sel.bind(1, rec.run_id).bind(2, rec.module).bind(3, rec.kernel).bind(4, rec.source_hash);
  if (!sel.step()) throw StoreError("store: candidate conflict but no existing row for " + rec.kernel);
  CandidateRecord existing = read_candidate(sel);
  tx.commit();
  return {existing, false};
}

void Store::set_candidate_status(std::int64_t candidate_id, const std::string& status) {
  Statement st = db_.prepare("UPDATE candidates SET status = ?1 WHERE id = ?2");
  st.bind(1, status).bind(2, candidate_id);
  st.run();
  if (db_.changes() == 0) throw StoreError("store: no candidate with id " + std::to_string(candidate_id));
}

std::vector<CandidateRecord> Store::candidates(std::int64_t run_id) {
  Statement st = db_.prepare(kCandidateColumns + "WHERE run_id = ?1 ORDER BY id");
  st.bind(1, run_id);
  std::vector<CandidateRecord> out;
  while (st.step()) out.push_back(read_candidate(st));
  return out;
}

// --- verdicts ---------------------------------------------------------------

std::int64_t Store::add_verdict(const VerdictRecord& verdict) {
  Statement st = db_.prepare(
      "INSERT INTO verdicts(candidate_id, gate, passed, reason, evidence_json, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  st.bind(1, verdict.candidate_id).bind(2, verdict.gate).bind(3, verdict.passed ? 1 : 0).bind(4, verdict.reason);
  bind_json(st, 5, verdict.evidence);
  st.bind(6, verdict.created_at.empty() ? utc_now_iso8601() : verdict.created_at);
  st.run();
  return db_.last_insert_rowid();
}

std::vector<VerdictRecord> Store::verdicts(std::int64_t candidate_id) {
  Statement st = db_.prepare(
      "SELECT id, candidate_id, gate, passed, reason, evidence_json, created_at FROM verdicts "
      "WHERE candidate_id = ?1 ORDER BY id");
  st.bind(1, candidate_id);
  std::vector<VerdictRecord> out;
  while (st.step()) {
    out.push_back({st.column_int64(0), st.column_int64(1), st.column_text(2), st.column_int64(3) != 0,
                   st.column_text(4), read_json(st, 5, "store"), st.column_text(6)});
  }
  return out;
}

// --- timings ----------------------------------------------------------------

std::int64_t Store::add_timing(std::int64_t run_id, std::optional<std::int64_t> candidate_id, const std::string& label,
                               const std::string& unit, const std::vector<double>& samples) {
  for (double s : samples) {
    if (!std::isfinite(s)) throw StoreError("store: non-finite timing sample for '" + label + "'");
  }
  Statement st = db_.prepare(
      "INSERT INTO timings(run_id, candidate_id, label, unit, samples_json, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  st.bind(1, run_id);
  if (candidate_id)
    st.bind(2, *candidate_id);
  else
    st.bind(2, nullptr);
  st.bind(3, label).bind(4, unit).bind(5, json(samples).dump()).bind(6, utc_now_iso8601());
  st.run();
  return db_.last_insert_rowid();
}

std::vector<TimingRecord> Store::timings(std::int64_t run_id) {
  Statement st = db_.prepare(
      "SELECT id, run_id, candidate_id, label, unit, samples_json, created_at FROM timings "
      "WHERE run_id = ?1 ORDER BY id");
  st.bind(1, run_id);
  std::vector<TimingRecord> out;
  while (st.step()) {
    TimingRecord t;
    t.id = st.column_int64(0);
    t.run_id = st.column_int64(1);
    if (!st.column_is_null(2)) t.candidate_id = st.column_int64(2);
    t.label = st.column_text(3);
    t.unit = st.column_text(4);
    t.samples = read_json(st, 5, "store").get<std::vector<double>>();
    t.created_at = st.column_text(6);
    out.push_back(std::move(t));
  }
  return out;
}

// --- LLM exchanges ------------------------------------------------------------

std::int64_t Store::add_llm_exchange(const LlmExchangeRecord& e) {
  if (!std::isfinite(e.cost_usd)) throw StoreError("store: non-finite LLM cost for '" + e.tag + "'");
  Statement st = db_.prepare(
      "INSERT INTO llm_exchanges(created_at, run_id, agent, tag, provider, model, request_hash, request_json, "
      "response_text, input_tokens, output_tokens, cost_usd) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  st.bind(1, e.created_at.empty() ? utc_now_iso8601() : e.created_at)
      .bind(2, e.run_id)
      .bind(3, e.agent)
      .bind(4, e.tag)
      .bind(5, e.provider)
      .bind(6, e.model)
      .bind(7, e.request_hash)
      .bind(8, e.request_json)
      .bind(9, e.response_text)
      .bind(10, static_cast<std::int64_t>(e.input_tokens))
      .bind(11, static_cast<std::int64_t>(e.output_tokens))
      .bind(12, e.cost_usd);
  st.run();
  return db_.last_insert_rowid();
}

std::optional<LlmExchangeRecord> Store::find_llm_exchange(const std::string& provider, const std::string& model,
                                                          const std::string& request_hash) {
  Statement st = db_.prepare(kLlmColumns +
                             "WHERE provider = ?1 AND model = ?2 AND request_hash = ?3 ORDER BY id DESC LIMIT 1");
  st.bind(1, provider).bind(2, model).bind(3, request_hash);
  if (!st.step()) return std::nullopt;
  return read_llm_exchange(st);
}

std::vector<LlmExchangeRecord> Store::llm_exchanges(std::int64_t run_id) {
  Statement st = db_.prepare(kLlmColumns + "WHERE run_id = ?1 ORDER BY id");
  st.bind(1, run_id);
  std::vector<LlmExchangeRecord> out;
  while (st.step()) out.push_back(read_llm_exchange(st));
  return out;
}

bool Store::integrity_ok() {
  Statement st = db_.prepare("PRAGMA integrity_check");
  return st.step() && st.column_text(0) == "ok" && !st.step();
}

}  // namespace kernelopt::store
