"""problem.py on the CPU: every bad problem file is one ProblemError line naming the file and
what is wrong; a good one gives the same weights and the same inputs for the same seed."""
import sys
import textwrap

import pytest
import torch

from kernelopt.problem import (INIT_SEED, ProblemError, build_model, check_problem, load_problem,
                                      make_inputs)

GOOD = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.proj(x))


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return [16]
"""


def write(tmp_path, text, name="problem.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def problem_error(fn, *args):
    """The ProblemError fn(*args) raises; its message must be one line."""
    with pytest.raises(ProblemError) as info:
        fn(*args)
    message = str(info.value)
    assert "\n" not in message, message
    assert info.value.kind == "problem"
    return message


def test_missing_file_names_the_path(tmp_path):
    path = str(tmp_path / "nowhere" / "model.py")
    message = problem_error(load_problem, path)
    assert message == f"{path}: no such file"


def test_directory_is_not_a_model_file(tmp_path):
    message = problem_error(load_problem, str(tmp_path))
    assert message.startswith(f"{tmp_path}: ") and "directory" in message


def test_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path, "import torch\n\nclass Model(torch.nn.Module:\n    pass\n")
    message = problem_error(load_problem, path)
    assert message.startswith(f"{path}:3: syntax error"), message
    assert path + ":3" in message


def test_syntax_error_in_an_imported_file_names_that_file(tmp_path, monkeypatch):
    helper = write(tmp_path, "def f(:\n    pass\n", name="broken_helper_for_kernelopt_test.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write(tmp_path, "import broken_helper_for_kernelopt_test\n" + GOOD)
    message = problem_error(load_problem, path)
    assert message.startswith(f"{helper}:1: syntax error"), message
    sys.modules.pop("broken_helper_for_kernelopt_test", None)


def test_import_raising_names_the_exception(tmp_path):
    path = write(tmp_path, "raise ImportError('needs apex\\nsecond line')\n")
    message = problem_error(load_problem, path)
    assert message.startswith(f"{path}: importing it raised ImportError: needs apex"), message


def test_sys_exit_at_import_is_a_problem_error(tmp_path):
    path = write(tmp_path, "import sys\nsys.exit(3)\n")
    message = problem_error(load_problem, path)
    assert "SystemExit" in message and message.startswith(path)


@pytest.mark.parametrize("missing", ["Model", "get_inputs", "get_init_inputs"])
def test_missing_name_is_named(tmp_path, missing):
    source = GOOD
    if missing == "Model":
        source = source.replace("class Model(nn.Module):", "class Other(nn.Module):")
    else:
        source = source.replace(f"def {missing}():", f"def renamed_{missing}():")
    path = write(tmp_path, source)
    message = problem_error(load_problem, path)
    assert message.startswith(f"{path}: defines no `{missing}`"), message
    # a failed load leaves nothing behind: the fixed file loads
    fixed = write(tmp_path, GOOD, name="fixed.py")
    assert load_problem(fixed).get_init_inputs() == [16]


def test_name_that_is_not_callable(tmp_path):
    path = write(tmp_path, GOOD + "\nget_inputs = [1, 2]\n")
    message = problem_error(load_problem, path)
    assert "`get_inputs` is not callable" in message


def test_get_inputs_raising_names_get_inputs_and_the_exception(tmp_path):
    path = write(tmp_path, GOOD.replace("return [torch.randn(4, 16)]",
                                        "raise ValueError('batch size must be even\\nmore detail')"))
    problem = load_problem(path)  # loading does not call it
    message = problem_error(make_inputs, problem, path, 0, "cpu")
    assert message.startswith(f"{path}: get_inputs() raised ValueError: batch size must be even"), message
    assert "more detail" not in message


def test_get_inputs_returning_no_list(tmp_path):
    path = write(tmp_path, GOOD.replace("return [torch.randn(4, 16)]", "return None"))
    message = problem_error(make_inputs, load_problem(path), path, 0, "cpu")
    assert "get_inputs() returned a NoneType" in message


def test_model_constructor_raising(tmp_path):
    path = write(tmp_path, GOOD.replace("super().__init__()", "raise RuntimeError('no weights file')"))
    message = problem_error(build_model, load_problem(path), path, "cpu")
    assert message.startswith(f"{path}: building Model(*get_init_inputs()) raised RuntimeError: no weights file")


def test_get_init_inputs_raising(tmp_path):
    path = write(tmp_path, GOOD.replace("return [16]", "return 1 / 0"))
    message = problem_error(build_model, load_problem(path), path, "cpu")
    assert message.startswith(f"{path}: get_init_inputs() raised ZeroDivisionError")


def test_model_that_is_no_module(tmp_path):
    path = write(tmp_path, GOOD.replace("class Model(nn.Module):", "class Model:").replace(
        "super().__init__()\n        self.proj = nn.Linear(dim, dim)", "pass"))
    message = problem_error(build_model, load_problem(path), path, "cpu")
    assert "not a torch.nn.Module" in message


def test_make_inputs_is_deterministic_per_seed(tmp_path):
    path = write(tmp_path, GOOD)
    problem = load_problem(path)
    a = make_inputs(problem, path, 0, "cpu")
    b = make_inputs(problem, path, 0, "cpu")
    c = make_inputs(problem, path, 1, "cpu")
    assert len(a) == 1 and a[0].shape == (4, 16) and a[0].device.type == "cpu"
    assert torch.equal(a[0], b[0])
    assert not torch.equal(a[0], c[0])


def test_build_model_weights_come_from_init_seed(tmp_path):
    path = write(tmp_path, GOOD)
    problem = load_problem(path)
    torch.manual_seed(1234)  # whatever the global RNG was, the weights are the same
    m1 = build_model(problem, path, "cpu")
    torch.manual_seed(99)
    m2 = build_model(problem, path, "cpu")
    assert not m1.training and not m2.training
    for (n1, p1), (n2, p2) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2)
    torch.manual_seed(INIT_SEED)
    expected = torch.nn.Linear(16, 16)
    assert torch.equal(m1.proj.weight, expected.weight)
    torch.manual_seed(INIT_SEED + 1)
    assert not torch.equal(m1.proj.weight, torch.nn.Linear(16, 16).weight)


def test_check_problem_accepts_a_good_problem_and_reports_a_bad_one(tmp_path):
    good = write(tmp_path, GOOD)
    check_problem(load_problem(good), good)
    bad = write(tmp_path, GOOD.replace("return [torch.randn(4, 16)]", "raise KeyError('dim')"), name="bad.py")
    message = problem_error(check_problem, load_problem(bad), bad)
    assert message.startswith(f"{bad}: get_inputs() raised KeyError")


def test_check_problem_confirms_meta_failures_on_the_cpu(tmp_path):
    # .item() has no value on the meta device; on the CPU this problem is fine
    path = write(tmp_path, GOOD.replace("return [torch.randn(4, 16)]",
                                        "n = int(torch.tensor(4).item())\n    return [torch.randn(n, 16)]"))
    check_problem(load_problem(path), path)


# problem_work: the end-to-end roofline's minimum bytes and FLOPs, on the CPU

def test_problem_work_of_a_linear_model_is_2mnk_flops_and_every_tensor_once():
    from kernelopt.problem import problem_work
    m, k, n = 8, 32, 16
    torch.manual_seed(0)
    model = torch.nn.Linear(k, n).eval()
    work = problem_work(model, [torch.randn(m, k)])
    assert work["flops"] == 2 * m * n * k  # addmm; the bias add is pointwise, not counted
    # x (m*k) + weight (n*k) + bias (n) + output (m*n), fp32
    assert work["min_bytes"] == 4 * (m * k + n * k + n + m * n)
    assert work["input_bytes"] == 4 * (m * k + n * k + n)
    # on the CPU (no device allocator to ask) the working set is the inputs, parameters and output
    assert work["working_set_bytes"] == work["min_bytes"] and "no device allocator" in work["working_set_method"]
    assert "pointwise ops" in work["flop_counter"] and "not counted" in work["flop_counter"]


class _Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class _Identity(torch.nn.Module):
    def forward(self, x):
        return x


class _RowOfInput(torch.nn.Module):
    def forward(self, x):
        return x[1]


class _AddInPlace(torch.nn.Module):
    def forward(self, x, k):
        return x.add_(k)


def test_problem_work_of_a_pointwise_model_is_no_flops_and_input_plus_output():
    from kernelopt.problem import problem_work
    x = torch.randn(64, 48)
    work = problem_work(_Relu(), [x])
    assert work["flops"] == 0
    assert work["min_bytes"] == 2 * x.numel() * 4
    assert work["input_bytes"] == x.numel() * 4


def test_problem_work_counts_each_storage_once():
    from kernelopt.problem import problem_work, storage_bytes
    x = torch.randn(10, 6)
    assert problem_work(_Identity(), [x])["min_bytes"] == x.numel() * 4  # the output is the input
    assert problem_work(_RowOfInput(), [x])["min_bytes"] == x.numel() * 4  # a view of it
    assert storage_bytes([x[0], x[3]]) == 4 * 4 * 6  # rows 0..3: the span the views reach
    assert storage_bytes([torch.randn(5).expand(7, 5)]) == 5 * 4  # stored elements only
    assert storage_bytes([torch.randn(0, 3)]) == 0


def test_problem_work_leaves_the_callers_inputs_unchanged():
    from kernelopt.problem import problem_work
    x = torch.zeros(4, 4)
    work = problem_work(_AddInPlace(), [x, 3])
    assert torch.equal(x, torch.zeros(4, 4))
    assert work["min_bytes"] == x.numel() * 4 and work["flops"] == 0


RAISES_IN_FORWARD = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        if x.shape[0] > 2:
            raise RuntimeError("CUDA out of memory (as a test says)")
        return x * 2


def get_inputs():
    return [torch.randn(4, 3)]


def get_init_inputs():
    return []
"""


def test_session_work_is_measured_once_and_a_failing_forward_is_an_error_not_a_failed_capture(tmp_path):
    from kernelopt.inputs.module.session import Session
    good = Session(write(tmp_path, GOOD), "cpu", [0, 1, 2])  # no torch.compile: the work needs only the inputs
    good._measure_work()  # what capture() does first, before compiling
    work = good.work()
    assert work["flops"] == 2 * 4 * 16 * 16  # Linear(16, 16) on 4 rows; relu not counted
    assert work["min_bytes"] == 4 * (4 * 16 + 16 * 16 + 16 + 4 * 16)
    assert good.work() is work
    bad = Session(write(tmp_path, RAISES_IN_FORWARD, "bad.py"), "cpu", [0, 1, 2])
    bad._measure_work()
    assert bad.work() == {"error": "RuntimeError: CUDA out of memory (as a test says)"}
