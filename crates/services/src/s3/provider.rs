//! CloudFormation providers: AWS::S3::Bucket and AWS::S3::BucketPolicy, over S3's typed
//! operations. A bucket's sub-configurations are translated from the template's shape
//! (`CorsConfiguration.CorsRules[].AllowedOrigins`) to the XML documents S3's API stores
//! (`CORSConfiguration/CORSRule/AllowedOrigin`), field by field: a field this translation does
//! not know fails the resource naming it rather than being dropped.

use super::S3Service;
use super::config::ConfigKind;
use super::xml_in::Element;
use crate::providers::readback;
use crate::providers::system_tags::{TagChange, is_system, system_tags};
use crate::providers::{
    ProviderServices, already_exists, failed, json_text, object, required, scalar, scalar_value,
    tags, unsupported_prop,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const BUCKET: &str = "AWS::S3::Bucket";
const BUCKET_POLICY: &str = "AWS::S3::BucketPolicy";

/// Bucket properties S3 here has no operation for: they fail the resource, naming themselves.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("AbacStatus", "S3 ABAC is not emulated"),
    (
        "AccelerateConfiguration",
        "transfer acceleration is not emulated",
    ),
    (
        "AnalyticsConfigurations",
        "S3 analytics configurations are not emulated",
    ),
    ("BucketNamePrefix", "bucket name prefixes are not emulated"),
    ("BucketNamespace", "bucket namespaces are not emulated"),
    (
        "IntelligentTieringConfigurations",
        "S3 Intelligent-Tiering configurations are not emulated",
    ),
    (
        "InventoryConfigurations",
        "S3 inventory configurations are not emulated",
    ),
    (
        "LoggingConfiguration",
        "S3 server access logging is not emulated",
    ),
    ("MetadataConfiguration", "S3 Metadata is not emulated"),
    (
        "MetadataTableConfiguration",
        "S3 Metadata tables are not emulated",
    ),
    (
        "MetricsConfigurations",
        "S3 request metrics configurations are not emulated",
    ),
    ("ObjectLockConfiguration", "S3 Object Lock is not emulated"),
    ("ObjectLockEnabled", "S3 Object Lock is not emulated"),
];

/// The document-shaped configurations: template property and the S3 configuration it becomes.
const CONFIGS: &[(&str, ConfigKind)] = &[
    ("BucketEncryption", ConfigKind::Encryption),
    ("CorsConfiguration", ConfigKind::Cors),
    ("LifecycleConfiguration", ConfigKind::Lifecycle),
    ("NotificationConfiguration", ConfigKind::Notification),
    ("OwnershipControls", ConfigKind::OwnershipControls),
    (
        "PublicAccessBlockConfiguration",
        ConfigKind::PublicAccessBlock,
    ),
    // After VersioningConfiguration (applied first), which S3 requires for replication.
    ("ReplicationConfiguration", ConfigKind::Replication),
    ("WebsiteConfiguration", ConfigKind::Website),
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(BUCKET, Arc::new(BucketProvider { s3: s.s3.clone() }));
    r.register(
        BUCKET_POLICY,
        Arc::new(BucketPolicyProvider { s3: s.s3.clone() }),
    );
}

/// Reads one template object, failing on any field not in `known` (named by its path).
struct Fields<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn new(path: &str, v: &'a Value, known: &[&str]) -> Result<Self, ProviderError> {
        let map = v.as_object().ok_or_else(|| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{path}: expected type: JSONObject, found: {}",
                crate::providers::json_type(v)
            ))
        })?;
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(unsupported_prop(
                BUCKET,
                &format!("{path}.{k}"),
                "this field is not translated to S3's API",
            ));
        }
        Ok(Fields {
            path: path.to_string(),
            map,
        })
    }

    fn str(&self, key: &str) -> Result<Option<String>, ProviderError> {
        scalar(self.map, key)
    }

    fn req(&self, key: &str) -> Result<String, ProviderError> {
        scalar(self.map, key)?.ok_or_else(|| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{}: required key [{key}] not found",
                self.path
            ))
        })
    }

    fn obj(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn list(&self, key: &str) -> Result<&'a [Value], ProviderError> {
        crate::providers::list(self.map, key)
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ProviderError> {
        Ok(self.list(key)?.iter().filter_map(scalar_value).collect())
    }

    fn sub(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }
}

fn leaf(name: &str, text: impl Into<String>) -> Element {
    Element {
        name: name.to_string(),
        text: text.into(),
        children: Vec::new(),
    }
}

fn node(name: &str, children: Vec<Element>) -> Element {
    Element {
        name: name.to_string(),
        text: String::new(),
        children,
    }
}

/// Appends `<name>value</name>` when the field is present.
fn opt(out: &mut Vec<Element>, f: &Fields<'_>, key: &str, name: &str) -> Result<(), ProviderError> {
    if let Some(v) = f.str(key)? {
        out.push(leaf(name, v));
    }
    Ok(())
}

/// A template date (`2030-01-01` or a full timestamp) as S3's midnight-UTC ISO 8601.
fn s3_date(d: &str) -> String {
    if d.len() == 10 {
        format!("{d}T00:00:00.000Z")
    } else {
        d.to_string()
    }
}

