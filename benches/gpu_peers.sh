#!/usr/bin/env bash
# Talus on the GPU beside Chrono DEM-Engine (DEME, CUDA) on the same card in the same call
# (issue 34): the peers' settle box from the lattice (1 mm spheres on a 2.2 mm lattice,
# E = 1e7 Pa, nu = 0.3, e = 0.5, mu = 0.5, Hertz-Mindlin, dt = 5e-6 s; benches/settle_scene.py)
# at DEME's sizes 100^3 (1M) and 216^3 (10.08M), and Talus's packed bed (`talus bench --packing
# bed --model hertz_mindlin`, no DEME twin) at 1M and 10M.
#
#   bash benches/gpu_peers.sh [WORKDIR]
#
# Each code runs W warm-up steps and then S timed steps from the same lattice; throughput =
# particles x timed steps / wall time of the timed steps (set-up, JIT and warm-up excluded in
# both codes). Talus runs each settle case twice, as shipped (energy tracking on) and untracked
# (forces only, as DEME, which books no dissipation); the ratio is taken with the untracked run.
#
# Environment:
#   TALUS      the talus binary (default: cargo build --release, target/release/talus)
#   TALUS_OLD  a second binary, run right after TALUS on each case of OLD_CASES (default: every
#              case but bed100M): a before/after column
#   TRACKED    the settle cases also run as shipped, energy tracking on (default: all of them;
#              the ratio to DEME uses the untracked run)
#   DEME_DIR   the DEME kit with deme_site.tar.xz (default .deme_peer, see ../shared/peers/deme/
#              README.md); DEME=0 or a missing kit skips DEME (its columns stay "-")
#   DEME_JIT   a deme_jit_cache.tar.xz from an earlier call on the same GPU architecture,
#              unpacked into /tmp before DEME starts (skips most of its JIT compilation)
#   CASES      default "settle1M bed1M shuffled1M settle10M bed10M" (shuffled1M: the 1M bed with
#              its ids shuffled, `--ids shuffled`, as a poured scene numbers its grains; also
#              bed100M: the 100M-particle bed; wet1M, jkr1M: the 1M bed with liquid bridges or
#              JKR adhesion (`--adhesion`); clumps1M: 1M component spheres in four-sphere
#              tablets, `--packing clumps --ids shuffled`, numbered at random as poured;
#              drum1M: about 1M grains packed in the lower half of a turning mesh drum,
#              `--packing drum`, the moving-mesh contact search at scale; a binary without
#              that packing skips it)
#   LAYOUT_AB  the cases also run with the force pass's schedule off (TALUS_GPU_BALANCE=0),
#              stored in id order (TALUS_GPU_CELL_ORDER=0), with the shaders compiled without
#              naga's runtime checks (TALUS_GPU_SHADER_CHECKS=0) and with the force pass's loads
#              issued early (TALUS_GPU_EARLY_LOADS=1), and with every contact law compiled into
#              the force pass (TALUS_GPU_SPECIALISE=0), and with each particle's own state kept
#              in the force pass's registers (TALUS_GPU_RELOAD_OWN=0), and with every field of a
#              contact's history in its slot record (TALUS_GPU_FULL_RECORDS=1: 40 bytes where the
#              bed's law needs 32), new binary only (default "bed1M shuffled1M clumps1M", where
#              run; "" for none): what each is worth on the card
#   PLACED     cases also run with the list slots placed by SIMD group (TALUS_GPU_SLOT_PLACES=1:
#              each warp's records, shares and incoming entries laid out column by column, so
#              that its threads' m-th contacts are consecutive), new binary only, right after
#              the default run (default "bed1M shuffled1M bed10M clumps1M"; "" for none)
#   UNTRACKED  bed cases also run untracked (`--untracked`: forces only, no energy booking; the
#              table's "Talus untracked" column), new binary only (default "bed1M bed10M"): what
#              the energy booking costs the dense force pass on the card
#   NBED       particles of the bed1M and shuffled1M cases (default 1000000; smaller for a dry run
#              of the script on lavapipe)
#   W, S       warm-up and timed steps at 1M (default 200, 2000); W10, S10 at 10M (200, 500);
#              S100 at 100M (100)
#   DEME10=0   DEME at 1M only (its 10M case JIT-compiles again: minutes on a first call; it
#              runs last, in the time left before DEADLINE + 60 s)
#   T1, T10    DEME's time limits at 1M and 10M (default 200, 330 s)
#   PROFILE=1  Talus bed cases also run --profile (per-pass GPU times and bytes/s; the share of
#              the card's peak bandwidth where nvidia-smi names an H100 or H200, or PEAK_GBS)
#   DEADLINE   seconds from the start after which no new case is begun (default 540)
# Writes WORKDIR (default $OUT/gpu_peers on the device machine, else bench_runs/gpu_peers):
# the scenes, every run's JSON and log, shaders.txt (`talus info --shaders`: what the driver
# made of each pass, registers and the warps an SM keeps resident on NVIDIA, with and without
# the runtime checks, and with the own state kept in registers; the placed force pass is its
# forces+placed row), and table.md, the table printed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T_START=$(date +%s)
WORK=${1:-${OUT:+$OUT/gpu_peers}}
WORK=$(realpath -m "${WORK:-bench_runs/gpu_peers}")
mkdir -p "$WORK"
W=${W:-200}; S=${S:-2000}; W10=${W10:-200}; S10=${S10:-500}; S100=${S100:-100}
CASES=${CASES:-"settle1M bed1M shuffled1M settle10M bed10M"}
LAYOUT_AB=${LAYOUT_AB-"bed1M shuffled1M clumps1M"}
NBED=${NBED:-1000000}
DEADLINE=${DEADLINE:-540}
DEME_DIR=$(realpath -m "${DEME_DIR:-$ROOT/.deme_peer}")
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "${XDG_RUNTIME_DIR}" ] || { XDG_RUNTIME_DIR=$(mktemp -d); export XDG_RUNTIME_DIR; }
ts() { echo "[$(( $(date +%s) - T_START )) s]"; }
late() { [ $(( $(date +%s) - T_START )) -gt "$DEADLINE" ]; }

