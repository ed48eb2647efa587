//! `cumulo migrate rehearse`: the runbook replayed on a local twin of the account before anyone
//! touches the account. The CLI builds the twin (an in-process cumulo over a temporary
//! directory) and drives it; this module holds what is decided without I/O: the order stacks
//! are deployed in, which recorded runtimes AWS no longer lets anyone create, where nested
//! stacks' templates must be found, snapshots of the objects no stack owns and what went
//! missing between two of them, the proof that every import id still resolves, and
//! REHEARSAL.md.

use crate::inventory::model::{CopilotKind, Inventory, LiveState, Stack, code_text};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Root stacks in the order a twin is built: a stack exporting a value before every stack
/// importing it, and a stack whose output another takes as a parameter value before that one;
/// among the rest stacks no tool made, then Copilot's app before its environments before
/// their workloads (the order Copilot deploys them), then by name. Nested stacks come with
/// their parents.
pub fn deploy_order(inv: &Inventory) -> Vec<&Stack> {
    let by_id: BTreeMap<&str, &Stack> = inv.stacks.iter().map(|s| (s.id.as_str(), s)).collect();
    let root_of = |s: &Stack| -> String {
        let mut cur = s;
        while let Some(p) = cur.parent_id.as_deref().and_then(|p| by_id.get(p)) {
            cur = p;
        }
        cur.name.clone()
    };
    let mut exporter: BTreeMap<&str, String> = BTreeMap::new();
    for s in &inv.stacks {
        for o in &s.outputs {
            if let Some(e) = &o.export_name {
                exporter.insert(e.as_str(), root_of(s));
            }
        }
    }
    // root -> the roots whose exports it imports.
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &inv.stacks {
        let me = root_of(s);
        for name in imported_names(s) {
            if let Some(from) = exporter.get(name.as_str()).filter(|f| **f != me) {
                needs.entry(me.clone()).or_default().insert(from.clone());
            }
        }
    }
    // A parameter whose value is another stack's output was most likely given that output
    // (Copilot passes the app stack's role ARNs to environments this way).
    let roots: Vec<&Stack> = inv
        .stacks
        .iter()
        .filter(|s| s.parent_id.is_none())
        .collect();
    for s in &roots {
        for p in &s.parameters {
            for other in roots.iter().filter(|o| o.name != s.name) {
                if other
                    .outputs
                    .iter()
                    .any(|o| !o.value.is_empty() && o.value == p.value)
                {
                    needs
                        .entry(s.name.clone())
                        .or_default()
                        .insert(other.name.clone());
                }
            }
        }
    }
    // Copilot's own order: an environment after its app, a workload after its environment.
    for s in &roots {
        let Some(me) = &s.copilot else { continue };
        for other in roots.iter().filter(|o| o.name != s.name) {
            let Some(them) = &other.copilot else { continue };
            let before = them.app == me.app
                && match (me.kind, them.kind) {
                    (CopilotKind::Env, CopilotKind::App) => true,
                    (CopilotKind::Workload | CopilotKind::Pipeline, CopilotKind::App) => true,
                    (CopilotKind::Workload, CopilotKind::Env) => them.env == me.env,
                    _ => false,
                };
            if before {
                needs
                    .entry(s.name.clone())
                    .or_default()
                    .insert(other.name.clone());
            }
        }
    }
    // Stacks no tool names (shared networks, say) first, then Copilot's app, environments and
    // workloads.
    let rank = |s: &Stack| match s.copilot.as_ref().map(|c| c.kind) {
        None => 0,
        Some(CopilotKind::App) => 1,
        Some(CopilotKind::Env) => 2,
        Some(CopilotKind::Workload) | Some(CopilotKind::Pipeline) => 3,
    };
    let mut left: Vec<&Stack> = inv
        .stacks
        .iter()
        .filter(|s| s.parent_id.is_none())
        .collect();
    left.sort_by_key(|s| (rank(s), s.name.clone()));
    let mut order = Vec::new();
    while !left.is_empty() {
        // Next: the first stack that needs no stack still left (a cycle takes the first).
        let pick = left
            .iter()
            .position(|s| {
                needs
                    .get(&s.name)
                    .is_none_or(|n| !left.iter().any(|q| n.contains(&q.name)))
            })
            .unwrap_or(0);
        order.push(left.remove(pick));
    }
    order
}

/// The export names a stack's `Fn::ImportValue`s name: literally, or by a string `Fn::Sub` of
/// the stack's parameters and name (`!Sub "${App}-${Env}-VpcId"`, as Copilot's users write).
fn imported_names(stack: &Stack) -> Vec<String> {
    let Ok(doc) = cumulo_template::parse_template(&stack.template) else {
        return Vec::new();
    };
    let mut vars: BTreeMap<String, &str> = stack
        .parameters
        .iter()
        .map(|p| (p.key.clone(), p.value.as_str()))
        .collect();
    vars.insert("AWS::StackName".into(), &stack.name);
    let mut out = Vec::new();
    walk_imports(&doc.value.to_json(), &vars, &mut out);
    out
}

fn walk_imports(v: &Value, vars: &BTreeMap<String, &str>, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            match m.get("Fn::ImportValue") {
                Some(Value::String(name)) => out.push(name.clone()),
                Some(Value::Object(f)) => {
                    if let Some(Value::String(sub)) = f.get("Fn::Sub") {
                        out.extend(substitute(sub, vars));
                    }
                }
                _ => {}
            }
            m.values().for_each(|x| walk_imports(x, vars, out));
        }
        Value::Array(a) => a.iter().for_each(|x| walk_imports(x, vars, out)),
        _ => {}
    }
}

