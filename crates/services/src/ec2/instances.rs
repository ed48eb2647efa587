//! Instances and launch templates: RunInstances records an instance (a private address drawn
//! from its subnet, a primary network interface, states pending → running), Stop/Start/Terminate
//! move its state; no virtual machine runs. Launch templates keep numbered versions of
//! `LaunchTemplateData` in the API's member names. Other services (EC2 Auto Scaling, ECS
//! capacity) launch through [`InstanceRequest`] and read through the views here.

use super::errors::{check_id, invalid_value};
use super::images;
use super::model::*;
use super::ops::{claim_ip, new_interface, now, release_interface};
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;
use serde_json::Value;

/// What to launch (RunInstances' essentials), as other services ask for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstanceRequest {
    pub image_id: String,
    pub instance_type: String,
    /// `None`: the default VPC's subnet in `availability_zone`, or its first.
    pub subnet_id: Option<String>,
    pub availability_zone: Option<String>,
    pub security_group_ids: Vec<String>,
    pub key_name: Option<String>,
    pub iam_instance_profile_arn: Option<String>,
    pub user_data: Option<String>,
    pub tags: Vec<(String, String)>,
    pub count: usize,
    /// An existing, unattached interface to launch with as the primary (device index 0):
    /// its subnet, groups and address are the instance's, and it stays when the instance goes.
    pub network_interface_id: Option<String>,
}

/// An instance as other services see it.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceView {
    pub instance_id: String,
    pub private_ip_address: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    /// `pending`, `running`, `stopping`, `stopped`, `shutting-down` or `terminated`.
    pub state: String,
}

/// One version of a launch template, as other services read it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchTemplateView {
    pub launch_template_id: String,
    pub launch_template_name: String,
    pub version_number: i64,
    /// `LaunchTemplateData` in the API's member names (ImageId, InstanceType, ...).
    pub data: Value,
}

/// The code and number AWS gives each instance state.
pub fn state_code(state: &str) -> i64 {
    match state {
        "pending" => 0,
        "running" => 16,
        "shutting-down" => 32,
        "terminated" => 48,
        "stopping" => 64,
        "stopped" => 80,
        _ => 0,
    }
}

fn instance_view(i: &Instance) -> InstanceView {
    InstanceView {
        instance_id: i.id.clone(),
        private_ip_address: i.private_ip.clone(),
        subnet_id: i.subnet_id.clone(),
        vpc_id: i.vpc_id.clone(),
        availability_zone: i.availability_zone.clone(),
        state: i.state.clone(),
    }
}

/// AWS's not-found for one or several instance ids.
pub(super) fn instances_not_found(ids: &[&str]) -> AwsError {
    match ids {
        [one] => AwsError::bad_request(
            "InvalidInstanceID.NotFound",
            format!("The instance ID '{one}' does not exist"),
        ),
        many => AwsError::bad_request(
            "InvalidInstanceID.NotFound",
            format!("The instance IDs '{}' do not exist", many.join(", ")),
        ),
    }
}

fn template_not_found_by_id(id: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidLaunchTemplateId.NotFound",
        format!("The specified launch template, with template ID {id}, does not exist."),
    )
}

fn template_not_found_by_name(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidLaunchTemplateName.NotFoundException",
        format!("The specified launch template, with template name {name}, does not exist."),
    )
}

/// A launch template's name: 3 to 128 of letters, digits and `-().\/_`.
fn check_template_name(name: &str) -> Result<(), AwsError> {
    let ok = (3..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-().\\/_".contains(c));
    if ok {
        Ok(())
    } else {
        Err(AwsError::bad_request(
            "InvalidLaunchTemplateName.MalformedException",
            "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'",
        ))
    }
}

/// An instance type looks like `family.size` (`t3.micro`); AWS's catalogue is not kept.
fn check_instance_type(t: &str) -> Result<(), AwsError> {
    let ok = t.split_once('.').is_some_and(|(family, size)| {
        !family.is_empty()
            && !size.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
    });
    if ok {
        Ok(())
    } else {
        Err(AwsError::bad_request(
            "InvalidParameterValue",
            format!("Invalid value '{t}' for InstanceType."),
        ))
    }
}

pub fn check_image(image_id: &str) -> Result<&'static images::Image, AwsError> {
    check_id(image_id, "ami")?;
    images::image(image_id).ok_or_else(|| {
        AwsError::bad_request(
            "InvalidAMIID.NotFound",
            format!("The image id '[{image_id}]' does not exist"),
        )
    })
}

