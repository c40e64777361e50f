//! Scenes that start from a LAMMPS/LIGGGHTS `write_data` packing (`initial_state`), the
//! lattice `jitter` and the `skin` key: what is read, and errors that name key, file and line.

use std::path::Path;

const DATA: &str = "LAMMPS data file via write_data, version 3.8.0, timestep = 30000

3 atoms
1 atom types

0 0.055 xlo xhi
0 0.055 ylo yhi
-0.001 0.04 zlo zhi

Atoms # granular

2 1 0.002 2500 0.0030 0.001 0.00099 0 0 0
1 1 0.002 2500 0.0011 0.001 0.00099 0 0 0
3 1 0.0021 2500 0.0010 0.0540 0.003 1 0 0

Velocities

1 0.1 0 0 0 0 5
3 0 0 -0.2 0 0 0
2 0 0.3 0 1 0 0
";

fn scene(initial_state: &str, extra: &str) -> String {
    format!(
        r#"{{
  "time_step": 1e-6, "steps": 10,
  "materials": {{ "grain": {{ "density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.3, "fric": 0.5 }} }},
  "contacts": {{ "default": {{ "model": "hertz_mindlin", "coefficientRestitution": 0.5 }} }},
  "initial_state": {initial_state}{extra}
}}"#
    )
}

fn with_data(data: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("packing.data"), data).unwrap();
    let scene_path = dir.path().join("case.json");
    (dir, scene_path)
}

fn parse(text: &str, path: &Path) -> talus::Result<talus::Setup> {
    talus::scene::parse_str(text, path)
}

#[test]
fn lammps_data_gives_particles_in_id_order_with_overlaps_and_images() {
    let (_dir, path) = with_data(DATA);
    let s = parse(&scene(r#"{ "file": "packing.data", "format": "lammps_data", "material": "grain" }"#, ""), &path).unwrap();
    let p = &s.particles;
    assert_eq!(p.len(), 3);
    // atom 1 and atom 2 overlap by 0.1 mm: kept as written
    assert_eq!(p.position[0], [0.0011, 0.001, 0.00099]);
    assert_eq!(p.position[1], [0.0030, 0.001, 0.00099]);
    // atom 3 has image flag +1 in x: one box length (0.055 m) further
    assert!((p.position[2][0] - (0.0010 + 0.055)).abs() < 1e-15);
    assert_eq!(p.radius, vec![0.001, 0.001, 0.00105]);
    assert_eq!(p.velocity[0], [0.1, 0.0, 0.0]);
    assert_eq!(p.angular_velocity[0], [0.0, 0.0, 5.0]);
    assert_eq!(p.velocity[1], [0.0, 0.3, 0.0]);
    assert_eq!(p.velocity[2], [0.0, 0.0, -0.2]);
}

#[test]
fn bad_initial_state_names_key_file_and_line() {
    let good = r#"{ "file": "packing.data", "format": "lammps_data", "material": "grain" }"#;
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("missing file", DATA, r#"{ "file": "nope.data", "format": "lammps_data" }"#, &["initial_state.file", "nope.data", "cannot read"]),
        ("unknown format", DATA, r#"{ "file": "packing.data", "format": "xyz" }"#, &["initial_state.format", "xyz", "lammps_data"]),
        ("unknown key", DATA, r#"{ "file": "packing.data", "format": "lammps_data", "scale": 2 }"#, &["initial_state.scale"]),
        ("short row", &DATA.replace("2 1 0.002 2500 0.0030 0.001 0.00099 0 0 0", "2 1 0.002 2500 0.0030"), good, &["packing.data line 12", "7 or 10 columns", "got 5"]),
        ("not a number", &DATA.replace("0.0011 0.001", "0.0011 abc"), good, &["packing.data line 13", "\"abc\" is not a number"]),
        ("density", &DATA.replace("0.0021 2500", "0.0021 7800"), good, &["atom 3 has density 7800", "2500"]),
        ("count", &DATA.replace("3 atoms", "4 atoms"), good, &["header says 4 atoms", "has 3"]),
        ("velocity of unknown atom", &DATA.replace("3 0 0 -0.2", "9 0 0 -0.2"), good, &["line 19", "atom 9"]),
        ("zero diameter", &DATA.replace("1 1 0.002 2500", "1 1 0 2500"), good, &["line 13", "diameter must be > 0"]),
    ];
    for (name, data, state, needles) in cases {
        let (_dir, path) = with_data(data);
        let err = parse(&scene(state, ""), &path).expect_err(name).to_string();
        assert!(err.contains("case.json"), "{name}: the error must name the scene file: {err}");
        for n in *needles {
            assert!(err.contains(n), "{name}: expected \"{n}\" in: {err}");
        }
    }
    let (_dir, path) = with_data(DATA);
    let err = parse(&scene(good, r#", "skin": -1"#), &path).expect_err("negative skin").to_string();
    assert!(err.contains("skin") && err.contains("-1"), "{err}");
}

#[test]
fn lattice_jitter_is_bounded_seeded_and_real() {
    let text = |jitter: f64, seed: u64| {
        format!(
            r#"{{ "time_step": 1e-6, "steps": 1,
  "materials": {{ "grain": {{ "density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.3, "fric": 0.5 }} }},
  "generators": [ {{ "type": "lattice", "origin": [0.0011, 0.0011, 0.0011], "count": [4, 3, 2], "spacing": 0.0022,
                    "jitter": {jitter}, "radius": 0.001, "seed": {seed} }} ] }}"#
        )
    };
    let plain = parse(&text(0.0, 1), Path::new("lattice.json")).unwrap().particles;
    let a = parse(&text(5e-5, 1), Path::new("lattice.json")).unwrap().particles;
    let b = parse(&text(5e-5, 1), Path::new("lattice.json")).unwrap().particles;
    let c = parse(&text(5e-5, 2), Path::new("lattice.json")).unwrap().particles;
    assert_eq!(a.position, b.position, "same seed, same lattice");
    assert_ne!(a.position, c.position, "another seed, another jitter");
    let mut largest = 0.0f64;
    for (p, q) in a.position.iter().zip(&plain.position) {
        for k in 0..3 {
            let d = (p[k] - q[k]).abs();
            assert!(d <= 5e-5 + 1e-18, "jitter {d} beyond 5e-5");
            largest = largest.max(d);
        }
    }
    assert!(largest > 2.5e-5, "the jitter hardly moved anything ({largest})");
    let err = parse(&text(-1.0, 1), Path::new("lattice.json")).expect_err("negative jitter").to_string();
    assert!(err.contains("generators[0].jitter"), "{err}");
}

/// A VTU snapshot (as `talus run` writes it) read back as a scene's `initial_state`: the same
/// particles in id order, bit for bit (binary f64 arrays), and file errors name key and file.
#[test]
fn vtu_snapshot_is_an_initial_state() {
    use talus::backend::Backend;
    let (dir, path) = with_data(DATA);
    let s = parse(&scene(r#"{ "file": "packing.data", "format": "lammps_data", "material": "grain" }"#, ""), &path).unwrap();
    let mut cpu = talus::cpu::CpuBackend::new(&s).unwrap();
    cpu.step(10).unwrap();
    let snap = cpu.snapshot().unwrap();
    talus::output::vtu::write_vtu(&dir.path().join("last.vtu"), &snap, talus::output::vtu::VtuEncoding::Base64).unwrap();

    let state = r#"{ "file": "last.vtu", "format": "vtu", "material": "grain" }"#;
    let again = parse(&scene(state, ""), &path).unwrap();
    let p = &again.particles;
    assert_eq!(p.len(), 3);
    assert_eq!(p.position, snap.position);
    assert_eq!(p.velocity, snap.velocity);
    assert_eq!(p.angular_velocity, snap.angular_velocity);
    assert_eq!(p.radius, snap.radius);
    assert!(p.velocity.iter().any(|v| v != &[0.0; 3]), "velocities must come through");

    std::fs::write(dir.path().join("bad.vtu"), "<VTKFile type=\"PolyData\">").unwrap();
    for (file, needle) in [("nope.vtu", "nope.vtu"), ("bad.vtu", "not a VTK UnstructuredGrid")] {
        let err = parse(&scene(&state.replace("last.vtu", file), ""), &path).expect_err(file).to_string();
        assert!(err.contains("initial_state.file") && err.contains(needle), "{file}: {err}");
    }
}
