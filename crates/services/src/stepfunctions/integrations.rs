//! Task resources: what a Task state calls, in-process. Lambda (the bare function ARN and
//! `lambda:invoke`) and SNS publish go through those services' typed operations; SQS,
//! DynamoDB and EventBridge requests (optimized and `aws-sdk:` forms) are handed to the
//! service's own JSON adapter in-process (no HTTP), so their validation and error codes are
//! exactly the API's; Step Functions' own (`states:startExecution` with `.sync`/`.sync:2`,
//! `aws-sdk:sfn:*`) reach this service; every other `aws-sdk:` service is reached through its
//! own adapter by protocol ([`super::sdk`], [`super::rest`], [`super::rest_xml`]). AWS's error
//! names are kept ([`api_failure`]); a resource cumulo cannot run fails the execution with
//! States.Runtime naming it. `ecs:runTask.sync` stops the task once it is RUNNING (no
//! container runs) and answers with it at STOPPED.

use super::Sfn;
use super::asl::run::{Pattern, Resource};
use super::asl::{Exec, Failure, Integrations};
use super::tokens::Signal;
use super::{rest, rest_xml, sdk};
use crate::Service;
use crate::lambda::InvocationType;
use crate::s3::{Conditions, ListInput};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct Integ {
    sfn: Arc<Sfn>,
    execution: String,
}

impl Integ {
    pub fn new(sfn: Arc<Sfn>, execution: String) -> Self {
        Integ { sfn, execution }
    }
}

/// How an integration names a service in errors: (optimized prefix, Java SDK service name,
/// SDK-integration prefix).
fn names(service: &str) -> (&'static str, &'static str, &'static str) {
    match service {
        "lambda" => ("Lambda", "AWSLambda", "Lambda"),
        "elasticfilesystem" | "efs" => ("EFS", "AmazonElasticFileSystem", "Efs"),
        "sqs" => ("SQS", "AmazonSQS", "Sqs"),
        "sns" => ("SNS", "AmazonSNS", "Sns"),
        "dynamodb" => ("DynamoDB", "AmazonDynamoDBv2", "DynamoDb"),
        "events" | "eventbridge" => ("EventBridge", "AmazonEventBridge", "EventBridge"),
        "states" | "sfn" => ("StepFunctions", "AWSStepFunctions", "Sfn"),
        "ecs" => ("ECS", "AmazonECS", "Ecs"),
        "s3" => ("S3", "AmazonS3", "S3"),
        "cloudfront" => ("CloudFront", "AmazonCloudFront", "CloudFront"),
        "ssm" => ("SSM", "AWSSimpleSystemsManagement", "Ssm"),
        "secretsmanager" => ("SecretsManager", "AWSSecretsManager", "SecretsManager"),
        "kms" => ("KMS", "AWSKMS", "Kms"),
        "logs" | "cloudwatchlogs" => ("CloudWatchLogs", "AWSLogs", "CloudWatchLogs"),
        "monitoring" | "cloudwatch" => ("CloudWatch", "AmazonCloudWatch", "CloudWatch"),
        "ecr" => ("ECR", "AmazonECR", "Ecr"),
        "acm" => ("ACM", "AWSCertificateManager", "Acm"),
        "servicediscovery" => (
            "ServiceDiscovery",
            "AWSServiceDiscovery",
            "ServiceDiscovery",
        ),
        "application-autoscaling" | "applicationautoscaling" => (
            "ApplicationAutoScaling",
            "AWSApplicationAutoScaling",
            "ApplicationAutoScaling",
        ),
        "apprunner" => ("AppRunner", "AWSAppRunner", "AppRunner"),
        "iam" => ("IAM", "AmazonIdentityManagement", "Iam"),
        "sts" => ("STS", "AWSSecurityTokenService", "Sts"),
        "ec2" => ("EC2", "AmazonEC2", "Ec2"),
        "elasticloadbalancing" | "elasticloadbalancingv2" => (
            "ElasticLoadBalancingV2",
            "AmazonElasticLoadBalancing",
            "ElasticLoadBalancingV2",
        ),
        "autoscaling" => ("AutoScaling", "AmazonAutoScaling", "AutoScaling"),
        "cloudformation" => ("CloudFormation", "AmazonCloudFormation", "CloudFormation"),
        "route53" => ("Route53", "AmazonRoute53", "Route53"),
        "apigateway" => ("APIGateway", "AmazonApiGateway", "ApiGateway"),
        "apigatewayv2" => ("ApiGatewayV2", "AmazonApiGatewayV2", "ApiGatewayV2"),
        "scheduler" => ("Scheduler", "AmazonScheduler", "Scheduler"),
        _ => ("Unknown", "Unknown", "Unknown"),
    }
}

