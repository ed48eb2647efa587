//! A group's instances in EC2: what a group launches (from its launch configuration, its
//! launch template through EC2's `launch_template`, or its mixed instances policy's template
//! and first override), launched and terminated through EC2's typed operations, so EC2 lists
//! them as RunInstances made them, tagged with the group's `PropagateAtLaunch` tags and
//! `aws:autoscaling:groupName` as on AWS.

use super::{AutoScalingService, Region};
use crate::ec2::InstanceRequest;
use cumulo_wire::AwsError;
use serde_json::Value;

/// What one instance of a group is launched with.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Spec {
    pub image_id: String,
    pub instance_type: String,
    pub security_group_ids: Vec<String>,
    pub key_name: Option<String>,
    pub iam_instance_profile_arn: Option<String>,
    pub user_data: Option<String>,
}

/// A launched instance as the group records it.
#[derive(Debug, Clone)]
pub(crate) struct Launched {
    pub instance_id: String,
    pub availability_zone: String,
    pub subnet_id: String,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

fn validation(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ValidationError", message)
}

impl AutoScalingService {
    fn profile_arn(&self, profile: Option<String>) -> Option<String> {
        profile.map(|p| {
            if p.starts_with("arn:") {
                p
            } else {
                format!("arn:aws:iam::{}:instance-profile/{p}", self.account_id)
            }
        })
    }

    /// The launch template a group names, resolved by EC2 (its `Version` as given:
    /// `$Default`, `$Latest` or a number); a missing one is AWS's ValidationError.
    pub(crate) fn template_spec(&self, region: &str, lt: &Value) -> Result<Spec, AwsError> {
        let id = text(lt, "LaunchTemplateId");
        let name = text(lt, "LaunchTemplateName");
        let version = text(lt, "Version");
        let view = self
            .ec2
            .launch_template(region, id.as_deref(), name.as_deref(), version.as_deref())
            .map_err(|e| {
                validation(format!(
                    "You must use a valid fully-formed launch template. {}",
                    e.message
                ))
            })?;
        let d = &view.data;
        let image_id = text(d, "ImageId").ok_or_else(|| {
            validation(
                "You must use a valid fully-formed launch template. The launch template does not specify an image ID",
            )
        })?;
        let mut groups = strings(&d["SecurityGroupIds"]);
        if groups.is_empty() {
            groups = strings(&d["NetworkInterfaces"][0]["Groups"]);
        }
        let profile = text(&d["IamInstanceProfile"], "Arn")
            .or_else(|| text(&d["IamInstanceProfile"], "Name"));
        Ok(Spec {
            image_id,
            instance_type: text(d, "InstanceType").unwrap_or_else(|| "m1.small".to_string()),
            security_group_ids: groups,
            key_name: text(d, "KeyName"),
            iam_instance_profile_arn: self.profile_arn(profile),
            user_data: text(d, "UserData"),
        })
    }

    /// The launch configuration's settings.
    pub(crate) fn configuration_spec(&self, lc: &Value) -> Spec {
        Spec {
            image_id: text(lc, "ImageId").unwrap_or_default(),
            instance_type: text(lc, "InstanceType").unwrap_or_default(),
            security_group_ids: strings(&lc["SecurityGroups"]),
            key_name: text(lc, "KeyName"),
            iam_instance_profile_arn: self.profile_arn(text(lc, "IamInstanceProfile")),
            user_data: text(lc, "UserData"),
        }
    }

    /// What the group launches now.
    pub(crate) fn group_spec(
        &self,
        region: &str,
        r: &Region,
        group: &Value,
    ) -> Result<Spec, AwsError> {
        if let Some(name) = text(group, "LaunchConfigurationName") {
            let lc = r.launch_configurations.get(&name).ok_or_else(|| {
                validation(format!(
                    "Launch configuration name not found - Launch configuration {name} not found"
                ))
            })?;
            return Ok(self.configuration_spec(lc));
        }
        if let Some(lt) = group.get("LaunchTemplate").filter(|v| v.is_object()) {
            return self.template_spec(region, lt);
        }
        let mixed = &group["MixedInstancesPolicy"]["LaunchTemplate"];
        if mixed.is_object() {
            let mut spec = self.template_spec(region, &mixed["LaunchTemplateSpecification"])?;
            if let Some(t) = text(&mixed["Overrides"][0], "InstanceType") {
                spec.instance_type = t;
            }
            return Ok(spec);
        }
        Err(validation(
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
        ))
    }

    /// Launches one instance into `subnet`.
    pub(crate) fn launch(
        &self,
        region: &str,
        spec: &Spec,
        subnet: &str,
        tags: Vec<(String, String)>,
    ) -> Result<Launched, AwsError> {
        let req = InstanceRequest {
            image_id: spec.image_id.clone(),
            instance_type: spec.instance_type.clone(),
            subnet_id: Some(subnet.to_string()),
            availability_zone: None,
            security_group_ids: spec.security_group_ids.clone(),
            key_name: spec.key_name.clone(),
            iam_instance_profile_arn: spec.iam_instance_profile_arn.clone(),
            user_data: spec.user_data.clone(),
            tags,
            count: 1,
            network_interface_id: None,
        };
        let made = self.ec2.run_instances(region, req)?;
        let view = made
            .into_iter()
            .next()
            .ok_or_else(|| AwsError::internal("EC2 launched no instance"))?;
        Ok(Launched {
            instance_id: view.instance_id,
            availability_zone: view.availability_zone,
            subnet_id: view.subnet_id,
        })
    }

    /// Terminates instances in EC2 (one EC2 no longer has is no matter).
    pub(crate) fn terminate(&self, region: &str, ids: &[String]) {
        for id in ids {
            let _ = self
                .ec2
                .terminate_instances(region, std::slice::from_ref(id));
        }
    }

    /// Whether EC2 has the image.
    pub(crate) fn image_exists(&self, region: &str, image_id: &str) -> bool {
        self.ec2.image_exists(region, image_id)
    }
}
