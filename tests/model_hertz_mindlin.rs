//! `hertz_mindlin` (hertz-mindlin-musen.txt): CPU/GPU twins of every new contact part
//! (rolling, normal_mindlin, tangential_mindlin, normal_viscous) and of both presets
//! (hertz_mindlin, hertz_viscous) on seeded random states; restitution table; energy
//! bookkeeping in single impacts. GPU tests panic without an adapter, never skip.

mod common;

use common::random::{f, unit, v3, at, norm, stored_compliance};

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::hertz_mindlin::hertz_mindlin_contact;
use talus::contact::hertz_viscous::hertz_viscous_contact;
use talus::contact::normal_mindlin::{mindlin_normal, tsuji_alpha, TSUJI_FACTOR};
use talus::contact::normal_viscous::{antypov_alpha, viscous_normal};
use talus::contact::params::{inherit, mindlin_g_star, ContactModel, PairParams, PairParamsGpu};
use talus::model::material::Material;
use talus::contact::rolling::rolling_resistance;
use talus::contact::tangential_mindlin::{mindlin_shear, mindlin_shear_damping, mindlin_shear_stiffness};
use talus::contact::{ball_ball_geometry, ball_wall_geometry, ContactGeometry, ContactOutput, History};

const CASES: usize = 4096;
const IN_STRIDE: usize = 41;
const OUT_STRIDE: usize = 140;
const BLOCK: usize = 68;

/// One random contact state (input layout of tests/contact_twins.rs), rounded to f32.
struct Case {
    input: [f64; IN_STRIDE],
    p: PairParams,
}

fn random_case(rng: &mut Pcg64) -> Case {
    let mut input = [0.0; IN_STRIDE];
    let r_i = f(rng.random_range(1e-3..1e-2));
    let r_j = f(rng.random_range(1e-3..1e-2));
    let overlap = rng.random_range(-0.002..0.02) * r_i.min(r_j);
    let d = unit(rng) * (r_i + r_j - overlap);
    let d = DVec3::new(f(d.x), f(d.y), f(d.z));
    let s = f(r_i - rng.random_range(-0.002..0.02) * r_i);
    let (g, nu) = (f(rng.random_range(1e7..1e10)), f(rng.random_range(0.0..0.5)));
    let p = PairParams {
        model: ContactModel::HertzMindlin,
        hz_shear: g,
        hz_poiss: nu,
        g_star: f(mindlin_g_star(g, nu, g, nu)),
        fric: f(rng.random_range(0.0..1.0)),
        rolling_fric: if rng.random_bool(0.2) { 0.0 } else { f(rng.random_range(0.0..0.3)) },
        restitution: if rng.random_bool(0.1) { 1.0 } else { f(rng.random_range(0.02..1.0)) },
        no_attraction: rng.random_bool(0.5),
        limit_damping: rng.random_bool(0.5),
        ..PairParams::default()
    };
    let put = |input: &mut [f64; IN_STRIDE], at: usize, v: DVec3| input[at..at + 3].copy_from_slice(&v.to_array());
    put(&mut input, 0, d);
    input[3] = r_i;
    input[4] = r_j;
    input[5] = f(rng.random_range(1e-5..1e-2));
    input[6] = f(rng.random_range(1e-5..1e-2));
    input[7] = f(rng.random_range(1e-7..1e-5));
    put(&mut input, 8, v3(rng, 2.0));
    input[11] = s;
    // some spins exactly zero: the rolling torque must vanish there
    put(&mut input, 12, if rng.random_bool(0.1) { DVec3::ZERO } else { v3(rng, 200.0) });
    put(&mut input, 16, v3(rng, 2.0));
    put(&mut input, 20, if rng.random_bool(0.1) { DVec3::ZERO } else { v3(rng, 200.0) });
    put(&mut input, 24, v3(rng, 30.0));
    input[27] = f(rng.random_range(0.0..60.0));
    input[31] = f(rng.random_range(0.0..2.0));
    // the stored dashpot forces, from inputs already drawn (the random stream stays as it was)
    input[32] = f(input[31] - 1.0);
    input[33] = f(0.1 * input[24]);
    input[34] = f(0.1 * input[25]);
    input[23] = stored_compliance(rng);
    put(&mut input, 28, { let n = unit(rng); DVec3::new(f(n.x), f(n.y), f(n.z)) });
    // the spins of the previous force pass (drawn last, so the stream above stays as it was):
    // the same, reversed (a grain rocking at rest), turned at random, or zero
    for (slot, spin) in [(35, 12), (38, 20)] {
        let w = at(&input, spin);
        let previous = match rng.random_range(0..4) {
            0 => w,
            1 => w * -f(rng.random_range(0.1..2.0)),
            2 => v3(rng, 200.0),
            _ => DVec3::ZERO,
        };
        put(&mut input, slot, previous);
    }
    Case { input, p }
}

