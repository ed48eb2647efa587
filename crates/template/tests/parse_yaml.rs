//! YAML templates: every short-form tag, the YAML 1.1 scalar rules, and every error with its
//! position.

use cumulo_template::{Diagnostic, parse_template};
use serde_json::{Value, json};

fn parse(text: &str) -> Value {
    parse_template(text)
        .unwrap_or_else(|d| panic!("{text:?}: {d:?}"))
        .value
        .to_json()
}

/// The value of `V` in a one-key template.
fn value(yaml: &str) -> Value {
    parse(&format!("V: {yaml}\n"))["V"].clone()
}

fn errors(text: &str) -> Vec<Diagnostic> {
    match parse_template(text) {
        Ok(doc) => panic!("{text:?} parsed: {}", doc.value),
        Err(d) => d,
    }
}

fn single_error(text: &str) -> Diagnostic {
    let mut d = errors(text);
    assert_eq!(d.len(), 1, "{d:?}");
    d.remove(0)
}

#[test]
fn ref_and_condition() {
    assert_eq!(value("!Ref Bucket"), json!({"Ref": "Bucket"}));
    assert_eq!(value("!Ref 'AWS::Region'"), json!({"Ref": "AWS::Region"}));
    assert_eq!(value("!Condition IsProd"), json!({"Condition": "IsProd"}));
    // A tagged scalar is always the string written, never resolved.
    assert_eq!(value("!Ref 0777"), json!({"Ref": "0777"}));
    assert_eq!(value("!Ref yes"), json!({"Ref": "yes"}));
    assert_eq!(value("!Ref"), json!({"Ref": ""}));
}

#[test]
fn sub_string_and_list_forms() {
    assert_eq!(
        value("!Sub '${AWS::StackName}-b'"),
        json!({"Fn::Sub": "${AWS::StackName}-b"})
    );
    assert_eq!(
        value("!Sub ['${A}-x', {A: !Ref B}]"),
        json!({"Fn::Sub": ["${A}-x", {"A": {"Ref": "B"}}]})
    );
    let block = parse("V: !Sub |\n  echo ${X}\n  done\n");
    assert_eq!(block["V"], json!({"Fn::Sub": "echo ${X}\ndone\n"}));
}

#[test]
fn getatt_splits_at_the_first_dot() {
    assert_eq!(
        value("!GetAtt Res.Arn"),
        json!({"Fn::GetAtt": ["Res", "Arn"]})
    );
    assert_eq!(
        value("!GetAtt Stack.Outputs.Url"),
        json!({"Fn::GetAtt": ["Stack", "Outputs.Url"]})
    );
    assert_eq!(
        value("!GetAtt [Res, Arn]"),
        json!({"Fn::GetAtt": ["Res", "Arn"]})
    );
    assert_eq!(
        value("!GetAtt [Res, !Ref Attr]"),
        json!({"Fn::GetAtt": ["Res", {"Ref": "Attr"}]})
    );
    assert_eq!(value("!GetAtt NoDot"), json!({"Fn::GetAtt": ["NoDot"]}));
}

#[test]
fn every_function_tag_on_sequences() {
    let cases = [
        ("Join", "Fn::Join"),
        ("Select", "Fn::Select"),
        ("Split", "Fn::Split"),
        ("If", "Fn::If"),
        ("Equals", "Fn::Equals"),
        ("Not", "Fn::Not"),
        ("And", "Fn::And"),
        ("Or", "Fn::Or"),
        ("FindInMap", "Fn::FindInMap"),
        ("Cidr", "Fn::Cidr"),
        ("Contains", "Fn::Contains"),
        ("EachMemberEquals", "Fn::EachMemberEquals"),
        ("EachMemberIn", "Fn::EachMemberIn"),
        ("ValueOf", "Fn::ValueOf"),
    ];
    for (tag, key) in cases {
        assert_eq!(
            value(&format!("!{tag} [a, b]")),
            json!({key: ["a", "b"]}),
            "{tag}"
        );
        let block = parse(&format!("V: !{tag}\n  - a\n  - b\n"));
        assert_eq!(block["V"], json!({key: ["a", "b"]}), "{tag} block");
    }
}

