//! A function's `Events`: pull sources (SQS, Kinesis, DynamoDB streams) as event source
//! mappings with their managed policy on the generated role; push sources (SNS, S3, Schedule,
//! CloudWatchEvent/EventBridgeRule, CloudWatchLogs) as the subscription, notification or rule
//! plus the Lambda permission; ScheduleV2 through `scheduler`; Api and HttpApi through `api`.

use crate::function::Target;
use crate::resource::{Res, Sam, get_att, managed_arn};
use crate::{Translation, api, invalid_event};
use serde_json::{Map, Value, json};

const PULL_PROPERTIES: [&str; 22] = [
    "StartingPosition",
    "StartingPositionTimestamp",
    "BatchSize",
    "Enabled",
    "MaximumBatchingWindowInSeconds",
    "MaximumRetryAttempts",
    "BisectBatchOnFunctionError",
    "MaximumRecordAgeInSeconds",
    "ParallelizationFactor",
    "Topics",
    "Queues",
    "SourceAccessConfigurations",
    "TumblingWindowInSeconds",
    "FunctionResponseTypes",
    "FilterCriteria",
    "KmsKeyArn",
    "ScalingConfig",
    "ProvisionedPollerConfig",
    "MetricsConfig",
    "LoggingConfig",
    "DestinationConfig",
    "SecretsManagerKmsKeyId",
];

/// One event as submitted.
pub struct Event<'a> {
    /// The event's own name in `Events`.
    pub name: &'a str,
    /// `<Function><Event>`: the logical id of what the event generates.
    pub id: String,
    pub ty: &'a str,
    pub props: Map<String, Value>,
}

impl Event<'_> {
    pub(crate) fn get(&self, p: &str) -> Option<&Value> {
        self.props.get(p).filter(|v| !v.is_null())
    }

    pub(crate) fn require(&self, p: &str) -> Result<Value, String> {
        self.get(p)
            .cloned()
            .ok_or_else(|| crate::invalid(&self.id, format!("Missing required property '{p}'.")))
    }

    pub(crate) fn check_known(&self, known: &[&str]) -> Result<(), String> {
        for k in self.props.keys() {
            if !known.contains(&k.as_str()) {
                return Err(crate::invalid(
                    &self.id,
                    format!("property {k} not defined for resource of type {}", self.ty),
                ));
            }
        }
        Ok(())
    }
}

