//! The Describe each resource type needs for its live state, and the identifiers a Terraform
//! import id is built from. Types without an entry are recorded as not read, with the reason;
//! nothing is guessed.

use super::answer::{list, text};
use super::model::{LiveState, ReadCall};
use super::reads::{ReadClient, ReadRequest, Refused};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What the reads said about one resource.
pub struct Described {
    pub live: LiveState,
    pub import_attributes: BTreeMap<String, String>,
}

/// The first read for a type: which call, with what input, and the identifiers the physical
/// id alone gives.
struct Plan {
    service: &'static str,
    operation: &'static str,
    input: Value,
    attrs: Vec<(&'static str, String)>,
}

fn plan(
    service: &'static str,
    operation: &'static str,
    input: Value,
    attrs: Vec<(&'static str, String)>,
) -> Option<Plan> {
    Some(Plan {
        service,
        operation,
        input,
        attrs,
    })
}

/// The ECS cluster a service ARN names: `arn:aws:ecs:<region>:<account>:service/<cluster>/<name>`
/// (the old form `service/<name>` names no cluster: the default one).
fn ecs_cluster_and_name(arn: &str) -> (String, String) {
    let path = arn.split_once(":service/").map_or(arn, |(_, p)| p);
    match path.split_once('/') {
        Some((cluster, name)) => (cluster.to_string(), name.to_string()),
        None => ("default".to_string(), path.to_string()),
    }
}

fn plan_for(resource_type: &str, id: &str) -> Option<Plan> {
    let pid = id.to_string();
    match resource_type {
        "AWS::EC2::VPC" => plan(
            "ec2",
            "DescribeVpcs",
            json!({"VpcId.1": id}),
            vec![("id", pid.clone()), ("vpc_id", pid)],
        ),
        "AWS::EC2::Subnet" => plan(
            "ec2",
            "DescribeSubnets",
            json!({"SubnetId.1": id}),
            vec![("id", pid.clone()), ("subnet_id", pid)],
        ),
        "AWS::EC2::SecurityGroup" => plan(
            "ec2",
            "DescribeSecurityGroups",
            json!({"GroupId.1": id}),
            vec![("id", pid.clone()), ("security_group_id", pid)],
        ),
        "AWS::EC2::RouteTable" => plan(
            "ec2",
            "DescribeRouteTables",
            json!({"RouteTableId.1": id}),
            vec![("id", pid.clone()), ("route_table_id", pid)],
        ),
        "AWS::EC2::InternetGateway" => plan(
            "ec2",
            "DescribeInternetGateways",
            json!({"InternetGatewayId.1": id}),
            vec![("id", pid.clone()), ("gateway_id", pid)],
        ),
        "AWS::EC2::NatGateway" => plan(
            "ec2",
            "DescribeNatGateways",
            json!({"NatGatewayId.1": id}),
            vec![("id", pid.clone()), ("gateway_id", pid)],
        ),
        // An EIP's physical id is its allocation id or (older stacks) its public IP;
        // Terraform imports it by allocation id, which the answer gives either way.
        "AWS::EC2::EIP" if id.starts_with("eipalloc-") => plan(
            "ec2",
            "DescribeAddresses",
            json!({"AllocationId.1": id}),
            vec![("allocation_id", pid.clone()), ("id", pid)],
        ),
        "AWS::EC2::EIP" => plan(
            "ec2",
            "DescribeAddresses",
            json!({"PublicIp.1": id}),
            vec![("public_ip", pid)],
        ),
        "AWS::ElasticLoadBalancingV2::LoadBalancer" => plan(
            "elasticloadbalancing",
            "DescribeLoadBalancers",
            json!({"LoadBalancerArns.member.1": id}),
            vec![("arn", pid.clone()), ("load_balancer_arn", pid)],
        ),
        "AWS::ElasticLoadBalancingV2::Listener" => plan(
            "elasticloadbalancing",
            "DescribeListeners",
            json!({"ListenerArns.member.1": id}),
            vec![("arn", pid.clone()), ("listener_arn", pid)],
        ),
        "AWS::ElasticLoadBalancingV2::ListenerRule" => plan(
            "elasticloadbalancing",
            "DescribeRules",
            json!({"RuleArns.member.1": id}),
            vec![("arn", pid)],
        ),
        "AWS::ElasticLoadBalancingV2::TargetGroup" => plan(
            "elasticloadbalancing",
            "DescribeTargetGroups",
            json!({"TargetGroupArns.member.1": id}),
            vec![("arn", pid.clone()), ("target_group_arn", pid)],
        ),
        "AWS::ECS::Cluster" => plan(
            "ecs",
            "DescribeClusters",
            json!({"clusters": [id], "include": ["SETTINGS", "CONFIGURATIONS", "TAGS"]}),
            vec![("name", pid.clone()), ("cluster", pid)],
        ),
        "AWS::ECS::Service" => {
            let (cluster, name) = ecs_cluster_and_name(id);
            plan(
                "ecs",
                "DescribeServices",
                json!({"cluster": cluster, "services": [id], "include": ["TAGS"]}),
                vec![("arn", pid), ("cluster", cluster), ("service", name)],
            )
        }
        "AWS::ECS::TaskDefinition" => plan(
            "ecs",
            "DescribeTaskDefinition",
            json!({"taskDefinition": id, "include": ["TAGS"]}),
            vec![("arn", pid)],
        ),
        "AWS::Route53::HostedZone" => plan(
            "route53",
            "GetHostedZone",
            json!({"Id": id}),
            vec![("id", pid.clone()), ("zone_id", pid)],
        ),
        "AWS::CertificateManager::Certificate" => plan(
            "acm",
            "DescribeCertificate",
            json!({"CertificateArn": id}),
            vec![("arn", pid)],
        ),
        "AWS::IAM::Role" => plan(
            "iam",
            "GetRole",
            json!({"RoleName": id}),
            vec![("name", pid.clone()), ("role_name", pid)],
        ),
        "AWS::IAM::ManagedPolicy" => plan(
            "iam",
            "GetPolicy",
            json!({"PolicyArn": id}),
            vec![("arn", pid.clone()), ("policy_arn", pid)],
        ),
        "AWS::S3::Bucket" => plan(
            "s3",
            "GetBucketVersioning",
            json!({"Bucket": id}),
            vec![("name", pid.clone()), ("bucket", pid)],
        ),
        "AWS::SQS::Queue" => plan(
            "sqs",
            "GetQueueAttributes",
            json!({"QueueUrl": id, "AttributeNames": ["All"]}),
            vec![("url", pid)],
        ),
        "AWS::SNS::Subscription" => plan(
            "sns",
            "GetSubscriptionAttributes",
            json!({"SubscriptionArn": id}),
            vec![("arn", pid)],
        ),
        "AWS::DynamoDB::Table" => plan(
            "dynamodb",
            "DescribeTable",
            json!({"TableName": id}),
            vec![("name", pid.clone()), ("table_name", pid)],
        ),
        // A bucket policy's physical id is its bucket's name.
        "AWS::S3::BucketPolicy" => plan(
            "s3",
            "GetBucketPolicy",
            json!({"Bucket": id}),
            vec![("bucket", pid)],
        ),
        "AWS::SNS::Topic" => plan(
            "sns",
            "GetTopicAttributes",
            json!({"TopicArn": id}),
            vec![("arn", pid)],
        ),
        "AWS::Logs::LogGroup" => plan(
            "logs",
            "DescribeLogGroups",
            json!({"logGroupNamePrefix": id}),
            vec![("name", pid.clone()), ("log_group_name", pid)],
        ),
        "AWS::KMS::Key" => plan(
            "kms",
            "DescribeKey",
            json!({"KeyId": id}),
            vec![("id", pid.clone()), ("key_id", pid)],
        ),
        "AWS::ECR::Repository" => plan(
            "ecr",
            "DescribeRepositories",
            json!({"repositoryNames": [id]}),
            vec![("name", pid.clone()), ("repository_name", pid)],
        ),
        // Never decrypted: a SecureString's value stays the ciphertext SSM returns without
        // WithDecryption.
        "AWS::SSM::Parameter" => plan(
            "ssm",
            "GetParameter",
            json!({"Name": id, "WithDecryption": false}),
            vec![("name", pid.clone()), ("parameter_name", pid)],
        ),
        "AWS::SecretsManager::Secret" => plan(
            "secretsmanager",
            "DescribeSecret",
            json!({"SecretId": id}),
            vec![("arn", pid.clone()), ("secret_arn", pid)],
        ),
        "AWS::Lambda::Function" => plan(
            "lambda",
            "GetFunction",
            json!({"FunctionName": id}),
            vec![("name", pid.clone()), ("function_name", pid)],
        ),
        "AWS::StepFunctions::StateMachine" => plan(
            "states",
            "DescribeStateMachine",
            json!({"stateMachineArn": id}),
            vec![("arn", pid.clone()), ("state_machine_arn", pid)],
        ),
        "AWS::ServiceDiscovery::PrivateDnsNamespace"
        | "AWS::ServiceDiscovery::PublicDnsNamespace"
        | "AWS::ServiceDiscovery::HttpNamespace" => plan(
            "servicediscovery",
            "GetNamespace",
            json!({"Id": id}),
            vec![("id", pid.clone()), ("namespace_id", pid)],
        ),
        "AWS::ServiceDiscovery::Service" => plan(
            "servicediscovery",
            "GetService",
            json!({"Id": id}),
            vec![("id", pid.clone()), ("service_id", pid)],
        ),
        "AWS::Events::Rule" => {
            // `<bus>|<name>` for a rule on a custom bus, else the name.
            let (bus, name) = id.split_once('|').unwrap_or(("default", id));
            plan(
                "events",
                "DescribeRule",
                json!({"Name": name, "EventBusName": bus}),
                vec![
                    ("name", name.to_string()),
                    ("event_bus_name", bus.to_string()),
                ],
            )
        }
        _ => None,
    }
}

/// Identifiers only the answer gives (an ARN when the physical id is a name, an EIP's
/// allocation id).
fn answer_attrs(resource_type: &str, id: &str, answer: &Value) -> Vec<(&'static str, String)> {
    let first = |key: &str| list(answer.get(key)).first().copied().cloned();
    let pick = |v: Option<Value>, key: &str| v.as_ref().and_then(|v| text(v, key));
    let found: Vec<(&'static str, Option<String>)> = match resource_type {
        "AWS::EC2::EIP" => {
            let a = first("addressesSet");
            vec![
                ("allocation_id", pick(a.clone(), "allocationId")),
                ("id", pick(a, "allocationId")),
            ]
        }
        "AWS::ECS::Cluster" => vec![("arn", pick(first("clusters"), "clusterArn"))],
        "AWS::IAM::Role" => vec![("arn", answer.get("Role").and_then(|r| text(r, "Arn")))],
        "AWS::DynamoDB::Table" => {
            vec![("arn", answer.get("Table").and_then(|t| text(t, "TableArn")))]
        }
        // GetAtt QueueName (a Worker's scaling policy name joins it) is the URL's last segment.
        "AWS::SQS::Queue" => vec![
            (
                "arn",
                answer.get("Attributes").and_then(|a| text(a, "QueueArn")),
            ),
            ("queue_name", id.rsplit('/').next().map(str::to_string)),
        ],
        // The read is by prefix: only the group of exactly this name counts.
        "AWS::Logs::LogGroup" => vec![(
            "arn",
            list(answer.get("logGroups"))
                .into_iter()
                .find(|g| text(g, "logGroupName").as_deref() == Some(id))
                .and_then(|g| text(g, "arn")),
        )],
        "AWS::KMS::Key" => vec![(
            "arn",
            answer.get("KeyMetadata").and_then(|k| text(k, "Arn")),
        )],
        "AWS::ECR::Repository" => vec![("arn", pick(first("repositories"), "repositoryArn"))],
        "AWS::Lambda::Function" => vec![(
            "arn",
            answer
                .get("Configuration")
                .and_then(|c| text(c, "FunctionArn")),
        )],
        "AWS::SSM::Parameter" => {
            vec![("arn", answer.get("Parameter").and_then(|p| text(p, "ARN")))]
        }
        "AWS::ServiceDiscovery::PrivateDnsNamespace"
        | "AWS::ServiceDiscovery::PublicDnsNamespace"
        | "AWS::ServiceDiscovery::HttpNamespace" => {
            vec![("arn", answer.get("Namespace").and_then(|n| text(n, "Arn")))]
        }
        "AWS::ServiceDiscovery::Service" => {
            vec![("arn", answer.get("Service").and_then(|n| text(n, "Arn")))]
        }
        "AWS::Events::Rule" => vec![("arn", text(answer, "Arn"))],
        _ => Vec::new(),
    };
    found
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
}

/// An error code that means "no such resource", across services' spellings.
pub fn means_gone(code: &str) -> bool {
    ["NotFound", "NoSuch", "DoesNotExist", "NonExistent"]
        .iter()
        .any(|m| code.contains(m))
}

/// Reads one resource's live state.
pub fn describe(
    client: &dyn ReadClient,
    resource_type: &str,
    physical_id: &str,
) -> Result<Described, Refused> {
    let Some(plan) = plan_for(resource_type, physical_id) else {
        return Ok(Described {
            live: LiveState::NotRead {
                reason: format!("no Describe is known for {resource_type}"),
            },
            import_attributes: BTreeMap::new(),
        });
    };
    let mut import_attributes: BTreeMap<String, String> = plan
        .attrs
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let request = ReadRequest::new(plan.service, plan.operation, plan.input.clone())?;
    let live = match client.call(&request) {
        Ok(output) => {
            for (k, v) in answer_attrs(resource_type, physical_id, &output) {
                import_attributes.insert(k.to_string(), v);
            }
            LiveState::Described {
                calls: vec![ReadCall {
                    service: plan.service.to_string(),
                    operation: plan.operation.to_string(),
                    input: plan.input,
                    output,
                }],
            }
        }
        Err(e) if means_gone(&e.code) => LiveState::Gone {
            operation: plan.operation.to_string(),
            error_code: e.code,
            message: Some(e.message),
        },
        Err(e) => LiveState::Failed {
            operation: plan.operation.to_string(),
            error_code: e.code,
            message: Some(e.message),
        },
    };
    Ok(Described {
        live,
        import_attributes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_planned_read_is_allowed() {
        for t in [
            "AWS::EC2::VPC",
            "AWS::EC2::EIP",
            "AWS::ECS::Service",
            "AWS::SSM::Parameter",
            "AWS::SecretsManager::Secret",
            "AWS::Lambda::Function",
            "AWS::Route53::HostedZone",
            "AWS::S3::Bucket",
            "AWS::Events::Rule",
        ] {
            let p = plan_for(t, "x").unwrap();
            assert!(
                ReadRequest::new(p.service, p.operation, p.input).is_ok(),
                "{t}"
            );
        }
    }

    #[test]
    fn ecs_service_arns_name_their_cluster() {
        assert_eq!(
            ecs_cluster_and_name("arn:aws:ecs:us-east-1:1:service/app-env-Cluster/web"),
            ("app-env-Cluster".into(), "web".into())
        );
        assert_eq!(
            ecs_cluster_and_name("arn:aws:ecs:us-east-1:1:service/web"),
            ("default".into(), "web".into())
        );
    }
}
