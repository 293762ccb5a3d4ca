// Tests for store/store.hpp: schema, round trips, dedup, reopen, concurrency.
#include "store/store.hpp"
#include "store/schema.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <type_traits>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kernelopt::store;

namespace {

// A few rows with ids that are not 1, 2, 3 (a gap where a row was never kept), so a copy that renumbers shows.
constexpr const char* kVersionTwoRows = R"sql(
INSERT INTO runs(id, created_at, input_path, input_hash, out_dir, status) VALUES
  (7, '2025-01-31T12:00:00.000Z', 'net.py', 'sha256:abc', '/runs/old', 'done');
INSERT INTO kernels(id, run_id, module, name, kind, source_hash) VALUES (2, 7, 0, 'k0', 'pointwise', 'hk');
INSERT INTO candidates(id, run_id, module, kernel, source_hash, origin, meta_json, status, created_at) VALUES
  (3, 7, 0, 'k0', 'h1', 'tuner', '{"XBLOCK":1024}', 'rejected', '2025-01-31T12:00:01.000Z'),
  (5, 7, 0, 'k0', 'h2', 'coder', NULL, 'kept', '2025-01-31T12:00:02.000Z'),
  (9, 7, -1, 'decision', 'cudagraphs', 'decisions', '{"mode":null}', 'pending', '2025-01-31T12:00:03.000Z');
INSERT INTO verdicts(id, candidate_id, gate, passed, reason, evidence_json, created_at) VALUES
  (11, 3, 'correctness', 0, 'max_abs_err 0.5', '{"max_abs_err":0.5}', '2025-01-31T12:00:04.000Z'),
  (12, 5, 'performance', 1, 'kernel 1.2x', NULL, '2025-01-31T12:00:05.000Z'),
  (14, 9, 'decision', 0, 'CUDA graphs need a CUDA device', '{"status":"skipped"}', '2025-01-31T12:00:06.000Z');
INSERT INTO timings(id, run_id, candidate_id, label, unit, samples_json, created_at) VALUES
  (20, 7, NULL, 'baseline:model', 'ms', '[1.5,1.25]', '2025-01-31T12:00:07.000Z'),
  (21, 7, 5, 'kernel_candidate', 'ms', '[0.5]', '2025-01-31T12:00:08.000Z');
)sql";

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("kernelopt-store-" + std::to_string(rd()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path db_path() const { return dir_ / "kernelopt.db"; }

  // Reads one value with the raw C API, bypassing the wrapper's own pragmas.
  std::string raw_query(const std::string& sql) const {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  static RunRecord make_run(const std::string& out_dir) {
    RunRecord r;
    r.input_path = "/models/resnet_output_code.py";
    r.input_hash = "sha256:abc";
    r.out_dir = out_dir;
    r.status = "running";
    r.options = {{"agents", {"coder", "tuner"}}, {"max_candidates", 8}};
    return r;
  }

  static CandidateRecord make_candidate(std::int64_t run_id, const std::string& hash) {
    CandidateRecord c;
    c.run_id = run_id;
    c.module = 0;
    c.kernel = "triton_poi_fused_add_relu_0";
    c.source_hash = hash;
    c.origin = "tuner";
    c.meta = {{"XBLOCK", 1024}, {"num_warps", 4}};
    return c;
  }

  fs::path dir_;
};

TEST_F(StoreTest, CreatesVersionedSchemaInWalMode) {
  Store store = Store::open(db_path());
  EXPECT_EQ(raw_query("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(raw_query("PRAGMA journal_mode"), "wal");  // persisted in the file, not just this connection
  for (const char* table : {"runs", "kernels", "candidates", "verdicts", "timings", "llm_exchanges"}) {
    EXPECT_EQ(raw_query(std::string("SELECT name FROM sqlite_master WHERE type='table' AND name='") + table + "'"),
              table);
  }
  EXPECT_TRUE(store.integrity_ok());
}

TEST_F(StoreTest, RunsRoundTrip) {
  Store store = Store::open(db_path());
  const std::int64_t id = store.create_run(make_run("/runs/a"));
  auto got = store.run(id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, id);
  EXPECT_EQ(got->input_path, "/models/resnet_output_code.py");
  EXPECT_EQ(got->input_hash, "sha256:abc");
  EXPECT_EQ(got->status, "running");
  EXPECT_EQ(got->options, make_run("").options);
  EXPECT_TRUE(got->summary.is_null());
  EXPECT_EQ(got->finished_at, "");
  ASSERT_EQ(got->created_at.size(), 24u) << got->created_at;  // 2025-01-31T12:00:00.000Z
  EXPECT_EQ(got->created_at.back(), 'Z');

  store.set_run_status(id, "done", {{"kept", 2}});
  got = store.run(id);
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->summary, json({{"kept", 2}}));
  EXPECT_FALSE(got->finished_at.empty());

  store.set_run_status(id, "reported");  // null summary keeps the old one
  EXPECT_EQ(store.run(id)->summary, json({{"kept", 2}}));

  EXPECT_FALSE(store.run(id + 100).has_value());
  EXPECT_THROW(store.set_run_status(id + 100, "done"), StoreError);
}

TEST_F(StoreTest, RunningStatusLeavesFinishedAtEmpty) {
  Store store = Store::open(db_path());
  const std::int64_t id = store.create_run(make_run("/runs/a"));
  store.set_run_status(id, "verifying");
  EXPECT_EQ(store.run(id)->finished_at, "");
  store.set_run_status(id, "failed");
  EXPECT_FALSE(store.run(id)->finished_at.empty());
}

TEST_F(StoreTest, LatestRunForOutDir) {
  Store store = Store::open(db_path());
  const std::int64_t a1 = store.create_run(make_run("/runs/a"));
  const std::int64_t b1 = store.create_run(make_run("/runs/b"));
  const std::int64_t a2 = store.create_run(make_run("/runs/a"));
  EXPECT_EQ(store.latest_run_for_out_dir("/runs/a")->id, a2);
  EXPECT_EQ(store.latest_run_for_out_dir("/runs/b")->id, b1);
  EXPECT_FALSE(store.latest_run_for_out_dir("/runs/c").has_value());
  const auto all = store.runs();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, a1);
  EXPECT_EQ(all[2].id, a2);
}

TEST_F(StoreTest, UpsertKernelReplacesByKey) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  store.upsert_kernel(run, 0, "triton_red_fused_sum_1", "reduction", "h1", {{"ms", 0.5}});
  store.upsert_kernel(run, 0, "triton_red_fused_sum_1", "reduction", "h2", {{"ms", 0.4}});
  store.upsert_kernel(run, 1, "triton_red_fused_sum_1", "reduction", "h3", nullptr);
  const auto ks = store.kernels(run);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].module, 0);
  EXPECT_EQ(ks[0].source_hash, "h2");
  EXPECT_EQ(ks[0].profile, json({{"ms", 0.4}}));
  EXPECT_EQ(ks[1].module, 1);
  EXPECT_TRUE(ks[1].profile.is_null());
}

