//! The inventory file: what `cumulo migrate inventory` read from an account, read-only, and
//! everything later steps (`report`, `generate`, `rehearse`) decide from. Nothing here is
//! inferred: each field is what an AWS read answered (or the template text it returned), so a
//! later step can always say which call a fact came from. Judgements (fates, Copilot handler
//! kinds, what a delete destroys) live in the report, not here.
//!
//! The file is JSON, written 0600 (it holds account ids, ARNs and parameter values, never a
//! secret: NoEcho parameters are kept as CloudFormation reports them, `****`, and secrets are
//! only described, never read). [`Inventory::content_sha256`] seals the rest of the file: a
//! file edited after it was taken no longer matches and is refused (see `inventory::seal`).
//!
//! Field names are snake_case; optional facts are omitted when absent; maps are ordered
//! (`BTreeMap`) so the same account read twice gives the same bytes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The version of this format. A reader refuses any other: a field's meaning may have changed.
pub const FORMAT_VERSION: u32 = 1;

/// One inventory: the stacks asked for, with what they own and what their handlers made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// [`FORMAT_VERSION`] when the file was written.
    pub format_version: u32,
    /// The account the stacks are in (from the stacks' ARNs, or STS GetCallerIdentity).
    pub account: String,
    /// The region the stacks are in.
    pub region: String,
    /// When the inventory was taken (RFC 3339, UTC): how stale it is decides whether the
    /// runbook may still rely on it.
    pub taken_at: String,
    /// The endpoint read: `None` for AWS's own endpoints, else the `AWS_ENDPOINT_URL` (a
    /// `cumulo serve`, say) the reads went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The tool that wrote the file (`cumulo <version>`).
    pub taken_by: String,
    /// What the command was asked to inventory.
    pub selection: Selection,
    /// Every stack found, nested stacks included, parents before their children.
    pub stacks: Vec<Stack>,
    /// Objects that no stack owns but that custom-resource handlers (or people) created for
    /// these stacks: certificates, DNS records.
    #[serde(default)]
    pub out_of_band: OutOfBand,
    /// SHA-256 (lowercase hex) of this file's canonical JSON with this field empty: the seal a
    /// reader checks before trusting anything in the file.
    pub content_sha256: String,
}

/// What `cumulo migrate inventory` was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Selection {
    /// `--app APP [--env ENV]...`: Copilot stacks found by their `copilot-*` tags. An empty
    /// `environments` means every environment of the app.
    Copilot {
        app: String,
        #[serde(default)]
        environments: Vec<String>,
    },
    /// `--stack NAME...`: the named stacks (and their nested stacks), of any origin.
    Stacks { names: Vec<String> },
}

/// One CloudFormation stack as DescribeStacks, GetTemplate and ListStackResources answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    pub name: String,
    /// The stack's ARN (its StackId).
    pub id: String,
    /// StackStatus, e.g. `CREATE_COMPLETE`, `UPDATE_ROLLBACK_COMPLETE`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// Stack-level tags (where the `copilot-*` tags are).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Parameters in the order DescribeStacks gave them.
    #[serde(default)]
    pub parameters: Vec<StackParameter>,
    #[serde(default)]
    pub outputs: Vec<StackOutput>,
    /// Capabilities the stack was deployed with (`CAPABILITY_IAM`, ...): an update of the
    /// retain patch must pass the same ones.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// The service role CloudFormation acts as for this stack, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
    #[serde(default)]
    pub termination_protection: bool,
    /// The deployed template, exactly as GetTemplate (TemplateStage `Original`) returned it:
    /// the retain patch edits this text and the rehearsal deploys it.
    pub template: String,
    /// The parent's StackId when this is a nested stack (an addons stack, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The root stack's StackId when this is a nested stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    /// What the `copilot-*` tags say this stack is; `None` for a stack Copilot did not make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copilot: Option<CopilotStack>,
    /// Every resource ListStackResources listed (all pages), in that order.
    #[serde(default)]
    pub resources: Vec<Resource>,
    /// The stack's `Custom::*` and `AWS::CloudFormation::CustomResource` resources, with the
    /// handler functions behind them.
    #[serde(default)]
    pub custom_resources: Vec<CustomResource>,
}

/// A stack parameter. A NoEcho parameter's value is what CloudFormation reports (`****`):
/// the inventory never holds the real value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackParameter {
    pub key: String,
    pub value: String,
    /// For SSM-typed parameters, the value CloudFormation resolved at the last deploy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_value: Option<String>,
    /// The template declares the parameter `NoEcho: true` (its value above is masked).
    #[serde(default)]
    pub no_echo: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackOutput {
    pub key: String,
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The export name, when other stacks may import this output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_name: Option<String>,
}

/// What Copilot's tags say a stack is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopilotStack {
    pub kind: CopilotKind,
    /// `copilot-application`.
    pub app: String,
    /// `copilot-environment`, for env and workload stacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// `copilot-service` (services and jobs alike), for workload stacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// `copilot-pipeline`, for pipeline stacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<String>,
}

