//! CPU/GPU twins of adhesion: every function of `src/contact/adhesion.rs`,
//! `hertz_mindlin_adhesive.rs` and `adhesive.rs` and its WGSL twin in `shaders/contact/`
//! agree on 4096 seeded random states within f32 tolerance (JKR radius near the break,
//! capillary bridges apart, SJKR lens areas of pairs and walls, `bonded_active`,
//! `ended_adhesive_work` from touching and bonded-apart histories). The GPU evaluates
//! `tests/shaders/adhesion_twins.wgsl`. The contact geometries are given as they are (not
//! formed from positions), rounded to f32, so both sides see the same gap; where a result
//! jumps (an activity or slip decision at its threshold, the JKR branch at its break) the
//! tolerance takes in how far the CPU's result moves when the gaps move by 2e-6 of
//! themselves, about what f32 arithmetic can shift them by.

mod common;

use common::random::{at, f, unit, v3};

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::adhesion::*;
use talus::contact::adhesive::{adhesive_contact_force, ended_adhesive_work};
use talus::contact::hertz_mindlin_adhesive::{adhesive_spring, previous_adhesive};
use talus::contact::params::{Adhesion, ContactModel, PairParams, PairParamsGpu};
use talus::contact::{ContactGeometry, ContactOutput, History};

const CASES: usize = 4096;
const IN_STRIDE: usize = 40;
const OUT_STRIDE: usize = 80;

struct Case {
    input: [f64; IN_STRIDE],
    p: PairParams,
}

fn random_case(rng: &mut Pcg64) -> Case {
    let adhesion = [Adhesion::Jkr, Adhesion::Dmt, Adhesion::Sjkr, Adhesion::Sjkr2, Adhesion::Capillary][rng.random_range(0..5)];
    let model = if adhesion.changes_spring() || rng.random_bool(0.5) { ContactModel::HertzMindlin } else { ContactModel::Hertz };
    let hz_shear = f(rng.random_range(1e6..1e9));
    let hz_poiss = f(rng.random_range(0.0..0.45));
    let p = PairParams {
        model,
        adhesion,
        hz_shear,
        hz_poiss,
        g_star: f(hz_shear / (2.0 * (2.0 - hz_poiss))),
        fric: f(rng.random_range(0.0..1.0)),
        restitution: f(rng.random_range(0.2..1.0)),
        rolling_fric: if rng.random_bool(0.3) { f(rng.random_range(0.0..0.1)) } else { 0.0 },
        surface_energy: f(rng.random_range(0.01..2.0)),
        cohesion_energy_density: f(rng.random_range(1e3..1e6)),
        liquid_volume: f(10f64.powf(rng.random_range(-12.0..-9.0))),
        surface_tension: f(rng.random_range(0.02..0.08)),
        contact_angle: f(rng.random_range(0.0..1.2)),
        energy_tracking: rng.random_bool(0.9),
        ..PairParams::default()
    };
    let r_i = f(rng.random_range(1e-3..1e-2));
    let r_j = f(rng.random_range(1e-3..1e-2));
    let r_bar = 2.0 * r_i * r_j / (r_i + r_j);
    // gaps on the scale of the pair's adhesion: around the JKR break, across a bridge, or
    // overlaps up to 2 % of the radius
    let break_gap = jkr_break_gap(0.5 * r_bar, jkr_beta(p.surface_energy, p.e_star()));
    let gap_like = |rng: &mut Pcg64, r: f64| -> f64 {
        f(match rng.random_range(0..4) {
            0 => rng.random_range(-1.5..8.0) * break_gap,
            1 => rng.random_range(-0.2..1.3) * capillary_rupture_gap(&p),
            2 => -rng.random_range(0.0..0.02) * r,
            _ => (1.0 + rng.random_range(-1e-3..1e-3)) * break_gap,
        })
    };
    let gap = gap_like(rng, r_i.min(r_j));
    let gap_w = gap_like(rng, r_i);
    let mut input = [0.0; IN_STRIDE];
    let put = |input: &mut [f64; IN_STRIDE], i: usize, v: DVec3| input[i..i + 3].copy_from_slice(&v.to_array());
    let n = unit(rng);
    put(&mut input, 0, DVec3::new(f(n.x), f(n.y), f(n.z)));
    input[3] = gap;
    input[4] = f(r_bar);
    let (m_i, m_j) = (rng.random_range(1e-5..1e-2), rng.random_range(1e-5..1e-2));
    input[5] = f(m_i * m_j / (m_i + m_j));
    input[6] = f(r_i - 0.5 * (-gap).max(0.0));
    input[7] = f(r_j - 0.5 * (-gap).max(0.0));
    input[8] = f(rng.random_range(-0.5..0.5));
    put(&mut input, 9, v3(rng, 0.5));
    put(&mut input, 12, v3(rng, 50.0));
    put(&mut input, 15, v3(rng, 50.0));
    input[18] = f(rng.random_range(1e-7..1e-5));
    input[19] = gap_w;
    input[20] = f(r_i - 0.5 * (-gap_w).max(0.0));
    input[21] = f(2.0 * r_i);
    input[22] = f(m_i);
    // the history: new, established in touch, or bonded apart (empty but for the state)
    let established = [0.0, 1.0, 1.0, BONDED_APART as f64][rng.random_range(0..4)];
    if established == 1.0 {
        put(&mut input, 23, v3(rng, 1e-3));
        input[26] = f(rng.random_range(0.0..0.5));
        input[29] = common::random::stored_compliance(rng);
        put(&mut input, 30, v3(rng, 1e-3));
    }
    input[28] = established;
    // a quarter of the JKR overlaps at the break itself (a double root of the radius)
    input[33] = f(if rng.random_bool(0.25) { -(1.0 + rng.random_range(-1e-3..1e-3)) * break_gap } else { rng.random_range(-1.5..8.0) * break_gap });
    input[34] = f(rng.random_range(-0.2..1.3) * capillary_rupture_gap(&p));
    input[35] = r_i;
    input[36] = r_j;
    Case { input, p }
}