fn cors(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new("CorsConfiguration", v, &["CorsRules"])?;
    let mut rules = Vec::new();
    for r in f.list("CorsRules")? {
        let r = Fields::new(
            &f.sub("CorsRules"),
            r,
            &[
                "AllowedHeaders",
                "AllowedMethods",
                "AllowedOrigins",
                "ExposedHeaders",
                "Id",
                "MaxAge",
            ],
        )?;
        let mut c = Vec::new();
        opt(&mut c, &r, "Id", "ID")?;
        for (key, name) in [
            ("AllowedHeaders", "AllowedHeader"),
            ("AllowedMethods", "AllowedMethod"),
            ("AllowedOrigins", "AllowedOrigin"),
            ("ExposedHeaders", "ExposeHeader"),
        ] {
            c.extend(r.strings(key)?.into_iter().map(|s| leaf(name, s)));
        }
        opt(&mut c, &r, "MaxAge", "MaxAgeSeconds")?;
        rules.push(node("CORSRule", c));
    }
    Ok(node("CORSConfiguration", rules))
}

fn lifecycle(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new(
        "LifecycleConfiguration",
        v,
        &["Rules", "TransitionDefaultMinimumObjectSize"],
    )?;
    if f.obj("TransitionDefaultMinimumObjectSize").is_some() {
        return Err(unsupported_prop(
            BUCKET,
            "LifecycleConfiguration.TransitionDefaultMinimumObjectSize",
            "S3's lifecycle operation here does not take the x-amz-transition-default-minimum-object-size header",
        ));
    }
    let mut rules = Vec::new();
    for r in f.list("Rules")? {
        let r = Fields::new(
            &f.sub("Rules"),
            r,
            &[
                "AbortIncompleteMultipartUpload",
                "ExpirationDate",
                "ExpirationInDays",
                "ExpiredObjectDeleteMarker",
                "Id",
                "NoncurrentVersionExpiration",
                "NoncurrentVersionExpirationInDays",
                "NoncurrentVersionTransition",
                "NoncurrentVersionTransitions",
                "ObjectSizeGreaterThan",
                "ObjectSizeLessThan",
                "Prefix",
                "Status",
                "TagFilters",
                "Transition",
                "Transitions",
            ],
        )?;
        let mut c = Vec::new();
        opt(&mut c, &r, "Id", "ID")?;
        // Filter: a single condition stands alone; several go inside And, as S3 requires.
        let mut conds = Vec::new();
        opt(&mut conds, &r, "Prefix", "Prefix")?;
        for t in r.list("TagFilters")? {
            let t = Fields::new(&r.sub("TagFilters"), t, &["Key", "Value"])?;
            conds.push(node(
                "Tag",
                vec![leaf("Key", t.req("Key")?), leaf("Value", t.req("Value")?)],
            ));
        }
        opt(
            &mut conds,
            &r,
            "ObjectSizeGreaterThan",
            "ObjectSizeGreaterThan",
        )?;
        opt(&mut conds, &r, "ObjectSizeLessThan", "ObjectSizeLessThan")?;
        let filter = match conds.len() {
            0 => node("Filter", vec![leaf("Prefix", "")]),
            1 => node("Filter", conds),
            _ => node("Filter", vec![node("And", conds)]),
        };
        c.push(filter);
        c.push(leaf("Status", r.req("Status")?));
        let mut expiration = Vec::new();
        if let Some(d) = r.str("ExpirationDate")? {
            expiration.push(leaf("Date", s3_date(&d)));
        }
        opt(&mut expiration, &r, "ExpirationInDays", "Days")?;
        opt(
            &mut expiration,
            &r,
            "ExpiredObjectDeleteMarker",
            "ExpiredObjectDeleteMarker",
        )?;
        if !expiration.is_empty() {
            c.push(node("Expiration", expiration));
        }
        let mut transitions: Vec<&Value> = r.list("Transitions")?.iter().collect();
        transitions.extend(r.obj("Transition"));
        for t in transitions {
            let t = Fields::new(
                &r.sub("Transitions"),
                t,
                &["StorageClass", "TransitionDate", "TransitionInDays"],
            )?;
            let mut e = Vec::new();
            if let Some(d) = t.str("TransitionDate")? {
                e.push(leaf("Date", s3_date(&d)));
            }
            opt(&mut e, &t, "TransitionInDays", "Days")?;
            e.push(leaf("StorageClass", t.req("StorageClass")?));
            c.push(node("Transition", e));
        }
        let mut nv_transitions: Vec<&Value> =
            r.list("NoncurrentVersionTransitions")?.iter().collect();
        nv_transitions.extend(r.obj("NoncurrentVersionTransition"));
        for t in nv_transitions {
            let t = Fields::new(
                &r.sub("NoncurrentVersionTransitions"),
                t,
                &[
                    "NewerNoncurrentVersions",
                    "StorageClass",
                    "TransitionInDays",
                ],
            )?;
            let mut e = vec![leaf("NoncurrentDays", t.req("TransitionInDays")?)];
            e.push(leaf("StorageClass", t.req("StorageClass")?));
            opt(
                &mut e,
                &t,
                "NewerNoncurrentVersions",
                "NewerNoncurrentVersions",
            )?;
            c.push(node("NoncurrentVersionTransition", e));
        }
        let mut nv_exp = Vec::new();
        if let Some(x) = r.obj("NoncurrentVersionExpiration") {
            let x = Fields::new(
                &r.sub("NoncurrentVersionExpiration"),
                x,
                &["NewerNoncurrentVersions", "NoncurrentDays"],
            )?;
            nv_exp.push(leaf("NoncurrentDays", x.req("NoncurrentDays")?));
            opt(
                &mut nv_exp,
                &x,
                "NewerNoncurrentVersions",
                "NewerNoncurrentVersions",
            )?;
        } else if let Some(d) = r.str("NoncurrentVersionExpirationInDays")? {
            nv_exp.push(leaf("NoncurrentDays", d));
        }
        if !nv_exp.is_empty() {
            c.push(node("NoncurrentVersionExpiration", nv_exp));
        }
        if let Some(a) = r.obj("AbortIncompleteMultipartUpload") {
            let a = Fields::new(
                &r.sub("AbortIncompleteMultipartUpload"),
                a,
                &["DaysAfterInitiation"],
            )?;
            c.push(node(
                "AbortIncompleteMultipartUpload",
                vec![leaf("DaysAfterInitiation", a.req("DaysAfterInitiation")?)],
            ));
        }
        rules.push(node("Rule", c));
    }
    Ok(node("LifecycleConfiguration", rules))
}