fn push_output(out: &mut Vec<f64>, c: &ContactOutput) {
    out.extend(c.force_j.to_array());
    out.extend(c.torque_i.to_array());
    out.extend(c.torque_j.to_array());
    out.extend(c.history.shear.to_array());
    out.extend([c.history.normal_force, c.strain, c.slip_work, c.dashpot_work]);
}

/// CPU twin of one kernel block (same layout as `block` in the WGSL kernel).
fn cpu_block(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(BLOCK);
    let mn = mindlin_normal(p, g, tsuji_alpha(p.damping_restitution()));
    out.extend([mn.fn_e, mn.fn_d, mn.k_n, mn.overlap, mn.strain]);
    let vn = viscous_normal(p, g);
    out.extend([vn.fn_e, vn.fn_d, vn.k_n0, vn.overlap, vn.strain]);
    let k_t = mindlin_shear_stiffness(p, g.r_bar, mn.overlap);
    out.push(k_t);
    let fn_mag = (-(mn.fn_e + mn.fn_d)).max(0.0);
    let eta_t = mindlin_shear_damping(p, mn.eta_n);
    let sh = mindlin_shear(p, g, k_t, eta_t, fn_mag, h, dt);
    out.extend(sh.fs.to_array());
    out.extend(sh.spring.to_array());
    out.extend(sh.fs_d.to_array());
    out.extend([sh.slip as u8 as f64, sh.slip_work]);
    let roll = rolling_resistance(p, g, fn_mag, h.normal_force, dt);
    out.extend(roll.torque_i.to_array());
    out.extend(roll.torque_j.to_array());
    out.push(roll.work);
    push_output(&mut out, &hertz_mindlin_contact(p, g, h, dt));
    push_output(&mut out, &hertz_viscous_contact(p, g, h, dt));
    let fn_mag_v = (-(vn.fn_e + vn.fn_d)).max(0.0);
    let sh_v = mindlin_shear(p, g, k_t, 0.0, fn_mag_v, h, dt);
    out.push(sh_v.slip as u8 as f64);
    out.resize(BLOCK, 0.0);
    // not compared, only used to judge the tolerance: |uncapped tangential force| / Coulomb limit
    let free = PairParams { fric: f64::MAX, ..*p };
    let ratio = |fm: f64, eta: f64| {
        let t = mindlin_shear(&free, g, k_t, eta, fm, h, dt).fs.length();
        if p.fric * fm > 0.0 { t / (p.fric * fm) } else { f64::INFINITY }
    };
    out[62] = ratio(fn_mag, eta_t);
    out[63] = ratio(fn_mag_v, 0.0);
    let (hm, hv) = (hertz_mindlin_contact(p, g, h, dt), hertz_viscous_contact(p, g, h, dt));
    out[64..68].copy_from_slice(&[sh.stiffness_work, hm.stiffness_work, hv.stiffness_work, hm.history.shear_compliance]);
    out
}

fn geometries(c: &Case) -> (ContactGeometry, ContactGeometry, History, f64) {
    let x = &c.input;
    let h = History { shear: at(x, 24), normal_force: x[27], impact_velocity: x[31], established: 1.0, shear_compliance: x[23], dashpot: [x[32] as f32, x[33] as f32, x[34] as f32] };
    let g = ContactGeometry { previous_spin_i: at(x, 35), previous_spin_j: at(x, 38), ..ball_ball_geometry(at(x, 0), x[3], x[4], x[5], x[6], at(x, 8), at(x, 12), at(x, 16), at(x, 20)) };
    let gw = ContactGeometry { previous_spin_i: at(x, 35), ..ball_wall_geometry(x[11], at(x, 28), x[3], x[5], at(x, 8), at(x, 12), at(x, 16)) };
    (g, gw, h, x[7])
}

