"""What a worker process runs (ui/jobs.py), run here in-process: its messages are plain
values that survive pickling between our processes, and a job sees the app's settings."""

import os
import pickle

from sectorviz.model import load_pattern
from sectorviz.model.budget import default_work, set_default_work
from sectorviz.paths import examples_dir
from sectorviz.ui import jobs
from sectorviz.ui.jobs import (
    AnalysisJob,
    DetailJob,
    Finished,
    Setting,
    current_setting,
    run_analysis,
    run_detail,
)


def test_an_analysis_job_ends_in_a_finished_message_that_pickles():
    pattern = load_pattern(examples_dir() / "vector-add.sectorviz.json")
    sent = []
    run_analysis(AnalysisJob(7, pattern, current_setting()), sent.append)
    done = pickle.loads(pickle.dumps(sent[-1]))
    assert isinstance(done, Finished) and done.job_id == 7 and done.error == ""
    # vector-add: 2^20 floats in each of a, b and c, 4 MiB each: 12 MiB of 32-byte sectors
    assert done.analysis.totals.sectors == 3 * 2**20 * 4 // 32


def test_a_detail_job_sends_the_warps_details_and_its_cacheable_values():
    pattern = load_pattern(examples_dir() / "vector-add.sectorviz.json")
    detail = pickle.loads(pickle.dumps(run_detail(DetailJob(3, pattern, 5, current_setting()))))
    assert detail.job_id == 3 and detail.details.warp == 5
    assert detail.one_warp is not None and detail.one_warp[0] == detail.details.detail


def test_a_failed_detail_is_its_error_text():
    pattern = load_pattern(examples_dir() / "vector-add.sectorviz.json")
    tiny = Setting(current_setting().env, 1)  # a work budget of one unit
    previous = default_work()
    try:
        jobs._apply(tiny)
        detail = run_detail(DetailJob(1, pattern, 0, tiny))
    finally:
        set_default_work(previous)
    assert "over the budget of 1 left" in detail.details.detail and detail.one_warp is None


def test_a_job_sees_the_apps_engine_and_budget(monkeypatch):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "source")
    setting = current_setting()
    assert ("SECTORVIZ_ENGINE", "source") in setting.env and setting.work == default_work()
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    monkeypatch.setenv("SECTORVIZ_LANE_PATH", "1")
    previous = default_work()
    try:
        jobs._apply(Setting(setting.env, 5_000_000))
        assert os.environ["SECTORVIZ_ENGINE"] == "source"
        assert "SECTORVIZ_LANE_PATH" not in os.environ and default_work() == 5_000_000
    finally:
        set_default_work(previous)


def test_per_warp_counts_are_kept_while_global_and_shared_rows_fit(monkeypatch):
    from sectorviz.model.frontend import kernel_for
    pattern = load_pattern(examples_dir() / "transpose-tiled-cuda.sectorviz.json")
    kernel = kernel_for(pattern)
    rows = len(kernel.instructions) + len(kernel.shared_instructions)
    assert kernel.shared_instructions  # the tile: a shared store and a shared load
    monkeypatch.setattr(jobs, "MAX_PER_WARP_CELLS", rows * kernel.warps)
    assert jobs.per_warp_fits(kernel)
    monkeypatch.setattr(jobs, "MAX_PER_WARP_CELLS", rows * kernel.warps - 1)
    assert not jobs.per_warp_fits(kernel)  # the global rows alone would still fit
    assert len(kernel.instructions) * kernel.warps <= rows * kernel.warps - 1
