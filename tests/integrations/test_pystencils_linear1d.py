"""pystencils kernels of the Linear1D indexing scheme (one-dimensional blocks over the linearised iteration space,
a thread's cell from its index by division and remainder) in the plugin: described as warpspeed kernels of
``linear1d`` indexing, ranked over one-dimensional blocks, chosen by ``create_kernel`` (with a shape, and at the
launch on the stand-in GPU), and a candidate of ``compare_variants``. Blockwise4D is refused with its reason."""

import math
import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

ps = pytest.importorskip("pystencils")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import _extract  # noqa: E402

import warpspeed  # noqa: E402

H100 = "H100-SXM5-80GB"


@pytest.fixture
def gpu(fake_gpu, monkeypatch, tmp_path):
    """The stand-in cupy behind pystencils' cupy JIT, reporting an H100; a private cache folder."""
    import pystencils.jit.gpu_cupy as gpu_cupy

    monkeypatch.setattr(gpu_cupy, "cp", fake_gpu, raising=False)
    monkeypatch.setattr(gpu_cupy, "HAVE_CUPY", True)
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "NVIDIA H100 80GB HBM3")
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WARPSPEED_NVCC", "")
    fake_gpu.launches.clear()
    return fake_gpu


def seven_point(layout="fzyx"):
    src, dst = ps.fields("src, dst: double[3D]", layout=layout)
    return [ps.Assignment(dst.center, sum(src[d] for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0),
                                                             (0, 0, 1), (0, 0, -1))) - 6 * src.center)]


def config(scheme, **gpu_options):
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    cfg.gpu.indexing_scheme = scheme
    for k, v in gpu_options.items():
        setattr(cfg.gpu, k, v)
    return cfg


@pytest.mark.parametrize("scheme", ["Linear1D", "gridstrided_linear1d"])
def test_a_linear1d_kernel_is_described_with_its_cells_and_linear1d_indexing(scheme):
    """The counters ``1 + ctr_1d % 64``, ``1 + ctr_1d / 64 % 32``, ``1 + ctr_1d / 2048`` become ``tidx + 1``,
    ``tidy + 1``, ``tidz + 1`` of a 64x32x16 domain, as Linear3D's; the grid-strided loop's first iteration is
    the same (the launch's grid covers the domain unless a manual grid is asked for)."""
    k1 = wp.describe(ps.create_kernel(seven_point(), config(scheme)), (66, 34, 18), registers=40)
    k3 = wp.describe(ps.create_kernel(seven_point(), config("Linear3D")), (66, 34, 18), registers=40)
    assert k1.indexing == "linear1d" and k3.indexing == "linear3d"
    assert k1.domain == k3.domain == (64, 32, 16)
    assert [f.loads for f in k1.fields] == [f.loads for f in k3.fields]
    assert [f.stores for f in k1.fields] == [f.stores for f in k3.fields]


def test_linear1d_of_a_c_ordered_field_runs_its_threads_along_the_slowest_axis():
    """pystencils 2.0 linearises ``ctr_0`` fastest whatever the layout: with numpy's C order ``ctr_0`` is the
    slowest in memory, so consecutive threads are a plane apart; the description says so (``tidx`` on the
    slowest index) and the model ranks it far behind Linear3D, whose ``threadIdx.x`` is on the fastest axis."""
    k1 = wp.describe(ps.create_kernel(seven_point("c"), config("Linear1D")), (66, 34, 18), registers=40)
    src = next(f for f in k1.fields if f.name == "src")
    assert src.loads[0].text == ("tidz + 1", "tidy + 1", "tidx + 1") or "tidx" in src.loads[0].text[2]
    assert k1.domain == (16, 32, 64)
    r1 = wp.rank_block_sizes(k1, None, device=H100)
    k3 = wp.describe(ps.create_kernel(seven_point("c"), config("Linear3D")), (66, 34, 18), registers=40)
    r3 = wp.rank_block_sizes(k3, None, device=H100)
    assert r1.best.performance_GLup_s < 0.5 * r3.best.performance_GLup_s


