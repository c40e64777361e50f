//! Several contact models in one scene (scenes/mixed_models_box.json: hooke between beads,
//! hertz against the walls) give the same results on the CPU and the GPU.
//!
//! The beads fall onto the floor and pile up; after a few hundred steps of collisions the two
//! runs follow different (equally valid) chaotic trajectories, so particle state is compared
//! over the first 250 steps, when both kinds of contact are already active, and the energies
//! over the first 1000 steps (docs/verification.md).

use std::path::Path;

use talus::contact::ContactModel;
use talus::cpu::CpuBackend;
use talus::verify::{verify, Tolerances};
use talus::{Backend, TalusError};

#[test]
fn mixed_models_agree_on_cpu_and_gpu() {
    let setup = talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/mixed_models_box.json")).expect("load scene");
    let glass = setup.materials.iter().position(|m| m.name == "glass").unwrap() as u32;
    let steel = setup.materials.iter().position(|m| m.name == "steel").unwrap() as u32;
    assert_eq!(setup.pairs.get(glass, glass).model, ContactModel::Hooke);
    assert_eq!(setup.pairs.get(glass, steel).model, ContactModel::Hertz);

    // both kinds of contact occur in the compared window (counted geometrically on the CPU
    // state every 25 steps)
    let mut cpu = CpuBackend::new(&setup).unwrap();
    let (mut on_floor, mut bead_pairs) = (0, 0);
    for _ in 0..10 {
        cpu.step(25).unwrap();
        let s = cpu.snapshot().unwrap();
        let n = s.position.len();
        on_floor += (0..n).filter(|&i| s.position[i][2] < s.radius[i]).count();
        for i in 0..n {
            for j in i + 1..n {
                let d: f64 = (0..3).map(|k| (s.position[i][k] - s.position[j][k]).powi(2)).sum::<f64>().sqrt();
                bead_pairs += (d < s.radius[i] + s.radius[j]) as usize;
            }
        }
    }
    assert!(on_floor >= 10 && bead_pairs >= 10, "steps 25..=250: {on_floor} bead–floor and {bead_pairs} bead–bead contacts seen");

    let tol = Tolerances { early_steps: 250, ..Tolerances::default() };
    let report = match verify(&setup, 1000, &tol) {
        Ok(r) => r,
        Err(e @ TalusError::NoAdapter(_)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}"),
        Err(e) => panic!("verify failed to run: {e}"),
    };
    println!("steps 25..=250: {on_floor} bead–floor and {bead_pairs} bead–bead contacts seen\n{report}");
    assert!(report.passed(), "{report}");
}
