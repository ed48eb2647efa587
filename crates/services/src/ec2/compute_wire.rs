//! The `ec2` protocol for compute: instances, launch templates and images. Launch template
//! data travels as nested query parameters (`LaunchTemplateData.NetworkInterface.1.SubnetId`)
//! and comes back as EC2 XML (`networkInterfaceSet`); in between it is kept as JSON in the API's
//! member names, the shape CloudFormation's `LaunchTemplateData` already has.

use super::Ec2Service;
use super::filters::{self, Filters};
use super::images::{self, Image};
use super::instances::{
    InstanceRequest, Transition, fill_from_template, state_code, template_version,
};
use super::model::*;
use super::wire::{Answer, Params, group_by_name, one, tag_set};
use cumulo_wire::AwsError;
use cumulo_wire::xml::{XmlWriter, escape};
use serde_json::{Map, Value};

/// The compute actions, or `None` for an action this module does not answer.
pub(super) fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Option<Answer> {
    Some(match action {
        "RunInstances" => run_instances(svc, region, p),
        "DescribeInstances" => describe_instances(svc, region, p),
        "StopInstances" => transition(svc, region, p, Transition::Stop, "instancesSet"),
        "StartInstances" => transition(svc, region, p, Transition::Start, "instancesSet"),
        "TerminateInstances" => transition(svc, region, p, Transition::Terminate, "instancesSet"),
        "DescribeInstanceStatus" => describe_status(svc, region, p),
        "DescribeImages" => describe_images(p),
        "CreateLaunchTemplate" => (|| {
            let t = svc.create_launch_template(
                region,
                p.required("LaunchTemplateName")?,
                p.get("VersionDescription").map(str::to_string),
                template_data(p),
                p.tag_specs(),
            )?;
            Ok(one("launchTemplate", |w| template(w, &t)))
        })(),
        "CreateLaunchTemplateVersion" => (|| {
            let (t, v) = svc.create_launch_template_version(
                region,
                p.get("LaunchTemplateId"),
                p.get("LaunchTemplateName"),
                p.get("SourceVersion"),
                p.get("VersionDescription").map(str::to_string),
                template_data(p),
            )?;
            Ok(one("launchTemplateVersion", |w| version(w, &t, &v)))
        })(),
        "ModifyLaunchTemplate" => (|| {
            let (id, name) = (p.get("LaunchTemplateId"), p.get("LaunchTemplateName"));
            let t = match p.get("SetDefaultVersion") {
                Some(v) => svc.set_default_launch_template_version(region, id, name, v)?,
                None => svc.read(region, |r| r.template(id, name).cloned())?,
            };
            Ok(one("launchTemplate", |w| template(w, &t)))
        })(),
        "DeleteLaunchTemplate" => (|| {
            let t = svc.delete_launch_template(
                region,
                p.get("LaunchTemplateId"),
                p.get("LaunchTemplateName"),
            )?;
            Ok(one("launchTemplate", |w| template(w, &t)))
        })(),
        "DeleteLaunchTemplateVersions" => delete_versions(svc, region, p),
        "DescribeLaunchTemplates" => describe_templates(svc, region, p),
        "DescribeLaunchTemplateVersions" => describe_versions(svc, region, p),
        _ => return None,
    })
}

// ----- instances -----

