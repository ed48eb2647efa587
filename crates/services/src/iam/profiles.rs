//! Instance profiles and service-linked roles.

use super::IamService;
use super::model::{DeletionTask, InstanceProfile, Role};
use super::principals::{is_service_linked, role_not_found};
use super::roles::check_description;
use super::state::{Changes, Kind, Put, key};
use super::validate::{
    self, already_exists, constraint, delete_conflict, invalid_input, limit_exceeded, merge_tags,
    new_id, no_such_entity,
};
use chrono::{SubsecRound, Utc};
use cumulo_wire::AwsError;

fn profile_not_found(name: &str) -> AwsError {
    no_such_entity(format!("Instance Profile {name} cannot be found."))
}

/// Service principals whose service-linked role name is not simply derived from the principal.
const SERVICE_ROLE_NAMES: &[(&str, &str)] = &[
    ("autoscaling.amazonaws.com", "AutoScaling"),
    ("elasticbeanstalk.amazonaws.com", "ElasticBeanstalk"),
    ("elasticloadbalancing.amazonaws.com", "ElasticLoadBalancing"),
    ("ecs.amazonaws.com", "ECS"),
    ("eks.amazonaws.com", "AmazonEKS"),
    ("rds.amazonaws.com", "RDS"),
    ("spot.amazonaws.com", "EC2Spot"),
    ("spotfleet.amazonaws.com", "EC2SpotFleet"),
    ("es.amazonaws.com", "AmazonElasticsearchService"),
    ("opensearchservice.amazonaws.com", "AmazonOpenSearchService"),
    ("organizations.amazonaws.com", "Organizations"),
    ("cloudtrail.amazonaws.com", "CloudTrail"),
    ("config.amazonaws.com", "Config"),
    ("ssm.amazonaws.com", "AmazonSSM"),
    ("lambda.amazonaws.com", "Lambda"),
    ("replicator.lambda.amazonaws.com", "LambdaReplicator"),
    (
        "dynamodb.application-autoscaling.amazonaws.com",
        "ApplicationAutoScaling_DynamoDBTable",
    ),
    (
        "ecs.application-autoscaling.amazonaws.com",
        "ApplicationAutoScaling_ECSService",
    ),
    (
        "ec2.application-autoscaling.amazonaws.com",
        "ApplicationAutoScaling_EC2SpotFleetRequest",
    ),
    (
        "lambda.application-autoscaling.amazonaws.com",
        "ApplicationAutoScaling_LambdaConcurrency",
    ),
    (
        "rds.application-autoscaling.amazonaws.com",
        "ApplicationAutoScaling_RDSCluster",
    ),
];

/// `AWSServiceRoleFor<Service>` for a service principal: the table's name, else the principal's
/// labels before `.amazonaws.com`, each capitalised (`foo-bar.amazonaws.com` → `FooBar`).
pub fn service_linked_role_name(service: &str) -> String {
    if let Some((_, n)) = SERVICE_ROLE_NAMES.iter().find(|(s, _)| *s == service) {
        return format!("AWSServiceRoleFor{n}");
    }
    let stem = service.strip_suffix(".amazonaws.com").unwrap_or(service);
    let mut name = String::from("AWSServiceRoleFor");
    for part in stem.split(['.', '-']).filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    name
}

impl IamService {
    pub fn create_instance_profile(
        &self,
        account: &str,
        name: &str,
        path: Option<&str>,
        tags: &[(String, String)],
    ) -> Result<InstanceProfile, AwsError> {
        validate::name(name, "instanceProfileName", 128)?;
        let path = path.unwrap_or("/");
        validate::path(path)?;
        validate::tags(tags)?;
        self.state.mutate(account, |a| {
            if a.profiles.contains_key(&key(name)) {
                return Err(already_exists(format!(
                    "Instance Profile {name} already exists."
                )));
            }
            let p = InstanceProfile {
                name: name.to_string(),
                id: new_id("AIPA"),
                path: path.to_string(),
                arn: format!("arn:aws:iam::{account}:instance-profile{path}{name}"),
                create_date: Utc::now().trunc_subsecs(0),
                roles: Vec::new(),
                tags: tags.to_vec(),
            };
            Ok((p.clone(), Changes::put(Put::Profile(p))))
        })
    }

