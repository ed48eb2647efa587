//! CloudFormation providers of key pairs, launch templates and instances.

use super::{SERVICE, TAGGED_NOT_FOUND, create_tags, retag};
use crate::ec2::instances::fill_from_template;
use crate::ec2::{Ec2Service, InstanceRequest};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, list, scalar, scalar_value, unsupported_prop};
use crate::ssm::{PutParameterInput, SsmService};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, KeyPairDecl(s.ec2.clone(), s.ssm.clone()));
    declared::register(r, Template(s.ec2.clone()));
    declared::register(r, InstanceDecl(s.ec2.clone()));
}

/// AWS::EC2::KeyPair: Ref is the key name. A key CloudFormation creates has its private key put
/// in SSM as the SecureString `/ec2/keypair/<key pair id>`, as AWS does; deleting the key pair
/// deletes that parameter.
struct KeyPairDecl(Arc<Ec2Service>, Arc<SsmService>);

fn parameter_name(key_pair_id: &str) -> String {
    format!("/ec2/keypair/{key_pair_id}")
}

#[async_trait::async_trait]
impl Declared for KeyPairDecl {
    const ATTRIBUTES: &'static [&'static str] = &["KeyPairId", "KeyFingerprint"];
    const TYPE: &'static str = "AWS::EC2::KeyPair";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "KeyName",
        "KeyType",
        "KeyFormat",
        "PublicKeyMaterial",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = crate::providers::required(props, "KeyName")?;
        let tags = create_tags(ctx, props)?;
        let k = match scalar(props, "PublicKeyMaterial")? {
            Some(material) => self
                .0
                .import_key_pair(&ctx.region, &name, &material, tags)?,
            None => {
                let (k, private) = self.0.create_key_pair(
                    &ctx.region,
                    &name,
                    scalar(props, "KeyType")?.as_deref(),
                    scalar(props, "KeyFormat")?.as_deref(),
                    tags,
                )?;
                let stored = self
                    .1
                    .put_parameter(
                        &ctx.region,
                        PutParameterInput {
                            name: parameter_name(&k.id),
                            value: private,
                            param_type: Some("SecureString".into()),
                            ..Default::default()
                        },
                    )
                    .await;
                if let Err(e) = stored {
                    let _ = self.0.delete_key_pair(&ctx.region, None, Some(&k.id));
                    return Err(e.into());
                }
                k
            }
        };
        Ok(Made::new(k.name.clone())
            .with("KeyPairId", k.id)
            .with("KeyFingerprint", k.fingerprint))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        match self.0.delete_key_pair(&ctx.region, Some(id), None)? {
            Some(key_pair_id) => {
                // An imported key has no parameter: not finding one is no failure.
                let _ = self
                    .1
                    .delete_parameter(&ctx.region, &parameter_name(&key_pair_id))
                    .await;
                Ok(())
            }
            None => Err(ProviderError::NotFound(id.to_string()).into()),
        }
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let k = self
            .0
            .read(&ctx.region, |r| r.key_pair_named(id).cloned())?;
        Ok(Made::new(k.name)
            .with("KeyPairId", k.id)
            .with("KeyFingerprint", k.fingerprint))
    }
}

/// AWS::EC2::LaunchTemplate: a change of its data is a new version, made the default, as
/// CloudFormation does.
struct Template(Arc<Ec2Service>);

/// The template's own tags: its `launch-template` tag specifications.
fn template_tags(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<crate::ec2::model::Tags, ProviderError> {
    let mut tags = create_tags(ctx, &Map::new())?;
    for spec in list(props, "TagSpecifications")? {
        if spec.get("ResourceType").and_then(Value::as_str) != Some("launch-template") {
            continue;
        }
        for t in spec
            .get("Tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(k), Some(v)) = (
                t.get("Key").and_then(scalar_value),
                t.get("Value").and_then(scalar_value),
            ) {
                tags.insert(k, v);
            }
        }
    }
    Ok(tags)
}

fn template_data(props: &Map<String, Value>) -> Result<Value, ProviderError> {
    match props.get("LaunchTemplateData") {
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        _ => Err(ProviderError::Failed(
            "Properties validation failed for resource with message: #/LaunchTemplateData: required key [LaunchTemplateData] not found".into(),
        )),
    }
}

