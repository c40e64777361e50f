//! CPU/GPU twins: every contact function of `src/contact/*.rs` and its WGSL twin in
//! `shaders/contact/*.wgsl` agree on 4096 seeded random contact states within f32 tolerance.
//! The GPU evaluates `tests/shaders/contact_twins.wgsl`; inputs are rounded to f32 first so
//! both sides see the same numbers.

mod common;

use common::random::{f, unit, v3, at, norm};

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::damping::dashpot;
use talus::contact::energy::{dashpot_work, strain_energy};
use common::random::stored_compliance;
use talus::contact::normal::hertz_normal;
use talus::contact::params::{PairParams, PairParamsGpu};
use talus::contact::tangential::{hertz_shear, released_spring_work};
use talus::contact::{ball_ball_geometry, ball_wall_geometry, contact_active, ended_contact_work, hertz_contact, ContactGeometry, History};

const CASES: usize = 4096;
const IN_STRIDE: usize = 35;
const OUT_STRIDE: usize = 80;

/// One random contact state, already rounded to f32.
struct Case {
    input: [f64; IN_STRIDE],
    p: PairParams,
}

fn random_case(rng: &mut Pcg64) -> Case {
    let mut input = [0.0; IN_STRIDE];
    let r_i = f(rng.random_range(1e-3..1e-2));
    let r_j = f(rng.random_range(1e-3..1e-2));
    // mostly overlapping, some just apart (inactive)
    let overlap = rng.random_range(-0.002..0.02) * r_i.min(r_j);
    let d = unit(rng) * (r_i + r_j - overlap);
    let d = DVec3::new(f(d.x), f(d.y), f(d.z));
    let s = f(r_i - rng.random_range(-0.002..0.02) * r_i);
    let p = PairParams {
        hz_shear: f(rng.random_range(1e7..1e10)),
        hz_poiss: f(rng.random_range(0.0..0.5)),
        fric: f(rng.random_range(0.0..1.0)),
        hz_alpha: if rng.random_bool(0.5) { 1.5 } else { f(rng.random_range(1.0..2.0)) },
        hz_mode: rng.random_range(0..2),
        rgap: 0.0,
        dp_nratio: f(rng.random_range(0.0..1.0)),
        dp_sratio: f(rng.random_range(0.0..1.0)),
        dp_alpha: if rng.random_bool(0.5) { 0.0 } else { 0.25 },
        dp_mode: rng.random_range(0..4),
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
    put(&mut input, 12, v3(rng, 200.0));
    put(&mut input, 16, v3(rng, 2.0));
    put(&mut input, 20, v3(rng, 200.0));
    put(&mut input, 24, v3(rng, 30.0));
    input[27] = f(rng.random_range(0.0..60.0));
    input[31] = f(rng.random_range(0.0..2.0));
    // the stored dashpot force, from inputs already drawn (the random stream stays as it was)
    input[32] = f(input[31] - 1.0);
    input[33] = f(0.1 * input[24]);
    input[34] = f(0.1 * input[25]);
    input[23] = stored_compliance(rng);
    put(&mut input, 28, { let n = unit(rng); DVec3::new(f(n.x), f(n.y), f(n.z)) });
    // `limit_damping` (mode 3 whatever dp_mode says), drawn last so the draws above stay as they were
    let p = PairParams { limit_damping: rng.random_bool(0.3), ..p };
    Case { input, p }
}

fn geometry_out(out: &mut Vec<f64>, g: &ContactGeometry) {
    out.extend(g.normal.to_array());
    out.extend([g.gap, g.r_bar, g.m_c]);
    out.extend((g.normal * g.arm_i).to_array());
    out.extend((g.normal * -g.arm_j).to_array());
    out.push(g.vel_normal);
    out.extend(g.vel_shear.to_array());
}

/// The CPU twin of the test kernel, same output layout.
fn cpu_outputs(c: &Case) -> Vec<f64> {
    let x = &c.input;
    let p = &c.p;
    let dt = x[7];
    let history = History { shear: at(x, 24), normal_force: x[27], impact_velocity: x[31], established: 1.0, shear_compliance: x[23], dashpot: [x[32] as f32, x[33] as f32, x[34] as f32] };
    let mut out = Vec::with_capacity(OUT_STRIDE);
    let g = ball_ball_geometry(at(x, 0), x[3], x[4], x[5], x[6], at(x, 8), at(x, 12), at(x, 16), at(x, 20));
    geometry_out(&mut out, &g);
    let gw = ball_wall_geometry(x[11], at(x, 28), x[3], x[5], at(x, 8), at(x, 12), at(x, 16));
    geometry_out(&mut out, &gw);
    let normal = hertz_normal(p, &g);
    out.extend([normal.fn_h, normal.h_n, normal.k_n, normal.overlap]);
    let shear = hertz_shear(p, &g, &normal, &history, dt);
    out.extend(shear.fs.to_array());
    out.extend([shear.k_s, shear.slip as u8 as f64, shear.slip_work]);
    let damp = dashpot(p, &g, &normal, shear.k_s, shear.slip);
    out.push(damp.fn_d);
    out.extend(damp.fs_d.to_array());
    out.push(strain_energy(p, &normal, shear.fs, shear.compliance));
    out.push(dashpot_work(&g, &damp, &history, dt));
    let h = hertz_contact(p, &g, &history, dt);
    out.extend(h.force_j.to_array());
    out.extend(h.torque_i.to_array());
    out.extend(h.torque_j.to_array());
    out.extend(h.history.shear.to_array());
    out.push(h.history.normal_force);
    out.extend([h.strain, h.slip_work, h.dashpot_work]);
    out.push(contact_active(p, &g) as u8 as f64);
    out.push(contact_active(p, &gw) as u8 as f64);
    out.extend([shear.stiffness_work, h.stiffness_work, h.history.shear_compliance]);
    let (ended_dashpot, ended_slip, ended_stepping) = ended_contact_work(p, &g, &history, dt);
    out.extend([ended_dashpot, ended_slip, released_spring_work(&g, &history, dt)]);
    out.extend(h.history.dashpot.map(f64::from));
    out.extend([0.0; 3]);
    out.push(ended_stepping);
    out.resize(OUT_STRIDE, 0.0);
    out
}

fn gpu_outputs(cases: &[Case]) -> Vec<f32> {
    let inputs: Vec<f32> = cases.iter().flat_map(|c| c.input.iter().map(|&v| v as f32)).collect();
    let params: Vec<PairParamsGpu> = cases.iter().map(|c| PairParamsGpu::from(&c.p)).collect();
    common::twin::run_twin_kernel(include_str!("shaders/contact_twins.wgsl"), &inputs, &params, OUT_STRIDE)
}

/// Named output fields: (name, first index, length, index of the field giving its scale).
const FIELDS: &[(&str, usize, usize)] = &[
    ("ball_ball_geometry.normal", 0, 3),
    ("ball_ball_geometry.gap", 3, 1),
    ("ball_ball_geometry.r_bar", 4, 1),
    ("ball_ball_geometry.m_c", 5, 1),
    ("ball_ball_geometry.branch_i", 6, 3),
    ("ball_ball_geometry.branch_j", 9, 3),
    ("ball_ball_geometry.vel_normal+vel_shear", 12, 4),
    ("ball_wall_geometry.normal", 16, 3),
    ("ball_wall_geometry.gap", 19, 1),
    ("ball_wall_geometry.r_bar+m_c", 20, 2),
    ("ball_wall_geometry.branch_i", 22, 3),
    ("ball_wall_geometry.velocities", 28, 4),
    ("hertz_normal.fn_h", 32, 1),
    ("hertz_normal.h_n", 33, 1),
    ("hertz_normal.k_n", 34, 1),
    ("hertz_normal.overlap", 35, 1),
    ("hertz_shear.fs", 36, 3),
    ("hertz_shear.k_s", 39, 1),
    ("dashpot.fn_d", 42, 1),
    ("dashpot.fs_d", 43, 3),
    ("strain_energy", 46, 1),
    ("hertz_contact.force_j", 48, 3),
    ("hertz_contact.history", 57, 4),
    ("hertz_contact.strain", 61, 1),
    ("hertz_contact.history.shear_compliance", 68, 1),
    ("hertz_contact.history.dashpot", 72, 3),
];

#[test]
fn contact_functions_agree_on_cpu_and_gpu() {
    let mut rng = Pcg64::seed_from_u64(2026);
    let cases: Vec<Case> = (0..CASES).map(|_| random_case(&mut rng)).collect();
    let gpu = gpu_outputs(&cases);
    let (mut compared, mut near_threshold, mut active) = (0usize, 0usize, 0usize);
    for (k, case) in cases.iter().enumerate() {
        let cpu = cpu_outputs(case);
        let g: Vec<f64> = gpu[k * OUT_STRIDE..(k + 1) * OUT_STRIDE].iter().map(|&v| v as f64).collect();
        assert_eq!(cpu[64], g[64], "case {k}: contact_active (ball–ball) differs");
        assert_eq!(cpu[65], g[65], "case {k}: contact_active (ball–wall) differs");
        active += (cpu[64] == 1.0) as usize;
        // Quantities that depend on the overlap δ = R_i + R_j − |d| inherit the f32 rounding of
        // |d|, relative size ε|d|/δ: the tolerance grows accordingly for shallow contacts.
        let distance = norm(&case.input[0..3]);
        let conditioning = 4.0 * f32::EPSILON as f64 * distance / cpu[35].max(1e-300);
        let check = |name: &str, from: usize, len: usize, floor: f64, rtol: f64| {
            let (c, gg) = (&cpu[from..from + len], &g[from..from + len]);
            let diff: Vec<f64> = c.iter().zip(gg).map(|(a, b)| a - b).collect();
            assert!(norm(&diff) <= rtol * norm(c) + floor, "case {k}: {name}: cpu {c:?} gpu {gg:?} (rtol {rtol:e})");
        };
        // Slip decisions within f32 rounding of the Coulomb threshold may legitimately differ.
        let trial_ratio = {
            let (fs, limit) = (norm(&cpu[36..39]), case.p.fric * -cpu[32]);
            if limit > 0.0 { fs / limit } else { 0.0 }
        };
        if cpu[40] != g[40] {
            assert!((trial_ratio - 1.0).abs() < 1e-3 + conditioning, "case {k}: slip state differs away from the Coulomb limit");
            near_threshold += 1;
            continue;
        }
        let overlap_floor = distance * 4.0 * f32::EPSILON as f64;
        for &(name, from, len) in FIELDS {
            let depends_on_overlap = ["fn_h", "k_n", "overlap", "strain", "hertz_shear", "dashpot", "hertz_contact"].iter().any(|t| name.contains(t));
            let floor = if name.contains("gap") || name.contains("overlap") { overlap_floor } else if name.contains("vel") { 1e-5 } else { 1e-12 };
            let rtol = 2e-4 + if depends_on_overlap { conditioning } else { 0.0 };
            // the total force can be a small sum of large parts (a capped dashpot against the
            // Hertz force): its error scale is the sum of the parts
            let floor = if name == "hertz_contact.force_j" { rtol * (cpu[32].abs() + cpu[42].abs() + norm(&cpu[36..39]) + norm(&cpu[43..46])) } else { floor };
            check(name, from, len, floor, rtol);
        }
        // work terms: relative to force × displacement of the step
        let dt = case.input[7];
        let work_scale = (norm(&cpu[48..51]) + norm(&cpu[36..39])) * (norm(&cpu[12..16]) + 1e-3) * dt * (1.0 + conditioning * 1e3)
            + 100.0 * f32::EPSILON as f64 * cpu[61].abs();
        for (name, i) in [("slip_work", 41), ("dashpot_work", 47), ("hertz_contact.slip_work", 62), ("hertz_contact.dashpot_work", 63), ("ended_contact_work", 69), ("released_spring_work", 71)] {
            assert!((cpu[i] - g[i]).abs() <= 1e-3 * work_scale + (2e-4 + conditioning) * cpu[i].abs() + 1e-20, "case {k}: {name}: cpu {} gpu {} (scale {work_scale:e})", cpu[i], g[i]);
        }
        // stiffness work: a difference of the stored and the starting spring energies
        let history_shear = norm(&case.input[24..27]);
        let spring_energy = |k: f64| if k > 0.0 { 0.5 * history_shear * history_shear / k } else { 0.0 };
        let stored_energy = 0.5 * history_shear * history_shear * case.input[23];
        let stiffness_scale = (2e-4 + conditioning) * (stored_energy + spring_energy(cpu[39])) + 1e-20;
        // the normal spring's stepping work (in hertz_contact's stiffness work and the ended
        // contact's): a difference of spring energies and the work over the step, scaled by the
        // largest force over the step, h_n (δ + |ġ|Δt)^α, times the step's reach δ + |ġ|Δt
        let reach = cpu[35] + cpu[12].abs() * dt;
        let stepping_scale = (2e-4 + conditioning) * cpu[33] * reach.powf(case.p.hz_alpha) * reach + 1e-20;
        for (name, i, scale) in [("hertz_shear.stiffness_work", 66, stiffness_scale), ("hertz_contact.stiffness_work", 67, stiffness_scale + stepping_scale), ("ended_contact_work.stiffness", 78, stepping_scale)] {
            assert!((cpu[i] - g[i]).abs() <= scale, "case {k}: {name}: cpu {} gpu {} (scale {scale:e})", cpu[i], g[i]);
        }
        compared += 1;
    }
    println!("compared {compared} states ({active} active ball–ball), {near_threshold} at the Coulomb threshold");
    assert!(compared >= 1000, "only {compared} states compared");
    assert!(active >= 1000, "only {active} active states");
}