fn run_instances(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let min = p
        .int("MinCount")?
        .ok_or_else(|| super::errors::missing("MinCount"))?;
    let max = p
        .int("MaxCount")?
        .ok_or_else(|| super::errors::missing("MaxCount"))?;
    if min < 1 || max < min {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            format!(
                "Invalid value '{min}' for MinCount. Must be greater than 0 and no more than MaxCount ({max})."
            ),
        ));
    }
    let nic = p.items("NetworkInterface").into_iter().next();
    let mut groups = p.strings("SecurityGroupId");
    for name in p.strings("SecurityGroup") {
        groups.push(group_by_name(svc, region, &name)?);
    }
    if let Some(n) = &nic {
        groups.extend(n.strings("SecurityGroupId"));
    }
    let profile = match (
        p.get("IamInstanceProfile.Arn"),
        p.get("IamInstanceProfile.Name"),
    ) {
        (Some(arn), _) => Some(arn.to_string()),
        (None, Some(name)) => Some(format!(
            "arn:aws:iam::{}:instance-profile/{name}",
            svc.account_id()
        )),
        (None, None) => None,
    };
    let mut req = InstanceRequest {
        image_id: p.get("ImageId").unwrap_or("").to_string(),
        instance_type: p.get("InstanceType").unwrap_or("").to_string(),
        subnet_id: p
            .get("SubnetId")
            .or(nic.as_ref().and_then(|n| n.get("SubnetId")))
            .map(str::to_string),
        availability_zone: p.get("Placement.AvailabilityZone").map(str::to_string),
        security_group_ids: groups,
        key_name: p.get("KeyName").map(str::to_string),
        iam_instance_profile_arn: profile,
        user_data: p.get("UserData").map(str::to_string),
        tags: instance_tags(p),
        count: max as usize,
        network_interface_id: nic
            .as_ref()
            .and_then(|n| n.get("NetworkInterfaceId"))
            .map(str::to_string),
    };
    let mut template = None;
    if p.get("LaunchTemplate.LaunchTemplateId").is_some()
        || p.get("LaunchTemplate.LaunchTemplateName").is_some()
    {
        let view = svc.launch_template(
            region,
            p.get("LaunchTemplate.LaunchTemplateId"),
            p.get("LaunchTemplate.LaunchTemplateName"),
            p.get("LaunchTemplate.Version"),
        )?;
        fill_from_template(&mut req, &view.data);
        template = Some((view.launch_template_id, view.version_number.to_string()));
    }
    let made = svc.launch(region, req, template)?;
    let names = group_names(svc, region)?;
    let mut w = XmlWriter::new_fragment();
    w.elem(
        "reservationId",
        made.first()
            .map(|i| i.reservation_id.as_str())
            .unwrap_or(""),
    )
    .elem("ownerId", svc.account_id())
    .raw("<groupSet/>")
    .open("instancesSet", None);
    for i in &made {
        w.open("item", None);
        instance(&mut w, i, region, svc.account_id(), &names);
        w.close();
    }
    w.close();
    Ok(w.finish())
}

/// The tags of the `instance` tag specifications.
fn instance_tags(p: &Params) -> Vec<(String, String)> {
    p.items("TagSpecification")
        .into_iter()
        .filter(|s| s.get("ResourceType").is_none_or(|t| t == "instance"))
        .flat_map(|s| s.tags("Tag"))
        .collect()
}

fn group_names(svc: &Ec2Service, region: &str) -> Result<Vec<(String, String)>, AwsError> {
    svc.read(region, |r| {
        Ok(r.items
            .values()
            .filter_map(|x| match x {
                Resource::SecurityGroup(g) => Some((g.id.clone(), g.name.clone())),
                _ => None,
            })
            .collect())
    })
}

fn describe_instances(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    svc.settle_instances(region)?;
    let ids = p.strings("InstanceId");
    let filters = p.filters();
    let records = svc.records(region)?;
    let mut missing = Vec::new();
    for id in &ids {
        super::errors::check_id(id, "i")?;
        if !records
            .iter()
            .any(|r| matches!(r, Resource::Instance(i) if &i.id == id))
        {
            missing.push(id.as_str());
        }
    }
    if !missing.is_empty() {
        return Err(super::instances::instances_not_found(&missing));
    }
    let mut reservations: Vec<(String, Vec<&Instance>)> = Vec::new();
    for r in &records {
        let Resource::Instance(i) = r else { continue };
        if (!ids.is_empty() && !ids.contains(&i.id)) || !filters::matches(r, &filters)? {
            continue;
        }
        match reservations
            .iter_mut()
            .find(|(id, _)| id == &i.reservation_id)
        {
            Some((_, list)) => list.push(i),
            None => reservations.push((i.reservation_id.clone(), vec![i])),
        }
    }
    let names = group_names(svc, region)?;
    let mut w = XmlWriter::new_fragment();
    w.open("reservationSet", None);
    for (id, list) in reservations {
        w.open("item", None)
            .elem("reservationId", &id)
            .elem("ownerId", svc.account_id())
            .raw("<groupSet/>")
            .open("instancesSet", None);
        for i in list {
            w.open("item", None);
            instance(&mut w, i, region, svc.account_id(), &names);
            w.close();
        }
        w.close().close();
    }
    w.close();
    Ok(w.finish())
}

