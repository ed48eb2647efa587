//! Template structure: format errors, conditions, pruning, the dependency graph and its order.

mod support;

use cumulo_template::{NoSsm, Pseudo, parse_template, prepare};
use indexmap::{IndexMap, IndexSet};
use serde_json::json;
use support::{render_err, render_ok, render_with};

const RES: &str = "Resources:\n  B: {Type: AWS::S3::Bucket}\n";

#[test]
fn format_errors() {
    assert_eq!(
        render_err("Resources: {}\n", &[]),
        "Template format error: At least one Resources member must be defined."
    );
    assert_eq!(
        render_err(&format!("Foo: 1\n{RES}"), &[]),
        "Template format error: Invalid template property or properties [Foo]"
    );
    assert_eq!(
        render_err("Resources:\n  B: {Properties: {}}\n", &[]),
        "Template format error: [/Resources/B] Every Resources object must contain a Type member."
    );
    assert_eq!(
        render_err(
            "Resources:\n  B: {Type: AWS::S3::Bucket, Propertes: {}}\n",
            &[]
        ),
        "Invalid template resource property 'Propertes'"
    );
    assert_eq!(
        render_err(&format!("{RES}Outputs:\n  O: {{Description: x}}\n"), &[]),
        "Template format error: Every Outputs member must contain a Value object"
    );
    assert_eq!(
        render_err(&format!("{RES}Outputs:\n  O: {{Value: null}}\n"), &[]),
        "Template format error: [/Outputs/O/Value] 'null' values are not allowed in templates"
    );
    assert_eq!(
        render_err(&format!("Mappings:\n  M: {{a: b}}\n{RES}"), &[]),
        "Template format error: [/Mappings/M/a] Every Mappings attribute must be a map"
    );
    assert_eq!(
        render_err(
            &format!("AWSTemplateFormatVersion: '2011-01-01'\n{RES}"),
            &[]
        ),
        "Template format error: '2011-01-01' is not a supported AWSTemplateFormatVersion value."
    );
}

#[test]
fn syntax_errors_in_aws_words_say_only_where() {
    for (text, expected) in [
        (
            "{\"Resources\": {\n  \"B\": {\"Type\" \"X\"}}}",
            "Template format error: JSON not well-formed. (line 2, column 16)",
        ),
        (
            "Resources:\n  B: [\n",
            "Template format error: YAML not well-formed.",
        ),
    ] {
        let errs = parse_template(text).expect_err("malformed");
        let message = errs[0].aws_message();
        assert!(message.starts_with(expected), "{text:?}: {message}");
        assert!(!message.contains("expected"), "no cumulo detail: {message}");
    }
}

#[test]
fn format_errors_are_collected() {
    let t = "Foo: 1\nResources:\n  A: {Properties: {}}\n  B: {Type: X, Bad: 1}\n";
    let errs = render_with(t, &[], "us-east-1", &NoSsm).expect_err("invalid");
    assert_eq!(errs.len(), 3, "{errs:?}");
}

const ENV: &str = "Parameters:
  Env: {Type: String, AllowedValues: [prod, dev], Default: dev}
  Size: {Type: String, Default: small}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  IsBig: !Equals [!Ref Size, big]
  ProdAndBig: !And [!Condition IsProd, !Condition IsBig]
  ProdOrBig: !Or [!Condition IsProd, !Condition IsBig]
  NotProd: !Not [!Condition IsProd]
";

#[test]
fn conditions_prune_resources_and_outputs() {
    let t = format!(
        "{ENV}Resources:
  Always: {{Type: AWS::S3::Bucket}}
  Prod: {{Type: AWS::S3::Bucket, Condition: IsProd}}
  Both: {{Type: AWS::S3::Bucket, Condition: ProdAndBig}}
  Either: {{Type: AWS::S3::Bucket, Condition: ProdOrBig}}
  Dev: {{Type: AWS::S3::Bucket, Condition: NotProd}}
Outputs:
  AlwaysName: {{Value: !Ref Always}}
  ProdName: {{Value: !Ref Prod, Condition: IsProd}}
"
    );
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        k.sort();
        k
    };
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            &[("Env", "prod")],
            &["Always", "Either", "Prod"],
            &["AlwaysName", "ProdName"],
        ),
        (
            &[("Env", "prod"), ("Size", "big")],
            &["Always", "Both", "Either", "Prod"],
            &["AlwaysName", "ProdName"],
        ),
        (
            &[("Size", "big")],
            &["Always", "Dev", "Either"],
            &["AlwaysName"],
        ),
        (&[], &["Always", "Dev"], &["AlwaysName"]),
    ];
    for (given, resources, outputs) in cases {
        let out = render_ok(&t, given);
        assert_eq!(keys(&out["Resources"]), *resources, "{given:?}");
        assert_eq!(keys(&out["Outputs"]), *outputs, "{given:?}");
    }
    let out = render_ok(&t, &[("Env", "prod")]);
    assert_eq!(out["Conditions"]["IsProd"], json!(true));
    assert_eq!(out["Conditions"]["NotProd"], json!(false));
}

