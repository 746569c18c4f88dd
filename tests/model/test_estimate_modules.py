"""The estimate is cut by job: its result types (warpspeed.model.results), what estimates of one kernel share
(warpspeed.model.analysis), the notes' prose (warpspeed.model.notes) and the pipeline (warpspeed.model.estimate,
which keeps the public names importable). The volume keys are declared once, in the levels."""

import ast
from types import SimpleNamespace

import pytest
from paths import ROOT

import warpspeed.model.analysis as analysis
import warpspeed.model.estimate as pipeline
import warpspeed.model.notes as notes
import warpspeed.model.results as results
from warpspeed.device import device
from warpspeed.model.levels import VOLUME_KEYS, volume_keys

MODEL = ROOT / "warpspeed" / "model"


def test_the_public_names_stay_importable_from_the_pipeline_and_are_the_same_objects():
    assert pipeline.Estimate is results.Estimate and pipeline.FieldVolumes is results.FieldVolumes
    assert pipeline.KernelAnalysis is analysis.KernelAnalysis
    assert (pipeline.SHORT_KERNEL_S, pipeline.DOES_NOT_FIT, pipeline.REGISTERS_UNKNOWN) == \
        (notes.SHORT_KERNEL_S, notes.DOES_NOT_FIT, notes.REGISTERS_UNKNOWN)
    assert pipeline.VOLUME_KEYS is VOLUME_KEYS
    for name in pipeline.__all__:
        assert hasattr(pipeline, name), name


@pytest.mark.parametrize("module", ["results", "analysis", "notes"])
def test_the_parts_do_not_import_the_pipeline(module):
    """Results, analysis and prose sit below the pipeline that combines them (no circle through estimate.py)."""
    tree = ast.parse((MODEL / f"{module}.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "estimate" not in imported and "warpspeed.model.estimate" not in imported


def _volume_dicts(path) -> list[int]:
    """Lines of dict displays in ``path`` whose keys are two or more of the volume keys spelled out."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Dict):
            spelled = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in VOLUME_KEYS]
            if len(spelled) >= 2:
                found.append(node.lineno)
    return found


def test_the_volume_keys_are_spelled_only_in_the_levels():
    """The estimate reads each level's volumes by the keys the levels declare (stage_volumes), so a new
    volume is one entry in levels.py and an attribute of the stage that computes it."""
    spelled = {p.name: lines for p in sorted(MODEL.glob("*.py")) if p.name != "levels.py"
               for lines in [_volume_dicts(p)] if lines}
    assert spelled == {}


def test_stage_volumes_reads_each_key_from_the_first_stage_that_has_it_in_the_levels_order():
    block = SimpleNamespace(l1_load=1.0, l2_load_compulsory=2.0, l2_load=3.0, l2_store=4.0, dram_load=-1.0)
    wave = SimpleNamespace(dram_load_compulsory=5.0, dram_load=6.0, dram_store=7.0, l1_load=-1.0, msc_load=8.0,
                           msc_store=9.0)
    volumes = pipeline.stage_volumes(block, wave)
    assert tuple(volumes) == VOLUME_KEYS
    assert volumes == {"l1_load": 1.0, "l2_load_compulsory": 2.0, "l2_load": 3.0, "l2_store": 4.0, "msc_load": 8.0,
                       "msc_store": 9.0, "dram_load_compulsory": 5.0, "dram_load": -1.0, "dram_store": 7.0}
    # a device without a memory-side cache: its levels' keys only (the wave stage has no MSC volumes then)
    plain = pipeline.stage_volumes(block, wave, keys=volume_keys(device("H100-SXM5-80GB")))
    assert plain == {k: v for k, v in volumes.items() if not k.startswith("msc_")}
    with pytest.raises(TypeError, match=r"no stage result gives the volume 'dram_load_compulsory'"):
        pipeline.stage_volumes(block, SimpleNamespace(dram_store=7.0), keys=volume_keys(device("H100-SXM5-80GB")))


def test_the_sweep_time_is_zero_at_an_infinite_rate_and_infinite_at_none():
    assert results.sweep_time_s(2_000_000_000, 4.0) == 0.5
    assert results.sweep_time_s(10, float("inf")) == 0.0
    assert results.sweep_time_s(10, 0.0) == float("inf")


def test_the_causes_are_the_estimates_reuse_fields_in_their_order():
    """The JSON's ``causes`` and its way back read the one tuple; a new reuse field of the estimate is in it."""
    from dataclasses import fields

    reuse = tuple(f.name for f in fields(results.Estimate) if f.type == "CacheReuse")
    assert reuse == results.CAUSES


def test_forget_counts_makes_the_next_estimate_count_everything_again(monkeypatch):
    """A benchmark's repeated estimate (benchmarks/bench_estimate.py) times the counting: after forget_counts
    neither the block stage nor the wave's sectors may come from what the analysis kept."""
    import warpspeed
    from warpspeed.model import dram
    from warpspeed.model.estimate import estimate

    kernel = warpspeed.find_kernel("star3d-r1")
    dev = warpspeed.device("H100-SXM5-80GB")
    an = analysis.KernelAnalysis(kernel)
    counted, unfinished = [], []
    real, real_unfinished = dram.wave_sectors, analysis.unfinished_store_sectors
    monkeypatch.setattr(analysis, "wave_sectors", lambda *a: counted.append(1) or real(*a))
    monkeypatch.setattr(analysis, "unfinished_store_sectors", lambda *a: unfinished.append(1) or real_unfinished(*a))
    first = estimate(kernel, dev, (32, 4, 2), analysis=an)
    estimate(kernel, dev, (32, 4, 2), analysis=an)
    assert len(counted) == len(unfinished) == 1  # kept between estimates
    an.forget_counts()
    again = estimate(kernel, dev, (32, 4, 2), analysis=an)
    assert len(counted) == len(unfinished) == 2 and again == first