TEST_F(StoreTest, DuplicateCandidateIsNotInserted) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  auto [first, inserted] = store.add_candidate(make_candidate(run, "h1"));
  EXPECT_TRUE(inserted);
  EXPECT_GT(first.id, 0);
  EXPECT_EQ(first.status, "pending");

  CandidateRecord again = make_candidate(run, "h1");
  again.origin = "coder";
  auto [second, inserted_again] = store.add_candidate(again);
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(second.origin, "tuner");  // the stored record, not the rejected one
  EXPECT_EQ(second.meta, first.meta);

  auto [other, inserted_other] = store.add_candidate(make_candidate(run, "h2"));
  EXPECT_TRUE(inserted_other);
  EXPECT_NE(other.id, first.id);
  EXPECT_EQ(store.candidates(run).size(), 2u);
}

TEST_F(StoreTest, CandidateStatusIsChecked) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  const auto c = store.add_candidate(make_candidate(run, "h1")).first;
  store.set_candidate_status(c.id, "kept");
  EXPECT_EQ(store.candidates(run).at(0).status, "kept");
  EXPECT_THROW(store.set_candidate_status(c.id, "maybe"), StoreError);
  EXPECT_THROW(store.set_candidate_status(c.id + 100, "kept"), StoreError);
  EXPECT_EQ(store.candidates(run).at(0).status, "kept");
}