#[test]
fn references_to_pruned_resources() {
    let base = format!("{ENV}Resources:\n  Prod: {{Type: AWS::S3::Bucket, Condition: IsProd}}\n");
    assert_eq!(
        render_err(
            &format!("{base}  Q: {{Type: AWS::SQS::Queue, Properties: {{N: !Ref Prod}}}}\n"),
            &[]
        ),
        "Template format error: Unresolved resource dependencies [Prod] in the Resources block of the template"
    );
    assert_eq!(
        render_err(
            &format!("{base}  Q: {{Type: AWS::SQS::Queue, Properties: {{N: !GetAtt Prod.Arn}}}}\n"),
            &[]
        ),
        "Template format error: Unresolved resource dependencies [Prod] in the Resources block of the template"
    );
    assert_eq!(
        render_err(
            &format!("{base}  Q: {{Type: AWS::SQS::Queue, DependsOn: Prod}}\n"),
            &[]
        ),
        "Template format error: Unresolved resource dependencies [Prod] in the Resources block of the template"
    );
    assert_eq!(
        render_err(
            &format!("{base}  B: {{Type: AWS::S3::Bucket}}\nOutputs:\n  O: {{Value: !Ref Prod}}\n"),
            &[]
        ),
        "Template format error: Unresolved resource dependencies [Prod] in the Outputs block of the template"
    );
    // The usual pattern: referenced only through Fn::If on the same condition.
    let ok = render_ok(
        &format!(
            "{base}  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      N: !If [IsProd, !Ref Prod, !Ref AWS::NoValue]\n"
        ),
        &[],
    );
    assert_eq!(ok["Resources"]["Q"]["Properties"], json!({}));
    assert_eq!(
        ok["Resources"]["Q"].get("DependsOn"),
        None,
        "the untaken branch adds no dependency"
    );
}

#[test]
fn condition_errors() {
    assert_eq!(
        render_err(
            &format!("Conditions:\n  C: !Equals [!Ref B, x]\n{RES}"),
            &[]
        ),
        "Template format error: Unresolved dependencies [B]. Cannot reference resources in the Conditions block of the template"
    );
    assert_eq!(
        render_err(
            "Resources:\n  B: {Type: AWS::S3::Bucket, Condition: Nope}\n",
            &[]
        ),
        "Template format error: Unresolved condition dependency Nope in the Resources block of the template"
    );
    assert_eq!(
        render_err(
            &format!("{RES}Outputs:\n  O: {{Value: x, Condition: Nope}}\n"),
            &[]
        ),
        "Template format error: Unresolved condition dependency Nope in the Outputs block of the template"
    );
    assert_eq!(
        render_err(
            &format!("Conditions:\n  A: !Not [!Condition Nope]\n{RES}"),
            &[]
        ),
        "Template error: unresolved condition dependency Nope in Condition"
    );
    assert_eq!(
        render_err(
            &format!("Conditions:\n  A: !Not [!Condition B]\n  B: !Not [!Condition A]\n{RES}"),
            &[]
        ),
        "Template format error: Circular dependency between conditions: [A, B]"
    );
    assert_eq!(
        render_err(
            &format!("Conditions:\n  C: !And [!Equals [a, a]]\n{RES}"),
            &[]
        ),
        "Template error: every Fn::And object requires a list of at least 2 and at most 10 boolean parameters."
    );
    let eleven = ["!Equals [a, b]"; 11].join(", ");
    assert_eq!(
        render_err(&format!("Conditions:\n  C: !Or [{eleven}]\n{RES}"), &[]),
        "Template error: every Fn::Or object requires a list of at least 2 and at most 10 boolean parameters."
    );
    assert_eq!(
        render_err(
            &format!("Conditions:\n  C: !Not [!Equals [a, a], !Equals [a, a]]\n{RES}"),
            &[]
        ),
        "Template error: every Fn::Not object requires a list with exactly 1 boolean parameter."
    );
    assert_eq!(
        render_err(&format!("Conditions:\n  C: yes\n{RES}"), &[]),
        "Template format error: Conditions can only be boolean operations on parameters and other conditions"
    );
}