#[async_trait::async_trait]
impl Declared for Template {
    const ATTRIBUTES: &'static [&'static str] = &[
        "LaunchTemplateId",
        "DefaultVersionNumber",
        "LatestVersionNumber",
    ];
    const TYPE: &'static str = "AWS::EC2::LaunchTemplate";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "LaunchTemplateName",
        "LaunchTemplateData",
        "VersionDescription",
        "TagSpecifications",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match scalar(props, "LaunchTemplateName")? {
            Some(n) => n,
            None => ctx.generated_name(128, ""),
        };
        let t = self.0.create_launch_template(
            &ctx.region,
            &name,
            scalar(props, "VersionDescription")?,
            template_data(props)?,
            template_tags(ctx, props)?,
        )?;
        self.made(ctx, &t.id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "LaunchTemplateData",
                "VersionDescription",
                "TagSpecifications",
            ],
        )?;
        if old.get("LaunchTemplateData") != new.get("LaunchTemplateData")
            || old.get("VersionDescription") != new.get("VersionDescription")
        {
            let (_, v) = self.0.create_launch_template_version(
                &ctx.region,
                Some(id),
                None,
                None,
                scalar(new, "VersionDescription")?,
                template_data(new)?,
            )?;
            self.0.set_default_launch_template_version(
                &ctx.region,
                Some(id),
                None,
                &v.number.to_string(),
            )?;
        }
        Ok(self.made(ctx, id)?)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.delete_launch_template(&ctx.region, Some(id), None)?;
        Ok(())
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let t = self
            .0
            .read(&ctx.region, |r| r.template(Some(id), None).cloned())?;
        Ok(Made::new(id)
            .with("LaunchTemplateId", id)
            .with("DefaultVersionNumber", t.default_version.to_string())
            .with("LatestVersionNumber", t.latest_version().to_string()))
    }
}

/// AWS::EC2::Instance: a RunInstances record, running once created; no virtual machine runs.
struct InstanceDecl(Arc<Ec2Service>);

use super::network::strings;