TEST_F(StoreTest, CandidateForMissingRunLeavesNoRow) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  EXPECT_THROW(store.add_candidate(make_candidate(run + 100, "h1")), StoreError);  // foreign key
  EXPECT_TRUE(store.candidates(run + 100).empty());
  // The failed transaction was rolled back: the connection writes normally after it.
  EXPECT_TRUE(store.add_candidate(make_candidate(run, "h1")).second);
}

TEST_F(StoreTest, VerdictsRoundTripWithEvidence) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  const auto c = store.add_candidate(make_candidate(run, "h1")).first;
  const json evidence = {{"max_abs_err", 3.5e-7}, {"seeds", {0, 1, 2}}, {"nan_positions_match", true}};
  store.add_verdict({0, c.id, "correctness", true, "all seeds within tolerance", evidence, ""});
  store.add_verdict({0, c.id, "performance", false, "ci_low 0.97 <= 1.0", {{"ci_low", 0.97}}, ""});

  const auto vs = store.verdicts(c.id);
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].gate, "correctness");
  EXPECT_TRUE(vs[0].passed);
  EXPECT_EQ(vs[0].evidence, evidence);
  EXPECT_FALSE(vs[0].created_at.empty());
  EXPECT_EQ(vs[1].gate, "performance");
  EXPECT_FALSE(vs[1].passed);
  EXPECT_EQ(vs[1].reason, "ci_low 0.97 <= 1.0");
  EXPECT_DOUBLE_EQ(vs[1].evidence.at("ci_low").get<double>(), 0.97);

  EXPECT_THROW(store.add_verdict({0, c.id + 100, "static", true, "", nullptr, ""}), StoreError);
  EXPECT_TRUE(store.verdicts(c.id + 100).empty());
}

TEST_F(StoreTest, TimingsRoundTrip) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  const auto c = store.add_candidate(make_candidate(run, "h1")).first;
  store.add_timing(run, std::nullopt, "baseline:model", "ms", {1.25, 1.5, 1.0});
  store.add_timing(run, c.id, "candidate:kernel", "us", {10.0});
  EXPECT_THROW(store.add_timing(run, std::nullopt, "bad", "ms", {std::nan("")}), StoreError);

  const auto ts = store.timings(run);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_FALSE(ts[0].candidate_id.has_value());
  EXPECT_EQ(ts[0].unit, "ms");
  EXPECT_EQ(ts[0].samples, (std::vector<double>{1.25, 1.5, 1.0}));
  EXPECT_EQ(ts[1].candidate_id, c.id);
  EXPECT_EQ(ts[1].label, "candidate:kernel");
}

TEST_F(StoreTest, ReopenKeepsData) {
  std::int64_t run = 0, cand = 0;
  {
    Store store = Store::open(db_path());
    run = store.create_run(make_run("/runs/a"));
    cand = store.add_candidate(make_candidate(run, "h1")).first.id;
    store.add_verdict({0, cand, "static", true, "ok", {{"imports", {"triton"}}}, ""});
  }
  Store store = Store::open(db_path());
  ASSERT_TRUE(store.run(run).has_value());
  EXPECT_EQ(store.run(run)->out_dir, "/runs/a");
  ASSERT_EQ(store.candidates(run).size(), 1u);
  EXPECT_EQ(store.candidates(run)[0].id, cand);
  EXPECT_EQ(store.verdicts(cand).size(), 1u);
  EXPECT_TRUE(store.integrity_ok());
}

