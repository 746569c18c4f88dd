"""Blocks chosen at a pystencils kernel's launch (create_kernel without a shape), on the stand-in GPU.

tests/fake_gpu's cupy compiles nothing and runs nothing; it records each launch (kernel, grid, block) and
reports a GPU name (FAKE_CUPY_GPU_NAME) and 90 registers per thread, so pystencils' own cupy JIT, launch
configuration and argument checks run for real around it.
"""

import math
import os
import tempfile
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

ps = pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import _describe, _extract, _generate, _launch, _rank  # noqa: E402

import warpspeed  # noqa: E402

H100 = "H100-SXM5-80GB"
FAKE_REGISTERS = 90


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


def _seven_point(layout="fzyx", element="double"):
    src, dst = ps.fields(f"src, dst: {element}[3D]", layout=layout)
    return [ps.Assignment(dst.center, sum(src[d] for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0),
                                                             (0, 0, 1), (0, 0, -1))) - 6 * src.center)]


def _arrays(cupy, shape, order="F", names=("src", "dst")):
    return {n: cupy.zeros(shape, order=order) for n in names}


class _Counter:
    def __init__(self, monkeypatch, module, name):
        self.calls = 0
        real = getattr(module, name)

        def counted(*a, **k):
            self.calls += 1
            return real(*a, **k)

        monkeypatch.setattr(module, name, counted)


def test_the_block_is_chosen_at_the_first_launch_as_create_kernel_with_the_shape_chooses_it(gpu):
    kernel = wp.create_kernel(_seven_point())
    assert kernel.metadata["warpspeed"]["device"] == "auto"
    run = kernel.compile()
    assert isinstance(run, _launch.LaunchTimeKernel)
    shape = (130, 66, 34)
    run(**_arrays(gpu, shape))
    name, grid, block, _ = gpu.launches[-1]
    reference = wp.create_kernel(_seven_point(), shape=shape, device=H100, registers=FAKE_REGISTERS, cache=None)
    want = tuple(reference.metadata["warpspeed"]["ranking"]["block"])
    assert block == want
    domain = (shape[0] - 2, shape[1] - 2, shape[2] - 2)  # one ghost layer each side
    assert grid == tuple(math.ceil(n / b) for n, b in zip(domain, block, strict=True))
    (choice,) = run.choices.values()
    summary = reference.metadata["warpspeed"]["ranking"]
    assert choice.device == H100
    assert choice.summary["performance_GLup_s"] == pytest.approx(summary["performance_GLup_s"], rel=1e-12)
    assert choice.summary["arrays"]["src"] == {"shape": list(shape), "strides": [1, 130, 130 * 66]}


def test_each_array_shape_gets_its_own_choice_and_repeats_rank_nothing(gpu, monkeypatch):
    ranks = _Counter(monkeypatch, warpspeed, "rank")
    run = wp.create_kernel(_seven_point(), measure=False).compile()  # no timed candidates in between
    small, large = _arrays(gpu, (34, 34, 34)), _arrays(gpu, (258, 130, 66))
    run(**small)
    run(**small)
    run(**large)
    run(**small)
    assert ranks.calls == 2 and len(run.choices) == 2
    blocks = [launch[2] for launch in gpu.launches]
    assert blocks[0] == blocks[1] == blocks[3]
    assert blocks[2] == run.choice_for(**large).block
    assert len(gpu.launches) == 4


def test_a_new_process_reads_the_choice_back_from_the_disk_cache(gpu, monkeypatch):
    arrays = _arrays(gpu, (66, 66, 66))
    first = wp.create_kernel(_seven_point()).compile()
    first(**arrays)
    ranks = _Counter(monkeypatch, warpspeed, "rank")
    describes = _Counter(monkeypatch, _extract, "kernel_dict")
    again = wp.create_kernel(_seven_point()).compile()  # as a second run of the same program would
    again(**arrays)
    assert (ranks.calls, describes.calls) == (0, 0)
    assert gpu.launches[-1][2] == gpu.launches[0][2]
    assert again.choice_for(**arrays) == first.choice_for(**arrays)


def test_cache_none_keeps_nothing_on_disk(gpu, tmp_path):
    wp.create_kernel(_seven_point(), cache=None).compile()(**_arrays(gpu, (34, 34, 34)))
    assert not (tmp_path / "cache" / "launch-choices").exists()
    assert not (tmp_path / "cache" / "rankings").exists()


def test_registers_come_from_the_compiled_kernel_unless_given(gpu):
    arrays = _arrays(gpu, (130, 66, 34))
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    few = wp.create_kernel(_seven_point(), cache=None, registers=32).compile()
    assert run.choice_for(**arrays).summary["performance_GLup_s"] != pytest.approx(
        few.choice_for(**arrays).summary["performance_GLup_s"], rel=1e-9)
    ranked = wp.rank_block_sizes(_seven_point(), (130, 66, 34), device=H100, threads=wp.CREATE_KERNEL_THREADS,
                                 registers=32, screen=1)
    assert few.choice_for(**arrays).block == tuple(ranked.best.configuration.block)


