// A contact's history as stored (`HistoryRecord`: list slots and the wall-contact table) and
// as the contact models take it (`HistoryGpu`). Pure functions.
//
// A stored record is always an established contact: 1, or, in a scene with adhesion
// (ADHESION), BONDED_APART (a bridge holding the surfaces apart, whose model history is
// empty), which the record carries as |F_n| = −1: no model ever stores a negative
// |F_n|, and the record keeps its 36 bytes (four vec2s and a scalar: five loads or stores).
// The list slots' tables store only the fields the set-up's laws read (`SlotRecord`,
// src/gpu/split.rs's `RecordLayout`); their accessors give and take `HistoryRecord`s.

fn record_history(r: HistoryRecord) -> HistoryGpu {
    if (ADHESION && r.shear_z_normal.y < 0.0) {
        return HistoryGpu(vec3<f32>(0.0), 0.0, 0.0, BONDED_APART, 0.0, 0.0, vec3<f32>(0.0), 0.0);
    }
    return HistoryGpu(vec3<f32>(r.shear_xy, r.shear_z_normal.x), r.shear_z_normal.y, r.impact_compliance.x, 1.0, r.impact_compliance.y, 0.0, vec3<f32>(r.dashpot_xy, r.dashpot_z), 0.0);
}

fn history_record(h: HistoryGpu) -> HistoryRecord {
    if (ADHESION && h.established == BONDED_APART) {
        return HistoryRecord(vec2<f32>(0.0), vec2<f32>(0.0, -1.0), vec2<f32>(0.0), vec2<f32>(0.0), 0.0);
    }
    return HistoryRecord(h.shear.xy, vec2<f32>(h.shear.z, h.normal_force), vec2<f32>(h.impact_velocity, h.shear_compliance), h.dashpot.xy, h.dashpot.z);
}
