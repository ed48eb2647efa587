//! CloudFront's CloudFormation providers. CloudFormation writes CloudFront's configs with plain
//! lists (`Aliases: [a, b]`, `AllowedMethods` beside `CachedMethods`) and a few names of its own
//! (`IPV6Enabled`, `AcmCertificateArn`); `to_api` turns them into the API's shapes
//! (`{Quantity, Items}`) by walking the API's model, so every member the API has is carried and
//! any other key fails by its path. The distribution is waited for as CloudFormation's handler
//! waits (until Deployed), and disabled before it is deleted, as the handler does.

use super::ops::{Kind, ORIGIN_ACCESS_CONTROL, ORIGIN_ACCESS_IDENTITY, POLICIES};
use super::{CloudFrontService, model};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, json_type, required, tags};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use cumulo_wire::rest_xml_model::RestXmlModel;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "CloudFront";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let cf = || s.cloudfront.clone();
    declared::register(r, DistributionDecl(cf()));
    declared::register(r, FunctionDecl(cf()));
    declared::register(r, ConfiguredDecl::<0>(cf()));
    declared::register(r, ConfiguredDecl::<1>(cf()));
    declared::register(r, ConfiguredDecl::<2>(cf()));
    declared::register(r, ConfiguredDecl::<3>(cf()));
    declared::register(r, ConfiguredDecl::<4>(cf()));
}

fn extraneous(path: &str, key: &str) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: #{path}: extraneous key [{key}] is not permitted"
    ))
}

fn wrong_type(path: &str, want: &str, v: &Value) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: #{path}: expected type: {want}, found: {}",
        json_type(v)
    ))
}

/// CloudFormation's names for API members that it spells differently.
const RENAMES: &[(&str, &str)] = &[
    ("IPV6Enabled", "IsIPV6Enabled"),
    ("AcmCertificateArn", "ACMCertificateArn"),
    ("IamCertificateId", "IAMCertificateId"),
    ("SslSupportMethod", "SSLSupportMethod"),
    ("OriginCustomHeaders", "CustomHeaders"),
    ("OriginSSLProtocols", "OriginSslProtocols"),
    ("Locations", "Items"),
];

/// The API's `{Quantity, Items}` wrapper shapes.
fn is_wrapper(shape: &Value) -> bool {
    shape["members"].get("Quantity").is_some() && shape["members"].get("Items").is_some()
}

