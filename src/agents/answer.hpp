/// \file
/// Reading LLM answers: the structured parts of a model's text, pulled out
/// and validated before the engine acts on them. An answer is untrusted data:
/// nothing here executes, imports or evaluates any of it; kernel code comes
/// back as text, for the static gate to judge.
///
/// Fenced blocks: a line starting (after indentation) with three or more
/// backticks opens a block; its info string is the first word of the rest of
/// that line ("python", "py", "json", "" ...); a line of at least as many backticks closes it. Text
/// outside blocks is ignored. A block left open at the end of the text is
/// reported (usually a truncated answer).
///
/// Kernel answers (Coder, Repairer): one or more candidates, each a python
/// block (info python/py/python3, or a bare fence whose text does not start
/// with '{') followed by a json block (info json, or a bare fence starting
/// with '{'): {"meta": {<name>: int, ...}, "grid": null | ["expr", ...],
/// "notes": "..."}. Headings such as "### Candidate 2" are prose; blocks pair
/// up in order.
///
/// Contract: every parser throws AnswerError, one line, for anything it cannot
/// use as a whole (it never keeps half an answer); strings it returns are the
/// model's, unmodified, except diagnoses and notes (whitespace collapsed to
/// single spaces, cut to a bounded length).
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/planner.hpp"
#include "agents/profiler.hpp"

namespace kernelopt::agents {

/// An answer that cannot be used; the message is one line (it goes to the
/// Repairer and the report).
class AnswerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Limits on what an answer may hold (larger ones are refused, not cut).
inline constexpr std::size_t kMaxCodeBytes = 64 * 1024;   ///< one candidate's python block
inline constexpr std::size_t kMaxJsonBytes = 64 * 1024;   ///< one json block
inline constexpr int kMaxCandidates = 16;                 ///< candidates in one answer
inline constexpr std::size_t kMaxNoteChars = 300;         ///< notes kept per candidate
inline constexpr std::size_t kMaxDiagnosisChars = 600;    ///< diagnosis kept per kernel

struct FencedBlock {
  std::string info;   ///< the first word of the opening fence's info string, lowercased ("" for a bare fence)
  std::string text;   ///< the lines between the fences, each ending in '\n'
  int line = 0;       ///< 1-based line of the opening fence
  bool closed = true; ///< false when the text ended inside the block
};

/// Every fenced block of text, in order.
std::vector<FencedBlock> fenced_blocks(std::string_view text);

/// One candidate kernel from the Coder or the Repairer.
struct KernelAnswer {
  std::string code;          ///< the python block as written: @triton.jit functions, the kernel last
  nlohmann::json meta;       ///< {constexpr or num_warps/num_stages: positive int}; an object (maybe empty)
  std::vector<std::string> grid;  ///< 1-3 expressions over the numel parameters; empty = Inductor's grid
  std::string notes;         ///< one line
};

/// The candidates in a kernel answer. meta keys must be among `constexprs`,
/// "num_warps" or "num_stages"; values positive integers; num_warps a power of
/// two <= 32. The json block's keys: "meta" (required, object), "grid"
/// (optional; null or a list of 1-3 non-empty strings), "notes" (optional
/// string); any other key is an error. AnswerError names the candidate and
/// what is wrong: no python block, a python block without its json block (or
/// the reverse), an empty or oversized block, an unclosed block, JSON that
/// does not parse, a bad meta or grid, more than kMaxCandidates candidates.
std::vector<KernelAnswer> parse_kernel_answers(const std::string& text, const std::vector<std::string>& constexprs);

/// The JSON of an answer that is only JSON: the first ```json block, else the
/// first bare block that parses, else the whole text when it parses.
nlohmann::json answer_json(const std::string& text);

/// Profiler: {"<kernel>": "<diagnosis>", ...}. Keys must be among `kernels`;
/// values strings (empty ones are dropped); kernels not named keep their
/// rules' diagnosis (the caller's business).
std::map<std::string, std::string> parse_profiler_answer(const std::string& text,
                                                         const std::vector<std::string>& kernels);

/// Planner: [{"kernel": name, "budget": int >= 0, "strategy": "..."}, ...]
/// (other keys in an item are ignored). Kernels must be profiled ones, each
/// named at most once, the list non-empty. Budgets above total_budget in sum
/// are rescaled (proportionally, largest remainder) to sum to total_budget
/// (total_budget <= 0: every budget 0). The result lists every profiled
/// kernel once: those with budget > 0 in the answer's order (why = "LLM plan:
/// ..."), then the rest with budget 0 and why "skipped: ...", in profile order.
/// score is the offline planner's share × headroom, for the report.
std::vector<PlanItem> parse_planner_answer(const std::string& text, const std::vector<KernelProfile>& profiles,
                                           int total_budget);

/// Tuner: [{<every constexpr>: int, "num_warps": int, "num_stages": int}, ...].
/// Every config must have exactly those keys with valid values (as for meta);
/// duplicates are dropped; at most max_configs are returned, in the answer's
/// order. An empty list is an error.
std::vector<nlohmann::json> parse_tuner_answer(const std::string& text, const std::vector<std::string>& constexprs,
                                               int max_configs);

}  // namespace kernelopt::agents
