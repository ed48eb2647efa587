//! The env-controller cascade: what deleting a Copilot workload stack would remove from its
//! environment. env-controller.js's Delete takes the workload out of every `*Workloads`
//! parameter of the env stack and its key out of `Aliases`, then updates the env stack with
//! the previous template; every env resource whose condition turns false is deleted. This
//! evaluates the env template's conditions before and after that change, with the `template`
//! crate's own evaluator.

use super::{aliases, resolve};
use crate::copilot::{self, Handler};
use crate::inventory::model::{CopilotKind, Inventory, Stack};
use cumulo_template::{NoSsm, Pseudo, prepare};
use indexmap::{IndexMap, IndexSet};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Cascade {
    pub workload_stack: String,
    pub workload: String,
    pub env_stack: String,
    /// Parameters the env-controller's Delete would change: (key, before, after).
    pub parameter_changes: Vec<(String, String, String)>,
    /// Env resources the update would delete: (logical id, type, physical id).
    pub removed: Vec<(String, String, Option<String>)>,
    /// Delete handlers those removals would run, and env custom resources the update would
    /// replace.
    pub handlers_fired: Vec<String>,
    /// Why the cascade could not be evaluated, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The env stack's parameters with `workload` taken out, as env-controller.js's Delete does.
pub fn without_workload(
    parameters: &IndexMap<String, String>,
    workload: &str,
) -> IndexMap<String, String> {
    parameters
        .iter()
        .map(|(k, v)| {
            let after = if k.ends_with("Workloads") {
                v.split(',')
                    .map(str::trim)
                    .filter(|w| !w.is_empty() && *w != workload)
                    .collect::<Vec<_>>()
                    .join(",")
            } else if k == "Aliases" {
                match serde_json::from_str::<serde_json::Value>(v) {
                    Ok(serde_json::Value::Object(mut map)) => {
                        map.remove(workload);
                        if map.is_empty() {
                            String::new()
                        } else {
                            serde_json::Value::Object(map).to_string()
                        }
                    }
                    _ => v.clone(),
                }
            } else {
                v.clone()
            };
            (k.clone(), after)
        })
        .collect()
}

/// The resources whose conditions hold for these parameters.
/// The stack's template prepared with these parameters (conditions, live resources, graph).
pub(crate) fn prepared(
    stack: &Stack,
    region: &str,
    account: &str,
    given: &IndexMap<String, String>,
) -> Result<cumulo_template::Prepared, String> {
    let doc = cumulo_template::parse_template(&stack.template)
        .map_err(|d| d.first().map_or_else(String::new, |d| d.message.clone()))?;
    let uuid = stack.id.rsplit('/').next().unwrap_or_default();
    let pseudo = Pseudo::new(region, account, &stack.name, uuid);
    prepare(doc.value, given, &IndexSet::new(), pseudo, &NoSsm)
        .map_err(|d| d.first().map_or_else(String::new, |d| d.message.clone()))
}

fn live_resources(
    env: &Stack,
    region: &str,
    account: &str,
    given: &IndexMap<String, String>,
) -> Result<IndexSet<String>, String> {
    Ok(prepared(env, region, account, given)?
        .live
        .into_iter()
        .collect())
}

fn env_of<'a>(
    inv: &'a Inventory,
    workload_stack: &Stack,
    named: Option<String>,
) -> Option<&'a Stack> {
    if let Some(name) = named
        && let Some(s) = inv.stack(&name)
    {
        return Some(s);
    }
    let c = workload_stack.copilot.as_ref()?;
    inv.stacks.iter().find(|s| {
        s.copilot
            .as_ref()
            .is_some_and(|e| e.kind == CopilotKind::Env && e.app == c.app && e.env == c.env)
    })
}

