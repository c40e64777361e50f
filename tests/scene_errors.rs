//! Bad scene input: every error names the key path and the offending value.

use std::path::Path;

use talus::scene;

const BASE: &str = r#"{
  "time_step": 1e-6,
  "steps": 10,
  "materials": {
    "glass": { "density": 2500, "hz_shear": 1e9, "hz_poiss": 0.3, "fric": 0.5 },
    "steel": { "density": 7800, "hz_shear": 8e10, "hz_poiss": 0.3, "fric": 0.4 }
  },
  "contacts": {
    "default": { "dp_nratio": 0.1, "dp_mode": 0 },
    "pairs": [ { "materials": ["glass", "steel"], "fric": 0.2 } ]
  },
  "particles": [
    { "position": [0, 0, 0.05], "radius": 0.01, "material": "glass" },
    { "position": [0.05, 0, 0.05], "radius": 0.01, "material": "steel" }
  ],
  "generators": [
    { "type": "random_fill", "box": { "min": [0.2, 0, 0], "max": [0.3, 0.1, 0.1] }, "count": 10,
      "radius": { "distribution": "uniform", "min": 0.002, "max": 0.003 }, "material": "glass" }
  ],
  "walls": [
    { "type": "plane", "name": "floor", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "steel" },
    { "type": "box", "name": "bin", "min": [-0.1, -0.1, 0], "max": [0.4, 0.2, 0.2], "material": "steel", "open": ["+z"] }
  ]
}"#;

fn parse(text: &str) -> talus::Result<talus::Setup> {
    scene::parse_str(text, Path::new("case.json"))
}

#[test]
fn base_scene_is_valid() {
    let s = parse(BASE).expect("base scene must parse");
    assert_eq!(s.name, "case");
    assert_eq!(s.particles.len(), 12);
    assert_eq!(s.walls.len(), 1 + 5);
    assert_eq!(s.steps, 10);
    assert_eq!(s.output_every, 1);
}

