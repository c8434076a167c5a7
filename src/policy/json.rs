//! Reading a JSON document with paths: serde_json parses it into a
//! `Value`; these helpers read the fields of the policy and budget formats
//! and give every error as `$.path: rule (got value)`.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A JSON path (`$.scorers[1].weight`).
#[derive(Debug, Clone)]
pub struct Path(String);

impl Path {
    pub fn root() -> Path {
        Path("$".into())
    }

    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}.{key}", self.0))
    }

    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    /// An invalid-argument error at this path.
    pub fn err<T>(&self, rule: impl std::fmt::Display) -> Result<T> {
        Err(Error::InvalidArgument(format!("{}: {rule}", self.0)))
    }

    /// `e`'s message prefixed with this path.
    pub fn wrap(&self, e: Error) -> Error {
        e.map_message(|m| format!("{}: {m}", self.0))
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A short rendering of a value for messages.
pub fn shown(v: &Value) -> String {
    let s = match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
    };
    match s.char_indices().nth(77) {
        Some((cut, _)) if s.len() > 80 => format!("{}...", &s[..cut]),
        _ => s,
    }
}

/// Parses `bytes` (UTF-8 JSON) into an object, naming what is wrong.
pub fn parse_object(bytes: &[u8], what: &str) -> Result<Map<String, Value>> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::InvalidArgument(format!(
            "json: invalid UTF-8 at byte {} of the {what} document",
            e.valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(Error::InvalidArgument(format!(
            "json is empty; a {what} document is a JSON object"
        )));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json's message ends with its own " at line L column C".
        let full = e.to_string();
        let what = full.split(" at line ").next().unwrap_or(&full).to_string();
        Error::InvalidArgument(format!(
            "json: malformed JSON at line {} column {}: {what}",
            e.line(),
            e.column()
        ))
    })?;
    match value {
        Value::Object(m) => Ok(m),
        other => Path::root().err(format!("expected a {what} object, got {}", shown(&other))),
    }
}

/// An object's field; absent and `null` are both `None`.
pub fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

pub fn string<'a>(v: &'a Value, at: &Path) -> Result<&'a str> {
    v.as_str().map_or_else(
        || at.err(format!("expected a string, got {}", shown(v))),
        Ok,
    )
}

pub fn boolean(v: &Value, at: &Path) -> Result<bool> {
    v.as_bool().map_or_else(
        || at.err(format!("expected true or false, got {}", shown(v))),
        Ok,
    )
}

pub fn number(v: &Value, at: &Path) -> Result<f64> {
    v.as_f64().map_or_else(
        || at.err(format!("expected a number, got {}", shown(v))),
        Ok,
    )
}

pub fn integer(v: &Value, at: &Path) -> Result<i64> {
    if let Some(i) = v.as_i64() {
        return Ok(i);
    }
    at.err(format!("expected an integer, got {}", shown(v)))
}

pub fn object<'a>(v: &'a Value, at: &Path) -> Result<&'a Map<String, Value>> {
    v.as_object().map_or_else(
        || at.err(format!("expected an object, got {}", shown(v))),
        Ok,
    )
}

pub fn array<'a>(v: &'a Value, at: &Path) -> Result<&'a Vec<Value>> {
    v.as_array().map_or_else(
        || at.err(format!("expected an array, got {}", shown(v))),
        Ok,
    )
}

/// An enum value matched ASCII case-insensitively against `known`.
pub fn choice<T: Copy>(v: &Value, at: &Path, known: &[(&str, T)]) -> Result<T> {
    let s = string(v, at)?;
    match known.iter().find(|(name, _)| name.eq_ignore_ascii_case(s)) {
        Some(&(_, t)) => Ok(t),
        None => {
            let names: Vec<String> = known.iter().map(|(n, _)| format!("{n:?}")).collect();
            at.err(format!(
                "unknown value {s:?}; expected one of {}",
                names.join(", ")
            ))
        }
    }
}
