/// \file
/// The workspace store: one SQLite database per workspace that records runs,
/// the kernels they found, every candidate (by source hash), every gate
/// verdict with its evidence, timing samples and LLM exchanges — so runs can be reported,
/// replayed and resumed. Contract: the schema is versioned with
/// PRAGMA user_version and migrated forward on open (a newer file than this
/// build knows is refused); every multi-statement write is one transaction;
/// all failures throw StoreError; *_json columns hold nlohmann::json
/// (a null json is stored as SQL NULL and read back as null). Timestamps are
/// UTC ISO-8601 with milliseconds ("2025-01-31T12:00:00.000Z").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.hpp"

namespace kernelopt::store {

struct RunRecord {
  std::int64_t id = 0;
  std::string created_at;   // UTC ISO-8601; filled on create if empty
  std::string input_path;   // the model/output code the run optimizes
  std::string input_hash;   // hash of that input
  std::string out_dir;      // run directory
  std::string status;       // free text, e.g. running|done|failed
  nlohmann::json options;   // the options the run was started with
  nlohmann::json summary;   // set when the run ends
  std::string finished_at;  // UTC ISO-8601; "" while unfinished
};

struct KernelRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  int module = 0;            // index of the output module holding the kernel
  std::string name;
  std::string kind;          // e.g. pointwise|reduction|persistent_reduction|template
  std::string source_hash;
  nlohmann::json profile;    // the kernel's profile (times, launches)
};

struct CandidateRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  int module = 0;
  std::string kernel;        // name of the kernel it replaces
  std::string source_hash;
  std::string origin;        // which agent/rule produced it
  nlohmann::json meta;       // launch meta-parameters and the like
  std::string status;        // pending|rejected|passed|kept|skipped; "" means pending on insert
  std::string created_at;    // UTC ISO-8601; filled on insert
};

struct VerdictRecord {
  std::int64_t id = 0;
  std::int64_t candidate_id = 0;
  std::string gate;
  bool passed = false;
  std::string reason;
  nlohmann::json evidence;
  std::string created_at;    // UTC ISO-8601; filled on insert if empty
};

struct TimingRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::optional<std::int64_t> candidate_id;  // none for baseline timings
  std::string label;
  std::string unit;                          // unit of every sample, e.g. "ms"
  std::vector<double> samples;               // in `unit`
  std::string created_at;
};

/// One question to a language model and its answer (see agents/llm_session.hpp).
/// Never holds an API key: requests carry none, and the session redacts every
/// configured key's value from both texts before storing them.
struct LlmExchangeRecord {
  std::int64_t id = 0;
  std::string created_at;     // UTC ISO-8601; filled on insert if empty
  std::int64_t run_id = 0;
  std::string agent;          // the role that asked: profiler|planner|coder|repairer|tuner
  std::string tag;            // ChatRequest::tag, e.g. "coder.<kernel>.0"
  std::string provider;       // Provider::name(), e.g. "openai:gpt-4.1"
  std::string model;          // the model asked for ("" = the provider's own)
  std::string request_hash;   // llm::request_hash() of the request
  std::string request_json;   // llm::canonical_request() of the request
  std::string response_text;  // the answer's text
  long long input_tokens = 0;
  long long output_tokens = 0;
  double cost_usd = 0;
};

/// Current UTC time as ISO-8601 with milliseconds.
std::string utc_now_iso8601();

class Store {
 public:
  /// Opens or creates the database at `db_path` and migrates its schema.
  /// The parent directory must exist (StoreError naming the path otherwise). A file that is damaged or
  /// not a database is a StoreError naming the path and how to recover (move it aside: its verdicts are
  /// lost, the kernel library, a file of its own, is not); so is one that fails `verify`.
  static Store open(const std::filesystem::path& db_path, bool verify = false);

  Store(Store&&) noexcept = default;
  Store& operator=(Store&&) noexcept = default;

  /// Returns the new run's id; created_at is filled if empty.
  std::int64_t create_run(const RunRecord& run);
  /// Sets the status; sets finished_at when status is "done" or "failed";
  /// replaces the summary unless `summary` is null. Throws if no such run.
  void set_run_status(std::int64_t run_id, const std::string& status, const nlohmann::json& summary = nullptr);
  std::optional<RunRecord> run(std::int64_t id);
  std::vector<RunRecord> runs();  // oldest first
  std::optional<RunRecord> latest_run_for_out_dir(const std::string& out_dir);

  /// Inserts or replaces the kernel keyed by (run_id, module, name).
  void upsert_kernel(std::int64_t run_id, int module, const std::string& name, const std::string& kind,
                     const std::string& source_hash, const nlohmann::json& profile);
  std::vector<KernelRecord> kernels(std::int64_t run_id);  // by module, then name

  /// Adds a candidate unless one with the same (run, module, kernel, source_hash)
  /// exists; returns {the stored record, inserted}.
  std::pair<CandidateRecord, bool> add_candidate(const CandidateRecord& candidate);
  /// status must be pending|rejected|passed|kept|skipped (the schema's CHECK). Throws if no such candidate.
  void set_candidate_status(std::int64_t candidate_id, const std::string& status);
  std::vector<CandidateRecord> candidates(std::int64_t run_id);  // in insertion order

  /// Records one gate verdict; returns its id. The candidate must exist.
  std::int64_t add_verdict(const VerdictRecord& verdict);
  std::vector<VerdictRecord> verdicts(std::int64_t candidate_id);  // in insertion order

  /// Records timing samples (all in `unit`); returns the row id.
  std::int64_t add_timing(std::int64_t run_id, std::optional<std::int64_t> candidate_id, const std::string& label,
                          const std::string& unit, const std::vector<double>& samples);
  std::vector<TimingRecord> timings(std::int64_t run_id);  // in insertion order

  /// Records one LLM exchange; returns its id. The run must exist.
  std::int64_t add_llm_exchange(const LlmExchangeRecord& exchange);
  /// The newest exchange with this (provider, model, request_hash), from any run.
  std::optional<LlmExchangeRecord> find_llm_exchange(const std::string& provider, const std::string& model,
                                                     const std::string& request_hash);
  std::vector<LlmExchangeRecord> llm_exchanges(std::int64_t run_id);  // in insertion order

  /// PRAGMA integrity_check reports "ok".
  bool integrity_ok();

 private:
  explicit Store(Database db) : db_(std::move(db)) {}
  Database db_;
};

}  // namespace kernelopt::store