impl Region {
    fn instances_mut(&mut self) -> impl Iterator<Item = &mut Instance> + '_ {
        self.items.values_mut().filter_map(|r| match r {
            Resource::Instance(i) => Some(i),
            _ => None,
        })
    }

    pub fn instance(&self, id: &str) -> Result<&Instance, AwsError> {
        check_id(id, "i")?;
        match self.items.get(id) {
            Some(Resource::Instance(i)) => Ok(i),
            _ => Err(instances_not_found(&[id])),
        }
    }

    fn instance_mut(&mut self, id: &str) -> Result<&mut Instance, AwsError> {
        check_id(id, "i")?;
        match self.items.get_mut(id) {
            Some(Resource::Instance(i)) => Ok(i),
            _ => Err(instances_not_found(&[id])),
        }
    }

    /// The template named by id or name.
    pub fn template(
        &self,
        id: Option<&str>,
        name: Option<&str>,
    ) -> Result<&LaunchTemplate, AwsError> {
        match (id, name) {
            (Some(id), _) => {
                check_id(id, "lt")?;
                match self.items.get(id) {
                    Some(Resource::LaunchTemplate(t)) => Ok(t),
                    _ => Err(template_not_found_by_id(id)),
                }
            }
            (None, Some(name)) => self
                .items
                .values()
                .find_map(|r| match r {
                    Resource::LaunchTemplate(t) if t.name == name => Some(t),
                    _ => None,
                })
                .ok_or_else(|| template_not_found_by_name(name)),
            (None, None) => Err(AwsError::bad_request(
                "MissingParameter",
                "The request must include either the launch template ID or the launch template name.",
            )),
        }
    }

    fn template_mut(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
    ) -> Result<&mut LaunchTemplate, AwsError> {
        let id = self.template(id, name)?.id.clone();
        match self.items.get_mut(&id) {
            Some(Resource::LaunchTemplate(t)) => Ok(t),
            _ => Err(template_not_found_by_id(&id)),
        }
    }

    /// Transitional states settle: what the next Describe (a waiter's first poll) sees.
    pub fn settle_instances(&mut self, touched: &mut Vec<String>) {
        for i in self.instances_mut() {
            let next = match i.state.as_str() {
                "pending" => "running",
                "stopping" => "stopped",
                "shutting-down" => "terminated",
                _ => continue,
            };
            i.state = next.into();
            touched.push(i.id.clone());
        }
    }
}

/// The version a selector names: `None`/`$Default`, `$Latest` or a number.
pub fn template_version<'a>(
    t: &'a LaunchTemplate,
    version: Option<&str>,
) -> Result<&'a TemplateVersion, AwsError> {
    let number = match version {
        None | Some("$Default") => t.default_version,
        Some("$Latest") => t.latest_version(),
        Some(n) => n.parse::<i64>().map_err(|_| {
            AwsError::bad_request(
                "InvalidLaunchTemplateId.VersionNotFound",
                format!("Could not find launch template version {n} for the launch template with ID {}.", t.id),
            )
        })?,
    };
    t.versions.iter().find(|v| v.number == number).ok_or_else(|| {
        AwsError::bad_request(
            "InvalidLaunchTemplateId.VersionNotFound",
            format!("Could not find launch template version {number} for the launch template with ID {}.", t.id),
        )
    })
}

fn template_view(t: &LaunchTemplate, v: &TemplateVersion) -> LaunchTemplateView {
    LaunchTemplateView {
        launch_template_id: t.id.clone(),
        launch_template_name: t.name.clone(),
        version_number: v.number,
        data: v.data.clone(),
    }
}

/// The subnet an instance goes into: the given one, or the default VPC's in the zone.
/// The interface a launch names as its primary: it must exist and be free, and one instance
/// only can have it.
fn free_interface(r: &Region, id: &str, count: usize) -> Result<NetworkInterface, AwsError> {
    let eni = r.interface(id)?;
    if count > 1 {
        return Err(AwsError::bad_request(
            "InvalidParameterCombination",
            "Network interfaces and an instance count greater than 1 are not allowed.",
        ));
    }
    if eni.attachment.is_some() {
        return Err(super::interfaces::interface_in_use(id));
    }
    Ok(eni.clone())
}

