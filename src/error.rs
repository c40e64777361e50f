//! Errors Talus reports to users. Every scene error names the file, the key path and the value.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TalusError {
    /// A scene file is malformed or holds a bad value.
    #[error("{file}: {key}: {message}")]
    Scene { file: PathBuf, key: String, message: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// No GPU adapter could be found or opened.
    #[error("no GPU adapter: {0}\n  Install a Vulkan driver (on Debian/Ubuntu: `apt-get install mesa-vulkan-drivers libvulkan1`) or use `--backend cpu`.")]
    NoAdapter(String),
    /// The device rejected a request (out of memory, over a limit, validation).
    #[error("GPU device error: {0}")]
    Device(String),
    /// The two backends disagree beyond tolerance (`talus verify`).
    #[error("verification failed: {0}")]
    Verify(String),
    /// The run was stopped because its state went wrong (non-finite value, a particle that left
    /// the domain): the step, the particle (user id) when one is known, and what happened. `talus
    /// run` exits with status 3 (`BLOW_UP_EXIT_STATUS`).
    #[error("run stopped at step {step}{}: {message}", particle.map(|p| format!(", particle {p}")).unwrap_or_default())]
    BlowUp { step: u64, particle: Option<u32>, message: String },
    /// A checkpoint file that cannot be used (truncated, corrupt, another format version, or
    /// not matching what it is used with): the file and what is wrong.
    #[error("{file}: {message}")]
    Checkpoint { file: PathBuf, message: String },
    /// `talus run` or `talus resume` stopped on Ctrl-C or SIGTERM after the last complete
    /// batch; `checkpoint` holds the state at `step` when one was written. Exit status
    /// `INTERRUPTED_EXIT_STATUS`.
    #[error("interrupted at step {step}; {}", match checkpoint {
        Some(c) => format!("the state is saved in {} (continue with `talus resume {}`)", c.display(), c.display()),
        None => "no checkpoint was written".to_string(),
    })]
    Interrupted { step: u64, checkpoint: Option<PathBuf> },
    #[error("{0}")]
    Other(String),
}

/// Exit status of `talus run` when a blow-up was caught (`TalusError::BlowUp`).
pub const BLOW_UP_EXIT_STATUS: u8 = 3;

/// Exit status of `talus run` / `talus resume` stopped by Ctrl-C or SIGTERM
/// (`TalusError::Interrupted`): 128 + SIGINT, as shells report an interrupted command.
pub const INTERRUPTED_EXIT_STATUS: u8 = 130;

impl TalusError {
    pub fn scene(file: impl Into<PathBuf>, key: impl Into<String>, message: impl Into<String>) -> Self {
        TalusError::Scene { file: file.into(), key: key.into(), message: message.into() }
    }
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TalusError::Io { path: path.into(), source }
    }
    pub fn checkpoint(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        TalusError::Checkpoint { file: file.into(), message: message.into() }
    }
}

pub type Result<T> = std::result::Result<T, TalusError>;

// ---- numbers in messages ----

/// A number for a message, to 4 significant figures: plain for ordinary magnitudes
/// (`0.9`, `1234`), scientific otherwise (`5.015e-5`). Trailing zeros are dropped.
pub fn fmt_num(x: f64) -> String {
    fmt_sig(x, 4)
}

/// Two numbers that a message sets side by side as different (a mismatch): 4 significant
/// figures, or as many more as it takes to tell them apart (up to the 17 that round-trip).
pub fn fmt_apart(a: f64, b: f64) -> (String, String) {
    (4..=17).map(|sig| (fmt_sig(a, sig), fmt_sig(b, sig))).find(|(x, y)| x != y).unwrap_or_else(|| (fmt_sig(a, 17), fmt_sig(b, 17)))
}

/// `x` to 4 significant figures in scientific notation, trailing zeros dropped (`5.015e-5`,
/// `1e-3`): times and steps that range over many decades.
pub fn fmt_sci(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x:e}");
    }
    let e = format!("{x:.3e}");
    let (mantissa, exp) = e.split_once('e').expect("exponent");
    format!("{}e{exp}", trim_zeros(mantissa.to_string()))
}

/// `x` to `sig` significant figures (1..=17), plain for 1e-4 <= |x| < 1e7.
pub fn fmt_sig(x: f64, sig: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let sig = sig.clamp(1, 17);
    // the rounded mantissa and exponent, e.g. "5.015e-5"
    let e = format!("{:.*e}", sig - 1, x);
    let (mantissa, exp) = e.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if (-4..7).contains(&exp) {
        let decimals = (sig as i32 - 1 - exp).max(0) as usize;
        let rounded: f64 = e.parse().expect("a number");
        trim_zeros(format!("{rounded:.decimals$}"))
    } else {
        format!("{}e{exp}", trim_zeros(mantissa.to_string()))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A `TalusError` as bytes, to travel between MPI ranks (`Ranks::agree`): a blow-up keeps its
/// step, particle and message (and so its exit status); every other error becomes `Other` with
/// its full text.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WireError {
    blow_up: Option<(u64, Option<u32>)>,
    message: String,
}

impl WireError {
    pub fn of(e: &TalusError) -> WireError {
        match e {
            TalusError::BlowUp { step, particle, message } => WireError { blow_up: Some((*step, *particle)), message: message.clone() },
            other => WireError { blow_up: None, message: other.to_string() },
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an error serialises")
    }

    pub fn from_bytes(bytes: &[u8]) -> WireError {
        serde_json::from_slice(bytes).unwrap_or_else(|e| WireError { blow_up: None, message: format!("another rank failed; its message did not arrive whole ({e})") })
    }

    pub fn into_error(self) -> TalusError {
        match self.blow_up {
            Some((step, particle)) => TalusError::BlowUp { step, particle, message: self.message },
            None => TalusError::Other(self.message),
        }
    }
}

/// The rank a notice comes from, where the run is on several ranks (`set_notice_rank`).
static NOTICE_RANK: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// From now on this process's notices name its rank (a run under `mpirun`: every rank's
/// device grows its own capacities, and each says so).
pub fn set_notice_rank(rank: usize) {
    let _ = NOTICE_RANK.set(rank);
}

/// A notice on standard error that is not an error (a capacity grown and a batch redone):
/// `talus: …`, or `talus (rank k): …` on several ranks.
pub fn notice(message: &str) {
    eprintln!("{}", notice_line(NOTICE_RANK.get().copied(), message));
}

/// The line `notice` prints for a process of rank `rank` (`None`: a run on one process).
pub fn notice_line(rank: Option<usize>, message: &str) -> String {
    match rank {
        Some(rank) => format!("talus (rank {rank}): {message}"),
        None => format!("talus: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::notice_line;

    #[test]
    fn a_notice_names_its_rank_on_several_ranks() {
        assert_eq!(notice_line(Some(2), "grown"), "talus (rank 2): grown");
        assert_eq!(notice_line(None, "grown"), "talus: grown");
    }
}