#[test]
fn equals_compares_scalars_as_strings() {
    let t = format!(
        "Parameters:\n  N: {{Type: Number, Default: 3}}\nConditions:\n  Three: !Equals [!Ref N, 3]\n  Region: !Equals [!Ref AWS::Region, us-east-1]\n  Map: !Equals [!FindInMap [M, k, v], x]\nMappings:\n  M: {{k: {{v: x}}}}\n{RES}"
    );
    let out = render_ok(&t, &[]);
    assert_eq!(
        out["Conditions"],
        json!({"Three": true, "Region": true, "Map": true})
    );
}

#[test]
fn unresolved_and_getatt_errors_are_collected() {
    let t = "Resources:\n  A:\n    Type: X\n    Properties: {P: !Ref Nope, Q: !Sub '${Gone}', R: !GetAtt Missing.Arn}\n  B: {Type: X, DependsOn: [Also]}\n";
    let errs = render_with(t, &[], "us-east-1", &NoSsm).expect_err("invalid");
    assert_eq!(
        errs,
        vec![
            "Template format error: Unresolved resource dependencies [Nope, Gone, Also] in the Resources block of the template"
                .to_string(),
            "Template error: instance of Fn::GetAtt references undefined resource Missing".to_string(),
        ]
    );
}

#[test]
fn cycles_name_the_resources() {
    let t = "Resources:\n  A: {Type: X, Properties: {P: !Ref B}}\n  B: {Type: X, Properties: {P: !GetAtt C.Arn}}\n  C: {Type: X, DependsOn: A}\n  D: {Type: X, Properties: {P: !Ref D}}\n  E: {Type: X, DependsOn: A}\n";
    let errs = render_with(t, &[], "us-east-1", &NoSsm).expect_err("cyclic");
    assert_eq!(
        errs,
        vec![
            "Circular dependency between resources: [A, B, C]".to_string(),
            "Circular dependency between resources: [D]".to_string(),
        ]
    );
}

#[test]
fn provisioning_order_and_levels() {
    let t = "Resources:
  App: {Type: X, Properties: {Q: !Ref Queue, T: !Sub '${Topic.Arn}'}}
  Topic: {Type: X}
  Queue: {Type: X, DependsOn: Key}
  Key: {Type: X}
  Alarm: {Type: X, Properties: {A: !GetAtt [App, Arn]}}
  Lone: {Type: X}
";
    let out = render_ok(t, &[]);
    // Among ready resources, the earliest in the template goes first.
    assert_eq!(
        out["ProvisioningOrder"],
        json!(["Topic", "Key", "Queue", "App", "Alarm", "Lone"])
    );
    assert_eq!(
        out["ProvisioningLevels"],
        json!([["Topic", "Key", "Lone"], ["Queue"], ["App"], ["Alarm"]])
    );
    assert_eq!(
        out["Resources"]["App"]["DependsOn"],
        json!(["Queue", "Topic"])
    );
}

#[test]
fn dynamic_references_add_no_dependency() {
    let t = "Resources:\n  Secret: {Type: X}\n  Db: {Type: X, Properties: {P: '{{resolve:secretsmanager:Secret:SecretString:password}}'}}\n";
    let out = render_ok(t, &[]);
    assert_eq!(out["ProvisioningLevels"], json!([["Secret", "Db"]]));
    assert_eq!(
        out["DynamicReferences"],
        json!([{"Path": "/Resources/Db/Properties/P", "Reference": "{{resolve:secretsmanager:Secret:SecretString:password}}"}])
    );
    // The literal text is what the rendered template keeps.
    assert_eq!(
        out["Resources"]["Db"]["Properties"]["P"],
        json!("{{resolve:secretsmanager:Secret:SecretString:password}}")
    );
}

#[test]
fn resource_attributes_are_kept_and_evaluated() {
    let t = "Parameters:\n  P: {Type: String, Default: Retain}\nResources:
  B:
    Type: AWS::S3::Bucket
    DeletionPolicy: Retain
    UpdateReplacePolicy: Snapshot
    Metadata: {Note: !Ref P}
    CreationPolicy: {ResourceSignal: {Count: 1}}
    UpdatePolicy: {AutoScalingRollingUpdate: {MinInstancesInService: 1}}
";
    let out = render_ok(t, &[]);
    let b = &out["Resources"]["B"];
    assert_eq!(b["DeletionPolicy"], json!("Retain"));
    assert_eq!(b["UpdateReplacePolicy"], json!("Snapshot"));
    assert_eq!(b["Metadata"], json!({"Note": "Retain"}));
    assert_eq!(b["CreationPolicy"], json!({"ResourceSignal": {"Count": 1}}));
    assert_eq!(
        b["UpdatePolicy"],
        json!({"AutoScalingRollingUpdate": {"MinInstancesInService": 1}})
    );
}

