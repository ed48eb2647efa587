//! The only calls the inventory may make, and the seam to whatever sends them.
//!
//! A [`ReadRequest`] can only be built by [`ReadRequest::new`], which refuses anything that is
//! not a read: the operation must be in [`READS`] (a fixed list of Describe*/List*/Get*
//! operations, each with its wire protocol), its name must start with a read verb, it must
//! never be `GetSecretValue`, and no input may ask for decryption (`WithDecryption: true`).
//! A [`ReadClient`] (the HTTP one lives in the `cumulo` binary; tests use a fake) only ever
//! receives a `ReadRequest`, so a write cannot reach the wire by construction. A refusal is a
//! bug in the inventory, and the command stops on it (exit 2, naming the operation).

use serde_json::Value;

/// How an operation goes on the wire: what the client needs besides the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// AWS query (form-encoded POST, XML answer), with the API version.
    Query { version: &'static str },
    /// EC2's variant of query.
    Ec2 { version: &'static str },
    /// JSON 1.0 or 1.1 POST with `X-Amz-Target: <target_prefix>.<Operation>`.
    Json {
        version: &'static str,
        target_prefix: &'static str,
    },
    /// REST with a JSON answer: a GET of `path`, whose `{Name}` segments are taken from the
    /// input's members of that name (the rest of the input goes in the query string).
    RestJson { path: &'static str },
    /// REST with an XML answer, as [`Protocol::RestJson`].
    RestXml { path: &'static str },
}

/// One allowed read.
#[derive(Debug, PartialEq, Eq)]
pub struct ReadOp {
    /// SigV4 signing name.
    pub service: &'static str,
    /// The endpoint's host prefix (`<prefix>.<region>.amazonaws.com`).
    pub endpoint_prefix: &'static str,
    pub operation: &'static str,
    pub protocol: Protocol,
    /// A global service (IAM, Route 53): one endpoint, signed for us-east-1.
    pub global: bool,
}

const fn op(service: &'static str, operation: &'static str, protocol: Protocol) -> ReadOp {
    ReadOp {
        service,
        endpoint_prefix: service,
        operation,
        protocol,
        global: false,
    }
}

const CFN: Protocol = Protocol::Query {
    version: "2010-05-15",
};
const STS: Protocol = Protocol::Query {
    version: "2011-06-15",
};
const EC2: Protocol = Protocol::Ec2 {
    version: "2016-11-15",
};
const ELB: Protocol = Protocol::Query {
    version: "2015-12-01",
};
const IAM: Protocol = Protocol::Query {
    version: "2010-05-08",
};
const SNS: Protocol = Protocol::Query {
    version: "2010-03-31",
};
const fn json(version: &'static str, target_prefix: &'static str) -> Protocol {
    Protocol::Json {
        version,
        target_prefix,
    }
}
const ECS: Protocol = json("1.1", "AmazonEC2ContainerServiceV20141113");
const ACM: Protocol = json("1.1", "CertificateManager");
const LOGS: Protocol = json("1.1", "Logs_20140328");
const KMS: Protocol = json("1.1", "TrentService");
const ECR: Protocol = json("1.1", "AmazonEC2ContainerRegistry_V20150921");
const SSM: Protocol = json("1.1", "AmazonSSM");
const SECRETS: Protocol = json("1.1", "secretsmanager");
const SQS: Protocol = json("1.0", "AmazonSQS");
const SFN: Protocol = json("1.0", "AWSStepFunctions");
const DYNAMODB: Protocol = json("1.0", "DynamoDB_20120810");
const CLOUDMAP: Protocol = json("1.1", "Route53AutoNaming_v20170314");
const EVENTS: Protocol = json("1.1", "AWSEvents");
const SCALING: Protocol = json("1.1", "AnyScaleFrontendService");
const CLOUDWATCH: Protocol = Protocol::Query {
    version: "2010-08-01",
};

const fn global(mut read: ReadOp) -> ReadOp {
    read.global = true;
    read
}

const fn route53(operation: &'static str, path: &'static str) -> ReadOp {
    global(op("route53", operation, Protocol::RestXml { path }))
}

/// Every operation the inventory may call. Adding one here is the only way to widen what it
/// can do, and [`ReadRequest::new`] still checks each against the rules above.
pub static READS: &[ReadOp] = &[
    op("sts", "GetCallerIdentity", STS),
    op("cloudformation", "DescribeStacks", CFN),
    op("cloudformation", "GetTemplate", CFN),
    op("cloudformation", "ListStackResources", CFN),
    op("ec2", "DescribeVpcs", EC2),
    op("ec2", "DescribeSubnets", EC2),
    op("ec2", "DescribeSecurityGroups", EC2),
    op("ec2", "DescribeRouteTables", EC2),
    op("ec2", "DescribeInternetGateways", EC2),
    op("ec2", "DescribeNatGateways", EC2),
    op("ec2", "DescribeAddresses", EC2),
    op("elasticloadbalancing", "DescribeLoadBalancers", ELB),
    op("elasticloadbalancing", "DescribeListeners", ELB),
    op("elasticloadbalancing", "DescribeRules", ELB),
    op("elasticloadbalancing", "DescribeTargetGroups", ELB),
    op("ecs", "DescribeClusters", ECS),
    op("ecs", "DescribeServices", ECS),
    op("ecs", "DescribeTaskDefinition", ECS),
    route53("GetHostedZone", "/2013-04-01/hostedzone/{Id}"),
    route53("ListHostedZonesByName", "/2013-04-01/hostedzonesbyname"),
    route53(
        "ListResourceRecordSets",
        "/2013-04-01/hostedzone/{Id}/rrset",
    ),
    op("acm", "ListCertificates", ACM),
    op("acm", "DescribeCertificate", ACM),
    op("acm", "ListTagsForCertificate", ACM),
    global(op("iam", "GetRole", IAM)),
    global(op("iam", "GetPolicy", IAM)),
    global(op("iam", "GetRolePolicy", IAM)),
    op(
        "s3",
        "GetBucketLocation",
        Protocol::RestXml {
            path: "/{Bucket}?location",
        },
    ),
    op(
        "s3",
        "GetBucketVersioning",
        Protocol::RestXml {
            path: "/{Bucket}?versioning",
        },
    ),
    op("sqs", "GetQueueAttributes", SQS),
    op("sns", "GetTopicAttributes", SNS),
    op("sns", "GetSubscriptionAttributes", SNS),
    op("dynamodb", "DescribeTable", DYNAMODB),
    op(
        "s3",
        "GetBucketPolicy",
        Protocol::RestXml {
            path: "/{Bucket}?policy",
        },
    ),
    op("logs", "DescribeLogGroups", LOGS),
    op("kms", "DescribeKey", KMS),
    op("ecr", "DescribeRepositories", ECR),
    op("ssm", "GetParameter", SSM),
    op("secretsmanager", "DescribeSecret", SECRETS),
    op(
        "lambda",
        "GetFunction",
        Protocol::RestJson {
            path: "/2015-03-31/functions/{FunctionName}",
        },
    ),
    op("states", "DescribeStateMachine", SFN),
    op("servicediscovery", "GetNamespace", CLOUDMAP),
    op("servicediscovery", "GetService", CLOUDMAP),
    op("events", "DescribeRule", EVENTS),
    op("logs", "DescribeResourcePolicies", LOGS),
    op(
        "elasticfilesystem",
        "DescribeFileSystems",
        Protocol::RestJson {
            path: "/2015-02-01/file-systems",
        },
    ),
    op(
        "elasticfilesystem",
        "DescribeMountTargets",
        Protocol::RestJson {
            path: "/2015-02-01/mount-targets",
        },
    ),
    op(
        "application-autoscaling",
        "DescribeScalableTargets",
        SCALING,
    ),
    op(
        "application-autoscaling",
        "DescribeScalingPolicies",
        SCALING,
    ),
    op("monitoring", "DescribeAlarms", CLOUDWATCH),
    op(
        "lambda",
        "GetPolicy",
        Protocol::RestJson {
            path: "/2015-03-31/functions/{FunctionName}/policy",
        },
    ),
];

/// Why a call was refused before it reached the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{service}:{operation} is not a read the inventory may make (refused before sending)")]
    NotARead { service: String, operation: String },
    #[error("{service}:{operation} would read a secret's value (refused before sending)")]
    SecretValue { service: String, operation: String },
    #[error(
        "{service}:{operation} with WithDecryption=true would decrypt a value (refused before sending)"
    )]
    Decryption { service: String, operation: String },
}

