/// \file
/// Gate 1, static validation: decides from the worker's `analyze` facts (Python
/// `ast` over one kernel's module text) whether a candidate may be compiled and
/// run at all. A candidate may only be `@triton.jit` functions (plus literal
/// constants and Inductor's `set_driver_to_gpu()` call), import only Triton and
/// Inductor's Triton helpers, keep the replaced kernel's name, parameters and
/// constexprs, call nothing that reaches torch, the OS or the interpreter, and
/// store to every pointer the original stores to.
///
/// Contract: pure function of its inputs; never throws on malformed facts
/// (missing fields read as empty, which fails closed where it matters). The
/// verdict's reason is the first violation; evidence.violations lists them all
/// as {"rule", "message", "line"?}. Facts shape: see the worker's analyze op
/// (python/kernelopt/worker) — parse_error, imports, toplevel, functions,
/// calls, names, stored_params.
#pragma once

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/verdict.hpp"

namespace kernelopt::verify {

struct StaticPolicy {
  /// Modules allowed in a plain `import M [as alias]`. Only these two: any
  /// other plain import binds a package root (`import torch._inductor...`
  /// binds `torch`).
  std::set<std::string> plain_imports = {"triton", "triton.language"};
  /// `from M import a, b`: module -> names allowed from it. `from triton import
  /// language` is the same module as `import triton.language`, so it is allowed.
  std::map<std::string, std::set<std::string>> from_imports = {
      {"triton", {"language"}},
      {"torch._inductor.runtime", {"triton_helpers", "triton_heuristics"}},
      {"torch._inductor.runtime.triton_helpers", {"libdevice", "math"}},
      {"torch._inductor.runtime.hints", {"AutotuneHint", "ReductionHint", "TileHint", "DeviceProperties"}},
      {"triton.language.extra", {"libdevice"}},
      {"triton.language.extra.cuda", {"libdevice"}},
  };
  /// The one module-level expression Inductor emits (selects the GPU driver
  /// before kernels are defined); any other expression is module-level code.
  std::string driver_call = "triton_helpers.set_driver_to_gpu()";
  /// A module-level constant expression (a docstring) does nothing; allowed
  /// when the facts mark it `"literal": true`.
  bool allow_literal_expressions = true;
  /// Must be every function's last (innermost) decorator.
  std::string jit_decorator = "triton.jit";
  /// The only decorators allowed besides jit, at most one per function.
  std::set<std::string> heuristic_decorators = {
      "triton_heuristics.fixed_config", "triton_heuristics.pointwise", "triton_heuristics.reduction",
      "triton_heuristics.persistent_reduction"};
  /// Prefix of the decorator that marks the original's kernel (as opposed to
  /// helper @triton.jit functions).
  std::string heuristics_prefix = "triton_heuristics.";
  /// Identifiers that reach the interpreter (code execution, reflection, I/O).
  std::set<std::string> forbidden_names = {"exec",   "eval",    "compile", "open",    "__import__",
                                           "globals", "locals", "getattr", "setattr", "delattr",
                                           "vars",   "input",   "breakpoint", "__builtins__"};
  /// Any other dunder name or attribute (`__class__`, `__subclasses__`, ...)
  /// is the classic route around a name blacklist; kernels need none except
  /// `__file__`, which Inductor's decorator passes as `filename=__file__`.
  bool forbid_dunder_names = true;
  std::set<std::string> allowed_dunder_names = {"__file__"};
  /// Modules whose functions must not be called: a call whose dotted name
  /// starts with `M.` — or reaches M through an attribute chain, e.g.
  /// `triton_helpers.torch.empty` — is rejected (torch work, I/O, processes,
  /// sockets, clocks, FFI).
  std::set<std::string> forbidden_call_modules = {"torch",  "os",        "sys",    "subprocess", "socket",
                                                  "shutil", "pathlib",   "importlib", "ctypes", "time"};
  /// Functions rejected by their last name component, whatever the module's
  /// alias (`tl.`, `triton.language.`): inline PTX escapes every other check.
  std::set<std::string> forbidden_call_leaves = {"inline_asm_elementwise"};
};

/// Checks candidate facts against the policy and against the original kernel
/// (the original's first function with a `triton_heuristics.*` decorator, or
/// its first function if none has one).
Verdict static_gate(const nlohmann::json& candidate_facts, const nlohmann::json& original_facts,
                    const StaticPolicy& policy = {});

}  // namespace kernelopt::verify
