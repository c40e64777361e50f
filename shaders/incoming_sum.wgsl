// The total contact force and torque on particle i: its own sum (`force[2i]`, `force[2i + 1]`,
// written by `forces`: the contacts it owns) plus the shares of the active contacts it is the partner of,
// in owner-id order (its incoming run). Used by `gather`, `kick_drift` and `kick`, so every
// pass that needs the total forms it with the same arithmetic. Needs `incoming_start` and the
// split arrays (`gpu::split`) `force`, `incoming` (entries: slot | SLOT_ACTIVE_BIT, the bit kept
// by the owner's force pass while the contact is active) and `shares`.
struct Total {
    force: vec4<f32>,
    torque: vec4<f32>,
}

fn total_force(i: u32) -> Total {
    var t = Total(force_at(2u * i), force_at(2u * i + 1u));
    for (var s = incoming_start[i]; s < incoming_start[i + 1u]; s = s + 1u) {
        let e = incoming_at(s);
        if ((e & SLOT_ACTIVE_BIT) == 0u) { continue; }
        let sh = shares_at(e & ~SLOT_ACTIVE_BIT);
        t.force = vec4<f32>(t.force.xyz + vec3<f32>(sh.force_xy, sh.force_z_torque_x.x), t.force.w);
        t.torque = vec4<f32>(t.torque.xyz + vec3<f32>(sh.force_z_torque_x.y, sh.torque_yz), t.torque.w);
    }
    return t;
}