fn placement(r: &Region, req: &InstanceRequest) -> Result<Subnet, AwsError> {
    let subnet = match &req.subnet_id {
        Some(s) => r.subnet(s)?.clone(),
        None => {
            let vpc = r.default_vpc().ok_or_else(|| {
                AwsError::bad_request("VPCIdNotSpecified", "No default VPC for this user")
            })?;
            let mut subnets: Vec<&Subnet> = r
                .subnets()
                .filter(|s| s.vpc_id == vpc.id && s.default_for_az)
                .collect();
            subnets.sort_by(|a, b| a.availability_zone.cmp(&b.availability_zone));
            let pick = match &req.availability_zone {
                Some(z) => subnets
                    .into_iter()
                    .find(|s| &s.availability_zone == z)
                    .ok_or_else(|| {
                        invalid_value(
                            z,
                            "availabilityZone",
                            "No default subnet for availability zone.",
                        )
                    })?,
                None => subnets.into_iter().next().ok_or_else(|| {
                    AwsError::bad_request(
                        "MissingInput",
                        "No subnets found for the default VPC. Please specify a subnet.",
                    )
                })?,
            };
            pick.clone()
        }
    };
    if let Some(z) = &req.availability_zone
        && z != &subnet.availability_zone
    {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            format!(
                "Value ({z}) for parameter availabilityZone is invalid. Subnet '{}' is in the availability zone {}",
                subnet.id, subnet.availability_zone
            ),
        ));
    }
    Ok(subnet)
}

impl Ec2Service {
    // ----- instances -----

    /// Launches `req.count` instances (all or none), each with its own interface and address.
    pub fn run_instances(
        &self,
        region: &str,
        req: InstanceRequest,
    ) -> Result<Vec<InstanceView>, AwsError> {
        self.launch(region, req, None)
            .map(|all| all.iter().map(instance_view).collect())
    }

