// A contact's model is chosen per material pair (PairParamsGpu.model); this is the one entry
// point the force pass calls. Twin of src/contact/model.rs.

// Everything one active contact contributes in one step.
struct ContactOutput {
    force_j: vec3<f32>,     // total contact force on j (i feels −force_j), eqs (1)–(2)
    strain: f32,            // strain energy stored in the contact, eq (15)
    torque_i: vec3<f32>,    // torque on i about its centre
    slip_work: f32,         // slip work this step, eq (16)
    torque_j: vec3<f32>,    // torque on j about its centre (zero for a wall)
    dashpot_work: f32,      // dashpot work this step, eq (17)
    history: HistoryGpu,    // history for the next step
    stiffness_work: f32,    // energy the shear spring lost to its stiffness change this step
    surface: f32,           // surface energy of the contact's adhesion, U_a (zero at touch); 0 dry
}

// One step of an active contact with the model of its material pair.
fn contact_force(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    switch p.model {
        case MODEL_HYSTERETIC: {
            return hysteretic_contact(p, g, h, dt);
        }
        case MODEL_HOOKE: {
            return hooke_contact(p, g, h, dt);
        }
        case MODEL_HERTZ_MINDLIN: {
            return hertz_mindlin_contact(p, g, h, dt);
        }
        case MODEL_HERTZ_VISCOUS: {
            return hertz_viscous_contact(p, g, h, dt);
        }
        case MODEL_HERTZ, default: {
            return hertz_contact(p, g, h, dt);
        }
    }
}

// The normal spring of a pair's model in the previous step, (F(n−1), U(n−1)) at
// previous_overlap, formed as the model's preset forms it, for normal_step_work.
fn previous_spring(p: PairParamsGpu, g: ContactGeometry, dt: f32) -> vec2<f32> {
    let overlap = previous_overlap(p, g, dt);
    switch p.model {
        case MODEL_HERTZ_MINDLIN: {
            return mindlin_spring(p, g.r_bar, overlap).yz;
        }
        case MODEL_HERTZ_VISCOUS: {
            return power_spring(hertz_k_n0(p, g.r_bar), 1.5, overlap);
        }
        case MODEL_HOOKE: {
            return power_spring(hooke_stiffness(p, g), 1.0, overlap);
        }
        case MODEL_HERTZ, MODEL_HYSTERETIC, default: {
            return power_spring(hertz_coefficient(p, g.r_bar), p.hz_alpha, overlap);
        }
    }
}

// What a contact that was active in the previous step and is not in this one still
// dissipates: the second half of the trapezoids of dashpot_work and rolling_resistance, the
// previous step's dashpot forces and rolling torques (in h) at this step's velocities, its
// shear spring's release (released_spring_work) and its normal spring's last step
// (normal_step_work with no force now). Returns (dashpot work, slip work, stiffness work); zeros without energy tracking.
fn ended_contact_work(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> vec3<f32> {
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return vec3<f32>(0.0);
    }
    let dashpot = 0.5 * previous_dashpot_power(g, h) * dt;
    let rolls = (p.model == MODEL_HERTZ_MINDLIN || p.model == MODEL_HERTZ_VISCOUS) && p.rolling_fric != 0.0;
    let rolling = select(0.0, 0.5 * previous_rolling_power(p, g, h.normal_force) * dt, rolls);
    let stepping = normal_step_work(g, previous_spring(p, g, dt), vec2<f32>(0.0), dt);
    return vec3<f32>(dashpot, rolling + released_spring_work(g, h, dt), stepping);
}