fn encryption(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new(
        "BucketEncryption",
        v,
        &["ServerSideEncryptionConfiguration"],
    )?;
    let mut rules = Vec::new();
    for r in f.list("ServerSideEncryptionConfiguration")? {
        let r = Fields::new(
            &f.sub("ServerSideEncryptionConfiguration"),
            r,
            &["BucketKeyEnabled", "ServerSideEncryptionByDefault"],
        )?;
        let mut c = Vec::new();
        if let Some(d) = r.obj("ServerSideEncryptionByDefault") {
            let d = Fields::new(
                &r.sub("ServerSideEncryptionByDefault"),
                d,
                &["KMSMasterKeyID", "SSEAlgorithm"],
            )?;
            let mut e = vec![leaf("SSEAlgorithm", d.req("SSEAlgorithm")?)];
            opt(&mut e, &d, "KMSMasterKeyID", "KMSMasterKeyID")?;
            c.push(node("ApplyServerSideEncryptionByDefault", e));
        }
        opt(&mut c, &r, "BucketKeyEnabled", "BucketKeyEnabled")?;
        rules.push(node("Rule", c));
    }
    Ok(node("ServerSideEncryptionConfiguration", rules))
}

fn website(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new(
        "WebsiteConfiguration",
        v,
        &[
            "ErrorDocument",
            "IndexDocument",
            "RedirectAllRequestsTo",
            "RoutingRules",
        ],
    )?;
    let mut c = Vec::new();
    if let Some(r) = f.obj("RedirectAllRequestsTo") {
        let r = Fields::new(
            &f.sub("RedirectAllRequestsTo"),
            r,
            &["HostName", "Protocol"],
        )?;
        let mut e = vec![leaf("HostName", r.req("HostName")?)];
        opt(&mut e, &r, "Protocol", "Protocol")?;
        c.push(node("RedirectAllRequestsTo", e));
    }
    if let Some(i) = f.str("IndexDocument")? {
        c.push(node("IndexDocument", vec![leaf("Suffix", i)]));
    }
    if let Some(e) = f.str("ErrorDocument")? {
        c.push(node("ErrorDocument", vec![leaf("Key", e)]));
    }
    let mut rules = Vec::new();
    for r in f.list("RoutingRules")? {
        let r = Fields::new(
            &f.sub("RoutingRules"),
            r,
            &["RedirectRule", "RoutingRuleCondition"],
        )?;
        let mut rule = Vec::new();
        if let Some(cond) = r.obj("RoutingRuleCondition") {
            let cond = Fields::new(
                &r.sub("RoutingRuleCondition"),
                cond,
                &["HttpErrorCodeReturnedEquals", "KeyPrefixEquals"],
            )?;
            let mut e = Vec::new();
            opt(
                &mut e,
                &cond,
                "HttpErrorCodeReturnedEquals",
                "HttpErrorCodeReturnedEquals",
            )?;
            opt(&mut e, &cond, "KeyPrefixEquals", "KeyPrefixEquals")?;
            rule.push(node("Condition", e));
        }
        let redirect = r.obj("RedirectRule").ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #/WebsiteConfiguration/RoutingRules: required key [RedirectRule] not found".into(),
            )
        })?;
        let redirect = Fields::new(
            &r.sub("RedirectRule"),
            redirect,
            &[
                "HostName",
                "HttpRedirectCode",
                "Protocol",
                "ReplaceKeyPrefixWith",
                "ReplaceKeyWith",
            ],
        )?;
        let mut e = Vec::new();
        for k in [
            "HostName",
            "HttpRedirectCode",
            "Protocol",
            "ReplaceKeyPrefixWith",
            "ReplaceKeyWith",
        ] {
            opt(&mut e, &redirect, k, k)?;
        }
        rule.push(node("Redirect", e));
        rules.push(node("RoutingRule", rule));
    }
    if !rules.is_empty() {
        c.push(node("RoutingRules", rules));
    }
    Ok(node("WebsiteConfiguration", c))
}

