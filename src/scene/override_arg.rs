//! One `--set PATH=VALUE` as typed (`scene::overrides` applies it). Its own file, with no
//! import from the scene parser, so that a checkpoint's scene record can hold its overrides
//! (`checkpoint::SceneRecord::overrides`) without an import circle.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `--set PATH=VALUE`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Override {
    pub path: String,
    pub value: Value,
}

impl Override {
    /// `PATH=VALUE` as typed after `--set`; the message says what is wrong.
    pub fn parse(arg: &str) -> std::result::Result<Override, String> {
        let Some((path, value)) = arg.split_once('=') else {
            return Err(format!("`{arg}`: expected PATH=VALUE, e.g. materials.glass.fric=0.2"));
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(|k| k.is_empty()) {
            return Err(format!("`{arg}`: `{path}` is not a path: give keys joined by dots, e.g. materials.glass.fric=0.2"));
        }
        let value = value.trim();
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        Ok(Override { path: path.to_string(), value })
    }

    /// `PATH=VALUE` with the value as JSON (`materials.glass.fric=0.2`, `contacts.default.model="hooke"`).
    pub fn arg(&self) -> String {
        format!("{}={}", self.path, self.value)
    }
}

