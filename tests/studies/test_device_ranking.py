"""Which GPU for a kernel (warpspeed.rank_devices): each device's row is that device's own screened ranking's best,
the devices are sorted by it, devices that cannot run the kernel stay with the reason, and each row carries its
family's validation status."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.application.device_ranking import resolve_devices
from warpspeed.device import device_ids
from warpspeed.device.families import device_family
from warpspeed.errors import InputError

H100, A100, RTX, B200 = "H100-SXM5-80GB", "A100-SXM4-40GB", "RTX-5090", "B200"
SMALL = (128, 128, 64)


def _alone(kernel, dev, **options):
    """The device's own screened ranking, as `warpspeed rank KERNEL --device DEV --screen 1` gives it."""
    return warpspeed.rank(kernel, dev, screen=1, jobs=1, **options)


def test_each_row_is_that_devices_own_best_and_the_rows_are_sorted_by_its_time():
    devices = [A100, H100, RTX]
    r = warpspeed.rank_devices("star3d-r1", devices, threads=256, domain=SMALL, jobs=1)
    alone = {d: _alone("star3d-r1", d, threads=(256,), domain=SMALL) for d in devices}
    times = {d: alone[d].best.estimate.time_s for d in devices}
    assert [x.device.id for x in r.devices] == sorted(devices, key=times.get)
    assert len({round(t, 12) for t in times.values()}) == 3  # three different times: the order means something
    for x in r.devices:
        own = alone[x.device.id].best
        assert x.best.configuration == own.configuration
        assert x.performance_GLup_s == own.performance_GLup_s and x.limiter == own.limiter
        assert x.time_s == times[x.device.id]
        assert x.factor == pytest.approx(times[x.device.id] / min(times.values()))
        assert x.confidence == alone[x.device.id].confidence
    assert r.devices[0].factor == 1.0 and r.best is r.devices[0]
    assert r.kernel == "star3d-r1" and r.domain == SMALL and r.model == "latency"


def test_without_threads_each_device_halves_1024_until_a_block_launches_as_compare_does():
    """d3q19-srt needs 90 registers: 1024 threads cannot launch on any of these; each device ranks 512."""
    r = warpspeed.rank_devices("d3q19-srt", [H100, A100], domain=(64, 64, 64), jobs=1)
    for x in r.devices:
        assert x.runs and x.threads == (512,)
        own = _alone("d3q19-srt", x.device.id, threads=(512,), domain=(64, 64, 64)).best
        assert x.best.configuration == own.configuration and x.performance_GLup_s == own.performance_GLup_s


def test_devices_that_cannot_run_the_kernel_are_listed_last_with_the_reason():
    # 1024 threads asked for: no block of d3q19-srt can launch (registers)
    r = warpspeed.rank_devices("d3q19-srt", [H100, A100], threads=1024, domain=(64, 64, 64), jobs=1)
    assert [x.device.id for x in r.devices] == [H100, A100] and r.best is None and not r.running
    for x in r.devices:
        assert not x.runs and x.reason.startswith("no block can launch: ") and "registers" in x.reason
        assert x.best is None and x.factor is None and x.to_dict(None)["performance_GLup_s"] is None
    # 2048^3 cells of copy need 137 GB: more than an RTX 5090's 32 GB or an H100's 80 GB, less than a B300's 288 GB
    r = warpspeed.rank_devices("copy", [RTX, "B300", H100], domain=(2048, 2048, 2048), jobs=1)
    assert [x.device.id for x in r.devices] == ["B300", RTX, H100]
    assert r.devices[0].runs and r.devices[0].factor == 1.0
    for x in r.devices[1:]:
        assert not x.runs and x.ranking is None and "137.4 GB" in x.reason and "dram_size" in x.reason
    doc = r.to_dict()
    assert [e["rank"] for e in doc["devices"]] == [1, None, None] and doc["best"] == "B300"


