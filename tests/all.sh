#!/usr/bin/env bash
# Every Rust test that `cargo test --release` runs (the library's and the binary's unit tests,
# each file of tests/, the doc tests), with two test binaries running at a time.
#
#   bash tests/all.sh                 # TALUS_TEST_JOBS=2 binaries at once (default 2)
#   bash tests/all.sh clumps hopper   # only these test binaries
#
# Why: `cargo test` runs its test binaries one after another, and a binary whose last test runs
# alone leaves the other core idle; on lavapipe a GPU test also waits on the driver. On the
# 2-core CI machine the binaries used 1.26 cores on average one at a time (1,357 s of CPU in
# 1,077 s, 2026-11-28). Tests never depend on time or on each other's files (each takes its own
# temporary directory), so running binaries side by side changes no result.
#
# Each binary's output goes to target/test-logs/<name>.log and is printed in full when it fails;
# the script fails when any binary fails, after all have run, and lists them.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS="${TALUS_TEST_JOBS:-2}"
LOGS=target/test-logs
mkdir -p "$LOGS"

# build everything first (cargo's own output), then list the test executables it made; the
# benchmarks (`cargo bench`) are built too, so that one whose calls fall behind the library
# fails here rather than on the day it is run
cargo test --release --no-run
cargo build --release --benches
mapfile -t BINS < <(cargo test --release --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
seen = set()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = m["target"]["name"] + ("-" + m["target"]["kind"][0] if m["target"]["kind"][0] in ("lib", "bin") else "")
        if name not in seen:
            seen.add(name)
            print(name, m["executable"])
')
if [ "${#BINS[@]}" -eq 0 ]; then
  echo "tests/all.sh: cargo listed no test binaries" >&2
  exit 1
fi

# The longest binaries first (measured one at a time on 2 cores, 2026-11-28: 157, 97, 83, 72,
# 59, 48, 46, 46 s), so that no long one starts last; the rest in cargo's order.
FIRST=(energy_closure clumps hopper mesh_walls cohesion_scenes process_scenes adhesion_gpu whole_scene)
ORDERED=()
for f in "${FIRST[@]}"; do
  for b in "${BINS[@]}"; do [ "${b%% *}" = "$f" ] && ORDERED+=("$b"); done
done
for b in "${BINS[@]}"; do
  case " ${FIRST[*]} " in *" ${b%% *} "*) ;; *) ORDERED+=("$b") ;; esac
done

if [ "$#" -gt 0 ]; then
  WANT=" $* "
  SELECTED=()
  for b in "${ORDERED[@]}"; do
    case "$WANT" in *" ${b%% *} "*) SELECTED+=("$b") ;; esac
  done
  if [ "${#SELECTED[@]}" -ne "$#" ]; then
    echo "tests/all.sh: asked for $*, found ${#SELECTED[@]} of them; test binaries: ${ORDERED[*]%% *}" >&2
    exit 2
  fi
  ORDERED=("${SELECTED[@]}")
fi

# one binary: run it from the package root (as cargo does), log it, print a line
run_one() {
  local name="$1" exe="$2" log="$LOGS/$1.log" t0 rc=0
  t0=$(date +%s)
  "$exe" > "$log" 2>&1 || rc=$?
  local line
  line=$(grep -E '^test result:' "$log" | tail -1 || true)
  if [ "$rc" -eq 0 ]; then
    echo "ok     $name ($(( $(date +%s) - t0 )) s): ${line:-no test result line}"
  else
    echo "FAILED $name (exit $rc, $(( $(date +%s) - t0 )) s); its output:"
    sed 's/^/    /' "$log"
    touch "$LOGS/$name.failed"
  fi
}
export -f run_one
export LOGS

rm -f "$LOGS"/*.failed
start=$(date +%s)
printf '%s\n' "${ORDERED[@]}" | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1"'
failed=$(cd "$LOGS" && ls -- *.failed 2>/dev/null | sed 's/\.failed$//' || true)

if [ "$#" -eq 0 ]; then
  echo "tests/all.sh: doc tests"
  cargo test --release --doc || failed="$failed doc-tests"
fi

echo "tests/all.sh: ${#ORDERED[@]} test binaries in $(( $(date +%s) - start )) s, $JOBS at a time"
if [ -n "$failed" ]; then
  echo "tests/all.sh: FAILED:" $failed >&2
  exit 1
fi
