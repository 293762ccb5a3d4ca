#include "artifact/artifact.hpp"

#include <string_view>

namespace kernelopt::artifact {

namespace {

struct DtypeSize {
  std::string_view name;
  std::int64_t bytes;
};

// Names as the parser writes them (torch.* without the prefix) plus Triton's short names.
constexpr DtypeSize kDtypeSizes[] = {
    {"float64", 8},       {"float32", 4},        {"float16", 2},       {"bfloat16", 2},
    {"int64", 8},         {"int32", 4},          {"int16", 2},         {"int8", 1},
    {"uint64", 8},        {"uint32", 4},         {"uint16", 2},        {"uint8", 1},
    {"bool", 1},          {"complex128", 16},    {"complex64", 8},     {"complex32", 4},
    {"float8_e4m3fn", 1}, {"float8_e5m2", 1},    {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1},
    {"float8_e8m0fnu", 1}, {"fp64", 8},          {"fp32", 4},          {"fp16", 2},
    {"bf16", 2},          {"i64", 8},            {"i32", 4},           {"i16", 2},
    {"i8", 1},            {"u8", 1},             {"i1", 1},
};

}  // namespace

std::int64_t dtype_size(const std::string& dtype) {
  std::string_view name = dtype;
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const auto& entry : kDtypeSizes) {
    if (entry.name == name) return entry.bytes;
  }
  throw ArtifactError("unknown dtype '" + dtype + "'");
}

std::int64_t Buffer::numel() const {
  std::int64_t n = 1;
  for (std::int64_t dim : shape) n *= dim;
  return n;
}

std::int64_t Buffer::bytes() const {
  if (dtype.empty()) throw ArtifactError("buffer has no dtype; its size in bytes is unknown");
  return numel() * dtype_size(dtype);
}

const Kernel* Module::find_kernel(const std::string& name) const {
  for (const Kernel& kernel : kernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

std::string Module::kernel_source(const Kernel& kernel) const {
  if (kernel.source.begin > kernel.source.end || kernel.source.end > source.size()) {
    throw ArtifactError("kernel " + kernel.name + ": source span out of range");
  }
  return source.substr(kernel.source.begin, kernel.source.size());
}

std::vector<const Launch*> Module::launches_of(const std::string& kernel) const {
  std::vector<const Launch*> out;
  for (const Launch& launch : launches) {
    if (launch.kernel == kernel) out.push_back(&launch);
  }
  return out;
}

}  // namespace kernelopt::artifact
