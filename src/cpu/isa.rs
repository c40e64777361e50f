//! The instruction set the force pass runs with, chosen at run time. The force pass is
//! compiled three times:
//! - portable x86-64 (SSE2), which runs on any x86-64 CPU;
//! - for AVX2: VEX encodings, three-operand instructions, so far fewer register copies (10 %
//!   fewer instructions on the dense settle box);
//! - for AVX-512 (F and VL): EVEX encodings, which add 16 vector registers to AVX2's 16. The
//!   pair loop's contact geometry and output (some 40 doubles) then stay in registers instead
//!   of being spilled to the stack (4 % faster on the dense settle box, at 10k and 100k).
//!
//! The arithmetic is the same IEEE operation by operation in every copy (no fused
//! multiply-add: Rust never contracts a multiply and an add, and no approximate reciprocal),
//! so all give the same results bit for bit
//! (`tests/cli.rs::force_pass_copies_agree_bit_for_bit`). The integration sweeps stay
//! portable: their AVX2 copy ran the 100k falling box at two thirds of the speed
//! (docs/performance.md, sixth session).
//!
//! `TALUS_CPU_ISA` in the environment picks the copy: `auto` (the default: the widest the CPU
//! has), `avx2` (AVX2 even where the CPU has AVX-512) or `portable`.

use std::sync::OnceLock;

use crate::error::{Result, TalusError};

/// The environment variable that picks the copy (`auto`, `avx2` or `portable`).
pub const ISA_VARIABLE: &str = "TALUS_CPU_ISA";

/// A copy of the force pass (`hot`), by the instructions it is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    Portable,
    Avx2,
    Avx512,
}

impl Isa {
    /// How `talus bench` names the copy ("AVX-512 force pass").
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "AVX2",
            Isa::Avx512 => "AVX-512",
        }
    }
}

static ISA: OnceLock<Isa> = OnceLock::new();

/// Reads `TALUS_CPU_ISA` (once per process; `CpuBackend::new` calls it, so that a bad value
/// stops the run before it starts).
pub fn from_env() -> Result<()> {
    let wanted = match std::env::var(ISA_VARIABLE) {
        Err(std::env::VarError::NotPresent) => Isa::Avx512,
        Ok(v) if v == "auto" => Isa::Avx512,
        Ok(v) if v == "avx2" => Isa::Avx2,
        Ok(v) if v == "portable" => Isa::Portable,
        Ok(v) => return Err(TalusError::Other(format!("environment variable {ISA_VARIABLE}: \"{v}\" is not a CPU instruction set choice (auto, avx2 or portable)"))),
        Err(e) => return Err(TalusError::Other(format!("environment variable {ISA_VARIABLE}: {e}"))),
    };
    ISA.get_or_init(|| wanted.min(detected()));
    Ok(())
}

/// The copy the force pass runs (read once per pass).
#[inline]
pub fn isa() -> Isa {
    *ISA.get_or_init(detected)
}

/// The widest copy this CPU can run.
fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl") && std::arch::is_x86_feature_detected!("avx2") {
            return Isa::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Isa::Avx2;
        }
    }
    Isa::Portable
}

/// Runs `body`, compiled for the instructions of `isa` (from `isa()`). `body` must be an
/// `#[inline(always)]` closure (and so must the closures it calls), so that each copy is
/// compiled into its caller.
#[inline(always)]
pub fn hot<R>(isa: Isa, body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY: `isa` comes from `isa()`, which found these features on this CPU.
        Isa::Avx512 => return unsafe { with_avx512(body) },
        Isa::Avx2 => return unsafe { with_avx2(body) },
        Isa::Portable => {}
    }
    let _ = isa;
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn with_avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
unsafe fn with_avx512<R>(body: impl FnOnce() -> R) -> R {
    body()
}
