/// \file
/// The worker protocol's one definition, python/kernelopt/worker/protocol.json (JSON Schema, draft 7),
/// compiled into the engine: each op's arguments with their defaults, and the keys of its result. The
/// worker checks requests and results against the same file (python/kernelopt/worker/protocol.py); its
/// hello reply names the file's SHA-256, so an engine and a worker built from different copies refuse
/// each other at the handshake. The checker knows the keywords the file uses (type, properties,
/// required, additionalProperties, items, enum, minimum, minItems, local $ref) and refuses any other,
/// so the file cannot say more than both sides check.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::worker {

/// The embedded protocol.json, parsed; std::logic_error if it does not parse or uses a keyword the
/// checker does not know.
const nlohmann::json& protocol_schema();

/// SHA-256 (hex) of the embedded protocol.json's bytes: the hello reply's "schema".
const std::string& protocol_schema_sha256();

/// "" when `value` is allowed as op's request arguments (part "args") or its result (part "result");
/// else the first violation in one line, e.g. "check request tolerances: required". An op the
/// protocol does not name is a violation.
std::string protocol_violation(const std::string& op, const std::string& part, const nlohmann::json& value);

}  // namespace kernelopt::worker
