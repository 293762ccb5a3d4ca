/// \file
/// Byte-exact rewriting of an Inductor output module. The engine changes only
/// the text inside the Triton kernels' ''' literals; every other byte of the
/// module (wrapper, vendor calls, comments, other kernels) is kept exactly, so
/// a stitched module differs from the original only where a kernel changed.
/// Contract: all edits go through splice, which refuses overlapping or
/// out-of-range spans; new kernel text is refused if it could end or alter
/// the string literal it goes into. Errors throw ArtifactError.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/artifact.hpp"
#include "artifact/config.hpp"

namespace kernelopt::artifact {

/// Replace the bytes at span with text.
struct Replacement {
  Span span;
  std::string text;
};

/// source with the replacements applied. They may be given in any order (they
/// are sorted by position) but must not overlap; empty spans insert. Throws
/// ArtifactError on overlap or a span outside source.
std::string splice(std::string_view source, std::vector<Replacement> replacements);

/// The kernel's source text with its heuristics decorator replaced by
/// triton_heuristics.fixed_config(config=<cfg.python_dict()>, filename=__file__,
/// triton_meta=<heuristic_args["triton_meta"]>, inductor_meta=<heuristic_args["inductor_meta"]>).
/// Everything else in the kernel source is byte-identical. Throws
/// ArtifactError if triton_meta or inductor_meta is missing, or if cfg's block
/// names are not exactly the kernel's constexpr parameters (Triton would refuse
/// the launch).
std::string kernel_source_with_config(const Module& module, const Kernel& kernel,
                                      const LaunchConfig& cfg);

/// The module source with the named kernels' source texts replaced (kernel
/// name -> new text for inside the existing ''' literal). Throws ArtifactError
/// for an unknown kernel name, or a new text that contains ''' or \"\"\", a
/// backslash or a NUL byte, or ends with the literal's quote character.
/// Every byte outside the replaced spans is identical to the original.
std::string stitch_kernels(const Module& module, const std::map<std::string, std::string>& new_sources);

}  // namespace kernelopt::artifact