if [ -z "${TALUS:-}" ]; then cargo build --release --quiet || exit 2; TALUS=$ROOT/target/release/talus; fi
TALUS=$(realpath "$TALUS")
BINS=("$TALUS"); [ -n "${TALUS_OLD:-}" ] && BINS+=("$(realpath "$TALUS_OLD")")
echo "gpu_peers.sh $(ts): $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
"$TALUS" info > "$WORK/info.txt" 2>&1; head -n 20 "$WORK/info.txt"
# what the driver made of the passes (seconds): the force pass's registers bound its occupancy
# (the slots placed: the forces+placed row of each)
for v in TALUS_GPU_SHADER_CHECKS=1 TALUS_GPU_SHADER_CHECKS=0 TALUS_GPU_RELOAD_OWN=0; do
  env "$v" "$TALUS" info --shaders 2>&1 | sed -n '/^Compiled passes/,$p' >> "$WORK/shaders.txt"
done
grep -E "^Compiled|^  (forces|kick_drift|body_kick)" "$WORK/shaders.txt"

# --- DEME, through the kit's own driver (install, ldd check, preflight, one size per call) -------
# deme SIZE TIMEOUT: settle_deme.py at SIZE^3; results appended to $WORK/deme_results.jsonl, the
# compiled-kernel cache (all sizes so far) to $WORK/deme_jit_cache.tar.xz
HAVE_DEME=0
if [ "${DEME:-1}" != 0 ] && [ -f "$DEME_DIR/deme_site.tar.xz" ] && command -v nvidia-smi > /dev/null; then
  HAVE_DEME=1
  if [ -n "${DEME_JIT:-}" ] && [ -f "$DEME_JIT" ]; then tar -xJf "$DEME_JIT" -C /tmp && echo "gpu_peers.sh: DEME JIT cache from $DEME_JIT"; fi
else
  echo "gpu_peers.sh: DEME skipped (DEME=0, no kit in $DEME_DIR, or no NVIDIA GPU)"
