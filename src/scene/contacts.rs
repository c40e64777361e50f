//! The `contacts` section: the contact model of each material pair (`"model"`) and its
//! parameters, with the names each model's spec uses. A key is checked against the model of
//! the object it is written in (a pair entry without `"model"` uses the default's model).

use serde_json::Value;

use super::parse::{did_you_mean, show, Cx, Obj};
use crate::contact::params::{Adhesion, ContactModel, PairParams};
use crate::error::Result;

/// Keys every model accepts.
const COMMON: &[&str] = &["model", "fric", "rolling_fric", "hz_shear", "hz_poiss", "adhesion", "surface_energy", "cohesion_energy_density", "liquid_volume", "surface_tension", "contact_angle"];

/// The keys of each adhesion part (the adhesion keys are accepted with every model; a key of
/// another part than the pair's is an error, `check_resolved`).
fn adhesion_keys(a: Adhesion) -> &'static [&'static str] {
    match a {
        Adhesion::None => &[],
        Adhesion::Jkr | Adhesion::Dmt => &["surface_energy"],
        Adhesion::Sjkr | Adhesion::Sjkr2 => &["cohesion_energy_density"],
        Adhesion::Capillary => &["liquid_volume", "surface_tension", "contact_angle"],
    }
}

/// Every adhesion key.
const ADHESION_KEYS: [&str; 5] = ["surface_energy", "cohesion_energy_density", "liquid_volume", "surface_tension", "contact_angle"];

/// The keys of each model beyond `COMMON` (spec names).
fn model_keys(m: ContactModel) -> &'static [&'static str] {
    match m {
        ContactModel::Hertz => &["hz_alpha", "hz_mode", "rgap", "dp_nratio", "dp_sratio", "dp_alpha", "dp_mode", "limit_damping"],
        ContactModel::Hysteretic => &["hz_alpha", "hz_mode", "dp_mode", "dp_en", "dp_enmin", "limit_damping"],
        ContactModel::Hooke => &[
            "elasticStiffness",
            "characteristicVelocity",
            "useCharacteristicVelocity",
            "coefficientRestitution",
            "tangential_damping",
            "ktToKnUser",
            "limitForce",
            "viscous",
            "FluidViscosity",
            "CriticalStokes",
            "MaximumRestitution",
            "computeDissipatedEnergy",
            "computeElasticPotential",
            "limit_damping",
        ],
        ContactModel::HertzMindlin => &["coefficientRestitution", "limit_damping"],
        ContactModel::HertzViscous => &["coefficientRestitution", "noAttraction", "limit_damping"],
    }
}

/// Options of the specs that need features Talus does not have.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("disableNormalWhenBonded", "needs the bond cohesion model, which Talus does not have"),
    ("heating_normal_hooke", "needs surface heating, which Talus does not have"),
];

/// The model an object selects, or `inherited` when it names none.
pub(crate) fn model_of(cx: &Cx, o: &Obj, inherited: ContactModel) -> Result<ContactModel> {
    match o.get("model") {
        None => Ok(inherited),
        Some(v) => {
            let name = cx.string(v, &o.key("model"))?;
            ContactModel::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = ContactModel::ALL.iter().map(|m| m.name()).collect();
                cx.err(&o.key("model"), format!("unknown contact model {}{}; the models are {}", show(v), did_you_mean(name, names.iter().copied()), names.join(", ")))
            })
        }
    }
}