/// A `Fn::Sub` string with every `${Name}` known, or None.
fn substitute(text: &str, vars: &BTreeMap<String, &str>) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}')? + at;
        out.push_str(vars.get(&rest[at + 2..end])?);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Runtimes AWS Lambda no longer lets a function be created with (AWS's runtime deprecation
/// table, "block function create", as of December 2026): the twin creates them anyway, since
/// the rehearsal must run the code the account runs, and says so.
const REFUSED_ON_CREATE: &[&str] = &[
    "nodejs",
    "nodejs4.3",
    "nodejs4.3-edge",
    "nodejs6.10",
    "nodejs8.10",
    "nodejs10.x",
    "nodejs12.x",
    "nodejs14.x",
    "nodejs16.x",
    "nodejs18.x",
    "nodejs20.x",
    "python2.7",
    "python3.6",
    "python3.7",
    "python3.8",
    "python3.9",
    "java8",
    "dotnetcore1.0",
    "dotnetcore2.0",
    "dotnetcore2.1",
    "dotnetcore3.1",
    "dotnet5.0",
    "dotnet6",
    "dotnet7",
    "go1.x",
    "ruby2.5",
    "ruby2.7",
    "ruby3.2",
    "provided",
];

/// A template or parameter value with the account's ids the twin could not reproduce (hosted
/// zone ids, EC2 ids, load balancer ARNs: `(account id, twin id)` pairs) replaced by the
/// twin's, as the twin deploys it. The same mapping applied to the account's retain patch gives
/// the patch the twin must be handed: retain patches only insert policy lines, so mapping and
/// patching commute, and the result must equal the patch of the twin's deployed template byte
/// for byte.
pub fn map_ids(text: &str, pairs: &[(String, String)]) -> String {
    pairs.iter().fold(text.to_string(), |t, (account, twin)| {
        t.replace(account, twin)
    })
}

/// The SHA-256 (hex) `generate` records for a retain patch.
pub fn patch_sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Whether AWS refuses to create a function with this runtime today.
pub fn refused_on_create(runtime: &str) -> bool {
    REFUSED_ON_CREATE.contains(&runtime)
}

/// A package's `CodeSha256` as Lambda reports it (the SHA-256 of the zip, base64), to check
/// fetched code against what the inventory recorded.
pub fn code_sha256(package: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digest = Sha256::digest(package);
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A function whose code the template takes from S3 by literal bucket and key: where the
/// twin must hold the package, and where the account's package can be read.
#[derive(Debug, Clone, PartialEq)]
pub struct S3Code {
    pub stack: String,
    pub logical_id: String,
    pub bucket: String,
    pub key: String,
    /// GetFunction's Code.Location as the inventory recorded it (presigned, short-lived).
    pub location: Option<String>,
    /// GetFunction's Configuration.CodeSha256.
    pub sha256: Option<String>,
    pub runtime: Option<String>,
}

/// Every Lambda function of the inventory's templates whose Code is an S3Bucket and S3Key the
/// template names (literally, or by `Fn::Sub` on the account and region: CDK's assets), with what the inventory's GetFunction read says of its package.
pub fn s3_code(inv: &Inventory) -> Vec<S3Code> {
    let mut out = Vec::new();
    for s in &inv.stacks {
        let Ok(doc) = cumulo_template::parse_template(&s.template) else {
            continue;
        };
        let t = doc.value.to_json();
        for (logical, res) in t["Resources"].as_object().into_iter().flatten() {
            if res["Type"] != "AWS::Lambda::Function" {
                continue;
            }
            let code = &res["Properties"]["Code"];
            let resolve = |v: &Value| code_text(v, &inv.account, &inv.region);
            let (Some(bucket), Some(key)) = (resolve(&code["S3Bucket"]), resolve(&code["S3Key"]))
            else {
                continue;
            };
            // A function its condition left out was never created: nothing to place.
            if s.resource(logical).is_none_or(|r| r.physical_id.is_none()) {
                continue;
            }
            let read = s.resource(logical).and_then(|r| match &r.live {
                LiveState::Described { calls } => calls
                    .iter()
                    .find(|c| c.operation == "GetFunction")
                    .map(|c| c.output.clone()),
                _ => None,
            });
            let text = |v: &Value| v.as_str().map(String::from);
            out.push(S3Code {
                stack: s.name.clone(),
                logical_id: logical.clone(),
                bucket,
                key,
                location: read.as_ref().and_then(|o| text(&o["Code"]["Location"])),
                sha256: read
                    .as_ref()
                    .and_then(|o| text(&o["Configuration"]["CodeSha256"])),
                runtime: read
                    .as_ref()
                    .and_then(|o| text(&o["Configuration"]["Runtime"])),
            });
        }
    }
    out
}

/// The bucket and key an S3 template URL names, in the URL forms CloudFormation accepts
/// (path style with or without a region, virtual-hosted style).
pub fn s3_location(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let (host, path) = rest.split_once('/')?;
    let path = path.split('?').next().unwrap_or(path);
    let host = host.split(':').next().unwrap_or(host);
    // Path style on S3's hosts, and on a local endpoint (`cumulo serve`, LocalStack).
    let local = host == "localhost" || host.starts_with("127.") || host.ends_with(".localhost");
    if host.starts_with("s3.") || host.starts_with("s3-") || local {
        let (bucket, key) = path.split_once('/')?;
        return (!bucket.is_empty() && !key.is_empty()).then(|| (bucket.into(), key.into()));
    }
    let (bucket, _) = host.split_once(".s3")?;
    (!bucket.is_empty() && !path.is_empty()).then(|| (bucket.into(), path.into()))
}

/// Where a nested stack's recorded template goes: `(nested stack, bucket, key)`, or the
/// nested stack's name and why it cannot be placed.
pub type Placement<'a> = Result<(&'a Stack, String, String), (String, String)>;

/// Where each nested stack's recorded template must be put for its parent's TemplateURL to
/// find it on the twin.
pub fn nested_templates(inv: &Inventory) -> Vec<Placement<'_>> {
    let mut out = Vec::new();
    for child in inv.stacks.iter().filter(|s| s.parent_id.is_some()) {
        let Some(parent) = inv
            .stacks
            .iter()
            .find(|p| Some(p.id.as_str()) == child.parent_id.as_deref())
        else {
            out.push(Err((
                child.name.clone(),
                "its parent is not in the inventory".into(),
            )));
            continue;
        };
        let logical = parent
            .resources
            .iter()
            .find(|r| r.physical_id.as_deref() == Some(child.id.as_str()))
            .map(|r| r.logical_id.clone());
        let url = logical.as_ref().and_then(|l| {
            let doc = cumulo_template::parse_template(&parent.template).ok()?;
            let t = doc.value.to_json();
            t["Resources"][l.as_str()]["Properties"]["TemplateURL"]
                .as_str()
                .map(String::from)
        });
        match url.as_deref().and_then(s3_location) {
            Some((bucket, key)) => out.push(Ok((child, bucket, key))),
            None => out.push(Err((
                child.name.clone(),
                format!(
                    "{}'s TemplateURL for it is not a literal S3 URL",
                    parent.name
                ),
            ))),
        }
    }
    out
}

/// Objects that outlive any stack, keyed `<kind> <id>` (`bucket b`, `object s3://b/k`,
/// `zone Z1`, `record <zone>_<name>_<type>[_<set>]` in Terraform's import id format,
/// `certificate <arn>`), each with a description for the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct World {
    pub objects: BTreeMap<String, String>,
}

impl World {
    pub fn add(&mut self, key: String, description: String) {
        self.objects.insert(key, description);
    }

