#!/usr/bin/env bash
# On a lent GPU (issue 34), one call: the Vulkan loader from .device/ (benches/device_pack.sh),
# NVIDIA's Vulkan ICD found, a check that wgpu sees the card, then benches/gpu_peers.sh with the
# carried binaries: Talus's cases, the layout rows, `talus info --shaders`, and DEME from
# .deme_peer when it is there. Prepared here; the call from a session is
#
#   run(carry=[".device", ".deme_peer"], timeout_s=590,
#       command="PROFILE=1 DEADLINE=400 bash benches/device_gpu.sh")
#
# Every variable of gpu_peers.sh passes through (CASES, LAYOUT_AB, W, S, DEME10, DEADLINE, …);
# the defaults below fit one call of about 8 minutes on an H100 or H200. The results land in
# $OUT/gpu_peers (table.md, shaders.txt, every run's JSON and log).
#
# ANY_ADAPTER=1 skips the check for an NVIDIA adapter (a dry run of the script on lavapipe:
# `ANY_ADAPTER=1 DEME=0 NBED=20000 W=5 S=20 CASES=bed1M bash benches/device_gpu.sh`; the test
# suite runs one, tests/cli.rs::device_scripts_run_end_to_end_on_lavapipe). DEVICE_DIR: the
# packed directory, if not .device.
set -uo pipefail
cd "$(dirname "$0")/.."
D=$(realpath -m "${DEVICE_DIR:-$PWD/.device}")
[ -f "$D/talus.gz" ] || { echo "device_gpu.sh: no $D/talus.gz: run benches/device_pack.sh here first and carry .device" >&2; exit 2; }
# the binaries travel gzipped (device_pack.sh); unpacked here, with Python's gzip where the image
# has no gzip
B=$(mktemp -d)
for b in talus talus_old; do
  [ -f "$D/$b.gz" ] || continue
  gzip -dc "$D/$b.gz" > "$B/$b" 2> /dev/null \
    || python3 -c 'import gzip, shutil, sys; shutil.copyfileobj(gzip.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$D/$b.gz" "$B/$b" \
    || { echo "device_gpu.sh: cannot unpack $D/$b.gz" >&2; exit 2; }
  chmod +x "$B/$b"
done
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
           /etc/vulkan/icd.d/nvidia_icd.json /usr/local/share/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && { export VK_DRIVER_FILES=$f; break; }
  done
  if [ -z "${VK_DRIVER_FILES:-}" ] && command -v nvidia-smi > /dev/null; then
    f=$(find / -xdev -name 'nvidia_icd*.json' 2> /dev/null | head -n 1)
    [ -n "$f" ] && export VK_DRIVER_FILES=$f
  fi
fi
echo "device_gpu.sh: $(cat "$D/commit" 2> /dev/null || echo 'commit unknown'); VK_DRIVER_FILES=${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-unset}}"
[ -n "${VK_DRIVER_FILES:-}" ] && { echo "device_gpu.sh: $VK_DRIVER_FILES:"; cat "$VK_DRIVER_FILES"; echo; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -n 2
"$B/talus" info > /tmp/device_info.txt 2>&1
head -n 12 /tmp/device_info.txt
if [ "${ANY_ADAPTER:-0}" != 1 ] && ! grep -q "NVIDIA\|H100\|H200\|A100" /tmp/device_info.txt; then
  echo "device_gpu.sh: wgpu finds no NVIDIA adapter (above): nothing measured. Check the ICD's library_path with ldd, and LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >&2
  exit 3
fi
old=(); [ -x "$B/talus_old" ] && old=(TALUS_OLD="$B/talus_old")
# a carried talus_old (device_pack.sh's TALUS_OLD) runs right after the new binary on the beds,
# where the force pass is most of the step, and on the settle box, whose drift pass moves
# two motion rows per particle where it moved three (docs/performance.md, "Two motion rows")
# (the 10M bed, the issue's target, third: before shuffled1M and clumps1M and their layout rows, so
# that DEADLINE cuts those rather than it)
env TALUS="$B/talus" "${old[@]}" OLD_CASES="${OLD_CASES:-settle1M bed1M bed10M}" \
  CASES="${CASES:-settle1M bed1M bed10M shuffled1M clumps1M drum1M wet1M jkr1M settle10M}" \
  DEME_DIR="${DEME_DIR:-$PWD/.deme_peer}" DEME10="${DEME10:-0}" \
  bash benches/gpu_peers.sh "${1:-${OUT:+$OUT/gpu_peers}}"