TEST_F(StoreTest, OpenInMissingDirectoryNamesPath) {
  const fs::path bad = dir_ / "missing" / "kernelopt.db";
  try {
    Store::open(bad);
    FAIL() << "open did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(bad.parent_path()));
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  { Store::open(db_path()); }
  {
    Database db = Database::open(db_path());
    db.exec("PRAGMA user_version = 99");
  }
  EXPECT_THROW(Store::open(db_path()), StoreError);
  EXPECT_EQ(raw_query("PRAGMA user_version"), "99");
}

TEST_F(StoreTest, TwoConnectionsInterleaveWrites) {
  Store a = Store::open(db_path());
  Store b = Store::open(db_path());
  const std::int64_t run_a = a.create_run(make_run("/runs/a"));
  const std::int64_t run_b = b.create_run(make_run("/runs/b"));
  for (int i = 0; i < 20; ++i) {
    a.add_candidate(make_candidate(run_a, "a" + std::to_string(i)));
    b.add_candidate(make_candidate(run_b, "b" + std::to_string(i)));
    b.add_candidate(make_candidate(run_a, "b" + std::to_string(i)));  // same run from the other side
  }
  EXPECT_EQ(a.runs().size(), 2u);
  EXPECT_EQ(b.candidates(run_a).size(), 40u);
  EXPECT_EQ(a.candidates(run_b).size(), 20u);
  std::set<std::int64_t> ids;
  for (const auto& c : a.candidates(run_a)) ids.insert(c.id);
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_TRUE(a.integrity_ok());
}

TEST_F(StoreTest, StoreIsMovable) {
  static_assert(std::is_nothrow_move_constructible_v<Store>);
  static_assert(std::is_nothrow_move_assignable_v<Store>);
  Store a = Store::open(db_path());
  const std::int64_t run = a.create_run(make_run("/runs/a"));
  Store b = std::move(a);
  EXPECT_EQ(b.run(run)->out_dir, "/runs/a");
}

TEST_F(StoreTest, LlmExchangesRoundTripAndAreFoundByKey) {
  Store store = Store::open(db_path());
  const std::int64_t run1 = store.create_run(make_run("/runs/a"));
  const std::int64_t run2 = store.create_run(make_run("/runs/b"));
  LlmExchangeRecord e;
  e.run_id = run1;
  e.agent = "coder";
  e.tag = "coder.triton_poi_0.0";
  e.provider = "openai:gpt-test";
  e.model = "gpt-test";
  e.request_hash = std::string(64, 'a');
  e.request_json = R"({"messages":[]})";
  e.response_text = "```python\n...\n```";
  e.input_tokens = 1200;
  e.output_tokens = 345;
  e.cost_usd = 0.0125;
  const std::int64_t id1 = store.add_llm_exchange(e);
  e.response_text = "newer answer";
  e.run_id = run2;
  const std::int64_t id2 = store.add_llm_exchange(e);
  EXPECT_GT(id2, id1);

  auto found = store.find_llm_exchange("openai:gpt-test", "gpt-test", std::string(64, 'a'));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, id2);  // the newest, from any run
  EXPECT_EQ(found->response_text, "newer answer");
  EXPECT_EQ(found->agent, "coder");
  EXPECT_EQ(found->tag, "coder.triton_poi_0.0");
  EXPECT_EQ(found->input_tokens, 1200);
  EXPECT_EQ(found->output_tokens, 345);
  EXPECT_DOUBLE_EQ(found->cost_usd, 0.0125);
  EXPECT_FALSE(found->created_at.empty());
  EXPECT_FALSE(store.find_llm_exchange("openai:other", "gpt-test", std::string(64, 'a')));
  EXPECT_FALSE(store.find_llm_exchange("openai:gpt-test", "", std::string(64, 'a')));
  EXPECT_FALSE(store.find_llm_exchange("openai:gpt-test", "gpt-test", std::string(64, 'b')));

  auto of_run1 = store.llm_exchanges(run1);
  ASSERT_EQ(of_run1.size(), 1u);
  EXPECT_EQ(of_run1[0].id, id1);
  EXPECT_EQ(of_run1[0].response_text, "```python\n...\n```");
  EXPECT_EQ(of_run1[0].request_json, R"({"messages":[]})");
  EXPECT_EQ(store.llm_exchanges(run2).size(), 1u);
  EXPECT_TRUE(store.llm_exchanges(run2 + 100).empty());

  e.run_id = run2 + 100;  // no such run: the foreign key refuses it
  EXPECT_THROW(store.add_llm_exchange(e), StoreError);
}

