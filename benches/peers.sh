#!/usr/bin/env bash
# Same-run throughput comparison of Talus with LIGGGHTS (and optionally LAMMPS) on the
# "settle box" of ../shared/peers/README.md §4: 1 mm spheres on a jittered 2.2 mm lattice,
# E = 1e7 Pa, ν = 0.3, e = 0.5, μ = 0.5, Hertz–Mindlin, dt = 5e-6 s, 5 walls, open top.
#
#   bash benches/peers.sh [WORKDIR]
#
# Cases (CASES, default "fall10k fall100k dense100k"):
#   fall10k    10,000 particles (25 x 25 x 16), 4000 steps from the lattice
#   fall100k   100,000 particles (50 x 50 x 40), 4000 steps from the lattice
#   dense10k   10,000 particles, 2000 steps from the settled 10k packing (not in the default CASES)
#   fall1M, fall10M  1,000,000 (100 x 100 x 100) and 10,000,000 (200 x 200 x 250) particles, 4000
#              steps from the lattice: GPU sizes (not in the default CASES; with SCENES_ONLY=1
#              they only write the scenes, as docs/performance.md "Real GPU" uses them)
#   dense100k  100,000 particles, 2000 steps from one settled packing that every code reads:
#              LIGGGHTS settles 10,000 particles for 30,000 steps and writes it (write_data),
#              LAMMPS tiles it 2 x 5 (in.tile.lammps); Talus reads the same file through the
#              scene key "initial_state" (format lammps_data).
# Environment: NP (MPI ranks of the peers, default 2), BACKEND (talus backend, default cpu),
# LAMMPS=1 to also run LAMMPS `granular`, REPS (repetitions, taken in turns by the codes; each
# code's best is reported; default 1),
# PEERS (default ../shared/peers beside the repository), TALUS_BEFORE (the path of another
# talus binary, e.g. one built before a change: it runs the tracked case in turn with the
# others and the table adds its column and the ratio now / before), SCENES_ONLY=1 to write the scenes and
# the settled packings into WORKDIR and stop (benches/instructions.sh uses it), TALUS_NP (MPI
# ranks of Talus, default 1; see below).
# Talus runs each case twice: as shipped (energy tracking on: every contact books its slip,
# dashpot and stiffness work) and with "energy_tracking": false (forces only, as the peers,
# which track no dissipation), the scene WORKDIR/CASE_untracked.json.
# Throughput = particles × steps / loop time (the peers' "Loop time", Talus's timed steps; set-up
# and the first neighbour build are excluded in all codes). Peak RSS: /usr/bin/time -v for the
# peers (summed over ranks), VmHWM for Talus. Install the peers with
#   apt-get install -y liggghts lammps openmpi-bin time
# Without them only the Talus columns are filled (and the dense case needs LIGGGHTS's packing).
#
# TALUS_NP > 1 (docs/mpi.md, docs/scaling.md): Talus is built with `--features mpi` (OpenMPI and
# libclang: tests/mpi.sh says what to install; the other Talus columns then come from that
# build too, started without mpirun) and each case's tracked scene also runs, in turn
# with the others, through `talus run` twice: on 1 rank with TALUS_NP rayon threads, and as
#   mpirun --oversubscribe --bind-to none -np TALUS_NP -x RAYON_NUM_THREADS=1 talus run ...
# (TALUS_NP ranks x 1 thread; BACKEND cpu only). A second table gives both (summary.json's
# particle_steps_per_second: from after set-up and the first neighbour build to the end of the
# run, the final checkpoint included), their ratio and Talus on TALUS_NP ranks / LIGGGHTS on NP
# ranks (set NP=TALUS_NP for equal cores). A run that fails shows as "-" (its log is
# WORKDIR/CASE.np1.REP.log or CASE.npTALUS_NP.REP.log).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(realpath -m "${1:-bench_runs/peers}")
PEERS=$(realpath -m "${PEERS:-$ROOT/../shared/peers}")
NP=${NP:-2}
BACKEND=${BACKEND:-cpu}
REPS=${REPS:-1}
CASES=${CASES:-"fall10k fall100k dense100k"}
TALUS_NP=${TALUS_NP:-1}
case $TALUS_NP in ''|*[!0-9]*|0) echo "peers.sh: TALUS_NP must be a rank count ≥ 1, got '$TALUS_NP'" >&2; exit 2 ;; esac
mkdir -p "$WORK"
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "${XDG_RUNTIME_DIR}" ] || { XDG_RUNTIME_DIR=$(mktemp -d); export XDG_RUNTIME_DIR; }

