//! Errors that point at the real mistake (issue 37): geometry checked at load, a stopped run
//! keeps something to look at, "did you mean", the largest safe fraction, short numbers.

use std::path::{Path, PathBuf};
use std::process::Command;

use talus::scene;

fn parse(text: &str, file: &Path) -> talus::Result<talus::Setup> {
    scene::parse_str(text, file)
}

fn err(text: &str) -> String {
    match parse(text, Path::new("case.json")) {
        Ok(_) => panic!("the scene loaded; expected an error"),
        Err(e) => e.to_string(),
    }
}

fn has_all(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message lacks {p:?}:\n{msg}");
    }
}

/// A box of 1 × 1 × 1 dm with a floor at z = 0, and `extra` top-level keys.
fn scene(extra: &str) -> String {
    format!(
        r#"{{
  "time_step": "auto",
  "steps": 10,
  "materials": {{ "glass": {{ "density": 2500, "hz_shear": 1e8, "hz_poiss": 0.25, "fric": 0.5 }} }},
  {extra}
}}"#
    )
}

const FLOOR: &str = r#"{ "type": "plane", "name": "floor", "point": [0, 0, 0], "normal": [0, 0, 1] }"#;

/// An ASCII STL of triangles.
fn write_stl(path: &Path, triangles: &[[[f64; 3]; 3]]) {
    let mut s = String::from("solid t\n");
    for t in triangles {
        s += "facet normal 0 0 0\nouter loop\n";
        for v in t {
            s += &format!("vertex {} {} {}\n", v[0], v[1], v[2]);
        }
        s += "endloop\nendfacet\n";
    }
    s += "endsolid t\n";
    std::fs::write(path, s).unwrap();
}

/// The 12 triangles of the cube [0, a]³, wound anticlockwise seen from inside (normals point
/// in, towards particles inside it), or from outside when `outward`.
fn cube(a: f64, outward: bool) -> Vec<[[f64; 3]; 3]> {
    let mut out = Vec::new();
    for axis in 0..3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in [0.0, a] {
            let p = |s: f64, t: f64| {
                let mut x = [0.0; 3];
                x[axis] = side;
                x[u] = s;
                x[v] = t;
                x
            };
            let (q0, q1, q2, q3) = (p(0.0, 0.0), p(a, 0.0), p(a, a), p(0.0, a));
            // (u, v, axis) is right-handed: q0 q1 q2 runs anticlockwise seen from +axis
            let from_plus = side == 0.0; // the face at 0 has the inside on its + side
            let flip = from_plus == outward;
            if flip {
                out.push([q0, q2, q1]);
                out.push([q0, q3, q2]);
            } else {
                out.push([q0, q1, q2]);
                out.push([q0, q2, q3]);
            }
        }
    }
    out
}

#[test]
fn a_lattice_through_a_wall_names_the_particle_the_wall_the_generator_and_the_fix() {
    let text = scene(&format!(
        r#""generators": [ {{ "type": "lattice", "origin": [0.01, 0.01, 0.0], "count": [3, 3, 3], "spacing": 0.02, "radius": 0.005 }} ],
  "walls": [ {FLOOR} ]"#
    ));
    let e = err(&text);
    has_all(&e, &["case.json", "generators[0]", "lattice particle 0", "cuts wall \"floor\"", "by 0.005 m", "shrink the lattice to z >= 0.005", "move origin or lower count"]);
    assert!(!e.contains("time step"), "{e}");
    // moved up by one radius it loads
    parse(&text.replace("[0.01, 0.01, 0.0]", "[0.01, 0.01, 0.005]"), Path::new("case.json")).expect("a lattice resting on the floor loads");
}

#[test]
fn an_explicit_particle_through_a_mesh_facet_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_stl(&dir.path().join("box.stl"), &cube(0.1, false));
    let text = scene(
        r#""particles": [ { "position": [0.05, 0.05, 0.05], "radius": 0.005 }, { "position": [0.05, 0.05, 0.097], "radius": 0.005 } ],
  "walls": [ { "type": "mesh", "name": "bin", "file": "box.stl" } ]"#,
    );
    let e = match parse(&text, &dir.path().join("case.json")) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    };
    has_all(&e, &["particles[1]", "cuts mesh \"bin\" facet", "by 0.002 m", "move particles[1].position"]);
}