TEST_F(StoreTest, VersionOneFilesMigrateForward) {
  std::int64_t run = 0;
  {
    Store store = Store::open(db_path());
    run = store.create_run(make_run("/runs/old"));
  }
  {  // make the file look like one written by a build that knew only version 1
    Database db = Database::open(db_path());
    db.exec("DROP TABLE llm_exchanges; PRAGMA user_version = 1");
  }
  EXPECT_EQ(raw_query("PRAGMA user_version"), "1");
  Store store = Store::open(db_path());
  EXPECT_EQ(raw_query("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(store.run(run)->out_dir, "/runs/old");  // old rows kept
  LlmExchangeRecord e;
  e.run_id = run;
  e.agent = "planner";
  e.provider = "exec:cat";
  e.request_hash = "h";
  EXPECT_GT(store.add_llm_exchange(e), 0);
  EXPECT_TRUE(store.integrity_ok());
}

TEST_F(StoreTest, VersionTwoFilesMigrateToThreeKeepingEveryRowIdAndForeignKey) {
  {
    Database db = Database::open(db_path());
    migrate(db, 2);  // the file a build that knew versions 1 and 2 wrote (their released steps)
    db.exec(kVersionTwoRows);
    // version 2 refuses 'skipped'
    EXPECT_THROW(db.exec("UPDATE candidates SET status = 'skipped' WHERE id = 9"), StoreError);
  }
  EXPECT_EQ(raw_query("PRAGMA user_version"), "2");

  Store store = Store::open(db_path());
  EXPECT_EQ(raw_query("PRAGMA user_version"), "3");
  EXPECT_EQ(raw_query("SELECT COUNT(*) FROM sqlite_master WHERE name = 'candidates_v3'"), "0");
  // the tables that refer to candidates still name it (not the table it was rebuilt as)
  EXPECT_NE(raw_query("SELECT sql FROM sqlite_master WHERE name = 'verdicts'").find("REFERENCES candidates(id)"),
            std::string::npos);
  EXPECT_NE(raw_query("SELECT sql FROM sqlite_master WHERE name = 'timings'").find("REFERENCES candidates(id)"),
            std::string::npos);

  ASSERT_TRUE(store.run(7).has_value());
  EXPECT_EQ(store.run(7)->out_dir, "/runs/old");
  ASSERT_EQ(store.kernels(7).size(), 1u);
  EXPECT_EQ(store.kernels(7)[0].id, 2);
  const auto cs = store.candidates(7);
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[0].id, 3);
  EXPECT_EQ(cs[0].source_hash, "h1");
  EXPECT_EQ(cs[0].origin, "tuner");
  EXPECT_EQ(cs[0].meta, json({{"XBLOCK", 1024}}));
  EXPECT_EQ(cs[0].status, "rejected");
  EXPECT_EQ(cs[0].created_at, "2025-01-31T12:00:01.000Z");
  EXPECT_EQ(cs[1].id, 5);
  EXPECT_TRUE(cs[1].meta.is_null());
  EXPECT_EQ(cs[1].status, "kept");
  EXPECT_EQ(cs[2].id, 9);
  EXPECT_EQ(cs[2].module, -1);
  EXPECT_EQ(cs[2].kernel, "decision");
  EXPECT_EQ(cs[2].status, "pending");
  ASSERT_EQ(store.verdicts(3).size(), 1u);
  EXPECT_EQ(store.verdicts(3)[0].id, 11);
  EXPECT_EQ(store.verdicts(3)[0].evidence, json({{"max_abs_err", 0.5}}));
  ASSERT_EQ(store.verdicts(5).size(), 1u);
  EXPECT_EQ(store.verdicts(5)[0].id, 12);
  ASSERT_EQ(store.verdicts(9).size(), 1u);
  EXPECT_EQ(store.verdicts(9)[0].id, 14);
  const auto ts = store.timings(7);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].id, 20);
  EXPECT_FALSE(ts[0].candidate_id.has_value());
  EXPECT_EQ(ts[1].id, 21);
  EXPECT_EQ(ts[1].candidate_id, 5);
  EXPECT_EQ(ts[1].samples, (std::vector<double>{0.5}));

  // 'skipped' is a status now; the UNIQUE key and the foreign keys hold as before
  store.set_candidate_status(9, "skipped");
  EXPECT_EQ(store.candidates(7)[2].status, "skipped");
  CandidateRecord skipped = make_candidate(7, "h3");
  skipped.status = "skipped";
  EXPECT_EQ(store.add_candidate(skipped).first.status, "skipped");
  EXPECT_THROW(store.set_candidate_status(3, "bogus"), StoreError);
  CandidateRecord again = make_candidate(7, "h1");
  again.kernel = "k0";  // the key (7, 0, k0, h1) of candidate 3
  const auto [same, inserted] = store.add_candidate(again);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(same.id, 3);
  {
    Database raw = Database::open(db_path());
    EXPECT_THROW(raw.exec("INSERT INTO candidates(run_id, module, kernel, source_hash, origin, status, created_at) "
                          "VALUES (7, 0, 'k0', 'h1', 'tuner', 'pending', 'now')"),
                 StoreError);
    EXPECT_THROW(raw.exec("DELETE FROM candidates WHERE id = 3"), StoreError);  // verdict 11 refers to it
  }
  EXPECT_THROW(store.add_verdict({0, 404, "static", true, "", nullptr, ""}), StoreError);
  EXPECT_THROW(store.add_timing(7, 404, "kernel_candidate", "ms", {1.0}), StoreError);
  EXPECT_THROW(store.add_candidate(make_candidate(404, "h4")), StoreError);  // candidates.run_id -> runs(id)
  EXPECT_EQ(raw_query("PRAGMA foreign_key_check"), "");
  EXPECT_TRUE(store.integrity_ok());
}

