//! One handed-off stack's Terraform: each imported resource as a flat `aws_*` resource with
//! its `import` block, arguments resolved to literals from the inventory; and the checks that
//! nothing imported or kept refers to what is about to be cleaned up by hand.

use super::fates::Fate;
use super::{Planned, region_alias};
use crate::inventory::model::{Inventory, LiveState, Stack};
use crate::terraform::hcl::{self, Arg, ResourceBlock};
use crate::terraform::ids::{Subject, instances};
use crate::terraform::resolve::{self, Lookup, references};
use crate::terraform::table::{Id, Resource, Shape, To, doc_url, lookup};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) struct Written {
    pub text: String,
    pub imports: Vec<Value>,
}

/// Resolution context of one stack.
struct StackCx<'a> {
    stack: &'a Stack,
    inv: &'a Inventory,
    attributes: BTreeMap<String, Map<String, Value>>,
    conditions: BTreeMap<String, bool>,
    /// The Terraform address of each resource this stack's file imports as exactly one
    /// resource: an attribute the inventory did not record becomes a reference to it.
    addresses: BTreeMap<String, (&'static str, String)>,
}

/// Fn::GetAtt names → the provider's attribute, for the references written when the inventory
/// did not record a value.
const ATTRIBUTES: &[(&str, &str)] = &[
    ("Arn", "arn"),
    ("TopicArn", "arn"),
    ("QueueUrl", "url"),
    ("QueueName", "name"),
    ("TopicName", "name"),
    ("GroupId", "id"),
    ("VpcId", "id"),
    ("SubnetId", "id"),
    ("AllocationId", "allocation_id"),
    ("DNSName", "dns_name"),
    ("CanonicalHostedZoneID", "zone_id"),
    ("LoadBalancerFullName", "arn_suffix"),
    ("TargetGroupFullName", "arn_suffix"),
    ("RoleId", "unique_id"),
    ("NameServers", "name_servers"),
    ("FileSystemId", "id"),
];

impl<'a> StackCx<'a> {
    fn new(
        stack: &'a Stack,
        inv: &'a Inventory,
        template: &Value,
        fates: &BTreeMap<String, (Fate, String)>,
    ) -> Self {
        let addresses = stack
            .resources
            .iter()
            .filter(|r| matches!(fates.get(&r.logical_id), Some((Fate::Import, _))))
            .filter_map(|r| match lookup(&r.resource_type) {
                Some(To::Terraform(row)) if !matches!(row.id, Id::Build(_)) => Some((
                    r.logical_id.clone(),
                    (row.tf, tf_name(&stack.name, &r.logical_id, None)),
                )),
                _ => None,
            })
            .collect();
        let attributes = stack
            .resources
            .iter()
            .map(|r| (r.logical_id.clone(), attributes_of(r)))
            .collect();
        let mut cx = StackCx {
            stack,
            inv,
            attributes,
            conditions: BTreeMap::new(),
            addresses,
        };
        // Conditions may name each other: evaluate until nothing more resolves.
        if let Some(conds) = template.get("Conditions").and_then(Value::as_object) {
            for _ in 0..conds.len() {
                let mut grew = false;
                for (name, expr) in conds {
                    if cx.conditions.contains_key(name) {
                        continue;
                    }
                    if let Ok(v) = resolve::condition(expr, &cx) {
                        cx.conditions.insert(name.clone(), v);
                        grew = true;
                    }
                }
                if !grew {
                    break;
                }
            }
        }
        cx
    }
}

/// A resource's attributes as Fn::GetAtt would name them: the import attributes in
/// PascalCase (`allocation_id` → `AllocationId`) and the scalar members of its Describe
/// answers (`DNSName`, `CanonicalHostedZoneId`, ...).
fn attributes_of(r: &crate::inventory::model::Resource) -> Map<String, Value> {
    let mut out = Map::new();
    if let LiveState::Described { calls } = &r.live {
        for call in calls {
            collect_scalars(&call.output, &mut out, 0);
        }
    }
    for (k, v) in &r.import_attributes {
        let pascal: String = k
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        out.insert(pascal, Value::String(v.clone()));
    }
    out
}