impl Refused {
    /// The operation refused, `service:Operation`.
    pub fn operation(&self) -> String {
        match self {
            Refused::NotARead { service, operation }
            | Refused::SecretValue { service, operation }
            | Refused::Decryption { service, operation } => format!("{service}:{operation}"),
        }
    }
}

/// A read the rules allow, ready for a [`ReadClient`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    op: &'static ReadOp,
    input: Value,
}

/// Operations that read a secret's value, refused even if someone adds them to [`READS`].
const SECRET_READS: &[&str] = &["GetSecretValue", "BatchGetSecretValue"];
const READ_VERBS: &[&str] = &["Describe", "List", "Get"];

impl ReadRequest {
    /// `input` is the operation's input as JSON: member names as the API spells them for
    /// JSON and REST protocols, and as flattened query keys (`VpcId.1`,
    /// `LoadBalancerArns.member.1`) for query and EC2.
    pub fn new(service: &str, operation: &str, input: Value) -> Result<ReadRequest, Refused> {
        let who = || (service.to_string(), operation.to_string());
        if SECRET_READS.contains(&operation) {
            let (service, operation) = who();
            return Err(Refused::SecretValue { service, operation });
        }
        if asks_decryption(&input) {
            let (service, operation) = who();
            return Err(Refused::Decryption { service, operation });
        }
        let allowed = READS
            .iter()
            .find(|r| r.service == service && r.operation == operation)
            .filter(|r| READ_VERBS.iter().any(|v| r.operation.starts_with(v)));
        match allowed {
            Some(op) => Ok(ReadRequest { op, input }),
            None => {
                let (service, operation) = who();
                Err(Refused::NotARead { service, operation })
            }
        }
    }