/// A CloudFormation value as the API's `shape`.
fn to_api(m: &RestXmlModel, shape: &str, v: &Value, path: &str) -> Result<Value, ProviderError> {
    let s = m.shape(shape);
    match s["type"].as_str().unwrap_or("string") {
        "structure" if is_wrapper(s) => {
            let items_shape = s["members"]["Items"]["shape"].as_str().unwrap_or("");
            let (list, rest) = match v {
                Value::Array(a) => (a.clone(), Map::new()),
                Value::Object(o) => {
                    let mut rest = o.clone();
                    let list = rest
                        .remove("Items")
                        .or_else(|| rest.remove("Locations"))
                        .and_then(|l| l.as_array().cloned())
                        .unwrap_or_default();
                    rest.remove("Quantity");
                    (list, rest)
                }
                other => return Err(wrong_type(path, "JSONArray", other)),
            };
            let mut out = structure(m, shape, &rest, path)?;
            out["Quantity"] = json!(list.len());
            if !list.is_empty() {
                out["Items"] = to_api(
                    m,
                    items_shape,
                    &Value::Array(list),
                    &format!("{path}/Items"),
                )?;
            }
            if s["members"].get("Enabled").is_some() && out.get("Enabled").is_none() {
                out["Enabled"] = json!(out["Quantity"] != 0);
            }
            Ok(out)
        }
        "structure" => {
            let Value::Object(o) = v else {
                return Err(wrong_type(path, "JSONObject", v));
            };
            structure(m, shape, o, path)
        }
        "list" => {
            let Value::Array(a) = v else {
                return Err(wrong_type(path, "JSONArray", v));
            };
            let inner = s["member"]["shape"].as_str().unwrap_or("");
            a.iter()
                .enumerate()
                .map(|(i, x)| to_api(m, inner, x, &format!("{path}/{i}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        "integer" | "long" => match v {
            Value::Number(_) => Ok(v.clone()),
            Value::String(t) => t
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| wrong_type(path, "Integer", v)),
            _ => Err(wrong_type(path, "Integer", v)),
        },
        "double" | "float" => match v {
            Value::Number(_) => Ok(v.clone()),
            Value::String(t) => t
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| wrong_type(path, "Number", v)),
            _ => Err(wrong_type(path, "Number", v)),
        },
        "boolean" => match v {
            Value::Bool(_) => Ok(v.clone()),
            Value::String(t) if t.eq_ignore_ascii_case("true") => Ok(json!(true)),
            Value::String(t) if t.eq_ignore_ascii_case("false") => Ok(json!(false)),
            _ => Err(wrong_type(path, "Boolean", v)),
        },
        _ => match v {
            Value::String(_) => Ok(v.clone()),
            Value::Number(n) => Ok(json!(n.to_string())),
            Value::Bool(b) => Ok(json!(b.to_string())),
            _ => Err(wrong_type(path, "String", v)),
        },
    }
}

/// A CloudFormation object as the API's structure `shape` (its wrapper members aside).
fn structure(
    m: &RestXmlModel,
    shape: &str,
    o: &Map<String, Value>,
    path: &str,
) -> Result<Value, ProviderError> {
    let s = m.shape(shape);
    let members = s["members"].as_object().cloned().unwrap_or_default();
    let mut out = Map::new();
    for (k, val) in o {
        if val.is_null() {
            continue;
        }
        let name = RENAMES
            .iter()
            .find(|(c, _)| c == k)
            .map_or(k.as_str(), |(_, a)| *a);
        // A cache behavior's CachedMethods lives inside AllowedMethods in the API.
        if k == "CachedMethods" && members.contains_key("AllowedMethods") {
            continue;
        }
        let Some(spec) = members.get(name) else {
            return Err(extraneous(path, k));
        };
        let mshape = spec["shape"].as_str().unwrap_or("");
        out.insert(
            name.to_string(),
            to_api(m, mshape, val, &format!("{path}/{k}"))?,
        );
    }
    if members.contains_key("AllowedMethods") && !is_wrapper(s) {
        let allowed = o
            .get("AllowedMethods")
            .cloned()
            .unwrap_or(json!(["GET", "HEAD"]));
        let cached = o
            .get("CachedMethods")
            .cloned()
            .unwrap_or(json!(["GET", "HEAD"]));
        let mut a = to_api(
            m,
            "AllowedMethods",
            &allowed,
            &format!("{path}/AllowedMethods"),
        )?;
        a["CachedMethods"] = to_api(
            m,
            "CachedMethods",
            &cached,
            &format!("{path}/CachedMethods"),
        )?;
        out.insert("AllowedMethods".into(), a);
    }
    if shape == "LoggingConfig" {
        out.entry("Enabled").or_insert(json!(true));
        out.entry("IncludeCookies").or_insert(json!(false));
        out.entry("Prefix").or_insert(json!(""));
    }
    Ok(Value::Object(out))
}

/// A config property converted to the API's shape of the same name.
fn config(props: &Map<String, Value>, key: &str, shape: &str) -> Result<Value, ProviderError> {
    let m = model().map_err(|e| ProviderError::Failed(e.message))?;
    let v = props.get(key).ok_or_else(|| {
        ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #: required key [{key}] not found"
        ))
    })?;
    to_api(m, shape, v, &format!("/{key}"))
}

struct DistributionDecl(Arc<CloudFrontService>);

impl DistributionDecl {
    /// Waits for Deployed (the next Get) and answers Ref and GetAtt.
    fn settle(&self, id: &str) -> Answer<Made> {
        let d = self.0.get_distribution(id)?;
        let domain = d["Distribution"]["DomainName"].clone();
        Ok(Made::new(id).with("Id", id).with("DomainName", domain))
    }

