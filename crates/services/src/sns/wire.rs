//! The query-protocol adapter: form parameters in, XML out, errors in the query error shape.

use super::SnsService;
use super::publish::{BatchEntry, MessageAttribute, PublishInput};
use super::subscriptions::{SubscribeInput, SubscriptionSummary};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub(crate) const NS: &str = "http://sns.amazonaws.com/doc/2010-03-31/";
const PROTOCOL: Protocol = Protocol::Query(NS);

/// SNS operations that exist in AWS but are not emulated (they answer 501 naming themselves).
const NOT_IMPLEMENTED: &[&str] = &[
    "AddPermission",
    "CheckIfPhoneNumberIsOptedOut",
    "CreatePlatformApplication",
    "CreatePlatformEndpoint",
    "CreateSMSSandboxPhoneNumber",
    "DeleteEndpoint",
    "DeletePlatformApplication",
    "DeleteSMSSandboxPhoneNumber",
    "GetDataProtectionPolicy",
    "GetEndpointAttributes",
    "GetPlatformApplicationAttributes",
    "GetSMSAttributes",
    "GetSMSSandboxAccountStatus",
    "ListEndpointsByPlatformApplication",
    "ListOriginationNumbers",
    "ListPhoneNumbersOptedOut",
    "ListPlatformApplications",
    "ListSMSSandboxPhoneNumbers",
    "OptInPhoneNumber",
    "PutDataProtectionPolicy",
    "RemovePermission",
    "SetEndpointAttributes",
    "SetPlatformApplicationAttributes",
    "SetSMSAttributes",
    "VerifySMSSandboxPhoneNumber",
];

pub async fn handle(svc: &SnsService, req: &AwsRequest) -> AwsResponse {
    let params = query_params(req);
    let action = params.get("Action").unwrap_or("").to_string();
    match dispatch(svc, req, &params, &action).await {
        Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

fn missing(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidParameter",
        format!("Invalid parameter: {name} Reason: no value for required parameter"),
    )
}

fn required<'a>(p: &'a QueryParams, name: &str) -> Result<&'a str, AwsError> {
    p.get(name).ok_or_else(|| missing(name))
}

