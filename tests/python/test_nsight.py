"""bench/gpu/nsight.py: which kernels get Nsight Compute figures, and how ncu's CSV becomes them (the ncu runs
themselves need the GPU machine)."""
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("nsight", os.path.join(ROOT, "bench", "gpu", "nsight.py"))
nsight = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nsight)

FAMILIES = os.path.join(ROOT, "bench", "results", "2026-12-06-families-h100", "bench.json")


def test_picks_the_memory_bound_kernels_that_lose_the_most_time_in_a_recorded_bench():
    with open(FAMILIES) as f:
        bench = json.load(f)
    picked = nsight.pick_kernels(bench, 5)
    assert len(picked) == 5
    lost = [p[3] for p in picked]
    assert lost == sorted(lost, reverse=True) and lost[-1] > 0
    assert all(p[2]["bound"] == "memory" for p in picked)
    # every kernel not picked loses no more than the last one picked
    rest = [nsight.lost_ms(k, r["roofline"]["bandwidth_gbps"]) for r in bench["problems"] for k in r["kernels"]
            if k["bound"] == "memory" and k not in [p[2] for p in picked]]
    assert max(rest, default=0.0) <= lost[-1]
    # the group norm's kernels run at the roofline: nothing to see there
    assert not any("group_norm" in p[0] for p in picked)


def test_a_kernel_at_or_past_its_roofline_is_never_picked():
    bench = {"problems": [{"problem": "a.py", "roofline": {"bandwidth_gbps": 1000.0}, "kernels": [
        {"name": "k_fast", "bound": "memory", "bytes": 2e9, "before_ms": 1.9, "module": 0},
        {"name": "k_slow", "bound": "memory", "bytes": 2e9, "before_ms": 3.0, "module": 0},
        {"name": "k_gemm", "bound": "compute", "bytes": 2e9, "before_ms": 9.0, "module": 0}]}]}
    picked = nsight.pick_kernels(bench, 5)
    assert [p[2]["name"] for p in picked] == ["k_slow"]
    assert picked[0][3] == pytest.approx(1.0)


# ncu --csv --page raw --print-units base: ncu's notes, the header, the units row, a row a launch
NCU_OUT = '''"the program's own","CSV line"
==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "triton_red_fused__log_softmax_0": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","lts__t_sector_hit_rate.pct","sm__maximum_warps_per_active_cycle_pct","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","byte","byte","%","ns","register/thread","%","%","%"
"0","4242","python3.12","gpu","triton_red_fused__log_softmax_0","1","7","(512, 1, 1)","(3072, 1, 1)","0","9.0","9,663,676,416","4,831,838,208","66.12","4,991,232","40","3.20","50","47.31"
"1","4242","python3.12","gpu","triton_red_fused__log_softmax_0","1","7","(512, 1, 1)","(3072, 1, 1)","0","9.0","9,663,676,416","4,831,838,208","68.00","5,008,768","40","3.40","50","48.00"
"2","4242","python3.12","gpu","triton_poi_fused_1","1","7","(128, 1, 1)","(9000, 1, 1)","0","9.0","100","100","10.00","1,000","16","0.00","100","90.00"
==PROF== Disconnected from process 4242
'''


def test_ncu_csv_rows_become_launches_and_the_units_row_is_skipped():
    launches = nsight.parse_ncu_csv(NCU_OUT)
    assert [l["name"] for l in launches] == ["triton_red_fused__log_softmax_0"] * 2 + ["triton_poi_fused_1"]
    first = launches[0]
    assert first["ns"] == 4991232 and first["dram_read_bytes"] == 9663676416
    assert first["achieved_occupancy_pct"] == pytest.approx(47.31) and first["registers"] == 40


def test_a_kernels_launches_are_summed_and_percentages_weighted_by_time():
    s = nsight.summarize(nsight.parse_ncu_csv(NCU_OUT), "triton_red_fused__log_softmax_0")
    assert s["launches"] == 2
    assert s["ms"] == pytest.approx((4991232 + 5008768) / 1e6)
    assert s["dram_read_bytes"] == 2 * 9663676416
    assert s["dram_pct"] == pytest.approx((66.12 * 4991232 + 68.0 * 5008768) / 1e7)
    assert s["dram_gbps"] == pytest.approx(2 * (9663676416 + 4831838208) / 1e7)
    assert nsight.summarize(nsight.parse_ncu_csv(NCU_OUT), "not_profiled") is None


def test_output_without_the_csv_gives_no_launches_and_a_csv_without_names_is_an_error():
    assert nsight.parse_ncu_csv("==PROF== No kernels were profiled.\n") == []
    with pytest.raises(ValueError):
        nsight.parse_ncu_csv('"ID","Value"\n"0","1"\n')


def test_the_table_shows_before_and_after_and_says_what_failed():
    row = {"problem": "level1/39.py", "kernel": "k", "lost_ms": 1.0,
           "bench": {"before_ms": 5.0, "after_ms": 4.0},
           "before": nsight.summarize(nsight.parse_ncu_csv(NCU_OUT), "triton_red_fused__log_softmax_0"),
           "after": None, "after_error": "ncu exit 1: no kernels"}
    md = nsight.markdown([row])
    assert "| level1/39.py | k | 5.000 → 4.000 | 10.000 → - |" in md
    assert "- level1/39.py after: ncu exit 1: no kernels" in md
