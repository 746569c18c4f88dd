"""The CUDA programs `warpspeed measure` launches, run on the CPU (no GPU here).

pystencils' own CUDA code of the plugin's catalog kernels is compiled as C++ with a sequential grid loop,
given the arrays and the argument list of its CudaProgram, and must produce exactly what pystencils' CPU
kernel of the same update rule produces on the same data. That checks the argument binding (pointers,
sizes, strides, scalars), the launch grid and the memory layout the model is given.
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))
ps = pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

from cuda_on_cpu import run_on_cpu  # noqa: E402

import warpspeed  # noqa: E402
from warpspeed.errors import InputError  # noqa: E402
from warpspeed.interface.cli import main  # noqa: E402
from warpspeed.measurement.measure import NAME_TOKEN, ArraySpec, CudaProgram, check_program, grid_of, programs_for  # noqa: E402
from warpspeed.studies.space import Configuration  # noqa: E402


def cpu_reference(rule, gpu_program, shape, inputs, scalars):
    """pystencils' CPU kernel of ``rule`` on views of copies of ``inputs`` laid out like the CUDA run."""
    from warpspeed_pystencils._extract import Extractor
    from warpspeed_pystencils._generate import as_kernel

    gpu_kernel, _ = as_kernel(rule, None)
    ex = Extractor(gpu_kernel, shape, "fzyx", "fzyx", "ref")
    flat = [x.copy() for x in inputs]
    views = {}
    for a, x in zip(gpu_program.arrays, flat, strict=True):
        info = ex.fields[a.name]
        views[a.name] = np.lib.stride_tricks.as_strided(x[a.offset:], shape=info.shape,
                                                        strides=[s * x.itemsize for s in info.strides])
    kernel = ps.create_kernel(rule, ps.CreateKernelConfig(target=ps.Target.CPU)).compile()
    kernel(**views, **scalars)
    return flat


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize(("name", "domain", "block"), [
    ("d3q19-srt", (9, 6, 5), (4, 2, 2)),
    ("lbm:stencil=D2Q9,method=trt", (11, 7, 1), (8, 4, 1)),
    ("d3q15-allen-cahn", (7, 5, 4), (8, 2, 2)),
])
def test_pystencils_program_on_the_cpu_matches_pystencils_cpu_kernel(name, domain, block, tmp_path):
    import warpspeed_pystencils as wp

    kernel = warpspeed.find_kernel(name, domain=domain)
    c = Configuration(block)
    (program,) = programs_for(kernel, name, [c]).values()
    assert program.code == "pystencils" and "pystencils_runtime" in program.source
    check_program(kernel, program)
    # the same update rule, built through the plugin's public functions
    rule = {"d3q19-srt": wp.lbm_d3q19_srt, "d3q15-allen-cahn": wp.allen_cahn_d3q15,
            "lbm:stencil=D2Q9,method=trt": lambda: wp.lbm_update_rule("D2Q9", "trt")}[name]()
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(0.05, 0.15, a.elements + a.offset) for a in program.arrays]
    shape = tuple(n + 2 for n in domain if n > 1)
    scalars = {p.name: 1.0 for p in ps.create_kernel(rule, ps.CreateKernelConfig(target=ps.Target.CPU)).parameters
               if not p.properties}
    want = cpu_reference(rule, program, shape, inputs, scalars)
    grid = grid_of(kernel, c)
    short = (grid[0], grid[1], grid[2] - 1) if grid[2] > 1 else (grid[0], grid[1] - 1, grid[2])
    got, got_short = run_on_cpu(program, grid, block, inputs, tmp_path, grids=[short])
    stores = [i for i, a in enumerate(program.arrays) if a.name in {f.name for f in kernel.fields if f.stores}]
    assert stores
    for i in range(len(inputs)):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-12, atol=1e-14)
    for i in stores:
        assert not np.allclose(want[i], inputs[i])  # the kernel wrote something...
        assert not np.allclose(got_short[i], want[i])  # ...and a grid one block short misses cells