/// A JSON-protocol service's error answer (`__type`, `message`) as a Task failure.
fn json_failure(service: &str, sdk: bool, status: u16, body: &Value) -> Failure {
    let code = body["__type"]
        .as_str()
        .map(|t| t.rsplit('#').next().unwrap_or(t))
        .unwrap_or("UnknownError");
    let message = body["message"]
        .as_str()
        .or_else(|| body["Message"].as_str())
        .unwrap_or("");
    api_failure(service, sdk, status, code, message)
}

/// A service's error as a Task failure. An SDK integration's error is named as AWS documents
/// for them (<https://docs.aws.amazon.com/step-functions/latest/dg/supported-services-awssdk.html>):
/// `<ServiceName>.<ErrorName>`, both PascalCase, the service named as the SDK's client is
/// (`S3`, `DynamoDb`, `ApiGateway`, `Route53`, `CloudFront`), and the error name always ending
/// in `Exception`, added when the service's code lacks it (S3's `NoSuchKey` is
/// `S3.NoSuchKeyException`). A code the SDK does not model (`ValidationException`) is the
/// service's base exception, `<ServiceName>.<ServiceName>Exception`, as AWS's recorded answers
/// show (`DynamoDb.DynamoDbException`, `SecretsManager.SecretsManagerException`); where the
/// model declares it (a rest-json service's: EFS, Scheduler) it keeps its name
/// (`Scheduler.ValidationException`).
fn api_failure(service: &str, sdk: bool, status: u16, code: &str, message: &str) -> Failure {
    let (prefix, java, sdk_prefix) = names(service);
    let request_id = uuid::Uuid::new_v4();
    if sdk {
        let name = if code == "ValidationException" && !rest::models_error(service, code) {
            format!("{sdk_prefix}Exception")
        } else if code.ends_with("Exception") {
            code.to_string()
        } else {
            format!("{code}Exception")
        };
        // S3's answers also carry an extended request id, which the SDK names.
        let extended = if service == "s3" {
            format!(", Extended Request ID: {}", uuid::Uuid::new_v4().simple())
        } else {
            String::new()
        };
        return Failure::new(
            format!("{sdk_prefix}.{name}"),
            format!(
                "{message} (Service: {sdk_prefix}, Status Code: {status}, Request ID: {request_id}{extended})"
            ),
        );
    }
    let generic = matches!(
        code,
        "ValidationException"
            | "MissingParameter"
            | "InvalidParameterValue"
            | "SerializationException"
    );
    let name = if generic {
        format!("Amazon{}Exception", prefix)
    } else if code.ends_with("Exception") {
        code.to_string()
    } else {
        format!("{code}Exception")
    };
    let name = if service == "dynamodb" && generic {
        "AmazonDynamoDBException".to_string()
    } else {
        name
    };
    Failure::new(
        format!("{prefix}.{name}"),
        format!(
            "{message} (Service: {java}; Status Code: {status}; Error Code: {code}; Request ID: {request_id}; Proxy: null)"
        ),
    )
}

/// A rest-xml SDK call's failure as the state's: parameters the operation cannot take fail it
/// with States.Runtime naming them, the service's error under its SDK name.
fn rest_xml_failure(arn: &str, signing: &str, e: rest_xml::CallError) -> Failure {
    match e {
        rest_xml::CallError::Request(e) => Failure::runtime(format!("{arn}: {e}")),
        rest_xml::CallError::Api(a) => api_failure(signing, true, a.status, &a.code, &a.message),
    }
}

/// What the Java SDK adds to an optimized integration's answer.
fn with_metadata(mut v: Value, content_type: &str) -> Value {
    let request_id = uuid::Uuid::new_v4().to_string();
    if let Value::Object(m) = &mut v {
        m.insert(
            "SdkHttpMetadata".into(),
            json!({
                "AllHttpHeaders": {
                    "x-amzn-RequestId": [request_id],
                    "Content-Type": [content_type],
                },
                "HttpHeaders": {"x-amzn-RequestId": request_id, "Content-Type": content_type},
                "HttpStatusCode": 200,
            }),
        );
        m.insert(
            "SdkResponseMetadata".into(),
            json!({"RequestId": request_id}),
        );
    }
    v
}

