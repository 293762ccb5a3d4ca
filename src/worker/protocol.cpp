// The worker protocol's schema, checked on the engine's side. See protocol.hpp.
#include "worker/protocol.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "util/hash.hpp"

using nlohmann::json;

namespace kernelopt::worker {

namespace detail {
extern const char kProtocolJson[];  // protocol_embedded.cpp, generated from protocol.json
extern const std::size_t kProtocolJsonSize;
}  // namespace detail

namespace {

const std::set<std::string> kKnownKeywords = {"type",  "properties", "required", "additionalProperties", "items",
                                              "enum",  "minimum",    "minItems", "$ref",  "default",
                                              "description"};

std::string text() { return std::string(detail::kProtocolJson, detail::kProtocolJsonSize); }

/// Throws for a keyword the checker does not implement, anywhere in `schema`.
void check_keywords(const json& schema, const std::string& where) {
  if (!schema.is_object()) throw std::logic_error("protocol.json " + where + ": a schema must be an object");
  for (const auto& [key, value] : schema.items()) {
    if (!kKnownKeywords.count(key)) throw std::logic_error(fmt::format("protocol.json {}: keyword {} is not checked", where, key));
    if (key == "properties") {
      for (const auto& [name, sub] : value.items()) check_keywords(sub, where + "/" + name);
    } else if (key == "items" || (key == "additionalProperties" && value.is_object())) {
      check_keywords(value, where + "/" + key);
    }
  }
}

json load() {
  json doc = json::parse(text(), nullptr, false);
  if (!doc.is_object() || !doc.contains("ops") || !doc.contains("definitions")) {
    throw std::logic_error("protocol.json: want an object with \"definitions\" and \"ops\"");
  }
  for (const auto& [name, def] : doc["definitions"].items()) check_keywords(def, "definitions/" + name);
  for (const auto& [op, parts] : doc["ops"].items()) {
    for (const char* part : {"args", "result"}) check_keywords(parts.at(part), op + "/" + part);
  }
  return doc;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  return false;
}

/// The first violation of `value` against `schema` at `path`; "" when there is none.
std::string violation(const json& schema, const json& value, const std::string& path);

std::string type_violation(const json& schema, const json& value, const std::string& path) {
  if (!schema.contains("type")) return "";
  const json& type = schema["type"];
  const json types = type.is_array() ? type : json::array({type});
  for (const auto& t : types) {
    if (has_type(value, t.get<std::string>())) return "";
  }
  return fmt::format("{}: want {}, got {}", path, type.is_array() ? type.dump() : type.get<std::string>(), value.type_name());
}

std::string object_violation(const json& schema, const json& value, const std::string& path) {
  const json props = schema.value("properties", json::object());
  for (const auto& name : schema.value("required", json::array())) {
    if (!value.contains(name.get<std::string>())) return fmt::format("{} {}: required", path, name.get<std::string>());
  }
  const json extra = schema.value("additionalProperties", json(true));
  for (const auto& [name, v] : value.items()) {
    const std::string at = path + " " + name;
    if (props.contains(name)) {
      if (auto bad = violation(props[name], v, at); !bad.empty()) return bad;
    } else if (extra.is_boolean() && !extra.get<bool>()) {
      return at + ": not an argument of this op";
    } else if (extra.is_object()) {
      if (auto bad = violation(extra, v, at); !bad.empty()) return bad;
    }
  }
  return "";
}

std::string violation(const json& schema, const json& value, const std::string& path) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    const std::string prefix = "#/definitions/";
    return violation(protocol_schema()["definitions"].at(ref.substr(prefix.size())), value, path);
  }
  if (auto bad = type_violation(schema, value, path); !bad.empty()) return bad;
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    return fmt::format("{}: {} is not one of {}", path, value.dump(), schema["enum"].dump());
  }
  if (schema.contains("minimum") && value.is_number() && value.get<double>() < schema["minimum"].get<double>()) {
    return fmt::format("{}: {} is below {}", path, value.dump(), schema["minimum"].dump());
  }
  if (value.is_array()) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) {
      return fmt::format("{}: want at least {} item(s)", path, schema["minItems"].get<size_t>());
    }
    if (schema.contains("items")) {
      for (size_t i = 0; i < value.size(); ++i) {
        if (auto bad = violation(schema["items"], value[i], fmt::format("{}[{}]", path, i)); !bad.empty()) return bad;
      }
    }
  }
  return value.is_object() ? object_violation(schema, value, path) : "";
}

}  // namespace

const json& protocol_schema() {
  static const json schema = load();
  return schema;
}

const std::string& protocol_schema_sha256() {
  static const std::string sha = util::sha256_hex(text());
  return sha;
}

std::string protocol_violation(const std::string& op, const std::string& part, const json& value) {
  const json& ops = protocol_schema()["ops"];
  if (!ops.contains(op)) return fmt::format("{}: not an op of the worker protocol", op);
  return violation(ops[op].at(part), value, op + (part == "args" ? " request" : " result"));
}

}  // namespace kernelopt::worker