fn collect_scalars(v: &Value, out: &mut Map<String, Value>, depth: usize) {
    match v {
        Value::Object(m) => {
            for (k, item) in m {
                match item {
                    Value::Object(_) if depth < 2 => collect_scalars(item, out, depth + 1),
                    Value::Array(a) if a.len() == 1 && a[0].is_object() && depth < 2 => {
                        collect_scalars(&a[0], out, depth + 1)
                    }
                    Value::Object(_) | Value::Array(_) | Value::Null => {
                        out.entry(k.clone()).or_insert_with(|| item.clone());
                    }
                    scalar => {
                        out.entry(k.clone()).or_insert_with(|| scalar.clone());
                    }
                }
            }
        }
        Value::Array(a) if a.len() == 1 => collect_scalars(&a[0], out, depth),
        _ => {}
    }
}

impl Lookup for StackCx<'_> {
    fn parameter(&self, name: &str) -> Option<Value> {
        let p = self.stack.parameters.iter().find(|p| p.key == name)?;
        // A NoEcho value is masked in the inventory: never write the mask as a value.
        (!p.no_echo)
            .then(|| Value::String(p.resolved_value.clone().unwrap_or_else(|| p.value.clone())))
    }
    fn pseudo(&self, name: &str) -> Option<Value> {
        let partition = self.stack.id.split(':').nth(1).unwrap_or("aws").to_string();
        Some(Value::String(match name {
            "AWS::Region" => self.inv.region.clone(),
            "AWS::AccountId" => self.inv.account.clone(),
            "AWS::StackName" => self.stack.name.clone(),
            "AWS::StackId" => self.stack.id.clone(),
            "AWS::URLSuffix" if partition == "aws-cn" => "amazonaws.com.cn".into(),
            "AWS::URLSuffix" => "amazonaws.com".into(),
            "AWS::Partition" => partition,
            _ => return None,
        }))
    }
    fn physical(&self, logical: &str) -> Option<String> {
        self.stack.resource(logical)?.physical_id.clone()
    }
    fn attribute(&self, logical: &str, attribute: &str) -> Option<Value> {
        let attrs = self.attributes.get(logical)?;
        attrs
            .get(attribute)
            .cloned()
            .or_else(|| {
                attrs
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(attribute))
                    .map(|(_, v)| v.clone())
            })
            .or_else(|| {
                crate::copilot::env_controller_output(self.inv, self.stack, logical, attribute)
                    .map(Value::String)
            })
            .or_else(|| {
                let (tf, name) = self.addresses.get(logical)?;
                let (_, attr) = ATTRIBUTES.iter().find(|(a, _)| *a == attribute)?;
                Some(Value::String(hcl::reference(&format!(
                    "{tf}.{name}.{attr}"
                ))))
            })
    }
    fn export(&self, name: &str) -> Option<Value> {
        self.inv
            .stacks
            .iter()
            .flat_map(|s| &s.outputs)
            .find(|o| o.export_name.as_deref() == Some(name))
            .map(|o| Value::String(o.value.clone()))
    }
    fn condition(&self, name: &str) -> Option<bool> {
        self.conditions.get(name).copied()
    }
}

/// A Terraform name: the stack and the logical id (unique across the one root module).
fn tf_name(stack: &str, logical: &str, suffix: Option<&str>) -> String {
    let mut name: String = format!("{stack}_{logical}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if let Some(s) = suffix {
        name.push('_');
        name.extend(s.chars().map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        }));
    }
    if !hcl::is_identifier(&name) {
        name.insert_str(0, "s_");
    }
    name
}

fn unique(names: &mut BTreeSet<String>, tf: &str, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while !names.insert(format!("{tf}.{candidate}")) {
        candidate = format!("{name}_{n}");
        n += 1;
    }
    candidate
}

fn get_path<'v>(props: &'v Map<String, Value>, path: &str) -> Option<&'v Value> {
    let mut parts = path.split('.');
    let mut cur = props.get(parts.next()?)?;
    for p in parts {
        cur = cur.get(p)?;
    }
    Some(cur)
}

fn snake_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (hcl::snake(k), snake_keys(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(snake_keys).collect()),
        other => other.clone(),
    }
}

fn camel_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let mut c = k.chars();
                    let k = c
                        .next()
                        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
                        .unwrap_or_default();
                    (k, camel_keys(v))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(camel_keys).collect()),
        other => other.clone(),
    }
}

