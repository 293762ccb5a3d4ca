// Tests for agents/llm_session.hpp: the LLM config, and the session against a
// real OpenAI-compatible server on loopback and a relay directory.
#include "agents/llm_session.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "llm/relay_provider.hpp"
#include "store/store.hpp"
#include "test_llm_server.hpp"
#include "util/fs.hpp"

using namespace kernelopt::agents;
using kernelopt::llm::testing::LoopbackServer;
using nlohmann::json;
namespace fs = std::filesystem;
namespace llm = kernelopt::llm;
namespace store = kernelopt::store;

namespace {

constexpr const char* kKeyVar = "KERNELOPT_TEST_SESSION_KEY";
constexpr const char* kKey = "sk-kernelopt-session-SECRET-7f3a9c";

// An OpenAI-compatible server answering every chat completion (hits counted);
// its answers quote the Authorization header, so a leak would reach the store.
class ChatServer {
 public:
  explicit ChatServer(int status = 200)
      : server_([this, status](httplib::Server& s) {
          s.Post("/v1/chat/completions", [this, status](const httplib::Request& req, httplib::Response& res) {
            const int n = ++hits_;
            if (status != 200) {
              res.status = status;
              res.set_content(R"({"error": {"message": "overloaded"}})", "application/json");
              return;
            }
            const json body = json::parse(req.body);
            json answer = {{"model", "gpt-test-2025"},
                           {"choices", {{{"message", {{"role", "assistant"},
                                                      {"content", "answer " + std::to_string(n) + " to " +
                                                                      body["messages"].back()["content"].get<std::string>() +
                                                                      " (auth: " + req.get_header_value("Authorization") +
                                                                      ")"}}}}}},
                           {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 20}}}};
            res.set_content(answer.dump(), "application/json");
          });
        }) {}
  std::string url() const { return server_.url(); }
  bool ok() const { return server_.ok(); }
  int hits() const { return hits_; }

 private:
  std::atomic<int> hits_{0};
  LoopbackServer server_;
};

class LlmSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("kernelopt-session-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
    ::setenv(kKeyVar, kKey, 1);
    store_.emplace(store::Store::open(dir_ / "store.db"));
    store::RunRecord run;
    run.input_path = "model.py";
    run.input_hash = "h";
    run.out_dir = (dir_ / "run").string();
    run.status = "running";
    run_id_ = store_->create_run(run);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  static json config(const ChatServer& server, json extra = json::object()) {
    json c = {{"provider", "openai:gpt-test"},
              {"options",
               {{"base_url", server.url() + "/v1"},
                {"api_key_env", kKeyVar},
                {"max_retries", 1},
                {"retry_base_delay_s", 0.01},
                {"price_input_per_mtok", 2},
                {"price_output_per_mtok", 8}}}};
    c.update(extra);
    return c;
  }

  static llm::ChatRequest request(const std::string& text, const std::string& tag = "coder.k") {
    llm::ChatRequest r;
    r.system = "You write Triton.";
    r.messages = {{"user", text}};
    r.tag = tag;
    return r;
  }

  // Every byte of the store's files (database and WAL), as one string.
  std::string store_bytes() const {
    std::string all;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.is_regular_file()) all += kernelopt::util::read_file(e.path());
    }
    return all;
  }

  fs::path dir_;
  std::optional<store::Store> store_;
  std::int64_t run_id_ = 0;
};