have() { command -v "$1" > /dev/null 2>&1; }
if [ "$TALUS_NP" -gt 1 ]; then
  [ "$BACKEND" = cpu ] || { echo "peers.sh: TALUS_NP > 1 runs the CPU backend only (BACKEND=$BACKEND)" >&2; exit 2; }
  bash "$ROOT/tests/mpi.sh" --check || { echo "peers.sh: TALUS_NP=$TALUS_NP needs the above" >&2; exit 2; }
  cargo build --release --quiet --features mpi
else
  cargo build --release --quiet
fi
# (cargo builds into CARGO_TARGET_DIR when that is set)
TALUS=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/talus
HAVE_LIGGGHTS=0; have liggghts && have mpirun && [ -f "$PEERS/settle/bench_settle.py" ] && HAVE_LIGGGHTS=1
HAVE_LAMMPS=0; [ "${LAMMPS:-0}" = 1 ] && have lmp && HAVE_LAMMPS=1

# value of key `$2` in the "name: value" output file `$1`
field() { sed -n "s/^$2: *//p" "$1" | head -n 1; }

# talus_scene NAME NX NY NZ STEPS [DATA]: the settle box as a Talus scene in $WORK/NAME.json
# (and NAME_untracked.json), written by benches/settle_scene.py
talus_scene() {
  python3 "$ROOT/benches/settle_scene.py" "$WORK/$1.json" "$2" "$3" "$4" "$5" "${6:-}"
}

# better A B: whether A > B (numbers as printed)
better() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$1" "$2"; }

# run_talus NAME STEPS REP [BINARY TAG]: one run; prints "psps rss_mb contacts_per_particle"
run_talus() {
  local bin=${4:-$TALUS} tag=${5:-talus}
  "$bin" bench --scene "$WORK/$1.json" --from 0 --steps "$2" --warmup 0 --backend "$BACKEND" --json "$WORK/$1.$tag.$3.json" > /dev/null
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['particle_steps_per_second'], (r['peak_host_memory_bytes'] or 0)/2**20, r['contacts_per_particle'])" "$WORK/$1.$tag.$3.json"
}

# run_talus_ranks NAME STEPS REP RANKS: one `talus run` of the scene on RANKS MPI ranks x 1
# thread (mpirun), or with RANKS = 1 on one rank x TALUS_NP threads; prints its
# particle-steps/s, or 0 when it failed
run_talus_ranks() {
  local name=$1 steps=$2 rep=$3 ranks=$4 out="$WORK/$1.np$4.$3" launch=()
  if [ "$ranks" -gt 1 ]; then
    launch=(mpirun --oversubscribe --bind-to none -np "$ranks" -x RAYON_NUM_THREADS=1)
  else
    launch=(env RAYON_NUM_THREADS="$TALUS_NP")
  fi
  rm -rf "$out"
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
    "${launch[@]}" "$TALUS" run "$WORK/$name.json" --backend cpu --steps "$steps" --out "$out" --no-progress > "$out.log" 2>&1 \
    && python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['particle_steps_per_second'])" "$out/summary.json" 2>> "$out.log"; then
    :
  else
    echo "peers.sh: talus run of $name on $ranks rank(s) failed, see $out.log" >&2; echo 0
  fi
}

