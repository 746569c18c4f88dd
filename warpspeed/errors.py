"""The one exception the public API raises on bad input, reading a user's text file with it, and the checks
of the paths a command reads and writes (made before any work, so a typo never costs a ranking)."""

import os
import re
from pathlib import Path


def install_hint(extra: str) -> str:
    """How to install an optional extra of this project (never ``pip install warpspeed``: that name on the
    package index belongs to an unrelated project). The extra is written in its normalized form (lower case,
    ``-`` between words): pip before 23.3 matches extras by their exact text, and the package's metadata
    spells them normalized, so ``kernel_tuner`` would install nothing there."""
    extra = re.sub(r"[-_.]+", "-", extra).lower()
    return (f"install warpspeed's '{extra}' extra from your warpspeed checkout: pip install -e '.[{extra}]' "
            f"(the 'warpspeed' on the package index is a different project)")


class InputError(ValueError):
    """Bad user input: a kernel file, expression, device, configuration or override.

    The message is complete and user-facing (the CLI prints it as is): it names the file, field,
    access, key or value at fault and says what would be valid.
    """


def read_text(path: Path, what: str, expected: str) -> str:
    """A user's UTF-8 text file (a leading BOM dropped). An unreadable file or one that is not UTF-8 is an
    InputError naming ``what`` it should be, or the line (as an editor counts lines) of the first bad byte and
    ``expected`` (what the file should be)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {what} {str(path)!r}: {e.strerror or e}.") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1
        raise InputError(f"{path}, line {line}: not UTF-8 text (byte {e.start} is {raw[e.start:e.start + 1]!r}); "
                         f"{expected}.") from None


def check_input_file(path: str | Path, option: str) -> None:
    """Refuse, before any work, an input path that is not an existing file."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{option} {str(path)!r}: no such file.")
    if not p.is_file():
        raise InputError(f"{option} {str(path)!r} is a {'folder' if p.is_dir() else 'special file'}, not a file.")


def check_output_file(path: str | Path, option: str) -> None:
    """Refuse, before any work, an output path whose folder does not exist or cannot be written, or that is
    a folder itself."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InputError(f"{option} {str(path)!r} is a folder; give a file name in it.")
    if not folder.is_dir():
        raise InputError(f"{option} {str(path)!r}: the folder {str(folder)!r} does not exist; create it first or "
                         "give a path in an existing folder.")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise InputError(f"{option} {str(path)!r}: not writable here.")
