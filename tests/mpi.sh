#!/usr/bin/env bash
# The MPI tests (tests/mpi.rs; docs/mpi.md): builds Talus with the `mpi` feature and runs them.
#
#   bash tests/mpi.sh            # cargo test --release --features mpi --test mpi
#   bash tests/mpi.sh --check    # only says whether MPI and libclang are here (exit 1 if not)
#
# `cargo test --release --features mpi --test mpi` also builds target/release/talus with the
# feature, which the tests start under `mpirun --oversubscribe --bind-to none -np 1|2|3` (so
# after this script target/release/talus is the MPI build; a plain `cargo build --release`
# relinks the default one). The build needs an MPI library with its compiler wrapper (`mpicc`
# and `mpi.h`: mpi-sys probes them) and libclang (mpi-sys runs bindgen over mpi.h); the tests
# need `mpirun`. Without any of these the script FAILS and prints the install line: it never
# skips (.ci/run installs them first).
set -euo pipefail
cd "$(dirname "$0")/.."

INSTALL="apt-get install -y libopenmpi-dev openmpi-bin libclang-dev"

have() { command -v "$1" > /dev/null 2>&1; }

# libclang as clang-sys finds it: in LIBCLANG_PATH alone when that is set, else in LLVM's own
# library directory or the linker's cache (the development library: no version after `.so`)
have_libclang() {
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    compgen -G "$LIBCLANG_PATH/libclang*.so*" > /dev/null
    return
  fi
  compgen -G "/usr/lib/llvm-*/lib/libclang.so" > /dev/null && return 0
  ldconfig -p 2>/dev/null | grep -Eq '^[[:space:]]*libclang(-[0-9.]+)?\.so[[:space:]]'
}

missing=()
have mpirun || missing+=("mpirun")
if have mpicc; then
  # mpi.h through the wrapper, as mpi-sys's build finds it
  printf '#include <mpi.h>\n' | mpicc -E -x c - > /dev/null 2>&1 || missing+=("mpi.h")
else
  missing+=("mpicc")
fi
have_libclang || missing+=("libclang")

if [ "${#missing[@]}" -gt 0 ]; then
  [ "${1:-}" = "--check" ] || echo -n "tests/mpi.sh: FAILED: " >&2
  echo "${missing[*]} not found; the MPI tests need OpenMPI (or MPICH) and libclang:" >&2
  echo "  $INSTALL" >&2
  exit 1
fi
[ "${1:-}" = "--check" ] && exit 0

# (tests/mpi.rs gives the mpirun it starts OMPI_ALLOW_RUN_AS_ROOT=1 and the other settings)
cargo test --release --features mpi --test mpi
