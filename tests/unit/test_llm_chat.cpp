// Tests for llm/chat.hpp: canonical request JSON, its hash, redaction.
#include "llm/chat.hpp"

#include <gtest/gtest.h>

using namespace kernelopt::llm;

namespace {

ChatRequest sample() {
  ChatRequest r;
  r.model = "m";
  r.system = "be brief";
  r.messages = {{"user", "hi"}, {"assistant", "hello"}, {"user", "again"}};
  return r;
}

}  // namespace

TEST(LlmChat, CanonicalRequestIsCompactWithSortedKeys) {
  EXPECT_EQ(canonical_request(sample()),
            R"({"max_tokens":4096,"messages":[{"content":"hi","role":"user"},{"content":"hello","role":"assistant"},)"
            R"({"content":"again","role":"user"}],"model":"m","system":"be brief","temperature":0.0})");
}

TEST(LlmChat, HashIsSha256OfCanonicalFormAndTracksContent) {
  const std::string h = request_hash(sample());
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, request_hash(sample()));
  ChatRequest other = sample();
  other.messages.back().content = "again!";
  EXPECT_NE(h, request_hash(other));
  other = sample();
  other.temperature = 0.5;
  EXPECT_NE(h, request_hash(other));
}

TEST(LlmChat, InvalidUtf8IsReplacedNotThrown) {
  ChatRequest r = sample();
  r.messages[0].content = std::string("bad \xff byte");
  EXPECT_NO_THROW(canonical_request(r));
  EXPECT_NE(canonical_request(r).find("bad \xEF\xBF\xBD byte"), std::string::npos);
}

TEST(LlmChat, RedactReplacesEveryOccurrence) {
  EXPECT_EQ(redact("key sk-1 and sk-1 again", "sk-1"), "key <redacted> and <redacted> again");
  EXPECT_EQ(redact("nothing here", "sk-1"), "nothing here");
  EXPECT_EQ(redact("empty secret", ""), "empty secret");
  // a secret that is a prefix of the mark must not loop forever
  EXPECT_EQ(redact("<<", "<"), "<redacted><redacted>");
}