    fn config_of(
        &self,
        props: &Map<String, Value>,
        reference: &str,
    ) -> Result<Value, ProviderError> {
        let mut cfg = config(props, "DistributionConfig", "DistributionConfig")?;
        cfg["CallerReference"] = json!(reference);
        if cfg.get("Comment").is_none() {
            cfg["Comment"] = json!("");
        }
        Ok(cfg)
    }
}

#[async_trait::async_trait]
impl Declared for DistributionDecl {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "DomainName"];
    const TYPE: &'static str = "AWS::CloudFront::Distribution";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["DistributionConfig", "Tags"];
    const NOT_FOUND: &'static [&'static str] = &["NoSuchDistribution"];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: no CloudFront edge serves this distribution's content");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let cfg = self.config_of(props, &uuid::Uuid::new_v4().to_string())?;
        let d = self.0.create_distribution(&cfg, tags(ctx, props)?)?;
        let id = d["Distribution"]["Id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.settle(&id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["DistributionConfig", "Tags"])?;
        let current = self.0.get_distribution_config(id)?;
        let reference = current["DistributionConfig"]["CallerReference"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let cfg = self.config_of(new, &reference)?;
        self.0.update_distribution(&json!({
            "Id": id,
            "IfMatch": current["ETag"],
            "DistributionConfig": cfg,
        }))?;
        self.0
            .set_resource_tags(&self.0.distribution_arn(id), tags(ctx, new)?)?;
        self.settle(id)
    }

    async fn delete(&self, _: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let current = self.0.get_distribution_config(id)?;
        let mut etag = current["ETag"].clone();
        if current["DistributionConfig"]["Enabled"] != json!(false) {
            let mut cfg = current["DistributionConfig"].clone();
            cfg["Enabled"] = json!(false);
            let up = self.0.update_distribution(
                &json!({"Id": id, "IfMatch": etag, "DistributionConfig": cfg}),
            )?;
            etag = up["ETag"].clone();
        }
        self.0.get_distribution(id)?;
        Ok(self
            .0
            .delete_distribution(&json!({"Id": id, "IfMatch": etag}))?)
    }
}

/// The five types that are one config under an id: origin access controls and identities and
/// the three policy kinds, indexed by `K`.
struct ConfiguredDecl<const K: usize>(Arc<CloudFrontService>);

const CONFIGURED_TYPES: [&str; 5] = [
    "AWS::CloudFront::CachePolicy",
    "AWS::CloudFront::OriginRequestPolicy",
    "AWS::CloudFront::ResponseHeadersPolicy",
    "AWS::CloudFront::OriginAccessControl",
    "AWS::CloudFront::CloudFrontOriginAccessIdentity",
];
const CONFIGURED_PROPS: [&[&str]; 5] = [
    &["CachePolicyConfig"],
    &["OriginRequestPolicyConfig"],
    &["ResponseHeadersPolicyConfig"],
    &["OriginAccessControlConfig"],
    &["CloudFrontOriginAccessIdentityConfig"],
];
const CONFIGURED_NOT_FOUND: [&[&str]; 5] = [
    &["NoSuchCachePolicy"],
    &["NoSuchOriginRequestPolicy"],
    &["NoSuchResponseHeadersPolicy"],
    &["NoSuchOriginAccessControl"],
    &["NoSuchCloudFrontOriginAccessIdentity"],
];

impl<const K: usize> ConfiguredDecl<K> {
    fn kind() -> &'static Kind {
        match K {
            0..=2 => &POLICIES[K],
            3 => &ORIGIN_ACCESS_CONTROL,
            _ => &ORIGIN_ACCESS_IDENTITY,
        }
    }

    fn made(kind: &Kind, answer: &Value) -> Made {
        let o = &answer[kind.object];
        let id = o["Id"].as_str().unwrap_or_default();
        let mut made = Made::new(id).with("Id", id);
        if let Some(t) = o.get("LastModifiedTime") {
            made = made.with("LastModifiedTime", t.clone());
        }
        if let Some(c) = o.get("S3CanonicalUserId") {
            made = made.with("S3CanonicalUserId", c.clone());
        }
        made
    }

    fn config_of(
        props: &Map<String, Value>,
        reference: Option<&Value>,
    ) -> Result<Value, ProviderError> {
        let kind = Self::kind();
        let mut cfg = config(props, kind.config, kind.config)?;
        if let Some(r) = reference {
            cfg["CallerReference"] = r.clone();
        }
        Ok(cfg)
    }
}

