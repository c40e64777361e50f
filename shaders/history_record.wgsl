// A contact's history as stored (`HistoryRecord`: list slots and the wall-contact table) and
// as the contact models take it (`HistoryGpu`). Pure functions.

fn record_history(r: HistoryRecord) -> HistoryGpu {
    return HistoryGpu(vec3<f32>(r.shear_x, r.shear_y, r.shear_z), r.normal_force, r.impact_velocity, r.established, r.shear_stiffness, 0.0);
}

fn history_record(h: HistoryGpu) -> HistoryRecord {
    return HistoryRecord(h.shear.x, h.shear.y, h.shear.z, h.normal_force, h.impact_velocity, h.established, h.shear_stiffness);
}