def test_create_kernel_with_a_shape_chooses_a_one_dimensional_block():
    """The ranked blocks are (N, 1, 1), N from 32 to 1024; the kernel gets the best as its default block and
    pystencils launches it over the cells (grid = cells / N); the summary compares with pystencils' Linear1D
    default (256, 1, 1)."""
    shape = (130, 66, 34)
    kernel = wp.create_kernel(seven_point(), config("Linear1D"), shape=shape, device=H100, registers=40,
                              cache=None)
    meta = kernel.metadata["warpspeed"]
    block = tuple(meta["ranking"]["block"])
    assert block[1:] == (1, 1) and 32 <= block[0] <= 1024
    assert tuple(meta["ranking"]["pystencils_default_block"]) == (256, 1, 1)
    blocks, grid = kernel.get_launch_configuration().evaluate(
        **{f"_size_{f}_{c}": n for f in ("src", "dst") for c, n in enumerate(shape)})
    assert blocks == block
    assert grid == (math.ceil(128 * 64 * 32 / block[0]), 1, 1)
    ranking = wp.rank_block_sizes(seven_point(), shape, device=H100, registers=40, config=config("Linear1D"))
    assert ranking.best.configuration.block == block
    assert sorted(r.configuration.block[0] for r in ranking.results) == [32, 64, 128, 256, 512, 1024]


def test_the_block_of_a_linear1d_kernel_is_chosen_at_the_launch(gpu):
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.indexing_scheme = "Linear1D"
    run = wp.create_kernel(seven_point(), cfg).compile()  # the stand-in's compiled kernel: 90 registers
    shape = (130, 66, 34)
    run(src=gpu.zeros(shape, order="F"), dst=gpu.zeros(shape, order="F"))
    _, grid, block, _ = gpu.launches[-1]
    (choice,) = run.choices.values()
    assert block == choice.block and block[1:] == (1, 1)
    assert grid == (math.ceil(128 * 64 * 32 / block[0]), 1, 1)
    reference = wp.create_kernel(seven_point(), config("Linear1D"), shape=shape, device=H100, registers=90,
                                 cache=None)
    assert block == tuple(reference.metadata["warpspeed"]["ranking"]["block"])


def test_compare_variants_takes_the_indexing_scheme_as_an_option():
    """Linear3D and Linear1D of one 7-point stencil, each with its best block: both in the comparison, the
    Linear1D candidate ranked with one-dimensional blocks."""
    comparison = wp.compare_variants(seven_point(), H100, shape=(130, 66, 34), registers=40,
                                     options={"gpu.indexing_scheme": ["Linear3D", "Linear1D"]})
    rows = {c.name: c for c in comparison.comparison.candidates}
    assert len(rows) == 2, rows
    linear = next(c for name, c in rows.items() if "Linear1D" in name)
    ranked = linear.kernels[0].ranking
    assert ranked.best.configuration.block[1:] == (1, 1)
    assert all(r.configuration.block[1:] == (1, 1) for r in ranked.results)
    assert comparison.variant(linear.name).kernels[0].indexing == "linear1d"


def test_blockwise4d_is_refused_with_its_reason():
    kernel = ps.create_kernel(seven_point(), config("Blockwise4D"))
    with pytest.raises(warpspeed.InputError, match="Blockwise4D puts coordinates on blockIdx"):
        wp.describe(kernel, (66, 34, 18), registers=40)
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.indexing_scheme = "Blockwise4D"
    with pytest.raises(warpspeed.InputError, match="indexing schemes; the config asks for Blockwise4D"):
        wp.create_kernel(seven_point(), cfg)


def test_a_counter_that_is_not_a_linear1d_delinearisation_is_refused():
    ex = _extract.Extractor.__new__(_extract.Extractor)
    t = _extract._sym("ctr_1d")
    assert _extract._linear_axis(_extract.Mod(t, 7), t, 3) == 0
    assert _extract._linear_axis(_extract.Mod(_extract.FloorDiv(t, 7), 5), t, 3) == 1
    assert _extract._linear_axis(_extract.FloorDiv(t, 35), t, 3) == 2
    assert _extract._linear_axis(2 * t, t, 3) is None
    assert ex is not None


@pytest.mark.parametrize("strided, plain", [("gridstrided_linear3d", "Linear3D"),
                                            ("gridstrided_linear1d", "Linear1D")])