/// The keys an object of contact model `model` accepts: every model's, the model's own and
/// `extra`, less `excluded` (sorted).
pub(crate) fn allowed_keys(model: ContactModel, extra: &[&'static str], excluded: &[&str]) -> Vec<&'static str> {
    let mut allowed: Vec<&'static str> = COMMON.iter().chain(model_keys(model)).chain(extra).copied().filter(|k| !excluded.contains(k)).collect();
    allowed.sort_unstable();
    allowed.dedup();
    allowed
}

/// Reject keys that `model` does not have (or that need missing features, or that are
/// `excluded` here: `contacts.default` leaves out the inherited keys), naming the model.
pub(crate) fn check_keys(cx: &Cx, o: &Obj, model: ContactModel, extra: &[&'static str], excluded: &[&str]) -> Result<()> {
    let allowed = allowed_keys(model, extra, excluded);
    for k in o.map.keys() {
        if let Some((_, why)) = UNSUPPORTED.iter().find(|(name, _)| name == k) {
            return Err(cx.err(&o.key(k), format!("is not supported: {why}")));
        }
        if !allowed.contains(&k.as_str()) {
            // a key of another model: say which
            let elsewhere: Vec<&str> = ContactModel::ALL.iter().filter(|m| model_keys(**m).contains(&k.as_str())).map(|m| m.name()).collect();
            let other = if elsewhere.is_empty() { String::new() } else { format!(" (a key of {})", elsewhere.join(", ")) };
            return Err(cx.err(&o.key(k), format!("unknown key \"{k}\" for contact model {}{other}{}; allowed keys: {}", model.name(), did_you_mean(k, allowed.iter().copied()), allowed.join(", "))));
        }
    }
    Ok(())
}

/// An on/off switch: JSON true/false or the specs' "on"/"off".
pub(crate) fn switch(cx: &Cx, v: &Value, path: &str) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "on" => Ok(true),
        Value::String(s) if s == "off" => Ok(false),
        _ => Err(cx.err(path, format!("expected true/false or \"on\"/\"off\", got {}", show(v)))),
    }
}

/// Apply the keys present in `o` onto `p` (with range checks); `model` is the object's model.
pub(crate) fn apply_pair_keys(cx: &Cx, o: &Obj, p: &mut PairParams, model: ContactModel) -> Result<()> {
    p.model = model;
    let num = |k: &str| o.f64_opt(k);
    if let Some(x) = num("hz_shear")? {
        p.hz_shear = cx.positive(x, &o.key("hz_shear"))?;
    }
    if let Some(x) = num("hz_poiss")? {
        p.hz_poiss = super::check_poisson(cx, x, &o.key("hz_poiss"))?;
    }
    if let Some(x) = num("fric")? {
        p.fric = cx.non_negative(x, &o.key("fric"))?;
    }
    if let Some(x) = num("rolling_fric")? {
        p.rolling_fric = cx.non_negative(x, &o.key("rolling_fric"))?;
    }
    if let Some(v) = o.get("adhesion") {
        let name = cx.string(v, &o.key("adhesion"))?;
        p.adhesion = Adhesion::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Adhesion::ALL.iter().map(|a| a.name()).collect();
            cx.err(&o.key("adhesion"), format!("unknown adhesion {}; the adhesion parts are {}", show(v), names.join(", ")))
        })?;
    }
    if let Some(x) = num("surface_energy")? {
        p.surface_energy = cx.non_negative(x, &o.key("surface_energy"))?;
        p.given_adhesion_keys |= 1;
    }
    if let Some(x) = num("cohesion_energy_density")? {
        p.cohesion_energy_density = cx.non_negative(x, &o.key("cohesion_energy_density"))?;
        p.given_adhesion_keys |= 2;
    }
    if let Some(x) = num("liquid_volume")? {
        p.liquid_volume = cx.positive(x, &o.key("liquid_volume"))?;
        p.given_adhesion_keys |= 4;
    }
    if let Some(x) = num("surface_tension")? {
        p.surface_tension = cx.positive(x, &o.key("surface_tension"))?;
        p.given_adhesion_keys |= 8;
    }
    if let Some(x) = num("contact_angle")? {
        p.contact_angle = cx.in_closed(x, 0.0, std::f64::consts::FRAC_PI_2, &o.key("contact_angle"))?;
        p.given_adhesion_keys |= 16;
    }
    if let Some(x) = num("hz_alpha")? {
        p.hz_alpha = cx.positive(x, &o.key("hz_alpha"))?;
    }
    if let Some(x) = num("rgap")? {
        p.rgap = x;
    }
    if let Some(x) = num("dp_nratio")? {
        p.dp_nratio = cx.in_closed(x, 0.0, 1.0, &o.key("dp_nratio"))?;
    }
    if let Some(x) = num("dp_sratio")? {
        p.dp_sratio = cx.in_closed(x, 0.0, 1.0, &o.key("dp_sratio"))?;
    }
    if let Some(x) = num("dp_alpha")? {
        p.dp_alpha = cx.non_negative(x, &o.key("dp_alpha"))?;
    }
    if let Some(v) = o.get("hz_mode") {
        p.hz_mode = super::mode(cx, v, &o.key("hz_mode"), 1)?;
    }
    if let Some(v) = o.get("dp_mode") {
        let max = if model == ContactModel::Hysteretic { 2 } else { 3 };
        p.dp_mode = super::mode(cx, v, &o.key("dp_mode"), max)?;
    }
    if let Some(x) = num("dp_en")? {
        p.dp_en = positive_fraction(cx, x, &o.key("dp_en"))?;
    }
    if let Some(x) = num("dp_enmin")? {
        p.dp_enmin = cx.in_closed(x, 0.0, 1.0, &o.key("dp_enmin"))?;
    }
    if let Some(x) = num("coefficientRestitution")? {
        p.restitution = positive_fraction(cx, x, &o.key("coefficientRestitution"))?;
    }
    if let Some(x) = num("elasticStiffness")? {
        p.elastic_stiffness = cx.positive(x, &o.key("elasticStiffness"))?;
    }
    if let Some(x) = num("characteristicVelocity")? {
        p.characteristic_velocity = cx.positive(x, &o.key("characteristicVelocity"))?;
    }
    if let Some(x) = num("FluidViscosity")? {
        p.fluid_viscosity = cx.positive(x, &o.key("FluidViscosity"))?;
    }
    if let Some(x) = num("CriticalStokes")? {
        p.critical_stokes = cx.non_negative(x, &o.key("CriticalStokes"))?;
    }
    if let Some(x) = num("MaximumRestitution")? {
        p.maximum_restitution = positive_fraction(cx, x, &o.key("MaximumRestitution"))?;
    }
    let switches: [(&str, &mut bool); 7] = [
        ("useCharacteristicVelocity", &mut p.use_characteristic_velocity),
        ("tangential_damping", &mut p.tangential_damping),
        ("ktToKnUser", &mut p.kt_to_kn_user),
        ("limitForce", &mut p.limit_force),
        ("viscous", &mut p.viscous),
        ("noAttraction", &mut p.no_attraction),
        ("limit_damping", &mut p.limit_damping),
    ];
    for (k, field) in switches {
        if let Some(v) = o.get(k) {
            *field = switch(cx, v, &o.key(k))?;
        }
    }
    // Energies are always computed; these switches are accepted for compatibility only.
    for k in ["computeDissipatedEnergy", "computeElasticPotential"] {
        if let Some(v) = o.get(k) {
            switch(cx, v, &o.key(k))?;
        }
    }
    Ok(())
}