fn notification(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new(
        "NotificationConfiguration",
        v,
        &[
            "EventBridgeConfiguration",
            "LambdaConfigurations",
            "QueueConfigurations",
            "TopicConfigurations",
        ],
    )?;
    let mut c = Vec::new();
    for (list_key, element, target_key, target_el) in [
        (
            "TopicConfigurations",
            "TopicConfiguration",
            "Topic",
            "Topic",
        ),
        (
            "QueueConfigurations",
            "QueueConfiguration",
            "Queue",
            "Queue",
        ),
        (
            "LambdaConfigurations",
            "CloudFunctionConfiguration",
            "Function",
            "CloudFunction",
        ),
    ] {
        for n in f.list(list_key)? {
            let n = Fields::new(&f.sub(list_key), n, &["Event", "Filter", target_key])?;
            let mut e = vec![
                leaf(target_el, n.req(target_key)?),
                leaf("Event", n.req("Event")?),
            ];
            if let Some(filter) = n.obj("Filter") {
                let filter = Fields::new(&n.sub("Filter"), filter, &["S3Key"])?;
                let key = filter.obj("S3Key").ok_or_else(|| {
                    ProviderError::Failed(format!(
                        "Properties validation failed for resource with message: #/{}: required key [S3Key] not found",
                        filter.path
                    ))
                })?;
                let key = Fields::new(&filter.sub("S3Key"), key, &["Rules"])?;
                let mut rules = Vec::new();
                for r in key.list("Rules")? {
                    let r = Fields::new(&key.sub("Rules"), r, &["Name", "Value"])?;
                    rules.push(node(
                        "FilterRule",
                        vec![leaf("Name", r.req("Name")?), leaf("Value", r.req("Value")?)],
                    ));
                }
                e.push(node("Filter", vec![node("S3Key", rules)]));
            }
            c.push(node(element, e));
        }
    }
    if let Some(eb) = f.obj("EventBridgeConfiguration") {
        let eb = Fields::new(
            &f.sub("EventBridgeConfiguration"),
            eb,
            &["EventBridgeEnabled"],
        )?;
        if eb.str("EventBridgeEnabled")?.as_deref() != Some("false") {
            c.push(node("EventBridgeConfiguration", Vec::new()));
        }
    }
    Ok(node("NotificationConfiguration", c))
}

fn public_access_block(v: &Value) -> Result<Element, ProviderError> {
    const KEYS: &[&str] = &[
        "BlockPublicAcls",
        "BlockPublicPolicy",
        "IgnorePublicAcls",
        "RestrictPublicBuckets",
    ];
    let f = Fields::new("PublicAccessBlockConfiguration", v, KEYS)?;
    let mut c = Vec::new();
    // S3's XML order, which differs from the template's alphabetical one.
    for k in [
        "BlockPublicAcls",
        "IgnorePublicAcls",
        "BlockPublicPolicy",
        "RestrictPublicBuckets",
    ] {
        c.push(leaf(k, f.str(k)?.unwrap_or_else(|| "false".into())));
    }
    Ok(node("PublicAccessBlockConfiguration", c))
}

fn ownership(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new("OwnershipControls", v, &["Rules"])?;
    let mut rules = Vec::new();
    for r in f.list("Rules")? {
        let r = Fields::new(&f.sub("Rules"), r, &["ObjectOwnership"])?;
        rules.push(node(
            "Rule",
            vec![leaf("ObjectOwnership", r.req("ObjectOwnership")?)],
        ));
    }
    Ok(node("OwnershipControls", rules))
}

/// `{Status}` objects (`DeleteMarkerReplication`, `Metrics`, ...) and their optional minutes.
fn status_node(
    f: &Fields<'_>,
    key: &str,
    name: &str,
    minutes: Option<(&str, &str)>,
) -> Result<Option<Element>, ProviderError> {
    let Some(v) = f.obj(key) else {
        return Ok(None);
    };
    let known: &[&str] = match minutes {
        Some((k, _)) => &["Status", k],
        None => &["Status"],
    };
    let o = Fields::new(&f.sub(key), v, known)?;
    let mut c = vec![leaf("Status", o.req("Status")?)];
    if let Some((k, xml)) = minutes
        && let Some(m) = o.obj(k)
    {
        let m = Fields::new(&o.sub(k), m, &["Minutes"])?;
        c.push(node(xml, vec![leaf("Minutes", m.req("Minutes")?)]));
    }
    Ok(Some(node(name, c)))
}

fn tag_node(v: &Value, path: &str) -> Result<Element, ProviderError> {
    let t = Fields::new(path, v, &["Key", "Value"])?;
    Ok(node(
        "Tag",
        vec![leaf("Key", t.req("Key")?), leaf("Value", t.req("Value")?)],
    ))
}

