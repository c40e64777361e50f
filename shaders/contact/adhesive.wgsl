// Adhesion added to any model (SJKR, SJKR2, the capillary bridge), the entry point of a
// scene with adhesion, and what a bond gives up when it breaks. Twin of
// src/contact/adhesive.rs.
//
// A bonded contact is in one of two states (HistoryGpu.established): 1 while the surfaces
// touch (the model's own history is kept), BONDED_APART while a bridge holds them apart (the
// model's part has ended; the bridge alone acts). A stored record carries BONDED_APART as
// normal_force = −1 (shaders/history_record.wgsl).

// One step of an active contact of a scene with adhesion: dry pairs as contact_force, JKR and
// DMT as hertz_mindlin_adhesive_contact, the others added_adhesion_contact.
fn adhesive_contact_force(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    switch p.adhesion {
        case ADHESION_NONE: {
            return contact_force(p, g, h, dt);
        }
        case ADHESION_JKR, ADHESION_DMT: {
            return hertz_mindlin_adhesive_contact(p, g, h, dt);
        }
        default: {
            return added_adhesion_contact(p, g, h, dt);
        }
    }
}

// One step of a contact whose adhesion is added to its model: the model's step while the
// surfaces touch (from an empty history after a bridge held them apart), nothing of it while
// apart (its end booked in the step it ends), and the adhesive pull F_a along the normal (no
// torque), with its surface energy and its spring work (booked with the stiffness work).
fn added_adhesion_contact(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    let adhesive = adhesive_part(p, g, g.gap);
    var c = ContactOutput();
    if (g.gap - p.rgap <= 0.0) {
        var dry = h;
        if (h.established == BONDED_APART) {
            dry = HistoryGpu();
        }
        c = contact_force(p, g, dry, dt);
    } else {
        c.history.established = BONDED_APART;
        if (h.established == 1.0) {
            let ended = ended_contact_work(p, g, h, dt);
            c.dashpot_work = ended.x;
            c.slip_work = ended.y;
            c.stiffness_work = ended.z;
        }
    }
    c.force_j = c.force_j - g.normal * adhesive.force;
    c.surface = adhesive.energy;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) == 0u) {
        let before = previous_adhesive(p, g, h, dt);
        c.stiffness_work = c.stiffness_work + normal_step_work(g, vec2<f32>(-before.force, before.energy), vec2<f32>(-adhesive.force, adhesive.energy), dt);
    }
    return c;
}

// What a contact of a scene with adhesion that was active in the previous step and is not in
// this one still books: (dashpot, slip, stiffness, bond break). The model's part as
// ended_contact_work unless a bridge held the surfaces apart; a bond's last step of spring
// work (stiffness) and its surface energy to the bond-break partition for a bond with a
// tensile range (JKR, capillary), else with the stiffness work.
fn ended_adhesive_work(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> vec4<f32> {
    var work = vec3<f32>(0.0);
    if (h.established != BONDED_APART) {
        work = ended_contact_work(p, g, h, dt);
    }
    var broken = 0.0;
    if (p.adhesion != ADHESION_NONE && (p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) == 0u) {
        let before = previous_adhesive(p, g, h, dt);
        work.z = work.z + normal_step_work(g, vec2<f32>(-before.force, 0.0), vec2<f32>(0.0), dt);
        if (tensile_range(p, g.r_bar) > 0.0) {
            broken = before.energy;
        } else {
            work.z = work.z + before.energy;
        }
    }
    return vec4<f32>(work, broken);
}
