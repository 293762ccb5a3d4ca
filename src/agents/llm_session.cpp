// LLM configuration, and the session that asks, replays, records and falls back.
#include "agents/llm_session.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "llm/spec.hpp"

namespace kernelopt::agents {
namespace {

using nlohmann::json;

constexpr const char* kOff = "off";
constexpr const char* kKnownKeys = "provider, options, agents, budget, replay, required";
// Key values shorter than this are not redacted: replacing every "abc" in a prompt would mangle it,
// and no real API key is that short.
constexpr std::size_t kMinSecretLength = 8;

std::string option_value(const std::string& key, const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  throw std::invalid_argument(fmt::format("llm option '{}' must be a string or a number", key));
}

double nonnegative(const json& v, const std::string& what) {
  if (!v.is_number() || v.get<double>() < 0) throw std::invalid_argument(fmt::format("llm {} must be a number >= 0", what));
  return v.get<double>();
}

std::string known_roles() {
  std::string out;
  for (Role r : kRoles) out += fmt::format("{}{}", out.empty() ? "" : ", ", role_name(r));
  return out;
}

}  // namespace

// --- LlmConfig ----------------------------------------------------------------

std::string LlmConfig::spec_for(Role role) const {
  auto it = agents.find(role);
  const std::string& spec = it != agents.end() ? it->second : default_spec;
  return spec == kOff ? std::string() : spec;
}

bool LlmConfig::configured() const {
  for (Role r : kRoles) {
    if (!spec_for(r).empty()) return true;
  }
  return false;
}

std::vector<std::string> LlmConfig::options_for(const std::string& spec) const {
  std::vector<std::string> out;
  for (const auto& o : options) {
    try {
      llm::parse_spec(spec, {o});
      out.push_back(o);
    } catch (const std::invalid_argument&) {
      // another scheme's option, or a bad one (llm_config_from_json reports those)
    }
  }
  return out;
}

LlmConfig llm_config_from_json(const json& in) {
  LlmConfig c;
  if (in.is_null()) return c;
  if (!in.is_object()) throw std::invalid_argument("the llm config must be a JSON object");
  json j = in;
  if (j.contains("llm")) {
    if (j.size() != 1) throw std::invalid_argument("a config holding \"llm\" must have no other keys at that level");
    j = in["llm"];
    if (j.is_null()) return c;
    if (!j.is_object()) throw std::invalid_argument("\"llm\" must be a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "provider") {
      if (!value.is_string()) throw std::invalid_argument("llm provider must be a string like openai:MODEL");
      c.default_spec = value.get<std::string>();
    } else if (key == "options") {
      if (!value.is_object()) throw std::invalid_argument("llm options must be an object {\"key\": value}");
      for (const auto& [k, v] : value.items()) c.options.push_back(k + "=" + option_value(k, v));
    } else if (key == "agents") {
      if (!value.is_object()) throw std::invalid_argument("llm agents must be an object {\"<agent>\": \"<spec>\"}");
      for (const auto& [name, spec] : value.items()) {
        const auto role = role_from_name(name);
        if (!role) throw std::invalid_argument(fmt::format("unknown agent '{}' (known: {})", name, known_roles()));
        if (!spec.is_string() || spec.get<std::string>().empty())
          throw std::invalid_argument(fmt::format("llm agent {}: expected a provider spec or \"off\"", name));
        c.agents[*role] = spec.get<std::string>();
      }
    } else if (key == "budget") {
      if (!value.is_object()) throw std::invalid_argument("llm budget must be an object {\"tokens\", \"usd\", \"seconds\"}");
      for (const auto& [k, v] : value.items()) {
        if (k == "tokens") {
          if (!v.is_number_integer() || v.get<long long>() < 0)
            throw std::invalid_argument("llm budget tokens must be an integer >= 0");
          c.budget.max_tokens = v.get<long long>();
        } else if (k == "usd") {
          c.budget.max_usd = nonnegative(v, "budget usd");
        } else if (k == "seconds") {
          c.budget.max_seconds = nonnegative(v, "budget seconds");
        } else {
          throw std::invalid_argument(fmt::format("unknown key '{}' in the llm budget (known: tokens, usd, seconds)", k));
        }
      }
    } else if (key == "replay") {
      if (!value.is_boolean()) throw std::invalid_argument("llm replay must be true or false");
      c.replay = value.get<bool>();
    } else if (key == "required") {
      if (!value.is_boolean()) throw std::invalid_argument("llm required must be true or false");
      c.required = value.get<bool>();
    } else {
      throw std::invalid_argument(fmt::format("unknown key '{}' in the llm config (known: {})", key, kKnownKeys));
    }
  }
  // Every spec must parse with the options that apply to it, and every option apply somewhere.
  std::vector<std::string> specs;
  for (Role r : kRoles) {
    const std::string s = c.spec_for(r);
    if (!s.empty() && std::find(specs.begin(), specs.end(), s) == specs.end()) specs.push_back(s);
  }
  if (specs.empty() && !c.options.empty())
    throw std::invalid_argument(fmt::format("llm option '{}' given, but no provider", c.options.front()));
  for (const auto& s : specs) llm::parse_spec(s, c.options_for(s));
  for (const auto& o : c.options) {
    bool applies = false;
    for (const auto& s : specs) {
      const auto taken = c.options_for(s);
      applies = applies || std::find(taken.begin(), taken.end(), o) != taken.end();
    }
    if (!applies) {
      llm::parse_spec(specs.front(), {o});  // throws the reason
      throw std::invalid_argument(fmt::format("llm option '{}' applies to no configured provider", o));
    }
  }
  return c;
}

json to_json(const LlmConfig& c) {
  json options = json::object();
  for (const auto& o : c.options) {
    const auto eq = o.find('=');
    options[o.substr(0, eq)] = eq == std::string::npos ? "" : o.substr(eq + 1);
  }
  json agents = json::object();
  for (const auto& [role, spec] : c.agents) agents[role_name(role)] = spec;
  return {{"provider", c.default_spec},
          {"options", options},
          {"agents", agents},
          {"budget", {{"tokens", c.budget.max_tokens}, {"usd", c.budget.max_usd}, {"seconds", c.budget.max_seconds}}},
          {"replay", c.replay},
          {"required", c.required}};
}

// --- LlmSession ---------------------------------------------------------------

void LlmSession::Counts::add(const llm::ChatResponse& r) {
  ++requests;
  if (r.from_cache) {
    ++cached;
    return;
  }
  input_tokens += r.input_tokens;
  output_tokens += r.output_tokens;
  cost_usd += r.cost_usd;
}

json LlmSession::Counts::to_json() const {
  return {{"requests", requests},
          {"cached", cached},
          {"input_tokens", input_tokens},
          {"output_tokens", output_tokens},
          {"cost_usd", cost_usd}};
}

LlmSession::LlmSession(LlmConfig config, store::Store& store, std::int64_t run_id)
    : config_(std::move(config)), store_(store), run_id_(run_id), budget_(config_.budget) {
  std::set<std::string> vars = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  for (Role r : kRoles) {
    const std::string spec = config_.spec_for(r);
    if (spec.empty()) continue;
    try {
      const std::string var = llm::parse_spec(spec, config_.options_for(spec)).api_key_env;
      if (!var.empty()) vars.insert(var);
    } catch (const std::exception&) {
      // reported when the role first asks
    }
  }
  for (const auto& var : vars) {
    const char* value = std::getenv(var.c_str());
    if (value != nullptr && std::string_view(value).size() >= kMinSecretLength) secrets_.emplace_back(value);
  }
}

LlmSession::~LlmSession() = default;

std::string LlmSession::redact(std::string text) const {
  for (const auto& s : secrets_) text = llm::redact(std::move(text), s);
  return text;
}

bool LlmSession::enabled(Role role) const {
  std::lock_guard lock(mutex_);
  return !config_.spec_for(role).empty() && !disabled_.count(role);
}

std::optional<std::string> LlmSession::disabled_reason(Role role) const {
  std::lock_guard lock(mutex_);
  auto it = disabled_.find(role);
  if (it == disabled_.end()) return std::nullopt;
  return it->second;
}

const LlmSession::Built& LlmSession::provider_for(const std::string& spec) {
  auto it = providers_.find(spec);
  if (it != providers_.end()) return it->second;
  const llm::ProviderSpec parsed = llm::parse_spec(spec, config_.options_for(spec));
  Built b{std::shared_ptr<llm::Provider>(llm::make_provider(parsed)), parsed.scheme, parsed.target};
  return providers_.emplace(spec, std::move(b)).first->second;
}

void LlmSession::preflight() {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::vector<Role>> roles_of;  // one check and one line per spec, however many roles share it
  for (Role r : kRoles) {
    if (const std::string spec = config_.spec_for(r); !spec.empty() && !disabled_.count(r)) roles_of[spec].push_back(r);
  }
  for (const auto& [spec, roles] : roles_of) {
    std::string why;
    try {
      why = provider_for(spec).provider->unreachable();
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (why.empty()) continue;
    why = redact(why);
    std::string names;
    for (Role r : roles) names += fmt::format("{}{}", names.empty() ? "" : ", ", role_name(r));
    if (config_.required) throw LlmRequiredError(fmt::format("LLM {}: {} (--llm-required)", names, why));
    for (Role r : roles) {
      disabled_.emplace(r, why);
      fallbacks_.push_back(fmt::format("{}: {}", role_name(r), why));
    }
    spdlog::warn("LLM {} not used: {}; the run goes on with the offline agents (--llm-required makes this an error)",
                 names, why);
  }
}

void LlmSession::fall_back(Role role, const std::string& reason, bool all) {
  const std::string why = redact(reason);
  if (!all && config_.required) {
    throw LlmRequiredError(fmt::format("LLM {}: {} (--llm-required)", role_name(role), why));
  }
  if (all) {
    for (Role r : kRoles) {
      if (!config_.spec_for(r).empty()) disabled_.emplace(r, why);
    }
    fallbacks_.push_back("all agents: " + why);
    spdlog::warn("LLM agents disabled: {}; the run goes on with the offline agents", why);
  } else {
    disabled_.emplace(role, why);
    fallbacks_.push_back(fmt::format("{}: {}", role_name(role), why));
    spdlog::warn("LLM {} disabled: {}; the run goes on with the offline {}", role_name(role), why, role_name(role));
  }
}

std::optional<llm::ChatResponse> LlmSession::ask(Role role, llm::ChatRequest request) {
  std::shared_ptr<llm::Provider> provider;
  std::string model, hash, base;
  int number = 0;
  {
    std::lock_guard lock(mutex_);
    const std::string spec = config_.spec_for(role);
    if (spec.empty() || disabled_.count(role)) return std::nullopt;
    if (auto why = budget_.exceeded()) {
      fall_back(role, *why, true);
      return std::nullopt;
    }
    base = request.tag.empty() ? std::string(role_name(role)) : request.tag;
    number = tag_counts_[base]++;
    request.tag = fmt::format("{}.{}", base, number);
    try {
      const Built& b = provider_for(spec);
      provider = b.provider;
      model = !request.model.empty() ? request.model
              : (b.scheme == "openai" || b.scheme == "anthropic") ? b.target
                                                                   : std::string();
    } catch (const std::exception& e) {
      fall_back(role, fmt::format("cannot use {}: {}", spec, e.what()), false);
      return std::nullopt;
    }
    hash = llm::request_hash(request);
    if (config_.replay) {
      if (auto ex = store_.find_llm_exchange(provider->name(), model, hash)) {
        llm::ChatResponse r;
        r.text = ex->response_text;
        r.input_tokens = static_cast<int>(ex->input_tokens);
        r.output_tokens = static_cast<int>(ex->output_tokens);
        r.model = ex->model;
        r.cost_usd = ex->cost_usd;
        r.from_cache = true;
        r.provider = provider->name();
        budget_.add(r);
        counts_[role].add(r);
        spdlog::debug("LLM {} [{}]: answered from the store (exchange {})", role_name(role), request.tag, ex->id);
        return r;
      }
    }
  }

  llm::ChatResponse r;
  try {
    r = provider->complete(request);
  } catch (const llm::PendingAnswer&) {
    // not answered: the same request asked again (the run resumed) keeps its tag
    std::lock_guard lock(mutex_);
    if (tag_counts_[base] == number + 1) tag_counts_[base] = number;
    throw;
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    fall_back(role, e.what(), false);
    return std::nullopt;
  }

  std::lock_guard lock(mutex_);
  store::LlmExchangeRecord ex;
  ex.run_id = run_id_;
  ex.agent = role_name(role);
  ex.tag = request.tag;
  ex.provider = provider->name();
  ex.model = model;
  ex.request_hash = hash;
  ex.request_json = redact(llm::canonical_request(request));
  ex.response_text = redact(r.text);
  ex.input_tokens = r.input_tokens;
  ex.output_tokens = r.output_tokens;
  ex.cost_usd = r.cost_usd;
  store_.add_llm_exchange(ex);
  budget_.add(r);
  counts_[role].add(r);
  if (auto why = budget_.exceeded()) fall_back(role, *why, true);
  return r;
}

json LlmSession::usage() const {
  std::lock_guard lock(mutex_);
  json roles = json::object();
  Counts total;
  for (Role r : kRoles) {
    const std::string spec = config_.spec_for(r);
    if (spec.empty()) continue;
    auto it = counts_.find(r);
    const Counts c = it != counts_.end() ? it->second : Counts{};
    json j = c.to_json();
    j["provider"] = spec;
    j["enabled"] = !disabled_.count(r);
    roles[role_name(r)] = j;
    total.requests += c.requests;
    total.cached += c.cached;
    total.input_tokens += c.input_tokens;
    total.output_tokens += c.output_tokens;
    total.cost_usd += c.cost_usd;
  }
  const auto& b = config_.budget;
  return {{"roles", roles},
          {"total", total.to_json()},
          {"fallbacks", fallbacks_},
          {"budget", {{"tokens", b.max_tokens}, {"usd", b.max_usd}, {"seconds", b.max_seconds}}},
          {"elapsed_s", budget_.elapsed_s()},
          {"replay", config_.replay}};
}

}  // namespace kernelopt::agents
