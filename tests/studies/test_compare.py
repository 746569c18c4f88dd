"""warpspeed.compare: candidate kernels (and sequences of kernels) side by side, each at its best block.

Analytic cases with known answers (two copies of one kernel tie; a twin that moves twice the bytes is twice as
slow where DRAM binds; a sequence's time per update is its kernels' times added and divided by its updates),
the refusal of candidates that do not do the same work, the candidate syntax, and the proof on the measured
H100 data: D3Q19 in the fzyx layout before zyxf, with the predicted factor kept next to the measured one.
"""

import copy
import csv
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import HOPPER_DATA

import warpspeed
from warpspeed import InputError
from warpspeed.application.comparison import compare, parse_candidate
from warpspeed.kernel import kernel_from_dict
from warpspeed.studies.comparison import Candidate
from warpspeed.studies.confidence import RELATIVE_ERROR

H100, H200, A100 = "H100-SXM5-80GB", "H200-SXM-141GB", "A100-SXM4-40GB"
SMALL = (128, 128, 64)


def twice_the_fields(name: str = "copy"):
    """The kernel with every field doubled (``src2``, ``dst2`` beside ``src``, ``dst``): the same accesses, twice
    the bytes per lup."""
    k = warpspeed.find_kernel(name)
    spec = copy.deepcopy(dict(k.spec))
    spec["field"] = spec["field"] + [dict(f, name=f["name"] + "2") for f in spec["field"]]
    spec["name"] = f"{name}-x2"
    return kernel_from_dict(spec, domain=k.domain)


# ----------------------------------------------------------------------------------------- analytic cases

def test_two_copies_of_one_kernel_tie_and_are_flagged_as_within_the_models_error():
    c = compare(["copy", "copy"], H100, threads=(256,), domain=SMALL)
    assert [r.name for r in c.candidates] == ["copy", "copy #2"]  # a repeated name is numbered, the order kept
    assert [r.factor for r in c.candidates] == [1.0, 1.0]
    a, b = c.candidates
    assert a.time_per_update_s == b.time_per_update_s and a.performance_GLup_s == b.performance_GLup_s
    conf = c.confidence
    assert conf.level == "close" and conf.contenders == ("copy", "copy #2") and conf.unvalidated == ()
    assert f"within the model's {100 * RELATIVE_ERROR:.0f} %" in conf.reasons[0]
    assert [m.candidate for m in conf.measure] == ["copy", "copy #2"]  # what to measure: both, with their blocks
    assert all(m.configurations == r.kernels[0].confidence.measure for m, r in zip(conf.measure, c.candidates,
                                                                                   strict=True))


@pytest.mark.parametrize("model, tolerance", [("roofline", 1e-12), ("latency", 1e-3)])
def test_a_twin_with_twice_the_traffic_is_slower_by_the_traffics_share_where_dram_binds(model, tolerance):
    twin = twice_the_fields()
    c = compare([twin, "copy"], H100, threads=(256,), model=model)
    fast, slow = c.candidates
    assert (fast.name, slow.name) == ("copy", "copy-x2") and fast.limiter == slow.limiter == "DRAM"
    v_fast, v_slow = (r.kernels[0].best.estimate.volumes_B_per_lup for r in (fast, slow))
    share = (v_slow["dram_load"] + v_slow["dram_store"]) / (v_fast["dram_load"] + v_fast["dram_store"])
    assert share == 2.0  # 32 B against 16 B per lup
    assert slow.factor == pytest.approx(share, rel=tolerance)
    assert slow.time_per_update_s == pytest.approx(2 * fast.time_per_update_s, rel=tolerance)
    assert c.confidence.level == "confident" and c.confidence.contenders == ("copy",) and c.confidence.measure == ()
    assert f"{slow.factor:.2f}x slower" in c.confidence.reasons[0]


def _alone(kernel, domain=SMALL):
    """One kernel's best time at ``domain``, from a comparison with itself."""
    return compare([kernel, kernel], A100, threads=(256,), domain=domain).best.kernels[0].time_s