    /// GetInstanceProfile: the profile and its roles.
    pub fn get_instance_profile(
        &self,
        account: &str,
        name: &str,
    ) -> Result<(InstanceProfile, Vec<Role>), AwsError> {
        validate::name(name, "instanceProfileName", 128)?;
        self.state.read(account, |a| {
            let p = a
                .profiles
                .get(&key(name))
                .cloned()
                .ok_or_else(|| profile_not_found(name))?;
            let roles = p
                .roles
                .iter()
                .filter_map(|r| a.roles.get(r).cloned())
                .collect();
            Ok((p, roles))
        })
    }

    pub fn list_instance_profiles(
        &self,
        account: &str,
        path_prefix: Option<&str>,
    ) -> Result<Vec<(InstanceProfile, Vec<Role>)>, AwsError> {
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        Ok(self.state.read(account, |a| {
            a.profiles
                .values()
                .filter(|p| path_prefix.is_none_or(|pp| p.path.starts_with(pp)))
                .map(|p| {
                    let roles = p
                        .roles
                        .iter()
                        .filter_map(|r| a.roles.get(r).cloned())
                        .collect();
                    (p.clone(), roles)
                })
                .collect()
        }))
    }

    pub fn list_instance_profiles_for_role(
        &self,
        account: &str,
        role: &str,
    ) -> Result<Vec<(InstanceProfile, Vec<Role>)>, AwsError> {
        validate::name(role, "roleName", 64)?;
        self.state.read(account, |a| {
            a.role(role)?;
            let k = key(role);
            Ok(a.profiles
                .values()
                .filter(|p| p.roles.contains(&k))
                .map(|p| {
                    let roles = p
                        .roles
                        .iter()
                        .filter_map(|r| a.roles.get(r).cloned())
                        .collect();
                    (p.clone(), roles)
                })
                .collect())
        })
    }