#[async_trait::async_trait]
impl<const K: usize> Declared for ConfiguredDecl<K> {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "LastModifiedTime", "S3CanonicalUserId"];
    const TYPE: &'static str = CONFIGURED_TYPES[K];
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = CONFIGURED_PROPS[K];
    const NOT_FOUND: &'static [&'static str] = CONFIGURED_NOT_FOUND[K];

    async fn create(&self, _: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let kind = Self::kind();
        let reference = json!(uuid::Uuid::new_v4().to_string());
        let cfg = Self::config_of(props, (K == 4).then_some(&reference))?;
        let out = self
            .0
            .create_configured(kind, &json!({ kind.config: cfg }))?;
        Ok(Self::made(kind, &out))
    }

    async fn update(
        &self,
        _: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let kind = Self::kind();
        refuse_other_changes(Self::TYPE, old, new, &[kind.config])?;
        let current = self.0.get_configured_config(kind, id)?;
        let cfg = Self::config_of(new, current[kind.config].get("CallerReference"))?;
        let out = self.0.update_configured(
            kind,
            &json!({"Id": id, "IfMatch": current["ETag"], kind.config: cfg}),
        )?;
        Ok(Self::made(kind, &out))
    }

    async fn delete(&self, _: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let kind = Self::kind();
        let current = self.0.get_configured_config(kind, id)?;
        Ok(self
            .0
            .delete_configured(kind, &json!({"Id": id, "IfMatch": current["ETag"]}))?)
    }
}

struct FunctionDecl(Arc<CloudFrontService>);

impl FunctionDecl {
    fn input(props: &Map<String, Value>) -> Result<Value, ProviderError> {
        let code = required(props, "FunctionCode")?;
        Ok(json!({
            "Name": required(props, "Name")?,
            "FunctionConfig": config(props, "FunctionConfig", "FunctionConfig")?,
            "FunctionCode": B64.encode(code.as_bytes()),
        }))
    }

    fn auto_publish(props: &Map<String, Value>) -> bool {
        matches!(props.get("AutoPublish"), Some(Value::Bool(true)))
            || props
                .get("AutoPublish")
                .and_then(Value::as_str)
                .is_some_and(|s| s.eq_ignore_ascii_case("true"))
    }

    fn made(&self, name: &str, published: bool) -> Made {
        let arn = self.0.function_arn(name);
        Made::new(&arn)
            .with("FunctionARN", arn.as_str())
            .with("FunctionMetadata.FunctionARN", arn.as_str())
            .with("Stage", if published { "LIVE" } else { "DEVELOPMENT" })
    }

    fn name_of(arn: &str) -> &str {
        arn.rsplit_once(":function/").map_or(arn, |(_, n)| n)
    }
}