/// A restitution coefficient: (0, 1].
fn positive_fraction(cx: &Cx, x: f64, path: &str) -> Result<f64> {
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(cx.err(path, format!("must be in (0, 1], got {}", super::parse::fmt_num(x))))
    }
}

/// Checks that need the whole resolved pair (`path` names the object that chose the model).
pub(crate) fn check_resolved(cx: &Cx, p: &PairParams, path: &str) -> Result<()> {
    if p.model == ContactModel::Hooke {
        if p.elastic_stiffness <= 0.0 && p.characteristic_velocity <= 0.0 {
            return Err(cx.err(path, "contact model hooke needs elasticStiffness or characteristicVelocity"));
        }
        if p.use_characteristic_velocity && p.characteristic_velocity <= 0.0 {
            return Err(cx.err(path, "useCharacteristicVelocity is on but characteristicVelocity is not given"));
        }
        if p.viscous && p.fluid_viscosity <= 0.0 {
            return Err(cx.err(path, "viscous is on: FluidViscosity must be given and > 0"));
        }
    }
    check_adhesion(cx, p, path)?;
    if p.model != ContactModel::Hertz && p.rgap != 0.0 {
        return Err(cx.err(path, format!("rgap is a parameter of the hertz model only, got {} for {}", p.rgap, p.model.name())));
    }
    // limit_damping keeps the restitution asked for (`contact::calibration`), down to what the
    // most damped dashpot of the law, cut at zero force, gives
    use crate::contact::calibration::{least_capped_restitution, DampingLaw};
    let (law, key, asked) = match p.model {
        _ if !p.limit_damping => return Ok(()),
        ContactModel::Hooke if !p.viscous => (DampingLaw::Linear, "coefficientRestitution", p.restitution),
        ContactModel::HertzMindlin => (DampingLaw::Tsuji, "coefficientRestitution", p.restitution),
        ContactModel::HertzViscous => (DampingLaw::Antypov, "coefficientRestitution", p.restitution),
        ContactModel::Hysteretic => (DampingLaw::HuntCrossley { mode: p.dp_mode, alpha_bits: p.hz_alpha.to_bits() }, "dp_en", p.dp_en),
        _ => return Ok(()),
    };
    let least = least_capped_restitution(law);
    if asked < least {
        let how = if p.model == ContactModel::Hysteretic { format!("dashpot mode {} at hz_alpha {}", p.dp_mode, super::parse::fmt_num(p.hz_alpha)) } else { "critically damped".to_string() };
        return Err(cx.err(
            path,
            format!(
                "{key} {} with limit_damping: a dashpot that never pulls rebounds at {least:.4} at the least ({how}); give at least that, or turn limit_damping off",
                super::parse::fmt_num(asked)
            ),
        ));
    }
    Ok(())
}

