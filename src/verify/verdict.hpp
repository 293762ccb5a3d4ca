/// \file
/// The common result of the four gates (static, correctness, model,
/// performance). Gates are pure policy over JSON evidence from the worker: they
/// never throw across that boundary, they return a Verdict. Contract: `gate`
/// is one of "static" | "correctness" | "model" | "performance"; `reason` is a
/// single line a human can act on (the first violation when failed); `evidence`
/// holds everything the decision looked at, for the store and the report.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelopt::verify {

struct Verdict {
  std::string gate;         // "static" | "correctness" | "model" | "performance"
  bool passed = false;
  std::string reason;       // one line; names the first violation when failed
  nlohmann::json evidence;  // the numbers and facts behind the decision

  /// {"gate", "passed", "reason", "evidence"}; evidence is null when empty.
  nlohmann::json to_json() const;
};

}  // namespace kernelopt::verify
