//! The instruction set the force pass runs with, chosen at run time: where the CPU has AVX2, a
//! copy compiled for it (VEX encodings: three-operand instructions, so far fewer register
//! copies; 10 % fewer instructions on the dense settle box). The arithmetic is the same IEEE
//! operation by operation (no fused multiply-add: Rust never contracts a multiply and an add),
//! so both copies give the same results bit for bit
//! (`tests/cli.rs::avx2_and_portable_force_passes_agree_bit_for_bit`), and the portable build
//! runs on any x86-64 CPU. The integration sweeps stay portable: their AVX2 copy ran the 100k
//! falling box at two thirds of the speed (docs/performance.md, sixth session).
//!
//! `TALUS_CPU_ISA=portable` in the environment makes the CPU backend run the portable copy
//! everywhere (`auto`, the default, picks AVX2 where the CPU has it).

use std::sync::OnceLock;

use crate::error::{Result, TalusError};

/// The environment variable that picks the copy (`auto` or `portable`).
pub const ISA_VARIABLE: &str = "TALUS_CPU_ISA";

static AVX2: OnceLock<bool> = OnceLock::new();

/// Reads `TALUS_CPU_ISA` (once per process; `CpuBackend::new` calls it, so that a bad value
/// stops the run before it starts).
pub fn from_env() -> Result<()> {
    let wanted = match std::env::var(ISA_VARIABLE) {
        Err(std::env::VarError::NotPresent) => true,
        Ok(v) if v == "auto" => true,
        Ok(v) if v == "portable" => false,
        Ok(v) => return Err(TalusError::Other(format!("environment variable {ISA_VARIABLE}: \"{v}\" is not a CPU instruction set choice (auto or portable)"))),
        Err(e) => return Err(TalusError::Other(format!("environment variable {ISA_VARIABLE}: {e}"))),
    };
    AVX2.get_or_init(|| wanted && detected());
    Ok(())
}

/// Whether the force pass runs its AVX2 copy (read once per pass).
#[inline]
pub fn avx2() -> bool {
    *AVX2.get_or_init(detected)
}

fn detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Runs `body`, compiled for AVX2 when `avx2` (from `avx2()`). `body` must be an
/// `#[inline(always)]` closure (and so must the closures it calls), so that each copy is
/// compiled into its caller.
#[inline(always)]
pub fn hot<R>(avx2: bool, body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` comes from `avx2()`, which found the feature on this CPU.
        return unsafe { with_avx2(body) };
    }
    let _ = avx2;
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn with_avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}