/// A property's value as the argument's shape wants it; `None` when it does not apply.
fn shaped(v: &Value, shape: Shape) -> Option<Arg> {
    Some(match shape {
        Shape::Plain | Shape::Live(_) => Arg::Value(v.clone()),
        Shape::Tags | Shape::NameValue => {
            let (k, val) = if shape == Shape::Tags {
                ("Key", "Value")
            } else {
                ("Name", "Value")
            };
            match v {
                Value::Object(m) => Arg::Value(Value::Object(m.clone())),
                Value::Array(items) => Arg::Value(Value::Object(
                    items
                        .iter()
                        .filter_map(|t| {
                            Some((t.get(k)?.as_str()?.to_string(), t.get(val)?.clone()))
                        })
                        .collect(),
                )),
                _ => return None,
            }
        }
        Shape::Json => Arg::Json(v.clone()),
        Shape::JsonCamel => Arg::Json(camel_keys(v)),
        Shape::Is(text) => Arg::Value(Value::Bool(v.as_str() == Some(text))),
        Shape::Block => Arg::Block(snake_keys(v).as_object()?.clone()),
        Shape::Blocks => Arg::Blocks(
            v.as_array()?
                .iter()
                .filter_map(|i| snake_keys(i).as_object().cloned())
                .collect(),
        ),
        Shape::First(key) => {
            let first = v.as_array()?.first()?;
            Arg::Value(if key.is_empty() {
                first.clone()
            } else {
                first.get(key)?.clone()
            })
        }
    })
}

/// The Terraform of one handed-off stack, or why it cannot be written.
pub(crate) fn terraform(
    p: &Planned,
    inv: &Inventory,
    names: &mut BTreeSet<String>,
) -> Result<Written, Vec<String>> {
    let stack = p.stack;
    let resources = p
        .template
        .get("Resources")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let cx = StackCx::new(stack, inv, &p.template, &p.fates);
    let manual: BTreeSet<&str> = p
        .fates
        .iter()
        .filter(|(_, (f, _))| *f == Fate::ManualCleanup)
        .map(|(l, _)| l.as_str())
        .collect();
    let mut text = format!(
        "# Stack {} ({}), imported by cumulo migrate generate from the inventory taken {}.\n# Values are the deployed ones, resolved from the inventory; review `terraform plan`:\n# it must show imports only.\n\n",
        stack.name, stack.id, inv.taken_at
    );
    let mut imports = Vec::new();
    let mut refusals = Vec::new();
    let resolved_of = |logical: &str| -> (Map<String, Value>, Vec<String>) {
        let raw = resources
            .get(logical)
            .and_then(|d| d.get("Properties"))
            .and_then(Value::as_object);
        let mut ok = Map::new();
        let mut notes = Vec::new();
        for (k, v) in raw.into_iter().flatten() {
            match resolve::resolve(v, &cx) {
                Ok(Some(r)) => {
                    ok.insert(k.clone(), r);
                }
                Ok(None) => {}
                Err(why) => notes.push(format!("{k}: {why}")),
            }
        }
        (ok, notes)
    };
    for r in &stack.resources {
        let Some((Fate::Import, _)) = p.fates.get(&r.logical_id) else {
            continue;
        };
        let Some(To::Terraform(row)) = lookup(&r.resource_type) else {
            continue;
        };
        let raw = resources
            .get(&r.logical_id)
            .and_then(|d| d.get("Properties"))
            .cloned()
            .unwrap_or(json!({}));
        // What the Terraform would hold that a hand cleanup will delete.
        let mut refs = Vec::new();
        references(&raw, &mut refs);
        for x in refs.iter().filter(|x| manual.contains(x.as_str())) {
            let target = stack
                .resource(x)
                .map(|t| t.resource_type.as_str())
                .unwrap_or("");
            if !target.starts_with("Custom::") && target != "AWS::CloudFormation::CustomResource" {
                refusals.push(format!(
                    "stack {} resource {} ({}) would be imported referencing {x} ({target}), which is manual-cleanup",
                    stack.name, r.logical_id, r.resource_type
                ));
            }
        }
        let (props, notes) = resolved_of(&r.logical_id);
        let sibling = |logical: &str| Some(resolved_of(logical).0);
        let none = Map::new();
        let subject = Subject {
            logical_id: &r.logical_id,
            physical_id: r.physical_id.as_deref(),
            props: &props,
            attributes: cx.attributes.get(&r.logical_id).unwrap_or(&none),
            raw: &raw,
            sibling: &sibling,
        };
        let built = match instances(row, &subject) {
            Ok(b) => b,
            Err(why) => {
                refusals.push(format!(
                    "stack {} resource {} ({}): no {} import id: {why}",
                    stack.name, r.logical_id, r.resource_type, row.tf
                ));
                continue;
            }
        };
        let table_args = table_arguments(row, &props, &cx, &r.logical_id);
        // Only what an argument would have carried is worth a note.
        let not_carried: Vec<String> = notes
            .into_iter()
            .filter(|n| {
                let prop = n.split(':').next().unwrap_or_default();
                row.args
                    .iter()
                    .any(|a| a.cfn.split('.').next() == Some(prop))
            })
            .collect();
        if let Some(inst) = built.iter().find(|i| i.id.contains(hcl::REFERENCE)) {
            refusals.push(format!(
                "stack {} resource {} ({}): its import id {} needs an attribute the inventory did not record",
                stack.name,
                r.logical_id,
                r.resource_type,
                inst.id.replace(hcl::REFERENCE, "")
            ));
            continue;
        }
        for inst in built {
            let name = unique(
                names,
                inst.tf,
                tf_name(&stack.name, &r.logical_id, inst.suffix.as_deref()),
            );
            let mut args: Vec<(String, Arg)> = table_args
                .iter()
                .filter(|(k, _)| !inst.args.iter().any(|(b, _)| b == k))
                .cloned()
                .collect();
            args.extend(inst.args.iter().cloned());
            let mut comments = vec![format!(
                "{} ({}), physical id {}; import id format: {}",
                r.logical_id,
                r.resource_type,
                r.physical_id.as_deref().unwrap_or("-"),
                doc_url(inst.tf)
            )];
            comments.extend(not_carried.iter().map(|n| format!("not carried over: {n}")));
            ResourceBlock {
                tf: inst.tf,
                name: &name,
                id: &inst.id,
                comments: &comments,
                args: &args,
                prevent_destroy: row.stateful,
                ignore_changes: if inst.tf == row.tf {
                    row.ignore_changes
                } else {
                    &[]
                },
            }
            .write(&mut text);
            imports.push(json!({
                "stack": stack.name,
                "logical_id": r.logical_id,
                "type": r.resource_type,
                "to": format!("{}.{name}", inst.tf),
                "id": inst.id,
            }));
        }
    }
    if refusals.is_empty() {
        Ok(Written { text, imports })
    } else {
        Err(refusals)
    }
}

