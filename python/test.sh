#!/usr/bin/env bash
# The Python tests: a fresh venv in target/ (registry packages only: maturin, numpy, pytest),
# the `talus` module built into it with `maturin develop --release` (the workspace's target/
# and release profile, so the engine built by `cargo test --release` is reused), then pytest.
# Run from anywhere; the README's test command runs it after `tests/all.sh`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/pyenv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check maturin numpy pytest
# the CLI the tests compare with (already built by `cargo test --release`)
[ -x "$target/release/talus" ] || cargo build --release --quiet --bin talus
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release --quiet -m python/Cargo.toml
TALUS_BIN="$target/release/talus" "$venv/bin/python" -m pytest -q python/tests "$@"
