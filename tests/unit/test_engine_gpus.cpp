// Which GPUs a command may use: --gpus values, each process its own GPU, the visible GPUs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "engine/gpus.hpp"
#include "engine/optimize.hpp"

using namespace kernelopt::engine;

namespace {

/// Sets an environment variable for one scope; restores the old value (or its absence) after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1); else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1); else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(EngineGpus, ParseGpus) {
  EXPECT_EQ(parse_gpus("all", 0), 1);  // no GPU: all = one bench, as without --gpus
  EXPECT_EQ(parse_gpus("all", 1), 1);
  EXPECT_EQ(parse_gpus("all", 8), 8);
  EXPECT_EQ(parse_gpus("1", 0), 1);
  EXPECT_EQ(parse_gpus("4", 2), 4);  // the caller checks it against the GPUs visible
  for (const char* bad : {"0", "-1", "x", "", "2x", "1.5", "ALL"}) {
    EXPECT_THROW(parse_gpus(bad, 8), UserError) << bad;
  }
}

TEST(EngineGpus, GpuIdsGiveEachProcessItsOwnGpu) {
  const std::vector<std::string> visible = {"3", "5", "GPU-5e1a"};
  EXPECT_EQ(gpu_ids(2, "cuda", visible), (std::vector<std::string>{"3", "5"}));
  EXPECT_EQ(gpu_ids(3, "cuda:0", visible), visible);
  EXPECT_EQ(gpu_ids(1, "cuda:1", visible), std::vector<std::string>{""});  // one process sees what this one sees
  EXPECT_EQ(gpu_ids(2, "cpu", {}), (std::vector<std::string>{"", ""}));    // the interpreter: no GPU to hand out
  EXPECT_THROW(gpu_ids(4, "cuda", visible), UserError);                     // fewer visible than asked for
  EXPECT_THROW(gpu_ids(2, "cuda:1", visible), UserError);                   // every process would use cuda:1
  try {
    gpu_ids(4, "cuda", visible);
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "--gpus 4: 3 GPU(s) visible (CUDA_VISIBLE_DEVICES, else nvidia-smi -L)");
  }
}

TEST(EngineGpus, VisibleGpusFollowCudaVisibleDevices) {
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "2, 3,,GPU-5e1a");
    EXPECT_EQ(visible_gpus(), (std::vector<std::string>{"2", "3", "GPU-5e1a"}));
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "");
    EXPECT_TRUE(visible_gpus().empty());
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "0,-1,1");  // CUDA stops at the invalid entry
    EXPECT_EQ(visible_gpus(), std::vector<std::string>{"0"});
  }
}
