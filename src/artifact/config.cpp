#include "artifact/config.hpp"

#include "artifact/artifact.hpp"

namespace kernelopt::artifact {

using nlohmann::json;

namespace {

std::int64_t positive_int(const json& value, const std::string& key) {
  if (!value.is_number_integer()) {
    throw ArtifactError("launch config: '" + key + "' is not an integer (" + value.dump() + ")");
  }
  std::int64_t n = value.get<std::int64_t>();
  if (n <= 0) throw ArtifactError("launch config: '" + key + "' must be positive, got " + std::to_string(n));
  return n;
}

bool is_identifier(const std::string& key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

json LaunchConfig::to_json() const {
  json j = json::object();
  for (const auto& [name, size] : blocks) j[name] = size;
  j["num_warps"] = num_warps;
  j["num_stages"] = num_stages;
  return j;
}

LaunchConfig LaunchConfig::from_json(const json& j) {
  if (!j.is_object()) throw ArtifactError("launch config is not a JSON object: " + j.dump());
  LaunchConfig cfg;
  for (const auto& [key, value] : j.items()) {
    if (key == "num_warps") {
      cfg.num_warps = static_cast<int>(positive_int(value, key));
    } else if (key == "num_stages") {
      cfg.num_stages = static_cast<int>(positive_int(value, key));
    } else if (is_identifier(key)) {
      cfg.blocks[key] = positive_int(value, key);
    } else {
      throw ArtifactError("launch config: '" + key + "' is not a block name");
    }
  }
  return cfg;
}

std::string LaunchConfig::python_dict() const {
  std::string out = "{";
  for (const auto& [name, size] : blocks) {
    if (!is_identifier(name)) throw ArtifactError("launch config: '" + name + "' is not a block name");
    out += "'" + name + "': " + std::to_string(size) + ", ";
  }
  out += "'num_warps': " + std::to_string(num_warps) + ", 'num_stages': " + std::to_string(num_stages) + "}";
  return out;
}

std::string LaunchConfig::label() const {
  std::string out;
  for (const auto& [name, size] : blocks) out += name + "=" + std::to_string(size) + " ";
  out += "w" + std::to_string(num_warps) + " s" + std::to_string(num_stages);
  return out;
}

}  // namespace kernelopt::artifact
