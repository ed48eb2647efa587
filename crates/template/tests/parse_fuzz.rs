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
