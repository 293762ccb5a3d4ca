// File-based request/answer exchange, polled.
#include "llm/relay_provider.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "llm/wire_util.hpp"
#include "util/fs.hpp"

namespace kernelopt::llm {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// Answers come from people or other machines (seconds to hours): a tenth of
// a second of polling delay costs nothing, and a stat per tick is cheap.
constexpr auto kPollInterval = std::chrono::milliseconds(100);
// Longer waits (about 115 days) are treated as this, so time arithmetic cannot overflow.
constexpr double kMaxTimeoutS = 1e7;

bool file_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

}  // namespace

RelayProvider::RelayProvider(const ProviderSpec& spec) : spec_(spec), dir_(spec.target) {
  try {
    util::ensure_dir(dir_ / "requests");
    util::ensure_dir(dir_ / "answers");
  } catch (const std::exception& e) {
    throw ProviderError(fmt::format("{}: {}", name(), e.what()));
  }
}

fs::path RelayProvider::request_path(const std::string& hash) const { return dir_ / "requests" / (hash + ".json"); }

fs::path RelayProvider::answer_path(const std::string& hash, const char* extension) const {
  return dir_ / "answers" / (hash + extension);
}

fs::path RelayProvider::tag_path(const std::string& hash) const { return dir_ / "requests" / (hash + ".tag"); }

std::string sanitize_tag(const std::string& tag) {
  std::string out = tag;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::optional<ChatResponse> RelayProvider::read_answer(const std::string& stem) const {
  ChatResponse out;
  if (const fs::path txt = answer_path(stem, ".txt"); file_exists(txt)) {
    out.text = util::read_file(txt);
    return out;
  }
  const fs::path json_path = answer_path(stem, ".json");
  if (!file_exists(json_path)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(util::read_file(json_path), nullptr, false);
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string())
    throw ProviderError(fmt::format("{}: answer {} is not a JSON object with a string \"text\"", name(),
                                    json_path.string()));
  out.text = j["text"].get<std::string>();
  out.input_tokens = detail::token_count(j, "input_tokens");
  out.output_tokens = detail::token_count(j, "output_tokens");
  if (j.contains("model") && j["model"].is_string()) out.model = j["model"].get<std::string>();
  return out;
}

ChatResponse RelayProvider::complete(const ChatRequest& request) {
  const std::string canonical = canonical_request(request);
  const std::string hash = request_hash(request);
  const fs::path request_file = request_path(hash);
  const std::string tag = sanitize_tag(request.tag);
  // the hash's own answer first; a scripted answer named after the tag second
  const auto find_answer = [&]() -> std::optional<ChatResponse> {
    if (auto a = read_answer(hash)) return a;
    if (!tag.empty()) return read_answer(tag);
    return std::nullopt;
  };
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::min(spec_.timeout_s, kMaxTimeoutS)));
  std::optional<ChatResponse> answer;
  try {
    answer = read_answer(hash);
    if (!answer) {
      if (!file_exists(request_file)) {
        util::write_file_atomic(request_file, canonical + "\n");
        spdlog::info("{}: request written to {}", name(), request_file.string());
      }
      if (!request.tag.empty() && !file_exists(tag_path(hash))) util::write_file_atomic(tag_path(hash), request.tag + "\n");
      while (!(answer = find_answer()) && Clock::now() < deadline) std::this_thread::sleep_for(kPollInterval);
    }
  } catch (const ProviderError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProviderError(fmt::format("{}: {}", name(), e.what()));
  }
  if (!answer)
    throw PendingAnswer(fmt::format("{}: waiting for an answer to {} (write {}.txt or {}.json{} in {})", name(),
                                    request_file.string(), hash, hash,
                                    tag.empty() ? std::string() : fmt::format(", or {}.txt or {}.json,", tag, tag),
                                    (dir_ / "answers").string()),
                        request_file.string(), hash);
  if (answer->model.empty()) answer->model = request.model;
  answer->provider = name();
  answer->cost_usd = spec_.pricing.cost_usd(answer->input_tokens, answer->output_tokens);
  return *answer;
}

}  // namespace kernelopt::llm