def test_c_ordered_arrays_are_estimated_as_they_are_with_a_warning(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    with pytest.warns(UserWarning, match="declared with the spatial layout"):
        run(**_arrays(gpu, (66, 66, 34), order="C"))
    choice = run.choice_for(**_arrays(gpu, (66, 66, 34), order="C"))
    assert choice.summary["arrays"]["dst"]["strides"] == [66 * 34, 34, 1]
    fzyx = run.choice_for(**_arrays(gpu, (66, 66, 34)))
    assert fzyx.block != choice.block  # threads along x stride by a row in C order: another block wins


def test_padded_arrays_are_estimated_with_their_padding(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    big = {n: gpu.zeros((72, 66, 34), order="F") for n in ("src", "dst")}
    padded = {n: a[:66] for n, a in big.items()}  # x rows padded from 66 to 72 elements
    layouts = _launch.read_call(_launch.CallSignature.of(run.kernel), padded)
    assert layouts["src"] == _extract.ArrayLayout((66, 66, 34), (1, 72, 72 * 66))
    spec = _describe.describe_spec(run.kernel, None, arrays=layouts, registers=FAKE_REGISTERS)
    assert {f["name"]: f["shape"] for f in spec["field"]} == {"src": [72, "ny+2", "nz+2"],
                                                               "dst": [72, "ny+2", "nz+2"]}
    assert spec["domain"] == [64, 64, 32]
    run(**padded)
    assert gpu.launches[-1][1] == tuple(math.ceil(n / b) for n, b in zip((64, 64, 32), gpu.launches[-1][2],
                                                                          strict=True))


@pytest.mark.parametrize("layout", ["fzyx", "zyxf"])
def test_launch_arrays_describe_the_kernel_as_shape_and_layout_do(layout):
    """The array twin: arrays of a shape in a layout give the description that the shape and layout give."""
    import numpy as np

    kernel, _ = _generate.as_kernel(wp.lbm_d3q19_srt(layout=layout))
    for shape in ((18, 10, 6), (34, 34, 34)):
        arrays = {}
        for f in kernel.get_fields():
            q = tuple(int(n) for n in f.index_shape)
            if q and layout == "zyxf":  # the populations of a cell side by side, then x, y, z
                arrays[f.name] = np.zeros(q + shape, order="F").transpose(1, 2, 3, 0)
            else:  # x fastest, the population index slowest
                arrays[f.name] = np.zeros(shape + q, order="F")
        layouts = _launch.read_call(_launch.CallSignature.of(kernel), {**arrays, "omega": 1.8})  # a whole call
        by_arrays = _describe.describe_spec(kernel, None, arrays=layouts, registers=90)
        by_shape = _describe.describe_spec(kernel, shape, layout=layout, registers=90)
        assert by_arrays["field"] == by_shape["field"] and by_arrays["domain"] == by_shape["domain"]


def test_device_auto_refuses_an_unknown_gpu_and_a_named_device_needs_no_detection(gpu, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "Fake GPU")
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    with pytest.raises(warpspeed.InputError, match="no shipped device describes the GPU 'Fake GPU'"):
        run(**_arrays(gpu, (34, 34, 34)))
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "NVIDIA H200 NVL")  # a board no shipped file describes
    with pytest.raises(warpspeed.InputError) as refused:
        run(**_arrays(gpu, (34, 34, 34)))
    said = str(refused.value)
    assert "closest shipped: H200-SXM-141GB" in said
    assert "warpspeed.device('H200-SXM-141GB', sm_count=" in said and "--set KEY=VALUE" in said
    assert gpu.launches == []
    named = wp.create_kernel(_seven_point(), device="H200-SXM-141GB", cache=None).compile()
    named(**_arrays(gpu, (34, 34, 34)))
    assert named.choice_for(**_arrays(gpu, (34, 34, 34))).device == "H200-SXM-141GB"


def test_a_gpu_whose_sm_count_differs_from_the_shipped_board_is_refused(gpu, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", "114")  # an H100 name with the PCIe board's SMs: another board
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    with pytest.raises(warpspeed.InputError, match="reports 114 SMs, the shipped H100-SXM5-80GB has 132"):
        run(**_arrays(gpu, (34, 34, 34)))
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", "132")
    run(**_arrays(gpu, (34, 34, 34)))
    assert run.choice_for(**_arrays(gpu, (34, 34, 34))).device == H100


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"device": "no-such-gpu"}, "unknown device"),
    ({"folding": ((1, 1, 2),)}, "takes the options"),
    ({"layout": "zyxf"}, "takes the layout from the arrays"),
    ({"cache": "/tmp/rankings.jsonl"}, "cache= of a launch-time kernel"),
    ({"model": "latncy"}, "unknown performance model 'latncy'"),
    ({"registers": 0}, "registers must be an integer from 1 to 255"),
    ({"registers": "32"}, "registers must be an integer from 1 to 255"),
    ({"threads": "256"}, "threads= of a launch-time kernel is a thread count per block or a list of them"),
    ({"threads": ()}, "threads= of a launch-time kernel is a thread count per block or a list of them"),
    ({"threads": True}, "threads= of a launch-time kernel is a thread count per block or a list of them"),
    ({"threads": (100,)}, "threads per block 100: the block extents"),
    ({"threads": 100}, "threads per block 100: the block extents"),
])
def test_bad_launch_time_options_are_refused_when_the_kernel_is_created(gpu, kwargs, match):
    with pytest.raises(warpspeed.InputError, match=match):
        wp.create_kernel(_seven_point(), **kwargs)