def test_programs_for_chooses_the_code_per_folding():
    k = warpspeed.find_kernel("d3q19-srt", domain=(16, 8, 8))
    cs = [Configuration((32, 4, 4)), Configuration((32, 2, 4), (1, 2, 1))]
    auto = programs_for(k, "d3q19-srt", cs)
    assert auto[(1, 1, 1)].code == "pystencils" and auto[(1, 2, 1)].code == "warpspeed"
    assert {p.code for p in programs_for(k, "d3q19-srt", cs, "warpspeed").values()} == {"warpspeed"}
    assert programs_for(k, "d3q19-srt", cs[:1], "pystencils")[(1, 1, 1)].args[-1] == ("float64", 1.0)  # omega
    with pytest.raises(InputError, match="no thread folding"):
        programs_for(k, "d3q19-srt", cs, "pystencils")
    star = warpspeed.find_kernel("star3d-r4", domain=(64, 32, 16))
    assert programs_for(star, "star3d-r4", cs[:1])[(1, 1, 1)].code == "warpspeed"
    with pytest.raises(InputError, match="has no pystencils source"):
        programs_for(star, "star3d-r4", cs[:1], "pystencils")
    with pytest.raises(InputError, match="choose one of"):
        programs_for(star, "star3d-r4", cs[:1], "nvcc")


def test_a_program_that_does_not_match_the_model_is_refused():
    k = warpspeed.find_kernel("d3q19-srt", domain=(16, 8, 8))
    (p,) = programs_for(k, "d3q19-srt", [Configuration((32, 4, 4))]).values()
    small = CudaProgram(p.code, p.source, (ArraySpec("dst", 8, 19), *p.arrays[1:]), p.args, p.options)
    with pytest.raises(InputError, match="array 'dst' .* does not match the model's field"):
        check_program(k, small)
    with pytest.raises(InputError, match="must name its kernel"):
        CudaProgram("x", "void k() {}", (), ())
    with pytest.raises(InputError, match="argument"):
        CudaProgram("x", f"void {NAME_TOKEN}() {{}}", (), (("array", 0),))


def test_cuda_program_scalars_and_errors():
    import warpspeed_pystencils as wp

    rule = wp.lbm_d3q19_srt()
    p = wp.cuda_program(rule, (10, 10, 10), scalars={"omega": 1.7}, fill=0.5)
    assert p.args[-1] == ("float64", 1.7) and {a.fill for a in p.arrays} == {0.5}
    assert [a.elements for a in p.arrays] == [19000, 19000]
    # every size/stride argument is the one the model's fields have (x fastest, fzyx: populations slowest)
    ints = [v for kind, v in p.args if kind == "int64"]
    assert ints == [10, 10, 10, 1, 10, 100, 1000]
    with pytest.raises(InputError, match="unknown scalar parameter"):
        wp.cuda_program(rule, (10, 10, 10), scalars={"tau": 1.0})
    src, dst = ps.fields("src, dst: double[2D]", layout="fzyx")
    n = ps.TypedSymbol("n", "int64")
    with pytest.raises(InputError, match="integer parameter 'n'"):
        wp.cuda_program([ps.Assignment(dst.center, src.center * ps.tcast(n, "float64"))], (8, 8))


def test_measure_cli_refuses_folded_pystencils_code(tmp_path, capsys):
    assert main(["measure", "d3q19-srt", "--device", "H100-SXM5-80GB", "--domain", "16,8,8", "--threads", "128",
                 "--folding", "1,2,1", "--code", "pystencils", "-o", str(tmp_path / "m.csv")]) == 2
    assert "no thread folding" in capsys.readouterr().err
    assert not (tmp_path / "m.csv").exists()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_pystencils_program_compiles_with_nvcc(tmp_path):
    k = warpspeed.find_kernel("d3q15-allen-cahn", domain=(32, 16, 16))
    (p,) = programs_for(k, "d3q15-allen-cahn", [Configuration((64, 4, 2))]).values()
    cu = tmp_path / "k.cu"
    cu.write_text(p.named("ws_ac"))
    includes = [o for o in p.options if o.startswith("-I")]
    r = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", *includes, "--resource-usage", "-cubin", "-o",
                        str(tmp_path / "k.cubin"), str(cu)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "ws_ac" in r.stdout + r.stderr and "registers" in r.stdout + r.stderr