fi
deme() {
  local n=$1 t=$2 w=$W s=$S
  [ "$n" -gt 100 ] && { w=$W10; s=$S10; }
  echo "gpu_peers.sh $(ts): DEME ${n}^3, W=$w S=$s, timeout ${t} s"
  OUT=$WORK W=$w S=$s N1="$n $n $n" SKIP10=1 T1="$t" \
    bash "$DEME_DIR/run_on_device.sh" "$DEME_DIR" >> "$WORK/deme_stdout.txt" 2>&1
  grep -E "^== .*(DEME|rc=|FAIL|TIMEOUT)|setup:|particle-steps/s|FAIL" "$WORK/deme_stdout.txt" | tail -n 6
}
want() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }
# the 1M case first: its first seconds show whether the kit runs at all
[ $HAVE_DEME = 1 ] && want settle1M && deme 100 "${T1:-200}"

# --- Talus ----------------------------------------------------------------------------------------
# layout_ab CASE ARGS...: the new binary's layout rows of CASE (LAYOUT_AB), one switch each
layout_ab() {
  local c=$1; shift
  case " $LAYOUT_AB " in *" $c "*) ;; *) return 0 ;; esac
  TALUS_GPU_BALANCE=0 talus_json "$TALUS" "${c}_nobalance" "$@"
  TALUS_GPU_CELL_ORDER=0 talus_json "$TALUS" "${c}_idorder" "$@"
  TALUS_GPU_SHADER_CHECKS=0 talus_json "$TALUS" "${c}_unchecked" "$@"
  TALUS_GPU_EARLY_LOADS=1 talus_json "$TALUS" "${c}_early" "$@"
  TALUS_GPU_SPECIALISE=0 talus_json "$TALUS" "${c}_everylaw" "$@"
  TALUS_GPU_RELOAD_OWN=0 talus_json "$TALUS" "${c}_keepown" "$@"
  TALUS_GPU_FULL_RECORDS=1 talus_json "$TALUS" "${c}_fullrec" "$@"
}
# talus_json BIN TAG ARGS...: one `talus bench` into $WORK/TAG.json; a failure is logged, not fatal
talus_json() {
  local bin=$1 tag=$2; shift 2
  echo "gpu_peers.sh $(ts): talus $tag: $*"
  if ! "$bin" bench --backend gpu "$@" --json "$WORK/$tag.json" > "$WORK/$tag.log" 2>&1; then
    echo "gpu_peers.sh: talus $tag failed:"; tail -n 5 "$WORK/$tag.log"; rm -f "$WORK/$tag.json"
  else
    grep -E "particle-steps/s|device memory|bytes/particle" "$WORK/$tag.log" | head -n 3
  fi
}
OLD_CASES=${OLD_CASES:-$(echo "$CASES" | sed 's/bed100M//; s/clumps1M//; s/shuffled1M//; s/wet1M//; s/jkr1M//; s/drum1M//')}
TRACKED=${TRACKED:-"settle1M settle10M"}
UNTRACKED=${UNTRACKED-"bed1M bed10M"}
PLACED=${PLACED-"bed1M shuffled1M bed10M clumps1M"}
# placed CASE ARGS...: the new binary's run of CASE with the slots placed (PLACED)
placed() {
  local c=$1; shift
  case " $PLACED " in *" $c "*) TALUS_GPU_SLOT_PLACES=1 talus_json "$TALUS" "${c}_placed" "$@" ;; esac
}
# untracked_bed CASE ARGS...: the new binary's untracked run of a bed case (UNTRACKED)
untracked_bed() {
  local c=$1; shift
  case " $UNTRACKED " in *" $c "*) talus_json "$TALUS" "${c}_untracked" "$@" --untracked ;; esac
}
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
case "$gpu_name" in *H200*) PEAK_GBS=${PEAK_GBS:-4800} ;; *H100*HBM3*|*H100*SXM*) PEAK_GBS=${PEAK_GBS:-3350} ;; esac
for c in $CASES; do
  if late; then echo "gpu_peers.sh $(ts): past DEADLINE=$DEADLINE s, $c not run"; continue; fi
  for b in "${!BINS[@]}"; do
    bin=${BINS[$b]}; sfx=""; [ "$b" = 1 ] && sfx=".old"
    # (binaries before issue 34 have no --peak-bandwidth)
    prof=(); [ "${PROFILE:-0}" = 1 ] && prof=(--profile) && [ -n "${PEAK_GBS:-}" ] && "$bin" bench --help | grep -q peak-bandwidth && prof+=(--peak-bandwidth "$PEAK_GBS")
    if [ "$b" = 1 ] && ! case " $OLD_CASES " in *" $c "*) true ;; *) false ;; esac; then continue; fi
    case $c in
      settle1M|settle10M)
        if [ $c = settle1M ]; then n=100; w=$W; s=$S; else n=216; w=$W10; s=$S10; fi
        python3 benches/settle_scene.py "$WORK/scene_$c.json" $n $n $n $(( w + s ))
        case " $TRACKED " in *" $c "*) talus_json "$bin" "$c$sfx" --scene "$WORK/scene_$c.json" --from 0 --steps $s --warmup $w ;; esac
        talus_json "$bin" "${c}_untracked$sfx" --scene "$WORK/scene_${c}_untracked.json" --from 0 --steps $s --warmup $w ;;
      bed1M|shuffled1M)
        # (binaries before `--ids` number the bed as placed)
        ids=(); [ $c = shuffled1M ] && ids=(--ids shuffled)
        args=(--packing bed --model hertz_mindlin --particles "$NBED" "${ids[@]}" --steps "$S" --warmup "$W" "${prof[@]}")
        talus_json "$bin" "$c$sfx" "${args[@]}"
        [ "$b" = 0 ] && { placed "$c" "${args[@]}"; untracked_bed "$c" "${args[@]}"; layout_ab "$c" "${args[@]}"; } ;;
      bed10M)
        args=(--packing bed --model hertz_mindlin --particles 10000000 --steps "$S10" --warmup "$W10" "${prof[@]}")
        talus_json "$bin" "$c$sfx" "${args[@]}"
        [ "$b" = 0 ] && { placed "$c" "${args[@]}"; untracked_bed "$c" "${args[@]}"; } ;;
      bed100M) talus_json "$bin" "$c$sfx" --packing bed --model hertz_mindlin --particles 100000000 --steps "$S100" --warmup 10 "${prof[@]}" ;;
      wet1M|jkr1M)
        # the 1M bed with liquid bridges (as wet_granules) or JKR adhesion (as cohesive_heap)
        glue=capillary; [ $c = jkr1M ] && glue=jkr
        talus_json "$bin" "$c$sfx" --packing bed --model hertz_mindlin --adhesion $glue --particles "$NBED" --steps "$S" --warmup "$W" "${prof[@]}" ;;
      drum1M)
        # the grains of a turning mesh drum (binaries before the drum packing have none)
        "$bin" bench --help | grep -q "drum:" || { echo "gpu_peers.sh: $bin has no --packing drum; $c skipped"; continue; }
        talus_json "$bin" "$c$sfx" --packing drum --model hertz_mindlin --particles "$NBED" --steps "$S" --warmup "$W" "${prof[@]}" ;;
      clumps1M)
        # the tablets numbered at random, as a clump generator numbers what it pours
        args=(--packing clumps --model hertz_mindlin --particles 1000000 --ids shuffled --steps "$S" --warmup "$W" "${prof[@]}")
        talus_json "$bin" "$c$sfx" "${args[@]}"
        [ "$b" = 0 ] && { placed "$c" "${args[@]}"; layout_ab "$c" "${args[@]}"; } ;;
      *) echo "gpu_peers.sh: unknown case $c" >&2 ;;
    esac
  done
