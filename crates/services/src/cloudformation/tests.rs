//! The adapter against a real engine in process: members decoded, views encoded as botocore
//! parses them, errors in the query shape.

use super::CloudFormationService;
use crate::Service;
use cumulo_engine::EngineConfig;
use cumulo_store::Store;
use cumulo_wire::AwsRequest;
use http::Method;
use std::sync::Arc;

fn service() -> (CloudFormationService, crate::providers::ProviderServices) {
    let services = crate::providers::test_support::services();
    let store = Arc::new(Store::in_memory().expect("store"));
    let svc = CloudFormationService::new(
        store,
        &crate::Config::default(),
        services.clone(),
        EngineConfig::default(),
    )
    .expect("engine");
    (svc, services)
}

fn form(body: &str) -> AwsRequest {
    let mut req = AwsRequest::new(Method::POST, "/");
    req.body = bytes::Bytes::from(format!("Version=2010-05-15&{body}"));
    req.host = "127.0.0.1:4999".into();
    req
}

async fn call(svc: &CloudFormationService, body: &str) -> (u16, String) {
    let resp = svc.handle(form(body)).await;
    (
        resp.status.as_u16(),
        String::from_utf8_lossy(&resp.body).into_owned(),
    )
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn create_describe_delete_through_the_adapter() {
    let (svc, services) = service();
    let template = r#"{"Parameters":{"Delay":{"Type":"Number"}},"Resources":{"Q":{"Type":"AWS::SQS::Queue","Properties":{"QueueName":"wireq","DelaySeconds":{"Ref":"Delay"}}}},"Outputs":{"Url":{"Value":{"Ref":"Q"},"Export":{"Name":"wire-url"}}}}"#;
    let (status, body) = call(
        &svc,
        &format!(
            "Action=CreateStack&StackName=wire&TemplateBody={}&Parameters.member.1.ParameterKey=Delay&Parameters.member.1.ParameterValue=4&Tags.member.1.Key=team&Tags.member.1.Value=a",
            enc(template)
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?><CreateStackResponse xmlns=\"http://cloudformation.amazonaws.com/doc/2010-05-15/\"><CreateStackResult><StackId>arn:aws:cloudformation:us-east-1:000000000000:stack/wire/"), "{body}");

    let (status, body) = call(&svc, "Action=DescribeStacks&StackName=wire").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<StackStatus>CREATE_COMPLETE</StackStatus>"),
        "{body}"
    );
    assert!(body.contains("<Parameters><member><ParameterKey>Delay</ParameterKey><ParameterValue>4</ParameterValue></member></Parameters>"), "{body}");
    assert!(body.contains("<OutputKey>Url</OutputKey><OutputValue>http://127.0.0.1:4999/000000000000/wireq</OutputValue>"), "the queue URL uses the client's host: {body}");
    assert!(body.contains("<ExportName>wire-url</ExportName>"), "{body}");
    assert!(
        body.contains("<Tags><member><Key>team</Key><Value>a</Value></member></Tags>"),
        "{body}"
    );
    let created = body
        .split("<CreationTime>")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .unwrap_or_default();
    assert!(
        created.len() == 24 && created.ends_with('Z') && created.as_bytes()[19] == b'.',
        "ISO 8601 with milliseconds: {created}"
    );
    let caller = crate::sqs::Caller {
        region: "us-east-1".into(),
        account_id: "000000000000".into(),
        host: "x".into(),
        sender_id: "x".into(),
    };
    let attrs = services
        .sqs
        .get_queue_attributes(
            &caller,
            "http://x/000000000000/wireq",
            &["DelaySeconds".into()],
        )
        .expect("queue exists");
    assert_eq!(attrs, vec![("DelaySeconds".to_string(), "4".to_string())]);

    let (_, body) = call(&svc, "Action=ListStackResources&StackName=wire").await;
    assert!(body.contains("<StackResourceSummaries><member><LogicalResourceId>Q</LogicalResourceId><PhysicalResourceId>http://127.0.0.1:4999/000000000000/wireq</PhysicalResourceId><ResourceType>AWS::SQS::Queue</ResourceType><LastUpdatedTimestamp>"), "{body}");
    let (_, body) = call(&svc, "Action=ListExports").await;
    assert!(body.contains("<Name>wire-url</Name>"), "{body}");

    let (status, body) = call(&svc, "Action=DeleteStack&StackName=wire").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<DeleteStackResponse xmlns=") && body.contains("<RequestId>"),
        "{body}"
    );
    assert!(
        services
            .sqs
            .get_queue_attributes(&caller, "http://x/000000000000/wireq", &[])
            .is_err()
    );
}

#[tokio::test]
async fn errors_in_the_query_shape() {
    let (svc, _) = service();
    let (status, body) = call(&svc, "Action=DescribeStacks&StackName=nope").await;
    assert_eq!(status, 400);
    assert!(body.contains("<Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id nope does not exist</Message>"), "{body}");
    let (status, body) = call(&svc, "Action=CreateStack").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("Value null at &apos;stackName&apos; failed to satisfy constraint")
            || body.contains("Value null at 'stackName' failed to satisfy constraint"),
        "{body}"
    );
    let (status, body) = call(&svc, "Action=CreateStack&StackName=x&DisableRollback=maybe").await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = call(&svc, "Action=EstimateTemplateCost").await;
    assert_eq!(status, 501);
    assert!(body.contains("EstimateTemplateCost"), "{body}");
    let (status, body) = call(&svc, "Action=Frobnicate").await;
    assert_eq!(status, 400);
    assert!(body.contains("<Code>InvalidAction</Code>"), "{body}");
}
