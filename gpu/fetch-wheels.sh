#!/usr/bin/env bash
# Download (here, where PyPI is reachable) the wheels that the device machine lacks, for its Python 3.12,
# into .whl/ (ignored by git through .git/info/exclude). Its image already has numpy, sympy, scipy,
# matplotlib, joblib, pyyaml, packaging and cupy. About 3 MB; the device tool carries it with carry=[".whl"].
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl \
  "islpy==$(python3 -c 'import importlib.metadata as m; print(m.version("islpy"))')" \
  pystencils==2.0 lbmpy==2.0 appdirs fasteners
ls -la .whl
