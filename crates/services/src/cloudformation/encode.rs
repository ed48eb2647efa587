//! The engine's views as CloudFormation's XML: members in the model's order, lists as
//! `<member>` elements, timestamps in ISO 8601 with milliseconds as AWS writes them.

use cumulo_engine::*;
use cumulo_wire::xml::XmlWriter;

/// `2024-05-01T12:00:00.123Z`.
pub fn timestamp(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// `<name><member>v</member>...</name>`, omitted when empty (as AWS omits absent lists).
pub fn strings(w: &mut XmlWriter, name: &'static str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    w.open(name, None);
    for i in items {
        w.elem("member", i);
    }
    w.close();
}

fn tags(w: &mut XmlWriter, tags: &[Tag]) {
    if tags.is_empty() {
        return;
    }
    w.open("Tags", None);
    for t in tags {
        w.open("member", None);
        w.elem("Key", &t.key).elem("Value", &t.value);
        w.close();
    }
    w.close();
}

fn parameters(w: &mut XmlWriter, params: &[ParameterView]) {
    if params.is_empty() {
        return;
    }
    w.open("Parameters", None);
    for p in params {
        w.open("member", None);
        w.elem("ParameterKey", &p.key)
            .elem("ParameterValue", &p.value)
            .opt("ResolvedValue", p.resolved_value.as_deref());
        w.close();
    }
    w.close();
}

pub fn stack(w: &mut XmlWriter, s: &StackView) {
    w.open("member", None);
    w.elem("StackId", &s.stack_id)
        .elem("StackName", &s.stack_name)
        .opt("ChangeSetId", s.change_set_id.as_deref())
        .opt("Description", s.description.as_deref());
    parameters(w, &s.parameters);
    w.elem("CreationTime", &timestamp(&s.creation_time))
        .opt(
            "DeletionTime",
            s.deletion_time.as_ref().map(timestamp).as_deref(),
        )
        .opt(
            "LastUpdatedTime",
            s.last_updated_time.as_ref().map(timestamp).as_deref(),
        );
    // AWS always sends the rollback configuration, empty when none was given.
    w.open("RollbackConfiguration", None);
    if let Some(rc) = &s.rollback_configuration {
        if !rc.rollback_triggers.is_empty() {
            w.open("RollbackTriggers", None);
            for (arn, kind) in &rc.rollback_triggers {
                w.open("member", None)
                    .elem("Arn", arn)
                    .elem("Type", kind)
                    .close();
            }
            w.close();
        }
        if let Some(m) = rc.monitoring_time_in_minutes {
            w.elem("MonitoringTimeInMinutes", &m.to_string());
        }
    }
    w.close();
    w.elem("StackStatus", s.stack_status.as_str())
        .opt("StackStatusReason", s.stack_status_reason.as_deref())
        .elem("DisableRollback", bool_text(s.disable_rollback));
    if !s.notification_arns.is_empty() {
        strings(w, "NotificationARNs", &s.notification_arns);
    } else {
        w.open("NotificationARNs", None).close();
    }
    if let Some(t) = s.timeout_in_minutes {
        w.elem("TimeoutInMinutes", &t.to_string());
    }
    strings(w, "Capabilities", &s.capabilities);
    if !s.outputs.is_empty() {
        w.open("Outputs", None);
        for o in &s.outputs {
            w.open("member", None);
            w.elem("OutputKey", &o.key)
                .elem("OutputValue", &o.value)
                .opt("Description", o.description.as_deref())
                .opt("ExportName", o.export_name.as_deref());
            w.close();
        }
        w.close();
    }
    w.opt("RoleARN", s.role_arn.as_deref());
    tags(w, &s.tags);
    w.elem(
        "EnableTerminationProtection",
        bool_text(s.enable_termination_protection),
    )
    .opt("ParentId", s.parent_id.as_deref())
    .opt("RootId", s.root_id.as_deref());
    drift_information(w, "StackDriftStatus", &s.drift);
    w.elem("RetainExceptOnCreate", bool_text(s.retain_except_on_create));
    w.close();
}

pub fn stack_summary(w: &mut XmlWriter, s: &StackSummary) {
    w.open("member", None);
    w.elem("StackId", &s.stack_id)
        .elem("StackName", &s.stack_name)
        .opt("TemplateDescription", s.template_description.as_deref())
        .elem("CreationTime", &timestamp(&s.creation_time))
        .opt(
            "LastUpdatedTime",
            s.last_updated_time.as_ref().map(timestamp).as_deref(),
        )
        .opt(
            "DeletionTime",
            s.deletion_time.as_ref().map(timestamp).as_deref(),
        )
        .elem("StackStatus", s.stack_status.as_str())
        .opt("StackStatusReason", s.stack_status_reason.as_deref())
        .opt("ParentId", s.parent_id.as_deref())
        .opt("RootId", s.root_id.as_deref());
    drift_information(w, "StackDriftStatus", &s.drift);
    w.close();
}

/// `<DriftInformation><{status_member}>..</..><LastCheckTimestamp>..</..></DriftInformation>`.
fn drift_information(w: &mut XmlWriter, status_member: &'static str, d: &DriftInformation) {
    w.open("DriftInformation", None)
        .elem(status_member, &d.status)
        .opt(
            "LastCheckTimestamp",
            d.last_check.as_ref().map(timestamp).as_deref(),
        )
        .close();
}

pub fn resource_drift(w: &mut XmlWriter, d: &StackResourceDriftView) {
    w.elem("StackId", &d.stack_id)
        .elem("LogicalResourceId", &d.logical_resource_id)
        .opt("PhysicalResourceId", d.physical_resource_id.as_deref())
        .elem("ResourceType", &d.resource_type)
        .opt("ExpectedProperties", d.expected_properties.as_deref())
        .opt("ActualProperties", d.actual_properties.as_deref());
    w.open("PropertyDifferences", None);
    for p in &d.property_differences {
        w.open("member", None)
            .elem("PropertyPath", &p.property_path)
            .elem("ExpectedValue", &p.expected_value)
            .elem("ActualValue", &p.actual_value)
            .elem("DifferenceType", &p.difference_type)
            .close();
    }
    w.close();
    w.elem("StackResourceDriftStatus", &d.status)
        .elem("Timestamp", &timestamp(&d.timestamp))
        .opt("DriftStatusReason", d.reason.as_deref());
}

pub fn event(w: &mut XmlWriter, e: &StackEvent) {
    w.open("member", None);
    w.elem("StackId", &e.stack_id)
        .elem("EventId", &e.event_id)
        .elem("StackName", &e.stack_name)
        .elem("LogicalResourceId", &e.logical_resource_id)
        .opt("PhysicalResourceId", e.physical_resource_id.as_deref())
        .elem("ResourceType", &e.resource_type)
        .elem("Timestamp", &timestamp(&e.timestamp))
        .elem("ResourceStatus", &e.resource_status)
        .opt("ResourceStatusReason", e.resource_status_reason.as_deref())
        .opt("ResourceProperties", e.resource_properties.as_deref())
        .elem("ClientRequestToken", &e.client_request_token);
    w.close();
}

/// One resource. `shape` picks the member set: `StackResource` (DescribeStackResources),
/// `StackResourceDetail` (DescribeStackResource) or `StackResourceSummary` (ListStackResources).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ResourceShape {
    Resource,
    Detail,
    Summary,
}

