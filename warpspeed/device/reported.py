"""The shipped device for the name a GPU reports about itself (cupy, nvidia-smi, CUDA's device properties).

Drivers report marketing names that are not the ids of ``warpspeed/devices/``: an H100 SXM5 says
``"NVIDIA H100 80GB HBM3"``, an H200 SXM ``"NVIDIA H200"``, a V100 ``"Tesla V100-SXM2-32GB"``. A name
matches a device when it names the same chip (``H100``, ``A100``, ``MI250X``), the same board form
(PCIe, NVL or the default SXM/OAM module), where both give one the same memory size, and nothing else: a
word the chip, form and memory do not explain (``VF``, ``HF``, ``Max-Q``, ``D``) marks another variant of
the board, with other clocks, power or a share of the GPU, so the name must then be the device's own or one
listed in KNOWN_NAMES. Anything else is refused: a GPU that is not described must not be estimated silently
as a neighbour with other numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from .builtin import device
from .description import Device
from .shipped import device_ids

_VENDOR_WORDS = {"NVIDIA", "AMD", "TESLA", "INSTINCT", "GEFORCE", "QUADRO", "RADEON"}
_CHIP = re.compile(r"^(?:MI\d{3}[A-Z]?|[A-Z]{1,2}\d{2,3}[A-Z]?)$")
_MEMORY = re.compile(r"(\d+)\s*GB?\b")
#: Words that say no more than the chip, form and memory do: a board form (PCIe, NVL, SXM2..SXM6, OAM), a
#: memory size or type ("80GB", "144G", "HBM3e").
_PLAIN_WORD = re.compile(r"^(?:PCIE|NVL|SXM\d?|OAM|\d+GB?|HBM\d+E?|GDDR\d+X?)$")
#: Names GPUs report for the board a shipped device describes, where the chip, form and memory rule alone
#: does not reach it (tests/device/test_reported_names.py cites where each was reported):
#: GH200: the file's sources name the board "NVIDIA GH200 480GB" (96 GB HBM3 + 480 GB of CPU memory);
#: B300: the HGX B300 module reports "B300 SXM6 AC";
#: RTX-PRO-6000-Blackwell: the 600 W Workstation Edition (the Max-Q and Server Editions run other clocks and
#: power, and are refused naming it).
KNOWN_NAMES = {
    "GH200": ("NVIDIA GH200 480GB",),
    "B300": ("NVIDIA B300 SXM6 AC",),
    "RTX-PRO-6000-Blackwell": ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition",),
}
#: The AMD Instinct boards of each LLVM target name, from ROCm's GPU hardware specification table
#: (github.com/ROCm/legacy-rocm-build docs/reference/gpu-arch-specs.rst, as the device files cite it): ROCm
#: reports the architecture (``gcnArchName``, e.g. ``"gfx942:sramecc+:xnack-"``) beside the name, and as the
#: name where it knows no marketing name; an architecture alone never tells the board.
ARCH_BOARDS = {
    "gfx950": ("MI350X", "MI355X"),
    "gfx942": ("MI300A", "MI300X", "MI325X"),
    "gfx90a": ("MI210", "MI250", "MI250X"),
    "gfx908": ("MI100",),
    "gfx906": ("MI50", "MI60"),
}
#: An AMD architecture name as ROCm reports it: the target, then its features (``gfx942:sramecc+:xnack-``),
#: possibly after the ISA's triple (``amdgcn-amd-amdhsa--gfx942:...``, as rocminfo prints it).
_ARCH_NAME = re.compile(r"^(?:amdgcn-amd-amdhsa--)?(gfx[0-9a-f]{3,4})((?::[a-z0-9_]+[+-])*)$", re.IGNORECASE)


@dataclass(frozen=True)
class _Identity:
    """What a name says about the board: the chip, the form (pcie, nvl, module), the memory in GB, and the
    words none of these explain (``VF``, ``MAX``, ``Q``: another variant of the board)."""

    chip: str | None
    form: str
    memory_GB: int | None
    other_words: tuple[str, ...] = ()


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s\-_/,()]+", text.upper()) if w]


def _form(words: list[str]) -> str:
    return "pcie" if "PCIE" in words else "nvl" if "NVL" in words else "module"


def _identity(text: str) -> _Identity:
    words = [w for w in _words(text) if w not in _VENDOR_WORDS]
    chip = next((w for w in words if _CHIP.match(w)), None)
    memory = _MEMORY.search(text.upper())
    other = tuple(w for w in words if not (_CHIP.match(w) or _PLAIN_WORD.match(w)))
    return _Identity(chip, _form(words), int(memory.group(1)) if memory else None, other)


def _normalized(text: str) -> str:
    return " ".join(w for w in _words(text) if w not in _VENDOR_WORDS)


def _id_identity(device_id: str) -> _Identity:
    """A device's identity from its id: the chip first, ``PCIe`` or ``NVL`` in the id, the memory where the id
    gives it (a name such as GH200's counts the CPU's memory too, which the GPU reports as ``"GH200 480GB"``)."""
    words = _words(device_id)
    return _Identity(words[0], _form(words), _identity(device_id).memory_GB)


def _same_memory(ident: _Identity, device_id: str) -> bool:
    """A name without a memory size fits any board of its chip and form; one with a size fits a device whose
    id gives the same size, or, where the id gives none, none but the names listed in KNOWN_NAMES."""
    if ident.memory_GB is None:
        return True
    return _id_identity(device_id).memory_GB == ident.memory_GB


def _same_board(ident: _Identity, device_id: str) -> bool:
    """The board form and memory of the device, and no word in the name that says another variant."""
    return not ident.other_words and _id_identity(device_id).form == ident.form and _same_memory(ident, device_id)


def arch_of(reported: str) -> str | None:
    """The AMD architecture (``"gfx942"``) a reported string names and nothing else, without its features;
    None for any other name."""
    found = _ARCH_NAME.match(reported.strip()) if isinstance(reported, str) else None
    return found.group(1).lower() if found else None


def arch_refusal(arch: str, reported: str | None = None) -> InputError:
    """The error for a GPU known only by its architecture: the boards that share it and the shipped devices
    of it, with how to name one."""
    boards = ARCH_BOARDS.get(arch, ())
    shipped = [d.id for d in (device(i) for i in device_ids()) if str(d.compute_capability).lower() == arch]
    said = f"reports the name {reported!r} and the architecture" if reported else "reports only its architecture"
    share = (f"{arch} is the architecture of the {', '.join(boards)} (ROCm's hardware table), which differ in "
             "CUs, clocks and memory" if boards else f"no shipped device is of the architecture {arch}")
    hint = (f"shipped devices of {arch}: {', '.join(shipped)}; pass the one your GPU is (device={shipped[0]!r})"
            if shipped else "pass a device TOML file describing it (docs/device-format.md)")
    return InputError(f"the GPU {said} {arch!r}: {share}; {hint}.")


def device_for_gpu_name(reported: str, example: str = "H100-SXM5-80GB") -> Device:
    """The shipped device a GPU's reported name denotes; an :class:`InputError` naming the closest
    devices and how to pass one (with overrides) when none or several match. An AMD architecture name
    (``gfx942``) is refused naming the boards that share it. ``example``: the device id an error shows as the
    one to pass where the name gives none (a HIP kernel's caller shows an AMD one)."""
    if not isinstance(reported, str) or not reported.strip():
        raise InputError(f"the GPU reported no usable name ({reported!r}); pass the device explicitly, e.g. "
                         f"device='{example}' (shipped: {', '.join(device_ids())}).")
    arch = arch_of(reported)
    if arch is not None:
        raise arch_refusal(arch)
    if "MIG" in _words(reported):
        raise InputError(f"the GPU {reported!r} is a MIG slice of a GPU (a share of its SMs, L2 and memory "
                         "bandwidth); no shipped device describes a slice: pass one with the slice's numbers "
                         "(device=warpspeed.device('ID', sm_count=..., l2_size='...', dram_bw='...')).")
    want = _normalized(reported)
    ids = device_ids()
    known = [i for i in ids if want in (_normalized(n) for n in KNOWN_NAMES.get(i, ()))]
    if known:  # the names GPUs report, listed per id
        return device(known[0])
    # by the id alone first (chip, form, memory: every shipped device's own name resolves so, a test checks),
    # so that the device files are read only where that fails (13 of them: 80 ms at a first launch)
    ident = _identity(reported)
    same_chip_ids = [i for i in ids if ident.chip is not None and _id_identity(i).chip == ident.chip]
    by_ids = [i for i in same_chip_ids if _same_board(ident, i)]
    exact_ids = [i for i in ids if want == _normalized(i)]
    if len(exact_ids) == 1 or (not exact_ids and len(by_ids) == 1):
        return device((exact_ids or by_ids)[0])
    devices = [device(i) for i in ids]  # the names decide, or the ids matched none or several
    exact = [d for d in devices if want in (_normalized(d.id), _normalized(d.name))]
    if len(exact) == 1:
        return exact[0]
    if len(by_ids) == 1:  # only where two ids read alike (exact_ids above): the chip, form and memory decide
        return device(by_ids[0])
    if len(by_ids) > 1:
        raise InputError(f"the GPU {reported!r} could be any of {', '.join(by_ids)}; pass the device explicitly "
                         "(device='ID').")
    same_chip = [d for d in devices if d.id in same_chip_ids]
    same_chip.sort(key=lambda d: (_id_identity(d.id).form != ident.form,
                                  _id_identity(d.id).memory_GB != ident.memory_GB))
    closest = same_chip or _closest_by_name(reported, devices)
    hint = (f"closest shipped: {', '.join(d.id for d in closest)}. " if closest else
            f"shipped devices: {', '.join(device_ids())}. ")
    base = closest[0].id if closest else "H100-SXM5-80GB"
    raise InputError(f"no shipped device describes the GPU {reported!r}; {hint}Estimate it as a described one "
                     f"with your GPU's numbers where they differ: device=warpspeed.device({base!r}, "
                     f"sm_count=..., dram_bw='...TB/s', l2_size='...MiB') (CLI: --device {base} --set "
                     "KEY=VALUE; `warpspeed devices show ID` lists the keys), or pass the path of a device TOML "
                     "file (docs/device-format.md).")


def _closest_by_name(reported: str, devices: list[Device]) -> list[Device]:
    import difflib

    by_name = {_normalized(d.id): d for d in devices}
    near = difflib.get_close_matches(_normalized(reported), list(by_name), n=3, cutoff=0.4)
    return [by_name[n] for n in near]  # the closest first


def _named_device(name: str, arch_name: object, example: str) -> Device:
    """The device of a reported name, checked against the architecture ROCm reports beside it (cupy's
    ``gcnArchName`` on ROCm): a name no device matches, with an architecture, is refused naming the boards of
    that architecture; a name whose device is of another architecture is refused."""
    if isinstance(arch_name, bytes):
        arch_name = arch_name.decode(errors="replace")
    arch = arch_of(arch_name) if isinstance(arch_name, str) else None
    if arch is None:
        return device_for_gpu_name(name, example)
    try:
        dev = device_for_gpu_name(name)
    except InputError:
        raise arch_refusal(arch, None if arch_of(name) else name) from None
    if str(dev.compute_capability).lower() != arch:
        raise InputError(f"the GPU reports the name {name!r}, which is the shipped {dev.id}, but the architecture "
                         f"{arch!r}, and {dev.id} is {dev.compute_capability}: the name and the architecture "
                         "disagree; pass the device explicitly (device='ID').")
    return dev


def detected_device(gpu_index: int | None = None, example: str = "H100-SXM5-80GB") -> Device:
    """The shipped device of a GPU that cupy sees (``gpu_index``: CUDA device number, default the current); on
    ROCm the architecture cupy reports (``gcnArchName``) must agree with the device. ``example``: the device id
    its errors show as the one to pass instead."""
    try:
        import cupy
    except ImportError:
        raise InputError("device='auto' reads the GPU's name through cupy, which is not installed; install cupy "
                         f"on a machine with a GPU, or name the device (device='{example}').") from None
    try:
        index = cupy.cuda.runtime.getDevice() if gpu_index is None else gpu_index
        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props["name"]
    except Exception as e:  # no driver, no GPU: cupy's own error types differ by version
        raise InputError(f"device='auto': cupy could not read the GPU's name ({type(e).__name__}: {e}); name "
                         f"the device instead (device='{example}').") from None
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    dev = _named_device(str(name), props.get("gcnArchName") if isinstance(props, dict) else None, example)
    sms = props.get("multiProcessorCount") if isinstance(props, dict) else None
    if isinstance(sms, int) and sms != dev.sm_count:
        raise InputError(f"the GPU {name!r} reports {sms} SMs, the shipped {dev.id} has {dev.sm_count}: another "
                         f"board or a partition of one; pass a device with its numbers (device=warpspeed.device("
                         f"{dev.id!r}, sm_count={sms}, ...)).")
    return dev
