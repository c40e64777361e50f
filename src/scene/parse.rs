//! Helpers for walking a `serde_json::Value` by hand while keeping a key path
//! (`materials.glass.density`, `generators[1].radius.min`) for error messages.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Result, TalusError};

/// Error context: the scene file.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub file: &'a Path,
}

/// `a.b` (or `b` at the root).
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `a[i]`.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A JSON value as the user wrote it (shortened).
pub(crate) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let t: String = s.chars().take(77).collect();
        format!("{t}...")
    } else {
        s
    }
}

pub(crate) use crate::error::{fmt_num, fmt_sig};

/// `x` to 4 significant figures, or as many more as it takes to tell it from each of
/// `others` (a value just outside a range reads `1.00001`, not `1`).
pub(crate) fn fmt_apart(x: f64, others: &[f64]) -> String {
    for sig in 4..=17 {
        let s = fmt_sig(x, sig);
        if others.iter().all(|&o| o == x || fmt_sig(o, sig) != s) {
            return s;
        }
    }
    format!("{x}")
}

/// `x` to 4 significant figures rounded towards zero, so that the printed bound itself
/// passes a check `value <= x` (the largest safe time step or fraction).
pub(crate) fn fmt_floor(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let p = 10f64.powi(x.abs().log10().floor() as i32 - 3);
    let mut y = (x / p).floor() * p;
    // (the division can land a hair above an integer)
    if y > x {
        y -= p;
    }
    let s = fmt_sig(y, 4);
    match s.parse::<f64>() {
        Ok(v) if v <= x => s,
        _ => fmt_sig(y - p, 4),
    }
}

/// `; did you mean "x"?` for the candidate closest to `word` by edit distance, when one is
/// close enough to be a likely typo (or differs only in case), else "".
pub(crate) fn did_you_mean<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    match closest(word, candidates) {
        Some(c) => format!("; did you mean \"{c}\"?"),
        None => String::new(),
    }
}