    /// What `self` held that `after` does not, as (key, description).
    pub fn gone_in(&self, after: &World) -> Vec<(String, String)> {
        self.objects
            .iter()
            .filter(|(k, _)| !after.objects.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// A record's key in a [`World`]: the Terraform AWS provider's `aws_route53_record` import id
/// (`ZONEID_name_TYPE[_SETID]`, the name without its trailing dot).
pub fn record_key(zone_id: &str, name: &str, record_type: &str, set: Option<&str>) -> String {
    let mut key = format!(
        "record {zone_id}_{}_{record_type}",
        name.trim_end_matches('.')
    );
    if let Some(s) = set {
        key.push('_');
        key.push_str(s);
    }
    key
}

/// Whether a read says the resource is still there: described, and not what a service keeps
/// answering for after a delete (a KMS key pending deletion, an INACTIVE ECS cluster or
/// service).
pub fn still_there(state: &LiveState) -> bool {
    match state {
        LiveState::Described { calls } => !calls.iter().any(|c| {
            c.output["KeyMetadata"]["KeyState"] == "PendingDeletion"
                || ["clusters", "services"].iter().any(|k| {
                    c.output[*k]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|x| x["status"] == "INACTIVE"))
                })
        }),
        _ => false,
    }
}

/// How an import id resolved: `Ok(how)` or `Err(why not)`.
pub type Resolved = Result<String, String>;

/// Resolves a Terraform import id through the twin's API for the types whose stack physical
/// id alone has no Describe (routes, associations, rules, attachments, EFS, log resource
/// policies): `None` when no resolver is known, else `Ok(how)` or `Err(why not)`.
pub fn resolve_import(
    client: &dyn crate::inventory::reads::ReadClient,
    tf: &str,
    id: &str,
) -> Option<Resolved> {
    use crate::inventory::reads::ReadRequest;
    let read = |service: &str, operation: &str, input: Value| -> Result<Value, String> {
        let request = ReadRequest::new(service, operation, input).map_err(|e| e.to_string())?;
        client
            .call(&request)
            .map_err(|e| format!("{operation} answers {}", e.code))
    };
    let list = |v: &Value| -> Vec<Value> {
        match v {
            Value::Array(a) => a.clone(),
            Value::Null => Vec::new(),
            other => vec![other.clone()],
        }
    };
    let found = |ok: bool, what: String| {
        if ok {
            Ok(format!("{what} answers with it"))
        } else {
            Err(format!("{what} does not list it"))
        }
    };
    let table = |rtb: &str| -> Result<Value, String> {
        let out = read(
            "ec2",
            "DescribeRouteTables",
            serde_json::json!({"RouteTableId.1": rtb}),
        )?;
        list(&out["routeTableSet"])
            .into_iter()
            .next()
            .ok_or_else(|| format!("DescribeRouteTables does not list {rtb}"))
    };
    Some(match tf {
        "aws_route" => {
            let (rtb, cidr) = id.split_once('_')?;
            table(rtb).and_then(|t| {
                let ok = list(&t["routeSet"]).iter().any(|r| {
                    r["destinationCidrBlock"] == cidr || r["destinationIpv6CidrBlock"] == cidr
                });
                found(ok, format!("DescribeRouteTables ({rtb}, route {cidr})"))
            })
        }
        "aws_route_table_association" => {
            let (subnet, rtb) = id.split_once('/')?;
            table(rtb).and_then(|t| {
                let ok = list(&t["associationSet"])
                    .iter()
                    .any(|a| a["subnetId"] == subnet);
                found(
                    ok,
                    format!("DescribeRouteTables ({rtb}, association of {subnet})"),
                )
            })
        }
        "aws_internet_gateway_attachment" => {
            let (igw, vpc) = id.split_once(':')?;
            read(
                "ec2",
                "DescribeInternetGateways",
                serde_json::json!({"InternetGatewayId.1": igw}),
            )
            .and_then(|out| {
                let ok = list(&out["internetGatewaySet"])
                    .iter()
                    .any(|g| list(&g["attachmentSet"]).iter().any(|a| a["vpcId"] == vpc));
                found(
                    ok,
                    format!("DescribeInternetGateways ({igw} attached to {vpc})"),
                )
            })
        }
        "aws_security_group_rule" => {
            // sg_ingress_tcp_443_443_10.0.0.0/8, `all` for every protocol, `self` for the group.
            let parts: Vec<&str> = id.splitn(6, '_').collect();
            let [sg, direction, protocol, low, high, source] = parts.as_slice() else {
                return None;
            };
            let source = if *source == "self" { *sg } else { *source };
            read(
                "ec2",
                "DescribeSecurityGroups",
                serde_json::json!({"GroupId.1": sg}),
            )
            .and_then(|out| {
                let group = list(&out["securityGroupInfo"]).into_iter().next();
                let key = if *direction == "ingress" {
                    "ipPermissions"
                } else {
                    "ipPermissionsEgress"
                };
                let ok = group.is_some_and(|g| {
                    list(&g[key]).iter().any(|p| {
                        let proto = p["ipProtocol"].as_str().unwrap_or_default();
                        let ports = *protocol == "all"
                            || (p["fromPort"].as_str() == Some(*low)
                                && p["toPort"].as_str() == Some(*high));
                        let proto_ok = (*protocol == "all" && proto == "-1") || proto == *protocol;
                        let from = list(&p["ipRanges"]).iter().any(|r| r["cidrIp"] == source)
                            || list(&p["ipv6Ranges"])
                                .iter()
                                .any(|r| r["cidrIpv6"] == source)
                            || list(&p["groups"]).iter().any(|r| r["groupId"] == source);
                        proto_ok && ports && from
                    })
                });
                found(
                    ok,
                    format!("DescribeSecurityGroups ({sg} {direction} rule)"),
                )
            })
        }
        "aws_route53_record" => {
            let (zone, name, rtype, set) = record_id_parts(id)?;
            read(
                "route53",
                "ListResourceRecordSets",
                serde_json::json!({"Id": zone, "name": name, "type": rtype}),
            )
            .and_then(|out| {
                let ok = list(&out["ResourceRecordSets"]).iter().any(|r| {
                    r["Name"].as_str().map(|n| n.trim_end_matches('.'))
                        == Some(name.trim_end_matches('.'))
                        && r["Type"] == rtype
                        && set.is_none_or(|s| r["SetIdentifier"] == s)
                });
                found(
                    ok,
                    format!("ListResourceRecordSets ({zone} {name} {rtype})"),
                )
            })
        }
        "aws_iam_role_policy" => {
            let (role, policy) = id.split_once(':')?;
            read(
                "iam",
                "GetRolePolicy",
                serde_json::json!({"RoleName": role, "PolicyName": policy}),
            )
            .and_then(|out| {
                found(
                    out["PolicyName"] == policy,
                    format!("GetRolePolicy ({role} {policy})"),
                )
            })
        }
        "aws_efs_file_system" => read(
            "elasticfilesystem",
            "DescribeFileSystems",
            serde_json::json!({"FileSystemId": id}),
        )
        .and_then(|out| {
            let ok = list(&out["FileSystems"])
                .iter()
                .any(|f| f["FileSystemId"] == id);
            found(ok, format!("DescribeFileSystems ({id})"))
        }),
        "aws_efs_mount_target" => read(
            "elasticfilesystem",
            "DescribeMountTargets",
            serde_json::json!({"MountTargetId": id}),
        )
        .and_then(|out| {
            let ok = list(&out["MountTargets"])
                .iter()
                .any(|m| m["MountTargetId"] == id);
            found(ok, format!("DescribeMountTargets ({id})"))
        }),
        "aws_cloudwatch_log_resource_policy" => {
            read("logs", "DescribeResourcePolicies", serde_json::json!({})).and_then(|out| {
                let ok = list(&out["resourcePolicies"])
                    .iter()
                    .any(|p| p["policyName"] == id);
                found(ok, format!("DescribeResourcePolicies ({id})"))
            })
        }
        // `<namespace>/<resource id>/<dimension>`; the resource id holds slashes.
        "aws_appautoscaling_target" => {
            let (namespace, rest) = id.split_once('/')?;
            let (resource, dimension) = rest.rsplit_once('/')?;
            read(
                "application-autoscaling",
                "DescribeScalableTargets",
                serde_json::json!({"ServiceNamespace": namespace, "ResourceIds": [resource],
                    "ScalableDimension": dimension}),
            )
            .and_then(|out| {
                let ok = list(&out["ScalableTargets"])
                    .iter()
                    .any(|t| t["ResourceId"] == resource && t["ScalableDimension"] == dimension);
                found(
                    ok,
                    format!("DescribeScalableTargets ({resource} {dimension})"),
                )
            })
        }
        // `<namespace>/<resource id>/<dimension>/<policy name>`.
        "aws_appautoscaling_policy" => {
            let (namespace, rest) = id.split_once('/')?;
            let (rest, name) = rest.rsplit_once('/')?;
            let (resource, dimension) = rest.rsplit_once('/')?;
            read(
                "application-autoscaling",
                "DescribeScalingPolicies",
                serde_json::json!({"ServiceNamespace": namespace, "ResourceId": resource,
                    "ScalableDimension": dimension, "PolicyNames": [name]}),
            )
            .and_then(|out| {
                let ok = list(&out["ScalingPolicies"])
                    .iter()
                    .any(|p| p["PolicyName"] == name && p["ResourceId"] == resource);
                found(ok, format!("DescribeScalingPolicies ({resource} {name})"))
            })
        }
        // The topic's ARN: the policy is an attribute of the topic.
        "aws_sns_topic_policy" => read(
            "sns",
            "GetTopicAttributes",
            serde_json::json!({"TopicArn": id}),
        )
        .and_then(|out| {
            let ok = attribute(&out["Attributes"], "Policy").is_some();
            found(ok, format!("GetTopicAttributes ({id} Policy)"))
        }),
        // The queue's URL: the policy is the queue's Policy attribute.
        "aws_sqs_queue_policy" => read(
            "sqs",
            "GetQueueAttributes",
            serde_json::json!({"QueueUrl": id, "AttributeNames": ["Policy"]}),
        )
        .and_then(|out| {
            let ok = attribute(&out["Attributes"], "Policy").is_some();
            found(ok, format!("GetQueueAttributes ({id} Policy)"))
        }),
        "aws_cloudwatch_metric_alarm" => read(
            "monitoring",
            "DescribeAlarms",
            serde_json::json!({"AlarmNames.member.1": id}),
        )
        .and_then(|out| {
            let ok = list(&out["MetricAlarms"])
                .iter()
                .any(|a| a["AlarmName"] == id);
            found(ok, format!("DescribeAlarms ({id})"))
        }),
        // `<function>[:<qualifier>]/<statement id>`: a statement of the function's policy.
        "aws_lambda_permission" => {
            let (function, sid) = id.split_once('/')?;
            let mut input = serde_json::json!({"FunctionName": function});
            if let Some((name, qualifier)) = function.split_once(':') {
                input = serde_json::json!({"FunctionName": name, "Qualifier": qualifier});
            }
            read("lambda", "GetPolicy", input).and_then(|out| {
                let policy: Value = out["Policy"]
                    .as_str()
                    .and_then(|p| serde_json::from_str(p).ok())
                    .unwrap_or_default();
                let ok = list(&policy["Statement"]).iter().any(|s| s["Sid"] == sid);
                found(ok, format!("GetPolicy ({function} statement {sid})"))
            })
        }
        _ => return None,
    })
}

/// An attribute of a `GetQueueAttributes`/`GetTopicAttributes` answer: a JSON map, or the
/// query protocol's `entry` list of key/value pairs.
fn attribute<'a>(attributes: &'a Value, name: &str) -> Option<&'a Value> {
    if let Some(v) = attributes.get(name) {
        return Some(v);
    }
    let entries = match attributes.get("entry") {
        Some(Value::Array(a)) => a.iter().collect::<Vec<_>>(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    entries
        .into_iter()
        .find(|e| e["key"] == name)
        .map(|e| &e["value"])
}

/// The zone, name, type and set identifier of an `aws_route53_record` import id
/// (`ZONEID_name_TYPE[_SETID]`).
fn record_id_parts(id: &str) -> Option<(&str, &str, &str, Option<&str>)> {
    let (zone, rest) = id.split_once('_')?;
    let (name, last) = rest.rsplit_once('_')?;
    if last.chars().all(|c| c.is_ascii_uppercase()) {
        return Some((zone, name, last, None));
    }
    let (name, rtype) = name.rsplit_once('_')?;
    Some((zone, name, rtype, Some(last)))
}

/// What an out-of-band import names, the same on the account and on the twin although their
/// ids differ: a certificate by its domain; a record by its zone's name, its name (an ACM
/// validation label `_<hex>` made generic, each certificate having its own) and type.
pub fn out_of_band_signature(inv: &Inventory, to: &str, id: &str) -> Option<String> {
    let kind = to.split('.').next().unwrap_or_default();
    match kind {
        "aws_acm_certificate" => inv
            .out_of_band
            .certificates
            .iter()
            .find(|c| c.arn == id)
            .map(|c| format!("certificate {}", c.domain_name)),
        "aws_route53_record" => {
            let (zone_id, name, rtype, _) = record_id_parts(id)?;
            let zone = inv
                .out_of_band
                .hosted_zones
                .iter()
                .find(|z| z.id == zone_id)?;
            let generic: Vec<String> = name
                .split('.')
                .map(|label| {
                    let hex = label.strip_prefix('_').unwrap_or_default();
                    if hex.len() >= 16 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                        "_*".to_string()
                    } else {
                        label.to_string()
                    }
                })
                .collect();
            Some(format!(
                "record {} {} {rtype}",
                zone.name,
                generic.join(".")
            ))
        }
        _ => None,
    }
}

