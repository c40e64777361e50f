//! Properties of the Hertz contact functions on seeded random contact states:
//! the pair force is antisymmetric (F_ij = −F_ji), the Hertz shear force obeys the Coulomb
//! limit |F_s| ≤ μ |F_n^h| (eq 11), results are invariant under rotation, and the spec's
//! dashpot modes behave as eqs (13)–(14) say.

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::damping::dashpot;
use talus::contact::normal::hertz_normal;
use talus::contact::params::PairParams;
use talus::contact::tangential::hertz_shear;
use talus::contact::{ball_ball_geometry, hertz_contact, History};

struct State {
    d: DVec3,
    r: [f64; 2],
    m: [f64; 2],
    v: [DVec3; 2],
    w: [DVec3; 2],
    history: History,
    p: PairParams,
}

fn unit(rng: &mut Pcg64) -> DVec3 {
    loop {
        let v = DVec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
            return v.normalize();
        }
    }
}

fn random_state(rng: &mut Pcg64) -> State {
    let r: [f64; 2] = [rng.random_range(1e-3..1e-2), rng.random_range(1e-3..1e-2)];
    let overlap = rng.random_range(1e-7..0.02) * r[0].min(r[1]);
    let d = unit(rng) * (r[0] + r[1] - overlap);
    let m = [rng.random_range(1e-5..1e-2), rng.random_range(1e-5..1e-2)];
    let v = [unit(rng) * rng.random_range(0.0..2.0), unit(rng) * rng.random_range(0.0..2.0)];
    let w = [unit(rng) * rng.random_range(0.0..200.0), unit(rng) * rng.random_range(0.0..200.0)];
    let p = PairParams {
        model: talus::contact::ContactModel::Hertz,
        hz_shear: rng.random_range(1e7..1e10),
        hz_poiss: rng.random_range(0.0..0.5),
        fric: rng.random_range(0.0..1.0),
        hz_alpha: if rng.random_bool(0.5) { 1.5 } else { rng.random_range(1.0..2.0) },
        hz_mode: rng.random_range(0..2),
        rgap: 0.0,
        dp_nratio: rng.random_range(0.0..1.0),
        dp_sratio: rng.random_range(0.0..1.0),
        dp_alpha: if rng.random_bool(0.5) { 0.0 } else { 0.25 },
        dp_mode: rng.random_range(0..4),
        ..PairParams::default()
    };
    let f = unit(rng) * rng.random_range(0.0..50.0);
    let history = History { shear: f, normal_force: rng.random_range(0.0..100.0), impact_velocity: 0.0, established: 1.0, shear_compliance: 1e-5, ..History::NEW };
    State { d, r, m, v, w, history, p }
}

const DT: f64 = 1e-6;

#[test]
fn pair_force_is_antisymmetric_and_torques_match() {
    let mut rng = Pcg64::seed_from_u64(11);
    for _ in 0..2000 {
        let s = random_state(&mut rng);
        let g_ij = ball_ball_geometry(s.d, s.r[0], s.r[1], s.m[0], s.m[1], s.v[0], s.w[0], s.v[1], s.w[1]);
        let g_ji = ball_ball_geometry(-s.d, s.r[1], s.r[0], s.m[1], s.m[0], s.v[1], s.w[1], s.v[0], s.w[0]);
        let h_ji = History { shear: -s.history.shear, ..s.history };
        let c_ij = hertz_contact(&s.p, &g_ij, &s.history, DT);
        let c_ji = hertz_contact(&s.p, &g_ji, &h_ji, DT);
        let scale = c_ij.force_j.length().max(1e-12);
        assert!((c_ij.force_j + c_ji.force_j).length() <= 1e-9 * scale, "F_ij = {:?}, F_ji = {:?}", c_ij.force_j, c_ji.force_j);
        let tscale = c_ij.torque_i.length().max(c_ij.torque_j.length()).max(1e-15);
        assert!((c_ij.torque_i - c_ji.torque_j).length() <= 1e-9 * tscale);
        assert!((c_ij.torque_j - c_ji.torque_i).length() <= 1e-9 * tscale);
        assert!((c_ij.strain - c_ji.strain).abs() <= 1e-9 * c_ij.strain.abs().max(1e-18));
    }
}

