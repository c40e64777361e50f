// Mindlin tangential force with history, spec hertz-mindlin-musen.txt ("Tangential force").
// Twin of src/contact/tangential_mindlin.rs: the history holds the spring force only; in a
// slipping step the whole force is Coulomb friction (spring = capped force, no damping).

// Tangential part of a contact with a Mindlin spring.
struct MindlinShear {
    fs: vec3<f32>,      // total tangential force on j (spring + damping, after the Coulomb cap)
    spring: vec3<f32>,  // spring force on j, the history of the next step
    fs_d: vec3<f32>,    // tangential damping force on j (zero while slipping)
    k_t: f32,           // k_t used this step
    compliance: f32,    // its compliance 1/k_t (compliance), which the history keeps
    slip: bool,         // |spring + damping| exceeded μ|F_n|
    slip_work: f32,     // energy dissipated by slip this step
    stiffness_work: f32, // energy the spring lost to its stiffness change this step
    strain: f32,        // strain energy of the spring after this step, ½|spring|²/k_t
}

// k_t = 8 G* √(R* ξ), R* = R̄/2.
fn mindlin_shear_stiffness(p: PairParamsGpu, r_bar: f32, overlap: f32) -> f32 {
    return 8.0 * p.g_star * sqrt(0.5 * r_bar * overlap);
}

// η_t = −1.8257 α √(k_t M*) of the spec, formed as η_n √(4G*/E*) (k_t/k_n = 4G*/E*; the
// ratio is formed once per pair on the host); eta_n = MindlinNormal.eta_n.
fn mindlin_shear_damping(p: PairParamsGpu, eta_n: f32) -> f32 {
    return eta_n * p.mindlin_damping_ratio;
}

// Old spring projected into the new plane (magnitude kept), increment −k_t v_t Δt, damping
// −η_t v_t, Coulomb cap |F_t| ≤ μ |F_n| (fn_mag = |F_n|), slip work.
fn mindlin_shear(p: PairParamsGpu, g: ContactGeometry, k_t: f32, eta_t: f32, fn_mag: f32, h: HistoryGpu, dt: f32) -> MindlinShear {
    let fs_old = rotate_history(h.shear, g.normal);
    let increment = g.vel_shear * dt;
    let spring_trial = fs_old - increment * k_t;
    let damp = g.vel_shear * -eta_t;
    let total = spring_trial + damp;
    let strength = p.fric * fn_mag;
    // compared squared: the length is formed only for a slipping contact
    let slip = dot(total, total) > strength * strength;
    let fs = select(total, total * (strength / length(total)), slip);
    let spring = select(spring_trial, fs, slip);
    let fs_d = select(damp, vec3<f32>(0.0), slip);
    // the spring's own stretch this step: the whole increment while sticking
    let c_t = compliance(k_t);
    let strain = 0.5 * dot(spring, spring) * c_t;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return MindlinShear(fs, spring, fs_d, k_t, c_t, slip, 0.0, 0.0, strain);
    }
    // the slip part of the increment: the increment less the spring's own stretch, which is
    // the whole increment while a spring sticks (no slip work then)
    var slip_work = 0.0;
    if (slip || k_t <= 0.0) {
        let elastic = select(vec3<f32>(0.0), (fs_old - spring) * c_t, k_t > 0.0);
        slip_work = -0.5 * dot(fs_old + spring, increment - elastic);
    }
    let stiffness = stiffness_work(h.shear, h.shear_compliance, fs_old, c_t);
    return MindlinShear(fs, spring, fs_d, k_t, c_t, slip, slip_work, stiffness, strain);
}