/// One import of the plan, checked on the twin after teardown.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportCheck {
    /// The Terraform address (`aws_vpc.web_Vpc`): the same in the account's plan and the twin's.
    pub to: String,
    /// The import id in the account's manifest.
    pub account_id: String,
    /// The twin's import id for the same address.
    pub twin_id: String,
    pub holds: bool,
    /// How it was checked, or why it does not hold.
    pub how: String,
}

/// The two plans the import proof compares: the account's (what the user will run) and the
/// twin's (the same stacks deployed again, with the twin's ids).
pub struct Plans<'a> {
    /// The account's manifest (`generate` on the account's inventory).
    pub account: &'a Value,
    pub account_inventory: &'a Inventory,
    /// `(account name, twin name)` of each nested stack (their names are generated).
    pub nested_names: &'a [(String, String)],
    /// `(account id, twin id)` the twin's deploys mapped ([`map_ids`]): an address naming one
    /// (Copilot's alias record group's logical id carries its zone's id) names the twin's.
    pub id_map: &'a [(String, String)],
    pub twin: &'a Value,
    pub twin_inventory: &'a Inventory,
}

/// Checks every import of the account's manifest against the twin after teardown: the twin's
/// manifest must plan the same addresses; a stack resource's import holds when its service
/// still describes it (`describe(type, physical id)` on the twin) or, for a type no Describe
/// reads by physical id, when its twin import id resolves (`resolve`); an out-of-band
/// object's when the twin's `after` world still holds it.
pub fn check_imports(
    plans: &Plans,
    after: &World,
    describe: &mut dyn FnMut(&str, &str) -> LiveState,
    resolve: &mut dyn FnMut(&str, &str) -> Option<Resolved>,
) -> Vec<ImportCheck> {
    let Plans {
        account,
        account_inventory,
        nested_names,
        id_map,
        twin,
        twin_inventory,
    } = *plans;
    let list = |m: &Value| -> Vec<Value> { m["imports"].as_array().cloned().unwrap_or_default() };
    let twin_imports = list(twin);
    let mut out = Vec::new();
    for i in list(account) {
        let to = i["to"].as_str().unwrap_or_default().to_string();
        let account_id = i["id"].as_str().unwrap_or_default().to_string();
        let mut check = ImportCheck {
            to: to.clone(),
            account_id,
            twin_id: String::new(),
            holds: false,
            how: String::new(),
        };
        // Out-of-band objects' addresses carry the account's ids: match them by what they name.
        let by_signature = || {
            let want = out_of_band_signature(account_inventory, &to, &check.account_id)?;
            twin_imports.iter().find(|t| {
                t["type"] == "out-of-band"
                    && out_of_band_signature(
                        twin_inventory,
                        t["to"].as_str().unwrap_or_default(),
                        t["id"].as_str().unwrap_or_default(),
                    )
                    .as_deref()
                        == Some(want.as_str())
            })
        };
        // A nested stack's name is generated: its addresses carry the twin's name there.
        let twin_to = nested_names
            .iter()
            .fold(map_ids(&to, id_map), |acc, (a, t)| {
                acc.replace(a.as_str(), t)
            });
        let same_address = twin_imports.iter().find(|t| t["to"] == twin_to.as_str());
        let Some(t) = same_address.or_else(by_signature) else {
            check.how =
                "the twin's plan has no such import: the twin differs from the account".into();
            out.push(check);
            continue;
        };
        check.twin_id = t["id"].as_str().unwrap_or_default().to_string();
        let twin_to = t["to"].as_str().unwrap_or_default();
        let kind = twin_to.split('.').next().unwrap_or_default();
        if t["type"] == "out-of-band" {
            let key = match kind {
                "aws_acm_certificate" => format!("certificate {}", check.twin_id),
                "aws_route53_record" => format!("record {}", check.twin_id),
                other => format!("{other} {}", check.twin_id),
            };
            check.holds = after.objects.contains_key(&key);
            check.how = if check.holds {
                "still listed by its service".into()
            } else {
                "gone from its service".into()
            };
            out.push(check);
            continue;
        }
        let stack = t["stack"].as_str().unwrap_or_default();
        let logical = t["logical_id"].as_str().unwrap_or_default();
        let resource = twin_inventory
            .stack(stack)
            .and_then(|s| s.resource(logical));
        let Some((rtype, physical)) = resource.and_then(|r| {
            r.physical_id
                .as_deref()
                .map(|p| (r.resource_type.as_str(), p))
        }) else {
            check.how = format!("{stack}/{logical} has no physical id on the twin");
            out.push(check);
            continue;
        };
        match describe(rtype, physical) {
            LiveState::Described { calls }
                if !still_there(&LiveState::Described {
                    calls: calls.clone(),
                }) =>
            {
                check.how =
                    format!("destroyed: {physical} is deleted (pending deletion or INACTIVE)");
            }
            LiveState::Described { calls } => {
                check.holds = true;
                check.how = format!(
                    "{} answers for {physical}",
                    calls
                        .first()
                        .map(|c| c.operation.as_str())
                        .unwrap_or("a read")
                );
            }
            LiveState::Gone {
                operation,
                error_code,
                ..
            } => check.how = format!("gone: {operation} answers {error_code} for {physical}"),
            LiveState::Failed {
                operation,
                error_code,
                message,
            } => {
                check.how = format!(
                    "not proven: {operation} failed with {error_code} {}",
                    message.unwrap_or_default()
                )
            }
            LiveState::NotRead { reason } => match resolve(kind, &check.twin_id) {
                Some(Ok(how)) => {
                    check.holds = true;
                    check.how = how;
                }
                Some(Err(why)) => check.how = format!("gone: {why}"),
                None => check.how = format!("not proven: {reason}"),
            },
        }
        out.push(check);
    }
    out
}