/// Every event of the function, in the translator's order (by `Path`, else by name).
pub fn translate(
    t: &mut Translation,
    sam: &Sam,
    target: &Target,
    role: &mut Res,
    live: &mut Map<String, Value>,
) -> Result<Vec<Res>, String> {
    let Some(events) = sam.get("Events") else {
        return Ok(Vec::new());
    };
    let Some(events) = events.as_object() else {
        return Err(crate::invalid(
            sam.id,
            "Type of property 'Events' is invalid.",
        ));
    };
    // Sorted stably from the Events dict's own order (a Python 2.7 dict's when the template
    // has a REST API): events of one path keep it, which a shared resource policy shows.
    let mut ordered: Vec<(&String, &Value)> = match t.rest.converted_order(events.keys()) {
        Some(names) => names
            .iter()
            .filter_map(|n| events.get_key_value(n.as_str()))
            .collect(),
        None => events.iter().collect(),
    };
    let key = |(name, e): &(&String, &Value)| -> String {
        e.get("Properties")
            .and_then(|p| p.get("Path"))
            .and_then(Value::as_str)
            .map_or_else(|| name.to_string(), str::to_string)
    };
    ordered.sort_by_key(key);
    let mut out = Vec::new();
    for (name, e) in ordered {
        let Some(ty) = e.get("Type").and_then(Value::as_str) else {
            return Err(invalid_event(sam.id, name, "Type of event not recognized."));
        };
        let props = match e.get("Properties") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                return Err(invalid_event(
                    sam.id,
                    name,
                    "Properties of an event must be an object.",
                ));
            }
        };
        let event = Event {
            name,
            id: format!("{}{name}", sam.id),
            ty,
            props,
        };
        let generated = match ty {
            "Kinesis" if t.ctx.refuse_unemulated => {
                return Err(invalid_event(
                    sam.id,
                    name,
                    "Event type 'Kinesis' is not supported: Amazon Kinesis is not emulated by cumulo.",
                ));
            }
            "SQS" | "Kinesis" | "DynamoDB" => pull(t, sam, &event, target, role)?,
            "SNS" => sns(t, sam, &event, target, role)?,
            "S3" => s3(sam, &event, target, live)?,
            "Schedule" => schedule(sam, &event, target)?,
            "CloudWatchEvent" | "EventBridgeRule" => rule(sam, &event, target)?,
            "CloudWatchLogs" => logs(t, &event, target)?,
            "Api" => crate::rest_api::function_event(t, sam, &event, target, live)?,
            "HttpApi" => api::function_event(t, sam, &event, target, live)?,
            "ScheduleV2" => crate::scheduler::schedule_v2(
                sam.id,
                &event,
                target.arn(),
                crate::scheduler::Invoked::Function,
                &target.attrs,
            )?,
            "MSK"
            | "MQ"
            | "SelfManagedKafka"
            | "DocumentDB"
            | "IoTRule"
            | "AlexaSkill"
            | "Cognito"
            | "CloudWatchLogsSubscription" => {
                return Err(invalid_event(
                    sam.id,
                    name,
                    format!("Event type '{ty}' is not supported by cumulo's SAM transform."),
                ));
            }
            _ => {
                return Err(invalid_event(sam.id, name, "Type of event not recognized."));
            }
        };
        out.extend(generated);
    }
    Ok(out)
}

fn permission(
    event: &Event,
    target: &Target,
    principal: &str,
    source_arn: Option<Value>,
    source_account: Option<Value>,
) -> Res {
    let mut p = Res::new(
        format!("{}Permission", event.id),
        "AWS::Lambda::Permission",
        target.attrs.clone(),
    );
    p.put("Action", json!("lambda:InvokeFunction"));
    p.put("FunctionName", target.name());
    p.put("Principal", json!(principal));
    p.set("SourceArn", source_arn);
    p.set("SourceAccount", source_account);
    p
}

