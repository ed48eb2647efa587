//! Typed inputs and outputs of the engine's operations. They mirror the CloudFormation API's
//! members (botocore's `cloudformation/2010-05-15` model) so the wire adapter is a plain mapping;
//! `Option` is an absent member, an empty `Vec` an absent list.

use crate::status::StackStatus;
use chrono::{DateTime, Utc};

/// Who is calling: every operation is scoped to a region and account, and the request id is the
/// ClientRequestToken fallback for the events the operation writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub region: String,
    pub account_id: String,
    pub request_id: String,
    /// The `Host` the client reached the endpoint by (`localhost:4566`): resources whose
    /// identifiers are URLs (SQS queue URLs) are built with it. Empty for in-process callers.
    pub host: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parameter {
    pub key: String,
    pub value: Option<String>,
    pub use_previous_value: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tag {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, Default)]
pub struct CreateStackInput {
    pub stack_name: String,
    pub template_body: Option<String>,
    pub template_url: Option<String>,
    pub parameters: Vec<Parameter>,
    pub disable_rollback: Option<bool>,
    /// `DO_NOTHING` | `ROLLBACK` | `DELETE`.
    pub on_failure: Option<String>,
    pub timeout_in_minutes: Option<i64>,
    pub notification_arns: Vec<String>,
    pub capabilities: Vec<String>,
    pub tags: Vec<Tag>,
    pub client_request_token: Option<String>,
    pub enable_termination_protection: Option<bool>,
    pub retain_except_on_create: Option<bool>,
    pub stack_policy_body: Option<String>,
    pub stack_policy_url: Option<String>,
    pub role_arn: Option<String>,
    pub rollback_configuration: Option<RollbackConfiguration>,
}