fn state(w: &mut XmlWriter, tag: &'static str, name: &str) {
    w.open(tag, None)
        .elem("code", &state_code(name).to_string())
        .elem("name", name)
        .close();
}

fn transition(
    svc: &Ec2Service,
    region: &str,
    p: &Params,
    to: Transition,
    set: &'static str,
) -> Answer {
    let ids = p.strings("InstanceId");
    if ids.is_empty() {
        return Err(super::errors::missing("InstanceId"));
    }
    let changes = svc.transition(region, &ids, to)?;
    let mut w = XmlWriter::new_fragment();
    w.open(set, None);
    for (id, before, after) in changes {
        w.open("item", None).elem("instanceId", &id);
        state(&mut w, "currentState", &after);
        state(&mut w, "previousState", &before);
        w.close();
    }
    w.close();
    Ok(w.finish())
}

fn describe_status(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    svc.settle_instances(region)?;
    let all = p.flag("IncludeAllInstances").unwrap_or(false);
    let ids = p.strings("InstanceId");
    for id in &ids {
        svc.read(region, |r| r.instance(id).map(|_| ()))?;
    }
    let filters: Filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("instanceStatusSet", None);
    for r in svc.records(region)? {
        let Resource::Instance(i) = &r else { continue };
        if (!ids.is_empty() && !ids.contains(&i.id)) || (!all && i.state != "running") {
            continue;
        }
        let pass = filters.iter().all(|(f, values)| match f.as_str() {
            "availability-zone" => values.contains(&i.availability_zone),
            "instance-state-name" => values.contains(&i.state),
            "instance-state-code" => values.contains(&state_code(&i.state).to_string()),
            "instance-status.status" | "system-status.status" => values.iter().any(|v| {
                v == if i.state == "running" {
                    "ok"
                } else {
                    "not-applicable"
                }
            }),
            _ => false,
        });
        if !pass {
            continue;
        }
        let status = if i.state == "running" {
            "ok"
        } else {
            "not-applicable"
        };
        w.open("item", None)
            .elem("instanceId", &i.id)
            .elem("availabilityZone", &i.availability_zone);
        state(&mut w, "instanceState", &i.state);
        for tag in ["systemStatus", "instanceStatus"] {
            w.open(tag, None)
                .elem("status", status)
                .open("details", None);
            if i.state == "running" {
                w.open("item", None)
                    .elem("name", "reachability")
                    .elem("status", "passed")
                    .close();
            }
            w.close().close();
        }
        w.raw("<eventsSet/>").close();
    }
    w.close();
    Ok(w.finish())
}