fn output(out: &mut Vec<f64>, c: &ContactOutput) {
    out.extend(c.force_j.to_array());
    out.extend(c.torque_i.to_array());
    out.extend(c.torque_j.to_array());
    out.extend(c.history.shear.to_array());
    out.extend([c.history.normal_force, c.history.established as f64, c.strain, c.surface, c.slip_work, c.dashpot_work, c.stiffness_work]);
}

/// The CPU twin of the kernel, same layout; `scale` multiplies every gap and overlap.
fn cpu_outputs(c: &Case, scale: f64) -> Vec<f64> {
    let (x, p) = (&c.input, &c.p);
    let spin_i = at(x, 12);
    let spin_j = at(x, 15);
    let g = ContactGeometry { normal: at(x, 0), gap: x[3] * scale, r_bar: x[4], m_c: x[5], arm_i: x[6], arm_j: x[7], vel_normal: x[8], vel_shear: at(x, 9), spin_i, spin_j, previous_spin_i: spin_i, previous_spin_j: spin_j };
    let gw = ContactGeometry { gap: x[19] * scale, r_bar: x[21], m_c: x[22], arm_i: x[20], arm_j: 0.0, spin_j: DVec3::ZERO, previous_spin_j: DVec3::ZERO, ..g };
    let h = History { shear: at(x, 23), normal_force: x[26], impact_velocity: x[27], established: x[28] as f32, shear_compliance: x[29], dashpot: [x[30] as f32, x[31] as f32, x[32] as f32] };
    let dt = x[18];
    let (overlap, gap, r_i, r_j) = (x[33] * scale, x[34] * scale, x[35], x[36]);
    let r_star = 0.5 * g.r_bar;
    let es = p.e_star();
    let beta = jkr_beta(p.surface_energy, es);
    let a = jkr_contact_radius(r_star, beta, overlap);
    let (jkr, jkr_a) = jkr_adhesive(es, r_star, p.surface_energy, overlap);
    let radii = contact_radii(&g);
    let bridge = capillary_adhesive(p, g.r_bar, gap);
    let part = adhesive_part(p, &g, g.gap);
    let part_w = adhesive_part(p, &gw, gw.gap);
    let (spring, spring_a, pulloff) = adhesive_spring(p, &g);
    let before = previous_adhesive(p, &g, &h, dt);
    let mut out = vec![
        beta,
        a,
        jkr_force(es, r_star, beta, a),
        jkr_energy(es, r_star, beta, a),
        jkr_pulloff_force(p.surface_energy, r_star),
        jkr_break_gap(r_star, beta),
        jkr.force,
        jkr.energy,
        jkr_a,
        dmt_pulloff_force(p.surface_energy, r_star),
        radii.0,
        radii.1,
        lens_area(r_i, r_j, overlap),
        lens_area_integral(r_i, r_j, overlap),
        lens_area(r_i, 0.0, overlap),
        lens_area_integral(r_i, 0.0, overlap),
        sjkr2_area(r_star, overlap),
        capillary_contact_force(p, g.r_bar),
        capillary_rupture_gap(p),
        bridge.force,
        bridge.energy,
        tensile_range(p, g.r_bar),
        bonded_active(p, &g, &h) as u8 as f64,
        bonded_active(p, &gw, &h) as u8 as f64,
        part.force,
        part.energy,
        part_w.force,
        part_w.energy,
        spring.force,
        spring_a,
        pulloff,
        before.force,
        before.energy,
    ];
    output(&mut out, &adhesive_contact_force(p, &g, &h, dt));
    output(&mut out, &adhesive_contact_force(p, &gw, &h, dt));
    out.extend(ended_adhesive_work(p, &g, &h, dt));
    out.extend(ended_adhesive_work(p, &gw, &h, dt));
    out.resize(OUT_STRIDE, 0.0);
    out
}