def test_each_row_carries_its_familys_validation_status():
    r = warpspeed.rank_devices("star3d-r1", [H100, B200, RTX], threads=256, domain=SMALL, jobs=1)
    by_id = {x.device.id: x for x in r.devices}
    for dev_id, x in by_id.items():
        assert x.family == device_family(warpspeed.device(dev_id))
    assert by_id[H100].family.measured and by_id[H100].family.validation == "measured"
    assert not by_id[B200].family.measured and by_id[B200].family.validation == "assumed from hopper"
    assert by_id[RTX].family.validation == "assumed from ada"
    entry = next(e for e in r.to_dict()["devices"] if e["device"] == B200)
    assert entry["measured"] is False and entry["family"]["name"] == "blackwell"
    assert entry["validation"] == "assumed from hopper"


def test_an_unvalidated_access_pattern_is_carried_per_device():
    r = warpspeed.rank_devices("d3q19-srt:layout=zyxf", [H100, B200], domain=(64, 64, 64), jobs=1)
    for x in r.devices:
        assert x.confidence.level == "unvalidated"
        assert x.unvalidated and "not validated" in x.unvalidated[0]


def test_a_pool_an_executor_and_this_process_give_the_same_ranking():
    args = ("star3d-r1", [A100, H100, RTX, B200])
    options = {"threads": 256, "domain": SMALL}
    here = warpspeed.rank_devices(*args, jobs=1, **options).to_dict()
    pooled = warpspeed.rank_devices(*args, jobs=2, **options).to_dict()
    with ThreadPoolExecutor(2) as ex:
        given_executor = warpspeed.rank_devices(*args, executor=ex, **options).to_dict()
    seen = []
    warpspeed.rank_devices(*args, jobs=1, progress=lambda done, total: seen.append((done, total)), **options)
    assert here == pooled == given_executor
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)


@settings(max_examples=12, deadline=None)
@given(st.permutations([A100, H100, RTX, B200]))
def test_the_order_does_not_depend_on_the_order_the_devices_are_given(devices):
    r = warpspeed.rank_devices("star3d-r1", devices, threads=256, domain=SMALL, jobs=1)
    times = {d: _alone("star3d-r1", d, threads=(256,), domain=SMALL).best.estimate.time_s for d in devices}
    assert len(set(times.values())) == 4  # no ties: one order is right
    assert [x.device.id for x in r.devices] == sorted(times, key=times.get)


def test_unknown_duplicate_and_missing_devices_are_clear_errors():
    with pytest.raises(InputError, match="unknown device 'H100-FOO'.*H100-SXM5-80GB"):
        warpspeed.rank_devices("copy", [H100, "H100-FOO"])
    with pytest.raises(InputError, match="H100-SXM5-80GB given more than once"):
        warpspeed.rank_devices("copy", [H100, A100, H100])
    with pytest.raises(InputError, match="threads per block 300"):  # refused once, not listed per device
        warpspeed.rank_devices("copy", [H100, A100], threads=[300])
    with pytest.raises(InputError, match="folding must be positive"):
        warpspeed.rank_devices("copy", [H100, A100], folding=[(0, 1, 1)])
    with pytest.raises(InputError, match="unknown performance model"):
        warpspeed.rank_devices("copy", [H100], model="nope")


def test_no_devices_means_every_shipped_one_and_one_device_alone_is_a_list_of_one():
    assert [d.id for d in resolve_devices(None)] == device_ids() == [d.id for d in resolve_devices([])]
    assert [d.id for d in resolve_devices(H100)] == [H100]
    r = warpspeed.rank_devices("copy", H100, threads=256, domain=SMALL, jobs=1)
    assert [x.device.id for x in r.devices] == [H100]


def test_a_device_its_ranking_refuses_is_listed_with_the_message_and_the_others_are_ranked(monkeypatch):
    import warpspeed.studies.device_ranking as study

    real = study.best_ranking

    def refusing(k, dev, *rest):
        if dev.id == A100:
            raise InputError("the A100 refuses this space")
        return real(k, dev, *rest)

    monkeypatch.setattr(study, "best_ranking", refusing)
    r = warpspeed.rank_devices("copy", [A100, H100], threads=256, domain=SMALL, jobs=1)
    assert [x.device.id for x in r.devices] == [H100, A100]
    assert r.devices[0].runs and r.devices[0].factor == 1.0
    assert r.devices[1].reason == "cannot be ranked: the A100 refuses this space" and r.devices[1].ranking is None
