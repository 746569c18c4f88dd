"""Kernel files: the format of docs/kernel-format.md, validation errors, the shipped catalog."""

import pytest

import warpspeed
from warpspeed import InputError

EXAMPLE = '''
name = "star3d-r1"
precision = "fp64"
flops_per_lup = 7
registers = 32
domain = [254, 254, 254]

[[field]]
name = "src"
element_bytes = 8
shape = [256, 256, 256]
offset = 0
loads = [
  ["tidx+1", "tidy+1", "tidz+1"],
  ["tidx",   "tidy+1", "tidz+1"],
  ["tidx+2", "tidy+1", "tidz+1"],
]
stores = []

[[field]]
name = "dst"
element_bytes = 8
shape = [256, 256, 256]
loads = []
stores = ["tidx+1 + 256*(tidy+1) + 65536*(tidz+1)"]
'''


def write(tmp_path, text, name="k.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_interface_example_loads(tmp_path):
    k = warpspeed.load_kernel(write(tmp_path, EXAMPLE))
    assert k.name == "star3d-r1" and k.domain == (254, 254, 254) and k.registers == 32
    src, dst = k.fields
    assert src.shape == (256, 256, 256) and len(src.loads) == 3 and not src.stores
    assert dst.offset == 0 and len(dst.stores) == 1 and k.flops.total == 7


def test_linear_and_tuple_accesses_give_identical_estimates(tmp_path):
    linear = warpspeed.load_kernel(write(tmp_path, EXAMPLE))
    tupled = warpspeed.load_kernel(write(tmp_path, EXAMPLE.replace(
        '"tidx+1 + 256*(tidy+1) + 65536*(tidz+1)"', '["tidx+1", "tidy+1", "tidz+1"]'), "t.toml"))
    a = warpspeed.estimate(linear, "A100-SXM4-40GB", (32, 4, 2)).to_dict()
    b = warpspeed.estimate(tupled, "A100-SXM4-40GB", (32, 4, 2)).to_dict()
    for key in ("volumes_B_per_lup", "l1_cycles_per_warp_lup", "limiters_GLup_s", "causes"):
        assert a[key] == b[key]


def test_shapes_follow_the_domain():
    k = warpspeed.find_kernel("star3d-r4")
    assert k.fields[0].shape == (648, 520, 520)
    k2 = k.with_domain((120, 100, 80))
    assert k2.domain == (120, 100, 80) and k2.fields[0].shape == (128, 108, 88)


@pytest.mark.parametrize("change, words", [
    (('precision = "fp64"', 'precision = "fp16"'), ["precision", "fp16"]),
    (('registers = 32', 'registers = 32\ncolour = "red"'), ["colour", "valid keys"]),
    (('["tidx+2", "tidy+1", "tidz+1"]', '["tidx+3", "tidy+1", "tidz+1"]'), ["field 'src'", "load 2", "[0, 255]"]),
    (('["tidx",   "tidy+1", "tidz+1"]', '["tidx-1", "tidy+1", "tidz+1"]'), ["field 'src'", "load 1", "-1"]),
    (('["tidx+1", "tidy+1", "tidz+1"],\n  ["tidx",', '["tidx+1", "tidy+1"],\n  ["tidx",'),
     ["field 'src'", "load 0", "2 index expressions"]),
    (('["tidx+2", "tidy+1", "tidz+1"]', '["tidx+2", "tidy**2", "tidz+1"]'), ["field 'src'", "load 2", "**"]),
    (('["tidx+2", "tidy+1", "tidz+1"]', '["tidx+2", "foo", "tidz+1"]'), ["field 'src'", "foo"]),
    (('["tidx+2", "tidy+1", "tidz+1"]', '["tidx+2", "tidy/2", "tidz+1"]'), ["field 'src'", "/"]),
    (('element_bytes = 8', 'element_bytes = 3'), ["element_bytes", "3"]),
    (('domain = [254, 254, 254]', 'domain = [254, 0, 254]'), ["domain"]),
    (('flops_per_lup = 7', 'flops_per_lup = "seven"'), ["flops_per_lup"]),
])
def test_bad_kernel_files_name_the_culprit(tmp_path, change, words):
    old, new = change
    assert old in EXAMPLE
    with pytest.raises(InputError) as err:
        warpspeed.load_kernel(write(tmp_path, EXAMPLE.replace(old, new, 1)))
    for w in words:
        assert w in str(err.value)


def test_unreadable_and_invalid_toml(tmp_path):
    with pytest.raises(InputError, match="cannot be read"):
        warpspeed.load_kernel(tmp_path / "missing.toml")
    with pytest.raises(InputError, match="not valid TOML"):
        warpspeed.load_kernel(write(tmp_path, "name = "))


def test_params_and_domain_names(tmp_path):
    text = EXAMPLE.replace("shape = [256, 256, 256]\noffset = 0", 'shape = ["nx+g", "ny+g", "nz+g"]\noffset = "a"')
    text = text.replace('domain = [254, 254, 254]', 'domain = [254, 254, 254]\n[params]\ng = 2\na = 3')
    k = warpspeed.load_kernel(write(tmp_path, text))
    assert k.fields[0].shape == (256, 256, 256) and k.fields[0].offset == 3


@pytest.mark.parametrize("name", sorted(warpspeed.catalog()))
def test_every_catalog_kernel_loads_and_estimates(name):
    k = warpspeed.find_kernel(name)
    small = k.with_domain(tuple(min(n, 64) for n in k.domain))
    e = warpspeed.estimate(small, "A100-SXM4-40GB", (32, 2, 2) if small.domain[2] > 1 else (32, 4, 1))
    assert e.performance_GLup_s > 0 and e.limiter in ("FP", "L1", "L2", "DRAM")


@pytest.mark.parametrize("dev", warpspeed.device_ids())
def test_every_device_estimates(dev):
    e = warpspeed.estimate("star3d-r1", dev, (32, 4, 2), domain=(64, 64, 64))
    assert e.device == dev and e.performance_GLup_s > 0


def test_generated_star_equals_the_shipped_file():
    gen = warpspeed.kernels.get("star", r=4, dims=3, domain=(640, 512, 512))
    shipped = warpspeed.find_kernel("star3d-r4")
    a = warpspeed.estimate(gen, "A100-SXM4-40GB", (32, 4, 8), (1, 1, 2), registers=48).to_dict()
    b = warpspeed.estimate(shipped, "A100-SXM4-40GB", (32, 4, 8), (1, 1, 2)).to_dict()
    assert a["volumes_B_per_lup"] == b["volumes_B_per_lup"] and a["limiters_GLup_s"] == b["limiters_GLup_s"]


@pytest.mark.parametrize("text, n_loads, domain", [
    ("star:r=2,dims=2", 9, (4096, 4096, 1)), ("box:r=1,dims=2,element_bytes=4", 9, (4096, 4096, 1)),
    ("star", 7, (256, 256, 256)), ("box:dims=1,r=3", 7, (1 << 24, 1, 1)),
])
def test_catalog_names_with_parameters(text, n_loads, domain):
    k = warpspeed.find_kernel(text)
    assert len(k.fields[0].loads) == n_loads and k.domain == domain


@pytest.mark.parametrize("text, words", [
    ("star:r=99", ["r (the range)", "99"]), ("star:radius=2", ["radius", "valid"]),
    ("star:r=2;dims=3", ["malformed"]), ("star:dims=4", ["dims"]), ("nosuch:r=1", ["unknown kernel"]),
])
def test_bad_catalog_parameters(text, words):
    with pytest.raises(InputError) as err:
        warpspeed.find_kernel(text)
    for w in words:
        assert w in str(err.value)
