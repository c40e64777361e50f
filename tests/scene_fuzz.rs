//! Seeded mutation fuzzing of scene loading (a small xorshift generator, no dependency):
//! mutated keys and types, huge and tiny numbers, deep nesting, truncated text and random STL
//! bytes. Loading must never panic and never hang, and every failure must be a scene or I/O
//! error naming the file. Bounded: a fixed number of cases, well under 30 s in --release.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talus::TalusError;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn base_scene(mesh: &str) -> Value {
    json!({
        "time_step": "auto", "steps": 20, "output": { "every_steps": 10 }, "snapshot_every": 1,
        "gravity": [0, 0, -9.81],
        "materials": { "glass": { "density": 2500, "hz_shear": 1e8, "hz_poiss": 0.3, "fric": 0.5 },
                       "steel": { "density": 7800, "youngsModulus": 2e11, "poissonsRatio": 0.3 } },
        "contacts": { "default": { "model": "hertz", "dp_nratio": 0.1 }, "pairs": [ { "materials": ["glass", "steel"], "fric": 0.3 } ] },
        "particles": [ { "position": [0.0, 0.0, 0.02], "radius": 0.002, "velocity": [0, 0, -1], "material": "glass" } ],
        "generators": [ { "type": "lattice", "origin": [0.01, 0.01, 0.01], "count": [2, 2, 2], "spacing": 0.005, "radius": 0.002, "material": "glass" },
                        { "type": "random_fill", "box": { "min": [-0.02, -0.02, 0.03], "max": [0.02, 0.02, 0.05] }, "count": 5,
                          "radius": { "distribution": "uniform", "min": 0.001, "max": 0.002 }, "material": "steel", "seed": 3 } ],
        "walls": [ { "type": "box", "min": [-0.03, -0.03, 0], "max": [0.03, 0.03, 0.1], "material": "steel", "open": ["+z"] },
                   { "type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "steel", "motion": { "velocity": [0, 0, 0.01] } },
                   { "type": "mesh", "file": mesh, "material": "steel", "transform": { "scale": 0.01 } } ],
        "insert": [ { "region": { "type": "box", "min": [-0.02, -0.02, 0.06], "max": [0.02, 0.02, 0.08] }, "rate": 1000, "count": 10,
                      "radius": 0.001, "material": "glass" } ],
        "outlets": [ { "name": "out", "plane": { "point": [0, 0, -0.05], "normal": [0, 0, 1] } } ],
        "lost_particles": "remove",
        "time_step_check": "error"
    })
}

/// Values a mutation puts in: wrong types, huge, tiny, negative, special strings, nesting.
fn odd_value(rng: &mut XorShift) -> Value {
    match rng.below(16) {
        0 => json!(null),
        1 => json!(true),
        2 => json!("auto"),
        3 => json!(""),
        4 => json!(1e300),
        5 => json!(-1e300),
        6 => json!(1e-300),
        7 => json!(-1),
        8 => json!(0),
        9 => json!(u64::MAX),
        10 => json!(1.5),
        11 => json!([]),
        12 => json!({}),
        13 => json!([1e308, -1e308, 5e-324]),
        14 => {
            // deep nesting
            let mut v = json!(1);
            for _ in 0..(1 + rng.below(200)) {
                v = json!([v]);
            }
            v
        }
        _ => json!("NaN"),
    }
}

