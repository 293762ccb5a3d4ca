/// \file
/// Which GPUs a command may use, for `--gpus N|all` of `bench` (one child bench per GPU) and of
/// `optimize` (one worker per GPU, each searching its own kernels). One timing per GPU: no two
/// workers or children are given the same GPU.
#pragma once

#include <string>
#include <vector>

namespace kernelopt::engine {

/// The GPUs this process may use, as values for CUDA_VISIBLE_DEVICES: the entries of
/// CUDA_VISIBLE_DEVICES when it is set (empty when it is set but empty), else "0".."K-1" for
/// the K "GPU" lines of `nvidia-smi -L` (none when nvidia-smi is missing or fails).
std::vector<std::string> visible_gpus();

/// --gpus: "all" is the number of visible GPUs (1 when there is none); a whole number >= 1 is
/// itself. Anything else is a UserError.
int parse_gpus(const std::string& value, int visible);

/// The CUDA_VISIBLE_DEVICES value of each of `gpus` processes for torch device `device`: the first
/// `gpus` visible GPUs; on the CPU (Triton's interpreter) `gpus` times "" (the environment as it
/// is). UserError when fewer GPUs are visible than asked for, or when `device` names one GPU
/// ("cuda:1") while several are asked for: each process sees its one GPU as cuda.
std::vector<std::string> gpu_ids(int gpus, const std::string& device, const std::vector<std::string>& visible);

}  // namespace kernelopt::engine