fn pull(
    t: &Translation,
    sam: &Sam,
    event: &Event,
    target: &Target,
    role: &mut Res,
) -> Result<Vec<Res>, String> {
    let (source, policy) = match event.ty {
        "SQS" => ("Queue", "service-role/AWSLambdaSQSQueueExecutionRole"),
        "Kinesis" => ("Stream", "service-role/AWSLambdaKinesisExecutionRole"),
        _ => ("Stream", "service-role/AWSLambdaDynamoDBExecutionRole"),
    };
    let mut known = PULL_PROPERTIES.to_vec();
    known.push(source);
    known.push("KafkaBootstrapServers");
    known.push("ConsumerGroupId");
    known.push("SchemaRegistryConfig");
    event.check_known(&known)?;
    for p in [
        "KafkaBootstrapServers",
        "ConsumerGroupId",
        "SchemaRegistryConfig",
        "SecretsManagerKmsKeyId",
    ] {
        if event.get(p).is_some() {
            return Err(invalid_event(
                sam.id,
                event.name,
                format!("'{p}' is not supported by cumulo's SAM transform."),
            ));
        }
    }
    let arn = event.require(source)?;
    if event.ty != "SQS" && event.get("StartingPosition").is_none() {
        return Err(crate::invalid(
            &event.id,
            "Missing required property 'StartingPosition'.",
        ));
    }
    let mut m = Res::new(
        &event.id,
        "AWS::Lambda::EventSourceMapping",
        target.attrs.clone(),
    );
    m.put("FunctionName", target.name());
    m.put("EventSourceArn", arn);
    for p in PULL_PROPERTIES {
        if p != "DestinationConfig" && p != "SecretsManagerKmsKeyId" {
            m.set(p, event.get(p).cloned());
        }
    }
    if let Some(Value::Object(f)) = event.get("FilterCriteria")
        && !f.is_empty()
        && !(f.len() == 1 && f.contains_key("Filters"))
    {
        return Err(invalid_event(
            sam.id,
            event.name,
            "FilterCriteria field has a wrong format",
        ));
    }
    let mut destination_policy = None;
    if let Some(config) = event.get("DestinationConfig") {
        let mut config = config.clone();
        let Some(on_failure) = config.get_mut("OnFailure").and_then(Value::as_object_mut) else {
            return Err(invalid_event(
                sam.id,
                event.name,
                "Property 'DestinationConfig.OnFailure' should be a map.",
            ));
        };
        if let Some(ty) = on_failure.shift_remove("Type") {
            let destination = on_failure
                .get("Destination")
                .cloned()
                .unwrap_or(Value::Null);
            destination_policy = match ty.as_str() {
                Some("SQS") => Some(
                    json!({"PolicyName": format!("{}SQSPolicy", event.id), "PolicyDocument": {"Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": destination}]}}),
                ),
                Some("SNS") => Some(
                    json!({"PolicyName": format!("{}SNSPolicy", event.id), "PolicyDocument": {"Statement": [{"Action": "sns:publish", "Effect": "Allow", "Resource": destination}]}}),
                ),
                Some("S3") => Some(
                    json!({"PolicyName": format!("{}S3Policy", event.id), "PolicyDocument": {"Statement": [{"Action": "s3:PutObject", "Effect": "Allow", "Resource": {"Fn::Join": ["/", [destination, "*"]]}}, {"Action": "s3:ListBucket", "Effect": "Allow", "Resource": destination}]}}),
                ),
                Some("Kafka") => None,
                _ => {
                    return Err(invalid_event(
                        sam.id,
                        event.name,
                        "The only valid values for 'Type' are 'SQS', 'SNS', 'S3', and 'Kafka'",
                    ));
                }
            };
        }
        m.put("DestinationConfig", config);
    }
    let arn = managed_arn(&t.ctx.partition, policy);
    if let Some(Value::Array(arns)) = role.props.get_mut("ManagedPolicyArns")
        && !arns.contains(&arn)
    {
        arns.push(arn);
    }
    if let Some(policy) = destination_policy {
        let policies = role
            .props
            .entry("Policies")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = policies {
            let documents: Vec<&Value> = list
                .iter()
                .filter_map(|d| d.get("PolicyDocument"))
                .collect();
            if !documents.contains(&&policy["PolicyDocument"]) {
                list.push(policy);
            }
        }
    }
    Ok(vec![m])
}

