// The total contact force and torque on particle i: its own sum (`force[2i]`, `force[2i + 1]`,
// written by `forces`: the contacts it owns) plus the shares of the active contacts it is the partner of,
// in owner-id order (its incoming run). Used by `gather`, `kick_drift` and `kick`, so every
// pass that needs the total forms it with the same arithmetic. Needs the module-scope
// `force`, `incoming_start`, `incoming_slot`, `list_partner` (the owner sets
// SLOT_ACTIVE_BIT in a slot's partner word when the contact is active) and `shares`.
struct Total {
    force: vec4<f32>,
    torque: vec4<f32>,
}

fn total_force(i: u32) -> Total {
    var t = Total(force[2u * i], force[2u * i + 1u]);
    for (var s = incoming_start[i]; s < incoming_start[i + 1u]; s = s + 1u) {
        let k = incoming_slot[s];
        if ((list_partner[k] & SLOT_ACTIVE_BIT) == 0u) { continue; }
        t.force = vec4<f32>(t.force.xyz + shares[2u * k].xyz, t.force.w);
        t.torque = vec4<f32>(t.torque.xyz + shares[2u * k + 1u].xyz, t.torque.w);
    }
    return t;
}
