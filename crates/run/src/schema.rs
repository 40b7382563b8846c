//! A stage's `returns` type as a JSON schema (sent to the server so it constrains decoding),
//! and the check of an answer against that type (servers and models can still get it wrong:
//! a stream cut short, a server that ignores the schema).

use serde_json::{json, Map, Value};

use crate::calendar;
use crate::plan::workflow::{FieldType, Type};

pub fn schema(fields: &[FieldType]) -> Value {
    record(fields)
}

fn record(fields: &[FieldType]) -> Value {
    let mut props = Map::new();
    for f in fields {
        props.insert(f.name.clone(), of(&f.ty));
    }
    json!({
        "type": "object",
        "properties": props,
        "required": fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

fn of(t: &Type) -> Value {
    match t {
        Type::Bool => json!({"type": "boolean"}),
        Type::Text => json!({"type": "string"}),
        Type::Number => json!({"type": "number"}),
        Type::Date => json!({"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}),
        Type::List { of: inner } => json!({"type": "array", "items": of(inner)}),
        Type::Record { fields } => record(fields),
    }
}

/// Why an answer does not match the stage's `returns`.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("the answer is empty; a JSON object was expected")]
    Empty,
    #[error("the answer is not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Where in the answer, and what is wrong there.
    #[error("{0}")]
    Mismatch(String),
}

/// Parses an answer and checks it against the declared fields. The error says where and what.
pub fn validate(text: &str, fields: &[FieldType]) -> Result<Value, SchemaError> {
    let body = strip_fence(text);
    let value: Value = serde_json::from_str(body).map_err(|e| {
        if body.trim().is_empty() {
            SchemaError::Empty
        } else {
            SchemaError::NotJson(e)
        }
    })?;
    check_record(&value, fields, "answer").map_err(SchemaError::Mismatch)?;
    Ok(value)
}

/// Models often wrap JSON in a Markdown code fence; the fence is not part of the answer.
fn strip_fence(text: &str) -> &str {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        if let Some(inner) = rest.trim_end().strip_suffix("```") {
            return inner.trim();
        }
    }
    t
}

fn check_record(v: &Value, fields: &[FieldType], at: &str) -> Result<(), String> {
    let Some(obj) = v.as_object() else {
        return Err(format!("{at} should be an object, found {}", kind(v)));
    };
    for f in fields {
        let path = format!("{at}.{}", f.name);
        match obj.get(&f.name) {
            None => return Err(format!("{path} is missing")),
            Some(x) => check(x, &f.ty, &path)?,
        }
    }
    if let Some(extra) = obj.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
        return Err(format!("{at} has a field `{extra}` that was not asked for"));
    }
    Ok(())
}

fn check(v: &Value, t: &Type, at: &str) -> Result<(), String> {
    let ok = match t {
        Type::Bool => v.is_boolean(),
        Type::Text => v.is_string(),
        Type::Number => v.is_number(),
        Type::Date => {
            return match v.as_str() {
                Some(s) if calendar::parse_iso(s).is_some() => Ok(()),
                Some(s) => Err(format!("{at} should be a date as YYYY-MM-DD, found {s:?}")),
                None => Err(format!("{at} should be a date string, found {}", kind(v))),
            }
        }
        Type::List { of: inner } => {
            let Some(items) = v.as_array() else {
                return Err(format!("{at} should be a list, found {}", kind(v)));
            };
            for (i, x) in items.iter().enumerate() {
                check(x, inner, &format!("{at}[{i}]"))?;
            }
            true
        }
        Type::Record { fields } => return check_record(v, fields, at),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{at} should be {}, found {}", t, kind(v)))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Vec<FieldType> {
        vec![
            FieldType {
                name: "grounds".into(),
                ty: Type::Bool,
            },
            FieldType {
                name: "reason".into(),
                ty: Type::Text,
            },
            FieldType {
                name: "items".into(),
                ty: Type::List {
                    of: Box::new(Type::Record {
                        fields: vec![FieldType {
                            name: "on".into(),
                            ty: Type::Date,
                        }],
                    }),
                },
            },
        ]
    }

    #[test]
    fn schema_lists_every_field_as_required() {
        let s = schema(&gate());
        assert_eq!(s["required"], json!(["grounds", "reason", "items"]));
        assert_eq!(
            s["properties"]["items"]["items"]["properties"]["on"]["type"],
            "string"
        );
    }

    #[test]
    fn valid_answers_pass_even_inside_a_code_fence() {
        let a = r#"```json
{"grounds": true, "reason": "x", "items": [{"on": "2024-01-05"}]}
```"#;
        assert_eq!(validate(a, &gate()).unwrap()["grounds"], true);
    }

    #[test]
    fn errors_say_where() {
        let cases = [
            ("", "empty"),
            ("{\"grounds\": true", "not valid JSON"),
            (
                r#"{"grounds": "yes", "reason": "", "items": []}"#,
                "answer.grounds should be bool, found text",
            ),
            (
                r#"{"grounds": true, "reason": "", "items": [{"on": "2024-02-30"}]}"#,
                "answer.items[0].on should be a date",
            ),
            (
                r#"{"grounds": true, "items": []}"#,
                "answer.reason is missing",
            ),
            (
                r#"{"grounds": true, "reason": "", "items": [], "x": 1}"#,
                "field `x`",
            ),
        ];
        for (text, want) in cases {
            let err = validate(text, &gate()).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
