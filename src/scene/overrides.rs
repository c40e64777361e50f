//! `talus run SCENE --set PATH=VALUE`: a scene value changed without editing the file.
//!
//! PATH names a value by its keys joined with dots (`materials.glass.fric`,
//! `contacts.default.coefficientRestitution`, `duration`); a list's entries are numbered from 0
//! (`generators.0.count`). VALUE is read as JSON (a number, `true`, `[0, 0, 1]`, `"text"`) and
//! otherwise taken as a string (`hertz_mindlin`); `null` takes the key out of its object
//! (`--set steps=null --set duration=0.1` turns a scene of steps into one of duration). Each
//! override replaces the value in the scene's JSON before it is parsed, so every check of the
//! scene applies to it as to the file;
//! a PATH may end in a key the scene does not have yet when the object above it exists (the
//! parser then says whether the key belongs there). A run's overrides travel with its
//! checkpoint (`checkpoint::SceneRecord::overrides`; `parse_with` reads a record's text with them) and are recorded in `summary.json`.

use std::path::Path;

use serde_json::Value;

use super::parse::{closest, join, show};
use crate::error::{Result, TalusError};
use crate::setup::Setup;

pub use super::override_arg::Override;

/// The overrides that count: one that a later override replaces (the same path, or a path
/// above it) is left out. What is left gives the same scene in any order in which each path
/// comes after the paths above it, such as the sorted order of `summary.json`'s object.
pub fn effective(overrides: Vec<Override>) -> Vec<Override> {
    let replaced = |i: usize| overrides[i + 1..].iter().any(|later| overrides[i].path == later.path || overrides[i].path.starts_with(&format!("{}.", later.path)));
    let keep: Vec<bool> = (0..overrides.len()).map(|i| !replaced(i)).collect();
    overrides.into_iter().zip(keep).filter_map(|(o, k)| k.then_some(o)).collect()
}

/// Replace the value `o.path` names in the scene JSON `root` of scene file `file`. An error
/// names `--set PATH` and what the scene has there instead.
pub fn apply(root: &mut Value, o: &Override, file: &Path) -> Result<()> {
    let err = |message: String| TalusError::scene(file, format!("--set {}", o.path), message);
    let keys: Vec<&str> = o.path.split('.').collect();
    let mut cur = root;
    let mut walked = String::new();
    for (i, &key) in keys.iter().enumerate() {
        let last = i + 1 == keys.len();
        let here = if walked.is_empty() { "the scene's top level".to_string() } else { format!("`{walked}`") };
        match cur {
            Value::Object(map) => {
                if !map.contains_key(key) {
                    if last && o.value.is_null() {
                        return Err(err(format!("{here} has no key \"{key}\" to take out (`null` removes a key)")));
                    }
                    if last {
                        // a key the scene leaves out: the parser checks that it belongs here
                        map.insert(key.to_string(), o.value.clone());
                        return Ok(());
                    }
                    let hint = match closest(key, map.keys().map(|k| k.as_str())) {
                        Some(c) => format!("; did you mean \"{c}\"?"),
                        None => String::new(),
                    };
                    let keys: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
                    return Err(err(format!("{here} has no key \"{key}\"{hint} (its keys: {})", keys.join(", "))));
                }
                if last && o.value.is_null() {
                    // `null` takes the key out (`--set steps=null --set duration=0.1`)
                    map.remove(key);
                    return Ok(());
                }
                let next = map.get_mut(key).expect("the key is there");
                if last {
                    *next = o.value.clone();
                    return Ok(());
                }
                cur = next;
            }
            Value::Array(items) => {
                let n = items.len();
                let k: usize = key.parse().map_err(|_| err(format!("{here} is a list of {n}: give an entry's number, 0 to {}, not \"{key}\"", n.saturating_sub(1))))?;
                if k >= n {
                    return Err(err(format!("{here} is a list of {n}: it has no entry {k} (0 to {})", n.saturating_sub(1))));
                }
                if last {
                    items[k] = o.value.clone();
                    return Ok(());
                }
                cur = &mut items[k];
            }
            other => return Err(err(format!("{here} is {}, not an object or a list: it has no \"{key}\"", show(other)))),
        }
        walked = join(&walked, key);
    }
    Ok(())
}