pub fn resource(w: &mut XmlWriter, r: &StackResourceView, shape: ResourceShape) {
    if shape != ResourceShape::Summary {
        w.elem("StackName", &r.stack_name)
            .elem("StackId", &r.stack_id);
    }
    w.elem("LogicalResourceId", &r.logical_resource_id)
        .opt("PhysicalResourceId", r.physical_resource_id.as_deref())
        .elem("ResourceType", &r.resource_type);
    let time_member = if shape == ResourceShape::Resource {
        "Timestamp"
    } else {
        "LastUpdatedTimestamp"
    };
    w.elem(time_member, &timestamp(&r.last_updated_timestamp))
        .elem("ResourceStatus", &r.resource_status)
        .opt("ResourceStatusReason", r.resource_status_reason.as_deref());
    if shape != ResourceShape::Summary {
        w.opt("Description", r.description.as_deref());
    }
    if shape == ResourceShape::Detail {
        w.opt("Metadata", r.metadata.as_deref());
    }
    drift_information(w, "StackResourceDriftStatus", &r.drift);
}

/// GetTemplateSummary's parameters. The element is there even when empty, as AWS sends it:
/// `aws cloudformation deploy` reads `summary["Parameters"]` unconditionally.
pub fn parameter_declarations(w: &mut XmlWriter, params: &[ParameterDeclaration]) {
    w.open("Parameters", None);
    for p in params {
        w.open("member", None);
        w.elem("ParameterKey", &p.parameter_key)
            .opt("DefaultValue", p.default_value.as_deref())
            .elem("ParameterType", &p.parameter_type)
            .elem("NoEcho", bool_text(p.no_echo))
            .opt("Description", p.description.as_deref());
        w.open("ParameterConstraints", None);
        strings(w, "AllowedValues", &p.allowed_values);
        w.close();
        w.close();
    }
    w.close();
}

