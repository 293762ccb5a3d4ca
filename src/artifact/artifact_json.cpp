// module_from_json / to_json: the artifact JSON <-> Module, with validation.
#include <set>
#include <string>
#include <utility>

#include "artifact/artifact.hpp"
#include "util/hash.hpp"

namespace kernelopt::artifact {

using nlohmann::json;

namespace {

// obj[key] as T; missing or null gives T{} unless required. Type errors name where and key.
template <class T>
T field(const json& obj, const char* key, const std::string& where, bool required = false) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) throw ArtifactError(where + ": missing '" + key + "'");
    return T{};
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw ArtifactError(where + ": '" + key + "' has the wrong type (" + it->type_name() + ")");
  }
}

// A list of strings where null entries mean "none" (launch buffers).
std::vector<std::string> strings_or_empty(const json& obj, const char* key, const std::string& where) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) throw ArtifactError(where + ": '" + key + "' is not a list");
  for (const json& item : *it) {
    if (item.is_null()) {
      out.emplace_back();
    } else if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else {
      throw ArtifactError(where + ": '" + key + "' has a " + item.type_name() + " entry");
    }
  }
  return out;
}

Span span_field(const json& obj, const char* key, const std::string& where, std::size_t limit) {
  auto it = obj.find(key);
  auto offset = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0; };
  if (it == obj.end() || !it->is_array() || it->size() != 2 || !offset((*it)[0]) || !offset((*it)[1])) {
    throw ArtifactError(where + ": '" + key + "' is not a [begin, end] pair of byte offsets");
  }
  Span span{(*it)[0].get<std::size_t>(), (*it)[1].get<std::size_t>()};
  if (span.begin > span.end || span.end > limit) {
    throw ArtifactError(where + ": " + key + " [" + std::to_string(span.begin) + ", " +
                        std::to_string(span.end) + ") out of range (source has " +
                        std::to_string(limit) + " bytes)");
  }
  return span;
}

bool nested(const Span& inner, const Span& outer) {
  return outer.begin <= inner.begin && inner.end <= outer.end;
}

Kernel kernel_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw ArtifactError("artifact: a kernel entry is not an object");
  Kernel k;
  k.name = field<std::string>(j, "name", "artifact kernel", true);
  const std::string where = "kernel " + k.name;
  k.kind = field<std::string>(j, "kind", where, true);
  k.source_hash = field<std::string>(j, "source_hash", where, true);
  k.grid_type = field<std::string>(j, "grid_type", where);
  k.reduction_hint = field<std::string>(j, "reduction_hint", where);
  k.source = span_field(j, "source_span", where, source.size());
  k.decorator = span_field(j, "decorator_span", where, source.size());
  k.function = span_field(j, "function_span", where, source.size());
  if (!nested(k.decorator, k.source)) throw ArtifactError(where + ": decorator_span not inside source_span");
  if (!nested(k.function, k.source)) throw ArtifactError(where + ": function_span not inside source_span");
  k.heuristic_args = field<std::map<std::string, std::string>>(j, "heuristic_args", where);
  k.size_hints = j.value("size_hints", json());
  k.signature = field<std::map<std::string, std::string>>(j, "signature", where);
  using Strings = std::vector<std::string>;
  k.params = field<Strings>(j, "params", where);
  k.constexprs = field<Strings>(j, "constexprs", where);
  k.mutated_args = field<Strings>(j, "mutated_args", where);
  k.aten_ops = field<Strings>(j, "aten_ops", where);
  k.source_nodes = field<Strings>(j, "source_nodes", where);
  k.helper_functions = field<Strings>(j, "helper_functions", where);
  k.fixed_constexprs = field<std::map<std::string, std::int64_t>>(j, "fixed_constexprs", where);
  if (j.contains("unmasked_numel") && !j["unmasked_numel"].is_null())  // absent in older artifacts
    k.unmasked_numel = field<std::map<std::string, std::int64_t>>(j, "unmasked_numel", where);
  if (j.contains("row_run_bytes") && !j["row_run_bytes"].is_null())  // absent in older artifacts
    k.row_run_bytes = field<std::int64_t>(j, "row_run_bytes", where);
  k.graph_fragment = field<std::string>(j, "graph_fragment", where);
  k.num_load = field<int>(j, "num_load", where);
  k.num_store = field<int>(j, "num_store", where);
  k.num_reduction = field<int>(j, "num_reduction", where);
  if (j.contains("num_loops") && !j["num_loops"].is_null()) k.num_loops = field<int>(j, "num_loops", where);
  k.decorators = strings_or_empty(j, "decorators", where);
  std::string_view text = std::string_view(source).substr(k.source.begin, k.source.size());
  if (util::sha256_hex(text) != k.source_hash) {
    throw ArtifactError(where + ": source_hash does not match the text at source_span");
  }
  return k;
}