def test_measure_cli_runs_programs_and_skips_configurations_that_do_not_launch(tmp_path, capsys, fake_gpu):
    from warpspeed.measurement.measurements import read_measurements

    fake = fake_gpu
    out = tmp_path / "m.csv"
    assert main(["measure", "d3q19-srt", "--device", "H100-SXM5-80GB", "--domain", "16,8,8", "--block", "32,4,2",
                 "--block", "1024,1,1", "--folding", "1,1,1", "--folding", "1,2,1", "--repeats", "3", "--warmup", "1",
                 "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "block 1024x1x1 folding 1x1x1 did not run: RuntimeError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in captured.err
    assert "measured 2 configurations" in captured.out and "(2 did not run)" in captured.out
    rows = read_measurements(out)
    assert [(m.block, m.folding, m.values["code"]) for m in rows] == [((32, 4, 2), (1, 1, 1), "pystencils"),
                                                                        ((32, 4, 2), (1, 2, 1), "warpspeed")]
    k = warpspeed.find_kernel("d3q19-srt", domain=(16, 8, 8))
    assert rows[0].GLup_s == pytest.approx(k.valid_lups / 2e-3 / 1e9) and rows[0].registers == 90
    assert rows[0].values["gpu_name"] == "Fake GPU" and rows[0].values["repeats"] == 3.0
    # 1 warm-up + 3 timed launches per configuration that ran, on the grids of the model
    ran = [x for x in fake.launches if x[2] == (32, 4, 2)]
    assert len(ran) == 8 and {x[1] for x in ran} == {(1, 2, 4), (1, 1, 4)}
    pystencils_args = ran[0][3]
    assert len(pystencils_args) == 10 and pystencils_args[0].size == 18 * 10 * 10 * 19  # dst, then src, sizes...
    assert pystencils_args[-1] == 1.0 and pystencils_args[0].dtype == np.float64  # omega
    assert all(isinstance(a, np.ndarray) for a in ran[-1][3])  # warpspeed code: one pointer per field


def test_measure_with_ncu_profiles_each_configuration_in_a_child_process(tmp_path, capsys, fake_gpu, monkeypatch):
    """The fake ncu runs the child (python -m warpspeed.measurement.measure job.json) with the fake cupy and
    reports one row per launch; every configuration must get the counters of its own launch, also when one
    kernel name is a prefix of another (folding 1x1x1 and 1x1x16)."""
    from warpspeed.measurement.measurements import read_measurements

    domain = (64, 32, 32)
    lups = warpspeed.find_kernel("star3d-r4", domain=domain).valid_lups
    monkeypatch.setenv("FAKE_NCU_LUPS", str(lups))
    out = tmp_path / "m.csv"
    assert main(["measure", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", "64,32,32", "--block", "32,4,2",
                 "--block", "64,2,2", "--folding", "1,1,1", "--folding", "1,1,16", "--ncu", "--ncu-every", "1",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    rows = read_measurements(out)
    assert [(m.block, m.folding) for m in rows] == [((32, 4, 2), (1, 1, 1)), ((64, 2, 2), (1, 1, 1)),
                                                  ((32, 4, 2), (1, 1, 16)), ((64, 2, 2), (1, 1, 16))]
    # launch i (one per configuration in the child, no warm-up) has counters 1000 * (i + 1)
    assert [m.values["cycles"] for m in rows] == [1000.0, 2000.0, 3000.0, 4000.0]
    assert [m.volume("l2_load") for m in rows] == pytest.approx([32 * 1000.0 * (i + 1) / lups for i in range(4)])
    assert all(m.volume("dram_load") == pytest.approx(8.0) for m in rows)
    # --ncu-every 2: the 2nd and 4th configurations have no counters, but they are timed
    out2 = tmp_path / "m2.csv"
    assert main(["measure", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", "64,32,32", "--block", "32,4,2",
                 "--block", "64,2,2", "--folding", "1,1,1", "--folding", "1,1,16", "--ncu", "--ncu-every", "2",
                 "-o", str(out2)]) == 0
    rows2 = read_measurements(out2)
    assert [m.values["cycles"] for m in rows2] == [1000.0, "", 2000.0, ""] and len(rows2) == 4


def test_measure_collects_extra_ncu_metrics_per_configuration(tmp_path, capsys, fake_gpu):
    """--ncu-metrics adds counters to the same ncu run and --ncu-output gets one row per profiled configuration
    and metric (the fake ncu gives launch i the value 1000 (i + 1) for every metric); a second sweep appends."""
    import csv

    from warpspeed.measurement.measure import EXTRA_COLUMNS

    out, extra = tmp_path / "m.csv", tmp_path / "extra.csv"
    metrics = ("lts__t_requests_srcunit_tex_op_write.sum,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,"
               "lts__t_requests_srcunit_tex_op_write.sum")  # a name given twice is collected and written once
    args = ["measure", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", "64,32,32", "--block", "32,4,2",
            "--block", "64,2,2", "--ncu", "--ncu-metrics", metrics, "--ncu-output", str(extra), "-o", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    with extra.open() as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == EXTRA_COLUMNS
    assert [(r["block"], r["metric"], float(r["value"])) for r in rows] == [
        ("32x4x2", "lts__t_requests_srcunit_tex_op_write.sum", 1000.0),
        ("32x4x2", "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 1000.0),
        ("64x2x2", "lts__t_requests_srcunit_tex_op_write.sum", 2000.0),
        ("64x2x2", "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 2000.0)]
    assert all(r["kernel"] == "star3d-r4" and r["domain"] == "64x32x32" and r["folding"] == "1x1x1" for r in rows)
    assert main(args) == 0
    with extra.open() as fh:
        assert len(list(csv.DictReader(fh))) == 8  # appended under the one header


@pytest.mark.parametrize(("extra_args", "message"), [
    (["--ncu-metrics", "dram__bytes_read.sum"], "--ncu-metrics and --ncu-output go together"),
    (["--ncu", "--ncu-output", "x.csv"], "--ncu-metrics and --ncu-output go together"),
    (["--ncu-metrics", "dram__bytes_read.sum", "--ncu-output", "x.csv"], "with --ncu"),
    (["--ncu", "--ncu-metrics", "dram__bytes_read.sum,rm -rf", "--ncu-output", "x.csv"],
     "'rm -rf' is not an Nsight Compute metric name"),
    (["--ncu", "--ncu-metrics", "dram__bytes_read.sum", "--ncu-output", "taken.csv"],
     "taken.csv: the file has other columns"),
    (["--ncu", "--ncu-metrics", "dram__bytes_read.sum", "--ncu-output", "no/such/folder/x.csv"],
     "cannot write there"),
    (["--ncu", "--ncu-metrics", "dram__bytes_read.sum", "--ncu-output", "m.csv"], "is the measurement CSV (-o)"),
])
def test_measure_refuses_bad_extra_metrics_before_measuring(tmp_path, capsys, fake_gpu, monkeypatch, extra_args,
                                                             message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken.csv").write_text("a,b\n1,2\n")
    out = tmp_path / "m.csv"
    assert main(["measure", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", "64,32,32", "--block", "32,4,2",
                 *extra_args, "-o", str(out)]) != 0
    assert message in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "x.csv").exists()  # nothing measured, nothing written