    pub fn op(&self) -> &'static ReadOp {
        self.op
    }

    pub fn input(&self) -> &Value {
        &self.input
    }
}

/// Any member named `WithDecryption` that is not false, at any depth.
fn asks_decryption(input: &Value) -> bool {
    match input {
        Value::Object(map) => map.iter().any(|(k, v)| {
            (k == "WithDecryption" && !matches!(v, Value::Bool(false) | Value::Null))
                || asks_decryption(v)
        }),
        Value::Array(items) => items.iter().any(asks_decryption),
        _ => false,
    }
}

/// An error answer from the service.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    /// The AWS error code (`ValidationError`, `NoSuchEntity`, ...), or `Transport` when no
    /// answer came.
    pub code: String,
    pub message: String,
}

/// Sends reads. The answer is the operation's output as JSON; XML answers are converted
/// generically (lists keep AWS's `member`/`item` wrappers' meaning: they become arrays).
pub trait ReadClient {
    fn call(&self, request: &ReadRequest) -> Result<Value, CallError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_listed_operation_is_a_read_and_is_allowed() {
        for r in READS {
            assert!(
                READ_VERBS.iter().any(|v| r.operation.starts_with(v)),
                "{} is not named as a read",
                r.operation
            );
            assert!(ReadRequest::new(r.service, r.operation, json!({})).is_ok());
        }
    }

    #[test]
    fn writes_and_unlisted_operations_are_refused_by_name() {
        for (service, operation) in [
            ("cloudformation", "DeleteStack"),
            ("cloudformation", "UpdateStack"),
            ("s3", "DeleteObjects"),
            ("route53", "ChangeResourceRecordSets"),
            ("acm", "DeleteCertificate"),
            ("s3", "GetObject"),
            ("kms", "Decrypt"),
            ("ec2", "DescribeVpcs2"),
            ("sqs", "DescribeVpcs"),
        ] {
            let refused = ReadRequest::new(service, operation, json!({})).unwrap_err();
            assert_eq!(
                refused,
                Refused::NotARead {
                    service: service.into(),
                    operation: operation.into()
                }
            );
            assert_eq!(refused.operation(), format!("{service}:{operation}"));
        }
    }

    #[test]
    fn secret_values_are_refused_even_though_they_are_gets() {
        let refused = ReadRequest::new("secretsmanager", "GetSecretValue", json!({})).unwrap_err();
        assert!(matches!(refused, Refused::SecretValue { .. }));
        assert!(
            refused
                .to_string()
                .contains("secretsmanager:GetSecretValue")
        );
    }

    #[test]
    fn decryption_is_refused_at_any_depth_and_false_is_allowed() {
        let refused = ReadRequest::new(
            "ssm",
            "GetParameter",
            json!({"Name": "/x", "WithDecryption": true}),
        );
        assert!(matches!(refused, Err(Refused::Decryption { .. })));
        let nested = json!({"Filters": [{"WithDecryption": "true"}]});
        assert!(ReadRequest::new("ssm", "GetParameter", nested).is_err());
        let plain = json!({"Name": "/x", "WithDecryption": false});
        assert!(ReadRequest::new("ssm", "GetParameter", plain).is_ok());
    }
}