fn sns(
    t: &Translation,
    sam: &Sam,
    event: &Event,
    target: &Target,
    role: &mut Res,
) -> Result<Vec<Res>, String> {
    event.check_known(&[
        "Topic",
        "Region",
        "FilterPolicy",
        "FilterPolicyScope",
        "SqsSubscription",
        "RedrivePolicy",
    ])?;
    let topic = event.require("Topic")?;
    let subscription = |protocol: &str, endpoint: Value| {
        let mut sub = Res::new(&event.id, "AWS::SNS::Subscription", target.attrs.clone());
        sub.put("Protocol", json!(protocol));
        sub.put("Endpoint", endpoint);
        sub.put("TopicArn", topic.clone());
        for p in [
            "Region",
            "FilterPolicy",
            "FilterPolicyScope",
            "RedrivePolicy",
        ] {
            sub.set(p, event.get(p).cloned());
        }
        sub
    };
    let sqs = event
        .get("SqsSubscription")
        .filter(|v| crate::resource::truthy(Some(v)));
    let Some(sqs) = sqs else {
        let sub = subscription("lambda", target.arn());
        return Ok(vec![
            permission(
                event,
                target,
                "sns.amazonaws.com",
                Some(topic.clone()),
                None,
            ),
            sub,
        ]);
    };
    let queue_policy = |id: String, arn: &Value, url: &Value| {
        let mut p = Res::new(id, "AWS::SQS::QueuePolicy", target.attrs.clone());
        p.put("PolicyDocument", json!({"Version": "2012-10-17", "Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Principal": "*", "Resource": arn, "Condition": {"ArnEquals": {"aws:SourceArn": topic}}}]}));
        p.put("Queues", json!([url]));
        p
    };
    let mapping = |arn: &Value, batch: Option<Value>, role: &mut Res| {
        let mut m = Res::new(
            format!("{}EventSourceMapping", event.id),
            "AWS::Lambda::EventSourceMapping",
            target.attrs.clone(),
        );
        m.put("FunctionName", target.name());
        m.put("EventSourceArn", arn.clone());
        m.put(
            "BatchSize",
            batch
                .filter(|b| crate::resource::truthy(Some(b)))
                .unwrap_or(json!(10)),
        );
        m.put("Enabled", json!(true));
        let policy = managed_arn(
            &t.ctx.partition,
            "service-role/AWSLambdaSQSQueueExecutionRole",
        );
        if let Some(Value::Array(arns)) = role.props.get_mut("ManagedPolicyArns")
            && !arns.contains(&policy)
        {
            arns.push(policy);
        }
        m
    };
    if sqs.is_boolean() {
        let topic_id = match &topic {
            Value::Object(o) if o.contains_key("Ref") => o["Ref"].as_str().map(str::to_string),
            Value::Object(o) => o
                .get("Fn::GetAtt")
                .and_then(|g| g.get(0))
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        };
        let fifo = topic_id
            .and_then(|id| {
                t.original
                    .pointer(&format!("/Resources/{id}/Properties/FifoTopic"))
                    .cloned()
            })
            .map(|f| crate::intrinsics::resolve_params(&f, &t.params))
            .filter(|f| crate::resource::truthy(Some(f)));
        let mut queue = Res::new(
            format!("{}Queue", event.id),
            "AWS::SQS::Queue",
            target.attrs.clone(),
        );
        queue.set("FifoQueue", fifo);
        let arn = get_att(&queue.id, "Arn");
        let url = json!({"Ref": queue.id});
        let policy = queue_policy(format!("{}QueuePolicy", event.id), &arn, &url);
        let sub = subscription("sqs", arn.clone());
        let m = mapping(&arn, None, role);
        return Ok(vec![m, queue, policy, sub]);
    }
    let Some(config) = sqs.as_object() else {
        return Err(invalid_event(
            sam.id,
            event.name,
            "Property 'SqsSubscription' should be a map.",
        ));
    };
    let (Some(arn), Some(url)) = (
        config
            .get("QueueArn")
            .filter(|v| crate::resource::truthy(Some(v))),
        config
            .get("QueueUrl")
            .filter(|v| crate::resource::truthy(Some(v))),
    ) else {
        return Err(invalid_event(
            sam.id,
            event.name,
            "No QueueARN or QueueURL provided.",
        ));
    };
    let policy_id = config
        .get("QueuePolicyLogicalId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{}QueuePolicy", event.id), str::to_string);
    let policy = queue_policy(policy_id, arn, url);
    let sub = subscription("sqs", arn.clone());
    let m = mapping(arn, config.get("BatchSize").cloned(), role);
    Ok(vec![m, policy, sub])
}

