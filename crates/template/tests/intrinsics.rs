//! Each intrinsic function: results, and AWS's errors for misuse.

mod support;

use serde_json::json;
use support::{eval, eval_err, render_ok, render_with, with_value};

#[test]
fn ref_parameters_pseudo_and_resources() {
    assert_eq!(eval("!Ref Env"), json!("dev"));
    assert_eq!(
        eval("!Ref Subnets"),
        json!(["subnet-1", "subnet-2", "subnet-3"])
    );
    assert_eq!(eval("!Ref Ports"), json!(["80", "443"]));
    assert_eq!(eval("!Ref Count"), json!("3"));
    assert_eq!(eval("!Ref Other"), json!("{{cumulo:Ref:Other}}"));
    assert_eq!(eval("!Ref AWS::Region"), json!("us-east-1"));
    assert_eq!(eval("!Ref AWS::AccountId"), json!("123456789012"));
    assert_eq!(eval("!Ref AWS::StackName"), json!("demo"));
    assert_eq!(eval("!Ref AWS::URLSuffix"), json!("amazonaws.com"));
    assert_eq!(eval("!Ref AWS::Partition"), json!("aws"));
    assert_eq!(eval("!Ref AWS::NotificationARNs"), json!([]));
    let stack_id = eval("!Ref AWS::StackId");
    assert!(
        stack_id.as_str().is_some_and(
            |s| s.starts_with("arn:aws:cloudformation:us-east-1:123456789012:stack/demo/")
        ),
        "{stack_id}"
    );
}

#[test]
fn partition_and_url_suffix_follow_the_region() {
    let t = with_value("!Sub '${AWS::Partition} ${AWS::URLSuffix}'");
    let p = |region: &str| {
        render_with(&t, &[], region, &cumulo_template::PlaceholderSsm).expect("renders")["Resources"]["R"]
            ["Properties"]["P"]
            .clone()
    };
    assert_eq!(p("cn-north-1"), json!("aws-cn amazonaws.com.cn"));
    assert_eq!(p("us-gov-west-1"), json!("aws-us-gov amazonaws.com"));
    assert_eq!(p("eu-west-1"), json!("aws amazonaws.com"));
}

#[test]
fn ref_resource_dot_attribute_is_getatt() {
    assert_eq!(eval("!Ref Other.Arn"), json!("{{cumulo:GetAtt:Other.Arn}}"));
}

#[test]
fn ref_unknown_is_unresolved_dependency() {
    assert_eq!(
        eval_err("!Ref Nope"),
        "Template format error: Unresolved resource dependencies [Nope] in the Resources block of the template"
    );
}

#[test]
fn no_value_removes_keys_and_list_elements() {
    assert_eq!(
        eval("{Keep: 1, Drop: !Ref AWS::NoValue}"),
        json!({"Keep": 1})
    );
    assert_eq!(
        eval("[a, !If [IsProd, b, !Ref AWS::NoValue], c]"),
        json!(["a", "c"])
    );
    let out = render_ok(&with_value("!Ref AWS::NoValue"), &[]);
    assert_eq!(out["Resources"]["R"]["Properties"], json!({}));
}

#[test]
fn getatt_both_forms_and_ref_attribute() {
    assert_eq!(
        eval("!GetAtt Other.Arn"),
        json!("{{cumulo:GetAtt:Other.Arn}}")
    );
    assert_eq!(
        eval("!GetAtt [Other, QueueName]"),
        json!("{{cumulo:GetAtt:Other.QueueName}}")
    );
    assert_eq!(
        eval("{'Fn::GetAtt': [Other, !Ref Env]}"),
        json!("{{cumulo:GetAtt:Other.dev}}")
    );
    assert_eq!(
        eval("!GetAtt Other.Outputs.Name"),
        json!("{{cumulo:GetAtt:Other.Outputs.Name}}")
    );
}

#[test]
fn getatt_errors() {
    assert_eq!(
        eval_err("!GetAtt Missing.Arn"),
        "Template error: instance of Fn::GetAtt references undefined resource Missing"
    );
    assert_eq!(
        eval_err("{'Fn::GetAtt': [Other]}"),
        "Template error: every Fn::GetAtt object requires two non-empty parameters, the resource name and the resource attribute"
    );
}

#[test]
fn sub_forms() {
    assert_eq!(eval("!Sub '${Env}-${AWS::Region}'"), json!("dev-us-east-1"));
    assert_eq!(eval("!Sub '${!Literal}-${Env}'"), json!("${Literal}-dev"));
    assert_eq!(
        eval("!Sub '${Other.Arn}'"),
        json!("{{cumulo:GetAtt:Other.Arn}}")
    );
    assert_eq!(eval("!Sub '${Other}'"), json!("{{cumulo:Ref:Other}}"));
    assert_eq!(
        eval("!Sub ['${A}-${Env}', {A: !Select [1, !Ref Subnets]}]"),
        json!("subnet-2-dev")
    );
    assert_eq!(
        eval("!Sub 'no vars ${ unclosed'"),
        json!("no vars ${ unclosed")
    );
    assert_eq!(eval("!Sub '${Count}'"), json!("3"));
}

