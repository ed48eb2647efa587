//! The AWS managed policies cumulo knows by name (`arn:aws:iam::aws:policy/...`).
//!
//! AWS has over a thousand; this is a small table of the ones templates and CDK apps use most,
//! which GetPolicy, GetPolicyVersion and ListPolicies (Scope `AWS`/`All`) report. Attaching any
//! well-formed `arn:aws:iam::aws:policy/` ARN is accepted, listed in the table or not, as
//! LocalStack does: nothing is enforced, and refusing a real AWS policy the table lacks would
//! break templates that work on AWS.

use chrono::{DateTime, TimeZone, Utc};
use sha2::{Digest, Sha256};

/// Path, name and default document of each known AWS managed policy.
const POLICIES: &[(&str, &str, &str)] = &[
    (
        "/",
        "AdministratorAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#,
    ),
    (
        "/",
        "PowerUserAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":["iam:*","organizations:*","account:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "ReadOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["*:Describe*","*:Get*","*:List*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "IAMFullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["iam:*","organizations:DescribeAccount","organizations:DescribeOrganization","organizations:DescribeOrganizationalUnit","organizations:DescribePolicy","organizations:ListChildren","organizations:ListParents","organizations:ListPoliciesForTarget","organizations:ListRoots","organizations:ListPolicies","organizations:ListTargetsForPolicy"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "IAMReadOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["iam:GenerateCredentialReport","iam:Get*","iam:List*","iam:Simulate*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonS3FullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*","s3-object-lambda:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonS3ReadOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:Get*","s3:List*","s3:Describe*","s3-object-lambda:Get*","s3-object-lambda:List*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonSQSFullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonSNSFullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sns:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonDynamoDBFullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonDynamoDBReadOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:BatchGetItem","dynamodb:Describe*","dynamodb:List*","dynamodb:GetItem","dynamodb:Query","dynamodb:Scan"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonSSMReadOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ssm:Describe*","ssm:Get*","ssm:List*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "CloudWatchLogsFullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "SecretsManagerReadWrite",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["secretsmanager:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AWSLambda_FullAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["lambda:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AWSXrayWriteOnlyAccess",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["xray:PutTraceSegments","xray:PutTelemetryRecords","xray:GetSamplingRules","xray:GetSamplingTargets","xray:GetSamplingStatisticSummaries"],"Resource":["*"]}]}"#,
    ),
    (
        "/service-role/",
        "AWSLambdaBasicExecutionRole",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}"#,
    ),
    (
        "/service-role/",
        "AWSLambdaVPCAccessExecutionRole",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents","ec2:CreateNetworkInterface","ec2:DescribeNetworkInterfaces","ec2:DescribeSubnets","ec2:DeleteNetworkInterface","ec2:AssignPrivateIpAddresses","ec2:UnassignPrivateIpAddresses"],"Resource":"*"}]}"#,
    ),
    (
        "/service-role/",
        "AWSLambdaDynamoDBExecutionRole",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:DescribeStream","dynamodb:GetRecords","dynamodb:GetShardIterator","dynamodb:ListStreams","logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}"#,
    ),
    (
        "/service-role/",
        "AWSLambdaSQSQueueExecutionRole",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:GetQueueAttributes","logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}"#,
    ),
    (
        "/service-role/",
        "AmazonECSTaskExecutionRolePolicy",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:GetAuthorizationToken","ecr:BatchCheckLayerAvailability","ecr:GetDownloadUrlForLayer","ecr:BatchGetImage","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}"#,
    ),
    (
        "/service-role/",
        "AmazonEC2RoleforSSM",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ssm:*","ec2messages:*","cloudwatch:PutMetricData","ds:CreateComputer","ds:DescribeDirectories","logs:*","s3:*"],"Resource":"*"}]}"#,
    ),
    (
        "/",
        "AmazonSSMManagedInstanceCore",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ssm:DescribeAssociation","ssm:GetDeployablePatchSnapshotForInstance","ssm:GetDocument","ssm:DescribeDocument","ssm:GetManifest","ssm:GetParameter","ssm:GetParameters","ssm:ListAssociations","ssm:ListInstanceAssociations","ssm:PutInventory","ssm:PutComplianceItems","ssm:PutConfigurePackageResult","ssm:UpdateAssociationStatus","ssm:UpdateInstanceAssociationStatus","ssm:UpdateInstanceInformation","ssmmessages:*","ec2messages:*"],"Resource":"*"}]}"#,
    ),
];

pub const ARN_PREFIX: &str = "arn:aws:iam::aws:policy/";

/// A known AWS managed policy.
#[derive(Debug, Clone, PartialEq)]
pub struct AwsPolicy {
    pub name: &'static str,
    pub path: &'static str,
    pub arn: String,
    /// Stable across restarts and processes: derived from the name.
    pub id: String,
    pub document: &'static str,
    pub create_date: DateTime<Utc>,
}

fn build(path: &'static str, name: &'static str, document: &'static str) -> AwsPolicy {
    let digest = Sha256::digest(name.as_bytes());
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let tail: String = digest
        .iter()
        .take(17)
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect();
    AwsPolicy {
        name,
        path,
        arn: format!("arn:aws:iam::aws:policy{path}{name}"),
        id: format!("ANPA{tail}"),
        document,
        // AWS reports the date the policy was first published; one fixed date stands in.
        create_date: Utc
            .with_ymd_and_hms(2015, 2, 6, 18, 39, 46)
            .single()
            .unwrap_or_default(),
    }
}

/// Every known AWS managed policy.
pub fn all() -> Vec<AwsPolicy> {
    POLICIES.iter().map(|(p, n, d)| build(p, n, d)).collect()
}

/// The known AWS managed policy with this ARN.
pub fn get(arn: &str) -> Option<AwsPolicy> {
    POLICIES
        .iter()
        .map(|(p, n, d)| build(p, n, d))
        .find(|p| p.arn == arn)
}

/// Whether `arn` names an AWS managed policy (known here or not): `arn:aws:iam::aws:policy/...`
/// with a valid name at the end.
pub fn is_aws_arn(arn: &str) -> bool {
    arn.strip_prefix(ARN_PREFIX)
        .and_then(|rest| rest.rsplit('/').next())
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c))
        })
}