/// (name, text to replace in BASE, replacement, substrings the message must contain)
const CASES: &[(&str, &str, &str, &[&str])] = &[
    ("malformed json", "\"steps\": 10,", "\"steps\": 10,,", &["(json)", "line 3"]),
    ("unknown top-level key", "\"steps\": 10,", "\"steps\": 10, \"gravty\": [0,0,0],", &["gravty", "allowed keys", "gravity"]),
    ("unknown nested key", "\"density\": 2500,", "\"density\": 2500, \"densty\": 1,", &["materials.glass.densty", "allowed keys", "density"]),
    ("unknown generator key", "\"material\": \"glass\" }\n  ]", "\"material\": \"glass\", \"colour\": 3 }\n  ]", &["generators[0].colour", "allowed keys"]),
    ("unknown distribution key", "\"min\": 0.002, \"max\": 0.003", "\"min\": 0.002, \"max\": 0.003, \"mean\": 1", &["generators[0].radius.mean"]),
    ("negative radius", "\"radius\": 0.01, \"material\": \"glass\"", "\"radius\": -0.01, \"material\": \"glass\"", &["particles[0].radius", "-0.01"]),
    ("zero density", "\"density\": 2500", "\"density\": 0", &["materials.glass.density", "got 0"]),
    ("negative hz_shear", "\"hz_shear\": 1e9", "\"hz_shear\": -5", &["materials.glass.hz_shear", "-5"]),
    ("NaN as string", "\"radius\": 0.01, \"material\": \"glass\"", "\"radius\": \"NaN\", \"material\": \"glass\"", &["particles[0].radius", "\"NaN\"", "number"]),
    ("inf as string", "\"density\": 2500", "\"density\": \"inf\"", &["materials.glass.density", "\"inf\""]),
    ("huge number", "\"density\": 2500", "\"density\": 1e999", &["(json)"]),
    ("wrong type", "\"steps\": 10", "\"steps\": [10]", &["steps", "[10]", "integer"]),
    ("unknown material", "\"radius\": 0.01, \"material\": \"glass\"", "\"radius\": 0.01, \"material\": \"glas\"", &["particles[0].material", "\"glas\"", "glass, steel"]),
    ("unknown pair material", "[\"glass\", \"steel\"]", "[\"glass\", \"iron\"]", &["contacts.pairs[0].materials[1]", "\"iron\""]),
    ("hz_poiss 0.7", "\"hz_poiss\": 0.3, \"fric\": 0.5", "\"hz_poiss\": 0.7, \"fric\": 0.5", &["materials.glass.hz_poiss", "0.7", "(-1, 0.5]"]),
    ("hz_poiss -1", "\"hz_poiss\": 0.3, \"fric\": 0.5", "\"hz_poiss\": -1, \"fric\": 0.5", &["materials.glass.hz_poiss", "-1"]),
    ("negative fric", "\"fric\": 0.5", "\"fric\": -0.1", &["materials.glass.fric", "-0.1"]),
    ("dp_mode 5", "\"dp_mode\": 0", "\"dp_mode\": 5", &["contacts.default.dp_mode", "5", "0, 1, 2, 3"]),
    ("hz_mode 2", "\"dp_mode\": 0", "\"dp_mode\": 0, \"hz_mode\": 2", &["contacts.default.hz_mode", "2"]),
    ("dp_nratio 1.5", "\"dp_nratio\": 0.1", "\"dp_nratio\": 1.5", &["contacts.default.dp_nratio", "1.5"]),
    ("dp_sratio in pair", "\"fric\": 0.2 }", "\"fric\": 0.2, \"dp_sratio\": -0.5 }", &["contacts.pairs[0].dp_sratio", "-0.5"]),
    ("dp_alpha < 0", "\"dp_nratio\": 0.1", "\"dp_nratio\": 0.1, \"dp_alpha\": -0.25", &["contacts.default.dp_alpha", "-0.25"]),
    ("hz_alpha 0", "\"dp_nratio\": 0.1", "\"dp_nratio\": 0.1, \"hz_alpha\": 0", &["contacts.default.hz_alpha", "got 0"]),
    ("inherited key in default", "\"dp_nratio\": 0.1", "\"dp_nratio\": 0.1, \"hz_shear\": 1e9", &["contacts.default.hz_shear", "inherited from the materials", "1000000000"]),
    ("unknown contact model", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"jkr\"", &["contacts.default.model", "jkr", "hertz_mindlin"]),
    ("key of another model", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hooke\", \"dp_nratio\": 0.1", &["contacts.default.dp_nratio", "hooke", "coefficientRestitution"]),
    ("hooke without stiffness", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hooke\", \"coefficientRestitution\": 0.5", &["contacts.default", "elasticStiffness or characteristicVelocity"]),
    ("restitution out of range", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hertz_mindlin\", \"coefficientRestitution\": 1.5", &["contacts.default.coefficientRestitution", "1.5"]),
    ("unsupported hooke option", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hooke\", \"elasticStiffness\": 1e5, \"disableNormalWhenBonded\": \"on\"", &["contacts.default.disableNormalWhenBonded", "bond"]),
    ("bad switch", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hooke\", \"elasticStiffness\": 1e5, \"limitForce\": \"yes\"", &["contacts.default.limitForce", "yes"]),
    ("bad limit_damping", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hertz_mindlin\", \"limit_damping\": 2", &["case.json", "contacts.default.limit_damping", "2"]),
    ("limit_damping below the least restitution", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hertz_mindlin\", \"coefficientRestitution\": 0.1, \"limit_damping\": true", &["contacts.default", "coefficientRestitution 0.1 with limit_damping", "0.1358"]),
    ("hysteretic limit_damping below its mode's least", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hysteretic\", \"dp_mode\": 1, \"dp_en\": 0.3, \"limit_damping\": true", &["contacts.default", "dp_en 0.3 with limit_damping", "dashpot mode 1"]),
    ("hysteretic dashpot mode 3", "\"dp_nratio\": 0.1, \"dp_mode\": 0", "\"model\": \"hysteretic\", \"dp_mode\": 3", &["contacts.default.dp_mode", "3"]),
    ("box min >= max", "\"max\": [0.4, 0.2, 0.2]", "\"max\": [0.4, -0.2, 0.2]", &["walls[1].min", "-0.2", "on y"]),
    ("generator box min >= max", "\"max\": [0.3, 0.1, 0.1]", "\"max\": [0.1, 0.1, 0.1]", &["generators[0].box.min", "0.2", "0.1"]),
    ("zero normal", "\"normal\": [0, 0, 1]", "\"normal\": [0, 0, 0]", &["walls[0].normal", "[0, 0, 0]"]),
    ("unknown open face", "\"open\": [\"+z\"]", "\"open\": [\"top\"]", &["walls[1].open[0]", "\"top\""]),
    ("overlapping explicit particles", "[0.05, 0, 0.05]", "[0.015, 0, 0.05]", &["particles[1]", "particles[0]", "0.015"]),
    ("missing time_step", "\"time_step\": 1e-6,", "", &["time_step", "missing"]),
    ("time_step <= 0", "\"time_step\": 1e-6", "\"time_step\": -1e-6", &["time_step", "-1e-6"]),
    ("time_step bad string", "\"time_step\": 1e-6", "\"time_step\": \"fast\"", &["time_step", "\"fast\"", "auto"]),
    ("fraction without auto", "\"time_step\": 1e-6,", "\"time_step\": 1e-6, \"time_step_fraction\": 0.5,", &["time_step_fraction", "0.5"]),
    ("fraction out of range", "\"time_step\": 1e-6,", "\"time_step\": \"auto\", \"time_step_fraction\": 1.5,", &["time_step_fraction", "1.5"]),
    ("both duration and steps", "\"steps\": 10,", "\"steps\": 10, \"duration\": 0.5,", &["duration", "0.5", "10", "both"]),
    ("neither duration nor steps", "\"steps\": 10,", "", &["duration", "steps"]),
    ("until_rest fraction >= 1", "\"steps\": 10,", "\"steps\": 10, \"until_rest\": { \"kinetic_fraction\": 2 },", &["until_rest.kinetic_fraction", "2", "(0, 1)"]),
    ("until_rest fraction missing", "\"steps\": 10,", "\"steps\": 10, \"until_rest\": {},", &["until_rest.kinetic_fraction", "missing"]),
    ("until_rest zero outputs", "\"steps\": 10,", "\"steps\": 10, \"until_rest\": { \"kinetic_fraction\": 1e-4, \"outputs\": 0 },", &["until_rest.outputs", "0"]),
    ("until_rest unknown key", "\"steps\": 10,", "\"steps\": 10, \"until_rest\": { \"kinetic\": 1e-4 },", &["until_rest.kinetic"]),
    ("zero steps", "\"steps\": 10", "\"steps\": 0", &["steps", "got 0"]),
    ("negative count", "\"count\": 10", "\"count\": -3", &["generators[0].count", "-3"]),
    ("uniform max < min", "\"min\": 0.002, \"max\": 0.003", "\"min\": 0.002, \"max\": 0.001", &["generators[0].radius.max", "0.001"]),
    ("negative distribution min", "\"min\": 0.002, \"max\": 0.003", "\"min\": -0.002, \"max\": 0.003", &["generators[0].radius.min", "-0.002"]),
    ("unknown generator type", "\"type\": \"random_fill\"", "\"type\": \"poisson\"", &["generators[0].type", "\"poisson\""]),
    ("unknown motion key", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"speed\": 1 } }", &["walls[0].motion.speed", "allowed keys", "angular_velocity"]),
    ("rotation without axis", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"angular_velocity\": 2 } }", &["walls[0].motion.axis", "missing required key"]),
    ("zero rotation axis", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"angular_velocity\": 2, \"axis\": [0, 0, 0] } }", &["walls[0].motion.axis", "[0, 0, 0]"]),
    ("keyframe times not increasing", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"velocity\": [[0, [0, 0, 1]], [0, [0, 0, 2]]] } }", &["walls[0].motion.velocity[1][0]", "must increase", "after 0"]),
    ("negative keyframe time", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"angular_velocity\": [[-1, 2]], \"axis\": [0, 0, 1] } }", &["walls[0].motion.angular_velocity[0][0]", "-1"]),
    ("malformed keyframe", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"velocity\": [[0, [0, 0, 1], 3]] } }", &["walls[0].motion.velocity[0]", "3 entries"]),
    ("NaN wall velocity", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"motion\": { \"velocity\": [0, \"NaN\", 0] } }", &["walls[0].motion.velocity[1]", "\"NaN\""]),
    ("bad load point", "\"normal\": [0, 0, 1], \"material\": \"steel\" }", "\"normal\": [0, 0, 1], \"material\": \"steel\", \"load_point\": [0, 0] }", &["walls[0].load_point", "3 numbers"]),
    ("unknown wall type", "\"type\": \"plane\"", "\"type\": \"sphere\"", &["walls[0].type", "\"sphere\""]),
    ("output both", "\"steps\": 10,", "\"steps\": 10, \"output\": {\"every_steps\": 2, \"interval\": 0.1},", &["output.every_steps", "both"]),
    ("output every 0", "\"steps\": 10,", "\"steps\": 10, \"output\": {\"every_steps\": 0},", &["output.every_steps", "got 0"]),
    ("gravity length", "\"steps\": 10,", "\"steps\": 10, \"gravity\": [0, -9.81],", &["gravity", "[0,-9.81]"]),
    ("gravity NaN string", "\"steps\": 10,", "\"steps\": 10, \"gravity\": [0, 0, \"NaN\"],", &["gravity[2]", "\"NaN\""]),
    ("duplicate pair", "\"fric\": 0.2 }", "\"fric\": 0.2 }, { \"materials\": [\"steel\", \"glass\"] }", &["contacts.pairs[1].materials", "contacts.pairs[0]"]),
    ("overpacked random fill", "\"count\": 10", "\"count\": 100000", &["generators[0]", "packing fraction"]),
    ("fill radius too big for box", "\"min\": 0.002, \"max\": 0.003", "\"min\": 0.06, \"max\": 0.06", &["generators[0].radius", "0.06"]),
    ("generated overlaps explicit", "\"generators\": [", "\"generators\": [ { \"type\": \"lattice\", \"origin\": [0.0, 0.0, 0.05], \"count\": [1,1,1], \"spacing\": 0.1, \"radius\": 0.005, \"material\": \"glass\" },", &["generators[0]", "particles[0]"]),
    ("lattice spacing too small", "\"generators\": [", "\"generators\": [ { \"type\": \"lattice\", \"origin\": [1, 1, 1], \"count\": [2,2,2], \"spacing\": 0.001, \"radius\": 0.005, \"material\": \"glass\" },", &["generators[0].spacing", "0.001"]),
    ("lattice zero count", "\"generators\": [", "\"generators\": [ { \"type\": \"lattice\", \"origin\": [1, 1, 1], \"count\": [2,0,2], \"spacing\": 0.1, \"radius\": 0.005, \"material\": \"glass\" },", &["generators[0].count[1]", "got 0"]),
    ("generator overlaps earlier generator", "\"generators\": [", "\"generators\": [ { \"type\": \"lattice\", \"origin\": [0.1, 0.1, 0.15], \"count\": [1,1,1], \"spacing\": 0.1, \"radius\": 0.005, \"material\": \"glass\" }, { \"type\": \"lattice\", \"origin\": [0.1, 0.1, 0.155], \"count\": [1,1,1], \"spacing\": 0.1, \"radius\": 0.005, \"material\": \"glass\" },", &["generators[1]", "from generators[0]"]),
    ("missing material with two materials", ", \"material\": \"steel\" }\n  ],\n  \"generators\"", " }\n  ],\n  \"generators\"", &["particles[1].material", "missing"]),
];