#[test]
fn sub_errors() {
    assert_eq!(
        eval_err("!Sub '${Nope}-x'"),
        "Template format error: Unresolved resource dependencies [Nope] in the Resources block of the template"
    );
    assert!(eval_err("!Sub [1, 2]").contains("Fn::Sub"));
    assert_eq!(
        eval_err("!Sub '${Subnets}'"),
        "Template error: variable Subnets in Fn::Sub expression does not resolve to a string"
    );
}

#[test]
fn join_select_split() {
    assert_eq!(
        eval("!Join ['|', !Ref Subnets]"),
        json!("subnet-1|subnet-2|subnet-3")
    );
    assert_eq!(eval("!Join ['', [a, 1, true]]"), json!("a1true"));
    assert_eq!(eval("!Select [1, [a, b, c]]"), json!("b"));
    assert_eq!(eval("!Select ['2', !Ref Subnets]"), json!("subnet-3"));
    assert_eq!(eval("!Split [',', 'a,b,,c']"), json!(["a", "b", "", "c"]));
    assert_eq!(eval("!Join ['-', !Split [',', 'a,b']]"), json!("a-b"));
    assert_eq!(eval("!Select [0, !GetAZs '']"), json!("us-east-1a"));
    assert_eq!(
        eval("!GetAZs eu-west-1"),
        json!(["eu-west-1a", "eu-west-1b", "eu-west-1c"])
    );
    assert_eq!(
        eval("!GetAZs {Ref: AWS::Region}"),
        json!(["us-east-1a", "us-east-1b", "us-east-1c"])
    );
}

#[test]
fn list_functions_over_deployment_values_give_placeholders() {
    assert_eq!(
        eval("!Select [0, !GetAtt Other.Subnets]"),
        json!("{{cumulo:Select:0:{{cumulo:GetAtt:Other.Subnets}}}}")
    );
    assert_eq!(
        eval("!Join [',', !GetAtt Other.Subnets]"),
        json!("{{cumulo:Join:,:{{cumulo:GetAtt:Other.Subnets}}}}")
    );
}

#[test]
fn join_select_split_errors() {
    assert_eq!(
        eval_err("!Select [3, [a, b]]"),
        "Template error: Fn::Select cannot select nonexistent value at index 3"
    );
    assert_eq!(
        eval_err("!Select [x, [a, b]]"),
        "Template error: Fn::Select requires a list argument with two elements: an integer index and a list"
    );
    assert_eq!(
        eval_err("!Split [',']"),
        "Template error: Fn::Split requires a list argument with two elements: a delimiter and a source string"
    );
    assert!(
        eval_err("!Join [',', {a: b}]")
            .starts_with("Template error: every Fn::Join object requires two parameters")
    );
}

#[test]
fn base64() {
    assert_eq!(eval("!Base64 'hello world'"), json!("aGVsbG8gd29ybGQ="));
    assert_eq!(eval("!Base64 {'Fn::Sub': '${Env}-x'}"), json!("ZGV2LXg="));
}

#[test]
fn import_value() {
    assert_eq!(
        eval("!ImportValue {'Fn::Sub': '${Env}-VpcId'}"),
        json!("{{cumulo:ImportValue:dev-VpcId}}")
    );
}

#[test]
fn find_in_map() {
    assert_eq!(
        eval("!FindInMap [RegionMap, !Ref 'AWS::Region', Ami]"),
        json!("ami-east")
    );
    assert_eq!(eval("!FindInMap [RegionMap, eu-west-1, Size]"), json!(3));
    assert_eq!(
        eval("!FindInMap [RegionMap, us-east-1, Zones]"),
        json!(["a", "b"])
    );
    assert_eq!(
        eval_err("!FindInMap [RegionMap, ap-south-1, Ami]"),
        "Template error: Unable to get mapping for RegionMap::ap-south-1::Ami"
    );
    assert_eq!(
        eval_err("!FindInMap [Nope, a, b]"),
        "Template error: Mapping named 'Nope' is not present in the 'Mappings' section of template."
    );
    assert_eq!(
        eval_err("!FindInMap [RegionMap, a]"),
        "Template error: every Fn::FindInMap object requires three parameters, the map name, map key and the attribute for return value"
    );
}

#[test]
fn find_in_map_default_value_needs_language_extensions() {
    assert_eq!(
        eval_err("!FindInMap [RegionMap, ap-south-1, Ami, {DefaultValue: x}]"),
        "Template error: every Fn::FindInMap object requires three parameters, the map name, map key and the attribute for return value"
    );
    let t = format!(
        "Transform: AWS::LanguageExtensions\n{}",
        with_value("!FindInMap [RegionMap, ap-south-1, Ami, {DefaultValue: !Ref Env}]")
    );
    assert_eq!(
        render_ok(&t, &[])["Resources"]["R"]["Properties"]["P"],
        json!("dev")
    );
}

