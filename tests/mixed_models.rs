//! Several contact models in one scene (scenes/mixed_models_box.json: hooke between beads,
//! hertz against the walls) give the same results on the CPU and the GPU, with the tolerances
//! of docs/verification.md.

use std::path::Path;

use talus::contact::ContactModel;
use talus::verify::{verify, Tolerances};
use talus::TalusError;

#[test]
fn mixed_models_agree_on_cpu_and_gpu() {
    let setup = talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/mixed_models_box.json")).expect("load scene");
    let glass_glass = setup.pairs.get(0, 0).model;
    let glass_steel = setup.pairs.get(0, 1).model;
    assert_eq!((glass_glass, glass_steel), (ContactModel::Hooke, ContactModel::Hertz), "the scene mixes hooke and hertz");
    // tight state comparison over the first 300 steps, where the lowest beads already hit the floor
    let tol = Tolerances { early_steps: 300, ..Tolerances::default() };
    let report = match verify(&setup, setup.steps, &tol) {
        Ok(r) => r,
        Err(e @ TalusError::NoAdapter(_)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}"),
        Err(e) => panic!("verify failed to run: {e}"),
    };
    println!("{report}");
    assert!(report.final_contacts.0 > 50 && report.final_contacts.1 > 50, "expected bead–bead and bead–wall contacts: {:?}", report.final_contacts);
    assert!(report.passed(), "{report}");
}