#[test]
fn bad_inputs_name_key_and_value() {
    check_cases(CASES);
}

/// Every case must fail with a message starting with the file and holding its substrings.
fn check_cases(cases: &[(&str, &str, &str, &[&str])]) {
    let mut failures = Vec::new();
    for (name, from, to, expect) in cases {
        assert!(BASE.contains(from), "case {name:?}: pattern {from:?} not in BASE");
        let text = BASE.replacen(from, to, 1);
        match parse(&text) {
            Ok(_) => failures.push(format!("{name}: parsed without error")),
            Err(e) => {
                let msg = e.to_string();
                eprintln!("{name:>36}: {msg}");
                assert!(msg.starts_with("case.json: "), "{name}: {msg}");
                for s in expect.iter() {
                    if !msg.contains(s) {
                        failures.push(format!("{name}: message lacks {s:?}: {msg}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// `"measure"` entries spliced into BASE (gravity [0, 0, -9.81]): (name, entries, substrings).
const MEASURE_CASES: &[(&str, &str, &[&str])] = &[
    ("measure not an array", "{}", &["measure", "an array", "{}"]),
    ("measure without type", "[{\"axis\": [1, 0, 0]}]", &["measure[0].type", "missing"]),
    ("unknown measure type", "[{\"type\": \"angle\"}]", &["measure[0].type", "\"angle\"", "repose_angle"]),
    ("unknown measure key", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"widht\": 1}]", &["measure[0].widht", "allowed keys", "surface_fraction"]),
    ("zero axis", "[{\"type\": \"repose_angle\", \"axis\": [0, 0, 0], \"center\": [0, 0, 0]}]", &["measure[0].axis", "[0, 0, 0]", "non-zero"]),
    ("axis along gravity", "[{\"type\": \"repose_angle\", \"axis\": [0, 0, 2], \"center\": [0, 0, 0]}]", &["measure[0].axis", "[0, 0, 2]", "[0, 0, -9.81]", "perpendicular"]),
    ("missing center", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0]}]", &["measure[0].center", "missing"]),
    ("negative from_time", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"from_time\": -1}]", &["measure[0].from_time", "-1"]),
    ("every 0", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"every\": 0}]", &["measure[0].every", "got 0"]),
    ("every not an integer", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"every\": 1.5}]", &["measure[0].every", "1.5", "integer"]),
    ("surface_fraction 1.5", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"surface_fraction\": 1.5}]", &["measure[0].surface_fraction", "1.5", "(0, 1]"]),
    ("negative bin_width", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"bin_width\": -0.01}]", &["measure[0].bin_width", "-0.01"]),
    ("min_bin_count 0", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0], \"min_bin_count\": 0}]", &["measure[0].min_bin_count", "got 0"]),
    ("duplicate measure name", "[{\"type\": \"repose_angle\", \"axis\": [1, 0, 0], \"center\": [0, 0, 0]}, {\"type\": \"repose_angle\", \"axis\": [0, 1, 0], \"center\": [0, 0, 0]}]", &["measure[1].name", "\"repose_angle\"", "measure[0]"]),
];

#[test]
fn bad_measure_inputs_name_key_and_value() {
    let cases: Vec<(&str, String, &[&str])> =
        MEASURE_CASES.iter().map(|(name, list, expect)| (*name, format!("\"steps\": 10, \"measure\": {list},"), *expect)).collect();
    let cases: Vec<(&str, &str, &str, &[&str])> = cases.iter().map(|(n, to, e)| (*n, "\"steps\": 10,", to.as_str(), *e)).collect();
    check_cases(&cases);
}

#[test]
fn measure_defaults() {
    let text = BASE.replacen("\"steps\": 10,", "\"steps\": 10, \"measure\": [{\"type\": \"repose_angle\", \"axis\": [0, 2, 0], \"center\": [1, 2, 3]}],", 1);
    let s = parse(&text).unwrap();
    assert_eq!(s.measures.len(), 1);
    let m = &s.measures[0];
    assert_eq!((m.name.as_str(), m.from_time, m.every), ("repose_angle", 0.0, 1));
    let r = match &m.kind {
        talus::model::measure::MeasureKind::ReposeAngle(r) => r,
        #[allow(unreachable_patterns)] // until a second type exists
        other => panic!("expected repose_angle, got {other:?}"),
    };
    assert_eq!(r.axis.to_array(), [0.0, 1.0, 0.0]);
    assert_eq!(r.center.to_array(), [1.0, 2.0, 3.0]);
    assert_eq!((r.surface_fraction, r.bin_width, r.min_bin_count), (0.6, None, 3));
    assert!(parse(BASE).unwrap().measures.is_empty());
}

#[test]
fn zero_particles_is_an_error() {
    let text = r#"{"time_step": 1e-6, "steps": 1, "materials": {"a": {"density": 1, "hz_shear": 1}}}"#;
    let msg = parse(text).unwrap_err().to_string();
    assert!(msg.contains("particles") && msg.contains("no particles"), "{msg}");
}

#[test]
fn malformed_json_reports_line_and_column() {
    let msg = parse("{\n  \"time_step\": 1e-6\n  \"steps\": 1\n}").unwrap_err().to_string();
    assert!(msg.contains("line 3") && msg.contains("column"), "{msg}");
}

#[test]
fn every_shipped_scene_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let s = scene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!s.particles.is_empty() || !s.inserts.is_empty(), "{}: no particles and no insert", s.name);
        assert!(s.steps >= 1 && s.output_every >= 1 && s.dt > 0.0);
        eprintln!("{}: {} particles (+{} insertions), {} walls, dt {:e}, {} steps", s.name, s.particles.len(), s.inserts.len(), s.walls.len(), s.dt, s.steps);
        n += 1;
    }
    assert!(n >= 4, "expected at least 4 scenes, found {n}");
}

#[test]
fn shipped_scene_properties() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let s = scene::load(&dir.join("settle_box.json")).unwrap();
    assert!(s.particles.len() >= 10_000);
    assert!(s.steps <= 2000);
    assert_eq!(s.output_every, 100);
    assert!(matches!(s.dt_choice, talus::setup::TimeStepChoice::Auto { .. }));
    assert_eq!(s.walls.len(), 5);
    let s = scene::load(&dir.join("two_ball_elastic.json")).unwrap();
    assert_eq!(s.particles.len(), 2);
    assert_eq!(s.gravity, [0.0; 3]);
    assert_eq!(s.steps, 2500);
}

#[test]
fn defaults_and_conversions() {
    let text = r#"{"time_step": 1e-3, "duration": 1.0, "output": {"interval": 0.05},
        "materials": {"a": {"density": 1000, "hz_shear": 1e6}},
        "particles": [{"position": [0,0,0], "radius": 0.5}],
        "walls": [{"type": "plane", "point": [0,0,-1], "normal": [0,0,2]}]}"#;
    let s = parse(text).unwrap();
    assert_eq!(s.steps, 1000);
    assert_eq!(s.output_every, 50);
    assert_eq!(s.snapshot_every, 10);
    assert_eq!(s.gravity, [0.0, 0.0, -9.81]);
    assert_eq!(s.walls[0].normal, [0.0, 0.0, 1.0]);
    assert_eq!(s.walls[0].name, "wall0");
    assert_eq!(s.materials[0].hz_poiss, 0.0);
    assert_eq!(s.materials[0].fric, 0.0);
    // domain: particle box padded by 2 max radii
    assert_eq!(s.domain.min, [-1.5, -1.5, -1.5]);
    assert_eq!(s.domain.max, [1.5, 1.5, 1.5]);

    // 0.5 × Rayleigh is ~3 steps per collision for this soft ball at its impact speed: the
    // time-step check rejects it unless told to warn only
    let auto = text.replace("\"time_step\": 1e-3", "\"time_step\": \"auto\", \"time_step_fraction\": 0.5, \"time_step_check\": \"warn\"");
    let s = parse(&auto).unwrap();
    let rayleigh = std::f64::consts::PI * 0.5 * (1000.0f64 / 1e6).sqrt() / 0.8766;
    match s.dt_choice {
        talus::setup::TimeStepChoice::Auto { fraction, rayleigh: r } => {
            assert_eq!(fraction, 0.5);
            assert!((r - rayleigh).abs() < 1e-12 * rayleigh);
        }
        _ => panic!("expected auto"),
    }
    assert!((s.dt - 0.5 * rayleigh).abs() < 1e-12 * rayleigh);
}

