// `kernelopt library list|show ID|export FILE|import FILE [--library FILE]`: the kernel library
// (src/store/library.hpp) as a table, one entry with its source, and merging library files.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "engine/optimize.hpp"
#include "store/library.hpp"

namespace kernelopt::cli {

namespace {

struct LibraryArgs {
  std::string library;    // "" = .kernelopt/library.kolib
  std::string workspace = ".kernelopt";
  std::string key;        // show: id or fingerprint prefix
  std::string file;       // export/import: the other library file
};

std::string library_path(const LibraryArgs& a) {
  return a.library.empty() ? (std::filesystem::path(a.workspace) / "library.kolib").string() : a.library;
}

store::Library open_existing(const std::string& path) {
  try {
    return store::Library::open_existing(path);
  } catch (const store::StoreError& e) {
    throw engine::UserError(e.what());
  }
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

int list(const LibraryArgs& a) {
  auto lib = open_existing(library_path(a));
  const auto entries = lib.entries();
  std::printf("%s: %zu entr%s\n", lib.path().c_str(), entries.size(), entries.size() == 1 ? "y" : "ies");
  if (entries.empty()) return 0;
  std::printf("%-4s %-12s %-44s %-8s %-9s %-8s %-14s %s\n", "id", "fingerprint", "kernel", "input", "origin",
              "speedup", "device", "verified");
  for (const auto& e : entries) {
    std::printf("%-4lld %-12s %-44s %-8s %-9s %-8s %-14s %s\n", static_cast<long long>(e.id),
                e.fingerprint.substr(0, 12).c_str(), shorten(e.kernel_name, 44).c_str(), e.input_kind.c_str(),
                e.origin.c_str(), fmt::format("{:.3f}x", e.speedup).c_str(), shorten(e.device, 14).c_str(),
                e.created_at.substr(0, 10).c_str());
  }
  return 0;
}

int show(const LibraryArgs& a) {
  auto lib = open_existing(library_path(a));
  auto e = lib.get(a.key);
  if (!e) {
    throw engine::UserError(fmt::format("{}: no entry with id or unique fingerprint prefix '{}' (see `kernelopt "
                                        "library list`)", lib.path().string(), a.key));
  }
  std::printf("entry %lld\n", static_cast<long long>(e->id));
  std::printf("fingerprint:    %s\n", e->fingerprint.c_str());
  std::printf("kernel:         %s (%s, %s)\n", e->kernel_name.c_str(), e->kind.c_str(), e->input_kind.c_str());
  std::printf("origin:         %s\n", e->origin.c_str());
  std::printf("speedup:        %.3fx (95%% CI [%.3f, %.3f]), kernel alone vs the original\n", e->speedup, e->ci_low,
              e->ci_high);
  std::printf("device:         %s; torch %s; triton %s\n", e->device.c_str(), e->torch_version.c_str(),
              e->triton_version.c_str());
  std::printf("verified:       %s by run %lld (%s)\n", e->created_at.c_str(), static_cast<long long>(e->run_id),
              e->run_out_dir.c_str());
  std::printf("config:         %s\n", e->config.dump().c_str());
  std::printf("original:       sha256 %s\n", e->original_source_hash.c_str());
  std::printf("source:         sha256 %s\n", e->source_hash.c_str());
  std::printf("evidence:       %s\n\n", e->evidence.dump().c_str());
  std::printf("%s\n", e->source.c_str());
  return 0;
}

void print_merge(const store::MergeReport& r, const std::string& from, const std::string& into) {
  std::printf("%s -> %s: %d added, %d replaced by a faster winner, %d kept (existing faster), %d unchanged\n",
              from.c_str(), into.c_str(), r.added, r.replaced, r.kept_existing, r.unchanged);
  for (const auto& c : r.conflicts) std::printf("  conflict %s\n", c.c_str());
}

int export_to(const LibraryArgs& a) {
  auto lib = open_existing(library_path(a));
  try {
    auto target = store::Library::open(a.file);
    print_merge(target.merge_from(lib), lib.path().string(), a.file);
  } catch (const store::StoreError& e) {
    throw engine::UserError(e.what());
  }
  return 0;
}

int import_from(const LibraryArgs& a) {
  auto source = open_existing(a.file);
  const std::string path = library_path(a);
  try {
    auto lib = store::Library::open(path);
    print_merge(lib.merge_from(source), a.file, path);
  } catch (const store::StoreError& e) {
    throw engine::UserError(e.what());
  }
  return 0;
}

}  // namespace

Runner add_library(CLI::App& app) {
  auto a = std::make_shared<LibraryArgs>();
  auto* sub = app.add_subcommand("library", "the kernel library: verified winners by kernel fingerprint (list, show, "
                                            "export, import)");
  sub->require_subcommand(1);
  sub->add_option("--library", a->library, "library file (default: WORKSPACE/library.kolib)");
  sub->add_option("--workspace", a->workspace, "directory of the store shared by runs")->capture_default_str();
  auto* ls = sub->add_subcommand("list", "a table of the entries");
  auto* sh = sub->add_subcommand("show", "one entry, with its evidence and its source");
  sh->add_option("id", a->key, "entry id, or a unique fingerprint prefix (6+ characters)")->required();
  auto* ex = sub->add_subcommand("export", "merge this library's entries into FILE (created if absent)");
  ex->add_option("file", a->file, "the library file to write")->required();
  auto* im = sub->add_subcommand("import", "merge FILE's entries into this library (per fingerprint, the faster "
                                           "verified winner is kept; conflicts are listed)");
  im->add_option("file", a->file, "the library file to read")->required();
  for (auto* s : {ls, sh, ex, im}) {
    s->add_option("--library", a->library, "library file (default: WORKSPACE/library.kolib)");
    s->add_option("--workspace", a->workspace, "directory of the store shared by runs");
  }
  return [a, ls, sh, ex, im] {
    if (ls->parsed()) return list(*a);
    if (sh->parsed()) return show(*a);
    if (ex->parsed()) return export_to(*a);
    if (im->parsed()) return import_from(*a);
    return 1;
  };
}

}  // namespace kernelopt::cli