@pytest.mark.parametrize("updates", [1, 2])
def test_a_sequence_takes_its_kernels_times_added_divided_by_its_updates(updates):
    t_copy, t_star = _alone("copy"), _alone("star3d-r1")
    seq = Candidate(("copy", "star3d-r1"), updates=updates)
    c = compare([seq, "copy"], A100, threads=(256,), domain=SMALL)
    r = next(x for x in c.candidates if x.name == f"copy+star3d-r1@{updates}")
    assert r.time_s == pytest.approx(t_copy + t_star, rel=1e-12)
    assert r.time_per_update_s == pytest.approx((t_copy + t_star) / updates, rel=1e-12)  # updates=2: the mean
    assert r.performance_GLup_s == pytest.approx(math.prod(SMALL) / r.time_per_update_s / 1e9, rel=1e-12)
    slower = max(r.kernels, key=lambda k: k.time_s)
    assert r.dominant is slower and r.limiter == slower.best.limiter
    d = r.to_dict(1)
    assert sum(k["time_share"] for k in d["kernels"]) == pytest.approx(1.0)
    assert [k["kernel"] for k in d["kernels"]] == ["copy", "star3d-r1"]  # launch order
    other = next(x for x in c.candidates if x.name == "copy")
    assert max(r.factor, other.factor) == pytest.approx(max(r.time_per_update_s, other.time_per_update_s)
                                                        / min(r.time_per_update_s, other.time_per_update_s))


def test_a_list_of_kernels_is_a_sequence_of_one_update():
    c = compare([["copy", "copy"], "copy"], A100, threads=(256,), domain=SMALL)
    assert [r.name for r in c.candidates] == ["copy", "copy+copy"]
    assert c.candidates[1].factor == pytest.approx(2.0, rel=1e-12)


# -------------------------------------------------------------------------------------------- the same work

def test_candidates_of_different_domains_are_refused_naming_them():
    with pytest.raises(InputError) as err:
        compare(["copy", "star3d-r4"], A100, threads=(256,))
    msg = str(err.value)
    assert "'copy' and 'star3d-r4'" in msg and "512x512x512" in msg and "640x512x512" in msg
    assert "star3d-r4@N" in msg and "updates=N" in msg and "(domain=)" in msg and "--domain" not in msg


def test_the_normalisation_admits_another_domain_and_counts_the_compared_domains_cells():
    c = compare(["copy", Candidate(("star3d-r4",), updates=1)], A100, threads=(256,))
    assert c.domain == (512, 512, 512)
    star = next(r for r in c.candidates if r.name == "star3d-r4@1")
    assert star.kernels[0].best.estimate.domain == (640, 512, 512)  # its own domain, timed as it is
    assert star.updates_given and star.performance_GLup_s == pytest.approx(512 ** 3 / star.time_s / 1e9)
    assert not next(r for r in c.candidates if r.name == "copy").updates_given
    same = compare(["copy", "star3d-r4"], A100, threads=(256,), domain=SMALL)  # one domain for all: fine
    assert same.domain == SMALL


# ------------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("candidates, match", [
    (["copy"], "at least two candidates"),
    ("copy", "a list of candidates"),
    ([], "at least two candidates"),
    (["copy", 3], "candidate 3"),
    (["copy", ()], "at least one kernel"),
    (["copy", "no-such-kernel"], "no-such-kernel"),
])
def test_bad_candidates_are_refused(candidates, match):
    with pytest.raises(InputError, match=match):
        compare(candidates, A100, threads=(256,), domain=SMALL)


@pytest.mark.parametrize("updates", [0, -1, math.inf, math.nan, "2", True])
def test_updates_must_be_a_positive_number(updates):
    with pytest.raises(InputError, match="updates"):
        Candidate(("copy",), updates=updates)


def test_a_kernel_that_cannot_launch_names_its_candidate():
    heavy = warpspeed.find_kernel("copy").with_registers(255)  # 255 x 1024 registers: more than an SM has
    with pytest.raises(InputError, match="candidate 'copy #3': no configuration of copy can launch"):
        compare(["copy", "copy", heavy], A100, threads=(1024,), domain=SMALL)


def test_without_threads_a_kernel_that_cannot_launch_1024_gets_the_largest_power_of_two_that_can():
    c = compare(["copy", "star3d-r1"], A100, registers=128, domain=SMALL)  # 128 x 1024 > 65536 registers per SM
    assert all(k.threads == (512,) for r in c.candidates for k in r.kernels)
    assert all(math.prod(k.best.configuration.block) == 512 for r in c.candidates for k in r.kernels)


@pytest.mark.parametrize("registers, ranked", [(128, [512]), (148, [256]), (32, [1024])])
def test_thread_counts_that_cannot_hold_one_block_per_sm_are_not_ranked(monkeypatch, registers, ranked):
    """Without threads, a count whose single block needs more registers than an SM has is skipped before any
    ranking (148 registers x 512 threads = 75,776 > 65,536): only the count chosen is ranked."""
    import warpspeed.studies.comparison as comparison
    counts: list[int] = []

    def counting_rank(k, dev, threads, *args, **kwargs):
        counts.extend(threads)
        return real_rank(k, dev, threads, *args, **kwargs)

    real_rank = comparison.rank
    monkeypatch.setattr(comparison, "rank", counting_rank)
    c = compare(["copy", "star3d-r1"], A100, registers=registers, domain=SMALL)
    assert counts == ranked * 2
    assert all(k.threads == tuple(ranked) for r in c.candidates for k in r.kernels)


