//! CloudFormation's YAML short-form tags and the long-form keys they stand for.
//!
//! The set is the functions CloudFormation's YAML uses a short form for: the intrinsic functions
//! (`!Ref`, `!Sub`, `!GetAtt`, `!Join`, `!Select`, `!Split`, `!FindInMap`, `!Base64`, `!Cidr`,
//! `!GetAZs`, `!ImportValue`, `!Transform`), the condition functions (`!If`, `!Equals`, `!Not`,
//! `!And`, `!Or`, `!Condition`), the rule functions (`!Contains`, `!EachMemberEquals`,
//! `!EachMemberIn`, `!RefAll`, `!ValueOf`, `!ValueOfAll`) and the `AWS::LanguageExtensions`
//! functions that are plain `Fn::` keys (`!Length`, `!ToJsonString`), plus `Fn::GetStackOutput`,
//! which cfn-lint (v1.51) lists among the intrinsic functions. `Fn::ForEach::Name` is a mapping key carrying a loop name, so it has no
//! tag. Any other local tag (e.g. Rain's `!Rain::Embed`) is an error: silently turning it into an
//! `Fn::` key, as cfn-lint does, would make an undeployable template look valid.

/// The long-form key for a short-form tag suffix (`Ref` for `!Ref`, `Fn::Sub` for `!Sub`).
///
/// A colon after the name (`- !Ref: AWS::NoValue`) is accepted: `:` is a legal tag character, so
/// that is the tag `!Ref:` on the scalar `AWS::NoValue`, and AWS Copilot renders exactly this in
/// templates CloudFormation deploys (see the svc-nlb stacks in the Copilot corpus).
pub(super) fn long_form(suffix: &str) -> Option<&'static str> {
    let name = suffix.strip_suffix(':').unwrap_or(suffix);
    Some(match name {
        "Ref" => "Ref",
        "Condition" => "Condition",
        "And" => "Fn::And",
        "Base64" => "Fn::Base64",
        "Cidr" => "Fn::Cidr",
        "Contains" => "Fn::Contains",
        "EachMemberEquals" => "Fn::EachMemberEquals",
        "EachMemberIn" => "Fn::EachMemberIn",
        "Equals" => "Fn::Equals",
        "FindInMap" => "Fn::FindInMap",
        "GetAtt" => "Fn::GetAtt",
        "GetAZs" => "Fn::GetAZs",
        "GetStackOutput" => "Fn::GetStackOutput",
        "If" => "Fn::If",
        "ImportValue" => "Fn::ImportValue",
        "Join" => "Fn::Join",
        "Length" => "Fn::Length",
        "Not" => "Fn::Not",
        "Or" => "Fn::Or",
        "RefAll" => "Fn::RefAll",
        "Select" => "Fn::Select",
        "Split" => "Fn::Split",
        "Sub" => "Fn::Sub",
        "ToJsonString" => "Fn::ToJsonString",
        "Transform" => "Fn::Transform",
        "ValueOf" => "Fn::ValueOf",
        "ValueOfAll" => "Fn::ValueOfAll",
        _ => return None,
    })
}