/// The set-up of scene `text` (file `source`) with `overrides` applied in order (a later one
/// wins). A scene error about a value an override set says so (`(set by --set PATH=VALUE)`).
pub fn parse_with(text: &str, source: &Path, overrides: &[Override]) -> Result<Setup> {
    let mut root = super::parse_json(text, source)?;
    for o in overrides {
        apply(&mut root, o, source)?;
    }
    super::parse_value(&root, source).map_err(|e| match e {
        TalusError::Scene { file, key, message } => {
            let dotted = dotted(&key);
            let by = overrides.iter().rev().find(|o| dotted == o.path || dotted.starts_with(&format!("{}.", o.path)) || o.path.starts_with(&format!("{dotted}.")));
            // a key beside one an override set (`contacts.default.dp_nratio` after `--set
            // contacts.default.model=hooke`)
            let parent = |p: &str| p.rsplit_once('.').map(|(a, _)| a.to_string()).unwrap_or_default();
            let beside = overrides.iter().rev().find(|o| parent(&o.path) == parent(&dotted));
            match (by, beside) {
                (Some(o), _) => TalusError::Scene { file, key, message: format!("{message} (set by --set {})", o.arg()) },
                (None, Some(o)) => TalusError::Scene { file, key, message: format!("{message} (with --set {})", o.arg()) },
                (None, None) => TalusError::Scene { file, key, message },
            }
        }
        e => e,
    })
}

/// A parser key path (`generators[1].radius.min`) in `--set` form (`generators.1.radius.min`).
fn dotted(key: &str) -> String {
    key.replace('[', ".").replace(']', "")
}

/// FNV-1a (64-bit) of `data`, as 16 hex digits: the checksum `summary.json` gives the scene text.
pub fn fnv1a64(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(root: &mut Value, arg: &str) -> Result<()> {
        apply(root, &Override::parse(arg).unwrap(), Path::new("s.json"))
    }

    #[test]
    fn values_are_json_or_strings() {
        assert_eq!(Override::parse("a.b=0.2").unwrap().value, json!(0.2));
        assert_eq!(Override::parse("a=[0, 0, 1]").unwrap().value, json!([0, 0, 1]));
        assert_eq!(Override::parse("a=true").unwrap().value, json!(true));
        assert_eq!(Override::parse("a=hooke").unwrap().value, json!("hooke"));
        assert_eq!(Override::parse("a=\"1\"").unwrap().value, json!("1"));
        assert!(Override::parse("a").unwrap_err().contains("expected PATH=VALUE"));
        assert!(Override::parse("a..b=1").unwrap_err().contains("not a path"));
    }

    #[test]
    fn paths_walk_objects_and_lists() {
        let mut v = json!({"materials": {"glass": {"fric": 0.5}}, "generators": [{"count": 3}]});
        set(&mut v, "materials.glass.fric=0.2").unwrap();
        set(&mut v, "generators.0.count=7").unwrap();
        set(&mut v, "materials.glass.density=2500").unwrap();
        assert_eq!(v, json!({"materials": {"glass": {"fric": 0.2, "density": 2500}}, "generators": [{"count": 7}]}));
        set(&mut v, "materials.glass.density=null").unwrap();
        assert_eq!(v["materials"]["glass"], json!({"fric": 0.2}));
        let e = set(&mut v, "materials.glass.density=null").unwrap_err().to_string();
        assert!(e.contains("has no key \"density\" to take out"), "{e}");
        let e = set(&mut v, "materials.glas.fric=0.2").unwrap_err().to_string();
        assert!(e.contains("s.json: --set materials.glas.fric: `materials` has no key \"glas\"; did you mean \"glass\"?"), "{e}");
        let e = set(&mut v, "generators.3.count=1").unwrap_err().to_string();
        assert!(e.contains("`generators` is a list of 1: it has no entry 3"), "{e}");
        let e = set(&mut v, "materials.glass.fric.x=1").unwrap_err().to_string();
        assert!(e.contains("`materials.glass.fric` is 0.2, not an object or a list"), "{e}");
    }

    #[test]
    fn later_overrides_replace_earlier_ones() {
        let o = |a: &str| Override::parse(a).unwrap();
        let kept = effective(vec![o("a.b=1"), o("c=2"), o("a={}"), o("a.d=3"), o("c=4")]);
        assert_eq!(kept, vec![o("a={}"), o("a.d=3"), o("c=4")]);
    }

    #[test]
    fn fnv1a64_of_known_strings() {
        assert_eq!(fnv1a64(b""), "cbf29ce484222325");
        assert_eq!(fnv1a64(b"a"), "af63dc4c8601ec8c");
    }
}
