#!/usr/bin/env bash
# One stage of issue 6's GPU measurement plan, run on the device machine through the device tool:
#     run(command="bash gpu/session.sh check", carry=[".whl"])      (then star, then lbm)
# Stages (each well inside the tool's 10-minute limit; CSVs and logs go to $OUT and come back):
#   check  small sweeps of star3d-r4 (warpspeed code, folded) and d3q19-srt (pystencils code) with ncu
#   star   the 168 configurations of star3d-r4 at 640x512x512 (3 foldings x 56 blocks of 1024 threads),
#          one measure call per folding (a killed call loses only its own rows); ncu every NCU_EVERY-th
#   lbm    d3q19-srt and d3q15-allen-cahn (pystencils code) over the 49 blocks of 512 threads, with ncu;
#          then d3q19-srt with warpspeed's code (timing only) to compare the replica with the real kernel
#   aos    issue 29: d3q19-srt:layout=zyxf over the 49 blocks of 512 threads with ncu and the extra counters
#          that tell what caps it (L2 requests and misses by read and write, L1 fills and write-backs through
#          the crossbar, DRAM sectors, the warps' stall reasons), into aos-extra-<GPU>.csv
#   layers issue 28: star3d-r4 blocks the model and the GPU order differently on the H200 (wide and flat
#          against narrow and deep, folded in y or z), with the L2's hits, misses and fabric sectors
#   launch issue 48 (2): the pystencils plugin's launch-time block choice on cupy arrays (a 7-point stencil,
#          D3Q19 fzyx, D3Q19 declared in pystencils' default layout, D3Q27; two shapes each): every call's
#          time and block, the choice, then every block of 128-1024 threads timed (gpu/plugin_on_gpu.py)
#   variants issue 48 (3): D3Q19 in the streaming patterns and layouts compare_variants generates, every
#          kernel in every block of 128-1024 threads, with the predicted factors (gpu/plugin_on_gpu.py)
#   diagonal issue 46: the counters that tell what the committed volumes cannot: L1 hits, misses and fills
#          of box3d-r1 blocks 1-4 wide (one O, misses 2.2x apart) and of D3Q19 blocks 1 wide at 1, 2 and 5
#          blocks per SM, the L2's hits, misses and fabric sectors of star3d-r4 blocks 2 planes deep, 1-128 wide
# validate and calibrate need no GPU: run them here afterwards (gpu/README.md).
set -uo pipefail
stage=${1:?usage: bash gpu/session.sh check|star|lbm|aos|layers|launch|variants|diagonal}
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
# the metrics of a comma-separated list that this GPU's ncu collects (ncu refuses a whole run for one name it
# does not know), probed on a tiny star3d-r4 run: first without them (if that fails, the cause is not a
# metric: its error is shown and no metric is kept), then all at once, else one by one; prints the usable list
usable_metrics() {
  local probe=/tmp/ws-probe.csv kept=() m
  _probe() { rm -f "$probe" "$probe.extra"; python3 -m warpspeed measure star3d-r4 --device "$dev" \
    --domain 64,32,32 --block 32,4,2 --repeats 1 --warmup 0 --ncu \
    ${1:+--ncu-metrics "$1" --ncu-output "$probe.extra"} -o "$probe" > /tmp/ws-probe.log 2>&1; }
  if ! _probe ""; then
    echo "  the probe fails without extra metrics too (no extra metric kept):" >&2
    tail -5 /tmp/ws-probe.log >&2
    return
  fi
  if _probe "$1"; then echo "$1"; return; fi
  for m in ${1//,/ }; do
    if _probe "$m"; then kept+=("$m"); else echo "  ncu does not collect $m here: left out" >&2; fi
  done
  local IFS=,; echo "${kept[*]}"
}

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
  aos)
    metrics=$(usable_metrics "lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,\
l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__m_l1tex2xbar_write_sectors.sum,dram__sectors_read.sum,\
dram__sectors_write.sum,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,\
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_drain_per_warp_active.pct,\
smsp__warps_active.avg.pct_of_peak_sustained_active")
    echo "extra metrics: ${metrics:-none}"
    ws measure d3q19-srt:layout=zyxf --device "$dev" --threads 512 --ncu --ncu-every "${NCU_EVERY:-1}" \
      ${metrics:+--ncu-metrics "$metrics" --ncu-output "$OUT/aos-extra-$tag.csv"} -o "$OUT/aos-lbm-$tag.csv"
    ws validate "$OUT/aos-lbm-$tag.csv"
    ;;
  layers)
    metrics=$(usable_metrics "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric.sum,\
lts__t_requests_srcunit_tex_op_read.sum")
    echo "extra metrics: ${metrics:-none}"
    # the measured best of the H200 sweep (wide, flat) and the predicted best (narrow, deep), both foldings
    ws measure star3d-r4 --device "$dev" --folding 1,1,2 --block 128,8,1 64,16,1 256,4,1 32,2,16 64,2,8 32,4,8 \
      --ncu ${metrics:+--ncu-metrics "$metrics" --ncu-output "$OUT/layers-extra-$tag.csv"} -o "$OUT/layers-$tag.csv"
    ws measure star3d-r4 --device "$dev" --folding 1,2,1 --block 128,4,2 64,8,2 32,16,2 32,1,32 64,1,16 32,2,16 \
      --ncu ${metrics:+--ncu-metrics "$metrics" --ncu-output "$OUT/layers-extra-$tag.csv"} -o "$OUT/layers-$tag.csv"
    ws validate "$OUT/layers-$tag.csv"
    ;;
  launch)
    # a cache of its own: a rerun on a warm machine must rank at the first call again, not read the choice back
    WARPSPEED_CACHE_DIR=$(mktemp -d) python3 gpu/plugin_on_gpu.py launch --out "$OUT" --tag "$tag" \
      ${WS_SIZE:+--size "$WS_SIZE"}
    rc=$?
    python3 gpu/plugin_on_gpu.py report --out "$OUT" --tag "$tag"
    exit $rc
    ;;
  variants)
    python3 gpu/plugin_on_gpu.py variants --out "$OUT" --tag "$tag" --device "$dev" --repeats 2 --launches 3 \
      ${WS_SIZE:+--size "$WS_SIZE"}
    rc=$?
    python3 gpu/plugin_on_gpu.py report --out "$OUT" --tag "$tag"
    exit $rc
    ;;
  diagonal)
    metrics=$(usable_metrics "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,\
lts__t_sectors_srcunit_ltcfabric.sum")
    echo "extra metrics: ${metrics:-none}"
    extra=(${metrics:+--ncu-metrics "$metrics" --ncu-output "$OUT/diagonal-extra-$tag.csv"})
    # box3d-r1 blocks 1-4 wide: 1x4x64 and 1x64x4 allocate the same lines and load 2.2x apart from the L2
    ws measure box3d-r1 --device "$dev" --domain "${WS_BOX_DOMAIN:-512,512,512}" --block 1,8,32 1,32,8 1,4,64 \
      1,64,4 1,256,1 2,8,16 2,128,1 4,64,1 32,4,2 --ncu ${extra[@]+"${extra[@]}"} -o "$OUT/diagonal-$tag.csv"
    # D3Q19 blocks 1 wide with 512, 256 and 128 threads (1, 2 and 5 blocks per SM at 92 registers)
    ws measure d3q19-srt --device "$dev" --domain "${WS_LBM_DOMAIN:-256,256,256}" --block 1,8,64 1,8,32 1,8,16 \
      32,4,4 --ncu ${extra[@]+"${extra[@]}"} -o "$OUT/diagonal-$tag.csv"
    # star3d-r4 blocks 2 planes deep from 1 to 128 wide (and 4 deep), 256 threads
    ws measure star3d-r4 --device "$dev" ${WS_STAR_DOMAIN:+--domain "$WS_STAR_DOMAIN"} --block 1,128,2 2,64,2 \
      8,16,2 16,16,2 64,4,2 128,2,2 1,64,4 64,4,4 --ncu ${extra[@]+"${extra[@]}"} -o "$OUT/diagonal-$tag.csv"
    ws validate "$OUT/diagonal-$tag.csv"
    ;;
  *) echo "unknown stage $stage: check, star, lbm, aos, layers, launch, variants or diagonal"; exit 2 ;;
esac
