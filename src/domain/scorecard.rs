//! The result of a receiver conformance check (see `conformance`): a line
//! per case and whether the receiver passed, as stored, answered by the API
//! and printed by `hookd check-receiver`. Pure.

use serde::{Deserialize, Serialize};

/// One case's line of the scorecard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CaseResult {
    pub name: String,
    pub passed: bool,
    pub expected: String,
    pub got: String,
    /// What to fix when the case failed, or a warning when it passed slowly.
    pub hint: Option<String>,
}

/// The result of a check: passed only when every case did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Scorecard {
    pub passed: bool,
    pub cases: Vec<CaseResult>,
    /// When the check started (RFC 3339).
    pub checked_at: String,
}

impl Scorecard {
    pub fn of(cases: Vec<CaseResult>, checked_at_ms: i64) -> Scorecard {
        Scorecard {
            passed: cases.iter().all(|c| c.passed),
            cases,
            checked_at: super::event::format_time(checked_at_ms),
        }
    }

    /// The scorecard as a table for a terminal: a line per case, its hint
    /// under it, and a summary.
    pub fn table(&self) -> String {
        let width = |f: fn(&CaseResult) -> usize| self.cases.iter().map(f).max().unwrap_or(0);
        let name_w = width(|c| c.name.len()).max(4);
        let got_w = width(|c| c.got.chars().count()).max(3);
        let mut out = format!(
            "{:<6}{:<name_w$}  {:<got_w$}  EXPECTED\n",
            "", "CASE", "GOT"
        );
        for c in &self.cases {
            let mark = match (c.passed, &c.hint) {
                (false, _) => "FAIL",
                (true, Some(_)) => "warn",
                (true, None) => "ok",
            };
            out.push_str(&format!(
                "{mark:<6}{:<name_w$}  {:<got_w$}  {}\n",
                c.name, c.got, c.expected
            ));
            if let Some(h) = &c.hint {
                out.push_str(&format!("{:<6}hint: {h}\n", ""));
            }
        }
        let passed = self.cases.iter().filter(|c| c.passed).count();
        out.push_str(&format!(
            "{passed} of {} cases passed (checked at {}): {}",
            self.cases.len(),
            self.checked_at,
            if self.passed {
                "the receiver conforms"
            } else {
                "the receiver does not conform"
            }
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, passed: bool, hint: Option<&str>) -> CaseResult {
        CaseResult {
            name: name.into(),
            passed,
            expected: "2xx".into(),
            got: "200 in 3 ms".into(),
            hint: hint.map(str::to_string),
        }
    }

    #[test]
    fn a_scorecard_passes_only_when_every_case_did() {
        let ok = Scorecard::of(
            vec![case("a", true, None), case("b", true, Some("slow"))],
            0,
        );
        assert!(ok.passed, "a warning is still a pass");
        let failed = Scorecard::of(
            vec![case("a", true, None), case("b", false, Some("fix"))],
            0,
        );
        assert!(!failed.passed);
        assert_eq!(failed.checked_at, "1970-01-01T00:00:00Z");
    }

    #[test]
    fn the_json_has_exactly_the_documented_fields() {
        let card = Scorecard::of(vec![case("a", true, None)], 0);
        let v = serde_json::to_value(&card).expect("JSON");
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&v), ["cases", "checked_at", "passed"]);
        assert_eq!(
            keys(&v["cases"][0]),
            ["expected", "got", "hint", "name", "passed"]
        );
        assert!(
            v["cases"][0]["hint"].is_null(),
            "no hint is null, not absent"
        );
    }

    #[test]
    fn the_table_marks_each_case_and_shows_hints_under_it() {
        let card = Scorecard::of(
            vec![
                case("valid_event", true, Some("slow: 3 s")),
                case("wrong_signature", false, Some("verify first")),
                case("large_body", true, None),
            ],
            0,
        );
        let table = card.table();
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[1].starts_with("warn  valid_event"), "{table}");
        assert_eq!(lines[2].trim(), "hint: slow: 3 s");
        assert!(lines[3].starts_with("FAIL  wrong_signature"), "{table}");
        assert!(lines[5].starts_with("ok    large_body"), "{table}");
        assert!(table.ends_with("does not conform"), "{table}");
        assert!(table.contains("2 of 3 cases passed"), "{table}");
    }
}
