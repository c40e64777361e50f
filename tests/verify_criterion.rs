//! The criterion of `talus verify` (docs/verification.md), on two f64 CPU backends so that it
//! runs without a GPU and its outcome is known: the same run passes with nothing to show,
//! a run that differs from the reference by a rounding-sized nudge parts from it in the
//! chaotic pile-up and still passes (its energies as means after parting), and a run with
//! another friction coefficient fails.

use talus::cpu::CpuBackend;
use talus::verify::{coherent_checkpoints, rounding_work, verify_backends, Tolerances, TracePoint, VerifyReport, Window};
use talus::{Energies, Setup};

mod common;

/// mixed_models_box as shipped (1500 beads poured into a box, 3000 steps): the pile-up parts
/// any two runs that differ at all.
fn pour() -> Setup {
    let mut s = common::shipped_scene("mixed_models_box.json");
    s.snapshot_every = 0;
    s
}

fn verify_cpu_against(reference: &Setup, other: &Setup) -> VerifyReport {
    let mut a = CpuBackend::new(reference).expect("reference backend");
    let mut b = CpuBackend::new(other).expect("other backend");
    verify_backends(reference, &mut a, &mut b, reference.steps, &Tolerances::default()).expect("verify")
}

fn energy_rows(report: &VerifyReport, window: Window) -> usize {
    report.rows.iter().filter(|r| r.window == window).count()
}

#[test]
fn the_same_run_passes_as_one_trajectory() {
    let s = pour();
    let report = verify_cpu_against(&s, &s);
    println!("{report}");
    assert!(report.passed(), "{report}");
    assert_eq!(report.parted_at, None, "{report}");
    assert_eq!(energy_rows(&report, Window::Coherent), 13);
    assert_eq!(energy_rows(&report, Window::Parted), 0, "no means without parting");
    assert!(report.rows.iter().all(|r| r.max_abs == 0.0), "two runs of one backend are bit-identical:\n{report}");
}

#[test]
fn a_rounding_sized_nudge_parts_the_runs_and_passes_as_means() {
    let s = pour();
    let mut nudged = s.clone();
    // one bead moved by 1e-10 m, below f32's resolution of its coordinates (about 3e-9 m)
    nudged.particles.position[0][0] += 1e-10;
    let report = verify_cpu_against(&s, &nudged);
    println!("{report}");
    let parted = report.parted_at.expect("the pile-up parts the runs");
    assert!(parted > 100 && parted < s.steps, "parted at step {parted}\n{report}");
    assert_eq!(energy_rows(&report, Window::Parted), 13);
    let whole = report.row("position", Window::Whole).unwrap();
    assert!(whole.max_rel > 0.01, "the runs end as different packings: {:.3e} of a radius\n{report}", whole.max_rel);
    assert!(report.passed(), "{report}");
}

#[test]
fn a_bounce_at_another_phase_of_a_step_parts_the_runs() {
    // ball_wall_damped dropped 0.44 µm lower (a seventh of a step's travel at impact; the GPU's
    // f32 free fall ends that far off): even in f64 the first bounce then loses 1 % more of its
    // rebound energy, so the runs are compared as one trajectory only while they are within a
    // hundredth of a step's travel, and as means after
    let s = common::shipped_scene("ball_wall_damped.json");
    let mut lower = s.clone();
    lower.particles.position[0][2] -= 4.4e-7;
    let report = verify_cpu_against(&s, &lower);
    println!("{report}");
    let parted = report.parted_at.expect("the runs part by phase");
    let fall = 12_772; // the first contact
    assert!(parted < fall, "parted at step {parted}, after the first contact\n{report}");
    let first_contact = report.trace.iter().find(|t| t.step >= fall && t.step <= fall + 200 && t.force_sum > 0.0);
    assert!(first_contact.is_some_and(|t| !t.one_trajectory(&Tolerances::default())), "{report}");
    assert!(report.passed(), "{report}");
    // held as one trajectory through the bounce, the rebound's kinetic energy is 1 % apart
    let no_phase = Tolerances { phase: f64::INFINITY, ..Tolerances::default() };
    let mut a = CpuBackend::new(&s).unwrap();
    let mut b = CpuBackend::new(&lower).unwrap();
    let strict = verify_backends(&s, &mut a, &mut b, s.steps, &no_phase).unwrap();
    let kinetic = strict.row("kinetic", Window::Coherent).unwrap();
    assert!(!kinetic.ok() && kinetic.at_step > fall, "{strict}");
}