TEST_F(LlmSessionTest, FirstAskIsStoredAndTheSameAskReplays) {
  ChatServer server;
  ASSERT_TRUE(server.ok());
  LlmSession session(llm_config_from_json(config(server)), *store_, run_id_);
  EXPECT_TRUE(session.enabled(Role::coder));
  auto a = session.ask(Role::coder, request("make it fast"));
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->from_cache);
  EXPECT_EQ(a->text.rfind("answer 1 to make it fast", 0), 0u);
  EXPECT_EQ(a->input_tokens, 100);
  EXPECT_DOUBLE_EQ(a->cost_usd, (100 * 2.0 + 20 * 8.0) / 1e6);
  EXPECT_EQ(server.hits(), 1);

  auto stored = store_->llm_exchanges(run_id_);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].agent, "coder");
  EXPECT_EQ(stored[0].tag, "coder.k.0");
  EXPECT_EQ(stored[0].provider, "openai:gpt-test");
  EXPECT_EQ(stored[0].model, "gpt-test");
  EXPECT_EQ(stored[0].request_hash, llm::request_hash(request("make it fast")));
  EXPECT_EQ(stored[0].input_tokens, 100);
  EXPECT_EQ(stored[0].output_tokens, 20);

  auto b = session.ask(Role::coder, request("make it fast"));
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->from_cache);
  EXPECT_EQ(server.hits(), 1);  // served from the store
  EXPECT_EQ(b->text, stored[0].response_text);
  EXPECT_EQ(store_->llm_exchanges(run_id_).size(), 1u);

  // another session (a resumed run) replays too, for any role asking the same thing
  LlmSession again(llm_config_from_json(config(server)), *store_, run_id_);
  auto c = again.ask(Role::repairer, request("make it fast", "repairer.k"));
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->from_cache);
  EXPECT_EQ(server.hits(), 1);

  const json u = session.usage();
  EXPECT_EQ(u["roles"]["coder"]["requests"], 2);
  EXPECT_EQ(u["roles"]["coder"]["cached"], 1);
  EXPECT_EQ(u["roles"]["coder"]["input_tokens"], 100);
  EXPECT_EQ(u["roles"]["coder"]["provider"], "openai:gpt-test");
  EXPECT_EQ(u["roles"]["coder"]["enabled"], true);
  EXPECT_EQ(u["total"]["requests"], 2);
  EXPECT_EQ(u["total"]["output_tokens"], 20);
  EXPECT_NEAR(u["total"]["cost_usd"].get<double>(), 360e-6, 1e-12);
  EXPECT_TRUE(u["fallbacks"].empty());
  EXPECT_EQ(u["roles"].size(), 5u);
}

TEST_F(LlmSessionTest, TagsAreNumberedPerTag) {
  ChatServer server;
  LlmSession session(llm_config_from_json(config(server)), *store_, run_id_);
  session.ask(Role::coder, request("one", "coder.k"));
  session.ask(Role::coder, request("two", "coder.k"));
  session.ask(Role::coder, request("three", "coder.j"));
  session.ask(Role::planner, request("four", ""));
  const auto ex = store_->llm_exchanges(run_id_);
  ASSERT_EQ(ex.size(), 4u);
  EXPECT_EQ(ex[0].tag, "coder.k.0");
  EXPECT_EQ(ex[1].tag, "coder.k.1");
  EXPECT_EQ(ex[2].tag, "coder.j.0");
  EXPECT_EQ(ex[3].tag, "planner.0");
  EXPECT_EQ(ex[3].agent, "planner");
}

TEST_F(LlmSessionTest, ReplayOffAsksAgain) {
  ChatServer server;
  LlmSession session(llm_config_from_json(config(server, {{"replay", false}})), *store_, run_id_);
  ASSERT_TRUE(session.ask(Role::coder, request("same")));
  auto b = session.ask(Role::coder, request("same"));
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->from_cache);
  EXPECT_EQ(server.hits(), 2);
  EXPECT_EQ(store_->llm_exchanges(run_id_).size(), 2u);
}

TEST_F(LlmSessionTest, FailingProviderDisablesTheRoleWithAReason) {
  ChatServer server(500);
  LlmSession session(llm_config_from_json(config(server)), *store_, run_id_);
  EXPECT_FALSE(session.ask(Role::coder, request("hello")));
  EXPECT_EQ(server.hits(), 2);  // the first attempt and one retry
  EXPECT_FALSE(session.enabled(Role::coder));
  EXPECT_TRUE(session.enabled(Role::tuner));  // only the role that failed
  const auto why = session.disabled_reason(Role::coder);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("500"), std::string::npos) << *why;
  EXPECT_EQ(why->find(kKey), std::string::npos);
  // disabled for the rest of the run: no more requests
  EXPECT_FALSE(session.ask(Role::coder, request("hello again")));
  EXPECT_EQ(server.hits(), 2);
  const json u = session.usage();
  ASSERT_EQ(u["fallbacks"].size(), 1u);
  EXPECT_EQ(u["fallbacks"][0].get<std::string>().rfind("coder: ", 0), 0u);
  EXPECT_EQ(u["roles"]["coder"]["enabled"], false);
  EXPECT_TRUE(store_->llm_exchanges(run_id_).empty());
}