fn s3(
    sam: &Sam,
    event: &Event,
    target: &Target,
    live: &mut Map<String, Value>,
) -> Result<Vec<Res>, String> {
    event.check_known(&["Bucket", "Events", "Filter"])?;
    let bucket_ref = event.require("Bucket")?;
    let types = event.require("Events")?;
    let bucket_id = match bucket_ref.get("Ref") {
        Some(Value::String(id)) if live.contains_key(id) => id.clone(),
        Some(r) if !r.is_string() => {
            return Err(invalid_event(
                sam.id,
                event.name,
                "'Ref' value in S3 events is not a valid string.",
            ));
        }
        _ => {
            return Err(invalid_event(
                sam.id,
                event.name,
                "S3 events must reference an S3 bucket in the same template.",
            ));
        }
    };
    let perm = permission(
        event,
        target,
        "s3.amazonaws.com",
        None,
        Some(json!({"Ref": "AWS::AccountId"})),
    );
    let condition = perm.attrs.get("Condition").cloned();
    let Some(bucket) = live.get_mut(&bucket_id).and_then(Value::as_object_mut) else {
        return Err(invalid_event(
            sam.id,
            event.name,
            "S3 events must reference an S3 bucket in the same template.",
        ));
    };
    match &condition {
        // A DependsOn cannot be conditional: a tag whose value Refs the permission under the
        // function's condition orders the bucket after it instead, as the translator does.
        Some(c) => {
            let props = bucket.entry("Properties").or_insert_with(|| json!({}));
            if props.is_null() {
                *props = json!({});
            }
            let Some(props) = props.as_object_mut() else {
                return Err(crate::invalid(&bucket_id, "Properties should be a map."));
            };
            let tags = props.entry("Tags").or_insert_with(|| json!([]));
            if tags.is_null() {
                *tags = json!([]);
            }
            let Some(tags) = tags.as_array_mut() else {
                return Err(crate::invalid(
                    &bucket_id,
                    "Property 'Tags' should be a list.",
                ));
            };
            tags.push(json!({
                "Key": format!("sam:ConditionalDependsOn:{}", perm.id),
                "Value": {"Fn::If": [c, {"Ref": perm.id}, "no dependency"]},
            }));
        }
        None => {
            let mut depends: Vec<Value> = match bucket.get("DependsOn") {
                None => Vec::new(),
                Some(Value::String(s)) => vec![json!(s)],
                Some(Value::Array(a)) => a.clone(),
                Some(_) => {
                    return Err(crate::invalid(
                        &event.id,
                        "Invalid type for field 'DependsOn'. Expected a string or list of strings.",
                    ));
                }
            };
            let dep = json!(perm.id);
            if !depends.contains(&dep) {
                depends.push(dep);
            }
            bucket.insert("DependsOn".into(), Value::Array(depends));
        }
    }
    let mut mapping = Map::new();
    mapping.insert("Function".into(), target.arn());
    if let Some(f) = event.get("Filter") {
        mapping.insert("Filter".into(), f.clone());
    }
    let types = match types {
        Value::String(_) => vec![types],
        Value::Array(a) => a,
        other => vec![other],
    };
    let props = bucket.entry("Properties").or_insert_with(|| json!({}));
    let Some(props) = props.as_object_mut() else {
        return Err(crate::invalid(&bucket_id, "Properties should be a map."));
    };
    let config = props
        .entry("NotificationConfiguration")
        .or_insert_with(|| json!({}));
    let Some(config) = config.as_object_mut() else {
        return Err(crate::invalid(
            &bucket_id,
            "Property 'NotificationConfiguration' should be a map.",
        ));
    };
    let lambdas = config
        .entry("LambdaConfigurations")
        .or_insert_with(|| json!([]));
    let Some(lambdas) = lambdas.as_array_mut() else {
        return Err(crate::invalid(
            &bucket_id,
            "Invalid type for LambdaConfigurations. Must be a list.",
        ));
    };
    for ty in types {
        let mut m = mapping.clone();
        m.insert("Event".into(), ty);
        let m = match &condition {
            Some(c) => json!({"Fn::If": [c, m, {"Ref": "AWS::NoValue"}]}),
            None => Value::Object(m),
        };
        if !lambdas.contains(&m) {
            lambdas.push(m);
        }
    }
    let mut bucket_res = Res::new(&bucket_id, "AWS::S3::Bucket", Map::new());
    let b = live[&bucket_id].clone();
    for (k, v) in b.as_object().into_iter().flatten() {
        match k.as_str() {
            "Type" => {}
            "Properties" => bucket_res.props = v.as_object().cloned().unwrap_or_default(),
            "DependsOn" => bucket_res.depends_on = Some(v.clone()),
            _ => {
                bucket_res.attrs.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(vec![perm, bucket_res])
}

/// A rule's DeadLetterConfig: the given queue ARN, or a queue SAM makes (`<rule>Queue`, or
/// QueueLogicalId) with the policy that lets the rule send to it.
pub fn dead_letter(
    owner: &str,
    rule_id: &str,
    config: &Value,
    attrs: &Map<String, Value>,
) -> Result<(Value, Vec<Res>), String> {
    let (queue_arn, queue) = dead_letter_queue(owner, rule_id, config, attrs)?;
    let Some(queue) = queue else {
        return Ok((queue_arn, Vec::new()));
    };
    let mut policy = Res::new(
        format!("{rule_id}QueuePolicy"),
        "AWS::SQS::QueuePolicy",
        attrs.clone(),
    );
    policy.put(
        "PolicyDocument",
        json!({"Version": "2012-10-17", "Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"}, "Resource": queue_arn, "Condition": {"ArnEquals": {"aws:SourceArn": get_att(rule_id, "Arn")}}}]}),
    );
    policy.put("Queues", json!([{"Ref": queue.id}]));
    Ok((queue_arn, vec![queue, policy]))
}