/// What one rehearsal did and found, for the terminal and REHEARSAL.md.
#[derive(Debug, Default)]
pub struct Rehearsal {
    pub account: String,
    pub region: String,
    pub taken_at: String,
    /// What the twin could not reproduce or did differently from AWS (code not held,
    /// runtimes AWS refuses, masked NoEcho values, seeded objects).
    pub notes: Vec<String>,
    /// The root stacks deployed on each twin, in order.
    pub deployed: Vec<String>,
    /// Per patched stack: what the gate said and whether the change set ran.
    pub patched: Vec<String>,
    /// Per stack deleted on the patched twin: its final status.
    pub teardown: Vec<String>,
    pub imports: Vec<ImportCheck>,
    /// Requests sent to custom-resource handlers on the patched twin after it was built.
    pub handler_requests: Vec<String>,
    /// Out-of-band objects gone on the patched twin.
    pub gone: Vec<(String, String)>,
    pub careless: Careless,
    /// Why the rehearsal does not pass (empty: it passes).
    pub failures: Vec<String>,
}

/// The plain `DeleteStack` of every handed-off stack, on a second twin, without patches.
#[derive(Debug, Default)]
pub struct Careless {
    /// Per stack deleted: its final status and reason.
    pub deleted: Vec<String>,
    /// Stack resources their service no longer knows after the delete.
    pub destroyed: Vec<String>,
    /// Stack resources still there (retained by their own policy, or their delete failed).
    pub survived: Vec<String>,
    /// Requests sent to custom-resource handlers by the deletes (`Delete` ones destroy).
    pub handler_requests: Vec<String>,
    /// Per delete, the resources another stack still standing lost during it: a Delete
    /// handler updating that stack (Copilot's env-controller cascade).
    pub cascades: Vec<String>,
    /// Out-of-band objects gone.
    pub gone: Vec<(String, String)>,
}

fn bullets(out: &mut String, items: &[String], none: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "- {none}");
    }
    for i in items {
        let _ = writeln!(out, "- {i}");
    }
}