/// The adhesion of a resolved pair: JKR and DMT with `hertz_mindlin` only and without
/// `limit_damping`; each part's keys given (a capillary bridge needs both its liquid volume
/// and the surface tension), no key of another part.
fn check_adhesion(cx: &Cx, p: &PairParams, path: &str) -> Result<()> {
    let a = p.adhesion;
    for (bit, key) in ADHESION_KEYS.iter().enumerate() {
        let given = p.given_adhesion_keys & (1 << bit) != 0;
        if given && !adhesion_keys(a).contains(key) {
            let needs = Adhesion::ALL.iter().filter(|x| adhesion_keys(**x).contains(key)).map(|x| x.name()).collect::<Vec<_>>().join(" or ");
            return Err(cx.err(path, format!("{key} is a parameter of adhesion {needs}, but the pair's adhesion is {}", a.name())));
        }
    }
    if a.changes_spring() {
        if p.model != ContactModel::HertzMindlin {
            return Err(cx.err(path, format!("adhesion {} replaces the Hertz spring of contact model hertz_mindlin and needs that model, got {}", a.name(), p.model.name())));
        }
        if p.limit_damping {
            return Err(cx.err(path, format!("limit_damping cuts every attraction and cannot go with adhesion {}", a.name())));
        }
        if p.surface_energy <= 0.0 {
            return Err(cx.err(path, format!("adhesion {} needs surface_energy > 0 (J/m²)", a.name())));
        }
    }
    if matches!(a, Adhesion::Sjkr | Adhesion::Sjkr2) && p.cohesion_energy_density <= 0.0 {
        return Err(cx.err(path, format!("adhesion {} needs cohesion_energy_density > 0 (J/m³)", a.name())));
    }
    if a == Adhesion::Capillary {
        if p.liquid_volume <= 0.0 {
            return Err(cx.err(path, "adhesion capillary needs liquid_volume > 0 (m³, per bridge)"));
        }
        if p.surface_tension <= 0.0 {
            return Err(cx.err(path, format!("adhesion capillary has liquid_volume {} but no surface_tension: give the liquid's surface tension (N/m)", super::parse::fmt_num(p.liquid_volume))));
        }
    }
    Ok(())
}