/// `ReplicationConfiguration` as S3's document, element order as S3's schema has it.
fn replication(v: &Value) -> Result<Element, ProviderError> {
    let f = Fields::new("ReplicationConfiguration", v, &["Role", "Rules"])?;
    let mut doc = vec![leaf("Role", f.req("Role")?)];
    for r in f.list("Rules")? {
        let r = Fields::new(
            &f.sub("Rules"),
            r,
            &[
                "DeleteMarkerReplication",
                "Destination",
                "Filter",
                "Id",
                "Prefix",
                "Priority",
                "SourceSelectionCriteria",
                "Status",
            ],
        )?;
        let mut c = Vec::new();
        opt(&mut c, &r, "Id", "ID")?;
        opt(&mut c, &r, "Priority", "Priority")?;
        let filtered = r.obj("Filter").is_some() || r.obj("Prefix").is_none();
        match r.obj("Filter") {
            Some(filter) => {
                let fl = Fields::new(&r.sub("Filter"), filter, &["And", "Prefix", "TagFilter"])?;
                let mut conds = Vec::new();
                opt(&mut conds, &fl, "Prefix", "Prefix")?;
                if let Some(t) = fl.obj("TagFilter") {
                    conds.push(tag_node(t, &fl.sub("TagFilter"))?);
                }
                if let Some(and) = fl.obj("And") {
                    let a = Fields::new(&fl.sub("And"), and, &["Prefix", "TagFilters"])?;
                    let mut all = Vec::new();
                    opt(&mut all, &a, "Prefix", "Prefix")?;
                    for t in a.list("TagFilters")? {
                        all.push(tag_node(t, &a.sub("TagFilters"))?);
                    }
                    conds.push(node("And", all));
                }
                c.push(node("Filter", conds));
            }
            None if filtered => c.push(node("Filter", vec![leaf("Prefix", "")])),
            None => opt(&mut c, &r, "Prefix", "Prefix")?,
        }
        c.push(leaf("Status", r.req("Status")?));
        if let Some(sel) = r.obj("SourceSelectionCriteria") {
            let sel = Fields::new(
                &r.sub("SourceSelectionCriteria"),
                sel,
                &["ReplicaModifications", "SseKmsEncryptedObjects"],
            )?;
            let parts = [
                status_node(
                    &sel,
                    "SseKmsEncryptedObjects",
                    "SseKmsEncryptedObjects",
                    None,
                )?,
                status_node(&sel, "ReplicaModifications", "ReplicaModifications", None)?,
            ];
            c.push(node(
                "SourceSelectionCriteria",
                parts.into_iter().flatten().collect(),
            ));
        }
        let d = r.obj("Destination").ok_or_else(|| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{}: required key [Destination] not found",
                r.path
            ))
        })?;
        let d = Fields::new(
            &r.sub("Destination"),
            d,
            &[
                "AccessControlTranslation",
                "Account",
                "Bucket",
                "EncryptionConfiguration",
                "Metrics",
                "ReplicationTime",
                "StorageClass",
            ],
        )?;
        let mut dc = vec![leaf("Bucket", d.req("Bucket")?)];
        opt(&mut dc, &d, "Account", "Account")?;
        opt(&mut dc, &d, "StorageClass", "StorageClass")?;
        if let Some(a) = d.obj("AccessControlTranslation") {
            let a = Fields::new(&d.sub("AccessControlTranslation"), a, &["Owner"])?;
            dc.push(node(
                "AccessControlTranslation",
                vec![leaf("Owner", a.req("Owner")?)],
            ));
        }
        if let Some(e) = d.obj("EncryptionConfiguration") {
            let e = Fields::new(&d.sub("EncryptionConfiguration"), e, &["ReplicaKmsKeyID"])?;
            dc.push(node(
                "EncryptionConfiguration",
                vec![leaf("ReplicaKmsKeyID", e.req("ReplicaKmsKeyID")?)],
            ));
        }
        dc.extend(status_node(
            &d,
            "ReplicationTime",
            "ReplicationTime",
            Some(("Time", "Time")),
        )?);
        dc.extend(status_node(
            &d,
            "Metrics",
            "Metrics",
            Some(("EventThreshold", "EventThreshold")),
        )?);
        c.push(node("Destination", dc));
        match status_node(
            &r,
            "DeleteMarkerReplication",
            "DeleteMarkerReplication",
            None,
        )? {
            Some(dm) => c.push(dm),
            // S3 requires it beside a Filter; CloudFormation leaves it off as Disabled.
            None if filtered => c.push(node(
                "DeleteMarkerReplication",
                vec![leaf("Status", "Disabled")],
            )),
            None => {}
        }
        doc.push(node("Rule", c));
    }
    Ok(node("ReplicationConfiguration", doc))
}

/// The S3 document a configuration property stands for.
fn document(kind: ConfigKind, v: &Value) -> Result<Element, ProviderError> {
    match kind {
        ConfigKind::Cors => cors(v),
        ConfigKind::Lifecycle => lifecycle(v),
        ConfigKind::Encryption => encryption(v),
        ConfigKind::Website => website(v),
        ConfigKind::Notification => notification(v),
        ConfigKind::PublicAccessBlock => public_access_block(v),
        ConfigKind::OwnershipControls => ownership(v),
        ConfigKind::Replication => replication(v),
    }
}

fn check_bucket_props(props: &Map<String, Value>) -> Result<(), ProviderError> {
    let mut known: Vec<&str> = CONFIGS.iter().map(|(k, _)| *k).collect();
    known.extend([
        "AccessControl",
        "BucketName",
        "Tags",
        "VersioningConfiguration",
    ]);
    crate::providers::check_known(BUCKET, props, &known, UNSUPPORTED)?;
    // The canned ACL every bucket has anyway is harmless; any other grant is not emulated.
    match scalar(props, "AccessControl")?.as_deref() {
        None | Some("Private" | "BucketOwnerFullControl") => Ok(()),
        Some(_) => Err(unsupported_prop(
            BUCKET,
            "AccessControl",
            "canned ACLs other than Private are not emulated",
        )),
    }
}

fn versioning(props: &Map<String, Value>) -> Result<Option<String>, ProviderError> {
    match props.get("VersioningConfiguration") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Fields::new("VersioningConfiguration", v, &["Status"])?
            .req("Status")
            .map(Some),
    }
}

/// Regions whose website endpoint is `s3-website-<region>` (the rest use `s3-website.<region>`).
const DASH_WEBSITE_REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-1",
    "us-west-2",
    "eu-west-1",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-northeast-1",
    "sa-east-1",
    "us-gov-west-1",
];

/// Ref and every GetAtt of a bucket, as the AWS::S3::Bucket reference's "Return values" say.
fn bucket_outcome(region: &str, name: &str) -> ProviderOutcome {
    let website_sep = if DASH_WEBSITE_REGIONS.contains(&region) {
        '-'
    } else {
        '.'
    };
    ProviderOutcome {
        physical_id: name.to_string(),
        attributes: Map::from_iter([
            ("Arn".to_string(), json!(format!("arn:aws:s3:::{name}"))),
            (
                "DomainName".to_string(),
                json!(format!("{name}.s3.amazonaws.com")),
            ),
            (
                "DualStackDomainName".to_string(),
                json!(format!("{name}.s3.dualstack.{region}.amazonaws.com")),
            ),
            (
                "RegionalDomainName".to_string(),
                json!(format!("{name}.s3.{region}.amazonaws.com")),
            ),
            (
                "WebsiteURL".to_string(),
                json!(format!(
                    "http://{name}.s3-website{website_sep}{region}.amazonaws.com"
                )),
            ),
        ]),
        ..Default::default()
    }
}