/// A JSON payload member AWS serializes to a string when the state gives a JSON value.
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Every object key's first letter changed by `f`.
fn recase(v: &Value, f: fn(&char) -> char) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let mut c = k.chars();
                    let key = c.next().map(|x| f(&x).to_string() + c.as_str());
                    (key.unwrap_or_default(), recase(v, f))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| recase(x, f)).collect()),
        v => v.clone(),
    }
}

/// `putItem` → `PutItem`.
fn operation(action: &str) -> String {
    let mut c = action.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

fn unsupported(arn: &str) -> Failure {
    Failure::runtime(format!(
        "cumulo does not run the Task resource '{arn}' (supported: Lambda, SQS, SNS, DynamoDB, EventBridge, ECS runTask and Step Functions integrations, aws-sdk integrations for the emulated services, and activities)"
    ))
}

impl Integ {
    fn request(&self, exec: &Exec, target: &str, json10: bool, body: &Value) -> AwsRequest {
        let mut req = AwsRequest::new(http::Method::POST, "/");
        let ct = if json10 {
            "application/x-amz-json-1.0"
        } else {
            "application/x-amz-json-1.1"
        };
        if let (Ok(t), Ok(c)) = (target.parse(), ct.parse()) {
            req.headers.insert("x-amz-target", t);
            req.headers.insert("content-type", c);
        }
        req.body = body.to_string().into();
        req.region = exec.region.clone();
        req.account_id = self.sfn.account_id.clone();
        req.host = self.sfn.endpoint_host.clone();
        req
    }

    /// Hands a JSON request to a service's adapter; its answer or its error as a Failure.
    async fn json_call(
        &self,
        exec: &Exec,
        service: &str,
        sdk: bool,
        action: &str,
        params: &Value,
    ) -> Result<Value, Failure> {
        let op = operation(action);
        let p = &self.sfn.peers;
        let resp: AwsResponse = match service {
            "dynamodb" => {
                let req = self.request(exec, &format!("DynamoDB_20120810.{op}"), true, params);
                p.dynamodb.handle(req).await
            }
            "sqs" => {
                let req = self.request(exec, &format!("AmazonSQS.{op}"), true, params);
                p.sqs.handle(req).await
            }
            "ecs" => {
                let req = self.request(
                    exec,
                    &format!("AmazonEC2ContainerServiceV20141113.{op}"),
                    false,
                    params,
                );
                p.ecs.handle(req).await
            }
            "events" | "eventbridge" => {
                let req = self.request(exec, &format!("AWSEvents.{op}"), false, params);
                p.events.handle(req).await
            }
            "states" | "sfn" => {
                // The integration speaks the SDK's PascalCase; the API's members are camelCase.
                let body = recase(params, char::to_ascii_lowercase);
                let req = self.request(exec, &format!("AWSStepFunctions.{op}"), true, &body);
                let resp = super::wire::handle(&self.sfn, &req).await;
                if resp.status.is_success() {
                    let v: Value = serde_json::from_slice(&resp.body).unwrap_or(json!({}));
                    return Ok(recase(&v, char::to_ascii_uppercase));
                }
                resp
            }
            _ => return Err(Failure::runtime(format!("no JSON route to {service}"))),
        };
        let body: Value = serde_json::from_slice(&resp.body).unwrap_or(json!({}));
        if resp.status.is_success() {
            return Ok(body);
        }
        Err(json_failure(service, sdk, resp.status.as_u16(), &body))
    }

    /// Any other `aws-sdk:` service, reached through the catalog in its JSON or query
    /// protocol ([`super::sdk`]); REST services are refused by name.
    async fn sdk_call(
        &self,
        exec: &Exec,
        arn: &str,
        svc: &str,
        action: &str,
        params: &Value,
    ) -> Result<Value, Failure> {
        let signing = sdk::signing_name(svc).ok_or_else(|| unsupported(arn))?;
        let descriptor = crate::catalog::descriptor(signing).ok_or_else(|| unsupported(arn))?;
        let route = sdk::route(descriptor, svc).ok_or_else(|| unsupported(arn))?;
        let service = self
            .sfn
            .peers
            .catalog
            .upgrade()
            .and_then(|c| c.service(signing))
            .ok_or_else(|| unsupported(arn))?;
        let op = operation(action);
        match route {
            sdk::Route::Json { target, json10 } => {
                let body = sdk::to_api(signing, params);
                let req = self.request(exec, &format!("{target}.{op}"), json10, &body);
                let resp = service.handle(req).await;
                let body: Value = serde_json::from_slice(&resp.body).unwrap_or(json!({}));
                if resp.status.is_success() {
                    return Ok(sdk::from_api(signing, &body));
                }
                Err(json_failure(signing, true, resp.status.as_u16(), &body))
            }
            sdk::Route::Rest(routes) => {
                let op = routes
                    .iter()
                    .find(|r| r.name == op)
                    .ok_or_else(|| unsupported(arn))?;
                let camel = rest::camel_shapes(svc);
                let params = match camel {
                    Some(shapes) => rest::to_api(shapes, op.input, params),
                    None => params.clone(),
                };
                let mut req = rest::request(op, &params);
                req.region = exec.region.clone();
                req.account_id = self.sfn.account_id.clone();
                req.host = self.sfn.endpoint_host.clone();
                let resp = service.handle(req).await;
                if resp.status.is_success() {
                    let out = rest::answer(op, &resp);
                    return Ok(match camel {
                        Some(shapes) => rest::from_api(shapes, op.output, &out),
                        None => out,
                    });
                }
                let body: Value = serde_json::from_slice(&resp.body).unwrap_or(json!({}));
                let code = resp
                    .headers
                    .get("x-amzn-errortype")
                    .and_then(|v| v.to_str().ok())
                    .map(|t| t.split(':').next().unwrap_or(t).to_string())
                    .or_else(|| body["__type"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "UnknownError".into());
                let message = body["message"]
                    .as_str()
                    .or_else(|| body["Message"].as_str())
                    .unwrap_or("");
                // Named by the SDK client (`ApiGatewayV2`), not the shared signing name.
                Err(api_failure(svc, true, resp.status.as_u16(), &code, message))
            }
            sdk::Route::RestXml(model) => {
                let mut req = rest_xml::request(model, signing, &op, params, &exec.region)
                    .map_err(|e| rest_xml_failure(arn, signing, e))?;
                req.region = exec.region.clone();
                req.account_id = self.sfn.account_id.clone();
                req.host = self.sfn.endpoint_host.clone();
                let method = req.method.clone();
                let resp = service.handle(req).await;
                rest_xml::answer(model, signing, &op, &method, &resp)
                    .map_err(|e| rest_xml_failure(arn, signing, e))
            }
            sdk::Route::Query { version } => {
                let model =
                    crate::query_models::model(signing, version).ok_or_else(|| unsupported(arn))?;
                let refused = |e: cumulo_wire::AwsError| {
                    api_failure(signing, true, e.status.as_u16(), &e.code, &e.message)
                };
                let body = sdk::form_body(model, &op, version, params).map_err(refused)?;
                let mut req = sdk::query_request(body);
                req.region = exec.region.clone();
                req.account_id = self.sfn.account_id.clone();
                req.host = self.sfn.endpoint_host.clone();
                let resp = service.handle(req).await;
                if resp.status.is_success() {
                    return sdk::query_answer(model, &op, &resp.body)
                        .map_err(|e| Failure::runtime(e.message));
                }
                let (code, message) = sdk::query_error(&resp.body);
                Err(api_failure(
                    signing,
                    true,
                    resp.status.as_u16(),
                    &code,
                    &message,
                ))
            }
        }
    }

    async fn lambda(
        &self,
        exec: &Exec,
        function: &str,
        qualifier: Option<&str>,
        payload: &Value,
        legacy: bool,
    ) -> Result<Value, Failure> {
        let core = self.sfn.peers.lambda.core();
        let invoked = core
            .invoke(
                &exec.region,
                function,
                qualifier,
                payload.to_string().into(),
                InvocationType::RequestResponse,
                &self.sfn.endpoint_host,
            )
            .await
            .map_err(|e| api_failure("lambda", false, e.status.as_u16(), &e.code, &e.message))?;
        let out = invoked
            .output
            .unwrap_or_else(|| crate::lambda::runtime::InvokeOutput {
                payload: bytes::Bytes::from_static(b"null"),
                function_error: None,
                log_tail: String::new(),
            });
        let text = String::from_utf8_lossy(&out.payload).to_string();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        if out.function_error.is_some() {
            let error = value["errorType"]
                .as_str()
                .unwrap_or("Exception")
                .to_string();
            return Err(Failure::new(error, text));
        }
        if legacy {
            return Ok(value);
        }
        Ok(with_metadata(
            json!({
                "ExecutedVersion": invoked.executed_version,
                "Payload": value,
                "StatusCode": 200,
            }),
            "application/json",
        ))
    }

    fn sns_publish(&self, exec: &Exec, params: &Value) -> Result<Value, Failure> {
        const KNOWN: &[&str] = &[
            "TopicArn",
            "TargetArn",
            "Message",
            "Subject",
            "MessageStructure",
            "MessageGroupId",
            "MessageDeduplicationId",
        ];
        if let Some(k) = params
            .as_object()
            .and_then(|m| m.keys().find(|k| !KNOWN.contains(&k.as_str())))
        {
            return Err(Failure::runtime(format!(
                "cumulo's sns:publish integration does not take the parameter {k}"
            )));
        }
        let s = |k: &str| params[k].as_str().map(str::to_string);
        let input = crate::sns::PublishInput {
            topic_arn: s("TopicArn"),
            target_arn: s("TargetArn"),
            phone_number: None,
            message: params.get("Message").map(as_text).unwrap_or_default(),
            subject: s("Subject"),
            message_structure: s("MessageStructure"),
            message_attributes: Vec::new(),
            message_group_id: s("MessageGroupId"),
            message_deduplication_id: s("MessageDeduplicationId"),
        };
        let base = format!("http://{}", self.sfn.endpoint_host);
        let out = self
            .sfn
            .peers
            .sns
            .publish(&exec.region, &base, input)
            .map_err(|e| api_failure("sns", false, e.status.as_u16(), &e.code, &e.message))?;
        let mut v = json!({"MessageId": out.message_id});
        if let Some(n) = out.sequence_number {
            v["SequenceNumber"] = json!(n);
        }
        Ok(with_metadata(v, "text/xml"))
    }

    /// A Map ItemReader's S3 GetObject (the body as text) and ListObjectsV2, through S3's typed
    /// operations.
    fn s3(&self, action: &str, params: &Value) -> Result<Value, Failure> {
        let s3 = &self.sfn.peers.s3;
        let fail = |e: AwsError| api_failure("s3", false, e.status.as_u16(), &e.code, &e.message);
        let bucket = params["Bucket"].as_str().unwrap_or("");
        match action {
            "getObject" => {
                let key = params["Key"].as_str().unwrap_or("");
                let version = params["VersionId"].as_str();
                let got = s3
                    .get_object(bucket, key, version, None, &Conditions::default())
                    .map_err(fail)?
                    .map_err(|_| Failure::runtime("S3 GetObject: a precondition failed"))?;
                Ok(json!({
                    "Body": String::from_utf8_lossy(&got.body),
                    "ContentLength": got.meta.size,
                    "ETag": format!("\"{}\"", got.meta.etag),
                    "VersionId": got.meta.version_id,
                }))
            }
            "listObjectsV2" => {
                let input = ListInput {
                    prefix: params["Prefix"].as_str().unwrap_or("").to_string(),
                    delimiter: String::new(),
                    marker: String::new(),
                    max_keys: params["MaxKeys"].as_u64().unwrap_or(1000) as usize,
                };
                let listed = s3.list_objects(bucket, &input).map_err(fail)?;
                let contents: Vec<Value> = listed
                    .entries
                    .iter()
                    .map(|m| {
                        json!({"Key": m.key, "Size": m.size, "ETag": format!("\"{}\"", m.etag),
                            "LastModified": m.last_modified, "StorageClass": "STANDARD"})
                    })
                    .collect();
                Ok(
                    json!({"Name": bucket, "KeyCount": contents.len(), "Contents": contents,
                    "IsTruncated": listed.is_truncated}),
                )
            }
            other => Err(unsupported(&format!("arn:aws:states:::s3:{other}"))),
        }
    }

    async fn start_execution(&self, exec: &Exec, params: &Value) -> Result<Value, Failure> {
        let mut p = params.clone();
        if let Some(i) = p.get("Input") {
            let t = if i.is_null() {
                "{}".to_string()
            } else {
                as_text(i)
            };
            p["Input"] = json!(t);
        }
        let started = self
            .json_call(exec, "states", false, "startExecution", &p)
            .await?;
        Ok(with_metadata(started, "application/x-amz-json-1.0"))
    }

    /// `states:startExecution.sync`: the child execution's end (`.sync:2`: Input and Output as
    /// JSON); a child that did not succeed fails the task with its description as the cause.
    async fn execution_end(&self, started: &Value, pattern: Pattern) -> Result<Value, Failure> {
        let arn = started["ExecutionArn"].as_str().unwrap_or("").to_string();
        let x = self
            .sfn
            .wait_for(&arn)
            .await
            .map_err(|e| Failure::runtime(e.message))?;
        let output = x.output.clone().unwrap_or_else(|| "null".into());
        let mut v = json!({
            "ExecutionArn": x.arn,
            "StateMachineArn": x.machine_arn,
            "Name": x.name,
            "Status": x.status,
            "StartDate": (x.start * 1000.0) as i64,
            "StopDate": (x.stop.unwrap_or(x.start) * 1000.0) as i64,
            "Input": x.input,
            "InputDetails": {"Included": true},
        });
        if x.status == "SUCCEEDED" {
            v["Output"] = if pattern == Pattern::Sync2 {
                serde_json::from_str(&output).unwrap_or(Value::Null)
            } else {
                json!(output)
            };
            v["OutputDetails"] = json!({"Included": true});
            if pattern == Pattern::Sync2 {
                v["Input"] = serde_json::from_str(&x.input).unwrap_or(Value::Null);
            }
            return Ok(with_metadata(v, "application/x-amz-json-1.0"));
        }
        if let Some(e) = &x.error {
            v["Error"] = json!(e);
        }
        if let Some(c) = &x.cause {
            v["Cause"] = json!(c);
        }
        Err(Failure::new("States.TaskFailed", v.to_string()))
    }

    /// `ecs:runTask`: RunTask through ECS's adapter (the SDK's PascalCase both ways).
    async fn run_task(&self, exec: &Exec, params: &Value) -> Result<Value, Failure> {
        let body = recase(params, char::to_ascii_lowercase);
        let v = self.json_call(exec, "ecs", false, "runTask", &body).await?;
        let v = recase(&v, char::to_ascii_uppercase);
        if v["Failures"].as_array().is_some_and(|f| !f.is_empty()) {
            return Err(Failure::new(
                "ECS.AmazonECSException",
                v["Failures"].to_string(),
            ));
        }
        Ok(with_metadata(v, "application/x-amz-json-1.1"))
    }

    /// `ecs:runTask.sync`: no container runs in cumulo, so once the task is RUNNING it is
    /// stopped (as if its containers had exited 0) and the task description at STOPPED is the
    /// answer.
    async fn task_end(&self, exec: &Exec, submitted: &Value) -> Result<Value, Failure> {
        let task = submitted["Tasks"][0]["TaskArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let cluster = submitted["Tasks"][0]["ClusterArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let describe = json!({"cluster": cluster, "tasks": [task]});
        let mut stopped = false;
        loop {
            let d = self
                .json_call(exec, "ecs", false, "describeTasks", &describe)
                .await?;
            let status = d["tasks"][0]["lastStatus"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if status == "STOPPED" {
                return Ok(recase(&d["tasks"][0], char::to_ascii_uppercase));
            }
            if status == "RUNNING" && !stopped {
                let stop = json!({"cluster": cluster, "task": task,
                    "reason": "cumulo runs no container: the Step Functions .sync integration stops the task once it is RUNNING"});
                self.json_call(exec, "ecs", false, "stopTask", &stop)
                    .await?;
                stopped = true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

#[async_trait::async_trait]
impl Integrations for Integ {
    async fn call(
        &self,
        exec: &Exec,
        resource: &Resource,
        params: Value,
        token: Option<&str>,
    ) -> Result<Value, Failure> {
        match resource {
            Resource::LambdaArn(arn) => self.lambda(exec, arn, None, &params, true).await,
            Resource::Activity(arn) => {
                self.sfn
                    .activity(arn)
                    .map_err(|e| Failure::runtime(e.message))?;
                let taken = self.sfn.tokens.enqueue(
                    arn,
                    token.unwrap_or_default().to_string(),
                    params.to_string(),
                );
                let worker = taken
                    .await
                    .map_err(|_| Failure::runtime("the activity task was dropped"))?;
                Ok(json!({"workerName": worker}))
            }
            Resource::Service {
                arn,
                service,
                action,
                pattern,
            } => {
                if let Some(svc) = service.strip_prefix("aws-sdk:") {
                    return match svc {
                        "lambda" if action == "invoke" => {
                            let f = params["FunctionName"].as_str().unwrap_or("");
                            let q = params["Qualifier"].as_str();
                            self.lambda(exec, f, q, &params["Payload"], false).await
                        }
                        "dynamodb" | "sqs" | "eventbridge" | "sfn" => {
                            self.json_call(exec, svc, true, action, &params).await
                        }
                        _ => self.sdk_call(exec, arn, svc, action, &params).await,
                    };
                }
                let sync_ok = matches!(
                    (service.as_str(), action.as_str()),
                    ("states", "startExecution") | ("ecs", "runTask")
                );
                if matches!(pattern, Pattern::Sync | Pattern::Sync2) && !sync_ok {
                    return Err(unsupported(arn));
                }
                match (service.as_str(), action.as_str()) {
                    ("lambda", "invoke") => {
                        let f = params["FunctionName"].as_str().unwrap_or("");
                        let q = params["Qualifier"].as_str();
                        let payload = params.get("Payload").cloned().unwrap_or(json!({}));
                        let payload = if payload.is_null() {
                            json!({})
                        } else {
                            payload
                        };
                        self.lambda(exec, f, q, &payload, false).await
                    }
                    ("sqs", "sendMessage") => {
                        let mut p = params.clone();
                        if let Some(b) = p.get("MessageBody") {
                            p["MessageBody"] = json!(as_text(b));
                        }
                        let v = self.json_call(exec, "sqs", false, action, &p).await?;
                        Ok(with_metadata(v, "application/x-amz-json-1.0"))
                    }
                    ("sns", "publish") => self.sns_publish(exec, &params),
                    // A Map's ItemReader reads through these.
                    ("s3", "getObject" | "listObjectsV2") => self.s3(action, &params),
                    ("dynamodb", "getItem" | "putItem" | "updateItem" | "deleteItem") => {
                        let v = self
                            .json_call(exec, "dynamodb", false, action, &params)
                            .await?;
                        Ok(with_metadata(v, "application/x-amz-json-1.0"))
                    }
                    ("events", "putEvents") => {
                        let mut p = params.clone();
                        if let Some(Value::Array(entries)) = p.get_mut("Entries") {
                            for e in entries {
                                if let Some(d) = e.get("Detail") {
                                    e["Detail"] = json!(as_text(d));
                                }
                            }
                        }
                        let v = self.json_call(exec, "events", false, action, &p).await?;
                        if v["FailedEntryCount"].as_u64().unwrap_or(0) > 0 {
                            return Err(Failure::new("EventBridge.FailedEntry", v.to_string()));
                        }
                        Ok(v)
                    }
                    ("states", "startExecution") => self.start_execution(exec, &params).await,
                    ("ecs", "runTask") => self.run_task(exec, &params).await,
                    _ => Err(unsupported(arn)),
                }
            }
        }
    }

    async fn await_sync(
        &self,
        exec: &Exec,
        resource: &Resource,
        submitted: Value,
    ) -> Result<Value, Failure> {
        match resource {
            Resource::Service {
                service, pattern, ..
            } if service == "states" => self.execution_end(&submitted, *pattern).await,
            Resource::Service { service, .. } if service == "ecs" => {
                self.task_end(exec, &submitted).await
            }
            _ => Ok(submitted),
        }
    }

    async fn await_token(&self, token: &str, heartbeat: Option<u64>) -> Result<Value, Failure> {
        self.sfn
            .tokens
            .wait(token, heartbeat.map(|h| h as f64))
            .await
    }

    fn new_token(&self, _: &Exec) -> String {
        self.sfn.tokens.issue(&self.execution)
    }
}

/// SendTaskFailure's error and cause as the waiting Task fails with.
pub fn failure_signal(error: Option<String>, cause: Option<String>) -> Signal {
    Signal::Done(Err(Failure::new(
        error.unwrap_or_default(),
        cause.unwrap_or_default(),
    )))
}