fn instance(
    w: &mut XmlWriter,
    i: &Instance,
    region: &str,
    account: &str,
    names: &[(String, String)],
) {
    let dns_suffix = if region == "us-east-1" {
        "ec2.internal".to_string()
    } else {
        format!("{region}.compute.internal")
    };
    let private_dns = format!("ip-{}.{dns_suffix}", i.private_ip.replace('.', "-"));
    let public_dns = i.public_ip.as_ref().map(|ip| {
        let zone = if region == "us-east-1" {
            "compute-1.amazonaws.com".to_string()
        } else {
            format!("{region}.compute.amazonaws.com")
        };
        format!("ec2-{}.{zone}", ip.replace('.', "-"))
    });
    let name_of = |g: &str| {
        names
            .iter()
            .find(|(id, _)| id == g)
            .map(|(_, n)| n.clone())
            .unwrap_or_default()
    };
    let arch = images::image(&i.image_id)
        .map(|m| m.architecture)
        .unwrap_or("x86_64");
    w.elem("instanceId", &i.id).elem("imageId", &i.image_id);
    state(w, "instanceState", &i.state);
    w.elem("privateDnsName", &private_dns)
        .elem("dnsName", public_dns.as_deref().unwrap_or(""))
        .elem("reason", &i.state_transition_reason)
        .opt("keyName", i.key_name.as_deref())
        .elem("amiLaunchIndex", &i.launch_index.to_string())
        .raw("<productCodes/>")
        .elem("instanceType", &i.instance_type)
        .elem("launchTime", &i.launch_time)
        .open("placement", None)
        .elem("availabilityZone", &i.availability_zone)
        .elem("groupName", "")
        .elem("tenancy", "default")
        .close()
        .open("monitoring", None)
        .elem("state", "disabled")
        .close()
        .elem("subnetId", &i.subnet_id)
        .elem("vpcId", &i.vpc_id)
        .elem("privateIpAddress", &i.private_ip)
        .opt("ipAddress", i.public_ip.as_deref())
        .elem("sourceDestCheck", "true");
    w.open("groupSet", None);
    for g in &i.groups {
        w.open("item", None)
            .elem("groupId", g)
            .elem("groupName", &name_of(g))
            .close();
    }
    w.close();
    if matches!(
        i.state.as_str(),
        "stopping" | "stopped" | "shutting-down" | "terminated"
    ) {
        w.open("stateReason", None)
            .elem("code", "Client.UserInitiatedShutdown")
            .elem(
                "message",
                "Client.UserInitiatedShutdown: User initiated shutdown",
            )
            .close();
    }
    w.elem("architecture", arch)
        .elem("rootDeviceType", "ebs")
        .elem("rootDeviceName", "/dev/xvda")
        .raw("<blockDeviceMapping/>")
        .elem("virtualizationType", "hvm")
        .elem("clientToken", "");
    tag_set(w, &i.tags);
    w.elem("hypervisor", "xen");
    w.open("networkInterfaceSet", None);
    if let Some(eni) = &i.network_interface_id {
        w.open("item", None)
            .elem("networkInterfaceId", eni)
            .elem("subnetId", &i.subnet_id)
            .elem("vpcId", &i.vpc_id)
            .elem("description", "")
            .elem("ownerId", account)
            .elem("status", "in-use")
            .elem("macAddress", &i.mac_address)
            .elem("privateIpAddress", &i.private_ip)
            .elem("privateDnsName", &private_dns)
            .elem("sourceDestCheck", "true")
            .open("groupSet", None);
        for g in &i.groups {
            w.open("item", None)
                .elem("groupId", g)
                .elem("groupName", &name_of(g))
                .close();
        }
        w.close()
            .open("attachment", None)
            .elem("deviceIndex", "0")
            .elem("status", "attached")
            .elem("attachTime", &i.launch_time)
            .elem("deleteOnTermination", "true")
            .close()
            .open("privateIpAddressesSet", None)
            .open("item", None)
            .elem("privateIpAddress", &i.private_ip)
            .elem("privateDnsName", &private_dns)
            .elem("primary", "true")
            .close()
            .close()
            .elem("interfaceType", "interface")
            .close();
    }
    w.close();
    if let Some(arn) = &i.iam_instance_profile_arn {
        w.open("iamInstanceProfile", None)
            .elem("arn", arn)
            .elem("id", "AIPA")
            .close();
    }
    w.elem("ebsOptimized", "false")
        .elem("enaSupport", "true")
        .open("metadataOptions", None)
        .elem("state", "applied")
        .elem("httpTokens", "required")
        .elem("httpPutResponseHopLimit", "2")
        .elem("httpEndpoint", "enabled")
        .close()
        .elem("platformDetails", "Linux/UNIX")
        .elem("usageOperation", "RunInstances")
        .elem("bootMode", "uefi-preferred");
}

// ----- images -----

fn describe_images(p: &Params) -> Answer {
    let ids = p.strings("ImageId");
    for id in &ids {
        super::instances::check_image(id)?;
    }
    let owners = p.strings("Owner");
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("imagesSet", None);
    for i in images::CATALOGUE {
        if !ids.is_empty() && !ids.iter().any(|id| id == i.id) {
            continue;
        }
        let owned = owners.is_empty() || owners.iter().any(|o| o == "amazon" || o == i.owner_id);
        if !owned || !image_matches(i, &filters)? {
            continue;
        }
        w.open("item", None);
        image(&mut w, i);
        w.close();
    }
    w.close();
    Ok(w.finish())
}