    /// RunInstances: `template` is the launch template `(id, version)` it came from.
    pub(crate) fn launch(
        &self,
        region: &str,
        req: InstanceRequest,
        template: Option<(String, String)>,
    ) -> Result<Vec<Instance>, AwsError> {
        if req.image_id.is_empty() {
            return Err(super::errors::missing("ImageId"));
        }
        check_image(&req.image_id)?;
        let instance_type = if req.instance_type.is_empty() {
            "m1.small".to_string()
        } else {
            req.instance_type.clone()
        };
        check_instance_type(&instance_type)?;
        if req.count == 0 {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                "Invalid value '0' for MinCount. Must be greater than 0.",
            ));
        }
        self.change(region, |r, touched| {
            let primary = match &req.network_interface_id {
                Some(id) => Some(free_interface(r, id, req.count)?),
                None => None,
            };
            let subnet = match &primary {
                Some(eni) => r.subnet(&eni.subnet_id)?.clone(),
                None => placement(r, &req)?,
            };
            for g in &req.security_group_ids {
                if r.group(g)?.vpc_id != subnet.vpc_id {
                    return Err(AwsError::bad_request(
                        "InvalidParameter",
                        format!(
                            "Security group {g} and subnet {} belong to different networks.",
                            subnet.id
                        ),
                    ));
                }
            }
            if let Some(k) = &req.key_name {
                r.key_pair_named(k)?;
            }
            let groups = match &primary {
                Some(eni) => eni.groups.clone(),
                None if req.security_group_ids.is_empty() => {
                    r.default_group_id(&subnet.vpc_id).into_iter().collect()
                }
                None => req.security_group_ids.clone(),
            };
            // Every address first, so a subnet without room for all launches none.
            let mut planned = Vec::new();
            let mut scratch = subnet.clone();
            for _ in 0..req.count {
                let ip = match &primary {
                    Some(eni) => eni.private_ip.clone(),
                    None => r.free_ip(&scratch)?,
                };
                scratch.used_ips.push(ip.clone());
                planned.push(ip);
            }
            let reservation_id = new_id("r");
            let launched = now();
            let mut out = Vec::new();
            for (index, ip) in planned.into_iter().enumerate() {
                let id = new_id("i");
                let mut eni = match &primary {
                    Some(eni) => eni.clone(),
                    None => {
                        let mut eni = new_interface(
                            r,
                            &subnet,
                            groups.clone(),
                            String::new(),
                            "interface",
                            None,
                        )?;
                        eni.private_ip = ip.clone();
                        claim_ip(r, &subnet.id, &ip, touched)?;
                        eni
                    }
                };
                eni.attachment = Some(InterfaceAttachment {
                    id: new_id("eni-attach"),
                    instance_id: id.clone(),
                    device_index: 0,
                    attached: launched.clone(),
                    delete_on_termination: primary.is_none(),
                });
                r.address_follow_interface(&eni.id, Some(&id), touched);
                let public_ip = subnet.map_public_ip_on_launch.then(|| {
                    use rand::Rng;
                    let mut rng = rand::rng();
                    format!(
                        "3.{}.{}.{}",
                        rng.random_range(0..=255),
                        rng.random_range(0..=255),
                        rng.random_range(1..=254)
                    )
                });
                let instance = Instance {
                    id,
                    reservation_id: reservation_id.clone(),
                    launch_index: index,
                    image_id: req.image_id.clone(),
                    instance_type: instance_type.clone(),
                    subnet_id: subnet.id.clone(),
                    vpc_id: subnet.vpc_id.clone(),
                    availability_zone: subnet.availability_zone.clone(),
                    private_ip: ip,
                    public_ip,
                    network_interface_id: Some(eni.id.clone()),
                    mac_address: eni.mac_address.clone(),
                    groups: groups.clone(),
                    key_name: req.key_name.clone(),
                    iam_instance_profile_arn: req.iam_instance_profile_arn.clone(),
                    user_data: req.user_data.clone(),
                    launch_template: template.clone(),
                    state: "pending".into(),
                    state_transition_reason: String::new(),
                    launch_time: launched.clone(),
                    tags: req.tags.iter().cloned().collect(),
                };
                r.insert(Resource::NetworkInterface(eni), touched);
                r.insert(Resource::Instance(instance.clone()), touched);
                out.push(instance);
            }
            Ok(out)
        })
    }

    /// Moves instances to `to` through its transitional state; answers each one's
    /// (id, previous state, new state). All ids are checked before any changes.
    pub(crate) fn transition(
        &self,
        region: &str,
        ids: &[String],
        to: Transition,
    ) -> Result<Vec<(String, String, String)>, AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            let missing: Vec<&str> = ids
                .iter()
                .map(String::as_str)
                .filter(|id| r.instance(id).is_err())
                .collect();
            for id in &missing {
                check_id(id, "i")?;
            }
            if !missing.is_empty() {
                return Err(instances_not_found(&missing));
            }
            for id in ids {
                let state = r.instance(id)?.state.clone();
                let allowed = match to {
                    Transition::Stop => matches!(state.as_str(), "running" | "stopped"),
                    Transition::Start => matches!(state.as_str(), "stopped" | "running"),
                    Transition::Terminate => true,
                };
                if !allowed {
                    let verb = if to == Transition::Stop {
                        "stopped"
                    } else {
                        "started"
                    };
                    return Err(AwsError::bad_request(
                        "IncorrectInstanceState",
                        format!(
                            "The instance '{id}' is not in a state from which it can be {verb}."
                        ),
                    ));
                }
            }
            let mut out = Vec::new();
            for id in ids {
                let i = r.instance(id)?.clone();
                let next = match (to, i.state.as_str()) {
                    (Transition::Stop, "stopped") | (Transition::Start, "running") => {
                        i.state.clone()
                    }
                    (Transition::Terminate, "terminated") => i.state.clone(),
                    (Transition::Stop, _) => "stopping".into(),
                    (Transition::Start, _) => "pending".into(),
                    (Transition::Terminate, _) => "shutting-down".into(),
                };
                if to == Transition::Terminate {
                    r.detach_volumes_of(id, touched);
                    // Every interface attached to it goes with it or is detached, as its
                    // attachment says.
                    let attached: Vec<(String, bool)> = r
                        .interfaces()
                        .filter_map(|n| {
                            let a = n.attachment.as_ref()?;
                            (a.instance_id == *id).then(|| (n.id.clone(), a.delete_on_termination))
                        })
                        .collect();
                    for (eni, delete) in attached {
                        if delete {
                            release_interface(r, &eni, touched)?;
                        } else {
                            r.interface_mut(&eni)?.attachment = None;
                            r.address_follow_interface(&eni, None, touched);
                            touched.push(eni);
                        }
                    }
                }
                let x = r.instance_mut(id)?;
                if to == Transition::Terminate {
                    x.network_interface_id = None;
                    x.public_ip = None;
                }
                if x.state != next {
                    x.state_transition_reason = match to {
                        Transition::Start => String::new(),
                        _ => format!(
                            "User initiated ({})",
                            chrono::Utc::now().format("%Y-%m-%d %H:%M:%S GMT")
                        ),
                    };
                }
                if to == Transition::Start && x.state == "stopped" {
                    x.launch_time = now();
                }
                x.state = next.clone();
                touched.push(id.clone());
                out.push((id.clone(), i.state.clone(), next));
            }
            Ok(out)
        })
    }

    pub fn terminate_instances(&self, region: &str, ids: &[String]) -> Result<(), AwsError> {
        self.transition(region, ids, Transition::Terminate)
            .map(|_| ())
    }

    /// One instance, its transitional state settled.
    pub fn instance(&self, region: &str, id: &str) -> Result<InstanceView, AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            Ok(instance_view(r.instance(id)?))
        })
    }

    pub fn image_exists(&self, _region: &str, image_id: &str) -> bool {
        images::image(image_id).is_some()
    }

    /// Settles every instance's transitional state (DescribeInstances' first step).
    pub(crate) fn settle_instances(&self, region: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            Ok(())
        })
    }

    // ----- launch templates -----

    pub fn launch_template(
        &self,
        region: &str,
        id: Option<&str>,
        name: Option<&str>,
        version: Option<&str>,
    ) -> Result<LaunchTemplateView, AwsError> {
        self.read(region, |r| {
            let t = r.template(id, name)?;
            Ok(template_view(t, template_version(t, version)?))
        })
    }

    pub fn create_launch_template(
        &self,
        region: &str,
        name: &str,
        description: Option<String>,
        data: Value,
        tags: Tags,
    ) -> Result<LaunchTemplate, AwsError> {
        check_template_name(name)?;
        check_template_data(&data)?;
        self.change(region, |r, touched| {
            if r.template(None, Some(name)).is_ok() {
                return Err(AwsError::bad_request(
                    "InvalidLaunchTemplateName.AlreadyExistsException",
                    "Launch template name already in use.",
                ));
            }
            let created = now();
            let t = LaunchTemplate {
                id: new_id("lt"),
                name: name.to_string(),
                default_version: 1,
                versions: vec![TemplateVersion {
                    number: 1,
                    description,
                    data,
                    created: created.clone(),
                }],
                created,
                tags,
            };
            r.insert(Resource::LaunchTemplate(t.clone()), touched);
            Ok(t)
        })
    }

    /// A new version: `data` over the source version's data when a source is named.
    pub fn create_launch_template_version(
        &self,
        region: &str,
        id: Option<&str>,
        name: Option<&str>,
        source: Option<&str>,
        description: Option<String>,
        data: Value,
    ) -> Result<(LaunchTemplate, TemplateVersion), AwsError> {
        check_template_data(&data)?;
        self.change(region, |r, touched| {
            let t = r.template_mut(id, name)?;
            let data = match source {
                Some(s) => {
                    let mut base = template_version(t, Some(s))?.data.clone();
                    merge(&mut base, data);
                    base
                }
                None => data,
            };
            let v = TemplateVersion {
                number: t.latest_version() + 1,
                description,
                data,
                created: now(),
            };
            t.versions.push(v.clone());
            touched.push(t.id.clone());
            Ok((t.clone(), v))
        })
    }

    pub fn set_default_launch_template_version(
        &self,
        region: &str,
        id: Option<&str>,
        name: Option<&str>,
        version: &str,
    ) -> Result<LaunchTemplate, AwsError> {
        self.change(region, |r, touched| {
            let t = r.template_mut(id, name)?;
            let number = template_version(t, Some(version))?.number;
            t.default_version = number;
            touched.push(t.id.clone());
            Ok(t.clone())
        })
    }

    pub fn delete_launch_template(
        &self,
        region: &str,
        id: Option<&str>,
        name: Option<&str>,
    ) -> Result<LaunchTemplate, AwsError> {
        self.change(region, |r, touched| {
            let t = r.template(id, name)?.clone();
            r.remove(&t.id, touched);
            Ok(t)
        })
    }

    /// Deletes versions; the default version cannot go. Answers (deleted, refused with why).
    pub fn delete_launch_template_versions(
        &self,
        region: &str,
        id: Option<&str>,
        name: Option<&str>,
        versions: &[String],
    ) -> Result<VersionsDeleted, AwsError> {
        self.change(region, |r, touched| {
            let t = r.template_mut(id, name)?;
            let mut gone = Vec::new();
            let mut refused = Vec::new();
            for v in versions {
                match v.parse::<i64>() {
                    Ok(n) if n == t.default_version => refused.push((
                        v.clone(),
                        "launchTemplateVersionIsDefault".to_string(),
                        "the default version of a launch template cannot be deleted".to_string(),
                    )),
                    Ok(n) if t.versions.iter().any(|x| x.number == n) => {
                        t.versions.retain(|x| x.number != n);
                        gone.push(n);
                    }
                    _ => refused.push((
                        v.clone(),
                        "launchTemplateVersionDoesNotExist".to_string(),
                        "Could not find launch template version".to_string(),
                    )),
                }
            }
            touched.push(t.id.clone());
            Ok((t.clone(), gone, refused))
        })
    }
}

