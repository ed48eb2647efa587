//! No input makes the parser panic, and every rejection says where the problem is.

use cumulo_template::parse_template;
use proptest::prelude::*;

/// Parses `text` and checks the result's invariants: a document is a mapping; a rejection has at
/// least one diagnostic, each in AWS's wording and located.
fn check(text: &str) {
    match parse_template(text) {
        Ok(doc) => assert!(doc.value.is_object()),
        Err(diags) => {
            assert!(!diags.is_empty());
            for d in diags {
                assert!(d.message.starts_with("Template"), "{d:?}");
                assert!(d.line.is_some() && d.column.is_some(), "{text:?}: {d:?}");
            }
        }
    }
}

/// Pieces of YAML and JSON syntax, short-form tags and tricky scalars, so random sequences of
/// them reach deep into both front ends instead of failing on the first byte.
const PIECES: &[&str] = &[
    "\n",
    "\n",
    "\n",
    "  ",
    "  ",
    " ",
    "\t",
    "- ",
    "-",
    ": ",
    ":",
    "? ",
    ",",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\\",
    "\\u00e9",
    "\\ud800",
    "#",
    "|",
    ">-",
    "|+2",
    "&a ",
    "*a",
    "<<: ",
    "---",
    "...",
    "%YAML 1.1",
    "%TAG ! tag:x,2000:",
    "!Ref ",
    "!Sub ",
    "!GetAtt ",
    "!If ",
    "!Join ",
    "!Select ",
    "!Condition ",
    "!Transform ",
    "!Ref: ",
    "!Rain::Embed ",
    "!Foo ",
    "!!str ",
    "!!int ",
    "!!binary ",
    "!!map ",
    "!!seq ",
    "! ",
    "!<!Ref> ",
    "Resources",
    "Type",
    "A.B.C",
    "key",
    "k2",
    "0777",
    "012345678901",
    "yes",
    "~",
    "null",
    "1_000",
    ".inf",
    "1e3",
    "1.5",
    "2010-09-09",
    "1:30",
    "0x1F",
    "-",
    "true",
    "é",
    "😀",
    "\u{feff}",
    "\r\n",
    "\0",
];

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..80).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text);
    }

    #[test]
    fn yaml_ish_text_never_panics(body in pieces()) {
        check(&body);
        check(&format!("Resources:\n  A:\n    Properties:\n      V: {body}\n"));
    }

    #[test]
    fn json_ish_text_never_panics(body in pieces()) {
        check(&format!("{{\"Resources\": {body}"));
        check(&format!("{{\"A\": [{body}]}}"));
    }
}

/// Template-like values: mappings with distinct keys, sequences, strings (quotes, escapes,
/// non-ASCII, strings that YAML would resolve if unquoted), integers, bools, nulls.
fn values() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        "[ -~éü😀]{0,12}".prop_map(Value::from),
        prop::sample::select(
            &[
                "yes",
                "0777",
                "2010-09-09",
                "~",
                "012345678901",
                "1e3",
                "<<"
            ][..]
        )
        .prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[A-Za-z0-9:/._-]{1,10}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Block-style YAML for `v`, every string double-quoted (JSON string syntax is valid YAML).
fn to_yaml(v: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                out.push_str(&format!("\n{pad}{}:", Value::from(k.as_str())));
                to_yaml(child, indent + 2, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for child in items {
                out.push_str(&format!("\n{pad}-"));
                to_yaml(child, indent + 2, out);
            }
        }
        other => out.push_str(&format!(" {other}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn json_round_trips(v in values()) {
        let doc = serde_json::json!({"Resources": v});
        for text in [serde_json::to_string(&doc).unwrap_or_default(),
                     serde_json::to_string_pretty(&doc).unwrap_or_default()] {
            let parsed = parse_template(&text).map(|d| d.value.to_json());
            prop_assert_eq!(parsed.as_ref().ok(), Some(&doc), "{}", text);
        }
    }

    #[test]
    fn quoted_yaml_round_trips(v in values()) {
        let doc = serde_json::json!({"Resources": v});
        let mut text = String::new();
        to_yaml(&doc, 0, &mut text);
        let parsed = parse_template(&text).map(|d| d.value.to_json());
        prop_assert_eq!(parsed.as_ref().ok(), Some(&doc), "{}", text);
    }
}
