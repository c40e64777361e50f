//! A set-up that needs more device memory than the adapter allows fails with an error that
//! names the size and the limit (the adapter's memory, or the buffer and the binding limit where
//! the backend reports no memory), never with a panic or a silent truncation.

use talus::contact::params::{inherit, PairParams};
use talus::gpu::{GpuBackend, GpuOptions};
use talus::model::material::Material;
use talus::setup::{Aabb, PairTable, Particles, Setup, TimeStepChoice};
use talus::TalusError;

fn tiny_setup() -> Setup {
    let mat = Material { name: "m".into(), density: 2500.0, hz_shear: 1e9, hz_poiss: 0.25, fric: 0.3 };
    let mut particles = Particles::default();
    particles.push([0.0; 3], [0.0; 3], [0.0; 3], 0.01, 0);
    Setup {
        name: "limits".into(),
        source: "<test>".into(),
        gravity: [0.0, 0.0, -9.81],
        dt: 1e-6,
        dt_choice: TimeStepChoice::Explicit,
        steps: 1,
        output_every: 1,
        snapshot_every: 0,
        pairs: PairTable { n_materials: 1, entries: vec![inherit(&mat, &mat, PairParams::default())] },
        materials: vec![mat],
        particles,
        walls: vec![],
        meshes: vec![],
        domain: Aabb { min: [-0.1; 3], max: [0.1; 3] },
        periodic: [false; 3],
        inserts: Vec::new(),
        outlets: Vec::new(),
        measures: Vec::new(),
        skin: None,
        bricks: None,
        balance: false,
        checks: Default::default(),
        until_rest: None,
        checkpoint_every: 0,
        initial_contacts: Vec::new(),
        input_files: Vec::new(),
        bodies: Default::default(),
        clump_templates: Vec::new(),
        notes: Vec::new(),
    }
}

#[test]
fn history_table_over_the_binding_limit_is_a_clear_error() {
    // two tables of 2^30 slots × 40 B = 80 GiB: over max_storage_buffer_binding_size on any
    // adapter.
    let opts = GpuOptions { hash_capacity: Some(1 << 30), ..GpuOptions::default() };
    let bytes = 2 * (1u64 << 30) * std::mem::size_of::<talus::gpu::layout::HashSlot>() as u64;
    match GpuBackend::new(&tiny_setup(), opts) {
        Err(TalusError::Device(msg)) if msg.contains("of device memory") => {
            // an adapter that reports its memory refuses the set-up before making anything
            // (`gpu::check_fits`): the size it needs, the memory it has
            println!("{msg}");
            let gb = format!("need {}.", bytes / 1_000_000_000);
            assert!(msg.contains(&gb) && msg.contains("GB of device memory") && msg.contains("particles fit"), "the message gives the size ({gb}… GB) and the memory: {msg}");
        }
        Err(TalusError::Device(msg)) => {
            println!("{msg}");
            assert!(msg.contains("hash"), "the message names the buffer: {msg}");
            assert!(msg.contains("max_storage_buffer_binding_size") || msg.contains("max_buffer_size"), "the message names the limit: {msg}");
            assert!(msg.contains(&bytes.to_string()), "the message gives the size: {msg}");
        }
        Err(TalusError::NoAdapter(why)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {why}"),
        Err(e) => panic!("expected a device error, got {e}"),
        Ok(_) => panic!("an 80 GiB history table must not be accepted"),
    }
}