/// The table's arguments of a resource, from its resolved properties (or, for a `Live`
/// argument, the live attribute).
fn table_arguments(
    row: &Resource,
    props: &Map<String, Value>,
    cx: &StackCx,
    logical: &str,
) -> Vec<(String, Arg)> {
    let mut args = Vec::new();
    for a in row.args {
        if args.iter().any(|(k, _): &(String, Arg)| k == a.tf) {
            continue;
        }
        let live = match a.shape {
            Shape::Live(attr) => cx.attribute(logical, attr),
            _ => None,
        };
        let value = live.as_ref().or_else(|| get_path(props, a.cfn));
        if let Some(arg) = value.and_then(|v| shaped(v, a.shape)) {
            args.push((a.tf.to_string(), arg));
        }
    }
    args
}

/// A kept stack must not depend on what a handed-off stack will have cleaned up by hand:
/// an Fn::ImportValue of an export whose value is such a resource's.
pub(crate) fn kept_references(p: &Planned, planned: &[Planned], _inv: &Inventory) -> Vec<String> {
    let mut imported = Vec::new();
    imported_exports(&p.template, &mut imported);
    let mut out = Vec::new();
    for q in planned.iter().filter(|q| q.handed_off) {
        let Some(outputs) = q.template.get("Outputs").and_then(Value::as_object) else {
            continue;
        };
        for (key, o) in outputs {
            let Some(export) = q
                .stack
                .outputs
                .iter()
                .find(|so| &so.key == key)
                .and_then(|so| so.export_name.clone())
            else {
                continue;
            };
            if !imported.contains(&export) {
                continue;
            }
            let mut refs = Vec::new();
            if let Some(v) = o.get("Value") {
                references(v, &mut refs);
            }
            for x in refs {
                if let Some((Fate::ManualCleanup, _)) = q.fates.get(&x) {
                    out.push(format!(
                        "kept stack {} imports {export} from {}, the value of {x}, which is manual-cleanup",
                        p.stack.name, q.stack.name
                    ));
                }
            }
        }
    }
    out
}

/// The export names a template imports where the name is a literal or a resolvable Sub of
/// parameters is not needed: literal names and `!Sub` texts without variables.
pub(crate) fn imported_exports(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, item) in m {
                if k == "Fn::ImportValue" {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        Value::Object(sub) => {
                            if let Some(Value::String(s)) = sub.get("Fn::Sub") {
                                out.push(s.clone());
                            }
                        }
                        _ => {}
                    }
                } else {
                    imported_exports(item, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|i| imported_exports(i, out)),
        _ => {}
    }
}