fn image_matches(i: &Image, filters: &Filters) -> Result<bool, AwsError> {
    for (name, wanted) in filters {
        let value = match name.as_str() {
            "image-id" => i.id,
            "name" => i.name,
            "description" => i.description,
            "owner-id" => i.owner_id,
            "owner-alias" => "amazon",
            "architecture" => i.architecture,
            "state" => "available",
            "is-public" => "true",
            "image-type" => "machine",
            "root-device-type" => "ebs",
            "virtualization-type" => "hvm",
            "platform-details" => "Linux/UNIX",
            _ => {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("The filter '{name}' is invalid"),
                ));
            }
        };
        if !wanted.iter().any(|w| filters::glob(w, value)) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn image(w: &mut XmlWriter, i: &Image) {
    w.elem("imageId", i.id)
        .elem("imageLocation", &format!("amazon/{}", i.name))
        .elem("imageState", "available")
        .elem("imageOwnerId", i.owner_id)
        .elem("creationDate", i.creation_date)
        .elem("isPublic", "true")
        .elem("architecture", i.architecture)
        .elem("imageType", "machine")
        .elem("imageOwnerAlias", "amazon")
        .elem("name", i.name)
        .elem("description", i.description)
        .elem("rootDeviceType", "ebs")
        .elem("rootDeviceName", "/dev/xvda")
        .open("blockDeviceMapping", None)
        .open("item", None)
        .elem("deviceName", "/dev/xvda")
        .open("ebs", None)
        .elem("deleteOnTermination", "true")
        .elem("volumeSize", "8")
        .elem("volumeType", "gp3")
        .elem("encrypted", "false")
        .close()
        .close()
        .close()
        .elem("virtualizationType", "hvm")
        .elem("hypervisor", "xen")
        .elem("enaSupport", "true")
        .elem("sriovNetSupport", "simple")
        .elem("platformDetails", "Linux/UNIX")
        .elem("usageOperation", "RunInstances")
        .elem("bootMode", "uefi-preferred")
        .elem("imdsSupport", "v2.0");
}

// ----- launch templates -----

fn template(w: &mut XmlWriter, t: &LaunchTemplate) {
    w.elem("launchTemplateId", &t.id)
        .elem("launchTemplateName", &t.name)
        .elem("createTime", &t.created)
        .elem("createdBy", "arn:aws:iam::000000000000:root")
        .elem("defaultVersionNumber", &t.default_version.to_string())
        .elem("latestVersionNumber", &t.latest_version().to_string());
    tag_set(w, &t.tags);
}

fn version(w: &mut XmlWriter, t: &LaunchTemplate, v: &TemplateVersion) {
    w.elem("launchTemplateId", &t.id)
        .elem("launchTemplateName", &t.name)
        .elem("versionNumber", &v.number.to_string())
        .opt("versionDescription", v.description.as_deref())
        .elem("createTime", &v.created)
        .elem("createdBy", "arn:aws:iam::000000000000:root")
        .elem(
            "defaultVersion",
            &(v.number == t.default_version).to_string(),
        )
        .raw(&format!(
            "<launchTemplateData>{}</launchTemplateData>",
            data_xml(&v.data)
        ));
}

fn delete_versions(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let versions = p.strings("LaunchTemplateVersion");
    let (t, gone, refused) = svc.delete_launch_template_versions(
        region,
        p.get("LaunchTemplateId"),
        p.get("LaunchTemplateName"),
        &versions,
    )?;
    let mut w = XmlWriter::new_fragment();
    w.open("successfullyDeletedLaunchTemplateVersionSet", None);
    for n in gone {
        w.open("item", None)
            .elem("launchTemplateId", &t.id)
            .elem("launchTemplateName", &t.name)
            .elem("versionNumber", &n.to_string())
            .close();
    }
    w.close()
        .open("unsuccessfullyDeletedLaunchTemplateVersionSet", None);
    for (n, code, message) in refused {
        w.open("item", None)
            .elem("launchTemplateId", &t.id)
            .elem("launchTemplateName", &t.name)
            .elem("versionNumber", &n)
            .open("responseError", None)
            .elem("code", &code)
            .elem("message", &message)
            .close()
            .close();
    }
    w.close();
    Ok(w.finish())
}

