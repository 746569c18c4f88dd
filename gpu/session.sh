#!/usr/bin/env bash
# One stage of issue 6's GPU measurement plan, run on the device machine through the device tool:
#     run(command="bash gpu/session.sh check", carry=[".whl"])      (then star, then lbm)
# Stages (each well inside the tool's 10-minute limit; CSVs and logs go to $OUT and come back):
#   check  small sweeps of star3d-r4 (warpspeed code, folded) and d3q19-srt (pystencils code) with ncu
#   star   the 168 configurations of star3d-r4 at 640x512x512 (3 foldings x 56 blocks of 1024 threads),
#          one measure call per folding (a killed call loses only its own rows); ncu every NCU_EVERY-th
#   lbm    d3q19-srt and d3q15-allen-cahn (pystencils code) over the 49 blocks of 512 threads, with ncu;
#          then d3q19-srt with warpspeed's code (timing only) to compare the replica with the real kernel
# validate and calibrate need no GPU: run them here afterwards (gpu/README.md).
set -uo pipefail
stage=${1:?usage: bash gpu/session.sh check|star|lbm}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYSTENCILS_CACHE_DIR=/tmp/ws-pystencils-cache WARPSPEED_CACHE_DIR=/tmp/ws-cache
exec > >(tee -a "$OUT/$stage.log") 2>&1

# offline install into $SITE: the carried wheels (unless islpy, pystencils and lbmpy import already), then
# this checkout (every call: it may have changed)
SITE=${SITE:-/tmp/site}
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
if ! python3 -c "import islpy, pystencils, lbmpy" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
    || { echo "wheels missing: run gpu/fetch-wheels.sh here and carry .whl"; exit 1; }
fi
bash gpu/install-checkout.sh "$SITE" || exit 1
ws() { local t0=$SECONDS; echo "+ warpspeed $*"; python3 -m warpspeed "$@"; echo "  ($((SECONDS - t0)) s)"; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
case "$gpu" in
  *H200*) dev=H200-SXM-141GB ;;
  *H100*PCIe*) dev=H100-PCIe-80GB ;;
  *H100*) dev=H100-SXM5-80GB ;;
  *A100*80GB*) dev=A100-SXM4-80GB ;;
  *A100*) dev=A100-SXM4-40GB ;;
  *) dev=${WS_DEVICE:?"unknown GPU '$gpu': set WS_DEVICE to a warpspeed device id"} ;;
esac
dev=${WS_DEVICE:-$dev}
tag=${dev%%-*}
echo "GPU: $gpu -> device $dev; $(nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem --format=csv,noheader)"

case "$stage" in
  check)
    python3 -c "import sys, cupy, islpy, pystencils, lbmpy; print(sys.version.split()[0], 'cupy', cupy.__version__, \
'pystencils', pystencils.__version__, 'lbmpy', lbmpy.__version__)"
    ncu --version | tail -1
    ws measure star3d-r4 --device "$dev" --domain 256,128,64 --block 32,4,2 --block 128,2,2 --folding 1,1,1 \
      --folding 1,2,1 --repeats 5 --ncu -o "$OUT/check-$tag.csv"
    ws measure d3q19-srt --device "$dev" --domain 64,64,64 --block 64,4,2 --block 32,16,1 --repeats 5 --ncu \
      -o "$OUT/check-$tag.csv"
    cat "$OUT/check-$tag.csv"
    ws validate "$OUT/check-$tag.csv"
    ;;
  star)
    for f in 1,1,1 1,2,1 1,1,2; do
      ws measure star3d-r4 --device "$dev" --folding "$f" --ncu --ncu-every "${NCU_EVERY:-1}" \
        -o "$OUT/star3d-r4-$tag.csv"
    done
    ws validate "$OUT/star3d-r4-$tag.csv"
    ;;
  lbm)
    for k in d3q19-srt d3q15-allen-cahn; do
      ws measure "$k" --device "$dev" --threads 512 --ncu --ncu-every "${NCU_EVERY:-1}" -o "$OUT/$k-$tag.csv"
      ws validate "$OUT/$k-$tag.csv"
    done
    ws measure d3q19-srt --device "$dev" --threads 512 --code warpspeed -o "$OUT/d3q19-srt-warpspeed-code-$tag.csv"
    ;;
  *) echo "unknown stage $stage: check, star or lbm"; exit 2 ;;
esac