/// What handlers made out of band and the report says to import (`wanted`: certificate ARNs
/// and `<zone id>/<name>/<type>[/<set id>]`): certificates, in their own region's provider,
/// and DNS records, less what a stack resource already imports.
pub(crate) fn out_of_band(
    inv: &Inventory,
    wanted: &BTreeSet<&str>,
    stack_imports: &[Value],
    names: &mut BTreeSet<String>,
) -> (String, Vec<Value>) {
    let mut text = String::from(
        "# Objects custom-resource handlers created outside CloudFormation, found by the inventory.\n# No stack owns them: deleting the stacks never touches them once the handles are retained.\n\n",
    );
    let mut imports = Vec::new();
    let taken: BTreeSet<String> = stack_imports
        .iter()
        .filter_map(|i| i.get("id")?.as_str().map(String::from))
        .collect();
    let mut write = |tf: &'static str,
                     name: String,
                     id: String,
                     args: Vec<(String, Arg)>,
                     why: String,
                     text: &mut String| {
        if taken.contains(&id) || imports.iter().any(|i: &Value| i["id"] == id.as_str()) {
            return;
        }
        let name = unique(names, tf, name);
        ResourceBlock {
            tf,
            name: &name,
            id: &id,
            comments: &[format!("{why}; import id format: {}", doc_url(tf))],
            args: &args,
            prevent_destroy: true,
            ignore_changes: &[],
        }
        .write(text);
        imports.push(json!({"stack": null, "logical_id": null, "type": "out-of-band", "to": format!("{tf}.{name}"), "id": id}));
    };
    for (i, c) in inv.out_of_band.certificates.iter().enumerate() {
        if !wanted.contains(c.arn.as_str()) {
            continue;
        }
        let mut args = vec![
            (
                "domain_name".to_string(),
                Arg::Value(c.domain_name.clone().into()),
            ),
            ("validation_method".to_string(), Arg::Value("DNS".into())),
        ];
        let sans: Vec<&String> = c
            .subject_alternative_names
            .iter()
            .filter(|s| **s != c.domain_name)
            .collect();
        if !sans.is_empty() {
            args.push(("subject_alternative_names".into(), Arg::Value(json!(sans))));
        }
        if c.region != inv.region {
            args.insert(
                0,
                (
                    "provider".into(),
                    Arg::Expr(format!("aws.{}", region_alias(&c.region))),
                ),
            );
        }
        write(
            "aws_acm_certificate",
            format!("certificate_{i}"),
            c.arn.clone(),
            args,
            format!(
                "certificate {} ({}), found by {}",
                c.domain_name, c.region, c.found_by
            ),
            &mut text,
        );
    }
    for z in &inv.out_of_band.hosted_zones {
        for (i, rec) in z.records.iter().enumerate() {
            let verdict_id = match &rec.set_identifier {
                Some(set) => format!("{}/{}/{}/{set}", z.id, rec.name, rec.record_type),
                None => format!("{}/{}/{}", z.id, rec.name, rec.record_type),
            };
            if !wanted.contains(verdict_id.as_str()) {
                continue;
            }
            let name = rec.name.trim_end_matches('.').to_string();
            let mut id = format!("{}_{}_{}", z.id, name, rec.record_type);
            let mut args = vec![
                ("zone_id".to_string(), Arg::Value(z.id.clone().into())),
                ("name".to_string(), Arg::Value(name.clone().into())),
                (
                    "type".to_string(),
                    Arg::Value(rec.record_type.clone().into()),
                ),
            ];
            if let Some(set) = &rec.set_identifier {
                id.push('_');
                id.push_str(set);
                args.push(("set_identifier".into(), Arg::Value(set.clone().into())));
            }
            if let Some(ttl) = rec.ttl {
                args.push(("ttl".into(), Arg::Value(ttl.into())));
            }
            if !rec.values.is_empty() {
                args.push(("records".into(), Arg::Value(json!(rec.values))));
            }
            if let Some(a) = &rec.alias_target {
                let block = json!({"name": a.dns_name, "zone_id": a.hosted_zone_id, "evaluate_target_health": a.evaluate_target_health});
                args.push((
                    "alias".into(),
                    Arg::Block(block.as_object().cloned().unwrap_or_default()),
                ));
            }
            write(
                "aws_route53_record",
                format!("record_{}_{i}", z.id),
                id,
                args,
                format!(
                    "{} {} in zone {} ({})",
                    rec.record_type, rec.name, z.name, z.id
                ),
                &mut text,
            );
        }
    }
    (text, imports)
}
