//! The CPU backend's share of a checkpoint beyond `ParticleState` (`Backend::export_exact`,
//! `import_exact`): every particle's cumulative work (f64, exact), and the strain and contact
//! count of its owned contacts in the last force pass, which an import would otherwise
//! re-evaluate with Δt = 0 (equal only to rounding), and, where rolling work is booked, the
//! spin of the last force pass (`State::previous_spin`), and, with adhesion, each particle's
//! surface energy and bond-break work (`ADHESION`). All arrays are in particle-id order.

use super::CpuBackend;
use crate::error::{Result, TalusError};
use crate::model::state::ExactState;

/// `ExactState::kind` of the CPU backend.
pub const KIND: &str = "cpu";
/// Raw arrays: per particle, the strain energy (f64) and active contacts (u32) it owns.
const STRAIN: &str = "strain";
const CONTACTS: &str = "contacts";
/// Raw array where rolling work is booked: per particle, the spin of the last force pass (3 f64).
const PREVIOUS_SPIN: &str = "previous_spin";
/// Raw array of a scene with adhesion: per particle, the surface energy of its owned contacts
/// in the last force pass and its cumulative bond-break work (2 f64). The GPU backend writes
/// the same array (its f32 values widened), so the bond-break work crosses backends.
const ADHESION: &str = "adhesion";

impl CpuBackend {
    pub(super) fn export_exact_state(&self) -> ExactState {
        let w = |i: usize| &self.owners.works[i];
        let ids = || self.state.by_id();
        let work = ids().map(|i| [w(i).slip_work, w(i).dashpot_work, w(i).stiffness_work, w(i).wall_work]).collect();
        let strain: Vec<f64> = ids().map(|i| self.owners.owned[i].strain).collect();
        let contacts: Vec<u32> = ids().map(|i| self.owners.contacts[i]).collect();
        let mut raw = vec![(STRAIN.to_string(), bytemuck::cast_slice(&strain).to_vec()), (CONTACTS.to_string(), bytemuck::cast_slice(&contacts).to_vec())];
        if !self.state.previous_spin.is_empty() {
            let spins: Vec<[f64; 3]> = ids().map(|i| self.state.previous_spin[i].to_array()).collect();
            raw.push((PREVIOUS_SPIN.to_string(), bytemuck::cast_slice(&spins).to_vec()));
        }
        if !self.owners.adhesion.is_empty() {
            let adhesion: Vec<[f64; 2]> = ids().map(|i| [self.owners.adhesion[i].surface, self.owners.adhesion[i].bond_break]).collect();
            raw.push((ADHESION.to_string(), bytemuck::cast_slice(&adhesion).to_vec()));
        }
        ExactState { kind: KIND.into(), work, raw }
    }

    pub(super) fn import_exact_state(&mut self, exact: &ExactState) -> Result<()> {
        let n = self.state.len();
        if exact.work.len() != n {
            return Err(TalusError::Other(format!("the {} state holds the work of {} particles, the CPU backend holds {n}", exact.kind, exact.work.len())));
        }
        for (u, w) in exact.work.iter().enumerate() {
            let o = &mut self.owners.works[self.state.index_of[u] as usize];
            [o.slip_work, o.dashpot_work, o.stiffness_work, o.wall_work] = *w;
        }
        // the bond-break work of each particle, from either backend (the surface energy is
        // the other backend's only to its precision: re-evaluated by the import's pass then)
        let same_kind = exact.kind == KIND;
        if let (false, Ok(bytes)) = (self.owners.adhesion.is_empty(), exact.raw(ADHESION)) {
            let adhesion: Vec<[f64; 2]> = bytemuck::pod_collect_to_vec(bytes);
            if adhesion.len() != n {
                return Err(TalusError::Other(format!("the {} state's adhesion energies hold {} particles, not {n}", exact.kind, adhesion.len())));
            }
            for (u, [surface, bond_break]) in adhesion.iter().enumerate() {
                let e = &mut self.owners.adhesion[self.state.index_of[u] as usize];
                e.bond_break = *bond_break;
                if same_kind {
                    e.surface = *surface;
                }
            }
        }
        if !same_kind {
            return Ok(());
        }
        let strain: Vec<f64> = bytemuck::pod_collect_to_vec(exact.raw(STRAIN)?);
        let contacts: Vec<u32> = bytemuck::pod_collect_to_vec(exact.raw(CONTACTS)?);
        if strain.len() != n || contacts.len() != n {
            return Err(TalusError::Other(format!("the CPU state's strain and contact arrays hold {} and {} particles, not {n}", strain.len(), contacts.len())));
        }
        for u in 0..n {
            let i = self.state.index_of[u] as usize;
            (self.owners.owned[i].strain, self.owners.contacts[i]) = (strain[u], contacts[u]);
        }
        // absent from a checkpoint without rolling work: the spins themselves stand in
        if let (false, Ok(bytes)) = (self.state.previous_spin.is_empty(), exact.raw(PREVIOUS_SPIN)) {
            let spins: Vec<[f64; 3]> = bytemuck::pod_collect_to_vec(bytes);
            if spins.len() != n {
                return Err(TalusError::Other(format!("the CPU state's previous spins hold {} particles, not {n}", spins.len())));
            }
            for (u, w) in spins.iter().enumerate() {
                self.state.previous_spin[self.state.index_of[u] as usize] = glam::DVec3::from(*w);
            }
        }
        Ok(())
    }
}