#[test]
fn a_random_fill_through_walls_rejects_the_places_that_cut_them() {
    // a fill box reaching 2 cm through the floor and through a mesh plate: no particle cuts either
    let dir = tempfile::tempdir().unwrap();
    let plate = [[[0.0, 0.0, 0.05], [0.1, 0.0, 0.05], [0.1, 0.1, 0.05]], [[0.0, 0.0, 0.05], [0.1, 0.1, 0.05], [0.0, 0.1, 0.05]]];
    write_stl(&dir.path().join("plate.stl"), &plate);
    let text = scene(&format!(
        r#""generators": [ {{ "type": "random_fill", "box": {{ "min": [0, 0, -0.02], "max": [0.1, 0.1, 0.1] }}, "count": 200, "radius": 0.003 }} ],
  "walls": [ {FLOOR}, {{ "type": "mesh", "name": "plate", "file": "plate.stl", "two_sided": true }} ]"#
    ));
    let s = parse(&text, &dir.path().join("case.json")).expect("the fill loads");
    assert_eq!(s.particles.len(), 200);
    for (x, r) in s.particles.position.iter().zip(&s.particles.radius) {
        assert!(x[2] >= *r * (1.0 - 1e-6), "particle at {x:?} cuts the floor");
        assert!((x[2] - 0.05).abs() >= *r * (1.0 - 1e-6), "particle at {x:?} cuts the plate");
    }
    // a box wholly behind the floor cannot be filled: the message names the wall and the fix
    let e = err(&scene(&format!(
        r#""generators": [ {{ "type": "random_fill", "box": {{ "min": [0, 0, -0.1], "max": [0.1, 0.1, -0.01] }}, "count": 5, "radius": 0.003 }} ],
  "walls": [ {FLOOR} ]"#
    )));
    has_all(&e, &["generators[0]", "could not place particle 1 of 5", "cut wall \"floor\"", "the box lies wholly behind the wall: move it to z >= 0"]);
    // a box through the floor that random placement cannot fill names the clipped box
    let e = err(&scene(&format!(
        r#""generators": [ {{ "type": "random_fill", "box": {{ "min": [0, 0, -0.1], "max": [0.01, 0.01, 0.004] }}, "count": 5, "radius": 0.003 }} ],
  "walls": [ {FLOOR} ]"#
    )));
    has_all(&e, &["cut wall \"floor\"", "shrink the box to z >= 0 (the wall's plane): [0, 0, 0] .. [0.01, 0.01, 0.004]"]);
}

/// Clump generators are checked against the walls by their component spheres: a lattice clump
/// through the floor is named with its sphere and the fix, a fill box through the floor places
/// every body in front of it, and a box wholly behind it is refused naming the wall.
#[test]
fn clump_generators_are_checked_against_walls() {
    let template = r#""clump_templates": [ { "name": "dimer", "material": "glass", "spheres": [[-0.004, 0, 0, 0.004], [0.004, 0, 0, 0.004]] } ],"#;
    // upright dimers (the template's x axis turned onto z would be random; keep the template's)
    let e = err(&scene(&format!(
        r#"{template}
  "generators": [ {{ "type": "lattice", "clump": "dimer", "orientation": "template", "origin": [0.02, 0.02, 0.002], "count": [2, 2, 1], "spacing": 0.02 }} ],
  "walls": [ {FLOOR} ]"#
    )));
    has_all(&e, &["generators[0]", "lattice clump 0 (i, j, k = 0, 0, 0", "its sphere", "cuts wall \"floor\"", "move the lattice to z >= 0.008", "move origin or lower count"]);
    let s = parse(
        &scene(&format!(
            r#"{template}
  "generators": [ {{ "type": "random_fill", "clump": "dimer", "box": {{ "min": [0, 0, -0.03], "max": [0.1, 0.1, 0.1] }}, "count": 40, "seed": 3 }} ],
  "walls": [ {FLOOR} ]"#
        )),
        Path::new("case.json"),
    )
    .expect("the clump fill loads");
    assert_eq!(s.particles.len(), 80);
    for (x, r) in s.particles.position.iter().zip(&s.particles.radius) {
        assert!(x[2] >= *r * (1.0 - 1e-6), "a component at {x:?} cuts the floor");
    }
    let e = err(&scene(&format!(
        r#"{template}
  "generators": [ {{ "type": "random_fill", "clump": "dimer", "box": {{ "min": [0, 0, -0.1], "max": [0.1, 0.1, -0.02] }}, "count": 5 }} ],
  "walls": [ {FLOOR} ]"#
    )));
    has_all(&e, &["generators[0]", "could not place clump 1 of 5", "cut wall \"floor\"", "the box lies wholly behind the wall: move it to z >= 0"]);
}