/// The kinds of stack Copilot makes, told apart by which `copilot-*` tags a stack has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopilotKind {
    /// `copilot-application` only: the app stack (roles, DNS delegation, artifact buckets).
    App,
    /// `copilot-application` + `copilot-environment`.
    Env,
    /// `copilot-application` + `copilot-environment` + `copilot-service`: a service or job.
    Workload,
    /// `copilot-pipeline` (with `copilot-application`).
    Pipeline,
}

/// One stack resource, with what its service says about it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub logical_id: String,
    /// The CloudFormation type, e.g. `AWS::EC2::VPC`, `Custom::EnvControllerFunction`.
    pub resource_type: String,
    /// `None` when the resource was never created (its condition was false at the last
    /// deploy, or it failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_id: Option<String>,
    /// ResourceStatus, e.g. `CREATE_COMPLETE`, `DELETE_SKIPPED`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// The resource's own DeletionPolicy/UpdateReplacePolicy in the deployed template (absent:
    /// CloudFormation's default, Delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_replace_policy: Option<String>,
    /// What the service answered when asked about the resource.
    pub live: LiveState,
    /// The identifiers a Terraform import id is built from, as the reads gave them. Keys are
    /// fixed names: `arn`, `id`, `name`, `url` (SQS), `cluster` and `service` (ECS),
    /// `zone_id`, `record_name`, `record_type`, `set_identifier` (Route 53), `listener_arn`,
    /// `bucket`, `function_name`, `role_name`, `policy_arn`, `log_group_name`,
    /// `repository_name`, `key_id`, `parameter_name`, `secret_arn`, `state_machine_arn`,
    /// `namespace_id`, `service_id`, `allocation_id`, `association_id`, `vpc_id`,
    /// `subnet_id`, `route_table_id`, `gateway_id`, `destination_cidr`, `security_group_id`,
    /// `target_group_arn`, `load_balancer_arn`.
    #[serde(default)]
    pub import_attributes: BTreeMap<String, String>,
}

/// What a resource's service answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LiveState {
    /// The reads answered; each call with what it was asked and what it answered (the
    /// response as JSON, whatever the wire protocol).
    Described { calls: Vec<ReadCall> },
    /// The service says the resource does not exist (deleted out of band, or never created).
    Gone {
        operation: String,
        error_code: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The read failed for another reason (access denied, throttled, not implemented).
    Failed {
        operation: String,
        error_code: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// No read was made: the type has no Describe the inventory knows, or the resource has no
    /// physical id. `reason` says which.
    NotRead { reason: String },
}

/// One read-only call and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadCall {
    /// The service's signing name, e.g. `ec2`, `elasticloadbalancing`, `route53`.
    pub service: String,
    /// The API operation, e.g. `DescribeVpcs`.
    pub operation: String,
    /// The input as JSON (field names as the API model spells them).
    pub input: Value,
    /// The answer as JSON (field names as the API model spells them).
    pub output: Value,
}

/// A custom resource and the handler function its ServiceToken names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomResource {
    pub logical_id: String,
    /// `Custom::<Name>` or `AWS::CloudFormation::CustomResource`.
    pub resource_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_id: Option<String>,
    /// The resource's Properties as the deployed template writes them (intrinsics unresolved):
    /// Copilot's handlers are told apart by their properties as well as their type.
    #[serde(default)]
    pub properties: Value,
    /// The ServiceToken: resolved to the ARN when the template's value names a function of
    /// the stack (`!GetAtt F.Arn`) or is a literal; else the template's expression as JSON.
    pub service_token: String,
    /// The handler function, when the token is a Lambda function that could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<HandlerFunction>,
}

/// A custom-resource handler function as Lambda's GetFunction described it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandlerFunction {
    /// The function's logical id in the stack, when the stack defines it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_id: Option<String>,
    pub name: String,
    pub arn: String,
    /// e.g. `nodejs20.x` (which AWS may no longer accept on create: the rehearsal says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// e.g. `index.certificateRequestHandler`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u32>,
    /// Where the code is.
    pub code: CodeLocation,
}

/// Where a handler's code can be had, from GetFunction and the deployed template.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CodeLocation {
    /// GetFunction's Code.RepositoryType (`S3`, `ECR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_type: Option<String>,
    /// GetFunction's Code.Location: a presigned URL, valid for minutes after `taken_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// GetFunction's Configuration.CodeSha256 (base64), to check a copy of the code against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The template's Code.S3Bucket / S3Key / S3ObjectVersion when they are literals
    /// (Copilot's artifact bucket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_bucket: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_object_version: Option<String>,
    /// The template's inline Code.ZipFile source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zip_file: Option<String>,
    /// Code.ImageUri for container-image functions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_uri: Option<String>,
}