#[test]
fn every_function_tag_on_scalars() {
    let cases = [
        ("Base64", "Fn::Base64"),
        ("GetAZs", "Fn::GetAZs"),
        ("ImportValue", "Fn::ImportValue"),
        ("Length", "Fn::Length"),
        ("ToJsonString", "Fn::ToJsonString"),
        ("RefAll", "Fn::RefAll"),
        ("ValueOfAll", "Fn::ValueOfAll"),
        ("GetStackOutput", "Fn::GetStackOutput"),
    ];
    for (tag, key) in cases {
        assert_eq!(value(&format!("!{tag} x")), json!({key: "x"}), "{tag}");
    }
    assert_eq!(value("!GetAZs ''"), json!({"Fn::GetAZs": ""}));
    assert_eq!(value("!GetAZs"), json!({"Fn::GetAZs": ""}));
}

#[test]
fn tags_on_mappings() {
    assert_eq!(
        value("!Transform {Name: AWS::Include, Parameters: {Location: s3://b/k}}"),
        json!({"Fn::Transform": {"Name": "AWS::Include", "Parameters": {"Location": "s3://b/k"}}})
    );
    let block = parse("V: !ToJsonString\n  A: 1\n  B: !Ref C\n");
    assert_eq!(
        block["V"],
        json!({"Fn::ToJsonString": {"A": 1, "B": {"Ref": "C"}}})
    );
    assert_eq!(
        value("!Base64 {'Fn::Sub': x}"),
        json!({"Fn::Base64": {"Fn::Sub": "x"}})
    );
}

#[test]
fn nested_short_forms() {
    assert_eq!(
        value("!Join ['', [a, !Select [0, !GetAZs ''], !If [C, !Ref X, !Ref 'AWS::NoValue']]]"),
        json!({"Fn::Join": ["", ["a", {"Fn::Select": [0, {"Fn::GetAZs": ""}]},
            {"Fn::If": ["C", {"Ref": "X"}, {"Ref": "AWS::NoValue"}]}]]})
    );
    assert_eq!(
        value("!Not [!Equals [!Ref Env, prod]]"),
        json!({"Fn::Not": [{"Fn::Equals": [{"Ref": "Env"}, "prod"]}]})
    );
}

#[test]
fn ref_with_a_colon_is_ref() {
    assert_eq!(value("!Ref: AWS::NoValue"), json!({"Ref": "AWS::NoValue"}));
}

#[test]
fn foreach_is_a_key_not_a_tag() {
    let v = parse(
        "Resources:\n  Fn::ForEach::Topics:\n    - T\n    - [a, b]\n    - Topic${T}:\n        Type: AWS::SNS::Topic\n",
    );
    assert_eq!(
        v["Resources"]["Fn::ForEach::Topics"],
        json!(["T", ["a", "b"], {"Topic${T}": {"Type": "AWS::SNS::Topic"}}])
    );
    let d = single_error("V: !ForEach [a]\n");
    assert!(d.message.contains("Unsupported YAML tag !ForEach"), "{d:?}");
}

#[test]
fn yaml_1_1_scalars_as_cloudformation_reads_them() {
    let v = parse(
        "a: yes\nb: No\nc: on\nd: OFF\ne: True\nf: ~\ng: null\nh: 0777\ni: 012345678901\n\
         j: 1_000\nk: .inf\nl: 1e3\nm: 2010-09-09\nn: y\no: 1.5\np: 0x1F\nq: '0777'\nr: \"yes\"\n\
         s: 012345670123\nt: 1:30\nu:\n",
    );
    let expected = json!({
        "a": true, "b": false, "c": true, "d": false, "e": true, "f": null, "g": null,
        "h": 511, "i": "012345678901", "j": 1000, "k": ".inf", "l": "1e3",
        "m": "2010-09-09", "n": "y", "o": 1.5, "p": 31, "q": "0777", "r": "yes",
        "s": 1402433619, "t": 90, "u": null
    });
    assert_eq!(v, expected);
}

#[test]
fn format_version_date_stays_a_string() {
    let v = parse("AWSTemplateFormatVersion: 2010-09-09\nResources: {}\n");
    assert_eq!(v["AWSTemplateFormatVersion"], json!("2010-09-09"));
}