TEST_F(StoreTest, MigrationThatWouldBreakAForeignKeyIsRefusedAndLeavesTheFile) {
  {
    Database db = Database::open(db_path());
    migrate(db, 2);  // the file a build that knew versions 1 and 2 wrote (their released steps)
    db.exec(kVersionTwoRows);
    db.exec("PRAGMA foreign_keys = OFF");  // a dangling verdict, as a tool without foreign keys could leave
    db.exec("INSERT INTO verdicts(candidate_id, gate, passed, reason, created_at) VALUES (404, 'static', 1, '', 'x')");
  }
  try {
    Store::open(db_path());
    FAIL() << "open did not throw";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("foreign key"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("verdicts"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw_query("PRAGMA user_version"), "2");  // rolled back: still the version-2 table
  EXPECT_NE(raw_query("SELECT sql FROM sqlite_master WHERE name = 'candidates'").find("'kept')"), std::string::npos);
  EXPECT_EQ(raw_query("SELECT COUNT(*) FROM candidates"), "3");
}

TEST_F(StoreTest, SkippedIsACandidateStatusAndUnknownOnesAreRefused) {
  Store store = Store::open(db_path());
  const std::int64_t run = store.create_run(make_run("/runs/a"));
  CandidateRecord skipped = make_candidate(run, "h1");
  skipped.status = "skipped";
  const auto c = store.add_candidate(skipped).first;
  EXPECT_EQ(store.candidates(run).at(0).status, "skipped");
  store.set_candidate_status(c.id, "rejected");
  store.set_candidate_status(c.id, "skipped");
  EXPECT_EQ(store.candidates(run).at(0).status, "skipped");
  EXPECT_THROW(store.set_candidate_status(c.id, "bogus"), StoreError);
  CandidateRecord bogus = make_candidate(run, "h2");
  bogus.status = "bogus";
  EXPECT_THROW(store.add_candidate(bogus), StoreError);
  EXPECT_EQ(store.candidates(run).size(), 1u);
  EXPECT_EQ(store.candidates(run).at(0).status, "skipped");
}

}  // namespace