/// Paths to every value of `v` (object keys and array indices).
fn paths(v: &Value, here: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                here.push(PathStep::Key(k.clone()));
                paths(c, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                here.push(PathStep::Index(i));
                paths(c, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

fn mutate(v: &mut Value, rng: &mut XorShift) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = all[rng.below(all.len())].clone();
    let target = at(v, &path);
    match rng.below(5) {
        0 | 1 => *target = odd_value(rng),
        2 => {
            // delete a key, or add an unknown one
            if let Value::Object(m) = target {
                if !m.is_empty() && rng.below(2) == 0 {
                    let k = m.keys().nth(rng.below(m.len())).unwrap().clone();
                    m.remove(&k);
                } else {
                    m.insert("bogus_key".into(), odd_value(rng));
                }
            } else {
                *target = odd_value(rng);
            }
        }
        3 => {
            // scale a number by a huge or tiny factor
            if let Some(x) = target.as_f64() {
                let f = [1e30, 1e-30, -1.0, 1e10, 0.0, 1e-10][rng.below(6)];
                *target = json!(x * f);
            } else {
                *target = odd_value(rng);
            }
        }
        _ => {
            // wrap in an array or object
            let old = target.take();
            *target = if rng.below(2) == 0 { json!([old]) } else { json!({ "x": old }) };
        }
    }
}

fn load(text: &str, path: &Path) -> Result<Result<talus::Setup, TalusError>, String> {
    catch_unwind(AssertUnwindSafe(|| talus::scene::parse_str(text, path))).map_err(|p| {
        p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
    })
}

fn check_error(e: &TalusError, input: &str) {
    match e {
        TalusError::Scene { file, key, message } => {
            assert!(file.ends_with("fuzz.json") || file.extension().is_some_and(|x| x == "stl" || x == "data"), "{e} for {input}");
            assert!(!key.is_empty() || !message.is_empty(), "{e}");
        }
        TalusError::Io { .. } => {}
        other => panic!("not a scene error: {other:?} for {input}"),
    }
}

/// A fresh temporary directory, removed when it drops.
fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn mutated_scenes_load_or_fail_with_a_scene_error() {
    let d = dir();
    let mesh = std::fs::canonicalize("scenes/meshes/hopper.stl").unwrap();
    let base = base_scene(mesh.to_str().unwrap());
    let path = d.path().join("fuzz.json");
    // the base scene itself loads
    talus::scene::parse_str(&base.to_string(), &path).expect("the base scene loads");
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let t0 = Instant::now();
    let (mut ok, mut failed) = (0, 0);
    for case in 0..1500 {
        let mut v = base.clone();
        for _ in 0..(1 + rng.below(3)) {
            mutate(&mut v, &mut rng);
        }
        let mut text = v.to_string();
        if rng.below(20) == 0 {
            // truncated or garbled text
            let cut = rng.below(text.len());
            text.truncate(cut);
        }
        let started = Instant::now();
        match load(&text, &path) {
            Err(panic) => panic!("case {case} panicked: {panic}\ninput: {text}"),
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => {
                check_error(&e, &text);
                failed += 1;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(5), "case {case} took {:?}: {text}", started.elapsed());
    }
    assert!(ok > 0 && failed > 0, "ok {ok}, failed {failed}");
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
}

#[test]
fn random_stl_bytes_fail_with_an_error_naming_the_file() {
    let d = dir();
    let mut rng = XorShift(12345);
    for case in 0..300 {
        let stl = d.path().join(format!("m{case}.stl"));
        let n = rng.below(400);
        let mut bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        if rng.below(3) == 0 {
            // a binary header claiming many triangles
            bytes = vec![0u8; 80];
            bytes.extend_from_slice(&(rng.next() as u32).to_le_bytes());
            bytes.extend((0..rng.below(200)).map(|_| rng.next() as u8));
        } else if rng.below(2) == 0 {
            let mut t = String::from("solid x\n facet normal 0 0 1\n  outer loop\n");
            for _ in 0..3 {
                t += &format!("   vertex {} {} {}\n", [1e300, -0.0, 1.0, 5e-324, f64::MAX][rng.below(5)], rng.below(3), "nan");
            }
            bytes = t.into_bytes();
        }
        std::fs::write(&stl, &bytes).unwrap();
        let scene = base_scene(stl.to_str().unwrap()).to_string();
        match load(&scene, &d.path().join("fuzz.json")) {
            Err(panic) => panic!("STL case {case} panicked: {panic}"),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => check_error(&e, &format!("STL case {case}")),
        }
    }
}

/// The corpus of issue 13 as regression cases: each gets a clear error naming key and value.
#[test]
fn issue_corpus() {
    let d = dir();
    let path = d.path().join("fuzz.json");
    let cases: [(&str, &str); 3] = [
        (r#"{"time_step": 1e-3, "steps": 2000, "materials": {"g": {"density": 2500, "hz_shear": 2.9e10, "hz_poiss": 0.25}}, "generators": [{"type": "lattice", "origin": [0.005,0.005,0.005], "count": [2,2,2], "spacing": 0.0105, "radius": 0.005}], "walls": [{"type": "box", "min": [0,0,0], "max": [0.05,0.05,0.1]}]}"#, "time_step: dt = 0.001 s"),
        (r#"{"time_step": 1e-6, "steps": 10, "materials": {"g": {"density": 2500, "hz_shear": 1e9}}, "particles": [{"position": [1e300, 0, 0], "radius": 0.001}]}"#, "particles[0].position: [1e300, 0, 0]"),
        (r#"{"time_step": 1e30, "steps": 10, "materials": {"g": {"density": 2500, "hz_shear": 1e9}}, "particles": [{"position": [0, 0, 0], "radius": 0.001, "velocity": [1, 0, 0]}]}"#, "time_step: dt = 1e30 s"),
    ];
    for (text, want) in cases {
        let e = talus::scene::parse_str(text, &path).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    let v = r#"{"time_step": 1e-6, "steps": 10, "materials": {"g": {"density": 2500, "hz_shear": 1e9}}, "particles": [{"position": [0, 0, 0], "radius": 0.001, "velocity": [1e308, 0, 0]}]}"#;
    let e = talus::scene::parse_str(v, &path).unwrap_err().to_string();
    assert!(e.contains("particles[0].velocity") && e.contains("1e308"), "{e}");
}