/// REHEARSAL.md.
pub fn markdown(r: &Rehearsal) -> String {
    let mut out = String::new();
    let verdict = if r.failures.is_empty() {
        "PASSES"
    } else {
        "FAILS"
    };
    let _ = writeln!(out, "# Rehearsal on a local twin: the plan {verdict}\n");
    let _ = writeln!(
        out,
        "Account `{}`, region `{}`, inventory taken {}. Two fresh twins were built from the inventory \
         (each stack from its recorded template and parameters): on the first the runbook's \
         CloudFormation steps ran (retain patches through gated change sets, then teardown); on the \
         second a plain `DeleteStack` of every handed-off stack, as a careless user would run it.\n",
        r.account, r.region, r.taken_at
    );
    if !r.failures.is_empty() {
        let _ = writeln!(out, "## Failures\n");
        bullets(&mut out, &r.failures, "none");
        out.push('\n');
    }
    let _ = writeln!(out, "## The twin\n");
    let _ = writeln!(
        out,
        "Stacks deployed, in order: {}.\n",
        r.deployed.join(", ")
    );
    bullets(
        &mut out,
        &r.notes,
        "nothing to note: the twin is the inventory",
    );
    let _ = writeln!(out, "\n## Retain patches through the gate\n");
    bullets(&mut out, &r.patched, "no stack is handed off");
    let _ = writeln!(out, "\n## Teardown\n");
    bullets(&mut out, &r.teardown, "nothing deleted");
    let _ = writeln!(out, "\n## Proof\n");
    let held = r.imports.iter().filter(|i| i.holds).count();
    let _ = writeln!(
        out,
        "Import ids resolving through the twin's API after teardown: {held} of {}.\n",
        r.imports.len()
    );
    let _ = writeln!(
        out,
        "| Terraform address | account import id | twin import id | holds | how |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for i in &r.imports {
        let _ = writeln!(
            out,
            "| `{}` | `{}` | `{}` | {} | {} |",
            i.to,
            i.account_id,
            i.twin_id,
            if i.holds { "yes" } else { "**no**" },
            i.how.replace('|', "\\|")
        );
    }
    let _ = writeln!(
        out,
        "\nCustom-resource handler requests sent during the patches and teardown (none may be a Delete):\n"
    );
    bullets(&mut out, &r.handler_requests, "none");
    let _ = writeln!(out, "\nOut-of-band objects gone (none may be):\n");
    let gone: Vec<String> = r.gone.iter().map(|(_, d)| d.clone()).collect();
    bullets(&mut out, &gone, "none");
    let c = &r.careless;
    let _ = writeln!(out, "\n## What a plain DeleteStack would destroy\n");
    bullets(&mut out, &c.deleted, "no stack deleted");
    let _ = writeln!(out, "\nStack resources destroyed:\n");
    bullets(&mut out, &c.destroyed, "none");
    let _ = writeln!(out, "\nStack resources that survived:\n");
    bullets(&mut out, &c.survived, "none");
    let _ = writeln!(
        out,
        "\nCustom-resource handler requests the deletes sent:\n"
    );
    bullets(&mut out, &c.handler_requests, "none");
    let _ = writeln!(
        out,
        "\nResources a stack still standing lost during another's delete (a Delete handler updating it):\n"
    );
    bullets(&mut out, &c.cascades, "none");
    let _ = writeln!(out, "\nOut-of-band objects destroyed:\n");
    let gone: Vec<String> = c.gone.iter().map(|(_, d)| d.clone()).collect();
    bullets(&mut out, &gone, "none");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::model::ReadCall;
    use serde_json::json;

    fn inventory(stacks: Vec<Value>) -> Inventory {
        serde_json::from_value(json!({
            "format_version": 1, "account": "1", "region": "us-east-1", "taken_at": "t",
            "taken_by": "test", "selection": {"kind": "stacks", "names": []},
            "stacks": stacks, "content_sha256": ""}))
        .unwrap()
    }

    fn stack(name: &str, template: &str, extra: Value) -> Value {
        let mut s = json!({"name": name, "id": format!("arn:s/{name}"), "status": "CREATE_COMPLETE",
                           "template": template});
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        s
    }

    #[test]
    fn exporters_come_before_importers_and_copilot_apps_before_workloads() {
        let inv = inventory(vec![
            stack(
                "a-web",
                "Resources: {}\n",
                json!({"copilot": {"kind": "workload", "app": "a", "env": "test"}}),
            ),
            stack(
                "b-roles",
                "Resources: {}\n",
                json!({"outputs": [{"key": "Role", "value": "arn:aws:iam::1:role/dns"}],
                       "copilot": {"kind": "workload", "app": "b", "env": "x"}}),
            ),
            stack(
                "consumer",
                "Resources:\n  Q: {Type: AWS::SQS::Queue, Properties: {QueueName: !ImportValue shared-name}}\n",
                json!({}),
            ),
            stack(
                "a-test",
                "Resources: {}\n",
                json!({"copilot": {"kind": "env", "app": "a", "env": "test"},
                       "parameters": [{"key": "DNSRole", "value": "arn:aws:iam::1:role/dns"}]}),
            ),
            stack(
                "producer",
                "Resources: {}\n",
                json!({"outputs": [{"key": "N", "value": "x", "export_name": "shared-name"}]}),
            ),
            stack(
                "child",
                "Resources: {}\n",
                json!({"parent_id": "arn:s/producer"}),
            ),
        ]);
        let names: Vec<&str> = deploy_order(&inv).iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["producer", "consumer", "b-roles", "a-test", "a-web"]
        );
    }

    #[test]
    fn an_import_named_by_a_sub_of_parameters_orders_its_exporter_first() {
        let inv = inventory(vec![
            stack(
                "aa-user",
                "Resources:\n  G: {Type: AWS::EC2::SecurityGroup, Properties: {VpcId: {\"Fn::ImportValue\": !Sub \"${App}-${Env}-VpcId\"}}}\n",
                json!({"parameters": [{"key": "App", "value": "my"}, {"key": "Env", "value": "test"}]}),
            ),
            stack(
                "zz-env",
                "Resources: {}\n",
                json!({"outputs": [{"key": "V", "value": "vpc-1", "export_name": "my-test-VpcId"}]}),
            ),
        ]);
        let names: Vec<&str> = deploy_order(&inv).iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["zz-env", "aa-user"]);
    }

    #[test]
    fn nodejs20_is_refused_on_create_and_nodejs22_is_not() {
        assert!(refused_on_create("nodejs20.x"));
        assert!(refused_on_create("python3.8"));
        assert!(!refused_on_create("nodejs22.x"));
        assert!(!refused_on_create("python3.13"));
    }

    #[test]
    fn code_sha256_is_lambdas_base64_digest() {
        // printf 'abc' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            code_sha256(b"abc"),
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        assert_eq!(code_sha256(b"").len(), 44);
    }

    #[test]
    fn functions_with_literal_s3_code_and_their_recorded_package() {
        let template = "Resources:\n  F: {Type: AWS::Lambda::Function, Properties: {Code: {S3Bucket: art, S3Key: f.zip}}}\n  G: {Type: AWS::Lambda::Function, Properties: {Code: {ZipFile: x}}}\n";
        let inv = inventory(vec![stack(
            "s",
            template,
            json!({"resources": [{"logical_id": "F", "resource_type": "AWS::Lambda::Function",
                "physical_id": "f", "status": "CREATE_COMPLETE", "live": {"state": "described", "calls": [
                    {"service": "lambda", "operation": "GetFunction", "input": {},
                     "output": {"Code": {"Location": "http://x/code"},
                                "Configuration": {"CodeSha256": "abc=", "Runtime": "nodejs20.x"}}}]}}]}),
        )]);
        assert_eq!(
            s3_code(&inv),
            [S3Code {
                stack: "s".into(),
                logical_id: "F".into(),
                bucket: "art".into(),
                key: "f.zip".into(),
                location: Some("http://x/code".into()),
                sha256: Some("abc=".into()),
                runtime: Some("nodejs20.x".into()),
            }]
        );
    }

    #[test]
    fn out_of_band_objects_are_matched_by_what_they_name() {
        let mut inv = inventory(vec![]);
        inv.out_of_band = serde_json::from_value(json!({
            "certificates": [{"arn": "arn:c1", "region": "us-east-1", "domain_name": "test.app.example.com",
                              "status": "ISSUED", "found_by": "tags"}],
            "hosted_zones": [{"id": "ZA", "name": "app.example.com."}]}))
        .unwrap();
        let sig = |to: &str, id: &str| out_of_band_signature(&inv, to, id);
        assert_eq!(
            sig("aws_acm_certificate.cert_0", "arn:c1").as_deref(),
            Some("certificate test.app.example.com")
        );
        assert_eq!(
            sig(
                "aws_route53_record.record_ZA_2",
                "ZA__7450508bb68d77970c7d8d38dd097d0a.test.app.example.com_CNAME"
            )
            .as_deref(),
            Some("record app.example.com. _*.test.app.example.com CNAME")
        );
        assert_eq!(
            sig("aws_route53_record.r", "ZA_www.app.example.com_A_blue").as_deref(),
            Some("record app.example.com. www.app.example.com A")
        );
        assert_eq!(sig("aws_route53_record.r", "ZB_x_A"), None);
    }

    struct Fake(Value);

    impl crate::inventory::reads::ReadClient for Fake {
        fn call(
            &self,
            _: &crate::inventory::reads::ReadRequest,
        ) -> Result<Value, crate::inventory::reads::CallError> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn import_ids_without_a_describe_resolve_through_their_parents_reads() {
        let tables = Fake(
            json!({"routeTableSet": [{"routeSet": [{"destinationCidrBlock": "0.0.0.0/0"}],
            "associationSet": {"subnetId": "subnet-1"}}]}),
        );
        assert!(matches!(
            resolve_import(&tables, "aws_route", "rtb-1_0.0.0.0/0"),
            Some(Ok(_))
        ));
        assert!(matches!(
            resolve_import(&tables, "aws_route", "rtb-1_10.0.0.0/8"),
            Some(Err(_))
        ));
        assert!(matches!(
            resolve_import(&tables, "aws_route_table_association", "subnet-1/rtb-1"),
            Some(Ok(_))
        ));
        let groups = Fake(json!({"securityGroupInfo": [{"ipPermissions": [
            {"ipProtocol": "-1", "groups": [{"groupId": "sg-1"}]},
            {"ipProtocol": "tcp", "fromPort": "443", "toPort": "443", "ipRanges": [{"cidrIp": "10.0.0.0/8"}]}]}]}));
        for id in [
            "sg-1_ingress_all_0_65536_self",
            "sg-1_ingress_tcp_443_443_10.0.0.0/8",
        ] {
            assert!(
                matches!(
                    resolve_import(&groups, "aws_security_group_rule", id),
                    Some(Ok(_))
                ),
                "{id}"
            );
        }
        assert!(matches!(
            resolve_import(
                &groups,
                "aws_security_group_rule",
                "sg-1_egress_tcp_443_443_10.0.0.0/8"
            ),
            Some(Err(_))
        ));
        assert!(resolve_import(&groups, "aws_made_up", "x").is_none());
        let records =
            Fake(json!({"ResourceRecordSets": [{"Name": "a.example.org.", "Type": "A"}]}));
        assert!(matches!(
            resolve_import(&records, "aws_route53_record", "Z1_a.example.org_A"),
            Some(Ok(_))
        ));
        assert!(matches!(
            resolve_import(&records, "aws_route53_record", "Z1_b.example.org_A"),
            Some(Err(_))
        ));
        assert_eq!(
            record_id_parts("Z1_a_b.x_A_blue"),
            Some(("Z1", "a_b.x", "A", Some("blue")))
        );
    }

    #[test]
    fn scaling_alarms_permissions_and_resource_policies_resolve_through_their_reads() {
        let resource = "service/c/web";
        let dim = "ecs:service:DesiredCount";
        let targets =
            Fake(json!({"ScalableTargets": [{"ResourceId": resource, "ScalableDimension": dim}]}));
        let ok = |client: &Fake, tf: &str, id: &str| {
            matches!(resolve_import(client, tf, id), Some(Ok(_)))
        };
        assert!(ok(
            &targets,
            "aws_appautoscaling_target",
            &format!("ecs/{resource}/{dim}")
        ));
        assert!(!ok(
            &Fake(json!({"ScalableTargets": []})),
            "aws_appautoscaling_target",
            &format!("ecs/{resource}/{dim}")
        ));
        let policies =
            Fake(json!({"ScalingPolicies": [{"PolicyName": "cpu", "ResourceId": resource}]}));
        assert!(ok(
            &policies,
            "aws_appautoscaling_policy",
            &format!("ecs/{resource}/{dim}/cpu")
        ));
        assert!(!ok(
            &policies,
            "aws_appautoscaling_policy",
            &format!("ecs/{resource}/{dim}/mem")
        ));
        let alarms = Fake(json!({"MetricAlarms": {"AlarmName": "a"}}));
        assert!(ok(&alarms, "aws_cloudwatch_metric_alarm", "a"));
        assert!(!ok(&alarms, "aws_cloudwatch_metric_alarm", "b"));
        let policy = Fake(json!({"Policy": "{\"Statement\": [{\"Sid\": \"s1\"}]}"}));
        assert!(ok(&policy, "aws_lambda_permission", "fn/s1"));
        assert!(!ok(&policy, "aws_lambda_permission", "fn:live/s2"));
        // JSON (SQS) and the query protocol's entries (SNS).
        assert!(ok(
            &Fake(json!({"Attributes": {"Policy": "{}"}})),
            "aws_sqs_queue_policy",
            "q"
        ));
        assert!(!ok(
            &Fake(json!({"Attributes": {}})),
            "aws_sqs_queue_policy",
            "q"
        ));
        let entries = json!({"Attributes": {"entry": [{"key": "Owner", "value": "1"},
            {"key": "Policy", "value": "{}"}]}});
        assert!(ok(&Fake(entries), "aws_sns_topic_policy", "arn:t"));
        let one = json!({"Attributes": {"entry": {"key": "Owner", "value": "1"}}});
        assert!(!ok(&Fake(one), "aws_sns_topic_policy", "arn:t"));
    }

    #[test]
    fn mapping_ids_commutes_with_the_retain_patch() {
        let template = "Resources:\n  AliasZACCOUNT:\n    Type: AWS::Route53::RecordSetGroup\n    Properties: {HostedZoneId: ZACCOUNT}\n  Rule:\n    Type: AWS::ElasticLoadBalancingV2::ListenerRule\n    Properties: {ListenerArn: arn:listener/a, SecurityGroups: [sg-a]}\n";
        let pairs = vec![
            ("ZACCOUNT".to_string(), "ZTWIN".to_string()),
            ("arn:listener/a".to_string(), "arn:listener/b".to_string()),
            ("sg-a".to_string(), "sg-b".to_string()),
        ];
        let patch = |t: &str| cumulo_template::retain::retain_patch(t).unwrap().text;
        let twin = map_ids(template, &pairs);
        assert!(twin.contains("AliasZTWIN") && !twin.contains("sg-a"));
        assert_eq!(map_ids(&patch(template), &pairs), patch(&twin));
        assert_eq!(
            patch_sha256(&map_ids(&patch(template), &pairs)),
            patch_sha256(&patch(&twin))
        );
    }

    #[test]
    fn template_urls_in_every_s3_form() {
        for url in [
            "https://s3.amazonaws.com/b/k/t.yml",
            "https://s3.us-west-2.amazonaws.com/b/k/t.yml",
            "https://b.s3.amazonaws.com/k/t.yml",
            "https://b.s3.eu-west-1.amazonaws.com/k/t.yml",
            "http://s3.localhost.localstack.cloud:4566/b/k/t.yml",
            "http://127.0.0.1:4566/b/k/t.yml",
        ] {
            assert_eq!(
                s3_location(url),
                Some(("b".into(), "k/t.yml".into())),
                "{url}"
            );
        }
        assert_eq!(s3_location("https://example.com/t.yml"), None);
        assert_eq!(s3_location("not a url"), None);
    }

    #[test]
    fn nested_templates_are_found_through_the_parents_literal_url() {
        let parent = stack(
            "p",
            "Resources:\n  Addons: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: https://s3.amazonaws.com/art/addons.yml}}\n",
            json!({"resources": [{"logical_id": "Addons", "resource_type": "AWS::CloudFormation::Stack",
                    "physical_id": "arn:s/p-Addons", "status": "CREATE_COMPLETE",
                    "live": {"state": "not_read", "reason": "t"}}]}),
        );
        let child = stack(
            "p-Addons",
            "Resources: {}\n",
            json!({"parent_id": "arn:s/p"}),
        );
        let inv = inventory(vec![parent, child]);
        let found = nested_templates(&inv);
        let Ok((s, bucket, key)) = &found[0] else {
            panic!("{found:?}")
        };
        assert_eq!(
            (s.name.as_str(), bucket.as_str(), key.as_str()),
            ("p-Addons", "art", "addons.yml")
        );
    }

    #[test]
    fn what_is_gone_is_what_the_later_world_lacks() {
        let mut before = World::default();
        before.add(
            record_key("Z1", "www.example.org.", "A", None),
            "www A".into(),
        );
        before.add("object s3://b/k".into(), "s3://b/k".into());
        let mut after = World::default();
        after.add("object s3://b/k".into(), "s3://b/k".into());
        after.add("certificate arn:new".into(), "new".into());
        assert_eq!(
            before.gone_in(&after),
            [(
                "record Z1_www.example.org_A".to_string(),
                "www A".to_string()
            )]
        );
    }

    #[test]
    fn imports_hold_when_the_twin_still_describes_them() {
        let twin_inv = inventory(vec![stack(
            "s",
            "Resources: {}\n",
            json!({"resources": [
                {"logical_id": "Vpc", "resource_type": "AWS::EC2::VPC", "physical_id": "vpc-twin",
                 "status": "CREATE_COMPLETE", "live": {"state": "not_read", "reason": "t"}},
                {"logical_id": "Q", "resource_type": "AWS::SQS::Queue", "physical_id": "q-twin",
                 "status": "CREATE_COMPLETE", "live": {"state": "not_read", "reason": "t"}}]}),
        )]);
        let account = json!({"imports": [
            {"stack": "s", "logical_id": "Vpc", "type": "AWS::EC2::VPC", "to": "aws_vpc.s_Vpc", "id": "vpc-real"},
            {"stack": "s", "logical_id": "Q", "type": "AWS::SQS::Queue", "to": "aws_sqs_queue.s_Q", "id": "q-real"},
            {"stack": null, "logical_id": null, "type": "out-of-band", "to": "aws_route53_record.www", "id": "ZR_www.x_A"},
            {"stack": "s", "logical_id": "Gone", "type": "AWS::SNS::Topic", "to": "aws_sns_topic.s_T", "id": "t"}]});
        let twin = json!({"imports": [
            {"stack": "s", "logical_id": "Vpc", "type": "AWS::EC2::VPC", "to": "aws_vpc.s_Vpc", "id": "vpc-twin"},
            {"stack": "s", "logical_id": "Q", "type": "AWS::SQS::Queue", "to": "aws_sqs_queue.s_Q", "id": "q-twin"},
            {"stack": null, "logical_id": null, "type": "out-of-band", "to": "aws_route53_record.www", "id": "ZT_www.x_A"}]});
        let mut after = World::default();
        after.add(record_key("ZT", "www.x.", "A", None), "www".into());
        let mut describe = |t: &str, p: &str| match t {
            "AWS::EC2::VPC" => LiveState::Described {
                calls: vec![ReadCall {
                    service: "ec2".into(),
                    operation: "DescribeVpcs".into(),
                    input: json!({}),
                    output: json!({}),
                }],
            },
            _ => LiveState::Gone {
                operation: "GetQueueAttributes".into(),
                error_code: "NonExistentQueue".into(),
                message: Some(p.into()),
            },
        };
        let mut resolve = |_: &str, _: &str| None;
        let plans = Plans {
            account: &account,
            account_inventory: &twin_inv,
            nested_names: &[],
            id_map: &[],
            twin: &twin,
            twin_inventory: &twin_inv,
        };
        let checks = check_imports(&plans, &after, &mut describe, &mut resolve);
        let holds: Vec<(&str, bool)> = checks.iter().map(|c| (c.to.as_str(), c.holds)).collect();
        assert_eq!(
            holds,
            [
                ("aws_vpc.s_Vpc", true),
                ("aws_sqs_queue.s_Q", false),
                ("aws_route53_record.www", true),
                ("aws_sns_topic.s_T", false)
            ]
        );
        assert_eq!(checks[0].twin_id, "vpc-twin");
        assert!(
            checks[1].how.contains("NonExistentQueue"),
            "{}",
            checks[1].how
        );
        assert!(checks[3].how.contains("differs from the account"));
        let md = markdown(&Rehearsal {
            imports: checks,
            failures: vec!["x".into()],
            ..Rehearsal::default()
        });
        assert!(
            md.contains("the plan FAILS") && md.contains("2 of 4"),
            "{md}"
        );
    }
}
