#!/usr/bin/env bash
# Strong and weak scaling of `talus run` over MPI ranks, CPU backend (docs/scaling.md, section 4):
# the dense settle box of benches/peers.sh (100,000 particles from the settled packing, 2000
# steps) on 1 rank x 1 thread and on 2 ranks x 1 thread (strong), and half of it (50,000
# particles: the settled 10k tile repeated 1 x 5 instead of 2 x 5, half the box along x) on
# 1 rank x 1 thread against the whole on 2 ranks (weak: the same particles per rank). The runs
# take turns over REPS repetitions (default 3) and each configuration's best is reported, since
# this 2-core machine's speed moves between minutes.
#
#   bash benches/scaling.sh [WORKDIR]
#
# Needs the `mpi` build (tests/mpi.sh says what to install) and, for the packings, LIGGGHTS and
# LAMMPS (apt-get install -y liggghts lammps openmpi-bin), as benches/peers.sh's dense100k.
# Throughput is summary.json's particle_steps_per_second. Each run's energy.csv is checked
# against the 1-rank run of the same scene (bit identity, docs/mpi.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(realpath -m "${1:-bench_runs/scaling}")
PEERS=$(realpath -m "${PEERS:-$ROOT/../shared/peers}")
REPS=${REPS:-3}
mkdir -p "$WORK"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
cargo build --release --features mpi --quiet
TALUS=$ROOT/target/release/talus

SCENES_ONLY=1 CASES=dense100k bash benches/peers.sh "$WORK" > /dev/null
if [ ! -f "$WORK/settled_N50000.data" ]; then
  (cd "$WORK" && lmp -in "$PEERS/settle/in.tile.lammps" -var in settled_N10000.data -var tx 1 -var ty 5 -var out settled_N50000.data -log none > tile50k.log)
fi
python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
d = json.load(open(f"{work}/dense100k.json"))
d["description"] = "half the dense settle box: the settled 10k tile repeated 1 x 5 (benches/scaling.sh)"
d["initial_state"]["file"] = f"{work}/settled_N50000.data"
d["walls"][0]["max"][0] /= 2
json.dump(d, open(f"{work}/dense50k.json", "w"), indent=1)
EOF

# run SCENE RANKS REP: particle-steps/s of one run (0 when it failed)
run() {
  local scene=$1 ranks=$2 rep=$3 out="$WORK/$1.np$2.$3" launch=(env RAYON_NUM_THREADS=1)
  [ "$ranks" -gt 1 ] && launch=(mpirun --oversubscribe --bind-to none -np "$ranks" -x RAYON_NUM_THREADS=1)
  rm -rf "$out"
  if "${launch[@]}" "$TALUS" run "$WORK/$scene.json" --backend cpu --out "$out" --no-progress > "$out.log" 2>&1; then
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['particle_steps_per_second'])" "$out/summary.json"
  else
    echo "scaling.sh: $scene on $ranks rank(s) failed, see $out.log" >&2; echo 0
  fi
}
best() { python3 -c "import sys; print(max(float(x) for x in sys.argv[1:]))" "$@"; }

s1=(); s2=(); w1=()
for rep in $(seq 1 "$REPS"); do
  echo "scaling.sh: turn $rep of $REPS" >&2
  s1+=("$(run dense100k 1 "$rep")")
  s2+=("$(run dense100k 2 "$rep")")
  w1+=("$(run dense50k 1 "$rep")")
  cmp -s "$WORK/dense100k.np1.$rep/energy.csv" "$WORK/dense100k.np2.$rep/energy.csv" || { echo "scaling.sh: the 2-rank energy.csv differs from the 1-rank one (turn $rep)" >&2; exit 1; }
done
S1=$(best "${s1[@]}"); S2=$(best "${s2[@]}"); W1=$(best "${w1[@]}")
python3 - "$S1" "$S2" "$W1" <<'EOF'
import sys
s1, s2, w1 = map(float, sys.argv[1:])
print("| scaling | run | 1 rank | 2 ranks | speed-up | efficiency |")
print("|---|---|---|---|---|---|")
print(f"| strong | dense 100k on 1 and 2 ranks x 1 thread | {s1:.3e} | {s2:.3e} | {s2 / s1:.2f} | {s2 / s1 / 2:.2f} |")
print(f"| weak | dense 50k on 1 rank, 100k on 2 ranks (50k a rank) | {w1:.3e} | {s2:.3e} | {s2 / w1:.2f} | {s2 / w1 / 2:.2f} |")
EOF
echo "load: $(uptime)"