#[test]
fn box_wall_normals_point_inward() {
    let text = r#"{"time_step": 1e-3, "steps": 1,
        "materials": {"a": {"density": 1000, "hz_shear": 1e6}},
        "particles": [{"position": [0.5,0.5,0.5], "radius": 0.1}],
        "walls": [{"type": "box", "name": "bin", "min": [0,0,0], "max": [1,1,1], "open": ["+z", "-y"]}]}"#;
    let s = parse(text).unwrap();
    assert_eq!(s.walls.len(), 4);
    for w in &s.walls {
        // the box centre is on the positive side of every face
        let c = [0.5, 0.5, 0.5];
        let d: f64 = (0..3).map(|k| (c[k] - w.point[k]) * w.normal[k]).sum();
        assert!(d > 0.0, "{w:?}");
    }
    let names: Vec<&str> = s.walls.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["bin-x", "bin+x", "bin+y", "bin-z"]);
}

const MESH_BASE: &str = r#"{
  "time_step": 1e-6,
  "steps": 10,
  "materials": {
    "glass": { "density": 2500, "hz_shear": 1e9 },
    "steel": { "density": 7800, "hz_shear": 8e10 }
  },
  "particles": [ { "position": [0, 0, 0.5], "radius": 0.01, "material": "glass" } ],
  "walls": [
    { "type": "plane", "point": [0, 0, -1], "normal": [0, 0, 1], "material": "steel" },
    { "type": "mesh", "name": "hopper", "file": "hopper.stl", "material": "steel",
      "transform": { "scale": 0.5, "axis": [1, 0, 0], "angle": 90, "translation": [0, 0, 0.1] } }
  ]
}"#;