    /// DeleteInstanceProfile: refused while it holds a role.
    pub fn delete_instance_profile(&self, account: &str, name: &str) -> Result<(), AwsError> {
        validate::name(name, "instanceProfileName", 128)?;
        self.state.mutate(account, |a| {
            let p = a
                .profiles
                .get(&key(name))
                .ok_or_else(|| profile_not_found(name))?;
            if !p.roles.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must remove roles from instance profile first.",
                ));
            }
            Ok(((), Changes::default().del(Kind::Profile, key(name))))
        })
    }

    /// AddRoleToInstanceProfile: a profile holds at most one role.
    pub fn add_role_to_instance_profile(
        &self,
        account: &str,
        profile: &str,
        role: &str,
    ) -> Result<(), AwsError> {
        validate::name(profile, "instanceProfileName", 128)?;
        validate::name(role, "roleName", 64)?;
        self.state.mutate(account, |a| {
            let mut p = a
                .profiles
                .get(&key(profile))
                .cloned()
                .ok_or_else(|| profile_not_found(profile))?;
            a.role(role)?;
            if !p.roles.is_empty() {
                return Err(limit_exceeded(
                    "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1",
                ));
            }
            p.roles.push(key(role));
            Ok(((), Changes::put(Put::Profile(p))))
        })
    }

    pub fn remove_role_from_instance_profile(
        &self,
        account: &str,
        profile: &str,
        role: &str,
    ) -> Result<(), AwsError> {
        validate::name(profile, "instanceProfileName", 128)?;
        validate::name(role, "roleName", 64)?;
        self.state.mutate(account, |a| {
            let mut p = a
                .profiles
                .get(&key(profile))
                .cloned()
                .ok_or_else(|| profile_not_found(profile))?;
            let r = a.role(role)?;
            let k = key(role);
            if !p.roles.contains(&k) {
                return Err(no_such_entity(format!(
                    "Role {} in Instance Profile {} cannot be found.",
                    r.name, p.name
                )));
            }
            p.roles.retain(|x| *x != k);
            Ok(((), Changes::put(Put::Profile(p))))
        })
    }

    pub fn tag_instance_profile(
        &self,
        account: &str,
        name: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        validate::name(name, "instanceProfileName", 128)?;
        validate::tags(tags)?;
        self.state.mutate(account, |a| {
            let mut p = a
                .profiles
                .get(&key(name))
                .cloned()
                .ok_or_else(|| profile_not_found(name))?;
            p.tags = merge_tags(&p.tags, tags);
            validate::tags(&p.tags)?;
            Ok(((), Changes::put(Put::Profile(p))))
        })
    }

    pub fn untag_instance_profile(
        &self,
        account: &str,
        name: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        validate::name(name, "instanceProfileName", 128)?;
        self.state.mutate(account, |a| {
            let mut p = a
                .profiles
                .get(&key(name))
                .cloned()
                .ok_or_else(|| profile_not_found(name))?;
            p.tags.retain(|(k, _)| !keys.contains(k));
            Ok(((), Changes::put(Put::Profile(p))))
        })
    }

    /// CreateServiceLinkedRole: `AWSServiceRoleFor<Service>[_<suffix>]` under
    /// `/aws-service-role/<service>/`, trusting the service principal.
    pub fn create_service_linked_role(
        &self,
        account: &str,
        service: &str,
        description: Option<&str>,
        custom_suffix: Option<&str>,
    ) -> Result<Role, AwsError> {
        let valid_service = service.ends_with(".amazonaws.com")
            && service.len() > ".amazonaws.com".len()
            && service
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
        if !valid_service {
            return Err(invalid_input(format!(
                "Service principal {service} is not a valid service principal."
            )));
        }
        if let Some(d) = description {
            check_description(d)?;
        }
        if let Some(s) = custom_suffix {
            validate::name(s, "customSuffix", 64)?;
        }
        let mut name = service_linked_role_name(service);
        if let Some(s) = custom_suffix {
            name = format!("{name}_{s}");
        }
        if name.len() > 64 {
            return Err(constraint(
                &name,
                "roleName",
                "Member must have length less than or equal to 64",
            ));
        }
        let path = format!("/aws-service-role/{service}/");
        self.state.mutate(account, |a| {
            if a.roles.contains_key(&key(&name)) {
                return Err(invalid_input(format!(
                    "Service role name {name} has been taken in this account, please try a different suffix."
                )));
            }
            let trust = format!(
                r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":{{"Service":["{service}"]}},"Action":["sts:AssumeRole"]}}]}}"#
            );
            let role = Role {
                arn: format!("arn:aws:iam::{account}:role{path}{name}"),
                name: name.clone(),
                id: new_id("AROA"),
                path: path.clone(),
                create_date: Utc::now().trunc_subsecs(0),
                assume_role_policy: trust,
                description: description.map(str::to_string),
                max_session_duration: super::roles::DEFAULT_MAX_SESSION,
                permissions_boundary: None,
                tags: Vec::new(),
                inline: Default::default(),
                attached: Vec::new(),
            };
            Ok((role.clone(), Changes::put(Put::Role(role))))
        })
    }

    /// DeleteServiceLinkedRole: deletes at once (nothing uses the role) and returns the id of a
    /// deletion task that has already succeeded.
    pub fn delete_service_linked_role(
        &self,
        account: &str,
        name: &str,
    ) -> Result<String, AwsError> {
        validate::name(name, "roleName", 64)?;
        self.state.mutate(account, |a| {
            let r = a
                .roles
                .get(&key(name))
                .ok_or_else(|| role_not_found(name))?;
            if !is_service_linked(&r.path) {
                return Err(invalid_input(format!(
                    "Role {} is not a service-linked role.",
                    r.name
                )));
            }
            if a.profiles.values().any(|p| p.roles.contains(&key(name))) {
                return Err(delete_conflict(
                    "Cannot delete entity, must remove roles from instance profile first.",
                ));
            }
            let service = r
                .path
                .trim_start_matches("/aws-service-role/")
                .trim_end_matches('/');
            let task = DeletionTask {
                id: format!(
                    "task/aws-service-role/{service}/{}/{}",
                    r.name,
                    uuid::Uuid::new_v4()
                ),
            };
            Ok((
                task.id.clone(),
                Changes::put(Put::Task(task)).del(Kind::Role, key(name)),
            ))
        })
    }

    /// GetServiceLinkedRoleDeletionStatus: `SUCCEEDED` for every task this account started.
    pub fn service_linked_role_deletion_status(
        &self,
        account: &str,
        task_id: &str,
    ) -> Result<&'static str, AwsError> {
        if !task_id.starts_with("task/aws-service-role/") {
            return Err(invalid_input(format!(
                "Invalid deletion task id: {task_id}"
            )));
        }
        self.state.read(account, |a| {
            if a.tasks.contains_key(task_id) {
                Ok("SUCCEEDED")
            } else {
                Err(no_such_entity(format!(
                    "Deletion task {task_id} cannot be found."
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_linked_role_names() {
        assert_eq!(
            service_linked_role_name("autoscaling.amazonaws.com"),
            "AWSServiceRoleForAutoScaling"
        );
        assert_eq!(
            service_linked_role_name("foo-bar.amazonaws.com"),
            "AWSServiceRoleForFooBar"
        );
    }
}
