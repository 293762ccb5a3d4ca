// The worker protocol's schema as the engine checks it (python/kernelopt/worker/protocol.json, compiled in).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "worker/protocol.hpp"

using nlohmann::json;
using kernelopt::worker::protocol_violation;

namespace {

json check_args() {
  return {{"problem", "/p.py"}, {"device", "cpu"}, {"seeds", {0, 1, 2}}, {"input_kind", "module"}, {"module", 0},
          {"kernel", "k"}, {"candidate_module", "/c.py"}, {"tolerances", kernelopt::engine::OptimizeOptions().tolerances_json()},
          {"repeats", 3}};
}

}  // namespace

TEST(WorkerProtocol, TheCompiledSchemaIsTheWorkersFileAndLoads) {
  const std::string file = kernelopt::util::read_file(std::string(KERNELOPT_SOURCE_DIR) + "/python/kernelopt/worker/protocol.json");
  EXPECT_EQ(kernelopt::worker::protocol_schema_sha256(), kernelopt::util::sha256_hex(file));
  const json& ops = kernelopt::worker::protocol_schema()["ops"];
  for (const char* op : {"hello", "doctor", "analyze", "rewrite", "helion_export", "validate", "capture", "parse",
                         "compile", "check", "model_check", "profile", "bench", "final_check"}) {
    EXPECT_TRUE(ops.contains(op)) << op;
  }
}

TEST(WorkerProtocol, ARequestIsCheckedArgumentByArgument) {
  EXPECT_EQ(protocol_violation("check", "args", check_args()), "");
  json missing = check_args();
  missing.erase("tolerances");
  EXPECT_EQ(protocol_violation("check", "args", missing), "check request tolerances: required");
  json old = check_args();  // the per-dtype table replaced the fp32 pair
  old["atol"] = 1e-4;
  EXPECT_EQ(protocol_violation("check", "args", old), "check request atol: not an argument of this op");
  json half = check_args();
  half["tolerances"].erase("bfloat16");
  EXPECT_EQ(protocol_violation("check", "args", half), "check request tolerances bfloat16: required");
  json typed = check_args();
  typed["seeds"] = {0, "1"};
  EXPECT_EQ(protocol_violation("check", "args", typed), "check request seeds[1]: want integer, got string");
  json kind = check_args();
  kind["input_kind"] = "onnx";
  EXPECT_EQ(protocol_violation("check", "args", kind),
            "check request input_kind: \"onnx\" is not one of [\"module\",\"triton\",\"helion\"]");
  EXPECT_EQ(protocol_violation("bench", "args", {{"problem", "/p.py"}, {"candidates", {"/c.py"}}, {"trials", 0}}),
            "bench request trials: 0 is below 1");
  EXPECT_EQ(protocol_violation("compile_all", "args", json::object()), "compile_all: not an op of the worker protocol");
}

TEST(WorkerProtocol, AResultNeedsTheKeysTheEngineReads) {
  EXPECT_EQ(protocol_violation("bench", "result", {{"samples_ms", {{"baseline", {1.0, 1.1}}}}}), "");
  EXPECT_EQ(protocol_violation("bench", "result", {{"samples_ms", {{"baseline", {1.0, "slow"}}}}}),
            "bench result samples_ms baseline[1]: want number, got string");
  EXPECT_EQ(protocol_violation("compile", "result", json::object()), "compile result compiled: required");
  // extra keys in a result are the worker's to add (evidence grows); the engine reads what it knows
  EXPECT_EQ(protocol_violation("compile", "result", {{"compiled", true}, {"seconds", 0.5}}), "");
}