/// A DeadLetterConfig checked as samtranslator checks it: its `Arn`, or the queue it makes
/// (`Type: SQS`, named `QueueLogicalId` or `<event>Queue`) and that queue's ARN.
pub fn dead_letter_queue(
    owner: &str,
    rule_id: &str,
    config: &Value,
    attrs: &Map<String, Value>,
) -> Result<(Value, Option<Res>), String> {
    let fail =
        |m: &str| crate::invalid(owner, format!("Event with id [{rule_id}] is invalid. {m}"));
    let (arn, ty) = (config.get("Arn"), config.get("Type"));
    if arn.is_some() && ty.is_some() {
        return Err(fail(
            "You can either define 'Arn' or 'Type' property of DeadLetterConfig.",
        ));
    }
    if ty.is_some() && ty != Some(&json!("SQS")) {
        return Err(fail(
            "The only valid value for 'Type' property of DeadLetterConfig is 'SQS'.",
        ));
    }
    if arn.is_none() && ty.is_none() {
        return Err(fail(
            "No 'Arn' or 'Type' property provided for DeadLetterConfig.",
        ));
    }
    if let Some(arn) = arn.filter(|a| !a.is_null()) {
        return Ok((arn.clone(), None));
    }
    let queue_id = match config.get("QueueLogicalId").filter(|v| !v.is_null()) {
        None => format!("{rule_id}Queue"),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(fail("QueueLogicalId must be a string")),
    };
    let queue = Res::new(&queue_id, "AWS::SQS::Queue", attrs.clone());
    Ok((get_att(&queue_id, "Arn"), Some(queue)))
}

/// A rule target's Id: `<id><suffix>`, the id cut (by characters, as Python cuts) so the
/// whole is at most 64.
pub fn target_id(id: &str, suffix: &str) -> String {
    const MAX: usize = 64;
    let keep = MAX.saturating_sub(suffix.chars().count());
    let cut: String = id.chars().take(keep).collect();
    format!("{cut}{suffix}")
}

fn state(sam: &Sam, event: &Event, rule: &mut Res) -> Result<(), String> {
    if event.get("State").is_some() && event.get("Enabled").is_some() {
        return Err(invalid_event(
            sam.id,
            event.name,
            "State and Enabled Properties cannot both be specified.",
        ));
    }
    rule.set("State", event.get("State").cloned());
    if let Some(enabled) = event.get("Enabled") {
        let on = enabled.as_bool().unwrap_or(true);
        rule.put("State", json!(if on { "ENABLED" } else { "DISABLED" }));
    }
    Ok(())
}