/// What DeleteLaunchTemplateVersions did: the template, the versions deleted, and those
/// refused as (version, code, message).
pub(crate) type VersionsDeleted = (LaunchTemplate, Vec<i64>, Vec<(String, String, String)>);

/// Which way [`Ec2Service::transition`] moves instances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Transition {
    Stop,
    Start,
    Terminate,
}

/// Launch template data must be an object whose image, if any, exists.
fn check_template_data(data: &Value) -> Result<(), AwsError> {
    let Some(obj) = data.as_object() else {
        return Err(super::errors::missing("LaunchTemplateData"));
    };
    if let Some(image) = obj.get("ImageId").and_then(Value::as_str)
        && !image.starts_with("resolve:ssm:")
    {
        check_image(image)?;
    }
    if let Some(t) = obj.get("InstanceType").and_then(Value::as_str) {
        check_instance_type(t)?;
    }
    Ok(())
}

/// `over`'s top-level members replace `base`'s (CreateLaunchTemplateVersion with a source).
fn merge(base: &mut Value, over: Value) {
    match (base.as_object_mut(), over) {
        (Some(b), Value::Object(o)) => b.extend(o),
        (_, o) => *base = o,
    }
}

/// What RunInstances takes from a launch template version (`data`) where the request is silent.
pub(crate) fn fill_from_template(req: &mut InstanceRequest, data: &Value) {
    let s = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    if req.image_id.is_empty() {
        req.image_id = s("ImageId").unwrap_or_default();
    }
    if req.instance_type.is_empty() {
        req.instance_type = s("InstanceType").unwrap_or_default();
    }
    if req.key_name.is_none() {
        req.key_name = s("KeyName");
    }
    if req.user_data.is_none() {
        req.user_data = s("UserData");
    }
    if req.iam_instance_profile_arn.is_none() {
        req.iam_instance_profile_arn = data
            .pointer("/IamInstanceProfile/Arn")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    if req.security_group_ids.is_empty() {
        req.security_group_ids = strings(data.get("SecurityGroupIds"));
    }
    if let Some(nic) = data.pointer("/NetworkInterfaces/0") {
        if req.subnet_id.is_none() {
            req.subnet_id = nic
                .get("SubnetId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if req.security_group_ids.is_empty() {
            req.security_group_ids = strings(nic.get("Groups"));
        }
    }
    if req.availability_zone.is_none() {
        req.availability_zone = data
            .pointer("/Placement/AvailabilityZone")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    for spec in data
        .get("TagSpecifications")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if spec.get("ResourceType").and_then(Value::as_str) != Some("instance") {
            continue;
        }
        for t in spec
            .get("Tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(k), Some(v)) = (
                t.get("Key").and_then(Value::as_str),
                t.get("Value").and_then(Value::as_str),
            ) && !req.tags.iter().any(|(x, _)| x == k)
            {
                req.tags.push((k.to_string(), v.to_string()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    fn service(store: Arc<Store>) -> Ec2Service {
        Ec2Service::new(store, &Config::default()).unwrap()
    }

    const AMI: &str = "ami-0a3c3a20c09d6f377";

    #[test]
    fn instances_draw_addresses_and_move_through_their_states() {
        let store = Arc::new(Store::in_memory().unwrap());
        let ec2 = service(store.clone());
        let req = InstanceRequest {
            image_id: AMI.into(),
            instance_type: "t3.micro".into(),
            availability_zone: Some("us-east-1b".into()),
            tags: vec![("Name".into(), "web".into())],
            count: 2,
            ..Default::default()
        };
        let made = ec2.run_instances("us-east-1", req.clone()).unwrap();
        assert_eq!(made.len(), 2);
        assert!(
            made.iter()
                .all(|i| i.state == "pending" && i.availability_zone == "us-east-1b")
        );
        assert_eq!(made[0].private_ip_address, "172.31.16.4");
        assert_eq!(made[1].private_ip_address, "172.31.16.5");
        let id = made[0].instance_id.clone();
        assert_eq!(ec2.instance("us-east-1", &id).unwrap().state, "running");

        // Bad input changes nothing.
        let bad = |r: InstanceRequest| ec2.run_instances("us-east-1", r).unwrap_err().code;
        assert_eq!(
            bad(InstanceRequest {
                image_id: "ami-00000000000000000".into(),
                ..req.clone()
            }),
            "InvalidAMIID.NotFound"
        );
        assert_eq!(
            bad(InstanceRequest {
                image_id: "nope".into(),
                ..req.clone()
            }),
            "InvalidAMIID.Malformed"
        );
        assert_eq!(
            bad(InstanceRequest {
                instance_type: "huge".into(),
                ..req.clone()
            }),
            "InvalidParameterValue"
        );
        assert_eq!(
            bad(InstanceRequest {
                key_name: Some("nokey".into()),
                ..req.clone()
            }),
            "InvalidKeyPair.NotFound"
        );
        let subnet = ec2.instance("us-east-1", &id).unwrap().subnet_id;
        let used = |e: &Ec2Service| {
            e.read("us-east-1", |r| Ok(r.subnet(&subnet)?.used_ips.len()))
                .unwrap()
        };
        assert_eq!(used(&ec2), 2);

        // Terminating frees the address and interface; the instance stays, terminated.
        let e = ec2
            .terminate_instances("us-east-1", &[id.clone(), "i-0123456789abcdef0".into()])
            .unwrap_err();
        assert_eq!(
            e.message,
            "The instance ID 'i-0123456789abcdef0' does not exist"
        );
        ec2.terminate_instances("us-east-1", std::slice::from_ref(&id))
            .unwrap();
        assert_eq!(used(&ec2), 1);
        let again = service(store);
        assert_eq!(
            again.instance("us-east-1", &id).unwrap().state,
            "terminated"
        );
        let e = again
            .transition("us-east-1", std::slice::from_ref(&id), Transition::Start)
            .unwrap_err();
        assert_eq!(e.code, "IncorrectInstanceState");
    }

    #[test]
    fn launch_templates_keep_versions() {
        let ec2 = service(Arc::new(Store::in_memory().unwrap()));
        let t = ec2
            .create_launch_template(
                "us-east-1",
                "web",
                None,
                serde_json::json!({"ImageId": AMI, "InstanceType": "t3.micro"}),
                Tags::new(),
            )
            .unwrap();
        let dup = ec2.create_launch_template(
            "us-east-1",
            "web",
            None,
            serde_json::json!({}),
            Tags::new(),
        );
        assert_eq!(
            dup.unwrap_err().code,
            "InvalidLaunchTemplateName.AlreadyExistsException"
        );
        let (_, v2) = ec2
            .create_launch_template_version(
                "us-east-1",
                Some(&t.id),
                None,
                Some("1"),
                None,
                serde_json::json!({"InstanceType": "t3.large"}),
            )
            .unwrap();
        assert_eq!(v2.number, 2);
        assert_eq!(v2.data["ImageId"], AMI);
        let latest = ec2
            .launch_template("us-east-1", None, Some("web"), Some("$Latest"))
            .unwrap();
        assert_eq!(latest.data["InstanceType"], "t3.large");
        assert_eq!(
            ec2.launch_template("us-east-1", Some(&t.id), None, None)
                .unwrap()
                .version_number,
            1
        );
        let e = ec2
            .launch_template("us-east-1", Some(&t.id), None, Some("9"))
            .unwrap_err();
        assert_eq!(e.code, "InvalidLaunchTemplateId.VersionNotFound");
        let e = ec2
            .launch_template("us-east-1", None, Some("nope"), None)
            .unwrap_err();
        assert_eq!(e.code, "InvalidLaunchTemplateName.NotFoundException");

        let mut req = InstanceRequest {
            count: 1,
            ..Default::default()
        };
        fill_from_template(&mut req, &latest.data);
        assert_eq!(ec2.run_instances("us-east-1", req).unwrap().len(), 1);
    }
}
