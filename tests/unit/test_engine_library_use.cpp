// Tests for engine/library_use.hpp: renaming an entry's kernel, and the entry a kept winner becomes.
#include "engine/library_use.hpp"
#include "engine/input_kind.hpp"

#include <gtest/gtest.h>

using namespace kernelopt;

TEST(LibraryUse, RenameReplacesWholeIdentifiersOnly) {
  const std::string text =
      "@triton.jit\ndef triton_poi_add_0(x):\n    pass\n# 'kernel_name': 'triton_poi_add_0', triton_poi_add_01, "
      "my_triton_poi_add_0\n";
  const std::string out = engine::rename_kernel(text, "triton_poi_add_0", "triton_poi_add_3");
  EXPECT_NE(out.find("def triton_poi_add_3(x)"), std::string::npos);
  EXPECT_NE(out.find("'kernel_name': 'triton_poi_add_3'"), std::string::npos);
  EXPECT_NE(out.find("triton_poi_add_01"), std::string::npos);     // a longer name stays
  EXPECT_NE(out.find("my_triton_poi_add_0"), std::string::npos);   // so does a name that contains it
  EXPECT_EQ(engine::rename_kernel(text, "triton_poi_add_0", "triton_poi_add_0"), text);
  EXPECT_EQ(engine::rename_kernel("triton_poi_add_0", "triton_poi_add_0", "k"), "k");  // at both ends
}

TEST(LibraryUse, EntryOfAKeptWinnerCarriesItsEvidence) {
  artifact::Kernel k;
  k.name = "triton_red_fused_0";
  k.kind = "reduction";
  k.source_hash = "orig";
  report::KernelOutcome o;
  o.status = "improved";
  o.winner_source = "new text";
  o.winner_config = {{"XBLOCK", 1}};
  o.winner_origin = "tuner";
  o.kernel_speedup.speedup = 1.4;
  o.kernel_speedup.ci_low = 1.2;
  o.kernel_speedup.ci_high = 1.6;
  o.why = "launch config";
  engine::EntryContext ec;
  ec.fingerprint = "fp";
  ec.device = "NVIDIA H200";
  ec.torch_version = "2.11";
  ec.triton_version = "3.6";
  ec.run_id = 3;
  ec.run_out_dir = "/r";
  ec.end_to_end = {{"passed", true}, {"speedup", 1.1}};
  ec.input_kind = engine::input_kind_named("module").library_kind();
  auto e = engine::library_entry(k, o, ec);
  EXPECT_EQ(e.fingerprint, "fp");
  EXPECT_EQ(e.kernel_name, "triton_red_fused_0");
  EXPECT_EQ(e.input_kind, "inductor");
  EXPECT_EQ(e.original_source_hash, "orig");
  EXPECT_EQ(e.source, "new text");
  EXPECT_DOUBLE_EQ(e.speedup, 1.4);
  EXPECT_DOUBLE_EQ(e.ci_low, 1.2);
  EXPECT_EQ(e.evidence["end_to_end"]["passed"], true);
  EXPECT_EQ(e.evidence["gates"].size(), 4u);
  EXPECT_FALSE(e.evidence.contains("from_library_entry"));
  ec.input_kind = engine::input_kind_named("helion").library_kind();  // a Helion run's kernels are a Triton file's
  o.library_entry = 5;
  auto t = engine::library_entry(k, o, ec);
  EXPECT_EQ(t.input_kind, "triton");
  EXPECT_EQ(t.evidence["from_library_entry"], 5);
}