#[test]
fn core_tags() {
    assert_eq!(value("!!str 027434742980"), json!("027434742980"));
    assert_eq!(value("!!str yes"), json!("yes"));
    assert_eq!(value("!!int '42'"), json!(42));
    assert_eq!(value("!!float '1.5'"), json!(1.5));
    assert_eq!(value("!!bool 'on'"), json!(true));
    assert_eq!(value("! 0777"), json!("0777"));
    let d = single_error("V: !!timestamp 2001-12-14\n");
    assert!(d.message.contains("!!timestamp"), "{d:?}");
    assert_eq!((d.line, d.column), (Some(1), Some(4)));
    let d = single_error("V: !!int abc\n");
    assert!(d.message.contains("does not match"), "{d:?}");
    assert_eq!(value("!!seq [1]"), json!([1]));
    assert_eq!(value("!!map {a: 1}"), json!({"a": 1}));
    for mismatch in ["!!map [1]", "!!seq {a: 1}", "!!str [1]", "!!seq x"] {
        let d = single_error(&format!("V: {mismatch}\n"));
        assert!(d.message.contains("does not match"), "{mismatch}: {d:?}");
        assert_eq!((d.line, d.column), (Some(1), Some(4)), "{mismatch}");
    }
}

#[test]
fn keys_are_strings() {
    let v = parse("Mappings:\n  M:\n    123456789012: {A: 1}\n    0777: {A: 2}\n    yes: {A: 3}\n");
    let keys: Vec<&String> = v["Mappings"]["M"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["123456789012", "511", "true"]);
}

#[test]
fn key_order_is_kept() {
    let v = parse("Z: 1\nA: 2\nM: 3\n");
    let keys: Vec<&String> = v
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["Z", "A", "M"]);
}

#[test]
fn duplicate_keys_are_errors_with_both_positions() {
    let d = errors("Resources:\n  A:\n    Type: X\n  A:\n    Type: Y\nOutputs: {}\nOutputs: {}\n");
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(
        d[0].message
            .starts_with("Template format error: YAML not well-formed.")
    );
    assert!(
        d[0].message
            .contains("Duplicate key \"A\" (first defined at line 2, column 3)"),
        "{d:?}"
    );
    assert_eq!((d[0].line, d[0].column), (Some(4), Some(3)));
    assert_eq!(d[0].path.as_deref(), Some("Resources/A"));
    assert!(
        d[1].message
            .contains("Duplicate key \"Outputs\" (first defined at line 6, column 1)")
    );
    assert_eq!((d[1].line, d[1].column), (Some(7), Some(1)));
    // Keys equal after YAML 1.1 resolution are duplicates too.
    let d = single_error("M:\n  0777: a\n  511: b\n");
    assert!(d.message.contains("Duplicate key \"511\""), "{d:?}");
}

#[test]
fn unknown_tags_are_named_with_their_position() {
    let d = single_error(
        "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties: !Rain::Embed props.yaml\n",
    );
    assert!(
        d.message.contains("Unsupported YAML tag !Rain::Embed"),
        "{d:?}"
    );
    assert!(d.message.contains("rain pkg"), "{d:?}");
    assert_eq!((d.line, d.column), (Some(4), Some(17)));
    assert_eq!(d.path.as_deref(), Some("Resources/B/Properties"));
    let d = single_error("V: !Foo [1]\n");
    assert!(d.message.contains("Unsupported YAML tag !Foo"), "{d:?}");
}

#[test]
fn aliases_are_rejected_anchors_alone_are_fine() {
    assert_eq!(parse("A: &x 1\nB: 2\n"), json!({"A": 1, "B": 2}));
    let d = single_error("A: &x 1\nB: *x\n");
    assert_eq!(
        d.message,
        "Template error: YAML aliases are not allowed in CloudFormation templates"
    );
    assert_eq!((d.line, d.column), (Some(2), Some(4)));
}

#[test]
fn merge_keys_are_rejected() {
    let d = single_error("A:\n  <<: {x: 1}\n  y: 2\n");
    assert!(d.message.contains("merge keys"), "{d:?}");
    assert_eq!((d.line, d.column), (Some(2), Some(3)));
    assert_eq!(d.path.as_deref(), Some("A/<<"));
    // A quoted `<<` is an ordinary key.
    assert_eq!(parse("A:\n  '<<': 1\n"), json!({"A": {"<<": 1}}));
}

#[test]
fn bad_keys() {
    let d = single_error("? [a, b]\n: c\n");
    assert!(d.message.contains("must be a scalar"), "{d:?}");
    let d = single_error("~: a\n");
    assert!(d.message.contains("must not be null"), "{d:?}");
    let d = single_error("!Ref a: b\n");
    assert!(d.message.contains("cannot be a mapping key"), "{d:?}");
}

