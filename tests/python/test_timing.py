"""The timing harness's trial orders (the CUDA-event timing itself runs in tests/gpu)."""
import collections

from kernelopt.device.timing import trial_orders


def test_three_variants_cycle_through_every_order():
    orders = trial_orders(["eager", "baseline", "optimized"])
    assert len(orders) == 6 and len({tuple(o) for o in orders}) == 6
    first = collections.Counter(o[0] for o in orders)
    assert set(first.values()) == {2}, first
    # within a trial, each variant comes right after each other variant equally often: a plain rotation
    # put baseline after eager twice as often as optimized after eager
    after = collections.Counter((o[i - 1], o[i]) for o in orders for i in range(1, len(o)))
    assert len(after) == 6 and set(after.values()) == {2}, after
    # across trials (the previous trial's last call precedes the next trial's first), too
    seq = [n for o in orders for n in o]
    across = collections.Counter((seq[i - 1], seq[i]) for i in range(len(seq)))  # i = 0 wraps around
    assert set(v for (a, b), v in across.items() if a != b) == {across[("eager", "baseline")]}, across


def test_two_variants_alternate():
    assert trial_orders(["baseline", "cand"]) == [["baseline", "cand"], ["cand", "baseline"]]


def test_many_variants_rotate():
    names = [f"c{i}" for i in range(6)]
    orders = trial_orders(names)
    assert len(orders) == 6
    assert [o[0] for o in orders] == names and all(sorted(o) == sorted(names) for o in orders)