#[test]
fn shear_force_respects_coulomb_limit_and_slip_dissipates() {
    let mut rng = Pcg64::seed_from_u64(12);
    let mut slipping = 0;
    for _ in 0..2000 {
        let s = random_state(&mut rng);
        let g = ball_ball_geometry(s.d, s.r[0], s.r[1], s.m[0], s.m[1], s.v[0], s.w[0], s.v[1], s.w[1]);
        let n = hertz_normal(&s.p, &g);
        let sh = hertz_shear(&s.p, &g, &n, &s.history, DT);
        let limit = s.p.fric * -n.fn_h;
        assert!(sh.fs.length() <= limit * (1.0 + 1e-12) + 1e-300, "|F_s| = {} > μ F_n = {}", sh.fs.length(), limit);
        assert!(sh.fs.dot(g.normal).abs() <= 1e-9 * sh.fs.length().max(1e-300), "shear force leaves the contact plane");
        if sh.slip {
            slipping += 1;
            assert!((sh.fs.length() - limit).abs() <= 1e-9 * limit.max(1e-300));
            // Eq (16) averages the old and new force; it is dissipative whenever the stored
            // force was itself within the Coulomb limit (a larger one can only follow normal
            // unloading, where the trapezoid rule may give a small negative increment).
            let stored = s.history.shear.length();
            if stored <= limit {
                assert!(sh.slip_work >= -1e-12 * limit * g.vel_shear.length() * DT, "negative slip work {}", sh.slip_work);
            }
        }
    }
    assert!(slipping > 100, "the random states should exercise sliding ({slipping})");
}

#[test]
fn contact_is_invariant_under_rotation() {
    let mut rng = Pcg64::seed_from_u64(13);
    for _ in 0..1000 {
        let s = random_state(&mut rng);
        let q = DQuat::from_axis_angle(unit(&mut rng), rng.random_range(0.0..std::f64::consts::TAU));
        let g = ball_ball_geometry(s.d, s.r[0], s.r[1], s.m[0], s.m[1], s.v[0], s.w[0], s.v[1], s.w[1]);
        let gr = ball_ball_geometry(q * s.d, s.r[0], s.r[1], s.m[0], s.m[1], q * s.v[0], q * s.w[0], q * s.v[1], q * s.w[1]);
        let hr = History { shear: q * s.history.shear, ..s.history };
        let c = hertz_contact(&s.p, &g, &s.history, DT);
        let cr = hertz_contact(&s.p, &gr, &hr, DT);
        let scale = c.force_j.length().max(1e-12);
        assert!((q * c.force_j - cr.force_j).length() <= 1e-9 * scale);
        assert!((q * c.torque_i - cr.torque_i).length() <= 1e-9 * c.torque_i.length().max(1e-15));
        assert!((c.strain - cr.strain).abs() <= 1e-9 * c.strain.max(1e-18));
        assert!((c.dashpot_work - cr.dashpot_work).abs() <= 1e-9 * c.dashpot_work.abs().max(1e-18));
    }
}

#[test]
fn dashpot_modes_follow_eqs_13_14() {
    let mut rng = Pcg64::seed_from_u64(14);
    let (mut tension_seen, mut cut_seen) = (0, 0);
    for _ in 0..4000 {
        let s = random_state(&mut rng);
        let g = ball_ball_geometry(s.d, s.r[0], s.r[1], s.m[0], s.m[1], s.v[0], s.w[0], s.v[1], s.w[1]);
        let n = hertz_normal(&s.p, &g);
        let sh = hertz_shear(&s.p, &g, &n, &s.history, DT);
        let modes: Vec<_> = (0..4).map(|mode| dashpot(&PairParams { dp_mode: mode, ..s.p }, &g, &n, sh.k_s, sh.slip)).collect();
        // mode 0: full normal and shear dashpot, both opposing the relative motion
        assert!(modes[0].fn_d * g.vel_normal >= 0.0);
        assert!(modes[0].fs_d.dot(g.vel_shear) <= 0.0);
        // modes 1 and 3: the total normal force never becomes tensile
        for m in [1, 3] {
            assert!(n.fn_h + modes[m].fn_d <= 1e-12 * n.fn_h.abs());
            assert!(modes[m].fn_d <= modes[0].fn_d);
        }
        if n.fn_h + modes[0].fn_d > 0.0 {
            tension_seen += 1;
            assert_eq!(n.fn_h + modes[1].fn_d, 0.0, "no-tension cap must bring the normal force to zero exactly");
        }
        // modes 2 and 3: no shear dashpot while sliding, otherwise as mode 0
        for m in [2, 3] {
            if sh.slip {
                assert_eq!(modes[m].fs_d, DVec3::ZERO);
            } else {
                assert_eq!(modes[m].fs_d, modes[0].fs_d);
            }
        }
        cut_seen += (sh.slip && modes[0].fs_d != DVec3::ZERO) as i32;
        assert_eq!(modes[2].fn_d, modes[0].fn_d);
        assert_eq!(modes[1].fs_d, modes[0].fs_d);
    }
    assert!(tension_seen > 10 && cut_seen > 10, "random states must exercise the cap ({tension_seen}) and the cut ({cut_seen})");
}