def test_a_grid_strided_kernel_is_described_and_chosen_as_its_loops_first_iteration(strided, plain):
    """pystencils launches a grid-strided kernel with a grid that covers the iteration space (unless a manual
    grid is asked for): each thread's loop runs once, at the cell of the plain scheme. The description (the
    loop counters at their start) and the chosen block are the plain scheme's."""
    shape = (130, 66, 34)
    ks = wp.describe(ps.create_kernel(seven_point(), config(strided)), shape, registers=40)
    kp = wp.describe(ps.create_kernel(seven_point(), config(plain)), shape, registers=40)
    assert (ks.indexing, ks.domain, ks.fields) == (kp.indexing, kp.domain, kp.fields)
    chosen = [wp.create_kernel(seven_point(), config(s), shape=shape, device=H100, registers=40, cache=None)
              .metadata["warpspeed"]["ranking"]["block"] for s in (strided, plain)]
    assert chosen[0] == chosen[1]


def test_the_block_of_a_grid_strided_kernel_is_chosen_at_the_launch(gpu):
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.indexing_scheme = "gridstrided_linear1d"
    run = wp.create_kernel(seven_point(), cfg).compile()
    shape = (130, 66, 34)
    run(src=gpu.zeros(shape, order="F"), dst=gpu.zeros(shape, order="F"))
    _, grid, block, _ = gpu.launches[-1]
    assert block[1:] == (1, 1) and grid == (math.ceil(128 * 64 * 32 / block[0]), 1, 1)


def test_a_grid_strided_kernel_with_a_manual_grid_has_its_grid_ranked():
    """GridstridedLinear1D with gpu.manual_launch_grid: the caller sets the grid, so the description is
    ``gridstrided_linear1d`` and the ranking takes blocks times iterations per thread (the grid); the chosen grid
    is in the metadata, for the caller to set. GridstridedLinear3D with a manual grid is refused naming why."""
    shape = (66, 34, 18)
    kernel = ps.create_kernel(seven_point(), config("gridstrided_linear1d", manual_launch_grid=True))
    assert wp.describe(kernel, shape, registers=40).indexing == "gridstrided_linear1d"
    ranking = wp.rank_block_sizes(kernel, shape, device=H100, registers=40)
    assert {r.configuration.folding[0] for r in ranking.results} == {1, 2, 4, 8, 16, 32, 64}
    created = wp.create_kernel(seven_point(), config("gridstrided_linear1d", manual_launch_grid=True), shape=shape,
                               device=H100, registers=40, cache=None)
    meta = created.metadata["warpspeed"]
    n, k = meta["block"][0], meta["ranking"]["folding"][0]
    assert meta["grid"] == [math.ceil(64 * 32 * 16 / (n * k)), 1, 1]
    assert tuple(meta["ranking"]["pystencils_default_block"]) == (256, 1, 1) and meta["ranking"]["folding_applied"]
    assert created.get_launch_configuration().block_size == tuple(meta["block"])
    with pytest.raises(warpspeed.InputError, match="GridstridedLinear3D kernel with a manual launch grid"):
        wp.describe(ps.create_kernel(seven_point(), config("gridstrided_linear3d", manual_launch_grid=True)), shape,
                    registers=40)


@pytest.mark.parametrize("dims, shape, domain", [(2, (130, 66), (128, 64, 1)), (1, (1000,), (998, 1, 1))])
def test_linear1d_kernels_of_fewer_dimensions(dims, shape, domain):
    """2-D: ``ctr_1 = 1 + ctr_1d / 128`` is the last counter; 1-D: ``ctr_0 = 1 + ctr_1d`` itself."""
    f, g = ps.fields(f"f, g: double[{dims}D]", layout="fzyx")
    offsets = [tuple(1 if i == d else 0 for i in range(dims)) for d in range(dims)]
    asm = [ps.Assignment(g.center, sum(f[o] for o in offsets) + f.center)]
    k = wp.describe(ps.create_kernel(asm, config("Linear1D")), shape, registers=32)
    assert (k.indexing, k.domain) == ("linear1d", domain)
    assert wp.rank_block_sizes(k, None, device=H100).best.configuration.block[1:] == (1, 1)
