#!/usr/bin/env bash
# Here, before a call on a lent GPU (issue 34): pack what the device machine lacks into .device/
# (ignored by git; `run`'s carry takes it with the working tree):
#   - the stripped talus binary, gzipped (and TALUS_OLD's, for a before/after column): the
#     device image has no Rust toolchain;
#   - the Vulkan loader, libvulkan.so.1, and the glvnd dispatch libraries NVIDIA's Vulkan driver
#     links against: the image has NVIDIA's ICD but no loader, so without them wgpu finds no
#     adapter (the first H200 call, docs/performance.md "The same card").
# Then, on the device, `bash benches/device_gpu.sh` (it names the call to make).
#
#   bash benches/device_pack.sh            # cargo build --release, then pack
#   TALUS=path/to/talus TALUS_OLD=path/to/old bash benches/device_pack.sh
#   OLD_REV=1ec2764 DEME=1 bash benches/device_pack.sh
#
# OLD_REV builds that revision in a temporary worktree (into target/old-REV, kept for the next
# pack) as the binary before, where TALUS_OLD is not given. DEME=1 builds the DEME bundle into
# .deme_peer first where it is not there yet (../shared/peers/deme/README.md, about 2.5 min;
# pip downloads six wheels). Both directories are in .gitignore. DEVICE_DIR packs elsewhere
# than .device (tests/cli.rs::device_scripts_run_end_to_end_on_lavapipe).
#
# The limit is 64 MiB for everything that travels: the working tree (about 10 MB), the DEME
# bundle (.deme_peer, about 38 MiB, ../shared/peers/deme/README.md) and .device (about 1.5 MiB
# of libraries and 4 MiB a gzipped binary) fit together.
set -euo pipefail
cd "$(dirname "$0")/.."
D=${DEVICE_DIR:-.device}
if [ "${DEME:-0}" = 1 ] && [ ! -f .deme_peer/deme_site.tar.xz ]; then
  mkdir -p .deme_peer
  cp ../shared/peers/deme/{run_on_device.sh,preflight.py,settle_deme.py} .deme_peer/
  bash ../shared/peers/deme/build_bundle.sh "$PWD/.deme_peer"
fi
if [ -z "${TALUS_OLD:-}" ] && [ -n "${OLD_REV:-}" ]; then
  rev=$(git rev-parse --short "$OLD_REV")
  if [ ! -x "target/old-$rev/release/talus" ]; then
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt/tree" "$rev"
    CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_TARGET_DIR="$PWD/target/old-$rev" cargo build --release --quiet --manifest-path "$wt/tree/Cargo.toml"
    git worktree remove --force "$wt/tree"
  fi
  TALUS_OLD="target/old-$rev/release/talus"
fi
rm -rf "$D"; mkdir -p "$D/lib"
if [ -z "${TALUS:-}" ]; then
  CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --release --quiet
  TALUS=target/release/talus
fi
# stripped and gzipped (about 4 MiB each: two binaries fit beside the DEME bundle);
# device_gpu.sh unpacks them
strip -o "$D/talus" "$TALUS" && gzip -9 "$D/talus"
if [ -n "${TALUS_OLD:-}" ]; then strip -o "$D/talus_old" "$TALUS_OLD" && gzip -9 "$D/talus_old"; fi
{ git rev-parse HEAD; [ -n "${TALUS_OLD:-}" ] && echo "before: ${OLD_REV:-$TALUS_OLD}"; } > "$D/commit" 2>/dev/null || true
libdir=$(dirname "$(ldconfig -p | awk '/libvulkan\.so\.1 / {print $NF; exit}')")
for l in libvulkan.so.1 libGLdispatch.so.0 libGLX.so.0 libEGL.so.1; do
  if [ -e "$libdir/$l" ]; then cp -L "$libdir/$l" "$D/lib/"; else echo "device_pack.sh: $l not in $libdir (apt-get install -y libvulkan1 libglvnd0)" >&2; fi
done
[ -e "$D/lib/libvulkan.so.1" ] || { echo "device_pack.sh: no Vulkan loader to carry: apt-get install -y libvulkan1" >&2; exit 2; }
tree=$(git ls-files -z | xargs -0 du -cb 2> /dev/null | tail -n 1 | cut -f1)
total=$(( tree + $(du -sbc "$D" $( [ -d .deme_peer ] && echo .deme_peer ) | tail -n 1 | cut -f1) ))
echo "device_pack.sh: $D ($(du -sh "$D" | cut -f1)): $(ls "$D" "$D/lib" | tr '\n' ' ')"
echo "device_pack.sh: with the working tree$( [ -d .deme_peer ] && echo ' and .deme_peer'), $((total / 1048576)) MiB of the 64 MiB that travel"
[ "$total" -le $((64 * 1048576)) ] || { echo "device_pack.sh: over the 64 MiB carry: leave TALUS_OLD out, or DEME" >&2; exit 2; }
