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
//! same in both builds. MPI is initialised at `MPI_THREAD_SERIALIZED`: one thread at a time makes
//! MPI calls (the decomposed CPU step loop runs on a rayon worker while the thread that started
//! it waits; rayon's other workers make none).
//!
//! A decomposed run also moves bytes: [`Ranks::all_to_all`] (ghosts and migrants),
//! [`Ranks::broadcast`] (rank 0's commands and states), [`Ranks::gather`] (snapshots and
//! exports to rank 0), and [`Ranks::agree`] turns one rank's error into every rank's.

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
            let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Serialized) else {
                return Err("MPI is already initialised in this process: create one `Ranks` per process".into());
            };
            if threading < mpi::Threading::Serialized {
                return Err(format!("the MPI library grants thread support {threading:?}; Talus needs Serialized (rayon threads inside a rank, MPI calls from one thread at a time)"));
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

    /// The element-wise sums of every rank's counts.
    pub fn sum_u64s(&self, local: &[u64]) -> Vec<u64> {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::{CommunicatorCollectives, SystemOperation};
            let mut total = vec![0u64; local.len()];
            world.all_reduce_into(local, &mut total[..], SystemOperation::sum());
            return total;
        }
        local.to_vec()
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

    /// Every rank's several exact sums at once (one MPI_SUM over all their limbs).
    pub fn sum_exact_many(&self, local: &[ExactSum]) -> Vec<ExactSum> {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::{CommunicatorCollectives, SystemOperation};
            let wire: Vec<i64> = local.iter().flat_map(|s| s.to_limbs()).collect();
            let mut total = vec![0i64; wire.len()];
            world.all_reduce_into(&wire[..], &mut total[..], SystemOperation::sum());
            let w = wire.len() / local.len().max(1);
            return total.chunks(w.max(1)).map(|l| ExactSum::from_limbs(l).expect("exact sum: the MPI_SUM of normalised wire forms")).collect();
        }
        local.to_vec()
    }

    /// Sends `to[r]` to rank r and returns what every rank sent this one (`[s]` from rank s);
    /// on one rank, `to[0]` comes back.
    pub fn all_to_all(&self, to: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(to.len(), self.size, "all_to_all: one buffer per rank");
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::CommunicatorCollectives;
            use mpi::datatype::{Partition, PartitionMut};
            let send_counts: Vec<i32> = to.iter().map(|b| count(b.len())).collect();
            let mut recv_counts = vec![0i32; self.size];
            world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
            let mut send = buffer(to.iter().map(Vec::len).sum());
            to.iter().for_each(|b| send.extend_from_slice(b));
            let send_displs = displacements(&send_counts);
            let recv_displs = displacements(&recv_counts);
            let total = recv_counts.iter().map(|&c| c as usize).sum::<usize>();
            let mut recv = buffer(total);
            recv.resize(total, 0);
            {
                let s = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
                let mut r = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
                world.all_to_all_varcount_into(&s, &mut r);
            }
            return (0..self.size).map(|k| recv[recv_displs[k] as usize..(recv_displs[k] + recv_counts[k]) as usize].to_vec()).collect();
        }
        to
    }

    /// Rank 0's `bytes` on every rank (what other ranks pass in is replaced).
    pub fn broadcast(&self, bytes: &mut Vec<u8>) {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::Root;
            use mpi::topology::Communicator;
            let root = world.process_at_rank(0);
            let mut len = [bytes.len() as u64];
            root.broadcast_into(&mut len[..]);
            bytes.resize(len[0] as usize, 0);
            if !bytes.is_empty() {
                root.broadcast_into(&mut bytes[..]);
            }
        }
        let _ = bytes;
    }

    /// Every rank's `bytes`, in rank order, on rank 0 (`None` on the others).
    pub fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::Root;
            use mpi::datatype::PartitionMut;
            use mpi::topology::Communicator;
            let root = world.process_at_rank(0);
            let len = [count(bytes.len())];
            let mut send = buffer(bytes.len());
            send.extend_from_slice(bytes);
            if self.rank != 0 {
                root.gather_into(&len[..]);
                root.gather_varcount_into(&send[..]);
                return None;
            }
            let mut counts = vec![0i32; self.size];
            root.gather_into_root(&len[..], &mut counts[..]);
            let displs = displacements(&counts);
            let total = counts.iter().map(|&c| c as usize).sum();
            let mut recv = buffer(total);
            recv.resize(total, 0);
            {
                let mut r = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(&send[..], &mut r);
            }
            return Some((0..self.size).map(|k| recv[displs[k] as usize..(displs[k] + counts[k]) as usize].to_vec()).collect());
        }
        Some(vec![bytes.to_vec()])
    }

    /// Every rank's verdict on a step they all took: `Ok` when every rank's `local` is `Ok`,
    /// else, on every rank, the error of the lowest rank that failed (its message travels), so
    /// that all ranks stop alike and none waits for another in a collective.
    pub fn agree<T>(&self, local: crate::error::Result<T>) -> crate::error::Result<T> {
        if self.size == 1 {
            return local;
        }
        let failed = if local.is_err() { -(self.rank as f64) } else { f64::NEG_INFINITY };
        // the largest of −rank over the failing ranks names the lowest
        let first = self.max_f64(failed);
        if first == f64::NEG_INFINITY {
            return local;
        }
        let from = (-first) as usize;
        let mut bytes = match (&local, from == self.rank) {
            (Err(e), true) => crate::error::WireError::of(e).to_bytes(),
            _ => Vec::new(),
        };
        self.broadcast_from(from, &mut bytes);
        Err(crate::error::WireError::from_bytes(&bytes).into_error())
    }

    /// Rank `from`'s `bytes` on every rank.
    pub fn broadcast_from(&self, from: usize, bytes: &mut Vec<u8>) {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::collective::Root;
            use mpi::topology::Communicator;
            let root = world.process_at_rank(from as i32);
            let mut len = [bytes.len() as u64];
            root.broadcast_into(&mut len[..]);
            bytes.resize(len[0] as usize, 0);
            if !bytes.is_empty() {
                root.broadcast_into(&mut bytes[..]);
            }
        }
        let _ = (from, bytes);
    }

    /// Ends every rank's process at once with `status` (a rank that cannot tell the others
    /// why it stops: MPI_Abort); on one rank, exits.
    pub fn abort(&self, status: i32) -> ! {
        #[cfg(feature = "mpi")]
        if let Some((_, world)) = &self.world {
            use mpi::topology::Communicator;
            world.abort(status);
        }
        std::process::exit(status)
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

/// An MPI count for a buffer of `len` bytes (a message of 2 GiB or more does not fit MPI's int
/// counts: a run that needs one stops loudly).
#[cfg(feature = "mpi")]
fn count(len: usize) -> i32 {
    i32::try_from(len).unwrap_or_else(|_| panic!("an MPI message of {len} bytes: more than MPI's int counts can say (2 GiB); use more ranks"))
}

/// An empty byte buffer with room for `len` (at least 1): an empty `Vec`'s pointer is the
/// dangling 0x1, which OpenMPI reads as `MPI_IN_PLACE` and refuses (MPI_ERR_ARG).
#[cfg(feature = "mpi")]
fn buffer(len: usize) -> Vec<u8> {
    Vec::with_capacity(len.max(1))
}

#[cfg(feature = "mpi")]
fn displacements(counts: &[i32]) -> Vec<i32> {
    let mut d = Vec::with_capacity(counts.len());
    let mut at = 0i64;
    for &c in counts {
        d.push(i32::try_from(at).expect("MPI displacements within 2 GiB"));
        at += c as i64;
    }
    d
}

// MPI is initialised at MPI_THREAD_SERIALIZED: the world may be used from whichever thread steps
// (a rayon worker inside the CPU step loop), one thread at a time. A decomposed backend holds it
// behind an `Arc` and makes every call from the thread running its step or command.
#[cfg(feature = "mpi")]
unsafe impl Send for Ranks {}
#[cfg(feature = "mpi")]
unsafe impl Sync for Ranks {}