fn describe_templates(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let names = p.strings("LaunchTemplateName");
    let mut ids = p.strings("LaunchTemplateId");
    for n in &names {
        let id = svc
            .read(region, |r| r.template(None, Some(n)).map(|t| t.id.clone()))
            .map_err(|_| {
                AwsError::bad_request(
                    "InvalidLaunchTemplateName.NotFoundException",
                    "At least one of the launch templates specified in the request does not exist.",
                )
            })?;
        ids.push(id);
    }
    for id in &ids {
        svc.read(region, |r| r.template(Some(id), None).map(|_| ()))?;
    }
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("launchTemplates", None);
    for r in svc.records(region)? {
        let Resource::LaunchTemplate(t) = &r else {
            continue;
        };
        if (!ids.is_empty() && !ids.contains(&t.id)) || !filters::matches(&r, &filters)? {
            continue;
        }
        w.open("item", None);
        template(&mut w, t);
        w.close();
    }
    w.close();
    Ok(w.finish())
}

fn describe_versions(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let (id, name) = (p.get("LaunchTemplateId"), p.get("LaunchTemplateName"));
    let wanted = p.strings("LaunchTemplateVersion");
    let (min, max) = (p.int("MinVersion")?, p.int("MaxVersion")?);
    let templates: Vec<LaunchTemplate> = if id.is_some() || name.is_some() {
        vec![svc.read(region, |r| r.template(id, name).cloned())?]
    } else {
        svc.records(region)?
            .into_iter()
            .filter_map(|r| match r {
                Resource::LaunchTemplate(t) => Some(t),
                _ => None,
            })
            .collect()
    };
    let mut w = XmlWriter::new_fragment();
    w.open("launchTemplateVersionSet", None);
    for t in &templates {
        let chosen: Vec<&TemplateVersion> = if wanted.is_empty() {
            t.versions
                .iter()
                .filter(|v| min.is_none_or(|m| v.number >= m) && max.is_none_or(|m| v.number <= m))
                .collect()
        } else {
            wanted
                .iter()
                .map(|v| template_version(t, Some(v)))
                .collect::<Result<_, _>>()?
        };
        for v in chosen {
            w.open("item", None);
            version(&mut w, t, v);
            w.close();
        }
    }
    w.close();
    Ok(w.finish())
}

/// `LaunchTemplateData.*` as JSON in the API's member names.
fn template_data(p: &Params) -> Value {
    let mut tree = Map::new();
    for (k, v) in &p.0 {
        let Some(rest) = k.strip_prefix("LaunchTemplateData.") else {
            continue;
        };
        let mut node = &mut tree;
        let parts: Vec<&str> = rest.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            if i + 1 == parts.len() {
                node.insert(part.to_string(), Value::String(v.clone()));
            } else {
                let next = node
                    .entry(part.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !next.is_object() {
                    *next = Value::Object(Map::new());
                }
                let Value::Object(m) = next else { break };
                node = m;
            }
        }
    }
    shape(Value::Object(tree), "")
}

/// A parsed parameter tree with the API's names and types: `X.N` lists get their member name
/// (`SecurityGroupId.N` → `SecurityGroupIds`, inside a network interface `Groups`), numbered
/// entries become arrays, `true`/`false` and integers their JSON types.
fn shape(v: Value, parent: &str) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, child) in m {
                let is_list = matches!(&child, Value::Object(c) if !c.is_empty() && c.keys().all(|x| x.parse::<u32>().is_ok()));
                if is_list {
                    let name = list_name(parent, &k);
                    let Value::Object(items) = child else {
                        continue;
                    };
                    let mut items: Vec<(u32, Value)> = items
                        .into_iter()
                        .filter_map(|(i, x)| Some((i.parse().ok()?, x)))
                        .collect();
                    items.sort_by_key(|(i, _)| *i);
                    let list = items.into_iter().map(|(_, x)| shape(x, &name)).collect();
                    out.insert(name, Value::Array(list));
                } else {
                    let shaped = shape(child, &k);
                    out.insert(k, shaped);
                }
            }
            Value::Object(out)
        }
        Value::String(s) => match s.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            n if !n.is_empty() && n.len() < 10 && n.bytes().all(|b| b.is_ascii_digit()) => n
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(s)),
            _ => Value::String(s),
        },
        other => other,
    }
}