/// Named output fields: (name, first index, length). Each is compared as a group: its error
/// against its size.
const FIELDS: &[(&str, usize, usize)] = &[
    ("jkr_beta", 0, 1),
    ("jkr_contact_radius", 1, 1),
    ("jkr_force", 2, 1),
    ("jkr_energy", 3, 1),
    ("jkr_pulloff_force", 4, 1),
    ("jkr_break_gap", 5, 1),
    ("jkr_adhesive.force", 6, 1),
    ("jkr_adhesive.energy", 7, 1),
    ("jkr_adhesive.radius", 8, 1),
    ("dmt_pulloff_force", 9, 1),
    ("contact_radii", 10, 2),
    ("lens_area", 12, 1),
    ("lens_area_integral", 13, 1),
    ("lens_area (wall)", 14, 1),
    ("lens_area_integral (wall)", 15, 1),
    ("sjkr2_area", 16, 1),
    ("capillary_contact_force", 17, 1),
    ("capillary_rupture_gap", 18, 1),
    ("capillary_adhesive.force", 19, 1),
    ("capillary_adhesive.energy", 20, 1),
    ("tensile_range", 21, 1),
    ("bonded_active", 22, 1),
    ("bonded_active (wall)", 23, 1),
    ("adhesive_part.force", 24, 1),
    ("adhesive_part.energy", 25, 1),
    ("adhesive_part.force (wall)", 26, 1),
    ("adhesive_part.energy (wall)", 27, 1),
    ("adhesive_spring.force", 28, 1),
    ("adhesive_spring.radius", 29, 1),
    ("adhesive_spring.pulloff", 30, 1),
    ("previous_adhesive.force", 31, 1),
    ("previous_adhesive.energy", 32, 1),
    ("adhesive_contact_force.force_j", 33, 3),
    ("adhesive_contact_force.torques", 36, 6),
    ("adhesive_contact_force.history", 42, 5),
    ("adhesive_contact_force.strain", 47, 1),
    ("adhesive_contact_force.surface", 48, 1),
    ("adhesive_contact_force.slip_work", 49, 1),
    ("adhesive_contact_force.dashpot_work", 50, 1),
    ("adhesive_contact_force.stiffness_work", 51, 1),
    ("adhesive_contact_force (wall).force_j", 52, 3),
    ("adhesive_contact_force (wall).torques", 55, 6),
    ("adhesive_contact_force (wall).history", 61, 5),
    ("adhesive_contact_force (wall).strain", 66, 1),
    ("adhesive_contact_force (wall).surface", 67, 1),
    ("adhesive_contact_force (wall).slip_work", 68, 1),
    ("adhesive_contact_force (wall).dashpot_work", 69, 1),
    ("adhesive_contact_force (wall).stiffness_work", 70, 1),
    ("ended_adhesive_work", 71, 4),
    ("ended_adhesive_work (wall)", 75, 4),
];

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[test]
fn adhesion_functions_agree_on_cpu_and_gpu() {
    let mut rng = Pcg64::seed_from_u64(33);
    let cases: Vec<Case> = (0..CASES).map(|_| random_case(&mut rng)).collect();
    let inputs: Vec<f32> = cases.iter().flat_map(|c| c.input.iter().map(|&v| v as f32)).collect();
    let params: Vec<PairParamsGpu> = cases.iter().map(|c| PairParamsGpu::from(&c.p)).collect();
    let gpu = common::twin::run_twin_kernel(include_str!("shaders/adhesion_twins.wgsl"), &inputs, &params, OUT_STRIDE);
    let mut worst = vec![0.0f64; FIELDS.len()];
    let (mut bonded, mut apart_bonded, mut near_break) = (0, 0, 0);
    for (k, case) in cases.iter().enumerate() {
        let cpu = cpu_outputs(case, 1.0);
        let (up, down) = (cpu_outputs(case, 1.0 + 2e-6), cpu_outputs(case, 1.0 - 2e-6));
        let g: Vec<f64> = gpu[k * OUT_STRIDE..(k + 1) * OUT_STRIDE].iter().map(|&v| v as f64).collect();
        bonded += (cpu[22] == 1.0) as usize;
        apart_bonded += (cpu[22] == 1.0 && case.input[3] > 0.0) as usize;
        near_break += ((case.input[33] / cpu[5] + 1.0).abs() < 0.01) as usize + ((case.input[3] / cpu[5] - 1.0).abs() < 0.01) as usize;
        // a contact's work terms are differences of energies of the size of the step's force
        // times its travel and of its stored energies
        let energy_scale = |o: usize| norm(&cpu[o..o + 3]) * (case.input[8].abs() + norm(&case.input[9..12]) + 1e-3) * case.input[18] + cpu[o + 14].abs() + cpu[o + 15].abs();
        for (f_idx, &(name, from, len)) in FIELDS.iter().enumerate() {
            let range = from..from + len;
            let diff: Vec<f64> = range.clone().map(|i| cpu[i] - g[i]).collect();
            let moved: Vec<f64> = range.clone().map(|i| (up[i] - cpu[i]).abs().max((down[i] - cpu[i]).abs())).collect();
            let size = norm(&cpu[range.clone()]);
            let scale = if name.contains("work") && name.contains("(wall)") || name.starts_with("ended_adhesive_work (wall)") {
                energy_scale(52)
            } else if name.contains("work") {
                energy_scale(33)
            } else if name.contains("torques") {
                // the contact's force times its lever
                norm(&cpu[from - 3..from]) * case.input[35]
            } else if name.contains("history") {
                // the shear spring and the load are parts of the force
                norm(&cpu[from - 9..from - 6])
            } else {
                0.0
            };
            // JKR's radius near its break converges linearly (a double root): √ε of it
            let rtol = if name.contains("jkr") || name.contains("spring") || name.contains("part") || name.contains("contact_force") || name.contains("previous") || name.contains("ended") { 2e-3 } else { 2e-5 };
            // JKR's adhesive part is the difference of the Hertz and the JKR force, both of
            // the size of the Hertz force at the overlap: f32 rounds that difference on their scale
            let (overlap, r_star) = if name.contains("(wall)") { (-case.input[19], 0.5 * case.input[21]) } else if from < 24 { (case.input[33], 0.5 * case.input[4]) } else { (-case.input[3], 0.5 * case.input[4]) };
            let hertz = if case.p.adhesion == Adhesion::Jkr { 4.0 / 3.0 * case.p.e_star() * r_star.sqrt() * overlap.max(0.0).powf(1.5) } else { 0.0 };
            let energy_like = ["energy", "surface", "strain", "work", "history"].iter().any(|t| name.contains(t));
            let mut cancel = 1e-5 * if energy_like { hertz * overlap.max(0.0) } else { hertz };
            if (case.p.adhesion == Adhesion::Capillary || name.starts_with("capillary")) && energy_like {
                // Willett's energy is a difference of two arctangents of size F₀/k, k = √(R/V)
                // (whatever the case's own adhesion: the bridge's functions are evaluated in
                // every case; wgpu's GL backend on llvmpipe rounds that difference differently)
                let p = &case.p;
                cancel += 1e-6 * 2.0 * std::f64::consts::PI * p.surface_tension * p.contact_angle.cos() * (2.0 * r_star * p.liquid_volume).sqrt();
            }
            let tol = rtol * (size + scale) + cancel + 4.0 * norm(&moved) + 1e-30;
            let err = norm(&diff);
            assert!(err <= tol, "case {k}: {name}: cpu {:?} gpu {:?} (tolerance {tol:e}; adhesion {:?}, model {:?}, gap {}, wall gap {}, established {})", &cpu[range.clone()], &g[range], case.p.adhesion, case.p.model, case.input[3], case.input[19], case.input[28]);
            worst[f_idx] = worst[f_idx].max(err / (size + scale).max(1e-300));
        }
    }
    for ((name, _, _), w) in FIELDS.iter().zip(&worst) {
        println!("{name}: largest error {w:.2e} of its size");
    }
    assert!(bonded > CASES / 4 && apart_bonded > 100 && near_break > 500, "cases: {bonded} bonded, {apart_bonded} bonded apart, {near_break} near the JKR break");
}