# -------------------------------------------------------------------------------------- the candidate syntax

@pytest.mark.parametrize("text, kernels, updates", [
    ("copy", ("copy",), None),
    ("d3q19-srt:layout=zyxf", ("d3q19-srt:layout=zyxf",), None),
    ("lbm:stencil=D3Q19,method=srt+lbm:stencil=D3Q19,method=trt", ("lbm:stencil=D3Q19,method=srt",
                                                                  "lbm:stencil=D3Q19,method=trt"), None),
    ("even.toml+odd.toml@2", ("even.toml", "odd.toml"), 2),
    (" collide + stream @1 ", ("collide", "stream"), 1),
    ("half@0.5", ("half",), 0.5),
])
def test_candidate_text(text, kernels, updates):
    c = parse_candidate(text)
    assert c.kernels == kernels and c.updates == updates and c.label == text.strip()
    assert type(c.updates) is type(updates)  # @2 is the integer 2


@pytest.mark.parametrize("text, match", [
    ("", "empty candidate"), ("copy@", "after '@'"), ("copy@x", "not 'x'"), ("copy@0", "positive"),
    ("copy@-2", "positive"), ("copy@nan", "positive"), ("copy@inf", "positive"), ("copy++copy", "empty kernel"),
    ("+copy", "empty kernel"), ("@2", "empty kernel"),
])
def test_malformed_candidate_text_is_refused(text, match):
    with pytest.raises(InputError, match=match):
        parse_candidate(text)


def test_an_existing_file_is_one_kernel_whatever_its_name_holds(tmp_path):
    path = tmp_path / "my+copy@2.toml"
    path.write_text(warpspeed.kernels.catalog()["copy"].read_text())
    c = parse_candidate(str(path))
    assert c.kernels == (str(path),) and c.updates is None
    r = compare([c, "copy"], A100, threads=(256,), domain=SMALL)
    assert r.candidates[0].factor == r.candidates[1].factor == 1.0


@given(st.lists(st.sampled_from(["copy", "star:r=2,dims=3", "lbm:stencil=D3Q27,method=trt", "a/b.toml"]),
                min_size=1, max_size=4), st.one_of(st.none(), st.integers(1, 64),
                                                   st.floats(0.01, 100, allow_nan=False)))
def test_candidate_text_round_trips(kernels, updates):
    text = "+".join(kernels) + ("" if updates is None else f"@{updates}")
    c = parse_candidate(text)
    assert list(c.kernels) == kernels
    assert c.updates == (None if updates is None else float(updates))
    again = parse_candidate(Candidate(c.kernels, c.updates).label)  # the label of a Candidate is its text
    assert (again.kernels, again.updates) == (c.kernels, c.updates)


# ------------------------------------------------------------------------------------ proof on measured data

def _measured(name: str, kernel: str) -> dict[str, float]:
    """GLup/s per block of a committed sweep at 256^3 (folding 1,1,1), and the registers its code had."""
    rows = [r for r in csv.DictReader((HOPPER_DATA / name).open()) if r["kernel"] == kernel
            and r["domain"] == "256x256x256" and r["folding"] == "1x1x1"]
    assert {r["registers"] for r in rows} == {"92"} and {math.prod(map(int, r["block"].split("x"))) for r in rows} \
        == {512}
    return {r["block"]: float(r["GLup_s"]) for r in rows}


@pytest.fixture(scope="module")
def d3q19_h100():
    pytest.importorskip("lbmpy")
    return compare(["d3q19-srt", "d3q19-srt:layout=zyxf"], H100, threads=(512,), registers=92,
                   domain=(256, 256, 256))


PREDICTED_FACTOR_H100 = 1.95  # fzyx / zyxf at their predicted best blocks (latency model)
MEASURED_FACTOR_H100 = 3.40   # their measured best / best (tests/data/hopper)


def test_fzyx_comes_before_zyxf_on_the_measured_h100_with_the_predicted_factor_next_to_the_measured(d3q19_h100):
    fzyx = _measured("lbm-H100.csv", "d3q19-srt")
    zyxf = _measured("aos-lbm-H100.csv", "d3q19-srt:layout=zyxf")
    measured = max(fzyx.values()) / max(zyxf.values())
    c = d3q19_h100
    assert [r.name for r in c.candidates] == ["d3q19-srt", "d3q19-srt:layout=zyxf"]  # as measured
    predicted = c.candidates[1].factor
    assert (round(predicted, 2), round(measured, 2)) == (PREDICTED_FACTOR_H100, MEASURED_FACTOR_H100)
    # the model sees the direction, not the size: zyxf is unvalidated, and the comparison says so
    assert c.confidence.level == "unvalidated" and c.confidence.unvalidated == ("d3q19-srt:layout=zyxf",)
    assert c.candidates[1].kernels[0].best.estimate.unvalidated


