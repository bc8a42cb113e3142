//! JSON held to what the client meant: a key given twice in one object is an
//! error naming its path (parsers differ on which value wins, so accepting
//! it lets two readers of one body disagree), and text with control
//! characters is found by path. Numbers are kept digit for digit by
//! serde_json's `arbitrary_precision`, which hookd builds with.

use std::{collections::HashSet, fmt};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Where a value sits in a document: `data.items[2].amount`.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

/// A key as printable text: control characters written as `\u{..}`.
struct Printable<'a>(&'a str);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "\\u{{{:x}}}", u32::from(c))?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, key) => write!(f, "{}", Printable(key)),
            Path::Key(parent, key) => write!(f, "{parent}.{}", Printable(key)),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// What is wrong with a body's JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictError {
    #[error("{0}")]
    Syntax(String),
    #[error("the key `{0}` appears more than once")]
    DuplicateKey(String),
}

const DUPLICATE: &str = "\u{0}duplicate:";

struct Walk<'p>(Path<'p>);

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Walk(Path::Index(&self.0, i)))?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            // With arbitrary_precision a number arrives as a one-entry map
            // under serde_json's private key with its text as a string value;
            // walking it like any entry costs nothing, and an object that
            // merely uses that key is still checked all the way down.
            if !seen.insert(key.clone()) {
                let path = Path::Key(&self.0, &key).to_string();
                return Err(de::Error::custom(format!("{DUPLICATE}{path}")));
            }
            map.next_value_seed(Walk(Path::Key(&self.0, &key)))?;
        }
        Ok(())
    }
}

/// Refuses a document that is not one JSON value or has a duplicate key.
pub fn check(body: &[u8]) -> Result<(), StrictError> {
    let mut d = serde_json::Deserializer::from_slice(body);
    let walked = Walk(Path::Root).deserialize(&mut d).and_then(|()| d.end());
    walked.map_err(|e| {
        let message = e.to_string();
        match message.strip_prefix(DUPLICATE) {
            Some(rest) => {
                // serde_json appends " at line L column C".
                let path = rest.rsplit_once(" at line ").map_or(rest, |(p, _)| p);
                StrictError::DuplicateKey(path.to_string())
            }
            None => StrictError::Syntax(message),
        }
    })
}

/// The path of the first string (value or key) holding a control character.
pub fn control_character_at(value: &Value) -> Option<String> {
    control_character_outside(value, &[])
}

/// Like `control_character_at`, except that the top-level fields named in
/// `multiline` (PEM text, say) may hold line breaks and tabs.
pub fn control_character_outside(value: &Value, multiline: &[&str]) -> Option<String> {
    if let Value::Object(map) = value {
        let text = |c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t');
        let mut rest = serde_json::Map::new();
        for (k, v) in map {
            match v {
                Value::String(s) if multiline.contains(&k.as_str()) => {
                    if s.chars().any(text) {
                        return Some(Path::Key(&Path::Root, k).to_string());
                    }
                }
                _ => {
                    rest.insert(k.clone(), v.clone());
                }
            }
        }
        if !multiline.is_empty() {
            return control_characters(&Value::Object(rest));
        }
    }
    control_characters(value)
}

fn control_characters(value: &Value) -> Option<String> {
    fn walk(value: &Value, path: Path<'_>) -> Option<String> {
        match value {
            Value::String(s) if s.chars().any(char::is_control) => Some(path.to_string()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, Path::Index(&path, i))),
            Value::Object(map) => map.iter().find_map(|(k, v)| {
                let here = Path::Key(&path, k);
                if k.chars().any(char::is_control) {
                    Some(here.to_string())
                } else {
                    walk(v, here)
                }
            }),
            _ => None,
        }
    }
    walk(value, Path::Root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplicate(body: &str) -> Option<String> {
        match check(body.as_bytes()) {
            Err(StrictError::DuplicateKey(path)) => Some(path),
            _ => None,
        }
    }

    #[test]
    fn a_key_given_twice_is_named_with_its_path() {
        assert_eq!(
            duplicate(r#"{"type":"usage.finalized","type":"balance.updated"}"#).as_deref(),
            Some("type")
        );
        assert_eq!(
            duplicate(r#"{"data":{"items":[{"a":1},{"a":1,"b":2,"b":3}]}}"#).as_deref(),
            Some("data.items[1].b")
        );
        assert_eq!(
            duplicate(r#"[{"x":1},{"x":2,"x":3}]"#).as_deref(),
            Some("[1].x")
        );
    }

    #[test]
    fn serde_jsons_private_number_key_hides_nothing() {
        let hidden = r#"{"data":{"$serde_json::private::Number":{"amount":1,"amount":1000}}}"#;
        assert_eq!(
            duplicate(hidden).as_deref(),
            Some("data.$serde_json::private::Number.amount")
        );
        let twice = r#"{"$serde_json::private::Number":"1","$serde_json::private::Number":"2"}"#;
        assert!(duplicate(twice).is_some());
    }

    #[test]
    fn the_same_key_in_different_objects_is_fine() {
        assert_eq!(check(br#"{"a":{"id":1},"b":{"id":1},"id":2}"#), Ok(()));
        assert_eq!(check(br#"{"n":18446744073709551616,"m":1e400}"#), Ok(()));
    }

    #[test]
    fn escaped_spellings_of_one_key_are_the_same_key() {
        assert_eq!(
            duplicate(r#"{"url":1,"u\u0072l":2}"#).as_deref(),
            Some("url")
        );
    }

    #[test]
    fn broken_json_and_trailing_bytes_are_syntax_errors() {
        assert!(matches!(check(b"{\"a\":"), Err(StrictError::Syntax(_))));
        assert!(matches!(check(b"{} {}"), Err(StrictError::Syntax(_))));
        assert!(matches!(check(b""), Err(StrictError::Syntax(_))));
    }

    #[test]
    fn numbers_keep_every_digit() {
        let text = r#"{"big":123456789012345678901234567890,"small":0.1000000000000000055511151231257827}"#;
        let value: Value = serde_json::from_str(text).expect("json");
        assert_eq!(value.to_string(), text);
    }

    #[test]
    fn control_characters_are_found_in_values_and_keys() {
        let at = |t: &str| control_character_at(&serde_json::from_str(t).expect("json"));
        assert_eq!(at(r#"{"name":"Acme\u001b[31m"}"#).as_deref(), Some("name"));
        assert_eq!(at(r#"{"a":["ok","x\u0000"]}"#).as_deref(), Some("a[1]"));
        assert_eq!(at(r#"{"k\u0007":1}"#).as_deref(), Some("k\\u{7}"));
        assert_eq!(at(r#"{"name":"Acme GmbH – Zürich"}"#), None);
    }

    #[test]
    fn a_multiline_field_may_hold_line_breaks_and_nothing_else_may() {
        let pem = serde_json::json!({"certificate": "-----BEGIN\r\nabc\n", "x": "a\nb"});
        assert_eq!(
            control_character_outside(&pem, &["certificate"]).as_deref(),
            Some("x")
        );
        let bell = serde_json::json!({"certificate": "a\u{7}b"});
        assert_eq!(
            control_character_outside(&bell, &["certificate"]).as_deref(),
            Some("certificate")
        );
        let fine = serde_json::json!({"certificate": "a\nb", "x": "y"});
        assert_eq!(control_character_outside(&fine, &["certificate"]), None);
    }
}
