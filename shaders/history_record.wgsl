// A contact's history as stored (`HistoryRecord`: list slots and the wall-contact table) and
// as the contact models take it (`HistoryGpu`). Pure functions.
//
// A stored record is always an established contact: 1, or, in a scene with adhesion
// (ADHESION), BONDED_APART (a bridge holding the surfaces apart, whose model history is
// empty), which the record carries as normal_force = −1: no model ever stores a negative
// |F_n|, and the record keeps its 36 bytes.

fn record_history(r: HistoryRecord) -> HistoryGpu {
    if (ADHESION && r.normal_force < 0.0) {
        return HistoryGpu(vec3<f32>(0.0), 0.0, 0.0, BONDED_APART, 0.0, 0.0, vec3<f32>(0.0), 0.0);
    }
    return HistoryGpu(vec3<f32>(r.shear_x, r.shear_y, r.shear_z), r.normal_force, r.impact_velocity, 1.0, r.shear_compliance, 0.0, vec3<f32>(r.dashpot_x, r.dashpot_y, r.dashpot_z), 0.0);
}

fn history_record(h: HistoryGpu) -> HistoryRecord {
    if (ADHESION && h.established == BONDED_APART) {
        return HistoryRecord(0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    }
    return HistoryRecord(h.shear.x, h.shear.y, h.shear.z, h.normal_force, h.impact_velocity, h.shear_compliance, h.dashpot.x, h.dashpot.y, h.dashpot.z);
}
