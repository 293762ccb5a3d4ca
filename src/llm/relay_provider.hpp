/// \file
/// relay:DIR: a language model that answers through files. The engine writes
/// each request where a person, another tool or another machine can read it,
/// and picks up the answer when it appears, so a run can use an LLM it cannot
/// reach directly, stop when answers are missing and resume later.
///
/// Layout: DIR/requests/<hash>.json holds canonical_request() (hash =
/// request_hash(), SHA-256 of that text); the answer goes to
/// DIR/answers/<hash>.txt (the text as is) or DIR/answers/<hash>.json
/// ({"text": ..., optional "input_tokens", "output_tokens", "model"}).
/// Writers of answers should write a temporary file and rename it, so a
/// half-written answer is never read.
///
/// Tags: a request with a ChatRequest::tag also gets DIR/requests/<hash>.tag
/// (the tag, one line), and when no answer for its hash exists, an answer
/// named after the tag is accepted: DIR/answers/<tag>.txt or <tag>.json, the
/// tag sanitized to [A-Za-z0-9._-] (every other byte becomes '_', see
/// sanitize_tag). This lets scripted answers be written before the prompts
/// (whose measured numbers vary from run to run) are known. The hash's answer
/// wins when both exist.
///
/// Contract: thread-safe. An answer already present is returned at once.
/// Otherwise the request file is written atomically and the answers folder is
/// polled for up to timeout_s (0 = checked once, no waiting); then PendingAnswer
/// is thrown, naming the request file. A .json answer that is not an object
/// with a string "text" throws ProviderError naming the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "llm/provider.hpp"
#include "llm/spec.hpp"

namespace kernelopt::llm {

class RelayProvider final : public Provider {
 public:
  /// spec.scheme "relay", spec.target the directory (created with its
  /// requests/ and answers/ folders if missing; throws ProviderError if it cannot be).
  explicit RelayProvider(const ProviderSpec& spec);
  ChatResponse complete(const ChatRequest& request) override;
  std::string name() const override { return spec_.name(); }

  std::filesystem::path request_path(const std::string& hash) const;  ///< DIR/requests/<hash>.json
  std::filesystem::path answer_path(const std::string& hash, const char* extension) const;  ///< DIR/answers/<hash><ext>
  std::filesystem::path tag_path(const std::string& hash) const;  ///< DIR/requests/<hash>.tag

 private:
  /// The answer in DIR/answers/<stem>.txt|.json if one of them exists and reads well.
  std::optional<ChatResponse> read_answer(const std::string& stem) const;

  const ProviderSpec spec_;
  const std::filesystem::path dir_;
};

/// tag with every byte outside [A-Za-z0-9._-] replaced by '_' ("" stays "").
std::string sanitize_tag(const std::string& tag);

}  // namespace kernelopt::llm