TEST_F(LlmSessionTest, TokenBudgetDisablesEveryRoleAfterTheFirstAnswer) {
  ChatServer server;
  LlmSession session(llm_config_from_json(config(server, {{"budget", {{"tokens", 1}}}})), *store_, run_id_);
  auto a = session.ask(Role::profiler, request("first"));
  ASSERT_TRUE(a);  // the answer that spent the budget is still used
  for (Role r : kRoles) EXPECT_FALSE(session.enabled(r)) << role_name(r);
  EXPECT_FALSE(session.ask(Role::coder, request("second")));
  EXPECT_EQ(server.hits(), 1);
  const json u = session.usage();
  ASSERT_EQ(u["fallbacks"].size(), 1u);
  EXPECT_NE(u["fallbacks"][0].get<std::string>().find("token budget"), std::string::npos) << u.dump();
  EXPECT_EQ(u["budget"]["tokens"], 1);
}

TEST_F(LlmSessionTest, NoApiKeyReachesTheStore) {
  ChatServer server;
  {
    LlmSession session(llm_config_from_json(config(server)), *store_, run_id_);
    // the server quotes the Authorization header in its answer, and this prompt quotes the key too
    auto a = session.ask(Role::coder, request(std::string("my key is ") + kKey));
    ASSERT_TRUE(a);
    EXPECT_NE(a->text.find(kKey), std::string::npos) << "the server should echo it, or this test proves nothing";
    ChatServer failing(500);
    LlmSession broken(llm_config_from_json(config(failing)), *store_, run_id_);
    EXPECT_FALSE(broken.ask(Role::coder, request("x")));
    store_->set_run_status(run_id_, "done", {{"llm", broken.usage()}, {"usage", session.usage()}});
  }
  const auto ex = store_->llm_exchanges(run_id_);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_NE(ex[0].response_text.find("<redacted>"), std::string::npos);
  EXPECT_NE(ex[0].request_json.find("my key is <redacted>"), std::string::npos);
  store_.reset();  // close, so everything is in the files
  const std::string bytes = store_bytes();
  EXPECT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find(kKey), std::string::npos) << "the API key is in the store's files";
  EXPECT_EQ(bytes.find("SECRET-7f3a9c"), std::string::npos);
}

TEST_F(LlmSessionTest, ProviderThatCannotBeBuiltFallsBack) {
  ChatServer server;
  json c = config(server);
  c["options"]["api_key_env"] = "KERNELOPT_TEST_UNSET_KEY_VAR";
  ::unsetenv("KERNELOPT_TEST_UNSET_KEY_VAR");
  LlmSession session(llm_config_from_json(c), *store_, run_id_);
  EXPECT_TRUE(session.enabled(Role::planner));  // built on first use
  EXPECT_FALSE(session.ask(Role::planner, request("x")));
  EXPECT_FALSE(session.enabled(Role::planner));
  EXPECT_NE(session.disabled_reason(Role::planner)->find("KERNELOPT_TEST_UNSET_KEY_VAR"), std::string::npos);
  EXPECT_EQ(server.hits(), 0);
}

TEST_F(LlmSessionTest, PendingRelayAnswerPropagatesAndTagAnswersAreRead) {
  const fs::path relay = dir_ / "relay";
  LlmSession session(llm_config_from_json({{"provider", "relay:" + relay.string()}}), *store_, run_id_);
  EXPECT_THROW(session.ask(Role::coder, request("write a kernel")), llm::PendingAnswer);
  EXPECT_TRUE(session.enabled(Role::coder));  // waiting is not failing
  const std::string hash = llm::request_hash(request("write a kernel"));
  EXPECT_EQ(kernelopt::util::read_file(relay / "requests" / (hash + ".tag")), "coder.k.0\n");
  // a scripted answer by tag; the retried request keeps its tag (the pending one was not counted)
  kernelopt::util::write_file_atomic(relay / "answers" / "coder.k.0.txt", "scripted kernel");
  auto a = session.ask(Role::coder, request("write a kernel"));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->text, "scripted kernel");
  EXPECT_EQ(store_->llm_exchanges(run_id_).at(0).tag, "coder.k.0");
  EXPECT_EQ(store_->llm_exchanges(run_id_).at(0).model, "");
}