#[test]
fn another_friction_coefficient_fails() {
    let s = pour();
    let mut other = s.clone();
    other.pairs.entries.iter_mut().for_each(|p| p.fric *= 0.5);
    let report = verify_cpu_against(&s, &other);
    println!("{report}");
    assert!(!report.passed(), "{report}");
    // friction spins the beads: the mean rotational energy after parting tells the runs apart
    let spin = report.row("kinetic_rotational", Window::Parted).expect("the runs part");
    assert!(!spin.ok(), "the mean rotational energy must differ beyond {:.0e}: {:.3e}\n{report}", spin.tolerance.unwrap(), spin.max_rel);
}

fn point(step: u64, coordinate: f64, force_sum: f64) -> TracePoint {
    TracePoint { step, position_deviation: 0.0, state: [0.0; 5], phase: 0.0, active_energy: 1.0, coordinate, force_sum, reference: Energies::default(), other: Energies::default() }
}

fn with_state(step: u64, state: [f64; 5]) -> TracePoint {
    TracePoint { state, ..point(step, 1.0, 0.0) }
}

#[test]
fn runs_are_one_trajectory_until_the_first_checkpoint_beyond_a_state_tolerance() {
    let tol = Tolerances::default();
    let within = [0.5e-3, 0.5e-2, 4e-2, 4e-2, 4e-2];
    let trace = [with_state(0, [0.0; 5]), with_state(10, within), with_state(20, [0.5e-3, 0.5e-2, 4e-2, 6e-2, 0.0]), with_state(30, within)];
    assert_eq!(coherent_checkpoints(&trace, &tol), 2, "a force beyond 5e-2 parts them; a later return within does not count");
    for k in 0..5 {
        let mut beyond = within;
        beyond[k] = tol.state()[k] * 1.01;
        assert_eq!(coherent_checkpoints(&[with_state(0, [0.0; 5]), with_state(10, beyond)], &tol), 1, "state quantity {k}");
    }
    let counts_differ = [with_state(0, [0.0; 5]), with_state(10, [f64::NAN; 5])];
    assert_eq!(coherent_checkpoints(&counts_differ, &tol), 1);
    // within every state tolerance, but a tenth of a step's travel apart: impacts would begin
    // at other phases of a step
    let out_of_phase = [with_state(0, [0.0; 5]), TracePoint { phase: 0.1, ..with_state(10, within) }];
    assert_eq!(coherent_checkpoints(&out_of_phase, &tol), 1);
}

#[test]
fn rounding_work_of_forces_adds_as_a_random_walk() {
    // 100 steps at X Σ|F| = 2 J, then 300 steps at 2 J: 2⁻²⁴ · 2 · √400
    let trace = [point(0, 0.1, 20.0), point(100, 0.1, 20.0), point(400, 0.1, 20.0)];
    let w = rounding_work(&trace);
    let unit = 2.0f64.powi(-24);
    assert_eq!(w[0], 0.0);
    assert!((w[1] - unit * 2.0 * 10.0).abs() < 1e-12 * w[1]);
    assert!((w[2] - unit * 2.0 * 20.0).abs() < 1e-12 * w[2]);
    // an interval is taken at the larger of its ends
    let rising = [point(0, 0.1, 0.0), point(100, 0.1, 20.0)];
    assert!((rounding_work(&rising)[1] - unit * 2.0 * 10.0).abs() < 1e-12 * unit * 20.0);
}

#[test]
fn rounding_of_velocities_adds_linearly() {
    // no forces, 1 J of kinetic energy (the larger backend's) over 1000 steps: 2⁻²² J per step
    let moving = |step| {
        let mut p = point(step, 0.1, 0.0);
        p.other.kinetic_translational = 1.0;
        p.reference.kinetic_translational = 0.5;
        p
    };
    let w = rounding_work(&[moving(0), moving(1000)]);
    assert!((w[1] - 1000.0 * 2.0f64.powi(-22)).abs() < 1e-12 * w[1], "{w:?}");
}