/// Compares one block. Tolerances as tests/contact_twins.rs: 2e-4 relative, plus the
/// conditioning 4ε|d|/δ of everything that depends on the overlap δ (f32 rounding of the
/// centre distance), plus a floor from the scale of the parts a field is a sum of: velocities
/// are differences of O(|v| + |ω|R) terms (absolute error ~ε of that scale), so every force
/// that is a coefficient × velocity gets a floor of 1e-5 × (coefficient × velocity scale).
/// Returns false when a Coulomb decision differs at the threshold (case not compared).
fn compare_block(k: usize, which: &str, c: &[f64], g: &[f64], g_geo: &ContactGeometry, distance: f64, vel_scale: f64, dt: f64, h: &History) -> bool {
    let h_shear = h.shear.length();
    for (flag, ratio) in [(20, 62), (59 + 2, 63)] {
        if c[flag] != g[flag] {
            assert!((c[ratio] - 1.0).abs() < 1e-3, "case {k} {which}: slip state differs away from the Coulomb limit (ratio {})", c[ratio]);
            return false;
        }
    }
    let conditioning = 4.0 * f32::EPSILON as f64 * distance / c[3].max(1e-300);
    let rtol = 2e-4 + conditioning;
    let m_c = g_geo.m_c;
    // force scale: elastic + viscous coefficient × velocity scale + spring history + increment
    let visc_scale = (c[2] * m_c).sqrt() * 2.0 + (m_c * c[7]).sqrt() * 2.3 * c[3].max(0.0).sqrt().sqrt();
    let f_scale = c[0].abs() + c[5].abs() + visc_scale * vel_scale + h_shear + c[10] * vel_scale * dt + (c[10] * m_c).sqrt() * 2.0 * vel_scale;
    let lever = g_geo.arm_i + g_geo.arm_j;
    let t_scale = f_scale * lever * 1.5;
    let floor_f = (1e-5 + conditioning) * f_scale;
    let floor_t = (1e-5 + conditioning) * t_scale;
    let work_scale = f_scale * (vel_scale * dt + if c[10] > 0.0 { (h_shear + f_scale) / c[10] } else { 0.0 });
    let floor_w = (1e-4 + conditioning * 1e3) * (work_scale + t_scale * vel_scale / lever.max(1e-300) * dt);
    let check = |name: &str, from: usize, len: usize, floor: f64| {
        let (cc, gg) = (&c[from..from + len], &g[from..from + len]);
        let diff: Vec<f64> = cc.iter().zip(gg).map(|(a, b)| a - b).collect();
        assert!(norm(&diff) <= rtol * norm(cc) + floor, "case {k} {which}: {name}: cpu {cc:?} gpu {gg:?} (rtol {rtol:e}, floor {floor:e})");
    };
    let fields: &[(&str, usize, usize, f64)] = &[
        ("mindlin_normal.fn_e", 0, 1, floor_f),
        ("mindlin_normal.fn_d", 1, 1, floor_f),
        ("mindlin_normal.k_n", 2, 1, 0.0),
        ("mindlin_normal.overlap", 3, 1, distance * 4.0 * f32::EPSILON as f64),
        ("mindlin_normal.strain", 4, 1, 1e-30),
        ("viscous_normal.fn_e", 5, 1, floor_f),
        ("viscous_normal.fn_d", 6, 1, floor_f),
        ("viscous_normal.k_n0", 7, 1, 0.0),
        ("viscous_normal.strain", 9, 1, 1e-30),
        ("mindlin_shear_stiffness", 10, 1, 0.0),
        ("mindlin_shear.fs", 11, 3, floor_f),
        ("mindlin_shear.spring", 14, 3, floor_f),
        ("mindlin_shear.fs_d", 17, 3, floor_f),
        ("rolling_resistance.torque_i", 22, 3, floor_t),
        ("rolling_resistance.torque_j", 25, 3, floor_t),
        ("hertz_mindlin.force_j", 29, 3, floor_f),
        ("hertz_mindlin.torque_i", 32, 3, floor_t),
        ("hertz_mindlin.torque_j", 35, 3, floor_t),
        ("hertz_mindlin.history.shear", 38, 3, floor_f),
        ("hertz_mindlin.history.normal_force", 41, 1, floor_f),
        ("hertz_viscous.force_j", 45, 3, floor_f),
        ("hertz_viscous.torque_i", 48, 3, floor_t),
        ("hertz_viscous.torque_j", 51, 3, floor_t),
        ("hertz_viscous.history.shear", 54, 3, floor_f),
        ("hertz_viscous.history.normal_force", 57, 1, floor_f),
    ];
    for &(name, from, len, floor) in fields {
        check(name, from, len, floor);
    }
    // strain with the tangential spring: ½|F|²/k_t, relative error of |F|² (floor from the force scale)
    for (name, i) in [("hertz_mindlin.strain", 42), ("hertz_viscous.strain", 58)] {
        let floor = if c[10] > 0.0 { f_scale * floor_f / c[10] } else { 0.0 } + 1e-30;
        check(name, i, 1, floor);
    }
    for (name, i) in [("mindlin_shear.slip_work", 21), ("rolling_resistance.work", 28), ("hertz_mindlin.slip_work", 43), ("hertz_mindlin.dashpot_work", 44), ("hertz_viscous.slip_work", 59), ("hertz_viscous.dashpot_work", 60)] {
        check(name, i, 1, floor_w + 1e-20);
    }
    // stiffness work: a difference of the stored and the starting spring energies
    let spring_energy = |k_s: f64| if k_s > 0.0 { 0.5 * h_shear * h_shear / k_s } else { 0.0 };
    let floor_s = rtol * (0.5 * h_shear * h_shear * h.shear_compliance + spring_energy(c[10])) + 1e-20;
    // the presets' stiffness work adds the normal spring's stepping work (energy::normal_step_work),
    // a difference of spring energies: scaled by the spring energy at the step's deepest reach
    let reach = c[3].max(0.0) + vel_scale * dt;
    let floor_n = rtol * c[7] * reach * reach * reach.sqrt();
    for (name, i, floor_s) in [("mindlin_shear.stiffness_work", 64, floor_s), ("hertz_mindlin.stiffness_work", 65, floor_s + floor_n), ("hertz_viscous.stiffness_work", 66, floor_s + floor_n)] {
        assert!((c[i] - g[i]).abs() <= floor_s, "case {k} {which}: {name}: cpu {} gpu {} (floor {floor_s:e})", c[i], g[i]);
    }
    check("hertz_mindlin.history.shear_compliance", 67, 1, 0.0);
    true
}