TEST_F(LlmSessionTest, PerAgentProvidersAndOff) {
  ChatServer server;
  json c = config(server, {{"agents", {{"tuner", "off"}, {"profiler", "exec:printf diagnosis"}}}});
  LlmSession session(llm_config_from_json(c), *store_, run_id_);
  EXPECT_FALSE(session.enabled(Role::tuner));
  EXPECT_FALSE(session.ask(Role::tuner, request("x")));
  auto p = session.ask(Role::profiler, request("profile"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->text, "diagnosis");
  EXPECT_EQ(server.hits(), 0);
  const json u = session.usage();
  EXPECT_FALSE(u["roles"].contains("tuner"));
  EXPECT_EQ(u["roles"]["profiler"]["provider"], "exec:printf diagnosis");
  EXPECT_EQ(store_->llm_exchanges(run_id_).at(0).provider, "exec:printf diagnosis");
}

// --- the config -------------------------------------------------------------------

std::string config_error(const json& j) {
  try {
    llm_config_from_json(j);
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  ADD_FAILURE() << "no error for " << j.dump();
  return "";
}

TEST(LlmConfigTest, ParsesAndRoundTrips) {
  const json j = {{"llm",
                   {{"provider", "openai:gpt-4.1"},
                    {"options", {{"base_url", "http://127.0.0.1:8000/v1"}, {"timeout_s", 120}}},
                    {"agents", {{"coder", "anthropic:claude-x"}, {"tuner", "off"}, {"profiler", "exec:./answer.sh"}}},
                    {"budget", {{"tokens", 100000}, {"usd", 2.5}, {"seconds", 600}}},
                    {"replay", false}}}};
  const LlmConfig c = llm_config_from_json(j);
  EXPECT_EQ(c.default_spec, "openai:gpt-4.1");
  EXPECT_EQ(c.spec_for(Role::planner), "openai:gpt-4.1");
  EXPECT_EQ(c.spec_for(Role::coder), "anthropic:claude-x");
  EXPECT_EQ(c.spec_for(Role::tuner), "");
  EXPECT_EQ(c.options, (std::vector<std::string>{"base_url=http://127.0.0.1:8000/v1", "timeout_s=120"}));
  // base_url goes to the HTTP providers only; timeout_s to all
  EXPECT_EQ(c.options_for("exec:./answer.sh"), (std::vector<std::string>{"timeout_s=120"}));
  EXPECT_EQ(c.options_for("anthropic:claude-x").size(), 2u);
  EXPECT_EQ(c.budget.max_tokens, 100000);
  EXPECT_DOUBLE_EQ(c.budget.max_usd, 2.5);
  EXPECT_DOUBLE_EQ(c.budget.max_seconds, 600);
  EXPECT_FALSE(c.replay);
  EXPECT_TRUE(c.configured());
  const LlmConfig back = llm_config_from_json(to_json(c));
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.agents, c.agents);
  EXPECT_EQ(back.options, c.options);
}

TEST(LlmConfigTest, EmptyOrNullIsNotConfigured) {
  EXPECT_FALSE(llm_config_from_json(nullptr).configured());
  EXPECT_FALSE(llm_config_from_json(json::object()).configured());
  EXPECT_TRUE(llm_config_from_json(json::object()).replay);
  EXPECT_FALSE(llm_config_from_json({{"provider", "openai:m"}, {"agents", {{"coder", "off"}, {"planner", "off"},
                                                                            {"profiler", "off"}, {"repairer", "off"},
                                                                            {"tuner", "off"}}}})
                   .configured());
  EXPECT_TRUE(llm_config_from_json({{"agents", {{"coder", "relay:/tmp/r"}}}}).configured());
  EXPECT_FALSE(llm_config_from_json(to_json(LlmConfig{})).configured());
}

TEST(LlmConfigTest, BadConfigsGiveOneLine) {
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"model", "x"}}).find("unknown key 'model'"), std::string::npos);
  EXPECT_NE(config_error({{"agents", {{"writer", "openai:m"}}}}).find("unknown agent 'writer'"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "gpt-4"}}).find("no scheme"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "exec:cat"}, {"options", {{"base_url", "http://x"}}}}).find("base_url"),
            std::string::npos);
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"options", {{"colour", "red"}}}}).find("colour"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"options", {{"timeout_s", "soon"}}}}).find("timeout_s"),
            std::string::npos);
  EXPECT_NE(config_error({{"options", {{"timeout_s", 1}}}}).find("no provider"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"budget", {{"tokens", -1}}}}).find("tokens"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"budget", {{"dollars", 1}}}}).find("dollars"), std::string::npos);
  EXPECT_NE(config_error({{"provider", "openai:m"}, {"replay", "yes"}}).find("replay"), std::string::npos);
  EXPECT_NE(config_error({{"llm", {{"provider", "openai:m"}}}, {"other", 1}}).find("no other keys"), std::string::npos);
  EXPECT_NE(config_error(json::array()).find("object"), std::string::npos);
}

}  // namespace
