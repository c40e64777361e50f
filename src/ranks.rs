//! The processes of a run: the MPI world when Talus is built with the `mpi` feature and started
//! under `mpirun`, otherwise one rank (issue 35; docs/mpi.md).
//!
//! [`Ranks`] holds the world for the life of the process (MPI is initialised once and
//! finalised when it drops) and gives the reductions a decomposed run needs, each independent of
//! the rank count and of the order in which ranks contribute:
//!
//! * [`Ranks::sum_exact`]: an [`ExactSum`] summed over the ranks as an MPI_SUM of its i64 limbs
//!   (energies, wall loads, measurements: the same bits at 1, 2 or N ranks);
//! * [`Ranks::sum_u64`]: counts (integer sums are exact);
//! * [`Ranks::max_f64`]: a maximum (the list's displacement bound), exact in any order.
//!
//! Without the feature these are the identity on one rank, so the code that calls them is the
//! same in both builds. Only the thread that created `Ranks` may call them (MPI is initialised
//! at `MPI_THREAD_FUNNELED`: rayon's workers inside a rank make no MPI calls).

use crate::exact_sum::ExactSum;

/// The processes of this run and this process's place among them.
pub struct Ranks {
    rank: usize,
    size: usize,
    #[cfg(feature = "mpi")]
    world: Option<(mpi::environment::Universe, mpi::topology::SimpleCommunicator)>,
}

impl Ranks {
    /// One rank, no MPI (also what [`Ranks::init`] gives in a build without the `mpi` feature).
    pub fn single() -> Self {
        Self {
            rank: 0,
            size: 1,
            #[cfg(feature = "mpi")]
            world: None,
        }
    }

    /// The MPI world (feature `mpi`): under `mpirun -np N` N ranks, started alone one rank (an
    /// MPI singleton). Without the feature, one rank. Errs when MPI was already initialised
    /// in this process or grants less than `MPI_THREAD_FUNNELED`.
    pub fn init() -> Result<Self, String> {
        #[cfg(feature = "mpi")]
        {
            use mpi::topology::Communicator;
            let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
                return Err("MPI is already initialised in this process: create one `Ranks` per process".into());
            };
            if threading < mpi::Threading::Funneled {
                return Err(format!("the MPI library grants thread support {threading:?}; Talus needs Funneled (rayon threads inside a rank, MPI calls from the main thread)"));
            }
            let world = universe.world();
            let (rank, size) = (world.rank() as usize, world.size() as usize);
            Ok(Self { rank, size, world: Some((universe, world)) })
        }
        #[cfg(not(feature = "mpi"))]
        {
            Ok(Self::single())
        }
    }

    /// Whether this build can run on several ranks (the `mpi` feature).
    pub const fn mpi_built() -> bool {
        cfg!(feature = "mpi")
    }

    /// This process's rank, 0-based.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the run has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this is rank 0, which writes a run's outputs.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The exact sum over all ranks of every rank's `local` (an MPI_SUM of the i64 wire form),
    /// on every rank: the same bits whatever the rank count and however the values were split.
    pub fn sum_exact(&self, local: &ExactSum) -> ExactSum {
        let wire = local.to_limbs();
        let total = self.all_reduce_i64(&wire);
        // an elementwise sum of fewer than 2^30 normalised wire forms is always accepted
        ExactSum::from_limbs(&total).expect("exact sum: the MPI_SUM of normalised wire forms")
    }

    /// The sum of a count over all ranks.
    pub fn sum_u64(&self, local: u64) -> u64 {
        let total = self.all_reduce_i64(&[i64::try_from(local).expect("a count below 2^63")]);
        total[0] as u64
    }

    /// The largest of every rank's `local` (NaN if any rank's is NaN).
    pub fn max_f64(&self, local: f64) -> f64 {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::{CommunicatorCollectives, SystemOperation};
            // MPI_MAX does not promise NaN propagation: NaN travels as a separate flag
            let send = [if local.is_nan() { f64::NEG_INFINITY } else { local }, if local.is_nan() { 1.0 } else { 0.0 }];
            let mut recv = [0.0f64; 2];
            world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::max());
            return if recv[1] > 0.0 { f64::NAN } else { recv[0] };
        }
        local
    }

    fn all_reduce_i64<const N: usize>(&self, local: &[i64; N]) -> [i64; N] {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::{CommunicatorCollectives, SystemOperation};
            let mut recv = [0i64; N];
            world.all_reduce_into(&local[..], &mut recv[..], SystemOperation::sum());
            return recv;
        }
        *local
    }
}
