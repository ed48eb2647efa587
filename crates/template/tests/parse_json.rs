//! JSON templates: strict ECMA-404, duplicate keys rejected, positions on every diagnostic.

use cumulo_template::{Diagnostic, parse_template};
use serde_json::json;

fn single_error(text: &str) -> Diagnostic {
    match parse_template(text) {
        Ok(doc) => panic!("{text:?} parsed: {}", doc.value),
        Err(mut d) => {
            assert_eq!(d.len(), 1, "{d:?}");
            d.remove(0)
        }
    }
}

#[test]
fn values_and_order() {
    let doc = parse_template(
        "{\"Z\": 1, \"A\": [true, false, null, -1.5e2, 18446744073709551615, \"\\u00e9\\ud83d\\ude00\\n\"], \"M\": {}}",
    )
    .expect("parses");
    assert_eq!(
        doc.value,
        json!({"Z": 1, "A": [true, false, null, -150.0, u64::MAX, "é😀\n"], "M": {}})
    );
    let keys: Vec<&str> = doc
        .value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["Z", "A", "M"]);
}

#[test]
fn strings_that_yaml_would_resolve_stay_strings() {
    let doc = parse_template("{\"V\": \"2010-09-09\", \"A\": \"012345678901\", \"B\": \"yes\"}")
        .expect("parses");
    assert_eq!(
        doc.value,
        json!({"V": "2010-09-09", "A": "012345678901", "B": "yes"})
    );
}

#[test]
fn leading_bom_and_whitespace_are_fine() {
    let doc = parse_template("\u{feff}\n  {\"A\": 1}\n").expect("parses");
    assert_eq!(doc.value, json!({"A": 1}));
}

#[test]
fn duplicate_keys_report_both_positions() {
    let text = "{\n  \"Resources\": {\n    \"A\": {},\n    \"A\": {}\n  }\n}";
    let d = single_error(text);
    assert_eq!(
        d.message,
        "Template format error: JSON not well-formed. Duplicate key \"A\" (first defined at line 3, column 5)"
    );
    assert_eq!((d.line, d.column), (Some(4), Some(5)));
    assert_eq!(d.path.as_deref(), Some("Resources/A"));
}

#[test]
fn every_duplicate_is_reported() {
    let Err(d) = parse_template("{\"A\": 1, \"A\": 2, \"B\": {\"C\": 1, \"C\": 2}}") else {
        panic!("duplicates accepted");
    };
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[1].path.as_deref(), Some("B/C"));
}

#[test]
fn json_that_only_yaml_accepts_falls_back_to_yaml() {
    // CloudFormation tries JSON first and then YAML, which is why it is known to accept a
    // trailing comma in a JSON template.
    let doc = parse_template("{\"A\": [1, 2,],}").expect("parses as YAML");
    assert_eq!(doc.value, json!({"A": [1, 2]}));
}

#[test]
fn when_both_fail_the_json_diagnostic_is_reported() {
    let d = single_error("{\n  \"A\": [1, 2\n}");
    assert!(
        d.message
            .starts_with("Template format error: JSON not well-formed."),
        "{d:?}"
    );
    assert!(d.message.contains("expected ',' or ']'"), "{d:?}");
    assert_eq!((d.line, d.column), (Some(3), Some(1)));
    assert_eq!(d.path.as_deref(), Some("A"));
}

#[test]
fn yaml_flow_text_starting_with_a_brace_falls_back_to_yaml() {
    let doc = parse_template("{Resources: {A: !Ref B}}").expect("parses as YAML");
    assert_eq!(doc.value, json!({"Resources": {"A": {"Ref": "B"}}}));
}

#[test]
fn top_level_must_be_an_object() {
    // Not JSON-first (does not start with `{`), and not a mapping as YAML either.
    for text in ["[1, 2]", "\"s\"", "42"] {
        let d = single_error(text);
        assert_eq!(d.message, "Template format error: unsupported structure.");
        assert_eq!((d.line, d.column), (Some(1), Some(1)));
    }
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_crash() {
    let deep = format!("{{\"A\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let d = single_error(&deep);
    assert!(
        d.message.contains("nesting deeper than 200 levels"),
        "{d:?}"
    );
    assert_eq!((d.line, d.column), (Some(1), Some(206)));
    let ok = format!("{{\"A\": {}{}}}", "[".repeat(199), "]".repeat(199));
    assert!(parse_template(&ok).is_ok());
}

#[test]
fn source_map_locates_members_and_items() {
    let doc = parse_template(
        "{\n  \"Resources\": {\n    \"B\": {\n      \"Type\": \"AWS::S3::Bucket\",\n      \"Properties\": {\"Tags\": [{\"Key\": \"k\"}]}\n    }\n  }\n}",
    )
    .expect("parses");
    let m = &doc.source_map;
    assert_eq!(m.position(""), Some((1, 1)));
    assert_eq!(m.position("Resources"), Some((2, 3)));
    assert_eq!(m.position("Resources/B"), Some((3, 5)));
    assert_eq!(m.position("Resources/B/Type"), Some((4, 7)));
    assert_eq!(m.position("Resources/B/Properties/Tags/0"), Some((5, 31)));
    assert_eq!(
        m.position("Resources/B/Properties/Tags/0/Key"),
        Some((5, 32))
    );
}