struct BucketProvider {
    s3: Arc<S3Service>,
}

impl BucketProvider {
    /// Applies every configuration `props` has and, for an update, removes those `old` had
    /// that `props` no longer does. Unchanged ones are not touched.
    async fn apply(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: &Map<String, Value>,
        props: &Map<String, Value>,
    ) -> Result<(), ProviderError> {
        let s3 = |e| failed(ctx, "S3", e);
        // Translate everything first, so a bad field fails before anything changes.
        let mut docs = Vec::new();
        for (key, kind) in CONFIGS {
            let new = props.get(*key).filter(|v| !v.is_null());
            if new == old.get(*key).filter(|v| !v.is_null()) {
                continue;
            }
            docs.push((*kind, new.map(|v| document(*kind, v)).transpose()?));
        }
        let (old_ver, new_ver) = (versioning(old)?, versioning(props)?);
        if new_ver != old_ver {
            match new_ver {
                Some(status) => self
                    .s3
                    .put_bucket_versioning(name, &status)
                    .await
                    .map_err(s3)?,
                // Versioning cannot be turned off once on, only suspended, as AWS does.
                None if old_ver.as_deref() == Some("Enabled") => self
                    .s3
                    .put_bucket_versioning(name, "Suspended")
                    .await
                    .map_err(s3)?,
                None => {}
            }
        }
        for (kind, doc) in docs {
            match doc {
                Some(doc) => self
                    .s3
                    .put_bucket_config(name, kind, &doc)
                    .await
                    .map_err(s3)?,
                None => self.s3.delete_bucket_config(name, kind).await.map_err(s3)?,
            }
        }
        if old.is_empty() {
            let system = system_tags(ctx);
            if !system.is_empty() {
                self.s3.add_system_tags(name, &system).await.map_err(s3)?;
            }
        }
        let live = match self.s3.get_bucket_tagging(name) {
            Ok(t) => t,
            Err(e) if e.code == "NoSuchTagSet" => Vec::new(),
            Err(e) => return Err(s3(e)),
        };
        let wanted = tags(ctx, props)?;
        let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &wanted);
        if change != TagChange::default() {
            // PutBucketTagging replaces the whole set, the system tags sent back unchanged.
            let system = live.into_iter().filter(|(k, _)| is_system(k));
            let all: Vec<(String, String)> = wanted.into_iter().chain(system).collect();
            self.s3.put_bucket_tagging(name, &all).await.map_err(s3)?;
        }
        Ok(())
    }
}

/// The bucket's name: the template's, or generated (one rule for create and its identity).
fn bucket_name(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<String, ProviderError> {
    Ok(match scalar(props, "BucketName")? {
        Some(n) => n,
        // Bucket names are lower case; CloudFormation lowercases what it generates.
        None => ctx.generated_name(63, "").to_ascii_lowercase(),
    })
}

#[async_trait::async_trait]
impl Provider for BucketProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[
            "Arn",
            "DomainName",
            "DualStackDomainName",
            "RegionalDomainName",
            "WebsiteURL",
        ])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(BUCKET, properties).ok()?;
        bucket_name(ctx, &props).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(BUCKET, properties)?;
        check_bucket_props(&props)?;
        let name = bucket_name(ctx, &props)?;
        if self.s3.bucket_region(&name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let constraint = (ctx.region != "us-east-1").then_some(ctx.region.as_str());
        self.s3
            .create_bucket(&ctx.region, &name, constraint)
            .await
            .map_err(|e| failed(ctx, "S3", e))?;
        if let Err(e) = self.apply(ctx, &name, &Map::new(), &props).await {
            // The resource failed as a whole: leave no half-configured bucket behind.
            let _ = self.s3.delete_bucket(&name).await;
            return Err(e);
        }
        Ok(bucket_outcome(&ctx.region, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old = object(BUCKET, old)?;
        let props = object(BUCKET, new)?;
        check_bucket_props(&props)?;
        self.apply(ctx, physical_id, &old, &props).await?;
        Ok(bucket_outcome(&ctx.region, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.s3.delete_bucket(physical_id).await {
            Ok(()) => Ok(()),
            Err(e) if e.code == "NoSuchBucket" => Err(ProviderError::NotFound(physical_id.into())),
            Err(e) => Err(failed(ctx, "S3", e)),
        }
    }

    /// The bucket as S3 holds it, in the template's shape. A sub-configuration whose live
    /// document is exactly what the given (recorded or template) value translates to is
    /// reported as that value; any other live document is reported as its element tree (the
    /// S3 shape), which a comparison sees as different and a revert overwrites.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let region = match self.s3.bucket_region(physical_id) {
            Ok(r) => r,
            Err(e) if e.code == "NoSuchBucket" => return Ok(None),
            Err(e) => return Err(failed(ctx, "S3", e)),
        };
        let declared = object(BUCKET, properties)?;
        let mut props = Map::new();
        props.insert("BucketName".into(), json!(physical_id));
        if let Some(status) = self
            .s3
            .get_bucket_versioning(physical_id)
            .map_err(|e| failed(ctx, "S3", e))?
        {
            props.insert("VersioningConfiguration".into(), json!({"Status": status}));
        }
        for (key, kind) in CONFIGS {
            // Not configured (S3's "no such ..." answer): nothing to report.
            let Ok(live) = self.s3.get_bucket_config(physical_id, *kind) else {
                continue;
            };
            let Ok(live) = super::parse_xml(live.as_bytes()) else {
                continue;
            };
            let same = declared
                .get(*key)
                .filter(|v| !v.is_null())
                .and_then(|v| document(*kind, v).ok())
                .is_some_and(|d| d.to_xml(None) == live.to_xml(None));
            let value = match declared.get(*key) {
                Some(v) if same => v.clone(),
                _ => element_json(&live),
            };
            props.insert(key.to_string(), value);
        }
        let tags = match self.s3.get_bucket_tagging(physical_id) {
            Ok(t) => t,
            Err(e) if e.code == "NoSuchTagSet" => Vec::new(),
            Err(e) => return Err(failed(ctx, "S3", e)),
        };
        if let Some(t) = readback::tags_value(tags) {
            props.insert("Tags".into(), t);
        }
        Ok(Some(Observed {
            properties: props,
            attributes: bucket_outcome(&region, physical_id).attributes,
        }))
    }

    /// The shapes S3 receives one document for: scalars inside a configuration as text
    /// (`ExpirationInDays: 30` and `"30"` become one lifecycle rule), the public access block's
    /// four flags always present (the provider sends `false` for an absent one, and S3 reports
    /// all four), tags in key order.
    fn canonicalize(&self, properties: Value) -> Value {
        let Value::Object(mut props) = properties else {
            return properties;
        };
        if let Some(Value::Object(block)) = props.get_mut("PublicAccessBlockConfiguration") {
            for flag in [
                "BlockPublicAcls",
                "BlockPublicPolicy",
                "IgnorePublicAcls",
                "RestrictPublicBuckets",
            ] {
                block.entry(flag).or_insert(json!(false));
            }
        }
        for (k, v) in props.iter_mut() {
            if k == "Tags" {
                *v = readback::sorted_tags(v);
            } else if k == "VersioningConfiguration" || CONFIGS.iter().any(|(c, _)| c == k) {
                *v = readback::deep_text(v);
            }
        }
        Value::Object(props)
    }
}

/// An S3 document as JSON: a leaf is its text, an element its children by name (a repeated
/// name becomes a list).
fn element_json(el: &Element) -> Value {
    if el.children.is_empty() {
        return json!(el.text.trim());
    }
    let mut out = Map::new();
    for c in &el.children {
        let v = element_json(c);
        match out.get_mut(&c.name) {
            Some(Value::Array(items)) => items.push(v),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, v]);
            }
            None => {
                out.insert(c.name.clone(), v);
            }
        }
    }
    Value::Object(out)
}