def test_a_call_without_an_array_for_a_field_names_the_field(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    with pytest.raises(warpspeed.InputError, match="without an array for its field 'src'"):
        run(dst=gpu.zeros((34, 34, 34)))
    with pytest.raises(warpspeed.InputError, match=r"field 'dst'; it takes dst, src \(unexpected: dts\)"):
        run(src=gpu.zeros((34, 34, 34)), dts=gpu.zeros((34, 34, 34)))


def _d3q19(gpu, shape=(34, 34, 34), q=19, **kw):
    return {n: gpu.zeros((*shape, q)[:len(shape) + (q > 0)], order="F", **kw) for n in ("src", "dst")}


@pytest.mark.parametrize(("call", "match"), [
    (lambda g: _d3q19(g), "without a value for its parameter 'omega'; it takes dst, omega, src"),
    (lambda g: dict(_d3q19(g, q=9), omega=1.8), r"shape \[34, 34, 34, 9\]; the field needs 3 spatial extents "
                                                r"and the index extents \[19\]"),
    (lambda g: dict(_d3q19(g, q=0), omega=1.8), r"shape \[34, 34, 34\]; the field needs 3 spatial extents and"),
    (lambda g: dict(_d3q19(g, shape=(34, 34)), omega=1.8), r"shape \[34, 34, 19\]; the field needs 3 spatial"),
    (lambda g: dict(_d3q19(g), src=[[1.0]], omega=1.8), "field 'src' is not an array \\(list\\)"),
    (lambda g: dict(_d3q19(g, dtype="float32"), omega=1.8), "holds float32; the kernel was generated for float64"),
    (lambda g: dict(src=g.zeros((34, 34, 34, 19), order="F"), dst=g.zeros((34, 34, 18, 19), order="F"),
                    omega=1.8), "different spatial shapes"),
])
def test_a_wrong_call_is_refused_before_anything_is_ranked_or_launched(gpu, call, match):
    """Calls pystencils would refuse with its own error, or launch past the arrays' end (index extents are not
    checked by pystencils): an InputError naming the argument, before the model ranks anything."""
    run = wp.create_kernel(wp.lbm_d3q19_srt(), cache=None).compile()
    with pytest.raises(warpspeed.InputError, match=match):
        run(**call(gpu))
    assert gpu.launches == [] and run.choices == {}


def test_a_fixed_shape_field_is_called_with_its_shape(gpu):
    src, dst = ps.fields("src, dst: double[34, 34, 34]", layout="fzyx")
    run = wp.create_kernel([ps.Assignment(dst.center, src[1, 0, 0] + src[-1, 0, 0])], cache=None).compile()
    with pytest.raises(warpspeed.InputError, match=r"shape \[34, 34, 18\]; the field was declared with the fixed "
                                                   r"shape \[34, 34, 34\]"):
        run(src=gpu.zeros((34, 34, 34), order="F"), dst=gpu.zeros((34, 34, 18), order="F"))
    run(**_arrays(gpu, (34, 34, 34)))
    assert gpu.launches


def test_a_fixed_layout_field_is_called_with_its_strides(gpu):
    s = ps.fields("s(19): double[34, 34, 34]", layout="fzyx")
    d = ps.fields("d: double[34, 34, 34]", layout="fzyx")
    run = wp.create_kernel([ps.Assignment(d.center, s(0) + s(18))], cache=None).compile()
    populations_fastest = gpu.zeros((34, 34, 34, 19), order="C")  # the right shape in another layout
    with pytest.raises(warpspeed.InputError, match=r"field 's' has the strides \[21964, 646, 19, 1\] "
                                                   r"\(elements\); the field was declared with the fixed strides"):
        run(s=populations_fastest, d=gpu.zeros((34, 34, 34), order="F"))
    assert gpu.launches == []


def test_launch_bounds_in_the_code_cap_the_threads_ranked(gpu):
    """gpu.generate_launch_bounds writes __launch_bounds__(threads of the default block): CUDA refuses a larger
    block, so none is chosen."""
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.default_block_size = (128, 1, 1)
    cfg.gpu.generate_launch_bounds = True
    run = wp.create_kernel(_seven_point(), cfg, cache=None, measure=False).compile()
    run(**_arrays(gpu, (66, 66, 66)))
    assert math.prod(gpu.launches[-1][2]) <= 128
    no_jit = cfg.copy()
    no_jit.jit = ps.no_jit
    bounded = ps.create_kernel(_seven_point(), no_jit)
    ranking = wp.rank_block_sizes(bounded, (66, 66, 66), device=H100, registers=FAKE_REGISTERS)
    assert max(math.prod(r.configuration.block) for r in ranking.results) == 128  # an existing kernel too
    assert _rank.within_launch_bounds((256, 512), "__global__ __launch_bounds__(96) void k()") == (64,)
    assert _rank.within_launch_bounds((256, 512), "__global__ void k()") == (256, 512)


def test_a_reduction_is_refused_with_a_message_that_says_so(gpu):
    r = ps.TypedSymbol("r", "double")
    s, d = ps.fields("s, d: double[3D]", layout="fzyx")
    reduction = ps.AddReductionAssignment(r, s.center ** 2)
    with pytest.raises(warpspeed.InputError, match=r"hold a reduction \(AddReductionAssignment\)"):
        wp.describe([reduction], (34, 34, 34))
    with pytest.raises(warpspeed.InputError, match="AddReductionAssignment; reductions are not described"):
        wp.describe(reduction, (34, 34, 34))
    mixed = ps.AssignmentCollection([ps.Assignment(d.center, s.center), reduction])
    with pytest.raises(warpspeed.InputError, match=r"hold a reduction \(AddReductionAssignment\)"):
        wp.describe(mixed, (34, 34, 34))  # was described without the reduction's update
    with pytest.raises(warpspeed.InputError, match=r"hold a reduction \(AddReductionAssignment\)"):
        wp.create_kernel(mixed)  # refused when created, not at the first compile


def test_assignments_pystencils_cannot_build_are_an_input_error_at_launch_time_too(gpu):
    f = ps.fields("f: double[3D]", layout="fzyx")
    wrong = [ps.Assignment(f.center, ps.x_)]  # a float field set from an integer coordinate: pystencils refuses
    with pytest.raises(warpspeed.InputError, match="pystencils could not create a CUDA kernel"):
        wp.describe(wrong, (34, 34, 34))
    with pytest.raises(warpspeed.InputError, match="pystencils could not create a CUDA kernel"):
        wp.create_kernel(wrong)


def _launched_as_pystencils(gpu, update, config, arrays):
    """The grid and block of a launch-time kernel's call and of pystencils' own kernel with the same arrays."""
    plain = ps.create_kernel(update, config.copy()).compile()
    config.jit = wp.launch_time_jit(cache=None)
    run = ps.create_kernel(update, config).compile()
    with pytest.warns(UserWarning, match="runs with pystencils' default block"):
        run(**arrays)
    ours = gpu.launches[-1][1:3]
    plain(**arrays)
    return ours, gpu.launches[-1][1:3]


def test_a_pack_kernel_into_a_buffer_launches_as_pystencils_launches_it(gpu):
    """A buffer field (1-D, its own length) beside a 3-D field: pystencils compares the shapes of generic fields
    only; warpspeed does not describe the kernel and leaves its launch to pystencils."""
    src = ps.fields("src: double[3D]", layout="fzyx")
    buf = ps.Field.create_generic("buf", spatial_dimensions=1, field_type=ps.FieldType.BUFFER)
    arrays = {"src": gpu.zeros((10, 10, 10), order="F"), "buf": gpu.zeros((1000,))}
    ours, theirs = _launched_as_pystencils(gpu, [ps.Assignment(buf.center, src.center)],
                                           ps.CreateKernelConfig(target=ps.Target.CUDA), arrays)
    assert ours == theirs


def test_a_kernel_over_an_index_list_compiles_and_launches_as_pystencils_launches_it(gpu):
    """A boundary kernel (one thread per entry of an index field of structs): one thread axis, whatever the
    dimensionality of the other fields, so it is not refused as another indexing scheme."""
    import numpy as np

    entry = np.dtype([("x", np.int64), ("y", np.int64), ("z", np.int64)], align=True)
    idx = ps.Field.create_generic("idx", spatial_dimensions=1, index_dimensions=0, dtype=entry,
                                  field_type=ps.FieldType.INDEXED)
    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    arrays = {"src": gpu.zeros((10, 10, 10), order="F"), "dst": gpu.zeros((10, 10, 10), order="F"),
              "idx": gpu.zeros((5,), dtype=entry)}
    ours, theirs = _launched_as_pystencils(gpu, [ps.Assignment(dst.center, src[1, 0, 0])],
                                           ps.CreateKernelConfig(target=ps.Target.CUDA, index_field=idx), arrays)
    assert ours == theirs == ((1, 1, 1), (256, 1, 1))


def test_fields_of_generic_element_type_are_described_with_the_type_of_their_code(gpu):
    """ps.fields("f: [3D]") has no element type of its own (ps::numeric_t): the code declares the config's
    default type, and the kernel is described with its size, at launch and with shape= alike."""
    update = _seven_point(element="")
    for dtype, element_bytes in (("float64", 8), ("float32", 4)):
        cfg = ps.CreateKernelConfig(target=ps.Target.CUDA, default_dtype=dtype)
        run = wp.create_kernel(update, cfg, cache=None, measure=False).compile()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback to pystencils' block, no layout warning
            run(**{n: gpu.zeros((130, 66, 34), dtype=dtype, order="F") for n in ("src", "dst")})
        choice = next(iter(run.choices.values()))
        assert "fallback" not in choice.summary
        spec = _describe.describe_spec(ps.create_kernel(update, cfg.copy()), (130, 66, 34), registers=FAKE_REGISTERS)
        assert {f["element_bytes"] for f in spec["field"]} == {element_bytes}
        shaped = wp.create_kernel(update, cfg, shape=(130, 66, 34), device=H100, registers=FAKE_REGISTERS,
                                  cache=None)
        assert tuple(shaped.metadata["warpspeed"]["ranking"]["block"]) == choice.block


def test_a_manual_launch_grid_is_left_to_the_user(gpu):
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.manual_launch_grid = True
    kernel = wp.create_kernel(_seven_point(), cfg)
    with pytest.raises(warpspeed.InputError, match=r"ManualLaunchConfiguration\) that takes no block size"):
        kernel.compile()


# ----------------------------------------------------------------------------- pystencils' internals, in one place
def test_the_internals_module_holds_every_non_public_pystencils_name_the_plugin_uses():
    import ast
    import inspect

    from warpspeed_pystencils import _internals

    public = ("pystencils", "pystencils.codegen", "pystencils.codegen.config", "pystencils.types", "pystencils.jit",
              "pystencils.sympyextensions")
    package = Path(_internals.__file__).parent
    for module in package.glob("*.py"):
        if module.name == "_internals.py":
            continue
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pystencils"):
                assert node.module in public, f"{module.name} imports {node.module} outside _internals"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("pystencils"):
                        assert alias.name in public, f"{module.name} imports {alias.name} outside _internals"
            if isinstance(node, ast.Attribute) and node.attr == "backend":  # ps.backend.ast...: not public
                raise AssertionError(f"{module.name} reaches pystencils' backend outside _internals")
    assert all(inspect.isclass(c) for c in _internals.AST_NODES)
    assert all(inspect.isclass(c) for c in (_internals.FieldBasePtr, _internals.FieldShape, _internals.FieldStride))
    assert [wp.pystencils_default_block(d) for d in (1, 2, 3)] == [(256, 1, 1), (16, 16, 1), (8, 8, 4)]


def test_the_launch_state_internals_restore_pystencils_own_launch(gpu):
    """The private block state _internals reads exists in this pystencils release and restoring it undoes
    trim_block_size: a 2-cell-wide domain launches pystencils' untrimmed default block again."""
    from warpspeed_pystencils import _internals

    plain = ps.create_kernel(_seven_point(), ps.CreateKernelConfig(target=ps.Target.CUDA)).compile()
    state = _internals.launch_state(plain.launch_config)
    assert state is not None
    plain.launch_config.trim_block_size((64, 2, 2))
    assert _internals.restore_launch_state(plain.launch_config, state)
    plain(**_arrays(gpu, (4, 34, 34)))  # 2 x 32 x 32 cells: trimming would give a block of x-extent 2
    assert gpu.launches[-1][2] == (8, 8, 4)


def test_layout_names_are_read_as_pystencils_reads_them():
    field_module = pytest.importorskip("pystencils.field")
    for name in ("fzyx", "zyxf", "c", "numpy", "f", "F", "C", "reverse_numpy", "SoA", "aos"):
        for spatial, index in ((1, 0), (2, 0), (3, 0), (2, 1), (3, 1), (1, 1)):
            if index:
                theirs = tuple(field_module.layout_string_to_tuple(name, spatial + index))
            else:
                theirs = tuple(field_module.spatial_layout_string_to_tuple(name, spatial))
            assert _extract.layout_orders(name, spatial, index, "layout") == theirs
            shape = tuple(range(3, 3 + spatial + index))
            assert _extract.dense_strides(shape, theirs) == tuple(field_module.compute_strides(shape, theirs))
    for bad in ("xyz", "bogus", ""):
        with pytest.raises(warpspeed.InputError, match="use 'fzyx'"):
            _extract.layout_orders(bad, 3, 0, "layout")


def test_warpspeeds_pystencils_default_block_is_pystencils_own():
    from warpspeed.file_frontend import pystencils_default_block

    for dims, domain in ((1, (100, 1, 1)), (2, (100, 100, 1)), (3, (100, 100, 100))):
        assert pystencils_default_block(domain) == wp.pystencils_default_block(dims)
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.default_block_size = (32, 4, 2)
    assert wp.pystencils_default_block(3, cfg) == (32, 4, 2)


def test_each_gpu_gets_its_own_choice(gpu, monkeypatch):
    """Arrays of one shape on two GPUs of different models: one choice per GPU."""
    names = {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H200"}
    monkeypatch.setattr(gpu.cuda.runtime, "getDeviceProperties",
                        staticmethod(lambda i: {"name": names[i].encode()}))

    class OnGpu1(type(gpu.zeros(1))):
        @property
        def device(self):
            return type("D", (), {"id": 1})()

    run = wp.create_kernel(_seven_point(), cache=None).compile()
    on0 = _arrays(gpu, (130, 66, 34))
    on1 = {n: a.view(OnGpu1) for n, a in _arrays(gpu, (130, 66, 34)).items()}
    assert run.choice_for(**on0).device == H100
    assert run.choice_for(**on1).device == "H200-SXM-141GB"
    assert len(run.choices) == 2


def test_arrays_warpspeed_cannot_describe_run_with_pystencils_default_block(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    strided = {n: gpu.zeros((68, 34, 34), order="F")[::2] for n in ("src", "dst")}  # every other x
    with pytest.warns(UserWarning, match=r"pystencils' default block \(8, 8, 4\)"):
        run(**strided)
    assert gpu.launches[-1][2] == (8, 8, 4)
    assert "fallback" in run.choice_for(**strided).summary


def test_after_a_chosen_block_a_launch_warpspeed_cannot_describe_is_pystencils_own(gpu):
    """Arrays without interior (2 cells in x, one ghost layer each side) after a chosen block: launched as
    pystencils launches them, its default block untrimmed (grid 0 in x), not the chosen block trimmed."""
    run = wp.create_kernel(_seven_point(), cache=None, measure=False).compile()
    run(**_arrays(gpu, (130, 66, 34)))
    chosen = gpu.launches[-1][2]
    with pytest.warns(UserWarning, match="empty iteration space"):
        run(**_arrays(gpu, (2, 34, 34)))
    plain = ps.create_kernel(_seven_point(), ps.CreateKernelConfig(target=ps.Target.CUDA)).compile()
    plain(**_arrays(gpu, (2, 34, 34)))
    assert gpu.launches[-2][1:3] == gpu.launches[-1][1:3] == ((0, 4, 8), (8, 8, 4))
    run(**_arrays(gpu, (130, 66, 34)))  # and back to the choice
    assert gpu.launches[-1][2] == chosen


def test_the_summary_compares_with_the_block_pystencils_would_launch(gpu):
    """The config's own default block (gpu.default_block_size) is the one compared with, at launch and with
    shape= alike, and it keys the choice."""
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.default_block_size = (32, 4, 2)
    run = wp.create_kernel(_seven_point(), cfg, measure=False).compile()
    (choice,) = [run.choice_for(**_arrays(gpu, (130, 66, 34)))]
    assert choice.summary["pystencils_default_block"] == [32, 4, 2]
    shaped = wp.create_kernel(_seven_point(), cfg, shape=(130, 66, 34), device=H100, registers=FAKE_REGISTERS)
    summary = shaped.metadata["warpspeed"]["ranking"]
    assert summary["pystencils_default_block"] == [32, 4, 2]
    assert summary["pystencils_default_GLup_s"] == pytest.approx(choice.summary["pystencils_default_GLup_s"])
    plain = wp.create_kernel(_seven_point(), shape=(130, 66, 34), device=H100, registers=FAKE_REGISTERS)
    assert plain.metadata["warpspeed"]["ranking"]["pystencils_default_block"] == [8, 8, 4]  # not the cached one
    again = wp.create_kernel(_seven_point(), measure=False).compile().choice_for(**_arrays(gpu, (130, 66, 34)))
    assert again.summary["pystencils_default_block"] == [8, 8, 4]


def test_a_two_dimensional_single_precision_kernel_gets_its_block_at_launch(gpu):
    src, dst = ps.fields("src, dst: float32[2D]", layout="fzyx")
    update = [ps.Assignment(dst.center, (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
    run = wp.create_kernel(update, cache=None, measure=False).compile()
    arrays = {n: gpu.zeros((1026, 514), dtype="float32", order="F") for n in ("src", "dst")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(**arrays)
    block = gpu.launches[-1][2]
    choice = run.choice_for(**arrays)
    assert block[2] == 1 and block == choice.block and choice.summary["block"] == list(block)
    assert choice.summary["pystencils_default_block"] == [16, 16, 1]
    assert choice.summary["speedup_vs_default"] >= 1
    spec = _describe.describe_spec(ps.create_kernel(update, ps.CreateKernelConfig(target=ps.Target.CUDA)), (1026, 514),
                             registers=FAKE_REGISTERS)
    assert spec["domain"] == [1024, 512, 1] and {f["element_bytes"] for f in spec["field"]} == {4}


def test_blocks_are_ranked_as_pystencils_launches_them_on_a_small_domain(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    run(**_arrays(gpu, (6, 6, 6)))  # 4 x 4 x 4 cells: no block of 256 threads fits untrimmed
    choice = next(iter(run.choices.values()))
    assert gpu.launches[-1][2] == choice.block
    assert all(b <= 4 for b in choice.block[1:])


def test_an_indexing_scheme_other_than_linear3d_and_linear1d_is_refused_when_created(gpu):
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    cfg.gpu.indexing_scheme = "Blockwise4D"
    with pytest.raises(warpspeed.InputError, match="indexing schemes; the config asks for Blockwise4D"):
        wp.create_kernel(_seven_point(), cfg)
    cfg.jit = wp.launch_time_jit(cache=None)  # warpspeed's JIT given directly: refused when compiled
    with pytest.raises(warpspeed.InputError, match="not on 3 thread axes.*Blockwise4D puts coordinates on blockIdx"):
        ps.create_kernel(_seven_point(), cfg).compile()
    with pytest.raises(warpspeed.InputError, match="blockIdx.*only pystencils' Linear3D and Linear1D"):
        wp.describe(ps.create_kernel(_seven_point(), cfg.copy()), (34, 34, 34))


def _timed_by_block(gpu, monkeypatch, times_ms):
    """The stand-in GPU's event timer reports, for each launch, the time ``times_ms`` gives its block."""
    monkeypatch.setattr(gpu.cuda, "get_elapsed_time", staticmethod(lambda a, b: times_ms(gpu.launches[-1][2])))


def test_blocks_the_model_cannot_tell_apart_are_timed_at_the_first_calls_and_the_fastest_kept(gpu, monkeypatch):
    arrays = _arrays(gpu, (258, 130, 66))
    run = wp.create_kernel(_seven_point()).compile()
    predicted = run.choice_for(**arrays)
    conf = predicted.summary["confidence"]
    candidates = [tuple(c["block"]) for c in conf["measure"]]
    assert conf["level"] == "close" and len(candidates) > 1 and predicted.candidates == tuple(candidates)
    assert predicted.block == candidates[0] and predicted.summary["chosen_by"] == "model"
    fastest = candidates[-1]  # the measurement disagrees with the model's order
    _timed_by_block(gpu, monkeypatch, lambda block: 1.0 if block == fastest else 2.0)
    for _ in range(len(candidates) + 3):
        run(**arrays)
    launched = [launch[2] for launch in gpu.launches]
    # a warm-up with the best-predicted block, then each candidate once, then the fastest from then on
    assert launched == [candidates[0], *candidates, fastest, fastest], (launched, candidates)
    (choice,) = run.choices.values()
    assert choice.block == fastest and choice.candidates == ()
    assert choice.summary["chosen_by"] == "measurement" and choice.summary["block"] == list(fastest)
    assert {tuple(m["block"]): m["time_ms"] for m in choice.summary["measured_ms"]} == \
        {b: 1.0 if b == fastest else 2.0 for b in candidates}
    # the next run of the program reads the measured block back: no ranking, no timing
    ranks = _Counter(monkeypatch, warpspeed, "rank")
    gpu.launches.clear()
    again = wp.create_kernel(_seven_point()).compile()
    again(**arrays)
    assert ranks.calls == 0 and [launch[2] for launch in gpu.launches] == [fastest]


def test_measure_false_launches_the_best_predicted_block_untimed(gpu, monkeypatch):
    arrays = _arrays(gpu, (258, 130, 66))
    _timed_by_block(gpu, monkeypatch, lambda block: pytest.fail("timed a launch with measure=False"))
    run = wp.create_kernel(_seven_point(), measure=False).compile()
    for _ in range(4):
        run(**arrays)
    (choice,) = run.choices.values()
    assert choice.candidates == () and choice.summary["confidence"]["level"] == "close"
    assert {launch[2] for launch in gpu.launches} == {choice.block}


def test_an_array_of_structures_kernel_times_a_block_of_every_x_extent(gpu, monkeypatch):
    f, g = ps.fields("f(19), g(19): double[3D]", layout="zyxf")  # the populations of a cell side by side
    assignments = [ps.Assignment(g(q), f(q)) for q in range(19)]
    arrays = {n: gpu.zeros((34, 34, 66, 19)).transpose(2, 1, 0, 3) for n in "fg"}  # x, y, z, f; f fastest
    run = wp.create_kernel(assignments).compile()
    choice = run.choice_for(**arrays)
    conf = choice.summary["confidence"]
    assert conf["level"] == "unvalidated" and any("152 B apart" in r for r in conf["reasons"])
    x_extents = {b[0] for b in choice.candidates}
    assert x_extents == {c["block"][0] for c in conf["measure"]} and len(x_extents) >= 5


def test_a_c_order_declaration_launched_with_c_arrays_chooses_as_create_kernel_with_the_shape(gpu):
    """ps.fields' default (numpy order) with numpy's arrays: no warning, and the block create_kernel chooses
    for the same arrays' shape (fastest first) from the declaration alone."""
    run = wp.create_kernel(_seven_point("numpy"), cache=None).compile()
    arrays = _arrays(gpu, (66, 66, 34), order="C")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(**arrays)
        reference = wp.create_kernel(_seven_point("numpy"), shape=(34, 66, 66), device=H100,
                                     registers=FAKE_REGISTERS, cache=None)
    assert run.choice_for(**arrays).block == tuple(reference.metadata["warpspeed"]["block"])
    with pytest.warns(UserWarning, match=r"To fix: allocate the arrays in the declared layout, or declare the field "
                                         r"with the arrays' layout \(ps.fields\(..., layout='fzyx'\)\)"):
        run(**_arrays(gpu, (66, 66, 34), order="F"))


def test_the_launch_choice_key_holds_the_declared_layouts(gpu, monkeypatch):
    keys = []
    real = _launch._cache.content_key
    monkeypatch.setattr(_launch._cache, "content_key", lambda *a: keys.append(a) or real(*a))
    arrays = _arrays(gpu, (34, 34, 34), order="C")
    wp.create_kernel(_seven_point("numpy"), measure=False).compile().choice_for(**arrays)
    (key,) = [k for k in keys if k[0] == "launch-choice"]
    assert key[2] == [("dst", [0, 1, 2]), ("src", [0, 1, 2])]


def test_one_thread_count_is_that_count_alone(gpu):
    """threads=256 (an int, as warpspeed.rank takes it): every block ranked has 256 threads."""
    arrays = _arrays(gpu, (66, 66, 66))
    run = wp.create_kernel(_seven_point(), cache=None, threads=256, measure=False).compile()
    run(**arrays)
    assert math.prod(gpu.launches[-1][2]) == 256
    assert run.choice_for(**arrays).summary["configurations"] == len(warpspeed.block_shapes((256,)))


def test_choice_of_a_launch_time_kernel_reads_its_choice(gpu, monkeypatch):
    """wp.choice_of(run) once it has run on one array layout, or of run.choice_for(**arrays): the same readable
    choice as create_kernel's with the shape; a measured choice says so and lists the times."""
    arrays = _arrays(gpu, (258, 130, 66))
    run = wp.create_kernel(_seven_point()).compile()
    with pytest.raises(warpspeed.InputError, match="has not been called yet: pass run.choice_for"):
        wp.choice_of(run)
    predicted = wp.choice_of(run.choice_for(**arrays))
    reference = wp.choice_of(wp.create_kernel(_seven_point(), shape=(258, 130, 66), device=H100,
                                              registers=FAKE_REGISTERS, cache=None))
    assert (predicted.block, predicted.headline) == (reference.block, reference.headline)
    assert predicted.table.splitlines()[:4] == reference.table.splitlines()[:4]  # the blocks it can launch
    assert predicted.chosen_by == "model" and predicted.confidence == "close"
    candidates = run.choice_for(**arrays).candidates
    fastest = candidates[-1]
    _timed_by_block(gpu, monkeypatch, lambda block: 1.0 if block == fastest else 2.0)
    for _ in range(len(candidates) + 1):
        run(**arrays)
    measured = wp.choice_of(run)
    assert measured.block == fastest and measured.chosen_by == "measurement"
    assert dict(measured.measured_ms) == {b: 1.0 if b == fastest else 2.0 for b in candidates}
    text = str(measured)
    assert f"block {'x'.join(map(str, fastest))} (the fastest measured)" in text
    assert "measured on the GPU (one call each): " in text and measured.table in text
    run(**_arrays(gpu, (34, 34, 34)))
    with pytest.raises(warpspeed.InputError, match="has chosen for 2 array layouts"):
        wp.choice_of(run)


def test_choice_of_arrays_warpspeed_cannot_describe_says_pystencils_launched_them(gpu):
    run = wp.create_kernel(_seven_point(), cache=None).compile()
    view = {n: a[::2] for n, a in _arrays(gpu, (68, 34, 34)).items()}
    with pytest.warns(UserWarning, match="runs with pystencils' default block"):
        run(**view)
    choice = wp.choice_of(run)
    assert choice.chosen_by == "pystencils" and choice.block == (8, 8, 4)
    assert str(choice).startswith("kernel: launched with pystencils' default block 8x8x4; warpspeed chose nothing")