#[test]
fn syntax_errors_have_positions() {
    let d = errors("Resources:\n  A:\n    Type: [a\n  B: 1\n");
    let last = d.last().expect("a diagnostic");
    assert!(
        last.message
            .starts_with("Template format error: YAML not well-formed."),
        "{d:?}"
    );
    assert!(last.line.is_some() && last.column.is_some(), "{d:?}");
    let d = single_error("a: b\n c: d\n");
    assert!(d.line.is_some(), "{d:?}");
}

#[test]
fn top_level_must_be_a_mapping() {
    for text in [
        "",
        "# only a comment\n",
        "just a string\n",
        "- a\n- b\n",
        "~\n",
    ] {
        let d = single_error(text);
        assert_eq!(
            d.message, "Template format error: unsupported structure.",
            "{text:?}"
        );
        assert!(d.line.is_some() && d.column.is_some(), "{text:?}");
    }
}

#[test]
fn one_document_only() {
    let d = single_error("A: 1\n---\nB: 2\n");
    assert!(d.message.contains("single YAML document"), "{d:?}");
    assert_eq!(d.line, Some(2));
    assert_eq!(parse("---\nA: 1\n...\n"), json!({"A": 1}));
}

#[test]
fn flow_brackets_closed_at_the_key_column() {
    let v = parse("R:\n  Action: [\n    \"a\",\n    \"b\"\n  ]\n  Other: {\n    k: v\n  }\n");
    assert_eq!(v, json!({"R": {"Action": ["a", "b"], "Other": {"k": "v"}}}));
    // Brackets inside a block scalar are text and keep their indentation.
    let v =
        parse("R:\n  A: [\n    1\n  ]\n  Doc: |\n    {\n      \"a\": [\n        1\n    ]\n    }\n");
    assert_eq!(v["R"]["A"], json!([1]));
    assert_eq!(v["R"]["Doc"], json!("{\n  \"a\": [\n    1\n]\n}\n"));
    // Indentation that is wrong for other reasons is still an error.
    let d = errors("R:\n  A: [\n    1\n  ]\n B: 2\n");
    assert!(d.last().is_some_and(|d| d.line.is_some()), "{d:?}");
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_crash() {
    let deep = format!("A: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let d = errors(&deep);
    // Whichever bound is hit first (ours or the YAML parser's own) names the nesting.
    assert!(
        d.iter().any(|d| d.message.contains("nesting deeper than")
            || d.message.contains("recursion limit exceeded")),
        "{d:?}"
    );
    assert!(d.iter().all(|d| d.line == Some(1)), "{d:?}");
    let mut block = String::from("A:\n");
    for level in 1..=300 {
        block.push_str(&format!("{}k:\n", " ".repeat(level)));
    }
    let d = errors(&block);
    assert!(
        d.iter()
            .any(|d| d.message.contains("nesting deeper than 200 levels")),
        "{d:?}"
    );
    let ok = format!("A: {}{}\n", "[".repeat(150), "]".repeat(150));
    assert!(parse_template(&ok).is_ok());
}

#[test]
fn source_map_locates_keys_items_and_tags() {
    let doc = parse_template(
        "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Properties:\n      Tags:\n        - Key: k\n          Value: !Ref V\n",
    )
    .expect("parses");
    let m = &doc.source_map;
    assert_eq!(m.position(""), Some((1, 1)));
    assert_eq!(m.position("Resources"), Some((1, 1)));
    assert_eq!(m.position("Resources/Bucket"), Some((2, 3)));
    assert_eq!(m.position("Resources/Bucket/Type"), Some((3, 5)));
    assert_eq!(
        m.position("Resources/Bucket/Properties/Tags/0"),
        Some((6, 11))
    );
    assert_eq!(
        m.position("Resources/Bucket/Properties/Tags/0/Value"),
        Some((7, 11))
    );
    assert_eq!(
        m.position("Resources/Bucket/Properties/Tags/0/Value/Ref"),
        Some((7, 18))
    );
    // Unknown paths fall back to the nearest located ancestor.
    assert_eq!(m.position("Resources/Bucket/Nope/Deeper"), Some((2, 3)));
    assert_eq!(m.position("Nope"), Some((1, 1)));
}