# run_peer CODE NAME REP ARGS...: one run of bench_settle.py; prints "psps rss_mb", or
# "0 0" when it failed
run_peer() {
  local code=$1 name=$2 rep=$3; shift 3
  python3 "$PEERS/settle/bench_settle.py" --code "$code" --np "$NP" --outdir "$WORK/$code" "$@" > "$WORK/$name.$code.$rep.txt" 2>&1 || true
  local p m
  p=$(field "$WORK/$name.$code.$rep.txt" particle_steps_per_s); m=$(field "$WORK/$name.$code.$rep.txt" max_rss_total_MB)
  if [ -n "$p" ]; then echo "$p $m"; else echo "peers.sh: $code $name failed, see $WORK/$name.$code.$rep.txt" >&2; echo "0 0"; fi
}

ROWS=()
for case in $CASES; do
  case $case in
    fall10k) dims=(25 25 16); steps=4000; phase=fall; n=10000 ;;
    fall100k) dims=(50 50 40); steps=4000; phase=fall; n=100000 ;;
    dense10k) dims=(25 25 16); steps=2000; phase=dense; n=10000 ;;
    dense100k) dims=(50 125 16); steps=2000; phase=dense; n=100000 ;;
    fall1M) dims=(100 100 100); steps=4000; phase=fall; n=1000000 ;;
    fall10M) dims=(200 200 250); steps=4000; phase=fall; n=10000000 ;;
    *) echo "peers.sh: unknown case $case" >&2; exit 2 ;;
  esac
  data=""
  if [ "$phase" = dense ]; then
    data=$WORK/settled_N$n.data
    if [ ! -f "$WORK/settled_N10000.data" ] || [ ! -f "$WORK/settled_N100000.data" ]; then
      if [ "$HAVE_LIGGGHTS" = 0 ] || ! have lmp; then echo "peers.sh: $case needs liggghts and lmp to make the settled packing; skipped" >&2; continue; fi
      echo "peers.sh: settling the 10k packing with LIGGGHTS (30,000 steps) and tiling it 2 x 5 with LAMMPS" >&2
      python3 "$PEERS/settle/bench_settle.py" --code liggghts --n 10000 --np "$NP" --phase make-data --data "$WORK/settled_N10000.data" --outdir "$WORK/liggghts" > "$WORK/make-data.txt" 2>&1
      (cd "$WORK" && lmp -in "$PEERS/settle/in.tile.lammps" -var in settled_N10000.data -var tx 2 -var ty 5 -var out settled_N100000.data -log none > tile.log)
    fi
  fi
  talus_scene "$case" "${dims[@]}" "$steps" "$data"
  [ "${SCENES_ONLY:-0}" = 1 ] && continue
  peer_args=(--nx "${dims[0]}" --ny "${dims[1]}" --nz "${dims[2]}" --phase "$phase" --nrun "$steps")
  [ -n "$data" ] && peer_args+=(--data "$data")
  # the codes take turns, one run each per repetition, so that a change of the machine's
  # speed between minutes (2-thread runs here move by up to 30 %) falls on all of them; each
  # code's best run is reported
  t_ps=0; t_rss=0; t_cpp=0; u_ps=0; l_ps=0; l_rss=0; m_ps=0; b_ps=0; r1_ps=0; rn_ps=0
  for rep in $(seq 1 "$REPS"); do
    echo "peers.sh: $case, run $rep of $REPS: Talus ($BACKEND), then with energy tracking off" >&2
    read -r p r c < <(run_talus "$case" "$steps" "$rep")
    if better "$p" "$t_ps"; then t_ps=$p; t_rss=$r; t_cpp=$c; fi
    read -r p _ _ < <(run_talus "${case}_untracked" "$steps" "$rep")
    if better "$p" "$u_ps"; then u_ps=$p; fi
    if [ -n "${TALUS_BEFORE:-}" ]; then
      echo "peers.sh: $case, run $rep of $REPS: Talus before ($TALUS_BEFORE)" >&2
      read -r p _ _ < <(run_talus "$case" "$steps" "$rep" "$TALUS_BEFORE" before)
      if better "$p" "$b_ps"; then b_ps=$p; fi
    fi
    if [ "$TALUS_NP" -gt 1 ]; then
      echo "peers.sh: $case, run $rep of $REPS: talus run on 1 rank x $TALUS_NP threads, then on $TALUS_NP ranks x 1 thread" >&2
      p=$(run_talus_ranks "$case" "$steps" "$rep" 1)
      if better "$p" "$r1_ps"; then r1_ps=$p; fi
      p=$(run_talus_ranks "$case" "$steps" "$rep" "$TALUS_NP")
      if better "$p" "$rn_ps"; then rn_ps=$p; fi
    fi
    if [ "$HAVE_LIGGGHTS" = 1 ]; then
      echo "peers.sh: $case, run $rep of $REPS: LIGGGHTS, $NP ranks" >&2
      read -r p r < <(run_peer liggghts "$case" "$rep" "${peer_args[@]}")
      if better "$p" "$l_ps"; then l_ps=$p; l_rss=$r; fi
    fi
    if [ "$HAVE_LAMMPS" = 1 ]; then
      echo "peers.sh: $case, run $rep of $REPS: LAMMPS, $NP ranks" >&2
      read -r p _ < <(run_peer lammps "$case" "$rep" "${peer_args[@]}")
      if better "$p" "$m_ps"; then m_ps=$p; fi
    fi
  done
  ROWS+=("$case|$n|$steps|$t_ps|$t_cpp|$t_rss|${l_ps:-}|${l_rss:-}|${m_ps:-}|$u_ps|$b_ps|$r1_ps|$rn_ps")