#[test]
fn outputs_with_exports() {
    let t = format!(
        "{RES}Outputs:\n  O:\n    Value: !GetAtt B.Arn\n    Description: !Sub 'the ${{AWS::Region}} bucket'\n    Export: {{Name: !Sub '${{AWS::StackName}}-Bucket'}}\n"
    );
    let out = render_ok(&t, &[]);
    assert_eq!(
        out["Outputs"]["O"],
        json!({"Value": "{{cumulo:GetAtt:B.Arn}}", "Description": "the us-east-1 bucket", "Export": {"Name": "demo-Bucket"}})
    );
}

#[test]
fn transforms() {
    let sam = format!("Transform: AWS::Serverless-2016-10-31\n{RES}");
    assert_eq!(
        render_err(&sam, &[]),
        "Template format error: Transform AWS::Serverless-2016-10-31 runs when a stack operation or change set starts; it is not run here"
    );
    let foreach =
        "Resources:\n  Fn::ForEach::B:\n    - X\n    - [a]\n    - B${X}: {Type: AWS::S3::Bucket}\n";
    assert_eq!(
        render_err(foreach, &[]),
        "Template format error: Fn::ForEach::B requires the AWS::LanguageExtensions transform"
    );
}

#[test]
fn for_each_expands_resources_outputs_and_conditions() {
    let t = "Transform: AWS::LanguageExtensions
Parameters:
  Names: {Type: CommaDelimitedList, Default: 'a-1,b-2'}
Conditions:
  Fn::ForEach::Conds:
    - N
    - !Ref Names
    - Is&{N}: !Equals [!Ref AWS::Region, us-east-1]
Resources:
  Fn::ForEach::Buckets:
    - N
    - !Ref Names
    - Bucket&{N}:
        Type: AWS::S3::Bucket
        Condition: Is&{N}
        Properties:
          BucketName: !Sub '${AWS::StackName}-${N}'
          Tag: !Ref N
Outputs:
  Fn::ForEach::Outs:
    - N
    - !Ref Names
    - Out&{N}:
        Value: !GetAtt [!Sub 'Bucket&{N}', Arn]
";
    let out = render_ok(t, &[]);
    assert_eq!(out["Conditions"], json!({"Isa1": true, "Isb2": true}));
    assert_eq!(
        out["Resources"]["Bucketa1"]["Properties"],
        json!({"BucketName": "demo-a-1", "Tag": "a-1"})
    );
    assert_eq!(
        out["Resources"]["Bucketb2"]["Properties"]["Tag"],
        json!("b-2")
    );
    assert_eq!(
        out["Outputs"]["Outb2"]["Value"],
        json!("{{cumulo:GetAtt:Bucketb2.Arn}}")
    );
}

#[test]
fn nested_for_each() {
    let t = "Transform: AWS::LanguageExtensions
Resources:
  Fn::ForEach::Outer:
    - X
    - [a, b]
    - Fn::ForEach::Inner:
        - Y
        - ['1', '2']
        - Q${X}${Y}: {Type: AWS::SQS::Queue, Properties: {N: !Sub '${X}-${Y}'}}
";
    let out = render_ok(t, &[]);
    let ids: Vec<&String> = out["Resources"]
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(ids, ["Qa1", "Qa2", "Qb1", "Qb2"]);
    assert_eq!(out["Resources"]["Qb2"]["Properties"]["N"], json!("b-2"));
}

#[test]
fn prepare_exposes_the_graph_for_the_engine() {
    let doc =
        parse_template("Resources:\n  A: {Type: X}\n  B: {Type: X, Properties: {P: !Ref A}}\n")
            .expect("parses");
    let prepared = prepare(
        doc.value,
        &IndexMap::new(),
        &IndexSet::new(),
        Pseudo::new("eu-west-1", "123456789012", "s", "uuid"),
        &NoSsm,
    )
    .expect("prepares");
    assert_eq!(prepared.order, ["A", "B"]);
    assert_eq!(prepared.levels, [["A"], ["B"]]);
    assert_eq!(
        prepared.pseudo.stack_id,
        "arn:aws:cloudformation:eu-west-1:123456789012:stack/s/uuid"
    );
}

#[test]
fn policies_may_be_intrinsics() {
    // Documented first as a language extension; CloudFormation (and cfn-lint) now accept them
    // in any template.
    let body = "Conditions:\n  C: !Equals [a, a]\nResources:\n  B:\n    Type: AWS::S3::Bucket\n    DeletionPolicy: !If [C, Retain, Delete]\n    UpdateReplacePolicy: [x]\n";
    assert_eq!(
        render_err(body, &[]),
        "Template format error: UpdateReplacePolicy must be a string"
    );
    let out = render_ok(&body.replace("[x]", "Delete"), &[]);
    assert_eq!(out["Resources"]["B"]["DeletionPolicy"], json!("Retain"));
}