#[test]
fn cidr_ipv4_ipv6() {
    assert_eq!(
        eval("!Cidr ['192.168.0.0/24', 6, 5]"),
        json!([
            "192.168.0.0/27",
            "192.168.0.32/27",
            "192.168.0.64/27",
            "192.168.0.96/27",
            "192.168.0.128/27",
            "192.168.0.160/27"
        ])
    );
    assert_eq!(
        eval("!Cidr ['10.0.7.9/16', '2', '8']"),
        json!(["10.0.0.0/24", "10.0.1.0/24"])
    );
    assert_eq!(
        eval("!Cidr ['2600:1f18:abc:de00::/56', 2, 64]"),
        json!(["2600:1f18:abc:de00::/64", "2600:1f18:abc:de01::/64"])
    );
    assert_eq!(eval("!Cidr ['10.0.0.0/24', 1, 8]"), json!(["10.0.0.0/24"]));
    assert_eq!(
        eval("!Select [1, !Cidr [!Sub '10.${Count}.0.0/16', 256, 8]]"),
        json!("10.3.1.0/24")
    );
}

#[test]
fn cidr_errors() {
    assert_eq!(
        eval_err("!Cidr ['10.0.0.0/24', 9, 5]"),
        "Template error: Fn::Cidr cannot fit 9 blocks with 5 CIDR bits in 10.0.0.0/24"
    );
    assert_eq!(
        eval_err("!Cidr ['10.0.0.0/16', 0, 8]"),
        "Template error: Fn::Cidr count must be between 1 and 256 and cidrBits must be an integer"
    );
    assert_eq!(
        eval_err("!Cidr ['10.0.0/16', 1, 8]"),
        "Template error: Fn::Cidr ipBlock 10.0.0/16 is not a valid CIDR block"
    );
    assert_eq!(
        eval_err("!Cidr ['10.0.0.0/24', 1, 9]"),
        "Template error: Fn::Cidr cannot fit 1 blocks with 9 CIDR bits in 10.0.0.0/24"
    );
}

#[test]
fn fn_if_takes_one_branch() {
    assert_eq!(eval("!If [IsProd, big, small]"), json!("small"));
    assert_eq!(eval("!If [IsDev, big, small]"), json!("big"));
    // The untaken branch may reference anything.
    assert_eq!(eval("!If [IsProd, !Ref Nope, ok]"), json!("ok"));
    assert_eq!(
        eval_err("!If [Nope, a, b]"),
        "Template error: unresolved condition dependency Nope in Fn::If"
    );
    assert_eq!(
        eval_err("!If [{'Fn::Equals': [a, a]}, a, b]"),
        "Template error: Fn::If requires a list argument with the first element being a condition"
    );
}

#[test]
fn unsupported_and_extension_functions() {
    let e = eval_err("{'Fn::Nope': x}");
    assert!(
        e.starts_with("Template format error: Encountered unsupported function: Fn::Nope Supported functions are: [Fn::Base64"),
        "{e}"
    );
    assert!(eval_err("{'Fn::Length': [a]}").contains("unsupported function: Fn::Length"));
    assert!(
        eval_err("{'Fn::ToJsonString': {a: b}}").contains("unsupported function: Fn::ToJsonString")
    );
}

#[test]
fn language_extension_functions() {
    let ext = |v: &str| {
        let t = format!("Transform: AWS::LanguageExtensions\n{}", with_value(v));
        render_ok(&t, &[])["Resources"]["R"]["Properties"]["P"].clone()
    };
    assert_eq!(ext("{'Fn::Length': !Ref Subnets}"), json!(3));
    assert_eq!(ext("{'Fn::Length': [a, !Ref AWS::NoValue, b]}"), json!(2));
    assert_eq!(
        ext("{'Fn::ToJsonString': {Env: !Ref Env, L: [1, 2]}}"),
        json!(r#"{"Env":"dev","L":[1,2]}"#)
    );
}

/// ValidateTemplate does not look up a FindInMap keyed by parameters (their values are known
/// only at deploy time), so a template whose default is no key of the map is still valid.
#[test]
fn validating_leaves_parameter_keyed_find_in_map_unevaluated() {
    let text = "Parameters:
  Env: {Type: String, Default: none}
Mappings:
  Sizes: {prod: {Size: '5'}}
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: !FindInMap [Sizes, !Ref Env, Size]
      MaximumMessageSize: !FindInMap [Sizes, !Sub '${Env}', Size]
";
    let render_as = |validate: bool| {
        let options = cumulo_template::RenderOptions {
            validate,
            ..cumulo_template::RenderOptions::default()
        };
        let doc = cumulo_template::parse_template(text).expect("parses");
        cumulo_template::render(doc.value, &options, &cumulo_template::NoSsm)
    };
    let deployed = render_as(false).expect_err("the default is no key of the map");
    assert_eq!(
        deployed[0].message,
        "Template error: Unable to get mapping for Sizes::none::Size"
    );
    let checked = render_as(true).expect("valid as ValidateTemplate sees it");
    let props = checked.output["Resources"]["Q"]["Properties"].clone();
    assert!(
        props["DelaySeconds"]
            .as_str()
            .is_some_and(cumulo_template::context::is_placeholder),
        "{props:?}"
    );
}