fn tags(p: &QueryParams) -> Vec<(String, String)> {
    p.list_of_structs("Tags")
        .into_iter()
        .map(|fields| {
            let get = |f: &str| {
                fields
                    .iter()
                    .find(|(k, _)| k == f)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            (get("Key"), get("Value"))
        })
        .collect()
}

fn message_attributes(p: &QueryParams) -> Result<Vec<(String, MessageAttribute)>, AwsError> {
    p.list_of_structs("MessageAttributes.entry")
        .into_iter()
        .map(|fields| {
            let get = |f: &str| {
                fields
                    .iter()
                    .find(|(k, _)| k == f)
                    .map(|(_, v)| v.clone())
            };
            let name = get("Name").ok_or_else(|| missing("MessageAttributes.entry.N.Name"))?;
            let binary_value = get("Value.BinaryValue")
                .map(|b| {
                    B64.decode(b.as_bytes()).map_err(|_| {
                        AwsError::bad_request(
                            "InvalidParameter",
                            format!("Invalid parameter: The message attribute '{name}' has an invalid binary value."),
                        )
                    })
                })
                .transpose()?;
            Ok((
                name,
                MessageAttribute {
                    data_type: get("Value.DataType").unwrap_or_default(),
                    string_value: get("Value.StringValue"),
                    binary_value,
                },
            ))
        })
        .collect()
}

fn publish_input(p: &QueryParams) -> Result<PublishInput, AwsError> {
    Ok(PublishInput {
        topic_arn: p.get("TopicArn").map(str::to_string),
        target_arn: p.get("TargetArn").map(str::to_string),
        phone_number: p.get("PhoneNumber").map(str::to_string),
        message: required(p, "Message")?.to_string(),
        subject: p.get("Subject").map(str::to_string),
        message_structure: p.get("MessageStructure").map(str::to_string),
        message_attributes: message_attributes(p)?,
        message_group_id: p.get("MessageGroupId").map(str::to_string),
        message_deduplication_id: p.get("MessageDeduplicationId").map(str::to_string),
    })
}

fn write_attributes(w: &mut XmlWriter, attrs: &[(String, String)]) {
    w.open("Attributes", None);
    for (k, v) in attrs {
        w.open("entry", None)
            .elem("key", k)
            .elem("value", v)
            .close();
    }
    w.close();
}

fn write_subscriptions(w: &mut XmlWriter, subs: &[SubscriptionSummary], next: Option<&str>) {
    w.open("Subscriptions", None);
    for s in subs {
        w.open("member", None)
            .elem("SubscriptionArn", &s.subscription_arn)
            .elem("Owner", &s.owner)
            .elem("Protocol", &s.protocol)
            .elem("Endpoint", &s.endpoint)
            .elem("TopicArn", &s.topic_arn)
            .close();
    }
    w.close();
    w.opt("NextToken", next);
}

/// The URL query plus, under a form content type (or none), the form body: the query protocol
/// reads nothing else, so a body sent as JSON or text carries no Action.
fn query_params(req: &AwsRequest) -> QueryParams {
    let form = req
        .header("content-type")
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if form {
        QueryParams::from_request(req)
    } else {
        QueryParams(req.query.clone())
    }
}

async fn dispatch(
    svc: &SnsService,
    req: &AwsRequest,
    p: &QueryParams,
    action: &str,
) -> Result<String, AwsError> {
    let region = req.region.as_str();
    let base = format!("http://{}", req.host);
    let rid = req.request_id.as_str();
    match action {
        "CreateTopic" => {
            let arn = svc
                .create_topic(
                    region,
                    required(p, "Name")?,
                    &p.map("Attributes", "key", "value"),
                    &tags(p),
                )
                .await?;
            Ok(respond(action, rid, |w| {
                w.elem("TopicArn", &arn);
            }))
        }
        "DeleteTopic" => {
            svc.delete_topic(region, required(p, "TopicArn")?).await?;
            Ok(respond_empty(action, rid))
        }
        "GetTopicAttributes" => {
            let attrs = svc.get_topic_attributes(region, required(p, "TopicArn")?)?;
            Ok(respond(action, rid, |w| write_attributes(w, &attrs)))
        }
        "SetTopicAttributes" => {
            svc.set_topic_attribute(
                region,
                required(p, "TopicArn")?,
                required(p, "AttributeName")?,
                p.get("AttributeValue").unwrap_or(""),
            )
            .await?;
            Ok(respond_empty(action, rid))
        }
        "ListTopics" => {
            let (arns, next) = svc.list_topics(region, p.get("NextToken"))?;
            Ok(respond(action, rid, |w| {
                w.open("Topics", None);
                for a in &arns {
                    w.open("member", None).elem("TopicArn", a).close();
                }
                w.close();
                w.opt("NextToken", next.as_deref());
            }))
        }
        "Subscribe" => {
            let input = SubscribeInput {
                topic_arn: required(p, "TopicArn")?.to_string(),
                protocol: required(p, "Protocol")?.to_string(),
                endpoint: p.get("Endpoint").map(str::to_string),
                attributes: p.map("Attributes", "key", "value"),
                return_subscription_arn: p
                    .get("ReturnSubscriptionArn")
                    .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            };
            let arn = svc.subscribe(region, &base, input)?;
            Ok(respond(action, rid, |w| {
                w.elem("SubscriptionArn", &arn);
            }))
        }
        "ConfirmSubscription" => {
            let arn =
                svc.confirm_subscription(region, required(p, "TopicArn")?, required(p, "Token")?)?;
            Ok(respond(action, rid, |w| {
                w.elem("SubscriptionArn", &arn);
            }))
        }
        "Unsubscribe" => {
            svc.unsubscribe(region, required(p, "SubscriptionArn")?)?;
            Ok(respond_empty(action, rid))
        }
        "ListSubscriptions" => {
            let (subs, next) = svc.list_subscriptions(region, None, p.get("NextToken"))?;
            Ok(respond(action, rid, |w| {
                write_subscriptions(w, &subs, next.as_deref())
            }))
        }
        "ListSubscriptionsByTopic" => {
            let topic = required(p, "TopicArn")?;
            let (subs, next) = svc.list_subscriptions(region, Some(topic), p.get("NextToken"))?;
            Ok(respond(action, rid, |w| {
                write_subscriptions(w, &subs, next.as_deref())
            }))
        }
        "GetSubscriptionAttributes" => {
            let attrs = svc.get_subscription_attributes(region, required(p, "SubscriptionArn")?)?;
            Ok(respond(action, rid, |w| write_attributes(w, &attrs)))
        }
        "SetSubscriptionAttributes" => {
            svc.set_subscription_attribute(
                region,
                required(p, "SubscriptionArn")?,
                required(p, "AttributeName")?,
                p.get("AttributeValue").unwrap_or(""),
            )?;
            Ok(respond_empty(action, rid))
        }
        "Publish" => {
            let out = svc.publish(region, &base, publish_input(p)?)?;
            Ok(respond(action, rid, |w| {
                w.elem("MessageId", &out.message_id);
                w.opt("SequenceNumber", out.sequence_number.as_deref());
            }))
        }
        "PublishBatch" => {
            let topic = required(p, "TopicArn")?;
            let entries = p
                .list_of_structs("PublishBatchRequestEntries")
                .into_iter()
                .map(|fields| {
                    let entry = QueryParams(fields);
                    Ok(BatchEntry {
                        id: entry.get("Id").unwrap_or("").to_string(),
                        input: publish_input(&entry)?,
                    })
                })
                .collect::<Result<Vec<_>, AwsError>>()?;
            let (ok, failed) = svc.publish_batch(region, &base, topic, &entries)?;
            Ok(respond(action, rid, |w| {
                w.open("Successful", None);
                for (id, out) in &ok {
                    w.open("member", None)
                        .elem("Id", id)
                        .elem("MessageId", &out.message_id)
                        .opt("SequenceNumber", out.sequence_number.as_deref())
                        .close();
                }
                w.close().open("Failed", None);
                for f in &failed {
                    w.open("member", None)
                        .elem("Id", &f.id)
                        .elem("Code", &f.code)
                        .elem("Message", &f.message)
                        .elem("SenderFault", if f.sender_fault { "true" } else { "false" })
                        .close();
                }
                w.close();
            }))
        }
        "TagResource" => {
            svc.tag_resource(region, required(p, "ResourceArn")?, &tags(p))
                .await?;
            Ok(respond(action, rid, |_| {}))
        }
        "UntagResource" => {
            svc.untag_resource(region, required(p, "ResourceArn")?, &p.list("TagKeys"))
                .await?;
            Ok(respond(action, rid, |_| {}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags_for_resource(region, required(p, "ResourceArn")?)?;
            Ok(respond(action, rid, |w| {
                w.open("Tags", None);
                for (k, v) in &tags {
                    w.open("member", None)
                        .elem("Key", k)
                        .elem("Value", v)
                        .close();
                }
                w.close();
            }))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing Action parameter",
        )),
        other if NOT_IMPLEMENTED.contains(&other) => Err(AwsError::not_implemented("sns", other)),
        other => Err(AwsError::bad_request(
            "InvalidAction",
            format!("Could not find operation {other} for version 2010-03-31"),
        )),
    }
}

/// `<ActionResponse><ActionResult>...</ActionResult><ResponseMetadata>` as query APIs answer.
fn respond(action: &str, request_id: &str, body: impl FnOnce(&mut XmlWriter)) -> String {
    let mut w = XmlWriter::new();
    w.raw(&format!(
        "<{action}Response xmlns=\"{NS}\"><{action}Result>"
    ));
    body(&mut w);
    w.raw(&format!("</{action}Result>"));
    w.open("ResponseMetadata", None)
        .elem("RequestId", request_id)
        .close();
    w.raw(&format!("</{action}Response>"));
    w.finish()
}

/// A response without a result element (operations whose output is empty).
fn respond_empty(action: &str, request_id: &str) -> String {
    let mut w = XmlWriter::new();
    w.raw(&format!("<{action}Response xmlns=\"{NS}\">"));
    w.open("ResponseMetadata", None)
        .elem("RequestId", request_id)
        .close();
    w.raw(&format!("</{action}Response>"));
    w.finish()
}