Launch launch_from_json(const json& j, std::size_t i) {
  const std::string where = "launch " + std::to_string(i);
  Launch l;
  l.kernel = field<std::string>(j, "kernel", where, true);
  l.order = field<int>(j, "order", where);
  l.line = field<int>(j, "line", where);
  l.args = field<std::vector<std::string>>(j, "args", where);
  l.buffers = strings_or_empty(j, "buffers", where);
  l.numels = field<std::vector<std::int64_t>>(j, "numels", where);
  return l;
}

VendorCall vendor_call_from_json(const json& j, std::size_t i) {
  const std::string where = "vendor call " + std::to_string(i);
  VendorCall v;
  v.op = field<std::string>(j, "op", where, true);
  v.order = field<int>(j, "order", where);
  v.line = field<int>(j, "line", where);
  v.args = field<std::vector<std::string>>(j, "args", where);
  v.kwargs = field<std::map<std::string, std::string>>(j, "kwargs", where);
  v.buffers = strings_or_empty(j, "buffers", where);
  return v;
}

Buffer buffer_from_json(const json& j, const std::string& name) {
  const std::string where = "buffer " + name;
  Buffer b;
  b.shape = field<std::vector<std::int64_t>>(j, "shape", where);
  b.stride = field<std::vector<std::int64_t>>(j, "stride", where);
  b.dtype = field<std::string>(j, "dtype", where);
  b.origin = field<std::string>(j, "origin", where);
  b.device = field<std::string>(j, "device", where);
  b.alias_of = field<std::string>(j, "alias_of", where);
  return b;
}

// A list field of the artifact, each element built by make(element, index).
template <class T, class Make>
std::vector<T> list_field(const json& artifact, const char* key, Make make) {
  std::vector<T> out;
  const json& list = artifact.value(key, json::array());
  if (!list.is_array()) throw ArtifactError(std::string("artifact: '") + key + "' is not a list");
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(make(list[i], i));
  return out;
}

json null_if_empty(const std::string& s) { return s.empty() ? json() : json(s); }

json strings_with_nulls(const std::vector<std::string>& items) {
  json out = json::array();
  for (const std::string& s : items) out.push_back(null_if_empty(s));
  return out;
}

json span_json(const Span& span) { return json::array({span.begin, span.end}); }

}  // namespace