/// A stack's RollbackConfiguration, stored and shown as given. Rollback triggers watch
/// CloudWatch alarms, which cumulo does not emulate: a configuration with triggers is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RollbackConfiguration {
    /// `(Arn, Type)` of each trigger.
    pub rollback_triggers: Vec<(String, String)>,
    pub monitoring_time_in_minutes: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct SetStackPolicyInput {
    pub stack_name: String,
    pub stack_policy_body: Option<String>,
    pub stack_policy_url: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetStackPolicyOutput {
    pub stack_policy_body: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct UpdateStackInput {
    pub stack_name: String,
    pub template_body: Option<String>,
    pub template_url: Option<String>,
    pub use_previous_template: bool,
    pub parameters: Vec<Parameter>,
    pub capabilities: Vec<String>,
    pub notification_arns: Vec<String>,
    /// `None` keeps the stack's tags; `Some(vec![])` removes them (as AWS).
    pub tags: Option<Vec<Tag>>,
    pub disable_rollback: Option<bool>,
    pub client_request_token: Option<String>,
    pub retain_except_on_create: Option<bool>,
    /// Replaces the stack's policy.
    pub stack_policy_body: Option<String>,
    pub stack_policy_url: Option<String>,
    /// Overrides the stack's policy for this update only.
    pub stack_policy_during_update_body: Option<String>,
    pub stack_policy_during_update_url: Option<String>,
    /// `None` keeps the stack's.
    pub role_arn: Option<String>,
    pub rollback_configuration: Option<RollbackConfiguration>,
}

#[derive(Debug, Clone, Default)]
pub struct DeleteStackInput {
    pub stack_name: String,
    pub retain_resources: Vec<String>,
    pub client_request_token: Option<String>,
}

/// The StackId member of CreateStack/UpdateStack/RollbackStack responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackIdOutput {
    pub stack_id: String,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeStacksInput {
    pub stack_name: Option<String>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DescribeStacksOutput {
    pub stacks: Vec<StackView>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterView {
    pub key: String,
    /// `****` for NoEcho parameters.
    pub value: String,
    /// For SSM parameter types: the value read from SSM.
    pub resolved_value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputView {
    pub key: String,
    pub value: String,
    pub description: Option<String>,
    pub export_name: Option<String>,
}

/// A stack's or resource's DriftInformation: its status at the last detection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftInformation {
    /// `NOT_CHECKED` until a detection; then StackDriftStatus (`DRIFTED`, `IN_SYNC`,
    /// `UNKNOWN`) or StackResourceDriftStatus (`IN_SYNC`, `MODIFIED`, `DELETED`, ...).
    pub status: String,
    pub last_check: Option<DateTime<Utc>>,
}

impl Default for DriftInformation {
    fn default() -> Self {
        DriftInformation {
            status: "NOT_CHECKED".into(),
            last_check: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyDifferenceView {
    /// `/Name/Child`.
    pub property_path: String,
    pub expected_value: String,
    pub actual_value: String,
    /// `NOT_EQUAL` | `REMOVE` | `ADD`.
    pub difference_type: String,
}

/// One StackResourceDrift.
#[derive(Debug, Clone, PartialEq)]
pub struct StackResourceDriftView {
    pub stack_id: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
    pub resource_type: String,
    /// JSON text.
    pub expected_properties: Option<String>,
    pub actual_properties: Option<String>,
    pub property_differences: Vec<PropertyDifferenceView>,
    pub status: String,
    pub reason: Option<String>,
    pub timestamp: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DriftDetectionStatusView {
    pub stack_id: String,
    pub stack_drift_detection_id: String,
    pub stack_drift_status: String,
    pub detection_status: String,
    pub detection_status_reason: Option<String>,
    pub drifted_stack_resource_count: usize,
    pub timestamp: DateTime<Utc>,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeStackResourceDriftsInput {
    pub stack_name: String,
    pub status_filters: Vec<String>,
    pub next_token: Option<String>,
    pub max_results: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DescribeStackResourceDriftsOutput {
    pub drifts: Vec<StackResourceDriftView>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeTypeInput {
    /// `RESOURCE` | `MODULE` | `HOOK`.
    pub kind: Option<String>,
    pub type_name: Option<String>,
    pub arn: Option<String>,
    pub version_id: Option<String>,
}

/// A registry type (DescribeType's answer, a ListTypes summary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeView {
    pub arn: String,
    pub type_name: String,
    pub default_version_id: String,
    pub description: Option<String>,
    /// The registry schema, JSON text.
    pub schema: String,
    /// `FULLY_MUTABLE` | `IMMUTABLE` | `NON_PROVISIONABLE`.
    pub provisioning_type: String,
    pub source_url: Option<String>,
    pub documentation_url: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ListTypesInput {
    pub visibility: Option<String>,
    pub provisioning_type: Option<String>,
    pub deprecated_status: Option<String>,
    pub kind: Option<String>,
    pub category: Option<String>,
    pub type_name_prefix: Option<String>,
    pub max_results: Option<i64>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListTypesOutput {
    pub types: Vec<TypeView>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeConfigurationIdentifier {
    pub type_arn: Option<String>,
    pub type_configuration_alias: Option<String>,
    pub type_configuration_arn: Option<String>,
    pub kind: Option<String>,
    pub type_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeConfigurationError {
    pub error_code: String,
    pub error_message: String,
    pub identifier: TypeConfigurationIdentifier,
}

/// One DescribeAccountLimits member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountLimit {
    pub name: String,
    pub value: i64,
}

/// One stack as DescribeStacks shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StackView {
    pub stack_id: String,
    pub stack_name: String,
    pub change_set_id: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<ParameterView>,
    pub creation_time: DateTime<Utc>,
    pub last_updated_time: Option<DateTime<Utc>>,
    pub deletion_time: Option<DateTime<Utc>>,
    pub stack_status: StackStatus,
    pub stack_status_reason: Option<String>,
    pub disable_rollback: bool,
    pub notification_arns: Vec<String>,
    pub timeout_in_minutes: Option<i64>,
    pub capabilities: Vec<String>,
    pub outputs: Vec<OutputView>,
    pub tags: Vec<Tag>,
    pub enable_termination_protection: bool,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub retain_except_on_create: bool,
    pub role_arn: Option<String>,
    pub rollback_configuration: Option<RollbackConfiguration>,
    pub drift: DriftInformation,
}

#[derive(Debug, Clone, Default)]
pub struct ListStacksInput {
    /// Validated against the StackStatus enum.
    pub stack_status_filter: Vec<String>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StackSummary {
    pub stack_id: String,
    pub stack_name: String,
    pub template_description: Option<String>,
    pub creation_time: DateTime<Utc>,
    pub last_updated_time: Option<DateTime<Utc>>,
    pub deletion_time: Option<DateTime<Utc>>,
    pub stack_status: StackStatus,
    pub stack_status_reason: Option<String>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub drift: DriftInformation,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListStacksOutput {
    pub stack_summaries: Vec<StackSummary>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeStackEventsInput {
    pub stack_name: String,
    pub next_token: Option<String>,
}

/// One stack event. Stack-level events have the stack as their resource
/// (`AWS::CloudFormation::Stack`, logical id = stack name, physical id = stack ARN).
#[derive(Debug, Clone, PartialEq)]
pub struct StackEvent {
    pub stack_id: String,
    pub event_id: String,
    pub stack_name: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
    pub resource_type: String,
    pub timestamp: DateTime<Utc>,
    pub resource_status: String,
    pub resource_status_reason: Option<String>,
    /// The literal (dynamic references unresolved) properties, as JSON text.
    pub resource_properties: Option<String>,
    pub client_request_token: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DescribeStackEventsOutput {
    /// Newest first, as AWS.
    pub stack_events: Vec<StackEvent>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeStackResourcesInput {
    pub stack_name: Option<String>,
    pub logical_resource_id: Option<String>,
    pub physical_resource_id: Option<String>,
}

/// One resource of a stack (DescribeStackResource(s), ListStackResources).
#[derive(Debug, Clone, PartialEq)]
pub struct StackResourceView {
    pub stack_name: String,
    pub stack_id: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
    pub resource_type: String,
    pub last_updated_timestamp: DateTime<Utc>,
    pub resource_status: String,
    pub resource_status_reason: Option<String>,
    pub description: Option<String>,
    /// The resource's Metadata as JSON text (DescribeStackResource only shows it).
    pub metadata: Option<String>,
    pub drift: DriftInformation,
}

#[derive(Debug, Clone, Default)]
pub struct ListStackResourcesInput {
    pub stack_name: String,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListStackResourcesOutput {
    pub stack_resource_summaries: Vec<StackResourceView>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct GetTemplateInput {
    pub stack_name: Option<String>,
    pub change_set_name: Option<String>,
    /// `Original` | `Processed`.
    pub template_stage: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetTemplateOutput {
    pub template_body: String,
    pub stages_available: Vec<String>,
}

/// A template given by body or URL (ValidateTemplate, GetTemplateSummary).
#[derive(Debug, Clone, Default)]
pub struct TemplateInput {
    pub template_body: Option<String>,
    pub template_url: Option<String>,
    /// GetTemplateSummary only: summarize a live stack's template instead.
    pub stack_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterDeclaration {
    pub parameter_key: String,
    pub default_value: Option<String>,
    pub parameter_type: String,
    pub no_echo: bool,
    pub description: Option<String>,
    pub allowed_values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidateTemplateOutput {
    pub parameters: Vec<ParameterDeclaration>,
    pub description: Option<String>,
    pub capabilities: Vec<String>,
    pub capabilities_reason: Option<String>,
    pub declared_transforms: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceIdentifierSummary {
    pub resource_type: String,
    pub logical_resource_ids: Vec<String>,
    pub resource_identifiers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSummaryOutput {
    pub parameters: Vec<ParameterDeclaration>,
    pub description: Option<String>,
    pub capabilities: Vec<String>,
    pub capabilities_reason: Option<String>,
    pub resource_types: Vec<String>,
    pub version: Option<String>,
    /// Template Metadata as JSON text.
    pub metadata: Option<String>,
    pub declared_transforms: Vec<String>,
    pub resource_identifier_summaries: Vec<ResourceIdentifierSummary>,
}

#[derive(Debug, Clone, Default)]
pub struct CreateChangeSetInput {
    pub stack_name: String,
    pub change_set_name: String,
    pub template_body: Option<String>,
    pub template_url: Option<String>,
    pub use_previous_template: bool,
    pub parameters: Vec<Parameter>,
    pub capabilities: Vec<String>,
    pub notification_arns: Vec<String>,
    pub tags: Option<Vec<Tag>>,
    pub client_token: Option<String>,
    pub description: Option<String>,
    /// `CREATE` | `UPDATE` (default) | `IMPORT`.
    pub change_set_type: Option<String>,
    /// ResourcesToImport, for an IMPORT change set.
    pub resources_to_import: Vec<ResourceToImport>,
    pub include_nested_stacks: bool,
    /// `DO_NOTHING` | `ROLLBACK` | `DELETE`.
    pub on_stack_failure: Option<String>,
    /// The service role the stack operates with once executed (the CDK passes its bootstrap
    /// execution role); stored and shown, not assumed (IAM is not enforced).
    pub role_arn: Option<String>,
}

/// One ResourcesToImport member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceToImport {
    pub resource_type: String,
    pub logical_resource_id: String,
    /// The primary identifier's properties and values (`QueueUrl` → the queue's URL).
    pub resource_identifier: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateChangeSetOutput {
    pub id: String,
    pub stack_id: String,
}

/// Addresses a change set: by ARN alone, or by name within a stack.
#[derive(Debug, Clone, Default)]
pub struct ChangeSetRef {
    pub change_set_name: String,
    pub stack_name: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct DescribeChangeSetInput {
    pub change_set: ChangeSetRef,
    pub next_token: Option<String>,
    /// Show each detail's before and after values (and the resources' contexts).
    pub include_property_values: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ExecuteChangeSetInput {
    pub change_set: ChangeSetRef,
    pub client_request_token: Option<String>,
    pub disable_rollback: Option<bool>,
    pub retain_except_on_create: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceTargetDefinition {
    /// `Properties`, `Metadata`, `Tags`, `DeletionPolicy`, ...
    pub attribute: String,
    pub name: Option<String>,
    /// `Never` | `Conditionally` | `Always`.
    pub requires_recreation: Option<String>,
    /// The property values (DescribeChangeSet's IncludePropertyValues): always recorded, shown
    /// only when asked for. `/Properties/Name`.
    #[serde(default)]
    pub path: Option<String>,
    /// Strings as they are, other values as JSON text.
    #[serde(default)]
    pub before_value: Option<String>,
    #[serde(default)]
    pub after_value: Option<String>,
    /// `Add` | `Remove` | `Modify`.
    #[serde(default)]
    pub attribute_change_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceChangeDetail {
    pub target: ResourceTargetDefinition,
    /// `Static` | `Dynamic`.
    pub evaluation: String,
    /// `ResourceReference` | `ParameterReference` | `ResourceAttribute` | `DirectModification`
    /// | `Automatic`.
    pub change_source: String,
    pub causing_entity: Option<String>,
}

/// One `Changes` member (`Type: Resource`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceChange {
    /// `Add` | `Modify` | `Remove`.
    pub action: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
    pub resource_type: String,
    /// `True` | `False` | `Conditional`; only for Modify.
    pub replacement: Option<String>,
    pub scope: Vec<String>,
    pub details: Vec<ResourceChangeDetail>,
    /// The nested change set made for this `AWS::CloudFormation::Stack` resource (a change set
    /// created with IncludeNestedStacks).
    #[serde(default)]
    pub change_set_id: Option<String>,
    /// The resource's properties before and after, as JSON text `{"Properties": ...}`
    /// (IncludePropertyValues).
    #[serde(default)]
    pub before_context: Option<String>,
    #[serde(default)]
    pub after_context: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangeSetView {
    pub change_set_name: String,
    pub change_set_id: String,
    pub stack_id: String,
    pub stack_name: String,
    pub description: Option<String>,
    pub parameters: Vec<ParameterView>,
    pub creation_time: DateTime<Utc>,
    /// `UNAVAILABLE` | `AVAILABLE` | `EXECUTE_IN_PROGRESS` | `EXECUTE_COMPLETE` |
    /// `EXECUTE_FAILED` | `OBSOLETE`.
    pub execution_status: String,
    /// `CREATE_PENDING` | `CREATE_IN_PROGRESS` | `CREATE_COMPLETE` | `DELETE_COMPLETE` | `FAILED`.
    pub status: String,
    pub status_reason: Option<String>,
    pub notification_arns: Vec<String>,
    pub capabilities: Vec<String>,
    pub tags: Vec<Tag>,
    pub changes: Vec<ResourceChange>,
    pub next_token: Option<String>,
    pub include_nested_stacks: bool,
    pub parent_change_set_id: Option<String>,
    pub root_change_set_id: Option<String>,
    pub on_stack_failure: Option<String>,
}

/// DescribeChangeSetHooks' answer: cumulo runs no hooks (the registry's hook types are not
/// emulated), so a change set's hook list is empty once it is planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSetHooksView {
    pub change_set_id: String,
    pub change_set_name: String,
    pub stack_id: String,
    pub stack_name: String,
    /// `PLANNING` | `PLANNED` | `UNAVAILABLE`.
    pub status: String,
}

#[derive(Debug, Clone, Default)]
pub struct ListChangeSetsInput {
    pub stack_name: String,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangeSetSummary {
    pub stack_id: String,
    pub stack_name: String,
    pub change_set_id: String,
    pub change_set_name: String,
    pub execution_status: String,
    pub status: String,
    pub status_reason: Option<String>,
    pub creation_time: DateTime<Utc>,
    pub description: Option<String>,
    pub include_nested_stacks: bool,
    pub parent_change_set_id: Option<String>,
    pub root_change_set_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListChangeSetsOutput {
    pub summaries: Vec<ChangeSetSummary>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub exporting_stack_id: String,
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListExportsOutput {
    pub exports: Vec<Export>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ListImportsInput {
    pub export_name: String,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListImportsOutput {
    /// Names of the stacks importing the export.
    pub imports: Vec<String>,
    pub next_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct RollbackStackInput {
    pub stack_name: String,
    pub client_request_token: Option<String>,
    pub retain_except_on_create: Option<bool>,
}

#[derive(Debug, Clone, Default)]
pub struct ContinueUpdateRollbackInput {
    pub stack_name: String,
    /// Logical ids, or `NestedStack.LogicalId` paths into nested stacks.
    pub resources_to_skip: Vec<String>,
    pub client_request_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CancelUpdateStackInput {
    pub stack_name: String,
    pub client_request_token: Option<String>,
}