fn schedule(sam: &Sam, event: &Event, target: &Target) -> Result<Vec<Res>, String> {
    event.check_known(&[
        "Schedule",
        "RuleName",
        "Input",
        "Enabled",
        "State",
        "Name",
        "Description",
        "DeadLetterConfig",
        "RetryPolicy",
    ])?;
    let expression = event.require("Schedule")?;
    let mut rule = Res::new(&event.id, "AWS::Events::Rule", target.attrs.clone());
    rule.put("ScheduleExpression", expression);
    state(sam, event, &mut rule)?;
    rule.set("Name", event.get("Name").cloned());
    rule.set("Description", event.get("Description").cloned());
    let mut tgt = json!({"Arn": target.arn(), "Id": target_id(&event.id, "LambdaTarget")});
    if let Some(i) = event.get("Input") {
        tgt["Input"] = i.clone();
    }
    let mut dlq = Vec::new();
    if let Some(config) = event.get("DeadLetterConfig") {
        let (arn, made) = dead_letter(sam.id, &event.id, config, &target.attrs)?;
        tgt["DeadLetterConfig"] = json!({"Arn": arn});
        dlq = made;
    }
    if let Some(r) = event.get("RetryPolicy") {
        tgt["RetryPolicy"] = r.clone();
    }
    rule.put("Targets", json!([tgt]));
    let source = get_att(&rule.id, "Arn");
    let mut out = vec![rule];
    out.extend(dlq);
    out.push(permission(
        event,
        target,
        "events.amazonaws.com",
        Some(source),
        None,
    ));
    Ok(out)
}

fn rule(sam: &Sam, event: &Event, target: &Target) -> Result<Vec<Res>, String> {
    event.check_known(&[
        "EventBusName",
        "RuleName",
        "Pattern",
        "DeadLetterConfig",
        "RetryPolicy",
        "Input",
        "InputPath",
        "Target",
        "Enabled",
        "State",
        "InputTransformer",
    ])?;
    let mut rule = Res::new(&event.id, "AWS::Events::Rule", target.attrs.clone());
    rule.set("EventBusName", event.get("EventBusName").cloned());
    rule.set("EventPattern", event.get("Pattern").cloned());
    rule.set("Name", event.get("RuleName").cloned());
    state(sam, event, &mut rule)?;
    let id = event
        .get("Target")
        .and_then(|t| t.get("Id"))
        .cloned()
        .unwrap_or_else(|| json!(target_id(&event.id, "LambdaTarget")));
    let mut tgt = json!({"Arn": target.arn(), "Id": id});
    let mut dlq = Vec::new();
    if let Some(config) = event.get("DeadLetterConfig") {
        let (arn, made) = dead_letter(sam.id, &event.id, config, &target.attrs)?;
        tgt["DeadLetterConfig"] = json!({"Arn": arn});
        dlq = made;
    }
    for p in ["Input", "InputPath", "RetryPolicy", "InputTransformer"] {
        if let Some(v) = event.get(p) {
            tgt[p] = v.clone();
        }
    }
    rule.put("Targets", json!([tgt]));
    let source = get_att(&rule.id, "Arn");
    let mut out = dlq;
    out.push(rule);
    out.push(permission(
        event,
        target,
        "events.amazonaws.com",
        Some(source),
        None,
    ));
    Ok(out)
}

fn logs(t: &Translation, event: &Event, target: &Target) -> Result<Vec<Res>, String> {
    event.check_known(&["LogGroupName", "FilterPattern"])?;
    let group = event.require("LogGroupName")?;
    let pattern = event.require("FilterPattern")?;
    let source = json!({"Fn::Sub": [format!("arn:{}:logs:${{AWS::Region}}:${{AWS::AccountId}}:log-group:${{__LogGroupName__}}:*", t.ctx.partition), {"__LogGroupName__": group}]});
    let perm = permission(event, target, "logs.amazonaws.com", Some(source), None);
    let mut filter = Res::new(
        &event.id,
        "AWS::Logs::SubscriptionFilter",
        target.attrs.clone(),
    );
    filter.depends_on = Some(json!([perm.id]));
    filter.put("LogGroupName", group);
    filter.put("FilterPattern", pattern);
    filter.put("DestinationArn", target.arn());
    Ok(vec![perm, filter])
}