Module module_from_json(const json& artifact, std::string source, int index, std::string path) {
  if (!artifact.is_object()) throw ArtifactError("artifact JSON is not an object");
  Module m;
  m.index = index;
  m.path = std::move(path);
  m.source = std::move(source);
  m.source_hash = field<std::string>(artifact, "source_hash", "artifact", true);
  if (auto kind = field<std::string>(artifact, "input_kind", "artifact"); !kind.empty()) m.input_kind = kind;
  if (m.input_kind != "inductor" && m.input_kind != "triton") {
    throw ArtifactError("artifact: unknown input_kind '" + m.input_kind + "'");
  }
  std::string actual = util::sha256_hex(m.source);
  if (actual != m.source_hash) {
    throw ArtifactError("artifact source_hash " + m.source_hash + " does not match the source (sha256 " +
                        actual + ")" + (m.path.empty() ? "" : " of " + m.path));
  }
  m.kernels = list_field<Kernel>(artifact, "kernels",
                                 [&](const json& j, std::size_t) { return kernel_from_json(j, m.source); });
  std::set<std::string> names;
  for (const Kernel& k : m.kernels) {
    if (!names.insert(k.name).second) throw ArtifactError("artifact: kernel " + k.name + " appears twice");
  }
  m.launches = list_field<Launch>(artifact, "launches", launch_from_json);
  for (const Launch& l : m.launches) {
    if (!names.contains(l.kernel)) throw ArtifactError("launch of unknown kernel " + l.kernel);
  }
  m.vendor_calls = list_field<VendorCall>(artifact, "vendor_calls", vendor_call_from_json);
  const json& buffers = artifact.value("buffers", json::object());
  if (!buffers.is_object()) throw ArtifactError("artifact: 'buffers' is not an object");
  for (const auto& [name, b] : buffers.items()) m.buffers[name] = buffer_from_json(b, name);
  m.inputs = field<std::vector<std::string>>(artifact, "inputs", "artifact");
  m.outputs = field<std::vector<std::string>>(artifact, "outputs", "artifact");
  return m;
}

json to_json(const Module& m) {
  json kernels = json::array();
  for (const Kernel& k : m.kernels) {
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"source_hash", k.source_hash},
                       {"grid_type", null_if_empty(k.grid_type)},
                       {"reduction_hint", null_if_empty(k.reduction_hint)},
                       {"source_span", span_json(k.source)},
                       {"decorator_span", span_json(k.decorator)},
                       {"function_span", span_json(k.function)},
                       {"heuristic_args", k.heuristic_args},
                       {"size_hints", k.size_hints},
                       {"signature", k.signature},
                       {"params", k.params},
                       {"constexprs", k.constexprs},
                       {"fixed_constexprs", k.fixed_constexprs},
                       {"mutated_args", k.mutated_args},
                       {"aten_ops", k.aten_ops},
                       {"source_nodes", k.source_nodes},
                       {"helper_functions", k.helper_functions},
                       {"graph_fragment", k.graph_fragment},
                       {"num_load", k.num_load},
                       {"num_store", k.num_store},
                       {"num_reduction", k.num_reduction}});
    if (k.num_loops >= 0) kernels.back()["num_loops"] = k.num_loops;
    if (!k.decorators.empty()) kernels.back()["decorators"] = k.decorators;
    if (!k.unmasked_numel.empty()) kernels.back()["unmasked_numel"] = k.unmasked_numel;
    if (k.row_run_bytes > 0) kernels.back()["row_run_bytes"] = k.row_run_bytes;
  }
  json launches = json::array();
  for (const Launch& l : m.launches) {
    launches.push_back({{"kernel", l.kernel}, {"order", l.order}, {"line", l.line}, {"args", l.args},
                        {"buffers", strings_with_nulls(l.buffers)}, {"numels", l.numels}});
  }
  json vendor_calls = json::array();
  for (const VendorCall& v : m.vendor_calls) {
    vendor_calls.push_back({{"op", v.op}, {"order", v.order}, {"line", v.line}, {"args", v.args},
                            {"kwargs", v.kwargs}, {"buffers", v.buffers}});
  }
  json buffers = json::object();
  for (const auto& [name, b] : m.buffers) {
    json entry = {{"shape", b.shape}, {"stride", b.stride}, {"origin", b.origin}};
    if (!b.dtype.empty()) entry["dtype"] = b.dtype;
    if (!b.device.empty()) entry["device"] = b.device;
    if (!b.alias_of.empty()) entry["alias_of"] = b.alias_of;
    buffers[name] = std::move(entry);
  }
  json out = {{"source_hash", m.source_hash}, {"source_bytes", m.source.size()}, {"kernels", kernels},
              {"launches", launches},         {"vendor_calls", vendor_calls},    {"buffers", buffers},
              {"inputs", m.inputs},           {"outputs", m.outputs}};
  if (m.input_kind != "inductor") out["input_kind"] = m.input_kind;
  return out;
}

}  // namespace kernelopt::artifact