#[async_trait::async_trait]
impl Declared for InstanceDecl {
    const ATTRIBUTES: &'static [&'static str] = &[
        "InstanceId",
        "PrivateIp",
        "PrivateDnsName",
        "PublicIp",
        "PublicDnsName",
        "VpcId",
        "AvailabilityZone",
        "State",
    ];
    const TYPE: &'static str = "AWS::EC2::Instance";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "ImageId",
        "InstanceType",
        "SubnetId",
        "AvailabilityZone",
        "SecurityGroupIds",
        "SecurityGroups",
        "KeyName",
        "IamInstanceProfile",
        "UserData",
        "Tags",
        "LaunchTemplate",
        "NetworkInterfaces",
        // Stored by AWS for a machine that does not run here: accepted, with no local effect.
        "BlockDeviceMappings",
        "Monitoring",
        "EbsOptimized",
        "DisableApiTermination",
        "InstanceInitiatedShutdownBehavior",
        "CreditSpecification",
        "MetadataOptions",
        "PropagateTagsToVolumeOnCreation",
        "Tenancy",
        "SourceDestCheck",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "PrivateIpAddress",
            "cumulo draws an instance's private address from its subnet",
        ),
        (
            "Ipv6AddressCount",
            "cumulo's instances have no IPv6 addresses",
        ),
        ("Ipv6Addresses", "cumulo's instances have no IPv6 addresses"),
        ("Volumes", "cumulo does not emulate EBS volumes"),
        ("ElasticGpuSpecifications", "no accelerators are emulated"),
        (
            "ElasticInferenceAccelerators",
            "no accelerators are emulated",
        ),
        ("HostId", "cumulo does not emulate dedicated hosts"),
        (
            "HostResourceGroupArn",
            "cumulo does not emulate dedicated hosts",
        ),
        ("Affinity", "cumulo does not emulate dedicated hosts"),
        (
            "PlacementGroupName",
            "cumulo does not emulate placement groups",
        ),
        (
            "SsmAssociations",
            "cumulo does not emulate SSM associations",
        ),
        (
            "LicenseSpecifications",
            "cumulo does not emulate License Manager",
        ),
        ("KernelId", "cumulo's images have no separate kernels"),
        ("RamdiskId", "cumulo's images have no separate RAM disks"),
        (
            "AdditionalInfo",
            "cumulo's instances take no additional information",
        ),
        ("CpuOptions", "no virtual machine runs"),
        ("EnclaveOptions", "no virtual machine runs"),
        ("HibernationOptions", "no virtual machine runs"),
        ("PrivateDnsNameOptions", "cumulo's instances use IP names"),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;
    const LIMITATION: Option<&'static str> =
        Some("cumulo: no virtual machine runs; the instance is a record");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let nic = list(props, "NetworkInterfaces")?
            .first()
            .and_then(Value::as_object)
            .cloned();
        let mut groups = strings(props, "SecurityGroupIds")?;
        if let Some(n) = &nic {
            groups.extend(strings(n, "GroupSet")?);
        }
        for name in strings(props, "SecurityGroups")? {
            // cumulo's Ref of a group is its id even without VpcId (AWS's is the name).
            if name.starts_with("sg-") {
                groups.push(name);
                continue;
            }
            let id = self.0.read(&ctx.region, |r| {
                let vpc = r.default_vpc().map(|v| v.id.clone()).unwrap_or_default();
                r.items
                    .values()
                    .find_map(|x| match x {
                        crate::ec2::Resource::SecurityGroup(g)
                            if g.name == name && g.vpc_id == vpc =>
                        {
                            Some(g.id.clone())
                        }
                        _ => None,
                    })
                    .ok_or_else(|| crate::ec2::errors::not_found_group_name(&name))
            })?;
            groups.push(id);
        }
        let tags: Vec<(String, String)> = create_tags(ctx, props)?.into_iter().collect();
        let mut req = InstanceRequest {
            image_id: scalar(props, "ImageId")?.unwrap_or_default(),
            instance_type: scalar(props, "InstanceType")?.unwrap_or_default(),
            subnet_id: match scalar(props, "SubnetId")? {
                Some(s) => Some(s),
                None => nic
                    .as_ref()
                    .map(|n| scalar(n, "SubnetId"))
                    .transpose()?
                    .flatten(),
            },
            availability_zone: scalar(props, "AvailabilityZone")?,
            security_group_ids: groups,
            key_name: scalar(props, "KeyName")?,
            iam_instance_profile_arn: scalar(props, "IamInstanceProfile")?.map(|p| {
                if p.starts_with("arn:") {
                    p
                } else {
                    format!("arn:aws:iam::{}:instance-profile/{p}", self.0.account_id())
                }
            }),
            user_data: scalar(props, "UserData")?,
            tags,
            count: 1,
            network_interface_id: nic
                .as_ref()
                .map(|n| scalar(n, "NetworkInterfaceId"))
                .transpose()?
                .flatten(),
        };
        let mut template = None;
        if let Some(lt) = props.get("LaunchTemplate").and_then(Value::as_object) {
            let view = self.0.launch_template(
                &ctx.region,
                scalar(lt, "LaunchTemplateId")?.as_deref(),
                scalar(lt, "LaunchTemplateName")?.as_deref(),
                scalar(lt, "Version")?.as_deref(),
            )?;
            fill_from_template(&mut req, &view.data);
            template = Some((view.launch_template_id, view.version_number.to_string()));
        }
        if req.image_id.is_empty() {
            return Err(unsupported_prop(
                Self::TYPE,
                "ImageId",
                "an instance needs an image (ImageId or a launch template's)",
            )
            .into());
        }
        let made = self.0.launch(&ctx.region, req, template)?;
        let id = made.first().map(|i| i.id.clone()).unwrap_or_default();
        self.made(ctx, &id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Tags"])?;
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        if self.0.instance(&ctx.region, id)?.state == "terminated" {
            return Err(ProviderError::NotFound(id.to_string()).into());
        }
        self.0.terminate_instances(&ctx.region, &[id.to_string()])?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        if self.0.instance(&ctx.region, id)?.state == "terminated" {
            return Ok(None);
        }
        Ok(Some(self.made(ctx, id)?.into()))
    }

    /// Its attributes once running (the state a waiter's first poll sees).
    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let view = self.0.instance(&ctx.region, id)?;
        let i = self.0.read(&ctx.region, |r| r.instance(id).cloned())?;
        let suffix = if ctx.region == "us-east-1" {
            "ec2.internal".to_string()
        } else {
            format!("{}.compute.internal", ctx.region)
        };
        let public_dns = i.public_ip.as_ref().map(|ip| {
            let zone = if ctx.region == "us-east-1" {
                "compute-1.amazonaws.com".to_string()
            } else {
                format!("{}.compute.amazonaws.com", ctx.region)
            };
            format!("ec2-{}.{zone}", ip.replace('.', "-"))
        });
        Ok(Made::new(id)
            .with("InstanceId", id)
            .with("PrivateIp", i.private_ip.clone())
            .with("PrivateDnsName", format!("ip-{}.{suffix}", i.private_ip.replace('.', "-")))
            .with("PublicIp", i.public_ip.clone().unwrap_or_default())
            .with("PublicDnsName", public_dns.unwrap_or_default())
            .with("VpcId", i.vpc_id.clone())
            .with("AvailabilityZone", i.availability_zone.clone())
            .with("State", json!({"Code": crate::ec2::instances::state_code(&view.state).to_string(), "Name": view.state})))
    }
}