done

# DEME's 10M case last (its JIT compiles the kernels again, for minutes on a first call), if the
# time left before DEADLINE + 60 s allows it
if [ $HAVE_DEME = 1 ] && want settle10M && [ "${DEME10:-1}" != 0 ]; then
  left=$(( DEADLINE + 60 - ($(date +%s) - T_START) ))
  if [ $left -gt 60 ]; then deme 216 $(( left < ${T10:-330} ? left : ${T10:-330} )); else echo "gpu_peers.sh $(ts): no time left for DEME 10M"; fi
fi

# --- the table ------------------------------------------------------------------------------------
python3 - "$WORK" "$CASES" <<'PY' | tee "$WORK/table.md"
import json, os, sys
work, cases = sys.argv[1], sys.argv[2].split()
def talus(tag):
    p = os.path.join(work, tag + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
deme = {}
p = os.path.join(work, "deme_results.jsonl")
if os.path.exists(p):
    for line in open(p):
        r = json.loads(line)
        deme[r["particles"]] = r
f = lambda r, k="particle_steps_per_second": f"{r[k]:.3e}" if r and r.get(k) else "-"
old = any(talus(c + ".old") or talus(c + "_untracked.old") for c in cases)
head = "| case | N | timed steps | Talus tracked | Talus untracked |" + (" before: tracked | before: untracked |" if old else "") + \
       " DEME | Talus / DEME | contacts/particle | device B/particle |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for c in cases:
    t, u = talus(c), talus(c + "_untracked")
    first = t or u
    if not first:
        print(f"| {c} | not run |"); continue
    n = first["particles"]
    d = deme.get(n) if c.startswith("settle") else None
    best = u or t
    ratio = f"{best['particle_steps_per_second'] / d['particle_steps_per_s']:.2f}" if d and d.get("particle_steps_per_s") else "-"
    row = f"| {c} | {n} | {first['steps']} | {f(t)} | {f(u)} |"
    if old:
        row += f" {f(talus(c + '.old'))} | {f(talus(c + '_untracked.old'))} |"
    dev = first.get("device_bytes_per_particle")
    row += f" {f(d, 'particle_steps_per_s') if d else '-'} | {ratio} | {first['contacts_per_particle']:.2f} | {dev:.0f} |" if dev else \
           f" {f(d, 'particle_steps_per_s') if d else '-'} | {ratio} | {first['contacts_per_particle']:.2f} | - |"
    print(row)
    for sfx, label in (("_placed", "slots placed by SIMD group (TALUS_GPU_SLOT_PLACES=1)"), ("_nobalance", "schedule off (TALUS_GPU_BALANCE=0)"), ("_idorder", "id order (TALUS_GPU_CELL_ORDER=0)"), ("_unchecked", "no runtime checks (TALUS_GPU_SHADER_CHECKS=0)"), ("_early", "early loads (TALUS_GPU_EARLY_LOADS=1)"), ("_everylaw", "every contact law compiled in (TALUS_GPU_SPECIALISE=0)"), ("_keepown", "own state kept in registers (TALUS_GPU_RELOAD_OWN=0)"), ("_fullrec", "every history field in the slot records (TALUS_GPU_FULL_RECORDS=1)")):
        v = talus(c + sfx)
        if v:
            print(f"|  | {label}: {f(v)} particle-steps/s, {v['particle_steps_per_second'] / first['particle_steps_per_second']:.3f} x the default ({(v.get('gpu_layout') or {}).get('schedule', '-')}) |")
    if first.get("gpu_layout"):
        l = first["gpu_layout"]
        print(f"|  | layout: {'cell' if l['cell_order'] else 'id'} order, schedule {l['schedule']} |")
    # the access model of the force pass (`gpu::access`, with --profile): what placing the slots changed
    for r, label in ((first, ""), (talus(c + "_placed"), "slots placed: ")):
        a = r and r.get("record_access")
        if a:
            print(f"|  | {label}access model: {a['lines_per_record']:.2f} lines and {a['sectors_per_record']:.2f} sectors per active contact's record, {a['word_lines_per_slot']:.3f} lines per slot's word |")
    for r, label in ((first, ""), (talus(c + "_placed"), "slots placed: "), (u if u is not first else None, "untracked: "), (talus(c + ".old"), "before: ")):
        if r and r.get("pass_ms_per_step"):
            gbs = dict((name, v) for name, v in r.get("pass_gb_per_s") or [])
            peak = r.get("peak_bandwidth_gb_s")
            def one(name, ms):
                g = gbs.get(name)
                if g is None or g < 1:
                    return f"{name} {ms:.3f}"
                return f"{name} {ms:.3f} ({g:.0f} GB/s" + (f", {100 * g / peak:.0f} %)" if peak else ")")
            print(f"|  | {label}passes, ms/step (modelled bytes / time): " + "; ".join(one(n, ms) for n, ms in r["pass_ms_per_step"]) + " |")
print()
print("Talus: particle-steps/s of `talus bench --backend gpu`; DEME: settle_deme.py's RESULT (particle_steps_per_s).")
print("The ratio divides Talus untracked (forces only, as DEME) by DEME at the same N.")
PY
echo "gpu_peers.sh $(ts): done; $WORK/table.md"
