#!/usr/bin/env bash
# Load-independent work counts of the settle box, Talus CPU against LIGGGHTS, one thread/rank
# each, under valgrind's cachegrind: instructions, L1 data misses, misses of a 1 MiB last-level
# cache (about one core's L2) and mispredicted branches, per particle-step of the timed steps
# (a run of the same scene with 0 steps is subtracted, so reading and set-up do not count).
#
#   bash benches/instructions.sh [WORKDIR]
#
# Wall-clock ratios (benches/peers.sh) need a quiet machine; these counts do not, and they show
# where a gap comes from: more work (instructions), memory (misses) or stalls (mispredictions;
# long-latency divisions and square roots are not counted here). Cases (CASES, default
# "fall10k dense10k"): fall10k runs 100 steps from the lattice, dense10k 20 steps from the
# settled 10k packing, each also with "energy_tracking": false. Needs valgrind (apt-get install -y valgrind); LIGGGHTS is optional.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(realpath -m "${1:-bench_runs/peers}")
PEERS=$(realpath -m "${PEERS:-$ROOT/../shared/peers}")
CASES=${CASES:-"fall10k dense10k"}
command -v valgrind > /dev/null || { echo "instructions.sh: needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "${XDG_RUNTIME_DIR}" ] || { XDG_RUNTIME_DIR=$(mktemp -d); export XDG_RUNTIME_DIR; }

# the scenes (and, with LIGGGHTS and LAMMPS installed, the settled packings) of peers.sh
SCENES_ONLY=1 CASES="$CASES" bash benches/peers.sh "$WORK"
TALUS=$ROOT/target/release/talus
HAVE_LIGGGHTS=0; command -v liggghts > /dev/null && [ -f "$PEERS/settle/in.settle.liggghts" ] && HAVE_LIGGGHTS=1

# counts CMD...: "instructions d1_misses ll_misses mispredicts" of one run under cachegrind
counts() {
  valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --LL=1048576,16,64 --cachegrind-out-file=/dev/null "$@" 2>&1 > /dev/null |
    sed 's/==[0-9]*== //' | awk '
      /^I +refs:/ { gsub(",", "", $3); i = $3 }
      /^D1 +misses:/ { gsub(",", "", $3); d = $3 }
      /^LLd misses:/ { gsub(",", "", $3); l = $3 }
      /^Mispredicts:/ { gsub(",", "", $2); b = $2 }
      END { print i, d, l, b }'
}

# per_step N STEPS "counts of STEPS" "counts of 0 steps": the difference per particle-step
per_step() {
  python3 -c "
import sys
n, steps = int(sys.argv[1]), int(sys.argv[2])
a, b = [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
print(' '.join(f'{(x - y) / (n * steps):.1f}' for x, y in zip(a, b)))" "$@"
}

echo "| case | code | instructions | L1d misses | 1 MiB LL misses | mispredicted branches |"
echo "|---|---|---|---|---|---|"
for case in $CASES; do
  case $case in
    fall10k) dims=(25 25 16); steps=100; n=10000; lig=(-in "$PEERS/settle/in.settle.liggghts") ;;
    dense10k) dims=(25 25 16); steps=20; n=10000; lig=(-in "$PEERS/settle/in.dense.liggghts" -var data "$WORK/settled_N10000.data") ;;
    *) echo "instructions.sh: unknown case $case" >&2; exit 2 ;;
  esac
  export RAYON_NUM_THREADS=1
  talus_args() { echo bench --scene "$WORK/$case.json" --from 0 --steps "$1" --warmup 0 --backend cpu; }
  # shellcheck disable=SC2046
  read -r a b c d < <(per_step "$n" "$steps" "$(counts "$TALUS" $(talus_args "$steps"))" "$(counts "$TALUS" $(talus_args 0))")
  echo "| $case | Talus cpu, 1 thread | $a | $b | $c | $d |"
  # the same scene with "energy_tracking": false (peers.sh writes it beside the tracked one)
  talus_args() { echo bench --scene "$WORK/${case}_untracked.json" --from 0 --steps "$1" --warmup 0 --backend cpu; }
  # shellcheck disable=SC2046
  read -r a b c d < <(per_step "$n" "$steps" "$(counts "$TALUS" $(talus_args "$steps"))" "$(counts "$TALUS" $(talus_args 0))")
  echo "| $case | Talus cpu untracked, 1 thread | $a | $b | $c | $d |"
  if [ "$HAVE_LIGGGHTS" = 1 ]; then
    lig_args=("${lig[@]}" -var nx "${dims[0]}" -var ny "${dims[1]}" -var nz "${dims[2]}" -log none)
    read -r a b c d < <(cd "$WORK" && per_step "$n" "$steps" "$(counts liggghts "${lig_args[@]}" -var nrun "$steps")" "$(counts liggghts "${lig_args[@]}" -var nrun 0)")
    echo "| $case | LIGGGHTS, 1 rank | $a | $b | $c | $d |"
  fi
done