/// The member name of a list the query protocol sends under its location name.
fn list_name(parent: &str, key: &str) -> String {
    match (parent, key) {
        ("NetworkInterfaces", "SecurityGroupId") => "Groups".into(),
        (_, "Ipv4Prefix") => "Ipv4Prefixes".into(),
        (_, "Ipv6Prefix") => "Ipv6Prefixes".into(),
        (_, k) if k.ends_with('s') => k.into(),
        (_, k) => format!("{k}s"),
    }
}

/// JSON launch template data as EC2 XML: lower-camel names, lists as `<xSet>` of `<item>`s.
fn data_xml(v: &Value) -> String {
    let Value::Object(m) = v else {
        return escape(&scalar(v));
    };
    let mut out = String::new();
    for (k, child) in m {
        match child {
            Value::Array(items) => {
                let name = set_name(k);
                out.push_str(&format!("<{name}>"));
                for item in items {
                    out.push_str(&format!("<item>{}</item>", data_xml(item)));
                }
                out.push_str(&format!("</{name}>"));
            }
            _ => {
                let name = lower_camel(k);
                out.push_str(&format!("<{name}>{}</{name}>", data_xml(child)));
            }
        }
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn lower_camel(k: &str) -> String {
    let mut c = k.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn set_name(k: &str) -> String {
    match k {
        "LicenseSpecifications" => "licenseSet".into(),
        "Ipv6Addresses" | "PrivateIpAddresses" => format!("{}Set", lower_camel(k)),
        "Ipv4Prefixes" => "ipv4PrefixSet".into(),
        "Ipv6Prefixes" => "ipv6PrefixSet".into(),
        k => format!("{}Set", lower_camel(k.strip_suffix('s').unwrap_or(k))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_data_round_trips_between_query_and_xml() {
        let p = Params(
            [
                ("LaunchTemplateData.ImageId", "ami-1"),
                ("LaunchTemplateData.SecurityGroupId.1", "sg-1"),
                ("LaunchTemplateData.SecurityGroupId.2", "sg-2"),
                ("LaunchTemplateData.NetworkInterface.1.SubnetId", "subnet-1"),
                ("LaunchTemplateData.NetworkInterface.1.DeviceIndex", "0"),
                (
                    "LaunchTemplateData.NetworkInterface.1.SecurityGroupId.1",
                    "sg-3",
                ),
                (
                    "LaunchTemplateData.NetworkInterface.1.AssociatePublicIpAddress",
                    "true",
                ),
                (
                    "LaunchTemplateData.TagSpecification.1.ResourceType",
                    "instance",
                ),
                ("LaunchTemplateData.TagSpecification.1.Tag.1.Key", "k"),
                ("LaunchTemplateData.TagSpecification.1.Tag.1.Value", "v"),
                ("LaunchTemplateData.IamInstanceProfile.Arn", "arn:x"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        let data = template_data(&p);
        assert_eq!(
            data,
            serde_json::json!({
                "ImageId": "ami-1",
                "SecurityGroupIds": ["sg-1", "sg-2"],
                "NetworkInterfaces": [{"SubnetId": "subnet-1", "DeviceIndex": 0, "Groups": ["sg-3"], "AssociatePublicIpAddress": true}],
                "TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "k", "Value": "v"}]}],
                "IamInstanceProfile": {"Arn": "arn:x"},
            })
        );
        let xml = data_xml(&data);
        for part in [
            "<securityGroupIdSet><item>sg-1</item><item>sg-2</item></securityGroupIdSet>",
            "<groupSet><item>sg-3</item></groupSet>",
            "<tagSpecificationSet><item><resourceType>instance</resourceType><tagSet><item><key>k</key><value>v</value></item></tagSet></item></tagSpecificationSet>",
            "<iamInstanceProfile><arn>arn:x</arn></iamInstanceProfile>",
            "<deviceIndex>0</deviceIndex>",
        ] {
            assert!(xml.contains(part), "{part} not in {xml}");
        }
    }
}