/// The candidate closest to `word`: at most about a third of its length (1 to 3) edits
/// away, or equal ignoring case and `_`.
pub(crate) fn closest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let fold = |s: &str| s.to_lowercase().replace(['_', '-'], "");
    let limit = ((word.chars().count() + 1) / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    let candidates_kept: Vec<&'c str> = candidates.into_iter().collect();
    for &c in &candidates_kept {
        let d = if fold(c) == fold(word) { 0 } else { strsim::damerau_levenshtein(word, c) };
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    if best.is_none() && word.chars().count() >= 4 {
        // a part of a longer key: `restitution` for `coefficientRestitution`
        let w = fold(word);
        return candidates_kept.into_iter().find(|c| fold(c).contains(&w));
    }
    best.map(|(_, c)| c)
}

pub(crate) fn fmt_vec(v: [f64; 3]) -> String {
    format!("[{}, {}, {}]", fmt_num(v[0]), fmt_num(v[1]), fmt_num(v[2]))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl<'a> Cx<'a> {
    pub fn err(&self, key: &str, message: impl Into<String>) -> TalusError {
        TalusError::scene(self.file, key, message)
    }

    fn wrong_type(&self, path: &str, expected: &str, v: &Value) -> TalusError {
        self.err(path, format!("expected {expected}, got {} {}", type_name(v), show(v)))
    }

    pub fn object<'v>(&self, v: &'v Value, path: &str) -> Result<Obj<'v, 'a>> {
        match v {
            Value::Object(map) => Ok(Obj { map, path: path.to_string(), cx: *self }),
            _ => Err(self.wrong_type(path, "an object", v)),
        }
    }

    pub fn array<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Vec<Value>> {
        match v {
            Value::Array(a) => Ok(a),
            _ => Err(self.wrong_type(path, "an array", v)),
        }
    }

    pub fn string<'v>(&self, v: &'v Value, path: &str) -> Result<&'v str> {
        match v {
            Value::String(s) => Ok(s),
            _ => Err(self.wrong_type(path, "a string", v)),
        }
    }

    /// A finite number. Strings such as "NaN" or "inf" are type errors.
    pub fn number(&self, v: &Value, path: &str) -> Result<f64> {
        match v {
            Value::Number(n) => match n.as_f64() {
                Some(x) if x.is_finite() => Ok(x),
                _ => Err(self.err(path, format!("expected a finite number, got {}", show(v)))),
            },
            _ => Err(self.wrong_type(path, "a number", v)),
        }
    }

    /// A non-negative integer (an integral float such as 1e4 is accepted).
    pub fn uint(&self, v: &Value, path: &str) -> Result<u64> {
        if let Value::Number(n) = v {
            if let Some(u) = n.as_u64() {
                return Ok(u);
            }
            if let Some(x) = n.as_f64() {
                if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_992e15 {
                    return Ok(x as u64);
                }
            }
        }
        Err(self.wrong_type(path, "a non-negative integer", v))
    }

    pub fn vec3(&self, v: &Value, path: &str) -> Result<[f64; 3]> {
        let a = match v {
            Value::Array(a) if a.len() == 3 => a,
            _ => return Err(self.wrong_type(path, "an array of 3 numbers", v)),
        };
        Ok([
            self.number(&a[0], &index(path, 0))?,
            self.number(&a[1], &index(path, 1))?,
            self.number(&a[2], &index(path, 2))?,
        ])
    }

    // ---- range checks (the message always holds the value) ----

    pub fn positive(&self, x: f64, path: &str) -> Result<f64> {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.err(path, format!("must be > 0, got {}", fmt_num(x))))
        }
    }

    pub fn non_negative(&self, x: f64, path: &str) -> Result<f64> {
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(self.err(path, format!("must be >= 0, got {}", fmt_num(x))))
        }
    }

    /// `lo <= x <= hi`.
    pub fn in_closed(&self, x: f64, lo: f64, hi: f64, path: &str) -> Result<f64> {
        if x >= lo && x <= hi {
            Ok(x)
        } else {
            Err(self.err(path, format!("must be in [{}, {}], got {}", fmt_num(lo), fmt_num(hi), fmt_apart(x, &[lo, hi]))))
        }
    }

    /// `lo < x <= hi`.
    pub fn in_half_open(&self, x: f64, lo: f64, hi: f64, path: &str) -> Result<f64> {
        if x > lo && x <= hi {
            Ok(x)
        } else {
            Err(self.err(path, format!("must be in ({}, {}], got {}", fmt_num(lo), fmt_num(hi), fmt_apart(x, &[lo, hi]))))
        }
    }

    /// `min < max` on every axis.
    pub fn ordered_box(&self, min: [f64; 3], max: [f64; 3], path: &str) -> Result<()> {
        for k in 0..3 {
            if min[k] >= max[k] {
                let axis = ["x", "y", "z"][k];
                return Err(self.err(
                    path,
                    format!(
                        "min must be < max on every axis, but on {axis}: min {} >= max {} (min = {}, max = {})",
                        fmt_apart(min[k], &[max[k]]),
                        fmt_apart(max[k], &[min[k]]),
                        fmt_vec(min),
                        fmt_vec(max)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A JSON object together with its key path.
pub(crate) struct Obj<'v, 'a> {
    pub map: &'v Map<String, Value>,
    pub path: String,
    pub cx: Cx<'a>,
}

impl<'v, 'a> Obj<'v, 'a> {
    pub fn key(&self, k: &str) -> String {
        join(&self.path, k)
    }

    /// Reject keys not in `allowed`, listing the allowed ones.
    pub fn allow(&self, allowed: &[&str]) -> Result<()> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.cx.err(
                    &self.key(k),
                    format!("unknown key \"{k}\"{}; allowed keys here: {}", did_you_mean(k, allowed.iter().copied()), allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    pub fn get(&self, k: &str) -> Option<&'v Value> {
        self.map.get(k)
    }

    pub fn req(&self, k: &str) -> Result<&'v Value> {
        self.map.get(k).ok_or_else(|| self.cx.err(&self.key(k), "missing required key"))
    }

    pub fn f64_req(&self, k: &str) -> Result<f64> {
        self.cx.number(self.req(k)?, &self.key(k))
    }

    pub fn f64_opt(&self, k: &str) -> Result<Option<f64>> {
        self.get(k).map(|v| self.cx.number(v, &self.key(k))).transpose()
    }

    pub fn u64_opt(&self, k: &str) -> Result<Option<u64>> {
        self.get(k).map(|v| self.cx.uint(v, &self.key(k))).transpose()
    }

    pub fn vec3_req(&self, k: &str) -> Result<[f64; 3]> {
        self.cx.vec3(self.req(k)?, &self.key(k))
    }

    pub fn vec3_opt(&self, k: &str) -> Result<Option<[f64; 3]>> {
        self.get(k).map(|v| self.cx.vec3(v, &self.key(k))).transpose()
    }

    pub fn str_opt(&self, k: &str) -> Result<Option<&'v str>> {
        self.get(k).map(|v| self.cx.string(v, &self.key(k))).transpose()
    }

    pub fn obj_req(&self, k: &str) -> Result<Obj<'v, 'a>> {
        self.cx.object(self.req(k)?, &self.key(k))
    }

    pub fn obj_opt(&self, k: &str) -> Result<Option<Obj<'v, 'a>>> {
        self.get(k).map(|v| self.cx.object(v, &self.key(k))).transpose()
    }

    pub fn array_opt(&self, k: &str) -> Result<Option<&'v Vec<Value>>> {
        self.get(k).map(|v| self.cx.array(v, &self.key(k))).transpose()
    }
}
