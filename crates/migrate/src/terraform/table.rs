//! The CloudFormation → Terraform AWS provider table: one row per CloudFormation type, declared
//! as data. A row says what becomes of a resource of that type when its stack is handed to
//! Terraform: the `aws_*` resource and the exact id its `import` block expects (with the
//! provider documentation page the format comes from), whether it holds data (so Terraform must
//! never destroy it: `prevent_destroy`), what the provider cannot read back after an import
//! (`ignore_changes`), and how the common properties become arguments. Types with no Terraform
//! counterpart are rows too, with their fate, so that nothing falls through unnoticed.
//!
//! Import id source, for every row: the provider's page for the resource,
//! `hashicorp/terraform-provider-aws` `website/docs/r/<type without aws_>.html.markdown`, section
//! "Import" ([`doc_url`] gives its registry address). The comment above a composite row quotes
//! the page's example.

use super::ids::{self, Build};

/// What a CloudFormation type becomes.
#[derive(Debug, Clone, Copy)]
pub enum To {
    /// A Terraform resource, imported.
    Terraform(&'static Resource),
    /// `AWS::CloudFormation::Stack`: a wrapper; its resources are in the nested stack's own file.
    NestedStack,
    /// A custom resource handle (`Custom::*`, `AWS::CloudFormation::CustomResource`): only a
    /// record in CloudFormation. It is retained (so no Delete handler runs) and then cleaned up
    /// by hand; what its handler made out of band is imported from the inventory instead.
    CustomResource,
    /// Exists only inside CloudFormation: nothing in the account to import or clean up.
    CloudFormationOnly(&'static str),
    /// A real object Terraform has no importable resource for (the reason says what to do).
    NoEquivalent(&'static str),
}

/// One Terraform resource type.
#[derive(Debug)]
pub struct Resource {
    /// The provider's resource type (`aws_vpc`).
    pub tf: &'static str,
    /// How the `import` id is made.
    pub id: Id,
    /// Holds data or is costly to lose (buckets, tables, file systems, zones, records,
    /// certificates, keys, logs): `lifecycle { prevent_destroy = true }`.
    pub stateful: bool,
    /// Arguments the provider cannot read after an import, or that something else owns.
    pub ignore_changes: &'static [&'static str],
    /// Property → argument, for the common arguments.
    pub args: &'static [Arg],
}

/// How an import id is made from the resource as CloudFormation knows it.
#[derive(Debug, Clone, Copy)]
pub enum Id {
    /// The physical id, as CloudFormation's Ref gives it.
    Physical,
    /// The physical id's last `/`-separated segment (an ARN where the provider wants a name).
    PhysicalName,
    /// A recorded attribute (Fn::GetAtt name) of the live resource.
    Attribute(&'static str),
    /// Parts joined by a separator.
    Join(&'static str, &'static [Part]),
    /// A composite that needs logic (several instances, defaults, conversions).
    Build(Build),
}

/// One part of a joined id.
#[derive(Debug, Clone, Copy)]
pub enum Part {
    Physical,
    /// A resolved property.
    Prop(&'static str),
    /// A resolved property's last `/`- or `:`-separated segment (a name out of an ARN).
    PropName(&'static str),
}

/// One property → argument mapping.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// The property, `.` separating nested keys (`Code.S3Bucket`).
    pub cfn: &'static str,
    pub tf: &'static str,
    pub shape: Shape,
}

/// How a property's value becomes an argument's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// As it is (strings, numbers, booleans, lists of them, flat maps).
    Plain,
    /// `[{Key, Value}]` (or a map) → a map.
    Tags,
    /// `[{Name, Value}]` → a map (CloudWatch dimensions).
    NameValue,
    /// A JSON document (object or JSON text) → `jsonencode(...)` / the text.
    Json,
    /// A JSON document whose keys the service takes in camelCase (ECS container definitions).
    JsonCamel,
    /// `true` when the value equals the given text (`Scheme: internal` → `internal = true`).
    Is(&'static str),
    /// A list of objects → repeated nested blocks, keys in snake_case.
    Blocks,
    /// An object → one nested block, keys in snake_case.
    Block,
    /// The first list element's given key (`Certificates[0].CertificateArn`).
    First(&'static str),
    /// The live attribute of that name when the inventory recorded it, else the property
    /// (a value a custom resource computed, such as a listener rule's priority).
    Live(&'static str),
}

const fn arg(cfn: &'static str, tf: &'static str) -> Arg {
    Arg {
        cfn,
        tf,
        shape: Shape::Plain,
    }
}

const fn shaped(cfn: &'static str, tf: &'static str, shape: Shape) -> Arg {
    Arg { cfn, tf, shape }
}

const TAGS: Arg = shaped("Tags", "tags", Shape::Tags);

macro_rules! tf {
    ($tf:literal, $id:expr, stateful: $s:expr, ignore: [$($i:literal),*], args: [$($a:expr),* $(,)?]) => {
        To::Terraform(&Resource {
            tf: $tf,
            id: $id,
            stateful: $s,
            ignore_changes: &[$($i),*],
            args: &[$($a),*],
        })
    };
}

/// Every row. `lookup` finds a type's; `Custom::*` types match by prefix.
pub static ROWS: &[(&str, To)] = &[
    // --- Network (EC2/VPC) ---
    (
        "AWS::EC2::VPC",
        tf!("aws_vpc", Id::Physical, stateful: false, ignore: [],
        args: [arg("CidrBlock", "cidr_block"), arg("EnableDnsHostnames", "enable_dns_hostnames"),
               arg("EnableDnsSupport", "enable_dns_support"), arg("InstanceTenancy", "instance_tenancy"), TAGS]),
    ),
    (
        "AWS::EC2::Subnet",
        tf!("aws_subnet", Id::Physical, stateful: false, ignore: [],
        args: [arg("VpcId", "vpc_id"), arg("CidrBlock", "cidr_block"), arg("AvailabilityZone", "availability_zone"),
               arg("MapPublicIpOnLaunch", "map_public_ip_on_launch"), TAGS]),
    ),
    (
        "AWS::EC2::InternetGateway",
        tf!("aws_internet_gateway", Id::Physical, stateful: false, ignore: [],
        args: [TAGS]),
    ),
    // `igw-c0a643a9:vpc-123456`
    (
        "AWS::EC2::VPCGatewayAttachment",
        tf!("aws_internet_gateway_attachment",
        Id::Join(":", &[Part::Prop("InternetGatewayId"), Part::Prop("VpcId")]), stateful: false, ignore: [],
        args: [arg("InternetGatewayId", "internet_gateway_id"), arg("VpcId", "vpc_id")]),
    ),
    (
        "AWS::EC2::RouteTable",
        tf!("aws_route_table", Id::Physical, stateful: false, ignore: [],
        args: [arg("VpcId", "vpc_id"), TAGS]),
    ),
    // `rtb-656C65616E6F72_0.0.0.0/0` (route table id, then the destination)
    (
        "AWS::EC2::Route",
        tf!("aws_route", Id::Build(ids::route), stateful: false, ignore: [],
        args: [arg("RouteTableId", "route_table_id"), arg("DestinationCidrBlock", "destination_cidr_block"),
               arg("DestinationIpv6CidrBlock", "destination_ipv6_cidr_block"),
               arg("DestinationPrefixListId", "destination_prefix_list_id"), arg("GatewayId", "gateway_id"),
               arg("NatGatewayId", "nat_gateway_id"), arg("VpcEndpointId", "vpc_endpoint_id"),
               arg("TransitGatewayId", "transit_gateway_id")]),
    ),
    // `subnet-6777656e646f6c796e/rtb-656c65616e6f72`
    (
        "AWS::EC2::SubnetRouteTableAssociation",
        tf!("aws_route_table_association",
        Id::Join("/", &[Part::Prop("SubnetId"), Part::Prop("RouteTableId")]), stateful: false, ignore: [],
        args: [arg("SubnetId", "subnet_id"), arg("RouteTableId", "route_table_id")]),
    ),
    (
        "AWS::EC2::NatGateway",
        tf!("aws_nat_gateway", Id::Physical, stateful: false, ignore: [],
        args: [arg("AllocationId", "allocation_id"), arg("SubnetId", "subnet_id"),
               arg("ConnectivityType", "connectivity_type"), TAGS]),
    ),
    // The allocation id (`eipalloc-...`), not the address CloudFormation's Ref gives.
    (
        "AWS::EC2::EIP",
        tf!("aws_eip", Id::Attribute("AllocationId"), stateful: false, ignore: [],
        args: [arg("Domain", "domain"), TAGS]),
    ),
    (
        "AWS::EC2::SecurityGroup",
        tf!("aws_security_group", Id::Physical, stateful: false, ignore: [],
        args: [arg("GroupDescription", "description"), arg("GroupName", "name"), arg("VpcId", "vpc_id"), TAGS]),
    ),
    // `sg-6e616f6d69_ingress_tcp_8000_8000_10.0.3.0/24`, `..._ingress_all_0_65536_sg-...`, `..._self`
    (
        "AWS::EC2::SecurityGroupIngress",
        tf!("aws_security_group_rule", Id::Build(ids::ingress_rule), stateful: false,
        ignore: [], args: [arg("Description", "description")]),
    ),
    (
        "AWS::EC2::SecurityGroupEgress",
        tf!("aws_security_group_rule", Id::Build(ids::egress_rule), stateful: false,
        ignore: [], args: [arg("Description", "description")]),
    ),
    (
        "AWS::EC2::VPCEndpoint",
        tf!("aws_vpc_endpoint", Id::Physical, stateful: false, ignore: [],
        args: [arg("VpcId", "vpc_id"), arg("ServiceName", "service_name"), arg("VpcEndpointType", "vpc_endpoint_type"),
               arg("SubnetIds", "subnet_ids"), arg("SecurityGroupIds", "security_group_ids"),
               arg("RouteTableIds", "route_table_ids"), arg("PrivateDnsEnabled", "private_dns_enabled"),
               shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::EC2::FlowLog",
        tf!("aws_flow_log", Id::Physical, stateful: false, ignore: [],
        args: [arg("TrafficType", "traffic_type"), arg("LogDestinationType", "log_destination_type"),
               arg("LogDestination", "log_destination"), arg("LogGroupName", "log_group_name"),
               arg("DeliverLogsPermissionArn", "iam_role_arn"), TAGS]),
    ),
    (
        "AWS::EC2::LaunchTemplate",
        tf!("aws_launch_template", Id::Physical, stateful: false, ignore: [],
        args: [arg("LaunchTemplateName", "name")]),
    ),
    // --- Compute and containers ---
    (
        "AWS::AutoScaling::AutoScalingGroup",
        tf!("aws_autoscaling_group", Id::Physical, stateful: false,
        ignore: ["desired_capacity"],
        args: [arg("AutoScalingGroupName", "name"), arg("MinSize", "min_size"), arg("MaxSize", "max_size"),
               arg("VPCZoneIdentifier", "vpc_zone_identifier")]),
    ),
    (
        "AWS::ECS::Cluster",
        tf!("aws_ecs_cluster", Id::PhysicalName, stateful: false, ignore: [],
        args: [arg("ClusterName", "name"), TAGS]),
    ),
    // `cluster-name/service-name`; the live count is authoritative (autoscaling moves it).
    (
        "AWS::ECS::Service",
        tf!("aws_ecs_service", Id::Build(ids::ecs_service), stateful: false,
        ignore: ["desired_count"],
        args: [arg("ServiceName", "name"), arg("Cluster", "cluster"), arg("TaskDefinition", "task_definition"),
               shaped("DesiredCount", "desired_count", Shape::Live("DesiredCount")), arg("LaunchType", "launch_type"),
               arg("PlatformVersion", "platform_version"), arg("EnableExecuteCommand", "enable_execute_command"),
               arg("PropagateTags", "propagate_tags"), arg("HealthCheckGracePeriodSeconds", "health_check_grace_period_seconds"),
               shaped("LoadBalancers", "load_balancer", Shape::Blocks), TAGS]),
    ),
    // A task definition is immutable: any difference would register a new revision, so the
    // definitions the provider normalises differently are left as they are.
    (
        "AWS::ECS::TaskDefinition",
        tf!("aws_ecs_task_definition", Id::Physical, stateful: false,
        ignore: ["container_definitions"],
        args: [arg("Family", "family"), arg("Cpu", "cpu"), arg("Memory", "memory"), arg("NetworkMode", "network_mode"),
               arg("RequiresCompatibilities", "requires_compatibilities"), arg("ExecutionRoleArn", "execution_role_arn"),
               arg("TaskRoleArn", "task_role_arn"), shaped("ContainerDefinitions", "container_definitions", Shape::JsonCamel),
               TAGS]),
    ),
    (
        "AWS::ECR::Repository",
        tf!("aws_ecr_repository", Id::Physical, stateful: true, ignore: [],
        args: [arg("RepositoryName", "name"), arg("ImageTagMutability", "image_tag_mutability"), TAGS]),
    ),
    // The code cannot be read back after an import: where it comes from stays as deployed.
    (
        "AWS::Lambda::Function",
        tf!("aws_lambda_function", Id::Physical, stateful: false,
        ignore: ["filename", "s3_bucket", "s3_key", "s3_object_version", "source_code_hash", "image_uri"],
        args: [arg("FunctionName", "function_name"), arg("Handler", "handler"), arg("Runtime", "runtime"),
               arg("Role", "role"), arg("Timeout", "timeout"), arg("MemorySize", "memory_size"),
               arg("Code.S3Bucket", "s3_bucket"), arg("Code.S3Key", "s3_key"), arg("Code.ImageUri", "image_uri"),
               shaped("Environment", "environment", Shape::Block), TAGS]),
    ),
    // `function_name/statement_id`
    (
        "AWS::Lambda::Permission",
        tf!("aws_lambda_permission", Id::Build(ids::lambda_permission), stateful: false,
        ignore: [],
        args: [arg("FunctionName", "function_name"), arg("Action", "action"), arg("Principal", "principal"),
               arg("SourceArn", "source_arn"), arg("SourceAccount", "source_account")]),
    ),
    (
        "AWS::Lambda::EventSourceMapping",
        tf!("aws_lambda_event_source_mapping", Id::Physical, stateful: false,
        ignore: [],
        args: [arg("EventSourceArn", "event_source_arn"), arg("FunctionName", "function_name"),
               arg("BatchSize", "batch_size"), arg("Enabled", "enabled")]),
    ),
    (
        "AWS::Lambda::LayerVersion",
        tf!("aws_lambda_layer_version", Id::Physical, stateful: false,
        ignore: ["filename", "s3_bucket", "s3_key", "source_code_hash"],
        args: [arg("LayerName", "layer_name"), arg("CompatibleRuntimes", "compatible_runtimes")]),
    ),
    (
        "AWS::Lambda::Version",
        To::NoEquivalent(
            "a published version is kept by the function it belongs to (aws_lambda_function publish); nothing to import",
        ),
    ),
    // --- Load balancing ---
    (
        "AWS::ElasticLoadBalancingV2::LoadBalancer",
        tf!("aws_lb", Id::Physical, stateful: false, ignore: [],
        args: [arg("Name", "name"), shaped("Scheme", "internal", Shape::Is("internal")), arg("Type", "load_balancer_type"),
               arg("Subnets", "subnets"), arg("SecurityGroups", "security_groups"),
               arg("IpAddressType", "ip_address_type"), TAGS]),
    ),
    (
        "AWS::ElasticLoadBalancingV2::Listener",
        tf!("aws_lb_listener", Id::Physical, stateful: false, ignore: [],
        args: [arg("LoadBalancerArn", "load_balancer_arn"), arg("Port", "port"), arg("Protocol", "protocol"),
               arg("SslPolicy", "ssl_policy"), shaped("Certificates", "certificate_arn", Shape::First("CertificateArn")),
               shaped("DefaultActions", "default_action", Shape::Blocks)]),
    ),
    // The priority a custom resource computed is read from the live rule and written literally.
    (
        "AWS::ElasticLoadBalancingV2::ListenerRule",
        tf!("aws_lb_listener_rule", Id::Physical, stateful: false,
        ignore: [],
        args: [arg("ListenerArn", "listener_arn"), shaped("Priority", "priority", Shape::Live("Priority")),
               shaped("Actions", "action", Shape::Blocks), shaped("Conditions", "condition", Shape::Blocks)]),
    ),
    (
        "AWS::ElasticLoadBalancingV2::TargetGroup",
        tf!("aws_lb_target_group", Id::Physical, stateful: false,
        ignore: [],
        args: [arg("Name", "name"), arg("Port", "port"), arg("Protocol", "protocol"), arg("VpcId", "vpc_id"),
               arg("TargetType", "target_type"), TAGS]),
    ),
    // `listener-arn_certificate-arn`, one per certificate
    (
        "AWS::ElasticLoadBalancingV2::ListenerCertificate",
        tf!("aws_lb_listener_certificate",
        Id::Build(ids::listener_certificates), stateful: false, ignore: [],
        args: [arg("ListenerArn", "listener_arn")]),
    ),
    // --- Data ---
    (
        "AWS::S3::Bucket",
        tf!("aws_s3_bucket", Id::Physical, stateful: true, ignore: [],
        args: [arg("BucketName", "bucket"), TAGS]),
    ),
    (
        "AWS::S3::BucketPolicy",
        tf!("aws_s3_bucket_policy", Id::Join("", &[Part::Prop("Bucket")]), stateful: false,
        ignore: [],
        args: [arg("Bucket", "bucket"), shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::DynamoDB::Table",
        tf!("aws_dynamodb_table", Id::Physical, stateful: true, ignore: [],
        args: [arg("TableName", "name"), arg("BillingMode", "billing_mode"), TAGS]),
    ),
    (
        "AWS::EFS::FileSystem",
        tf!("aws_efs_file_system", Id::Physical, stateful: true, ignore: [],
        args: [arg("Encrypted", "encrypted"), arg("KmsKeyId", "kms_key_id"), arg("PerformanceMode", "performance_mode"),
               arg("ThroughputMode", "throughput_mode"), shaped("FileSystemTags", "tags", Shape::Tags)]),
    ),
    (
        "AWS::EFS::MountTarget",
        tf!("aws_efs_mount_target", Id::Physical, stateful: false, ignore: [],
        args: [arg("FileSystemId", "file_system_id"), arg("SubnetId", "subnet_id"), arg("SecurityGroups", "security_groups"),
               arg("IpAddress", "ip_address")]),
    ),
    (
        "AWS::EFS::AccessPoint",
        tf!("aws_efs_access_point", Id::Physical, stateful: false, ignore: [],
        args: [arg("FileSystemId", "file_system_id"), shaped("AccessPointTags", "tags", Shape::Tags)]),
    ),
    (
        "AWS::SSM::Parameter",
        tf!("aws_ssm_parameter", Id::Physical, stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("Type", "type"), arg("Value", "value"), arg("Description", "description"), TAGS]),
    ),
    // The secret's value is never read (the inventory does not): Terraform manages the secret,
    // not its versions.
    (
        "AWS::SecretsManager::Secret",
        tf!("aws_secretsmanager_secret", Id::Physical, stateful: true, ignore: [],
        args: [arg("Name", "name"), arg("Description", "description"), arg("KmsKeyId", "kms_key_id"), TAGS]),
    ),
    // --- IAM ---
    (
        "AWS::IAM::Role",
        tf!("aws_iam_role", Id::Physical, stateful: false, ignore: [],
        args: [arg("RoleName", "name"), shaped("AssumeRolePolicyDocument", "assume_role_policy", Shape::Json),
               arg("Path", "path"), arg("PermissionsBoundary", "permissions_boundary"),
               arg("MaxSessionDuration", "max_session_duration"), arg("Description", "description"), TAGS]),
    ),
    // Inline: `role_name:policy_name` per role (`user:policy`, `group:policy` likewise).
    (
        "AWS::IAM::Policy",
        tf!("aws_iam_role_policy", Id::Build(ids::inline_policies), stateful: false, ignore: [],
        args: [arg("PolicyName", "name"), shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::IAM::ManagedPolicy",
        tf!("aws_iam_policy", Id::Physical, stateful: false, ignore: [],
        args: [arg("ManagedPolicyName", "name"), arg("Path", "path"), arg("Description", "description"),
               shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::IAM::InstanceProfile",
        tf!("aws_iam_instance_profile", Id::Physical, stateful: false, ignore: [],
        args: [arg("InstanceProfileName", "name"), shaped("Roles", "role", Shape::First(""))]),
    ),
    (
        "AWS::IAM::User",
        tf!("aws_iam_user", Id::Physical, stateful: false, ignore: [],
        args: [arg("UserName", "name"), arg("Path", "path"), TAGS]),
    ),
    (
        "AWS::IAM::Group",
        tf!("aws_iam_group", Id::Physical, stateful: false, ignore: [],
        args: [arg("GroupName", "name"), arg("Path", "path")]),
    ),
    (
        "AWS::IAM::AccessKey",
        To::NoEquivalent(
            "an access key's secret cannot be imported; issue a new key from Terraform and delete this one by hand",
        ),
    ),
    // --- DNS and certificates ---
    (
        "AWS::Route53::HostedZone",
        tf!("aws_route53_zone", Id::Build(ids::hosted_zone), stateful: true, ignore: [],
        args: [arg("Name", "name"), arg("HostedZoneConfig.Comment", "comment"), shaped("VPCs", "vpc", Shape::Blocks)]),
    ),
    // `ZONEID_name_TYPE[_setid]`
    (
        "AWS::Route53::RecordSet",
        tf!("aws_route53_record", Id::Build(ids::record_set), stateful: true, ignore: [], args: []),
    ),
    (
        "AWS::Route53::RecordSetGroup",
        tf!("aws_route53_record", Id::Build(ids::record_set_group), stateful: true,
        ignore: [], args: []),
    ),
    (
        "AWS::CertificateManager::Certificate",
        tf!("aws_acm_certificate", Id::Physical, stateful: true, ignore: [],
        args: [arg("DomainName", "domain_name"), arg("SubjectAlternativeNames", "subject_alternative_names"),
               arg("ValidationMethod", "validation_method"), TAGS]),
    ),
    // `namespace-id:vpc-id`
    (
        "AWS::ServiceDiscovery::PrivateDnsNamespace",
        tf!("aws_service_discovery_private_dns_namespace",
        Id::Join(":", &[Part::Physical, Part::Prop("Vpc")]), stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("Vpc", "vpc"), arg("Description", "description"), TAGS]),
    ),
    (
        "AWS::ServiceDiscovery::Service",
        tf!("aws_service_discovery_service", Id::Physical, stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("NamespaceId", "namespace_id"), arg("Description", "description"),
               shaped("DnsConfig", "dns_config", Shape::Block),
               shaped("HealthCheckCustomConfig", "health_check_custom_config", Shape::Block), TAGS]),
    ),
    // --- Queues, topics, events ---
    (
        "AWS::SQS::Queue",
        tf!("aws_sqs_queue", Id::Physical, stateful: true, ignore: [],
        args: [arg("QueueName", "name"), arg("FifoQueue", "fifo_queue"), arg("VisibilityTimeout", "visibility_timeout_seconds"),
               arg("MessageRetentionPeriod", "message_retention_seconds"), arg("DelaySeconds", "delay_seconds"),
               arg("KmsMasterKeyId", "kms_master_key_id"), shaped("RedrivePolicy", "redrive_policy", Shape::Json), TAGS]),
    ),
    // The queue URL, one per queue the policy names.
    (
        "AWS::SQS::QueuePolicy",
        tf!("aws_sqs_queue_policy", Id::Build(ids::queue_policies), stateful: false, ignore: [], args: [shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::SNS::Topic",
        tf!("aws_sns_topic", Id::Physical, stateful: false, ignore: [],
        args: [arg("TopicName", "name"), arg("DisplayName", "display_name"), arg("FifoTopic", "fifo_topic"),
               arg("KmsMasterKeyId", "kms_master_key_id"), TAGS]),
    ),
    // The topic ARN, one per topic the policy names.
    (
        "AWS::SNS::TopicPolicy",
        tf!("aws_sns_topic_policy", Id::Build(ids::topic_policies), stateful: false, ignore: [], args: [shaped("PolicyDocument", "policy", Shape::Json)]),
    ),
    (
        "AWS::SNS::Subscription",
        tf!("aws_sns_topic_subscription", Id::Physical, stateful: false, ignore: [],
        args: [arg("TopicArn", "topic_arn"), arg("Protocol", "protocol"), arg("Endpoint", "endpoint"),
               shaped("FilterPolicy", "filter_policy", Shape::Json), arg("RawMessageDelivery", "raw_message_delivery")]),
    ),
    // `rule-name` on the default bus, `bus-name/rule-name` on another; targets are their own
    // resources in Terraform (`rule-name/target-id`).
    (
        "AWS::Events::Rule",
        tf!("aws_cloudwatch_event_rule", Id::Build(ids::event_rule), stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("Description", "description"), arg("ScheduleExpression", "schedule_expression"),
               shaped("EventPattern", "event_pattern", Shape::Json), arg("State", "state"),
               arg("EventBusName", "event_bus_name")]),
    ),
    (
        "AWS::Events::EventBus",
        tf!("aws_cloudwatch_event_bus", Id::PhysicalName, stateful: false, ignore: [], args: [arg("Name", "name")]),
    ),
    // --- Logs, metrics, keys ---
    (
        "AWS::Logs::LogGroup",
        tf!("aws_cloudwatch_log_group", Id::Physical, stateful: true, ignore: [],
        args: [arg("LogGroupName", "name"), arg("RetentionInDays", "retention_in_days"), arg("KmsKeyId", "kms_key_id"), TAGS]),
    ),
    (
        "AWS::Logs::ResourcePolicy",
        tf!("aws_cloudwatch_log_resource_policy", Id::Join("", &[Part::Prop("PolicyName")]),
        stateful: false, ignore: [],
        args: [arg("PolicyName", "policy_name"), shaped("PolicyDocument", "policy_document", Shape::Json)]),
    ),
    (
        "AWS::CloudWatch::Alarm",
        tf!("aws_cloudwatch_metric_alarm", Id::Physical, stateful: false, ignore: [],
        args: [arg("AlarmName", "alarm_name"), arg("AlarmDescription", "alarm_description"),
               arg("ComparisonOperator", "comparison_operator"), arg("EvaluationPeriods", "evaluation_periods"),
               arg("MetricName", "metric_name"), arg("Namespace", "namespace"), arg("Period", "period"),
               arg("Statistic", "statistic"), arg("Threshold", "threshold"), arg("AlarmActions", "alarm_actions"),
               shaped("Dimensions", "dimensions", Shape::NameValue)]),
    ),
    (
        "AWS::KMS::Key",
        tf!("aws_kms_key", Id::Physical, stateful: true, ignore: [],
        args: [arg("Description", "description"), arg("EnableKeyRotation", "enable_key_rotation"),
               arg("KeyUsage", "key_usage"), shaped("KeyPolicy", "policy", Shape::Json), TAGS]),
    ),
    (
        "AWS::KMS::Alias",
        tf!("aws_kms_alias", Id::Physical, stateful: false, ignore: [],
        args: [arg("AliasName", "name"), arg("TargetKeyId", "target_key_id")]),
    ),
    // --- Workflows and scaling ---
    (
        "AWS::StepFunctions::StateMachine",
        tf!("aws_sfn_state_machine", Id::Physical, stateful: false, ignore: [],
        args: [arg("StateMachineName", "name"), arg("RoleArn", "role_arn"), shaped("DefinitionString", "definition", Shape::Json),
               shaped("Definition", "definition", Shape::Json), arg("StateMachineType", "type"), TAGS]),
    ),
    // `service-namespace/resource-id/scalable-dimension`
    (
        "AWS::ApplicationAutoScaling::ScalableTarget",
        tf!("aws_appautoscaling_target", Id::Build(ids::scalable_target),
        stateful: false, ignore: [],
        args: [arg("MaxCapacity", "max_capacity"), arg("MinCapacity", "min_capacity"), arg("ResourceId", "resource_id"),
               arg("ScalableDimension", "scalable_dimension"), arg("ServiceNamespace", "service_namespace"),
               arg("RoleARN", "role_arn")]),
    ),
    // `service-namespace/resource-id/scalable-dimension/policy-name`
    (
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        tf!("aws_appautoscaling_policy", Id::Build(ids::scaling_policy),
        stateful: false, ignore: [],
        args: [arg("PolicyName", "name"), arg("PolicyType", "policy_type"),
               shaped("TargetTrackingScalingPolicyConfiguration", "target_tracking_scaling_policy_configuration", Shape::Block),
               shaped("StepScalingPolicyConfiguration", "step_scaling_policy_configuration", Shape::Block)]),
    ),
    // --- Delivery, CDN, App Runner, APIs ---
    (
        "AWS::CodeBuild::Project",
        tf!("aws_codebuild_project", Id::PhysicalName, stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("ServiceRole", "service_role"), shaped("Artifacts", "artifacts", Shape::Block),
               shaped("Environment", "environment", Shape::Block), shaped("Source", "source", Shape::Block), TAGS]),
    ),
    (
        "AWS::CodePipeline::Pipeline",
        tf!("aws_codepipeline", Id::Physical, stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("RoleArn", "role_arn"), TAGS]),
    ),
    (
        "AWS::CodeStarConnections::Connection",
        tf!("aws_codestarconnections_connection", Id::Physical, stateful: false,
        ignore: [],
        args: [arg("ConnectionName", "name"), arg("ProviderType", "provider_type"), TAGS]),
    ),
    (
        "AWS::CloudFront::Distribution",
        tf!("aws_cloudfront_distribution", Id::Physical, stateful: false, ignore: [],
        args: [arg("DistributionConfig.Enabled", "enabled"), arg("DistributionConfig.Comment", "comment"),
               arg("DistributionConfig.Aliases", "aliases"), arg("DistributionConfig.PriceClass", "price_class"), TAGS]),
    ),
    (
        "AWS::CloudFront::OriginAccessControl",
        tf!("aws_cloudfront_origin_access_control", Id::Physical, stateful: false,
        ignore: [],
        args: [arg("OriginAccessControlConfig.Name", "name"),
               arg("OriginAccessControlConfig.OriginAccessControlOriginType", "origin_access_control_origin_type"),
               arg("OriginAccessControlConfig.SigningBehavior", "signing_behavior"),
               arg("OriginAccessControlConfig.SigningProtocol", "signing_protocol")]),
    ),
    // The function's name (its Ref is the ARN).
    (
        "AWS::CloudFront::Function",
        tf!("aws_cloudfront_function", Id::PhysicalName, stateful: false, ignore: [],
        args: [arg("Name", "name"), arg("FunctionCode", "code"), arg("FunctionConfig.Runtime", "runtime"),
               arg("FunctionConfig.Comment", "comment"), arg("AutoPublish", "publish")]),
    ),
    (
        "AWS::AppRunner::Service",
        tf!("aws_apprunner_service", Id::Physical, stateful: false, ignore: [], args: [arg("ServiceName", "service_name"), TAGS]),
    ),
    (
        "AWS::AppRunner::VpcConnector",
        tf!("aws_apprunner_vpc_connector", Id::Physical, stateful: false, ignore: [],
        args: [arg("VpcConnectorName", "vpc_connector_name"), arg("Subnets", "subnets"),
               arg("SecurityGroups", "security_groups"), TAGS]),
    ),
    (
        "AWS::ApiGateway::RestApi",
        tf!("aws_api_gateway_rest_api", Id::Physical, stateful: false, ignore: [], args: [arg("Name", "name"), arg("Description", "description")]),
    ),
    (
        "AWS::ApiGatewayV2::Api",
        tf!("aws_apigatewayv2_api", Id::Physical, stateful: false, ignore: [], args: [arg("Name", "name"), arg("ProtocolType", "protocol_type")]),
    ),
    // --- CloudFormation's own ---
    ("AWS::CloudFormation::Stack", To::NestedStack),
    ("AWS::CloudFormation::CustomResource", To::CustomResource),
    (
        "AWS::CloudFormation::WaitCondition",
        To::CloudFormationOnly("a wait condition exists only in CloudFormation"),
    ),
    (
        "AWS::CloudFormation::WaitConditionHandle",
        To::CloudFormationOnly("a wait-condition handle is a presigned URL CloudFormation keeps"),
    ),
    (
        "AWS::CDK::Metadata",
        To::CloudFormationOnly("CDK's usage metadata, recorded by CloudFormation only"),
    ),
];

/// The row for a CloudFormation type: `Custom::*` is a custom resource; a type without a row
/// is `None` (the caller refuses to hand off a stack holding it).
pub fn lookup(cfn_type: &str) -> Option<To> {
    if cfn_type.starts_with("Custom::") {
        return Some(To::CustomResource);
    }
    ROWS.iter().find(|(t, _)| *t == cfn_type).map(|(_, to)| *to)
}

/// The provider page giving a resource type's import id format.
pub fn doc_url(tf: &str) -> String {
    let page = tf.trim_start_matches("aws_");
    format!(
        "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/{page}#import"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_has_one_row_and_arguments_in_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for (cfn, to) in ROWS {
            assert!(seen.insert(*cfn), "{cfn} has two rows");
            if let To::Terraform(r) = to {
                assert!(r.tf.starts_with("aws_"), "{cfn}");
                for a in r.args {
                    assert!(
                        a.tf.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                        "{cfn}: {}",
                        a.tf
                    );
                }
            }
        }
        assert!(ROWS.len() >= 60, "{} rows", ROWS.len());
    }

    #[test]
    fn custom_resources_match_by_prefix_and_unknown_types_have_no_row() {
        assert!(matches!(
            lookup("Custom::EnvControllerFunction"),
            Some(To::CustomResource)
        ));
        assert!(matches!(
            lookup("AWS::CloudFormation::Stack"),
            Some(To::NestedStack)
        ));
        assert!(lookup("AWS::Made::Up").is_none());
        let Some(To::Terraform(r)) = lookup("AWS::S3::Bucket") else {
            panic!("no bucket row")
        };
        assert!(r.stateful);
    }
}