done

[ "${SCENES_ONLY:-0}" = 1 ] && exit 0
python3 - "$BACKEND" "$NP" "$TALUS_NP" "${ROWS[@]}" <<'PY'
import sys
backend, np_, talus_np, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
f = lambda x: float(x) if x not in ("", "0") else None
print(f"| case | N | steps | Talus {backend} (particle-steps/s) | contacts/particle | LIGGGHTS {np_} ranks | Talus / LIGGGHTS | Talus untracked | untracked / LIGGGHTS | LAMMPS {np_} ranks | Talus / LAMMPS | peak RSS Talus / LIGGGHTS (MB) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
befores, ranks = [], []
for r in rows:
    case, n, steps, t, cpp, trss, l, lrss, m, u, b, r1, rn = r.split("|")
    t, l, m, trss, lrss, u, b, r1, rn = f(t), f(l), f(m), f(trss), f(lrss), f(u), f(b), f(r1), f(rn)
    befores.append((case, t, b))
    ranks.append((case, r1, rn, l))
    fmt = lambda x: f"{x:.3e}" if x else "-"
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    rss = f"{trss:.0f} / {lrss:.0f}" if trss and lrss else (f"{trss:.0f} / -" if trss else "-")
    print(f"| {case} | {n} | {steps} | {fmt(t)} | {float(cpp):.2f} | {fmt(l)} | {ratio(t, l)} | {fmt(u)} | {ratio(u, l)} | {fmt(m)} | {ratio(t, m)} | {rss} |")
if any(b for _, _, b in befores):
    print()
    print(f"| case | Talus {backend} now | Talus before | now / before |")
    print("|---|---|---|---|")
    for case, t, b in befores:
        print(f"| {case} | {t:.3e} | {b:.3e} | {t / b:.3f} |" if t and b else f"| {case} | - | - | - |")
if talus_np > 1:
    fmt = lambda x: f"{x:.3e}" if x else "-"
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print()
    print(f"| case | Talus run, 1 rank x {talus_np} threads | Talus run, {talus_np} ranks x 1 thread | {talus_np} ranks / 1 rank | LIGGGHTS {np_} ranks | Talus {talus_np} ranks / LIGGGHTS |")
    print("|---|---|---|---|---|---|")
    for case, r1, rn, l in ranks:
        print(f"| {case} | {fmt(r1)} | {fmt(rn)} | {ratio(rn, r1)} | {fmt(l)} | {ratio(rn, l)} |")
PY