/// A template's Code.S3Bucket / S3Key as the account resolved it: a literal, or an `Fn::Sub`
/// naming only the pseudo parameters an asset bucket's name uses (CDK's bootstrap bucket is
/// `cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}`). Anything else is `None`: the
/// location is not knowable from the template alone.
pub fn code_text(value: &Value, account: &str, region: &str) -> Option<String> {
    if let Some(text) = value.as_str() {
        return Some(text.to_string());
    }
    let sub = value.get("Fn::Sub")?;
    let pattern = match sub {
        Value::String(s) => s.as_str(),
        Value::Array(a) if a.len() == 2 && a[1].as_object().is_some_and(|m| m.is_empty()) => {
            a[0].as_str()?
        }
        _ => return None,
    };
    let resolved = pattern
        .replace("${AWS::AccountId}", account)
        .replace("${AWS::Region}", region)
        .replace("${AWS::Partition}", "aws")
        .replace("${AWS::URLSuffix}", "amazonaws.com");
    (!resolved.contains("${")).then_some(resolved)
}

/// Objects no stack owns, found because handlers make them for these stacks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OutOfBand {
    /// ACM certificates tagged `copilot-application` (and `copilot-environment` /
    /// `copilot-service`) for the app, or named by a stack's custom resource physical id.
    #[serde(default)]
    pub certificates: Vec<Certificate>,
    /// Hosted zones the stacks reference (own, take as a parameter, or name in a
    /// custom resource), with every record set in them.
    #[serde(default)]
    pub hosted_zones: Vec<HostedZone>,
}

/// An ACM certificate as DescribeCertificate and ListTagsForCertificate answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    pub arn: String,
    /// The region it lives in (a CloudFront certificate is in us-east-1).
    pub region: String,
    pub domain_name: String,
    #[serde(default)]
    pub subject_alternative_names: Vec<String>,
    /// e.g. `ISSUED`, `PENDING_VALIDATION`.
    pub status: String,
    /// ARNs of what uses it (listeners, distributions): a handler's Delete waits for this to
    /// be empty.
    #[serde(default)]
    pub in_use_by: Vec<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// The DNS validation records ACM asks for, one per domain.
    #[serde(default)]
    pub validation_records: Vec<ValidationRecord>,
    /// Why the inventory took it: `physical_id:<stack>/<logical id>` (a custom resource's
    /// physical id is its ARN), `tags` (the copilot tags matched), or both, comma-separated.
    pub found_by: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationRecord {
    pub domain_name: String,
    /// The CNAME's name and value.
    pub name: String,
    pub record_type: String,
    pub value: String,
}

/// A Route 53 hosted zone and its records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostedZone {
    /// The zone id without the `/hostedzone/` prefix.
    pub id: String,
    /// With its trailing dot, as Route 53 spells it.
    pub name: String,
    #[serde(default)]
    pub private: bool,
    /// The stacks that reference the zone, and how (`resource:<logical id>`,
    /// `parameter:<key>`, `output:<key>`, `custom_resource:<logical id>`).
    #[serde(default)]
    pub referenced_by: Vec<ZoneReference>,
    /// Every record set ListResourceRecordSets returned (all pages).
    #[serde(default)]
    pub records: Vec<RecordSet>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZoneReference {
    pub stack: String,
    pub how: String,
}

/// A Route 53 record set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordSet {
    /// With its trailing dot.
    pub name: String,
    pub record_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    #[serde(default)]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_target: Option<AliasTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_identifier: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AliasTarget {
    pub hosted_zone_id: String,
    pub dns_name: String,
    #[serde(default)]
    pub evaluate_target_health: bool,
}

impl Stack {
    /// The resource with this logical id.
    pub fn resource(&self, logical_id: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.logical_id == logical_id)
    }

    /// The parameter's value as DescribeStacks reported it.
    pub fn parameter(&self, key: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.as_str())
    }
}

impl Inventory {
    /// The stack with this name.
    pub fn stack(&self, name: &str) -> Option<&Stack> {
        self.stacks.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::code_text;
    use serde_json::json;

    #[test]
    fn code_text_resolves_an_asset_bucket_sub_and_nothing_else() {
        let sub = json!({"Fn::Sub": "cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}"});
        assert_eq!(
            code_text(&sub, "123456789012", "eu-west-1").as_deref(),
            Some("cdk-hnb659fds-assets-123456789012-eu-west-1")
        );
        assert_eq!(code_text(&json!("lit"), "a", "r").as_deref(), Some("lit"));
        assert_eq!(
            code_text(&json!({"Fn::Sub": ["x-${AWS::Region}", {}]}), "a", "r").as_deref(),
            Some("x-r")
        );
        assert_eq!(code_text(&json!({"Fn::Sub": "${Bucket}"}), "a", "r"), None);
        assert_eq!(code_text(&json!({"Ref": "Bucket"}), "a", "r"), None);
    }
}
