//! Property inheritance (spec hertz-pfc.txt eqs 18–20) through the scene loader.

use std::path::Path;

use talus::scene;

const SCENE: &str = r#"{
  "time_step": 1e-6, "steps": 1,
  "materials": {
    "a": { "density": 2000, "hz_shear": 1.0e9, "hz_poiss": 0.3, "fric": 0.0 },
    "b": { "density": 2000, "hz_shear": 2.0e9, "hz_poiss": 0.2, "fric": 0.5 },
    "c": { "density": 2000, "hz_shear": 3.0e9, "hz_poiss": 0.1, "fric": 0.7 }
  },
  "contacts": {
    "default": { "hz_alpha": 1.4, "dp_nratio": 0.2, "dp_sratio": 0.1, "dp_mode": 3, "hz_mode": 1, "rgap": 1e-5, "dp_alpha": 0.25 }
    PAIRS
  },
  "particles": [
    { "position": [-0.1, 0, 0], "radius": 0.1, "material": "a" },
    { "position": [0.1, 0, 0], "radius": 0.1, "material": "b" }
  ]
}"#;

fn load(pairs: &str) -> talus::Setup {
    scene::parse_str(&SCENE.replace("PAIRS", pairs), Path::new("inherit.json")).unwrap()
}

fn idx(s: &talus::Setup, name: &str) -> u32 {
    s.materials.iter().position(|m| m.name == name).unwrap() as u32
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// Eqs (18)–(19) written out independently of `contact::params`.
fn expected(g1: f64, n1: f64, g2: f64, n2: f64) -> (f64, f64) {
    let e_star = 1.0 / ((1.0 - n1) / (2.0 * g1) + (1.0 - n2) / (2.0 * g2));
    let g_star = 1.0 / ((2.0 - n1) / g1 + (2.0 - n2) / g2);
    let nu = (4.0 * g_star - e_star) / (2.0 * g_star - e_star);
    (2.0 * g_star * (2.0 - nu), nu)
}

#[test]
fn spec_example_pair() {
    let s = load("");
    let (a, b) = (idx(&s, "a"), idx(&s, "b"));
    let p = s.pairs.get(a, b);
    // By hand: E* = 1/(0.7/2e9 + 0.8/4e9) = 20/11 GPa, G* = 1/(1.7/1e9 + 1.8/2e9) = 5/13 GPa,
    // ν = (20/13 - 20/11)/(10/13 - 20/11) = 4/15, G = 2 (5/13)(2 - 4/15) GPa = 4/3 GPa.
    let (g, nu) = expected(1e9, 0.3, 2e9, 0.2);
    assert!(rel(g, 4.0e9 / 3.0) < 1e-12, "{g}");
    assert!(rel(nu, 4.0 / 15.0) < 1e-12, "{nu}");
    assert!(rel(p.hz_shear, 4.0e9 / 3.0) < 1e-12, "G = {}", p.hz_shear);
    assert!(rel(p.hz_poiss, 4.0 / 15.0) < 1e-12, "ν = {}", p.hz_poiss);
    assert_eq!(p.fric, 0.0);
    // Non-inherited keys come from contacts.default.
    assert_eq!(p.hz_alpha, 1.4);
    assert_eq!(p.dp_nratio, 0.2);
    assert_eq!(p.dp_sratio, 0.1);
    assert_eq!(p.dp_mode, 3);
    assert_eq!(p.hz_mode, 1);
    assert_eq!(p.rgap, 1e-5);
    assert_eq!(p.dp_alpha, 0.25);
}

#[test]
fn all_pairs_inherit_and_table_is_symmetric() {
    let s = load("");
    let n = s.materials.len() as u32;
    assert_eq!(s.pairs.n_materials, 3);
    for i in 0..n {
        for j in 0..n {
            let (mi, mj) = (&s.materials[i as usize], &s.materials[j as usize]);
            let p = s.pairs.get(i, j);
            assert_eq!(p, s.pairs.get(j, i), "({i},{j}) not symmetric");
            let (g, nu) = expected(mi.hz_shear, mi.hz_poiss, mj.hz_shear, mj.hz_poiss);
            assert!(rel(p.hz_shear, g) < 1e-12);
            assert!((p.hz_poiss - nu).abs() < 1e-12);
            assert_eq!(p.fric, mi.fric.min(mj.fric));
            if i == j {
                // A material in contact with itself keeps its own G and ν.
                assert!(rel(p.hz_shear, mi.hz_shear) < 1e-12);
                assert!((p.hz_poiss - mi.hz_poiss).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn pair_entry_overrides_inheritance() {
    let s = load(r#", "pairs": [ { "materials": ["b", "a"], "hz_shear": 5e8, "fric": 0.1, "dp_nratio": 0.9 } ]"#);
    let (a, b, c) = (idx(&s, "a"), idx(&s, "b"), idx(&s, "c"));
    for p in [s.pairs.get(a, b), s.pairs.get(b, a)] {
        assert_eq!(p.hz_shear, 5e8);
        assert_eq!(p.fric, 0.1);
        assert_eq!(p.dp_nratio, 0.9);
        // not given → still inherited / default
        assert!(rel(p.hz_poiss, 4.0 / 15.0) < 1e-12);
        assert_eq!(p.dp_sratio, 0.1);
        assert_eq!(p.hz_alpha, 1.4);
    }
    // other pairs untouched
    let p = s.pairs.get(a, c);
    let (g, _) = expected(1e9, 0.3, 3e9, 0.1);
    assert!(rel(p.hz_shear, g) < 1e-12);
    assert_eq!(p.fric, 0.0);
    assert_eq!(p.dp_nratio, 0.2);
    let p = s.pairs.get(b, b);
    assert!(rel(p.hz_shear, 2e9) < 1e-12);
    assert_eq!(p.fric, 0.5);
}

#[test]
fn self_pair_override() {
    let s = load(r#", "pairs": [ { "materials": ["c", "c"], "hz_poiss": 0.45, "fric": 0 } ]"#);
    let c = idx(&s, "c");
    let p = s.pairs.get(c, c);
    assert_eq!(p.hz_poiss, 0.45);
    assert_eq!(p.fric, 0.0);
    assert!(rel(p.hz_shear, 3e9) < 1e-12);
}