/// (name, text to replace in MESH_BASE, replacement, substrings the message must contain)
const MESH_CASES: &[(&str, &str, &str, &[&str])] = &[
    ("unknown mesh key", "\"material\": \"steel\",\n      \"transform\"", "\"material\": \"steel\", \"colour\": 1,\n      \"transform\"", &["walls[1].colour", "allowed keys", "two_sided"]),
    ("missing file key", "\"file\": \"hopper.stl\", ", "", &["walls[1].file", "missing"]),
    ("file not found", "hopper.stl", "nothere.stl", &["walls[1].file", "nothere.stl"]),
    ("file not STL", "hopper.stl", "junk.stl", &["walls[1].file", "junk.stl", "not ASCII STL"]),
    ("degenerate facet", "hopper.stl", "flat.stl", &["walls[1].file", "flat.stl", "triangle 1", "degenerate"]),
    ("file not a string", "\"hopper.stl\"", "7", &["walls[1].file", "string", "7"]),
    ("negative scale", "\"scale\": 0.5", "\"scale\": -2", &["walls[1].transform.scale", "-2"]),
    ("zero scale component", "\"scale\": 0.5", "\"scale\": [1, 0, 1]", &["walls[1].transform.scale[1]", "got 0"]),
    ("scale string", "\"scale\": 0.5", "\"scale\": \"big\"", &["walls[1].transform.scale", "\"big\""]),
    ("zero rotation axis", "\"axis\": [1, 0, 0]", "\"axis\": [0, 0, 0]", &["walls[1].transform.axis", "[0, 0, 0]"]),
    ("NaN angle", "\"angle\": 90", "\"angle\": \"NaN\"", &["walls[1].transform.angle", "\"NaN\""]),
    ("unknown transform key", "\"angle\": 90,", "\"angle\": 90, \"shear\": 1,", &["walls[1].transform.shear", "allowed keys", "translation"]),
    ("translation length", "\"translation\": [0, 0, 0.1]", "\"translation\": [0, 0.1]", &["walls[1].transform.translation", "3 numbers"]),
    ("two_sided not a boolean", "\"material\": \"steel\",\n      \"transform\"", "\"material\": \"steel\", \"two_sided\": \"yes\",\n      \"transform\"", &["walls[1].two_sided", "\"yes\"", "true or false"]),
    ("rotation without axis", "\"material\": \"steel\",\n      \"transform\"", "\"material\": \"steel\", \"motion\": { \"angular_velocity\": 1 },\n      \"transform\"", &["walls[1].motion.axis", "missing"]),
    ("bad load point", "\"material\": \"steel\",\n      \"transform\"", "\"material\": \"steel\", \"load_point\": [0, 0],\n      \"transform\"", &["walls[1].load_point", "3 numbers"]),
    ("unknown mesh material", "\"material\": \"steel\",\n      \"transform\"", "\"material\": \"iron\",\n      \"transform\"", &["walls[1].material", "\"iron\""]),
];