/// AWS::S3::BucketPolicy: Ref is the bucket name (its primary identifier).
struct BucketPolicyProvider {
    s3: Arc<S3Service>,
}

fn policy_parts(props: &Map<String, Value>) -> Result<(String, String), ProviderError> {
    crate::providers::check_known(BUCKET_POLICY, props, &["Bucket", "PolicyDocument"], &[])?;
    let doc = json_text(props, "PolicyDocument")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [PolicyDocument] not found".into(),
        )
    })?;
    Ok((required(props, "Bucket")?, doc))
}

#[async_trait::async_trait]
impl Provider for BucketPolicyProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (bucket, doc) = policy_parts(&*object(BUCKET_POLICY, properties)?)?;
        self.s3
            .put_bucket_policy(&bucket, &doc)
            .await
            .map_err(|e| failed(ctx, "S3", e))?;
        Ok(ProviderOutcome {
            physical_id: bucket,
            ..Default::default()
        })
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (_, doc) = policy_parts(&*object(BUCKET_POLICY, new)?)?;
        self.s3
            .put_bucket_policy(physical_id, &doc)
            .await
            .map_err(|e| failed(ctx, "S3", e))?;
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.s3.delete_bucket_policy(physical_id).await {
            Ok(()) => Ok(()),
            Err(e) if e.code == "NoSuchBucket" => Err(ProviderError::NotFound(physical_id.into())),
            Err(e) => Err(failed(ctx, "S3", e)),
        }
    }

    /// The bucket's policy; gone when the bucket or its policy is.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        match self.s3.get_bucket_policy(physical_id) {
            Ok(text) => Ok(Some(Observed {
                properties: Map::from_iter([
                    ("Bucket".to_string(), json!(physical_id)),
                    (
                        "PolicyDocument".to_string(),
                        readback::document(&json!(text)),
                    ),
                ]),
                attributes: Map::new(),
            })),
            Err(e) if e.code == "NoSuchBucket" || e.code == "NoSuchBucketPolicy" => Ok(None),
            Err(e) => Err(failed(ctx, "S3", e)),
        }
    }

    fn canonicalize(&self, properties: Value) -> Value {
        readback::canonical_attributes(properties, &[], &["PolicyDocument"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[test]
    fn configurations_translate_to_s3_documents() {
        let c = cors(&json!({"CorsRules": [{"AllowedMethods": ["GET", "PUT"], "AllowedOrigins": ["*"], "MaxAge": 300, "Id": "r1"}]}))
            .expect("cors");
        assert_eq!(
            c.to_xml(None),
            "<CORSConfiguration><CORSRule><ID>r1</ID><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod><AllowedOrigin>*</AllowedOrigin><MaxAgeSeconds>300</MaxAgeSeconds></CORSRule></CORSConfiguration>"
        );
        let l = lifecycle(&json!({"Rules": [{"Id": "old", "Status": "Enabled", "Prefix": "logs/", "ExpirationInDays": 7,
            "Transitions": [{"StorageClass": "GLACIER", "TransitionInDays": 1}],
            "NoncurrentVersionExpiration": {"NoncurrentDays": 3}}]}))
        .expect("lifecycle");
        assert_eq!(
            l.to_xml(None),
            "<LifecycleConfiguration><Rule><ID>old</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days></Expiration><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>"
        );
        let tagged = lifecycle(&json!({"Rules": [{"Status": "Enabled", "Prefix": "a", "TagFilters": [{"Key": "k", "Value": "v"}], "ExpirationInDays": 1}]}))
            .expect("and");
        assert!(tagged.to_xml(None).contains(
            "<Filter><And><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter>"
        ));
        let n = notification(&json!({"QueueConfigurations": [{"Event": "s3:ObjectCreated:*", "Queue": "arn:aws:sqs:us-east-1:000000000000:q",
            "Filter": {"S3Key": {"Rules": [{"Name": "suffix", "Value": ".jpg"}]}}}]}))
        .expect("notification");
        assert_eq!(
            n.to_xml(None),
            "<NotificationConfiguration><QueueConfiguration><Queue>arn:aws:sqs:us-east-1:000000000000:q</Queue><Event>s3:ObjectCreated:*</Event><Filter><S3Key><FilterRule><Name>suffix</Name><Value>.jpg</Value></FilterRule></S3Key></Filter></QueueConfiguration></NotificationConfiguration>"
        );
        let w = website(&json!({"IndexDocument": "index.html", "ErrorDocument": "error.html"}))
            .expect("web");
        assert_eq!(
            w.to_xml(None),
            "<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument><ErrorDocument><Key>error.html</Key></ErrorDocument></WebsiteConfiguration>"
        );
        let e = cors(&json!({"CorsRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"], "Bogus": 1}]}))
            .expect_err("unknown field");
        assert!(
            e.to_string().contains("CorsConfiguration.CorsRules.Bogus"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn bucket_lifecycle_through_s3() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let p = reg.get(BUCKET).expect("bucket").clone();
        let c = ctx("Data", BUCKET);
        let props = json!({
            "VersioningConfiguration": {"Status": "Enabled"},
            "BucketEncryption": {"ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "k1"}}]},
            "PublicAccessBlockConfiguration": {"BlockPublicAcls": true},
            "Tags": [{"Key": "a", "Value": "1"}],
        });
        let out = p.create(&c, &props).await.expect("create");
        let name = out.physical_id.clone();
        assert!(name.starts_with("teststack-data-"), "{name}");
        assert_eq!(out.attributes["Arn"], json!(format!("arn:aws:s3:::{name}")));
        assert_eq!(
            out.attributes["WebsiteURL"],
            json!(format!("http://{name}.s3-website-us-east-1.amazonaws.com"))
        );
        assert_eq!(
            s.s3.get_bucket_versioning(&name).expect("v").as_deref(),
            Some("Enabled")
        );
        let enc =
            s.s3.get_bucket_config(&name, ConfigKind::Encryption)
                .expect("enc");
        assert!(enc.contains("<KMSMasterKeyID>k1</KMSMasterKeyID>"), "{enc}");
        let pab =
            s.s3.get_bucket_config(&name, ConfigKind::PublicAccessBlock)
                .expect("pab");
        assert!(
            pab.contains("<BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>false"),
            "{pab}"
        );

        let new = json!({"CorsConfiguration": {"CorsRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]}});
        p.update(&c, &name, &props, &new).await.expect("update");
        assert_eq!(
            s.s3.get_bucket_versioning(&name).expect("v").as_deref(),
            Some("Suspended")
        );
        assert!(s.s3.get_bucket_config(&name, ConfigKind::Cors).is_ok());
        let enc =
            s.s3.get_bucket_config(&name, ConfigKind::Encryption)
                .expect("enc");
        assert!(
            enc.contains("AES256"),
            "encryption back to the default: {enc}"
        );
        // The template's tags are gone; CloudFormation's own stay.
        let left = s.s3.get_bucket_tagging(&name).expect("system tags");
        assert_eq!(
            left.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            [
                "aws:cloudformation:stack-name",
                "aws:cloudformation:stack-id",
                "aws:cloudformation:logical-id"
            ]
        );

        let pol = reg.get(BUCKET_POLICY).expect("policy").clone();
        let pprops = json!({"Bucket": name, "PolicyDocument": {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}]}});
        let po = pol.create(&c, &pprops).await.expect("policy");
        assert_eq!(po.physical_id, name);
        assert!(
            s.s3.get_bucket_policy(&name)
                .expect("get")
                .contains("s3:GetObject")
        );
        pol.delete(&c, &name, &pprops).await.expect("delete policy");
        assert!(s.s3.get_bucket_policy(&name).is_err());

        p.delete(&c, &name, &new).await.expect("delete");
        assert!(s.s3.bucket_region(&name).is_err());
    }

    #[tokio::test]
    async fn unsupported_property_fails_naming_it_and_leaves_nothing() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(BUCKET)
            .expect("b")
            .clone();
        let c = ctx("B", BUCKET);
        let e = p
            .create(
                &c,
                &json!({"BucketName": "lockme", "ObjectLockEnabled": true}),
            )
            .await
            .expect_err("unsupported");
        assert!(
            matches!(&e, ProviderError::Unsupported { property, .. } if property == "ObjectLockEnabled"),
            "{e}"
        );
        let e = p
            .create(&c, &json!({"BucketName": "badcors", "CorsConfiguration": {"CorsRules": [{"AllowedMethods": ["PATCH"], "AllowedOrigins": ["*"]}]}}))
            .await
            .expect_err("s3 refuses");
        assert!(e.to_string().contains("Service: S3"), "{e}");
        assert!(
            s.s3.bucket_region("badcors").is_err(),
            "the half-made bucket is gone"
        );
    }
}