#[test]
fn mindlin_viscous_rolling_parts_agree_on_cpu_and_gpu() {
    let mut rng = Pcg64::seed_from_u64(2027);
    let cases: Vec<Case> = (0..CASES).map(|_| random_case(&mut rng)).collect();
    let inputs: Vec<f32> = cases.iter().flat_map(|c| c.input.iter().map(|&v| v as f32)).collect();
    let params: Vec<PairParamsGpu> = cases.iter().map(|c| PairParamsGpu::from(&c.p)).collect();
    let gpu = common::twin::run_twin_kernel(include_str!("shaders/twins_mindlin_viscous.wgsl"), &inputs, &params, OUT_STRIDE);
    let (mut compared, mut skipped, mut active, mut rolling) = (0usize, 0usize, 0usize, 0usize);
    for (k, case) in cases.iter().enumerate() {
        let (g, gw, h, dt) = geometries(case);
        let x = &case.input;
        let gk: Vec<f64> = gpu[k * OUT_STRIDE..(k + 1) * OUT_STRIDE].iter().map(|&v| v as f64).collect();
        // the scalar coefficient functions
        assert!((tsuji_alpha(case.p.damping_restitution()) - gk[2 * BLOCK]).abs() <= 1e-6, "case {k}: tsuji_alpha");
        assert!((antypov_alpha(case.p.damping_restitution()) - gk[2 * BLOCK + 1]).abs() <= 4e-6, "case {k}: antypov_alpha");
        let vel_scale = at(x, 8).length() + at(x, 16).length() + at(x, 12).length() * x[3] + at(x, 20).length() * x[4];
        let mut ok = true;
        for (which, geo, base, distance) in [("ball-ball", &g, 0, at(x, 0).length()), ("ball-wall", &gw, BLOCK, x[3])] {
            let c = cpu_block(&case.p, geo, &h, dt);
            ok &= compare_block(k, which, &c, &gk[base..base + BLOCK], geo, distance, vel_scale, dt, &h);
            if which == "ball-ball" && c[3] > 0.0 {
                active += 1;
                rolling += (c[22..25].iter().any(|&t| t != 0.0)) as usize;
            }
        }
        if ok { compared += 1 } else { skipped += 1 }
    }
    println!("compared {compared} states ({active} active ball–ball, {rolling} with a rolling torque), {skipped} at the Coulomb threshold");
    assert!(compared >= 1000 && active >= 1000 && rolling >= 500, "too few states compared");
}