/// A directory with the mesh files the cases use: a small hopper (binary STL), a file that is
/// not STL and an ASCII STL with a degenerate facet.
fn mesh_dir() -> tempfile::TempDir {
    use glam::DVec3;
    let dir = tempfile::tempdir().unwrap();
    let hopper = talus::mesh::generate::hopper(0.05, 0.0, 0.2, 0.3, 16, 2);
    talus::mesh::stl::write_stl_binary(&dir.path().join("hopper.stl"), &hopper).unwrap();
    std::fs::write(dir.path().join("junk.stl"), b"this is not a mesh").unwrap();
    let v = |x: f64, y: f64| DVec3::new(x, y, 0.0);
    let flat = [[v(0.0, 0.0), v(1.0, 0.0), v(0.0, 1.0)], [v(0.0, 0.0), v(1.0, 0.0), v(2.0, 0.0)]];
    std::fs::write(dir.path().join("flat.stl"), talus::mesh::stl::binary_stl_bytes(&flat)).unwrap();
    dir
}

#[test]
fn mesh_wall_errors_name_file_key_and_value() {
    let dir = mesh_dir();
    let scene = dir.path().join("mesh_case.json");
    let mut failures = Vec::new();
    for (name, from, to, expect) in MESH_CASES {
        assert!(MESH_BASE.contains(from), "case {name:?}: pattern {from:?} not in MESH_BASE");
        std::fs::write(&scene, MESH_BASE.replacen(from, to, 1)).unwrap();
        match scene::load(&scene) {
            Ok(_) => failures.push(format!("{name}: loaded without error")),
            Err(e) => {
                let msg = e.to_string();
                eprintln!("{name:>28}: {msg}");
                assert!(msg.starts_with(&format!("{}: ", scene.display())), "{name}: {msg}");
                failures.extend(expect.iter().filter(|s| !msg.contains(*s)).map(|s| format!("{name}: message lacks {s:?}: {msg}")));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), MESH_CASES.len(), failures.join("\n"));
}

#[test]
fn mesh_wall_keys_and_defaults() {
    use glam::DVec3;
    let dir = mesh_dir();
    let path = dir.path().join("mesh_ok.json");
    std::fs::write(&path, MESH_BASE.replace("\"material\": \"steel\",\n      \"transform\"", "\"material\": \"steel\", \"two_sided\": true,\n      \"transform\"")).unwrap();
    let s = scene::load(&path).unwrap();
    assert_eq!((s.walls.len(), s.meshes.len()), (1, 1));
    let m = &s.meshes[0];
    assert_eq!((m.name.as_str(), m.material, m.mesh.two_sided, m.mesh.len()), ("hopper", 1, true, 64));
    // scale 0.5, a quarter turn about x (z → −y), then up by 0.1: the axis now runs along −y
    let (lo, hi) = m.mesh.bounds();
    assert!((lo.y + 0.15).abs() < 1e-7 && hi.y.abs() < 1e-7 && (hi.x - 0.1).abs() < 1e-7 && (hi.z - 0.2).abs() < 1e-7, "placed at [{lo}, {hi}]");
    let centre = (lo + hi) * 0.5;
    assert_eq!(DVec3::from(m.load_point), centre, "default load point: the box centre");
    assert_eq!(m.motion.center, centre, "default rotation centre: the box centre");
    assert!(m.motion.is_static());
    assert!(s.domain.min[0] <= lo.x && s.domain.min[1] <= lo.y && s.domain.max[2] >= hi.z, "the default domain holds the mesh: {:?}", s.domain);
    assert_eq!(s.load_points().iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["wall0", "hopper"]);
}

// ---- clump templates ----

/// `"clump_templates"` lists spliced into BASE (materials glass, 2500 kg/m³, and steel):
/// (name, list, substrings the message must contain).
const CLUMP_CASES: &[(&str, &str, &[&str])] = &[
    ("clump_templates not an array", "{}", &["clump_templates", "an array", "{}"]),
    ("template unknown key", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"colour\": 1}]", &["clump_templates[0].colour", "allowed keys", "override"]),
    ("template without name", "[{\"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]]}]", &["clump_templates[0].name", "missing"]),
    ("empty template", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": []}]", &["clump_templates[0].spheres", "at least one sphere", "[]"]),
    ("neither spheres nor file", "[{\"name\": \"a\", \"material\": \"glass\"}]", &["clump_templates[0].spheres", "missing", "file"]),
    ("both spheres and file", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"file\": \"a.csv\"}]", &["clump_templates[0].file", "not both", "a.csv"]),
    ("negative radius", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1], [1, 0, 0, -0.5]]}]", &["clump_templates[0].spheres[1][3]", "-0.5", "> 0"]),
    ("zero radius", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 0]]}]", &["clump_templates[0].spheres[0][3]", "got 0"]),
    ("NaN radius", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, \"NaN\"]]}]", &["clump_templates[0].spheres[0][3]", "\"NaN\""]),
    ("sphere of 3 numbers", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 1]]}]", &["clump_templates[0].spheres[0]", "4 numbers", "[0,0,1]"]),
    ("duplicate template name", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]]}, {\"name\": \"a\", \"material\": \"steel\", \"spheres\": [[0, 0, 0, 2]]}]", &["clump_templates[1].name", "\"a\"", "clump_templates[0]"]),
    ("unknown template material", "[{\"name\": \"a\", \"material\": \"iron\", \"spheres\": [[0, 0, 0, 1]]}]", &["clump_templates[0].material", "\"iron\"", "glass, steel"]),
    ("missing template material", "[{\"name\": \"a\", \"spheres\": [[0, 0, 0, 1]]}]", &["clump_templates[0].material", "missing"]),
    ("override unknown key", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [1, 1, 1], \"centre\": [0, 0, 0]}}]", &["clump_templates[0].override.centre", "allowed keys", "orientation"]),
    ("override triangle inequality", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [1, 2, 4]}}]", &["clump_templates[0].override.moments", "triangle inequality", "[1, 2, 4]"]),
    ("override zero moment", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [0, 1, 1]}}]", &["clump_templates[0].override.moments", "> 0", "[0, 1, 1]"]),
    ("override negative moment", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [1, -1, 1]}}]", &["clump_templates[0].override.moments", "-1"]),
    ("override negative mass", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": -3, \"moments\": [1, 1, 1]}}]", &["clump_templates[0].override.mass", "-3"]),
    ("override zero orientation", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [1, 1, 1], \"orientation\": [0, 0, 0, 0]}}]", &["clump_templates[0].override.orientation", "non-zero", "[0,0,0,0]"]),
    ("override orientation of 3", "[{\"name\": \"a\", \"material\": \"glass\", \"spheres\": [[0, 0, 0, 1]], \"override\": {\"mass\": 1, \"moments\": [1, 1, 1], \"orientation\": [1, 0, 0]}}]", &["clump_templates[0].override.orientation", "4 numbers", "[1,0,0]"]),
];