/// One cascade per workload stack with an env-controller.
pub fn cascades(inv: &Inventory) -> Vec<Cascade> {
    let mut out = Vec::new();
    for stack in &inv.stacks {
        let Some(controller) = stack
            .custom_resources
            .iter()
            .find(|c| c.resource_type == "Custom::EnvControllerFunction")
        else {
            continue;
        };
        let prop = |k: &str| controller.properties.get(k);
        let workload = prop("Workload")
            .and_then(|v| resolve(stack, v))
            .or_else(|| stack.copilot.as_ref()?.workload.clone())
            .unwrap_or_default();
        let named = prop("EnvStack").and_then(|v| resolve(stack, v));
        let mut cascade = Cascade {
            workload_stack: stack.name.clone(),
            workload: workload.clone(),
            env_stack: named.clone().unwrap_or_default(),
            parameter_changes: Vec::new(),
            removed: Vec::new(),
            handlers_fired: Vec::new(),
            problem: None,
        };
        let Some(env) = env_of(inv, stack, named) else {
            cascade.problem = Some("the env stack is not in the inventory".into());
            out.push(cascade);
            continue;
        };
        cascade.env_stack = env.name.clone();
        let before: IndexMap<String, String> = env
            .parameters
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect();
        let after = without_workload(&before, &workload);
        for (k, v) in &before {
            if after.get(k) != Some(v) {
                cascade
                    .parameter_changes
                    .push((k.clone(), v.clone(), after[k].clone()));
            }
        }
        let evaluated = live_resources(env, &inv.region, &inv.account, &before)
            .and_then(|b| Ok((b, live_resources(env, &inv.region, &inv.account, &after)?)));
        let (live_before, live_after) = match evaluated {
            Ok(pair) => pair,
            Err(why) => {
                cascade.problem = Some(format!(
                    "the env template's conditions could not be evaluated: {why}"
                ));
                out.push(cascade);
                continue;
            }
        };
        let kind = env.copilot.as_ref().map(|c| c.kind);
        for logical in live_before.difference(&live_after) {
            let Some(r) = env.resource(logical) else {
                continue;
            };
            if r.physical_id.is_none() {
                continue;
            }
            cascade.removed.push((
                r.logical_id.clone(),
                r.resource_type.clone(),
                r.physical_id.clone(),
            ));
            if let Some(c) = env
                .custom_resources
                .iter()
                .find(|c| &c.logical_id == logical)
                && let Some(h) = copilot::classify(kind, c)
                && h.facts().destructive
            {
                let mut line = format!(
                    "{} ({}) Delete: {}",
                    c.logical_id,
                    h.facts().file,
                    h.facts().on_delete
                );
                if h == Handler::CustomDomain {
                    let names = aliases(c.properties.get("Aliases").and_then(|v| resolve(env, v)));
                    if !names.is_empty() {
                        line.push_str(&format!(" ({})", names.join(", ")));
                    }
                }
                cascade.handlers_fired.push(line);
            }
        }
        // An Aliases change updates the env certificate: dns-cert-validator requests a new one
        // and CloudFormation's cleanup deletes the old one.
        if cascade
            .parameter_changes
            .iter()
            .any(|(k, _, _)| k == "Aliases")
            && let Some(cert) = env.custom_resources.iter().find(|c| {
                live_after.contains(&c.logical_id)
                    && copilot::classify(kind, c) == Some(Handler::DnsCertValidator)
            })
        {
            cascade.handlers_fired.push(format!(
                "{} (dns-cert-validator.js) is updated: a new certificate is requested and the old one {} is deleted with its unshared validation records",
                cert.logical_id,
                cert.physical_id.as_deref().unwrap_or("(unknown)")
            ));
        }
        out.push(cascade);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_leaves_every_workloads_parameter_and_aliases() {
        let before: IndexMap<String, String> = [
            ("ALBWorkloads", "web,api"),
            ("NATWorkloads", "web"),
            (
                "Aliases",
                r#"{"web":["a.example.com"],"api":["b.example.com"]}"#,
            ),
            ("AppName", "web"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let after = without_workload(&before, "web");
        assert_eq!(after["ALBWorkloads"], "api");
        assert_eq!(after["NATWorkloads"], "");
        assert_eq!(after["Aliases"], r#"{"api":["b.example.com"]}"#);
        assert_eq!(after["AppName"], "web");
        let only = without_workload(&after, "api");
        assert_eq!(only["Aliases"], "");
    }
}

#[cfg(test)]
mod cascade_tests {
    use super::*;
    use crate::inventory::model::*;
    use crate::inventory::take::copilot_of;
    use serde_json::json;

    const ENV: &str = r#"
Parameters:
  ALBWorkloads: {Type: String}
  NATWorkloads: {Type: String}
  Aliases: {Type: String}
Conditions:
  CreateALB: !Not [!Equals [!Ref ALBWorkloads, ""]]
  CreateNAT: !Not [!Equals [!Ref NATWorkloads, ""]]
  ManagedAliases: !And [!Condition CreateALB, !Not [!Equals [!Ref Aliases, ""]]]
Resources:
  Vpc: {Type: AWS::EC2::VPC}
  PublicLoadBalancer: {Type: AWS::ElasticLoadBalancingV2::LoadBalancer, Condition: CreateALB}
  NatGateway1: {Type: AWS::EC2::NatGateway, Condition: CreateNAT}
  CustomDomainAction:
    Type: Custom::CustomDomainFunction
    Condition: ManagedAliases
    Properties: {ServiceToken: x, Aliases: !Ref Aliases, PublicAccessHostedZone: Z1}
  HTTPSCert:
    Type: Custom::CertificateValidationFunction
    Properties: {ServiceToken: x, Aliases: !Ref Aliases, EnvHostedZoneId: Z2}
"#;

    fn resource(logical: &str, kind: &str) -> Resource {
        Resource {
            logical_id: logical.into(),
            resource_type: kind.into(),
            physical_id: Some(format!("{logical}-id")),
            status: "CREATE_COMPLETE".into(),
            status_reason: None,
            last_updated_at: None,
            deletion_policy: None,
            update_replace_policy: None,
            live: LiveState::Described { calls: vec![] },
            import_attributes: Default::default(),
        }
    }

    fn custom(logical: &str, kind: &str, properties: serde_json::Value) -> CustomResource {
        CustomResource {
            logical_id: logical.into(),
            resource_type: kind.into(),
            physical_id: Some(format!("{logical}-id")),
            properties,
            service_token: "x".into(),
            function: None,
        }
    }

    fn stack(name: &str, tags: &[(&str, &str)], template: &str) -> Stack {
        let tags: std::collections::BTreeMap<String, String> = tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Stack {
            name: name.into(),
            id: format!("arn:aws:cloudformation:us-east-1:111122223333:stack/{name}/1"),
            status: "UPDATE_COMPLETE".into(),
            status_reason: None,
            description: None,
            created_at: None,
            last_updated_at: None,
            copilot: copilot_of(&tags),
            tags,
            parameters: vec![],
            outputs: vec![],
            capabilities: vec![],
            role_arn: None,
            termination_protection: false,
            template: template.into(),
            parent_id: None,
            root_id: None,
            resources: vec![],
            custom_resources: vec![],
        }
    }

    fn param(key: &str, value: &str) -> StackParameter {
        StackParameter {
            key: key.into(),
            value: value.into(),
            resolved_value: None,
            no_echo: false,
        }
    }

    #[test]
    fn the_last_alb_workload_leaving_deletes_the_alb_and_fires_the_alias_handler() {
        let mut env = stack(
            "app-test",
            &[
                ("copilot-application", "app"),
                ("copilot-environment", "test"),
            ],
            ENV,
        );
        env.parameters = vec![
            param("ALBWorkloads", "web"),
            param("NATWorkloads", "web,api"),
            param("Aliases", r#"{"web":["www.example.com"]}"#),
        ];
        env.resources = ["Vpc", "PublicLoadBalancer", "NatGateway1"]
            .iter()
            .map(|l| resource(l, "AWS::Other"))
            .chain([
                resource("CustomDomainAction", "Custom::CustomDomainFunction"),
                resource("HTTPSCert", "Custom::CertificateValidationFunction"),
            ])
            .collect();
        env.custom_resources = vec![
            custom(
                "CustomDomainAction",
                "Custom::CustomDomainFunction",
                json!({"Aliases": {"Ref": "Aliases"}, "PublicAccessHostedZone": "Z1"}),
            ),
            custom(
                "HTTPSCert",
                "Custom::CertificateValidationFunction",
                json!({"Aliases": {"Ref": "Aliases"}, "EnvHostedZoneId": "Z2"}),
            ),
        ];
        let mut web = stack(
            "app-test-web",
            &[
                ("copilot-application", "app"),
                ("copilot-environment", "test"),
                ("copilot-service", "web"),
            ],
            "Resources: {}\n",
        );
        web.parameters = vec![param("WorkloadName", "web")];
        web.custom_resources = vec![custom(
            "EnvControllerAction",
            "Custom::EnvControllerFunction",
            json!({"Workload": {"Ref": "WorkloadName"}, "EnvStack": {"Fn::Sub": "app-test"}}),
        )];
        let inv = Inventory {
            format_version: FORMAT_VERSION,
            account: "111122223333".into(),
            region: "us-east-1".into(),
            taken_at: String::new(),
            endpoint: None,
            taken_by: String::new(),
            selection: Selection::Stacks { names: vec![] },
            stacks: vec![env, web],
            out_of_band: OutOfBand::default(),
            content_sha256: String::new(),
        };
        let [c] = cascades(&inv).try_into().unwrap();
        assert_eq!(
            (c.workload.as_str(), c.env_stack.as_str()),
            ("web", "app-test")
        );
        assert_eq!(c.problem, None);
        assert_eq!(
            c.parameter_changes,
            vec![
                ("ALBWorkloads".into(), "web".into(), "".into()),
                ("NATWorkloads".into(), "web,api".into(), "api".into()),
                (
                    "Aliases".into(),
                    r#"{"web":["www.example.com"]}"#.into(),
                    "".into()
                ),
            ]
        );
        // NAT stays (api still needs it); the ALB and the alias handle go.
        let removed: Vec<&str> = c.removed.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(removed, vec!["PublicLoadBalancer", "CustomDomainAction"]);
        assert_eq!(c.handlers_fired.len(), 2);
        assert!(c.handlers_fired[0].starts_with("CustomDomainAction (custom-domain.js) Delete"));
        assert!(c.handlers_fired[0].ends_with("(www.example.com)"));
        assert!(c.handlers_fired[1].starts_with("HTTPSCert (dns-cert-validator.js) is updated"));
    }
}