/// ValidateTemplate's parameters are `TemplateParameter`s: no type, no constraints.
pub fn template_parameters(w: &mut XmlWriter, params: &[ParameterDeclaration]) {
    if params.is_empty() {
        return;
    }
    w.open("Parameters", None);
    for p in params {
        w.open("member", None);
        w.elem("ParameterKey", &p.parameter_key)
            .opt("DefaultValue", p.default_value.as_deref())
            .elem("NoEcho", bool_text(p.no_echo))
            .opt("Description", p.description.as_deref());
        w.close();
    }
    w.close();
}

pub fn change(w: &mut XmlWriter, c: &ResourceChange) {
    w.open("member", None);
    w.elem("Type", "Resource");
    w.open("ResourceChange", None);
    w.elem("Action", &c.action)
        .elem("LogicalResourceId", &c.logical_resource_id)
        .opt("PhysicalResourceId", c.physical_resource_id.as_deref())
        .elem("ResourceType", &c.resource_type)
        .opt("Replacement", c.replacement.as_deref())
        .opt("ChangeSetId", c.change_set_id.as_deref());
    strings(w, "Scope", &c.scope);
    w.open("Details", None);
    for d in &c.details {
        w.open("member", None);
        w.open("Target", None);
        w.elem("Attribute", &d.target.attribute)
            .opt("Name", d.target.name.as_deref())
            .opt(
                "RequiresRecreation",
                d.target.requires_recreation.as_deref(),
            )
            .opt("Path", d.target.path.as_deref())
            .opt("BeforeValue", d.target.before_value.as_deref())
            .opt("AfterValue", d.target.after_value.as_deref())
            .opt(
                "AttributeChangeType",
                d.target.attribute_change_type.as_deref(),
            );
        w.close();
        w.elem("Evaluation", &d.evaluation)
            .elem("ChangeSource", &d.change_source)
            .opt("CausingEntity", d.causing_entity.as_deref());
        w.close();
    }
    w.close();
    w.opt("BeforeContext", c.before_context.as_deref())
        .opt("AfterContext", c.after_context.as_deref());
    w.close();
    w.close();
}

pub fn change_set(w: &mut XmlWriter, c: &ChangeSetView) {
    w.elem("ChangeSetName", &c.change_set_name)
        .elem("ChangeSetId", &c.change_set_id)
        .elem("StackId", &c.stack_id)
        .elem("StackName", &c.stack_name)
        .opt("Description", c.description.as_deref());
    parameters(w, &c.parameters);
    w.elem("CreationTime", &timestamp(&c.creation_time))
        .elem("ExecutionStatus", &c.execution_status)
        .elem("Status", &c.status)
        .opt("StatusReason", c.status_reason.as_deref());
    strings(w, "NotificationARNs", &c.notification_arns);
    w.open("RollbackConfiguration", None).close();
    strings(w, "Capabilities", &c.capabilities);
    tags(w, &c.tags);
    w.open("Changes", None);
    for ch in &c.changes {
        change(w, ch);
    }
    w.close();
    w.opt("NextToken", c.next_token.as_deref())
        .elem("IncludeNestedStacks", bool_text(c.include_nested_stacks))
        .opt("ParentChangeSetId", c.parent_change_set_id.as_deref())
        .opt("RootChangeSetId", c.root_change_set_id.as_deref())
        .opt("OnStackFailure", c.on_stack_failure.as_deref());
}

pub fn change_set_summary(w: &mut XmlWriter, c: &ChangeSetSummary) {
    w.open("member", None);
    w.elem("StackId", &c.stack_id)
        .elem("StackName", &c.stack_name)
        .elem("ChangeSetId", &c.change_set_id)
        .elem("ChangeSetName", &c.change_set_name)
        .elem("ExecutionStatus", &c.execution_status)
        .elem("Status", &c.status)
        .opt("StatusReason", c.status_reason.as_deref())
        .elem("CreationTime", &timestamp(&c.creation_time))
        .opt("Description", c.description.as_deref())
        .elem("IncludeNestedStacks", bool_text(c.include_nested_stacks))
        .opt("ParentChangeSetId", c.parent_change_set_id.as_deref())
        .opt("RootChangeSetId", c.root_change_set_id.as_deref());
    w.close();
}