#[async_trait::async_trait]
impl Declared for FunctionDecl {
    const ATTRIBUTES: &'static [&'static str] =
        &["FunctionARN", "FunctionMetadata.FunctionARN", "Stage"];
    const TYPE: &'static str = "AWS::CloudFront::Function";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Name",
        "FunctionCode",
        "FunctionConfig",
        "AutoPublish",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = &["NoSuchFunctionExists"];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: the function is stored and published; no edge runs it");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut input = Self::input(props)?;
        let t = tags(ctx, props)?;
        input["Tags"] = json!({"Items": t.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()});
        let out = self.0.create_function(&input)?;
        let name = required(props, "Name")?;
        let publish = Self::auto_publish(props);
        if publish {
            self.0
                .publish_function(&json!({"Name": name, "IfMatch": out["ETag"]}))?;
        }
        Ok(self.made(&name, publish))
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
            &["FunctionCode", "FunctionConfig", "AutoPublish", "Tags"],
        )?;
        let name = Self::name_of(id).to_string();
        let mut input = Self::input(new)?;
        input["IfMatch"] = json!(self.0.function_etag(&name)?);
        let out = self.0.update_function(&input)?;
        let publish = Self::auto_publish(new);
        if publish {
            self.0
                .publish_function(&json!({"Name": name, "IfMatch": out["ETag"]}))?;
        }
        self.0.set_resource_tags(id, tags(ctx, new)?)?;
        Ok(self.made(&name, publish))
    }

    async fn delete(&self, _: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let name = Self::name_of(id);
        let etag = self.0.function_etag(name)?;
        Ok(self
            .0
            .delete_function(&json!({"Name": name, "IfMatch": etag}))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloudformation_shapes_become_the_apis() {
        let m = model().unwrap();
        let cfn = json!({
            "Aliases": ["a.example.com"],
            "Enabled": "true",
            "IPV6Enabled": true,
            "Origins": [{"Id": "o", "DomainName": "x", "CustomOriginConfig": {"OriginProtocolPolicy": "match-viewer", "OriginSSLProtocols": ["TLSv1.2"]}}],
            "DefaultCacheBehavior": {"TargetOriginId": "o", "ViewerProtocolPolicy": "allow-all", "AllowedMethods": ["GET", "HEAD", "OPTIONS"], "CachedMethods": ["GET", "HEAD"],
                "FunctionAssociations": [{"EventType": "viewer-request", "FunctionARN": "arn"}], "TrustedSigners": ["self"]},
            "ViewerCertificate": {"AcmCertificateArn": "arn:cert", "SslSupportMethod": "sni-only"},
            "Logging": {"Bucket": "b.s3.amazonaws.com"},
            "Restrictions": {"GeoRestriction": {"RestrictionType": "whitelist", "Locations": ["US"]}},
            "CustomErrorResponses": [{"ErrorCode": 404, "ResponseCode": 200, "ResponsePagePath": "/index.html"}],
        });
        let api = to_api(m, "DistributionConfig", &cfn, "/DistributionConfig").unwrap();
        assert_eq!(
            api["Aliases"],
            json!({"Quantity": 1, "Items": ["a.example.com"]})
        );
        assert_eq!(api["Enabled"], true);
        assert_eq!(api["IsIPV6Enabled"], true);
        assert_eq!(
            api["Origins"]["Items"][0]["CustomOriginConfig"]["OriginSslProtocols"],
            json!({"Quantity": 1, "Items": ["TLSv1.2"]})
        );
        let b = &api["DefaultCacheBehavior"];
        assert_eq!(
            b["AllowedMethods"],
            json!({"Quantity": 3, "Items": ["GET", "HEAD", "OPTIONS"], "CachedMethods": {"Quantity": 2, "Items": ["GET", "HEAD"]}})
        );
        assert_eq!(
            b["TrustedSigners"],
            json!({"Quantity": 1, "Items": ["self"], "Enabled": true})
        );
        assert_eq!(b["FunctionAssociations"]["Quantity"], 1);
        assert_eq!(
            api["ViewerCertificate"],
            json!({"ACMCertificateArn": "arn:cert", "SSLSupportMethod": "sni-only"})
        );
        assert_eq!(api["Logging"]["Enabled"], true);
        assert_eq!(
            api["Restrictions"]["GeoRestriction"],
            json!({"RestrictionType": "whitelist", "Quantity": 1, "Items": ["US"]})
        );
        assert_eq!(
            api["CustomErrorResponses"]["Items"][0]["ResponseCode"],
            "200"
        );

        let e = to_api(
            m,
            "DistributionConfig",
            &json!({"CNAMEs": ["x"]}),
            "/DistributionConfig",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("#/DistributionConfig: extraneous key [CNAMEs]"),
            "{e}"
        );

        let rhp = to_api(m, "ResponseHeadersPolicyConfig", &json!({"Name": "n", "CorsConfig": {
            "AccessControlAllowHeaders": {"Items": ["*"]}, "AccessControlAllowMethods": {"Items": ["GET"]},
            "AccessControlAllowOrigins": {"Items": ["*"]}, "AccessControlAllowCredentials": false, "OriginOverride": true}}), "").unwrap();
        assert_eq!(
            rhp["CorsConfig"]["AccessControlAllowHeaders"],
            json!({"Quantity": 1, "Items": ["*"]})
        );
    }
}
