/// \file
/// The artifact: what kernelopt knows about one Inductor output module, built
/// from the JSON that python/kernelopt/artifact/inductor.py emits plus the
/// module's source text. It names what the engine may change (the Triton
/// sub-kernels, with the byte spans of their source, heuristics decorator and
/// function inside the module) and what it must keep (vendor calls, buffers,
/// the wrapper). Contract: a Module returned by module_from_json has been
/// checked against its source (module hash, every span in range and nested,
/// kernel hashes, launches naming known kernels), so spans can be spliced
/// without re-parsing Python. Errors throw ArtifactError with a one-line
/// message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelopt::artifact {

/// The artifact JSON or the source does not match what the engine expects.
class ArtifactError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Half-open byte range [begin, end) into the module source.
struct Span {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

/// One Triton sub-kernel: the text inside its async_compile.triton('''...''').
struct Kernel {
  std::string name;
  std::string kind;            // decorator name: pointwise|reduction|persistent_reduction|...
  std::string source_hash;     // sha256 of the kernel source text
  std::string grid_type;       // inductor_meta grid_type, e.g. Grid1D; "" if absent
  std::string reduction_hint;  // INNER|OUTER|DEFAULT...; "" if absent
  Span source;                 // the literal's content (JSON source_span)
  Span decorator;              // the heuristics call after '@' (JSON decorator_span)
  Span function;               // the def ... body (JSON function_span)
  std::map<std::string, std::string> heuristic_args;  // decorator keyword -> Python source text
  nlohmann::json size_hints;                          // e.g. {"x": 64, "r0_": 128}; null if absent
  std::map<std::string, std::string> signature;       // param -> triton type ("*fp32", "i32", ...)
  std::vector<std::string> params, constexprs, mutated_args, aten_ops, source_nodes;
  std::vector<std::string> helper_functions;          // other defs in the kernel source
  std::map<std::string, std::int64_t> fixed_constexprs;  // constexprs assigned in the body
  // blocks whose mask the kernel fixes to all True, with the constant count they must divide
  std::map<std::string, std::int64_t> unmasked_numel;
  // a looped reduction whose rows interleave in memory: the bytes of one row that lie together before the
  // next row's (the Tuner prefers programs of rows that fill 128-byte lines); 0 = contiguous rows or unknown
  std::int64_t row_run_bytes = 0;
  std::string graph_fragment;
  int num_load = 0, num_store = 0, num_reduction = 0;
  int num_loops = -1;                     // for/while loops in the kernel function; -1 = not counted (Inductor)
  std::vector<std::string> decorators;    // standalone kernels: dotted decorator names, outermost first
                                          // ("triton.autotune", "triton.jit"; "" where not a dotted name)
  bool operator==(const Kernel&) const = default;
};

/// One `<kernel>.run(...)` in call().
struct Launch {
  std::string kernel;
  int order = 0;  // position among launches and vendor calls
  int line = 0;   // 1-based line in the module
  std::vector<std::string> args;     // each argument's source text
  std::vector<std::string> buffers;  // the buffer each argument refers to; "" where none
  std::vector<std::int64_t> numels;  // the integer-literal arguments
  bool operator==(const Launch&) const = default;
};

/// One vendor call (extern_kernels.*, aten.*, torch.ops.*) the engine keeps.
struct VendorCall {
  std::string op;
  int order = 0, line = 0;
  std::vector<std::string> args;
  std::map<std::string, std::string> kwargs;  // keyword -> source text
  std::vector<std::string> buffers;
  bool operator==(const VendorCall&) const = default;
};

/// A tensor of call(): an input (assert_size_stride) or an allocation.
struct Buffer {
  std::vector<std::int64_t> shape, stride;  // empty if not integer literals
  std::string dtype;                        // float32, bfloat16, ...; "" if unknown
  std::string origin;                       // input|alloc
  std::string device;                       // cuda|cpu|...; "" for inputs
  std::string alias_of;                     // the buffer whose memory this name reuses; "" if none
  std::int64_t numel() const;
  /// numel() * dtype size. Throws ArtifactError for an empty or unknown dtype.
  std::int64_t bytes() const;
  bool operator==(const Buffer&) const = default;
};

/// Size in bytes of one element of dtype ("float32", "torch.bfloat16", ...).
/// Throws ArtifactError for an unknown dtype.
std::int64_t dtype_size(const std::string& dtype);

/// One Inductor output module with its source.
struct Module {
  int index = 0;            // position among the run's modules
  std::string input_kind = "inductor";  // inductor (an output module) | triton (a user's standalone kernel file)
  std::string path;         // where the source was read from
  std::string source;       // the module's bytes
  std::string source_hash;  // sha256 of source
  std::vector<Kernel> kernels;
  std::vector<Launch> launches;
  std::vector<VendorCall> vendor_calls;
  std::map<std::string, Buffer> buffers;
  std::vector<std::string> inputs, outputs;

  /// The kernel named name, or nullptr.
  const Kernel* find_kernel(const std::string& name) const;
  /// The kernel's source text (inside the ''' literal).
  std::string kernel_source(const Kernel& kernel) const;
  /// The launches of kernel, in the order they appear.
  std::vector<const Launch*> launches_of(const std::string& kernel) const;
  bool operator==(const Module&) const = default;
};

/// Builds a Module from the parser's JSON and the module's source text.
/// Validates: source_hash == sha256(source); every span within the source;
/// decorator and function spans nested inside the kernel's source span;
/// each kernel's source_hash matches its text; kernel names unique; launches
/// name known kernels. Throws ArtifactError with a one-line message otherwise.
Module module_from_json(const nlohmann::json& artifact, std::string source, int index,
                        std::string path);

/// The parser's JSON shape (without the source); module_from_json of it with
/// the same source gives back an equal Module. Empty strings where the parser
/// writes null (reduction_hint, grid_type, launch buffers) come out as null;
/// an empty dtype or device is left out.
nlohmann::json to_json(const Module& module);

}  // namespace kernelopt::artifact
