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
/// With a non-empty `grid` (1-3 Python integer expressions over the kernel's
/// numel parameters, already checked by the static gate), inductor_meta becomes
/// {**<inductor_meta>, 'grid_type': 'FixedGrid', 'fixed_grid': [g0, g1, g2]}
/// (missing entries are '1'), so Inductor's launcher launches that grid.
/// Throws ArtifactError for a grid entry with characters outside
/// [A-Za-z0-9_ +-*/%()] (it is written inside a Python string literal).
std::string kernel_source_with_config(const Module& module, const Kernel& kernel,
                                      const LaunchConfig& cfg, const std::vector<std::string>& grid = {});

/// Where one function sits in a candidate's code: 1-based lines of its first
/// decorator, its `def`, and its last line (from the worker's analyze facts).
struct FunctionLines {
  int first_line = 0, def_line = 0, end_line = 0;
};

/// An LLM-written kernel in the place of an Inductor kernel: the original
/// kernel text before its heuristics decorator (the imports), the answer's
/// code before its kernel function (helper @triton.jit functions), then the
/// answer's kernel function (with its own decorators) under
/// fixed_config(cfg, grid) as in kernel_source_with_config. Lines after the
/// kernel function are dropped. Throws ArtifactError on line numbers outside
/// `code` or a kernel without its heuristics decorator.
std::string inductor_candidate(const Module& module, const Kernel& kernel, const std::string& code,
                               const FunctionLines& fn, const LaunchConfig& cfg,
                               const std::vector<std::string>& grid = {});

/// An LLM-written kernel in the place of a standalone (user-file) kernel: the
/// answer's helper functions, the original's decorators (autotune, jit: the
/// user's launcher keeps working), then the answer's function from its `def`.
std::string standalone_candidate(const Module& module, const Kernel& kernel, const std::string& code,
                                 const FunctionLines& fn);

/// Why a standalone kernel's launch config cannot be tuned, or "" when it can.
/// It can when its only decorator is `@<m>.jit` for a module name <m> (e.g.
/// `@triton.jit`): under `@triton.autotune` or `@triton.heuristics` the user's
/// own code chooses the config; any other decorator, or a bare `@jit`, leaves
/// no safe place for the engine's decorator.
std::string standalone_untunable(const Kernel& kernel);

/// A standalone kernel's whole span with the launch config pinned: one line
/// `@<m>.heuristics(values={'num_warps': lambda args: W, 'num_stages': lambda args: S})`
/// (<m> from its `@<m>.jit`) before its own text, which stays byte-identical.
/// Triton's Heuristics.run sets these keyword arguments before it calls the
/// jit function, so they override whatever the user's launcher passes
/// (`kernel[grid](..., num_warps=8)` or Helion's `_launcher(..., num_warps=4)`);
/// a one-config `@triton.autotune` would not: its run() passes both the call's
/// and the config's num_warps, a TypeError (Triton 3.6 and 3.9). Block sizes
/// stay the launcher's. Throws ArtifactError if the kernel is untunable
/// (standalone_untunable), cfg has block sizes, num_warps is not a power of two
/// in [1, 32] or num_stages is not in [1, 8].
std::string standalone_with_config(const Module& module, const Kernel& kernel, const LaunchConfig& cfg);

/// The module source with the named kernels' source texts replaced (kernel
/// name -> new text for inside the existing ''' literal). Throws ArtifactError
/// for an unknown kernel name, or a new text that contains ''' or \"\"\", a
/// backslash or a NUL byte, or ends with the literal's quote character.
/// Every byte outside the replaced spans is identical to the original.
/// A standalone module (input_kind "triton") has no literal: the kernel's whole
/// function (decorators included) is replaced and only the NUL check applies.
std::string stitch_kernels(const Module& module, const std::map<std::string, std::string>& new_sources);

}  // namespace kernelopt::artifact
