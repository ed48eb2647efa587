//! Parameter types and each validation rule, with AWS's messages.

mod support;

use cumulo_template::NoSsm;
use serde_json::json;
use support::{render_err, render_ok, render_with};

fn template(decl: &str) -> String {
    format!(
        "Parameters:\n  P: {decl}\nResources:\n  R:\n    Type: AWS::SQS::Queue\n    Properties:\n      V: !Ref P\n"
    )
}

fn value(decl: &str, given: &str) -> serde_json::Value {
    render_ok(&template(decl), &[("P", given)])["Resources"]["R"]["Properties"]["V"].clone()
}

fn error(decl: &str, given: &str) -> String {
    render_err(&template(decl), &[("P", given)])
}

#[test]
fn missing_values_are_listed_together() {
    let t = "Parameters:\n  A: {Type: String}\n  B: {Type: Number}\n  C: {Type: String, Default: x}\nResources:\n  R: {Type: AWS::SQS::Queue}\n";
    assert_eq!(render_err(t, &[]), "Parameters: [A, B] must have values");
}

#[test]
fn unknown_given_parameter() {
    let t = "Resources:\n  R: {Type: AWS::SQS::Queue}\n";
    assert_eq!(
        render_err(t, &[("X", "1")]),
        "Parameters: [X] do not exist in the template"
    );
}

#[test]
fn default_is_used_and_given_value_wins() {
    let t = template("{Type: String, Default: d}");
    assert_eq!(
        render_ok(&t, &[])["Resources"]["R"]["Properties"]["V"],
        json!("d")
    );
    assert_eq!(value("{Type: String, Default: d}", "g"), json!("g"));
}

#[test]
fn list_types_split_and_trim() {
    assert_eq!(
        value("{Type: CommaDelimitedList}", "a, b ,c"),
        json!(["a", "b", "c"])
    );
    assert_eq!(value("{Type: 'List<Number>'}", "1,2"), json!(["1", "2"]));
    assert_eq!(
        value("{Type: 'List<AWS::EC2::Subnet::Id>'}", "subnet-1,subnet-2"),
        json!(["subnet-1", "subnet-2"])
    );
    assert_eq!(
        value("{Type: 'AWS::EC2::VPC::Id'}", "vpc-1"),
        json!("vpc-1")
    );
    assert_eq!(
        error("{Type: 'List<Number>'}", "1,x"),
        "Parameter 'P' must be a number"
    );
}

#[test]
fn unrecognized_type() {
    assert_eq!(
        error("{Type: Strin}", "x"),
        "Template format error: Unrecognized parameter type: Strin"
    );
    assert_eq!(
        error("{Type: 'List<AWS::Nope>'}", "x"),
        "Template format error: Unrecognized parameter type: List<AWS::Nope>"
    );
}

#[test]
fn allowed_values() {
    assert_eq!(
        value("{Type: String, AllowedValues: [a, b]}", "b"),
        json!("b")
    );
    assert_eq!(
        error("{Type: String, AllowedValues: [a, b]}", "c"),
        "Parameter 'P' must be one of AllowedValues"
    );
    assert_eq!(
        error("{Type: CommaDelimitedList, AllowedValues: [a, b]}", "a,c"),
        "Parameter 'P' must be one of AllowedValues"
    );
}

#[test]
fn allowed_pattern_matches_the_whole_value() {
    assert_eq!(
        value("{Type: String, AllowedPattern: '[a-z]+'}", "abc"),
        json!("abc")
    );
    assert_eq!(
        error("{Type: String, AllowedPattern: '[a-z]+'}", "abc1"),
        "Parameter 'P' must match pattern [a-z]+"
    );
    assert_eq!(
        error(
            "{Type: String, AllowedPattern: '[a-z]+', ConstraintDescription: lowercase only}",
            "A"
        ),
        "Parameter 'P' failed to satisfy constraint: lowercase only"
    );
}

#[test]
fn lengths() {
    assert_eq!(
        error("{Type: String, MinLength: 3}", "ab"),
        "Parameter 'P' must contain at least 3 characters"
    );
    assert_eq!(
        error("{Type: String, MaxLength: 2}", "abc"),
        "Parameter 'P' must contain at most 2 characters"
    );
    assert_eq!(
        value("{Type: String, MinLength: 2, MaxLength: 2}", "ab"),
        json!("ab")
    );
}

#[test]
fn numbers_and_bounds() {
    assert_eq!(
        error("{Type: Number}", "ten"),
        "Parameter 'P' must be a number"
    );
    assert_eq!(
        error("{Type: Number, MinValue: 1}", "0"),
        "Parameter 'P' must be a number not less than 1"
    );
    assert_eq!(
        error("{Type: Number, MaxValue: 10}", "10.5"),
        "Parameter 'P' must be a number not greater than 10"
    );
    assert_eq!(
        value("{Type: Number, MinValue: 1, MaxValue: 10}", "10"),
        json!("10")
    );
}

#[test]
fn default_values_are_checked_too() {
    let t = template("{Type: String, Default: aws-ab-, MinLength: 12}");
    assert_eq!(
        render_err(&t, &[]),
        "Parameter 'P' must contain at least 12 characters"
    );
}

#[test]
fn every_constraint_failure_is_reported() {
    let t = "Parameters:\n  A: {Type: Number}\n  B: {Type: String, AllowedValues: [x]}\nResources:\n  R: {Type: AWS::SQS::Queue}\n";
    let errs = render_with(t, &[("A", "a"), ("B", "y")], "us-east-1", &NoSsm).expect_err("invalid");
    assert_eq!(
        errs,
        vec![
            "Parameter 'A' must be a number".to_string(),
            "Parameter 'B' must be one of AllowedValues".to_string()
        ]
    );
}

#[test]
fn no_echo_is_masked_in_render_output() {
    let t = template("{Type: String, NoEcho: true}");
    let out = render_ok(&t, &[("P", "secret")]);
    assert_eq!(out["Parameters"]["P"], json!("****"));
    // The value itself is still what resources see.
    assert_eq!(out["Resources"]["R"]["Properties"]["V"], json!("secret"));
}

#[test]
fn ssm_parameter_types_resolve_through_the_lookup() {
    let lookup = |name: &str| (name == "/ami/latest").then(|| "ami-123".to_string());
    let t =
        template("{Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>', Default: /ami/latest}");
    let out = render_with(&t, &[], "us-east-1", &lookup).expect("renders");
    assert_eq!(out["Resources"]["R"]["Properties"]["V"], json!("ami-123"));

    let lookup = |_: &str| Some("a,b".to_string());
    let list = template("{Type: 'AWS::SSM::Parameter::Value<List<String>>'}");
    let out = render_with(&list, &[("P", "/x")], "us-east-1", &lookup).expect("renders");
    assert_eq!(out["Resources"]["R"]["Properties"]["V"], json!(["a", "b"]));

    let list = template("{Type: 'AWS::SSM::Parameter::Value<CommaDelimitedList>'}");
    let out = render_with(&list, &[("P", "/x")], "us-east-1", &lookup).expect("renders");
    assert_eq!(out["Resources"]["R"]["Properties"]["V"], json!(["a", "b"]));

    let missing = render_with(&t, &[], "us-east-1", &NoSsm).expect_err("no such parameter");
    assert_eq!(
        missing,
        vec![
            "Unable to fetch parameters [/ami/latest] from parameter store for this account."
                .to_string()
        ]
    );
}