def test_launching_what_the_comparison_names_finds_each_candidates_measured_best(d3q19_h100):
    """The measure list of an unvalidated comparison: every candidate's contenders, and the unvalidated one's
    best block of every x-extent; launched, they reach each layout's measured best within 2 %, so the measured
    factor is found with 16 launches."""
    measure = {m.candidate: {"x".join(map(str, cf.block)) for cf in m.configurations}
               for m in d3q19_h100.confidence.measure}
    assert set(measure) == {"d3q19-srt", "d3q19-srt:layout=zyxf"}
    for name, kernel, f in (("lbm-H100.csv", "d3q19-srt", "d3q19-srt"),
                            ("aos-lbm-H100.csv", "d3q19-srt:layout=zyxf", "d3q19-srt:layout=zyxf")):
        runs = _measured(name, kernel)
        assert max(runs[b] for b in measure[f]) >= 0.98 * max(runs.values()), f


def test_fzyx_comes_before_zyxf_on_the_h200_too_where_only_fzyx_was_measured():
    pytest.importorskip("lbmpy")
    assert not [r for r in csv.DictReader((HOPPER_DATA / "lbm-H200.csv").open()) if "zyxf" in r["kernel"]]
    c = compare(["d3q19-srt:layout=zyxf", "d3q19-srt"], H200, threads=(512,), registers=92, domain=(256, 256, 256))
    assert c.best.name == "d3q19-srt" and round(c.candidates[1].factor, 2) == 2.29


def test_a_kernel_met_again_is_ranked_once(monkeypatch):
    import warpspeed.studies.comparison as comparison

    calls = []
    real = comparison.rank

    def counting(kernel, *args, **kwargs):
        calls.append(kernel.name)
        return real(kernel, *args, **kwargs)

    monkeypatch.setattr(comparison, "rank", counting)
    c = compare(["copy", ["copy", "copy"], ["star3d-r1", "copy"]], A100, threads=(256,), domain=SMALL)
    assert sorted(calls) == ["copy", "star3d-r1"]
    assert len({id(k.ranking) for r in c.candidates for k in r.kernels if k.label == "copy"}) == 1


@pytest.mark.parametrize("threads, folding, match", [
    ("256", [(1, 1, 1)], "threads must be"), ([0], [(1, 1, 1)], "threads must be"),
    ([256], [(0, 1, 1)], "folding"),
])
def test_bad_threads_and_foldings_are_refused(threads, folding, match):
    with pytest.raises(InputError, match=match):
        compare(["copy", "copy"], A100, threads=threads, folding=folding, domain=SMALL)


def test_one_thread_count_may_be_given_as_an_integer():
    c = compare(["copy", "star3d-r1"], A100, threads=256, folding=iter([(1, 1, 1), (1, 2, 1)]), domain=SMALL)
    assert all(k.threads == (256,) for r in c.candidates for k in r.kernels)
    assert {k.best.configuration.folding for r in c.candidates for k in r.kernels} <= {(1, 1, 1), (1, 2, 1)}
    assert all(any(x.configuration.folding == (1, 2, 1) for x in k.ranking.results + k.ranking.bounded)
               for r in c.candidates for k in r.kernels)  # the generator served every kernel


@settings(max_examples=12)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["copy", "star3d-r1", "box3d-r1"]), min_size=1, max_size=3),
                          st.one_of(st.none(), st.integers(1, 4), st.sampled_from([0.5, 1.5]))),
                min_size=2, max_size=4), st.randoms(use_true_random=False))
def test_the_order_and_the_factors_follow_the_times_per_update_whatever_the_order_given(specs, rnd):
    cands = [Candidate(tuple(ks), u) for ks, u in specs]
    c = compare(cands, A100, threads=(256,), domain=(64, 32, 32))
    times = [r.time_per_update_s for r in c.candidates]
    assert times == sorted(times) and c.best.factor == 1.0
    for r in c.candidates:
        assert r.factor == pytest.approx(r.time_per_update_s / times[0], rel=1e-12)
        assert r.time_per_update_s == pytest.approx(sum(k.time_s for k in r.kernels) / r.updates, rel=1e-12)
        assert r.performance_GLup_s * r.time_per_update_s * 1e9 == pytest.approx(64 * 32 * 32, rel=1e-12)
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    again = compare(shuffled, A100, threads=(256,), domain=(64, 32, 32))
    by_name = {r.name.split(" #")[0]: r.time_per_update_s for r in c.candidates}
    assert {r.name.split(" #")[0]: r.time_per_update_s for r in again.candidates} == by_name