#[test]
fn bad_clump_templates_name_key_and_value() {
    let cases: Vec<(&str, String, &[&str])> =
        CLUMP_CASES.iter().map(|(name, list, expect)| (*name, format!("\"steps\": 10, \"clump_templates\": {list},"), *expect)).collect();
    let cases: Vec<(&str, &str, &str, &[&str])> = cases.iter().map(|(n, to, e)| (*n, "\"steps\": 10,", to.as_str(), *e)).collect();
    check_cases(&cases);
}

/// A directory with template CSV files: a good one (comments, blank lines, a header) and bad
/// ones.
fn clump_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    w("tablet.csv", "# a tablet: two overlapping spheres\nx, y, z, r\n\n0, 0, 0, 0.001   # left\n0.0012, 0, 0, 0.001\n");
    w("letters.csv", "x,y,z,r\n0,0,0,0.001\n0.001,0,zero,0.001\n");
    w("short.csv", "0,0,0,0.001\n\n0.001,0,0\n");
    w("nan.csv", "# header-less\n0,0,0,NaN\n");
    w("negative.csv", "0,0,0,0.001\n1,0,0,-0.001\n");
    w("empty.csv", "# only a comment\n\nx,y,z,r\n");
    dir
}

/// (name, the template's `file`, substrings the message must contain besides the scene key).
const CLUMP_FILE_CASES: &[(&str, &str, &[&str])] = &[
    ("word in a CSV line", "letters.csv", &["letters.csv line 3", "0.001,0,zero,0.001"]),
    ("short CSV line", "short.csv", &["short.csv line 3", "4 numbers", "0.001,0,0"]),
    ("NaN radius in CSV", "nan.csv", &["nan.csv line 2", "finite", "NaN"]),
    ("negative radius in CSV", "negative.csv", &["negative.csv line 2", "> 0", "-0.001"]),
    ("CSV without spheres", "empty.csv", &["empty.csv", "no spheres"]),
    ("CSV not found", "nothere.csv", &["nothere.csv", "cannot read"]),
];