/// A cube around the particles wound inside out gets the winding warning; wound right, none.
#[test]
fn reversed_winding_is_named_at_load() {
    let dir = tempfile::tempdir().unwrap();
    for (name, outward) in [("right", false), ("reversed", true)] {
        write_stl(&dir.path().join(format!("{name}.stl")), &cube(0.1, outward));
        let text = scene(&format!(
            r#""generators": [ {{ "type": "lattice", "origin": [0.03, 0.03, 0.03], "count": [3, 3, 3], "spacing": 0.02, "radius": 0.005 }} ],
  "walls": [ {{ "type": "mesh", "name": "bin", "file": "{name}.stl" }} ]"#
        ));
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_talus"))
            .args(["run", path.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--steps", "1", "--out"])
            .arg(dir.path().join(format!("out_{name}")))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {stderr}");
        let warned = stderr.contains("reverse its winding");
        assert_eq!(warned, outward, "{name}: {stderr}");
        if outward {
            has_all(&stderr, &["walls[0]", "mesh \"bin\"", "reversed.stl", "wraps 100% around the particles", "\"two_sided\": true"]);
        }
    }
}

#[test]
fn unknown_keys_and_values_get_a_did_you_mean() {
    let base = scene(&format!(r#""particles": [ {{ "position": [0, 0, 0.01], "radius": 0.005 }} ], "walls": [ {FLOOR} ]"#));
    let cases: &[(&str, &str, &[&str])] = &[
        ("\"steps\": 10,", "\"steps\": 10, \"gravty\": [0, 0, -9.81],", &["gravty", "did you mean \"gravity\"?", "allowed keys here"]),
        ("\"density\": 2500,", "\"density\": 2500, \"frict\": 0.3,", &["materials.glass.frict", "did you mean \"fric\"?"]),
        ("\"steps\": 10,", "\"steps\": 10, \"time_step_chek\": \"warn\",", &["did you mean \"time_step_check\"?"]),
        ("\"steps\": 10,", "\"steps\": 10, \"lost_particles\": \"remov\",", &["lost_particles", "\"remov\"", "did you mean \"remove\"?"]),
        ("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"model\": \"hertz_mindlin\", \"coefficientRestitutoin\": 0.5 } },", &["contacts.default.coefficientRestitutoin", "did you mean \"coefficientRestitution\"?"]),
        ("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"model\": \"hertz_mindlen\" } },", &["contacts.default.model", "did you mean \"hertz_mindlin\"?"]),
        ("\"type\": \"plane\"", "\"type\": \"plain\"", &["walls[0].type", "did you mean \"plane\"?"]),
        // the spec's word for a longer key
        ("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"model\": \"hertz_mindlin\", \"restitution\": 0.5 } },", &["contacts.default.restitution", "did you mean \"coefficientRestitution\"?"]),
        // a key of another model says which
        ("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"coefficientRestitution\": 0.5 } },", &["for contact model hertz (a key of hooke, hertz_mindlin, hertz_viscous)"]),
    ];
    for (from, to, parts) in cases {
        assert!(base.contains(from), "{from}");
        has_all(&err(&base.replacen(from, to, 1)), parts);
    }
    // contacts.default neither lists nor takes the keys the materials give
    let e = err(&base.replacen("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"hz_shear\": 1e8 } },", 1));
    has_all(&e, &["contacts.default.hz_shear", "is inherited from the materials"]);
    let e = err(&base.replacen("\"steps\": 10,", "\"steps\": 10, \"contacts\": { \"default\": { \"dp_ratio\": 0.1 } },", 1));
    has_all(&e, &["contacts.default.dp_ratio", "did you mean"]);
    let allowed: Vec<&str> = e.split("allowed keys: ").nth(1).unwrap().split(", ").collect();
    for k in ["hz_shear", "hz_poiss", "fric"] {
        assert!(!allowed.contains(&k), "contacts.default lists {k}: {e}");
    }
}

#[test]
fn a_too_large_fraction_names_the_largest_safe_one() {
    let base = scene(&format!(r#""time_step_fraction": 0.9, "particles": [ {{ "position": [0, 0, 0.01], "radius": 0.005 }} ], "walls": [ {FLOOR} ]"#));
    let e = err(&base);
    has_all(&e, &["time_step_fraction", "0.9 × the Rayleigh step", "The largest safe time_step_fraction is "]);
    assert!(!e.contains("0.8999999"), "{e}");
    // every number in the message has at most 4 significant figures
    for word in e.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ';' || c == ',') {
        if let Ok(x) = word.parse::<f64>() {
            let digits = word.split('e').next().unwrap().chars().filter(|c| c.is_ascii_digit()).collect::<String>();
            assert!(digits.trim_start_matches('0').len() <= 4, "{word} ({x}) in: {e}");
        }
    }
    let safe: f64 = e.split("largest safe time_step_fraction is ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(safe > 0.0 && safe < 0.9, "{e}");
    // the fraction as printed passes
    parse(&base.replace("0.9,", &format!("{safe},")), Path::new("case.json")).expect("the largest safe fraction loads");
}

/// A run stopped by a check leaves its directory with the last good state, render.png of it and
/// the scene it ran, and names the wall the particle went through; `talus render` of that
/// directory, from another directory, draws the walls. Both backends.
#[test]
fn a_stopped_run_keeps_something_to_look_at() {
    for backend in ["cpu", "gpu"] {
        stopped_run_on(backend);
    }
}

fn stopped_run_on(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    // a fast ball onto the floor at many times its safe step, run anyway: it goes through the floor
    let text = scene(&format!(
        r#""time_step_check": "warn", "time_step": 2e-4, "particles": [ {{ "position": [0, 0, 0.006], "radius": 0.005, "velocity": [0, 0, -20] }} ],
  "walls": [ {FLOOR} ], "output": {{ "every_steps": 5 }}, "domain": {{ "min": [-0.05, -0.05, -0.01], "max": [0.05, 0.05, 0.1] }}"#
    ))
    .replace("\"time_step\": \"auto\",", "")
    .replace("\"steps\": 10", "\"steps\": 200");
    let path = dir.path().join("stop.json");
    std::fs::write(&path, text).unwrap();
    let out: PathBuf = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", path.to_str().unwrap(), "--backend", backend, "--no-progress", "--out", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{backend}: {stderr}");
    has_all(&stderr, &["run stopped at step", "contact overlap", "with wall \"floor\" (the time step is too large", "render.png of the last good state", "stopped.json"]);
    assert!(out.join("render.png").is_file() && out.join("particles.pvd").is_file(), "{stderr}");
    let snapshots: Vec<_> = std::fs::read_dir(out.join("snapshots")).unwrap().flatten().collect();
    assert!(!snapshots.is_empty());
    let stopped: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("stopped.json")).unwrap()).unwrap();
    let scene_path = PathBuf::from(stopped["scene"]["path"].as_str().unwrap());
    assert!(scene_path.is_absolute() && scene_path.is_file(), "{stopped}");
    assert!(out.join(stopped["last_good_snapshot"].as_str().unwrap()).is_file(), "{stopped}");
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_talus")).current_dir(elsewhere.path()).arg("render").arg(&out).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!stdout.contains(" 0 outline segments") && stdout.contains("outline segments"), "{stdout}");
}

/// Numbers in messages: 4 significant figures, and where two are set side by side as
/// different (a checkpoint's time step against the scene's), as many more as tell them apart.
#[test]
fn numbers_in_messages_are_short_unless_they_must_differ() {
    use talus::error::{fmt_apart, fmt_num};
    assert_eq!(fmt_num(0.8999999999999999), "0.9");
    assert_eq!(fmt_num(5.0149852633052795e-5), "5.015e-5");
    assert_eq!(fmt_apart(2e-5, 3e-5), ("2e-5".to_string(), "3e-5".to_string()));
    assert_eq!(fmt_apart(1e-4, 1.0000001e-4), ("0.0001".to_string(), "0.00010000001".to_string()));
    let (a, b) = fmt_apart(0.1, 0.1 + f64::EPSILON / 8.0);
    assert_ne!(a, b, "the nearest doubles print apart");
}

/// A directory given for the scene, and a file given for the output directory: each message
/// says which it is and what was meant.
#[test]
fn a_directory_for_a_scene_and_a_file_for_the_output_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let scenes = dir.path().join("scenes");
    std::fs::create_dir(&scenes).unwrap();
    let one_ball = scene(&format!(
        r#""particles": [ {{ "position": [0, 0, 0.01], "radius": 0.005 }} ], "walls": [ {FLOOR} ], "domain": {{ "min": [-0.05, -0.05, -0.01], "max": [0.05, 0.05, 0.1] }}"#
    ));
    std::fs::write(scenes.join("box.json"), one_ball).unwrap();
    let talus = || Command::new(env!("CARGO_BIN_EXE_talus"));
    let o = talus().args(["run", scenes.to_str().unwrap(), "--steps", "1"]).output().unwrap();
    assert!(!o.status.success());
    let msg = String::from_utf8_lossy(&o.stderr).to_string();
    has_all(&msg, &[&scenes.display().to_string(), "a directory, not a scene file", "box.json"]);
    let file = dir.path().join("taken");
    std::fs::write(&file, "keep me").unwrap();
    for out in [file.clone(), file.join("run")] {
        let o = talus().args(["run", scenes.join("box.json").to_str().unwrap(), "--steps", "1", "--backend", "cpu", "--out", out.to_str().unwrap()]).output().unwrap();
        assert!(!o.status.success());
        let msg = String::from_utf8_lossy(&o.stderr).to_string();
        has_all(&msg, &[&format!("cannot make the output directory {}", out.display()), &format!("{} is a file", file.display())]);
    }
    // nothing the user wrote is touched
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}
