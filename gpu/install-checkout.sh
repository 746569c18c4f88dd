#!/usr/bin/env bash
# Copy this checkout into SITE (a folder on PYTHONPATH) as setuptools would install it, with the entry point
# of the pystencils plugin: no build backend, no network (the device machine has neither wheel nor PyPI).
# Mirrors pyproject.toml's packages and package-dir; tests/measurement/test_gpu_kit.py checks the result.
set -euo pipefail
site=${1:?usage: gpu/install-checkout.sh SITE}
cd "$(dirname "$0")/.."
mkdir -p "$site"
rm -rf "$site/warpspeed" "$site/warpspeed_pystencils" "$site/warpspeed_checkout-0.dist-info"
cp -r warpspeed "$site/warpspeed"
cp -r kernels "$site/warpspeed/_catalog"
cp -r plugins/warpspeed_pystencils "$site/warpspeed_pystencils"
mkdir "$site/warpspeed_checkout-0.dist-info"
printf 'Metadata-Version: 2.1\nName: warpspeed-checkout\nVersion: 0\n' > "$site/warpspeed_checkout-0.dist-info/METADATA"
printf '[warpspeed.plugins]\npystencils = warpspeed_pystencils\n' > "$site/warpspeed_checkout-0.dist-info/entry_points.txt"
