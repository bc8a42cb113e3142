//! JSON text indented for reading, byte for byte otherwise: keys stay in
//! the order they were written and numbers as they were written (parsing
//! into a map and printing it again would sort the keys). maud escapes the
//! result where a page shows it.

/// `text` (valid JSON) indented by two spaces a level, with one space after
/// each `:`; whitespace outside strings is dropped, strings are kept as they
/// are, and an empty object or array stays on its line.
pub fn indented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = text.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|n| n.is_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_some_and(|n| *n == '}' || *n == ']') {
                    out.extend(chars.next());
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::indented;

    #[test]
    fn json_is_indented_with_its_keys_and_numbers_as_written() {
        let text = r#"{"z":1.50,"a":[1, {"b":"x,{y}: \"q\""}],"e":{},"f":[ ]}"#;
        assert_eq!(
            indented(text),
            "{\n  \"z\": 1.50,\n  \"a\": [\n    1,\n    {\n      \"b\": \"x,{y}: \\\"q\\\"\"\n    }\n  ],\n  \"e\": {},\n  \"f\": []\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&indented(text)).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn a_string_with_a_backslash_before_its_closing_quote_ends_there() {
        assert_eq!(indented(r#"["a\\",1]"#), "[\n  \"a\\\\\",\n  1\n]");
    }
}
