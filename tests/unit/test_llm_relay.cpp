// Tests for llm/relay_provider.hpp: requests and answers as files.
#include "llm/relay_provider.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "llm/spec.hpp"
#include "util/fs.hpp"

using namespace kernelopt::llm;
namespace fs = std::filesystem;

namespace {

class LlmRelay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kernelopt_relay_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RelayProvider relay(std::vector<std::string> options = {}) {
    return RelayProvider(parse_spec("relay:" + dir_.string(), options));
  }

  static ChatRequest sample() {
    ChatRequest r;
    r.model = "human";
    r.messages = {{"user", "what block size?"}};
    return r;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(LlmRelay, NoAnswerThrowsPendingAndWritesTheRequest) {
  RelayProvider p = relay();
  const std::string hash = request_hash(sample());
  try {
    p.complete(sample());
    FAIL() << "no PendingAnswer";
  } catch (const PendingAnswer& e) {
    EXPECT_EQ(e.hash, hash);
    EXPECT_EQ(e.request_path, (dir_ / "requests" / (hash + ".json")).string());
    EXPECT_NE(std::string(e.what()).find(hash), std::string::npos);
  }
  const fs::path request = dir_ / "requests" / (hash + ".json");
  ASSERT_TRUE(fs::exists(request));
  EXPECT_EQ(kernelopt::util::read_file(request), canonical_request(sample()) + "\n");
  // asking again (a resumed run) is still pending, and keeps the one request file
  EXPECT_THROW(p.complete(sample()), PendingAnswer);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "requests"), fs::directory_iterator()), 1);
}

TEST_F(LlmRelay, TextAnswerIsReturned) {
  RelayProvider p = relay();
  EXPECT_THROW(p.complete(sample()), PendingAnswer);
  kernelopt::util::write_file_atomic(dir_ / "answers" / (request_hash(sample()) + ".txt"), "BLOCK=128\n");
  ChatResponse r = p.complete(sample());
  EXPECT_EQ(r.text, "BLOCK=128\n");
  EXPECT_EQ(r.model, "human");
  EXPECT_EQ(r.provider, "relay:" + dir_.string());
}

TEST_F(LlmRelay, JsonAnswerWithUsageIsPriced) {
  RelayProvider p = relay({"price_input_per_mtok=1", "price_output_per_mtok=2"});
  kernelopt::util::ensure_dir(dir_ / "answers");
  kernelopt::util::write_file_atomic(dir_ / "answers" / (request_hash(sample()) + ".json"),
                                     R"({"text":"use 256","input_tokens":1000,"output_tokens":500,"model":"m2"})");
  ChatResponse r = p.complete(sample());
  EXPECT_EQ(r.text, "use 256");
  EXPECT_EQ(r.input_tokens, 1000);
  EXPECT_EQ(r.model, "m2");
  EXPECT_DOUBLE_EQ(r.cost_usd, (1000 * 1.0 + 500 * 2.0) / 1e6);
}

TEST_F(LlmRelay, MalformedJsonAnswerIsAnError) {
  RelayProvider p = relay();
  kernelopt::util::write_file_atomic(dir_ / "answers" / (request_hash(sample()) + ".json"), R"({"txt":1})");
  try {
    p.complete(sample());
    FAIL() << "no error";
  } catch (const ProviderError& e) {
    EXPECT_NE(std::string(e.what()).find("string \"text\""), std::string::npos) << e.what();
  }
}

TEST_F(LlmRelay, WaitsForAnAnswerWithinTheTimeout) {
  RelayProvider p = relay({"timeout_s=20"});
  const fs::path answer = dir_ / "answers" / (request_hash(sample()) + ".txt");
  std::thread answerer([&] {
    const fs::path request = dir_ / "requests" / (request_hash(sample()) + ".json");
    for (int i = 0; i < 1000 && !fs::exists(request); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kernelopt::util::write_file_atomic(answer, "late but here");
  });
  ChatResponse r = p.complete(sample());
  answerer.join();
  EXPECT_EQ(r.text, "late but here");
}

TEST_F(LlmRelay, SanitizesTags) {
  EXPECT_EQ(sanitize_tag("coder.triton_poi_0.1"), "coder.triton_poi_0.1");
  EXPECT_EQ(sanitize_tag("a/b c:../x"), "a_b_c_.._x");
  EXPECT_EQ(sanitize_tag(""), "");
}

TEST_F(LlmRelay, TagAnswerIsAcceptedWhenTheHashHasNone) {
  RelayProvider p = relay();
  ChatRequest r = sample();
  r.tag = "coder.k/1.0";  // sanitized to coder.k_1.0
  const std::string hash = request_hash(r);
  EXPECT_EQ(hash, request_hash(sample())) << "the tag is not part of the hash";
  EXPECT_EQ(canonical_request(r), canonical_request(sample()));
  EXPECT_THROW(p.complete(r), PendingAnswer);
  // the request and its tag are written for whoever answers
  EXPECT_EQ(kernelopt::util::read_file(dir_ / "requests" / (hash + ".tag")), "coder.k/1.0\n");
  // a scripted answer named after the tag, written before the prompt was known
  kernelopt::util::write_file_atomic(dir_ / "answers" / "coder.k_1.0.json",
                                     R"({"text":"scripted","output_tokens":3})");
  ChatResponse a = p.complete(r);
  EXPECT_EQ(a.text, "scripted");
  EXPECT_EQ(a.output_tokens, 3);
  // the hash's own answer wins over the tag's
  kernelopt::util::write_file_atomic(dir_ / "answers" / (hash + ".txt"), "exact");
  EXPECT_EQ(p.complete(r).text, "exact");
  // a request without a tag never reads tag answers
  fs::remove(dir_ / "answers" / (hash + ".txt"));
  EXPECT_THROW(p.complete(sample()), PendingAnswer);
}

TEST_F(LlmRelay, PendingMessageNamesTheTagFiles) {
  RelayProvider p = relay();
  ChatRequest r = sample();
  r.tag = "planner.0";
  try {
    p.complete(r);
    FAIL() << "no PendingAnswer";
  } catch (const PendingAnswer& e) {
    EXPECT_NE(std::string(e.what()).find("planner.0.txt"), std::string::npos) << e.what();
  }
}
