/// \file
/// How a run talks to language models: which provider each agent asks
/// (LlmConfig), and the session that asks (LlmSession): it replays identical
/// requests from the store, records every new exchange, counts tokens and
/// dollars against the budget, and falls back to the offline agents when a
/// provider fails, cannot be built, or the budget is spent.
///
/// Config JSON (the "llm" object of a config file; the whole file {"llm": {...}}
/// is accepted too):
///   {"provider": "openai:gpt-4.1",                 default spec for every agent ("" = none)
///    "options": {"base_url": "...", "timeout_s": 120},  provider options (llm/spec.hpp), each
///                                                   applied to every spec whose scheme takes it
///    "agents": {"coder": "anthropic:claude-...", "tuner": "off"},  per-agent spec, or "off"
///    "budget": {"tokens": N, "usd": X, "seconds": S},  0 or absent = unlimited
///    "replay": true,                                answer identical requests from the store
///    "required": false}                             true: a provider that cannot be used is an error
///                                                   (LlmRequiredError), not a fall-back to the offline agents
///
/// Contract: llm_config_from_json throws std::invalid_argument with one line
/// for an unknown key, agent or option, a bad value or a spec that does not
/// parse (an option must apply to at least one configured spec).
/// LlmSession::ask is thread-safe; it returns nullopt when the role is off,
/// disabled, out of budget, or its provider fails (with `required`, a provider
/// that fails or cannot be built throws LlmRequiredError instead), and lets
/// llm::PendingAnswer (relay: no answer yet) and store errors propagate.
/// Nothing stored or reported holds an API key: requests carry none, and every
/// text is passed through llm::redact with the values of the configured key
/// variables first.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/role.hpp"
#include "llm/budget.hpp"
#include "llm/chat.hpp"
#include "llm/provider.hpp"
#include "store/store.hpp"

namespace kernelopt::agents {

struct LlmConfig {
  std::string default_spec;                 ///< "SCHEME:TARGET" for every agent; "" = none
  std::map<Role, std::string> agents;       ///< per-agent spec, overriding default_spec; "off" = offline
  std::vector<std::string> options;         ///< "key=value", applied to every spec whose scheme takes the key
  llm::Budget budget;                       ///< over the whole run, all agents together
  bool replay = true;                       ///< answer identical requests from the store
  bool required = false;                    ///< a provider that cannot be used ends the run (LlmRequiredError)

  /// The spec role uses: its override, else default_spec; "" when none or "off".
  std::string spec_for(Role role) const;
  /// Some role has a spec.
  bool configured() const;
  /// The options of `options` that parse_spec accepts for spec (others apply to other schemes).
  std::vector<std::string> options_for(const std::string& spec) const;
};

/// Parses the "llm" object (or a whole config {"llm": {...}}); null = not configured.
LlmConfig llm_config_from_json(const nlohmann::json& j);
/// The "llm" object llm_config_from_json reads back equal.
nlohmann::json to_json(const LlmConfig& config);

/// An LLM the run was told it requires (LlmConfig::required) cannot be used; one line, naming the provider.
class LlmRequiredError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LlmSession {
 public:
  /// Providers are built on a role's first request (an unset API key then
  /// disables that role, with the reason); the budget's wall clock starts now.
  LlmSession(LlmConfig config, store::Store& store, std::int64_t run_id);
  ~LlmSession();
  LlmSession(const LlmSession&) = delete;
  LlmSession& operator=(const LlmSession&) = delete;

  /// role has a spec and has not been disabled in this run.
  bool enabled(Role role) const;

  /// Before the run's capture: builds every configured provider (an API key variable that is not set
  /// shows here) and reaches each once (Provider::unreachable: a connection, no request). A provider
  /// that fails is one warning line, its roles disabled for the run (the offline agents answer); with
  /// `required`, LlmRequiredError instead.
  void preflight();

  /// Asks role's model. The request's tag (see llm_agents.hpp; "" = the role's
  /// name) gets ".<n>" appended, n = earlier requests with that tag in this
  /// session (a request left pending is not counted). With replay on, a stored exchange with the same (provider,
  /// model, request hash) is returned (from_cache, no tokens spent) without
  /// asking; otherwise the provider answers, the exchange is stored, and its
  /// tokens and cost count against the budget. nullopt, after one warning
  /// line, when the provider fails or cannot be built (the role is disabled
  /// for the rest of the run) or the budget is spent (every role is disabled);
  /// an answer that spends the last of the budget is still returned.
  /// llm::PendingAnswer propagates.
  std::optional<llm::ChatResponse> ask(Role role, llm::ChatRequest request);

  /// Why role was disabled; nullopt while it is enabled or never had a spec.
  std::optional<std::string> disabled_reason(Role role) const;

  /// For the report: {"roles": {role: {"provider", "requests", "cached",
  /// "input_tokens", "output_tokens", "cost_usd", "enabled"}}, "total": {...
  /// the same counts}, "fallbacks": ["<role>: <reason>", ...], "budget":
  /// {"tokens", "usd", "seconds"}, "replay": bool}. Roles without a spec are left out.
  nlohmann::json usage() const;

 private:
  struct Counts {
    int requests = 0, cached = 0;
    long long input_tokens = 0, output_tokens = 0;
    double cost_usd = 0;
    void add(const llm::ChatResponse& r);
    nlohmann::json to_json() const;
  };

  /// The provider for spec (shared by roles with the same spec), built now if
  /// needed. Throws what make_provider/parse_spec throw. Caller holds mutex_.
  struct Built {
    std::shared_ptr<llm::Provider> provider;
    std::string scheme, target;
  };
  const Built& provider_for(const std::string& spec);
  /// Disables role (all roles when `all`), records and logs the reason. Caller holds mutex_.
  void fall_back(Role role, const std::string& reason, bool all);
  std::string redact(std::string text) const;

  const LlmConfig config_;
  store::Store& store_;
  const std::int64_t run_id_;
  llm::BudgetTracker budget_;
  std::vector<std::string> secrets_;  ///< values of the configured API key variables
  mutable std::mutex mutex_;
  std::map<std::string, Built> providers_;  ///< by spec
  std::map<Role, std::string> disabled_;                              ///< role -> reason
  std::map<Role, Counts> counts_;
  std::map<std::string, int> tag_counts_;
  std::vector<std::string> fallbacks_;
};

}  // namespace kernelopt::agents