#[test]
fn bad_clump_template_files_name_file_line_and_value() {
    let dir = clump_dir();
    let scene = dir.path().join("clump_case.json");
    let mut failures = Vec::new();
    for (name, file, expect) in CLUMP_FILE_CASES {
        let list = format!("[{{\"name\": \"t\", \"material\": \"glass\", \"file\": \"{file}\"}}]");
        std::fs::write(&scene, BASE.replacen("\"steps\": 10,", &format!("\"steps\": 10, \"clump_templates\": {list},"), 1)).unwrap();
        match scene::load(&scene) {
            Ok(_) => failures.push(format!("{name}: loaded without error")),
            Err(e) => {
                let msg = e.to_string();
                eprintln!("{name:>28}: {msg}");
                assert!(msg.starts_with(&format!("{}: clump_templates[0].file: ", scene.display())), "{name}: {msg}");
                failures.extend(expect.iter().filter(|s| !msg.contains(*s)).map(|s| format!("{name}: message lacks {s:?}: {msg}")));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CLUMP_FILE_CASES.len(), failures.join("\n"));
}

#[test]
fn clump_templates_inline_and_from_csv() {
    use std::f64::consts::PI;
    let dir = clump_dir();
    let path = dir.path().join("clumps.json");
    // an inline dumbbell of separate steel spheres (exact), the CSV tablet of glass (two equal
    // overlapping spheres: two balls minus the lens), and the tablet again with an override
    let list = r#"[
      { "name": "dumbbell", "material": "steel", "spheres": [[0, 0, 0, 0.002], [0, 0, 0.005, 0.001]] },
      { "name": "tablet", "material": "glass", "file": "tablet.csv" },
      { "name": "given", "material": "glass", "file": "tablet.csv",
        "override": { "mass": 1e-5, "moments": [3e-12, 2e-12, 2e-12], "orientation": [1, 0, 0, 0] } }
    ]"#;
    std::fs::write(&path, BASE.replacen("\"steps\": 10,", &format!("\"steps\": 10, \"clump_templates\": {list},"), 1)).unwrap();
    let s = scene::load(&path).unwrap();
    assert_eq!(s.clump_templates.len(), 3);
    assert_eq!(s.particles.len(), 12, "the sphere part of the scene is unchanged");
    assert_eq!(s.input_files, vec![dir.path().join("tablet.csv"), dir.path().join("tablet.csv")]);

    // dumbbell: balls of 2 mm at 0 and 1 mm at 5 mm, steel 7800 kg/m³
    let d = &s.clump_templates[0];
    assert_eq!((d.name.as_str(), d.material), ("dumbbell", 1));
    let (m1, m2) = (7800.0 * 4.0 / 3.0 * PI * 0.002f64.powi(3), 7800.0 * 4.0 / 3.0 * PI * 0.001f64.powi(3));
    let zbar = 0.005 * m2 / (m1 + m2);
    let axial = 0.4 * (m1 * 0.002f64.powi(2) + m2 * 0.001f64.powi(2));
    let transverse = axial + m1 * zbar * zbar + m2 * (0.005 - zbar).powi(2);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b.abs();
    assert!(close(d.mass, m1 + m2, 1e-13), "{}", d.mass);
    assert!(close(d.principal_moments[0], axial, 1e-12), "{:?}", d.principal_moments);
    assert!(close(d.principal_moments[1], transverse, 1e-12) && close(d.principal_moments[2], transverse, 1e-12), "{:?}", d.principal_moments);
    assert!(close(d.centre[2], zbar, 1e-12));
    assert!(close(d.bounding_radius, 0.005 - zbar + 0.001, 1e-12));

    // tablet: r = 1 mm at 0 and 1.2 mm on x; the lens is two caps of height h = r − 0.6 mm
    let t = &s.clump_templates[1];
    assert_eq!((t.name.as_str(), t.material, t.spheres.len()), ("tablet", 0, 2));
    let (r, h) = (0.001f64, 0.0004f64);
    let cap_v = PI * h * h * (3.0 * r - h) / 3.0;
    let volume = 2.0 * 4.0 / 3.0 * PI * r.powi(3) - 2.0 * cap_v;
    assert!(close(t.volume, volume, 1e-10), "{} vs {volume}", t.volume);
    assert!(close(t.mass, 2500.0 * volume, 1e-10));
    // axial moment: two balls minus two caps, each cap's axial moment π h³ (3h² − 15 r h + 20 r²)/30
    let cap_axial = PI * h.powi(3) * (3.0 * h * h - 15.0 * r * h + 20.0 * r * r) / 30.0;
    let axial = 2500.0 * (2.0 * 8.0 * PI * r.powi(5) / 15.0 - 2.0 * cap_axial);
    assert!(close(t.principal_moments[0], axial, 1e-9), "{:?} vs {axial}", t.principal_moments);
    assert!(t.principal_moments[1] > t.principal_moments[0] && close(t.principal_moments[1], t.principal_moments[2], 1e-9));
    assert!(close(t.centre[0], 0.0006, 1e-12) && t.centre[1].abs() < 1e-15 && t.centre[2].abs() < 1e-15, "{:?}", t.centre);

    // override: the given mass and moments, ascending; the same spheres about the same centre
    let g = &s.clump_templates[2];
    assert_eq!((g.mass, g.principal_moments, g.volume), (1e-5, [2e-12, 2e-12, 3e-12], t.volume));
    assert_eq!(g.centre, t.centre);
    let back = g.user_spheres();
    assert!((back[1][0] - 0.0012).abs() < 1e-15 && back[1][1].abs() < 1e-15 && back[1][2].abs() < 1e-15, "{back:?}");

    // sphere scenes have none
    assert!(parse(BASE).unwrap().clump_templates.is_empty());
}