/// The tangential damping formed from the normal one (`mindlin_shear_damping`, η_n √(4G*/E*))
/// is the spec's −1.8257 α √(k_t M*) with k_t = 8G*√(R*ξ), for unlike materials, prepared or
/// not, over overlaps from 1e-9 to 1e-2 of R*.
#[test]
fn tangential_damping_is_tsuji_of_k_t() {
    let material = |hz_shear, hz_poiss| Material { name: String::new(), density: 2500.0, hz_shear, hz_poiss, fric: 0.5 };
    let (steel, rubber) = (material(7.9e10, 0.29), material(3.4e5, 0.49));
    let base = PairParams { model: ContactModel::HertzMindlin, restitution: 0.4, ..PairParams::default() };
    for (a, b) in [(&steel, &steel), (&steel, &rubber), (&rubber, &rubber)] {
        let raw = inherit(a, b, base);
        for p in [raw, raw.prepared()] {
            for k in 0..8 {
                let (r_bar, m_c) = (2e-3, 3e-6);
                let overlap = 0.5 * r_bar * 10f64.powi(-9 + k);
                let g = ContactGeometry { gap: -overlap, r_bar, m_c, vel_normal: -0.3, ..ContactGeometry::default() };
                let mn = mindlin_normal(&p, &g, p.tsuji_alpha());
                let k_t = mindlin_shear_stiffness(&p, r_bar, overlap);
                let spec = -TSUJI_FACTOR * tsuji_alpha(p.restitution) * (k_t * m_c).sqrt();
                let eta_t = mindlin_shear_damping(&p, mn.eta_n);
                assert!(spec > 0.0 && (eta_t - spec).abs() <= 1e-14 * spec, "overlap {overlap}: η_t = {eta_t}, spec {spec}");
            }
        }
    }
}

/// Tsuji's 1.8257 α √(k_n M*) equals Antypov's α(ε) √(m* k_n0) δ^¼ (k_n = 3/2 k_n0 δ^½):
/// 1.8257 √(3/2) = 2.236016 vs √5 = 2.236068 (2.3e-5 relative).
#[test]
fn tsuji_damping_equals_antypov_damping() {
    for e in [0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99] {
        let tsuji = -TSUJI_FACTOR * tsuji_alpha(e) * 1.5f64.sqrt();
        let rel = (tsuji - antypov_alpha(e)).abs() / antypov_alpha(e);
        assert!(rel < 3e-5, "e = {e}: {tsuji} vs {}", antypov_alpha(e));
    }
}

use common::impacts::*;

/// Accuracy of the measured restitution vs the target e at dt = t_c/200. The spec's damping
/// equals Antypov's (exact) to 2e-5, so the deviation is the first-order time-step error:
/// 1.23 % at e = 0.1 (t_c/200), 0.21 % (t_c/1000), 0.05 % (t_c/4000), measured with the same
/// table at finer steps (docs/contact-models.md, hertz_mindlin).
const TARGET_ACCURACY: f64 = 0.015;

#[test]
fn restitution_is_speed_independent_and_near_target() {
    let rows = restitution_table(ContactModel::HertzMindlin, false, 200.0, 2);
    for (kind, config, e, es) in rows {
        let (lo, hi) = (es.iter().cloned().fold(f64::MAX, f64::min), es.iter().cloned().fold(f64::MIN, f64::max));
        assert!((hi - lo) / e < 0.01, "{kind} {config} e={e}: spread over speeds {es:?}");
        for m in es {
            assert!((m - e).abs() / e < TARGET_ACCURACY, "{kind} {config} e={e}: measured {m}");
        }
    }
}

#[test]
fn dissipated_energy_equals_kinetic_energy_lost() {
    dissipation_balance(ContactModel::HertzMindlin);
}

#[test]
fn grazing_wall_impacts_gain_no_energy() {
    grazing_no_energy_gain(ContactModel::HertzMindlin, 0.9);
}
