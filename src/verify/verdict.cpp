#include "verify/verdict.hpp"

namespace kernelopt::verify {

nlohmann::json Verdict::to_json() const {
  return {{"gate", gate}, {"passed", passed}, {"reason", reason}, {"evidence", evidence}};
}

}  // namespace kernelopt::verify
