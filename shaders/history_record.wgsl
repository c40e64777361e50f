// A contact's history as stored (`HistoryRecord`: list slots and the wall-contact table) and
// as the contact models take it (`HistoryGpu`). Pure functions.

fn record_history(r: HistoryRecord) -> HistoryGpu {
    // a stored record is always an established contact
    return HistoryGpu(vec3<f32>(r.shear_x, r.shear_y, r.shear_z), r.normal_force, r.impact_velocity, 1.0, r.shear_compliance, 0.0, vec3<f32>(r.dashpot_x, r.dashpot_y, r.dashpot_z), 0.0);
}

fn history_record(h: HistoryGpu) -> HistoryRecord {
    return HistoryRecord(h.shear.x, h.shear.y, h.shear.z, h.normal_force, h.impact_velocity, h.shear_compliance, h.dashpot.x, h.dashpot.y, h.dashpot.z);
}
