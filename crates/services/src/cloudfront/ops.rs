//! CloudFront's typed operations over JSON in the API's member names (as the wire decodes
//! requests and the providers build them); answers are the operations' output shapes, ETag and
//! Location included. Every check runs before anything changes.

use super::CloudFrontService;
use super::managed;
use super::state::{
    CACHE_POLICY, Configured, DISTRIBUTION, Distribution, FUNCTION, Function, FunctionStage, OAC,
    OAI, ORIGIN_REQUEST_POLICY, RESPONSE_HEADERS_POLICY, State, Tags,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use http::StatusCode;
use rand::Rng;
use serde_json::{Map, Value, json};

pub(crate) fn error(status: u16, code: &str, message: impl Into<String>) -> AwsError {
    AwsError::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        code,
        message,
    )
}

pub(crate) fn invalid(message: impl Into<String>) -> AwsError {
    error(400, "InvalidArgument", message)
}

fn no_distribution() -> AwsError {
    error(
        404,
        "NoSuchDistribution",
        "The specified distribution does not exist.",
    )
}

fn no_function() -> AwsError {
    error(404, "NoSuchFunctionExists", "The function does not exist.")
}

/// Uppercase letters and digits, as CloudFront's ids and ETags are made of.
fn upper(n: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// An id or ETag: `E` and 13 uppercase letters or digits (`E2QWRUHAPOMQZL`).
fn new_id() -> String {
    format!("E{}", upper(13))
}

/// A distribution's domain name: `d`, 13 lowercase letters or digits, `.cloudfront.net`.
fn new_domain() -> String {
    format!("d{}.cloudfront.net", upper(13).to_ascii_lowercase())
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn required<'a>(v: &'a Value, key: &str) -> Result<&'a Value, AwsError> {
    v.get(key)
        .filter(|x| !x.is_null())
        .ok_or_else(|| invalid(format!("The parameter {key} is required.")))
}

/// The If-Match a change must carry: the resource's current ETag.
fn if_match(input: &Value, etag: &str) -> Result<(), AwsError> {
    match text(input, "IfMatch") {
        None | Some("") => Err(error(
            400,
            "InvalidIfMatchVersion",
            "The If-Match version is missing or not valid for the resource.",
        )),
        Some(m) if m != etag => Err(error(
            412,
            "PreconditionFailed",
            "The precondition given in one or more of the request-header fields evaluated to false.",
        )),
        Some(_) => Ok(()),
    }
}

fn items(wrapper: Option<&Value>) -> Vec<Value> {
    wrapper
        .and_then(|w| w.get("Items"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Every `{Quantity, Items}` in a document agrees with itself, as CloudFront checks.
fn check_quantities(v: &Value) -> Result<(), AwsError> {
    match v {
        Value::Object(m) => {
            if let Some(q) = m.get("Quantity") {
                let n = m.get("Items").and_then(Value::as_array).map_or(0, Vec::len);
                if q.as_u64() != Some(n as u64) {
                    return Err(error(
                        400,
                        "InconsistentQuantities",
                        "The value of Quantity and the size of Items don't match.",
                    ));
                }
            }
            m.values().try_for_each(check_quantities)
        }
        Value::Array(a) => a.iter().try_for_each(check_quantities),
        _ => Ok(()),
    }
}

fn tags_in(v: Option<&Value>) -> Result<Tags, AwsError> {
    let mut out = Tags::new();
    for t in items(v) {
        let k = text(&t, "Key")
            .ok_or_else(|| error(400, "InvalidTagging", "A tag key is required."))?;
        if k.is_empty() || k.len() > 128 {
            return Err(error(
                400,
                "InvalidTagging",
                format!("The tag key '{k}' is not valid."),
            ));
        }
        out.push((k.to_string(), text(&t, "Value").unwrap_or("").to_string()));
    }
    Ok(out)
}

fn tags_out(tags: &Tags) -> Value {
    json!({"Items": tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()})
}

fn set_tags(tags: &mut Tags, new: Tags) {
    for (k, v) in new {
        match tags.iter_mut().find(|(key, _)| *key == k) {
            Some(t) => t.1 = v,
            None => tags.push((k, v)),
        }
    }
}

fn max_items(input: &Value) -> Result<usize, AwsError> {
    match text(input, "MaxItems") {
        None => Ok(100),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| invalid(format!("The value '{s}' of MaxItems is not valid."))),
    }
}

/// A page of `(id, item)` from `Marker` on, and the marker of the next.
fn page(
    all: Vec<(String, Value)>,
    marker: Option<&str>,
    max: usize,
) -> (Vec<Value>, Option<String>) {
    let mut out = Vec::new();
    let mut next = None;
    for (id, v) in all {
        if marker.is_some_and(|m| id.as_str() < m) {
            continue;
        }
        if out.len() == max {
            next = Some(id);
            break;
        }
        out.push(v);
    }
    (out, next)
}

fn list_answer(items: Vec<Value>, next: Option<String>, marker: Option<&str>, max: usize) -> Value {
    let mut l = json!({
        "Marker": marker.unwrap_or(""),
        "MaxItems": max,
        "IsTruncated": next.is_some(),
        "Quantity": items.len(),
    });
    if !items.is_empty() {
        l["Items"] = json!(items);
    }
    if let Some(n) = next {
        l["NextMarker"] = json!(n);
    }
    l
}

// ----- distribution configs -----

/// AWS's defaults for what a DistributionConfig leaves out, as GetDistributionConfig shows them.
fn normalize_behavior(b: &mut Value) {
    let default = |b: &mut Value, k: &str, v: Value| {
        if b.get(k).is_none_or(Value::is_null) {
            b[k] = v;
        }
    };
    default(
        b,
        "TrustedSigners",
        json!({"Enabled": false, "Quantity": 0}),
    );
    default(
        b,
        "TrustedKeyGroups",
        json!({"Enabled": false, "Quantity": 0}),
    );
    default(
        b,
        "AllowedMethods",
        json!({"Quantity": 2, "Items": ["HEAD", "GET"], "CachedMethods": {"Quantity": 2, "Items": ["HEAD", "GET"]}}),
    );
    if b["AllowedMethods"].get("CachedMethods").is_none() {
        b["AllowedMethods"]["CachedMethods"] = json!({"Quantity": 2, "Items": ["HEAD", "GET"]});
    }
    default(b, "SmoothStreaming", json!(false));
    default(b, "Compress", json!(false));
    default(b, "LambdaFunctionAssociations", json!({"Quantity": 0}));
    default(b, "FunctionAssociations", json!({"Quantity": 0}));
    default(b, "FieldLevelEncryptionId", json!(""));
}

fn normalize(cfg: &mut Value) {
    let default = |c: &mut Value, k: &str, v: Value| {
        if c.get(k).is_none_or(Value::is_null) {
            c[k] = v;
        }
    };
    default(cfg, "Aliases", json!({"Quantity": 0}));
    default(cfg, "DefaultRootObject", json!(""));
    default(cfg, "OriginGroups", json!({"Quantity": 0}));
    default(cfg, "CacheBehaviors", json!({"Quantity": 0}));
    default(cfg, "CustomErrorResponses", json!({"Quantity": 0}));
    default(
        cfg,
        "Logging",
        json!({"Enabled": false, "IncludeCookies": false, "Bucket": "", "Prefix": ""}),
    );
    default(cfg, "PriceClass", json!("PriceClass_All"));
    default(
        cfg,
        "Restrictions",
        json!({"GeoRestriction": {"RestrictionType": "none", "Quantity": 0}}),
    );
    default(cfg, "WebACLId", json!(""));
    default(cfg, "HttpVersion", json!("http2"));
    default(cfg, "IsIPV6Enabled", json!(false));
    default(cfg, "Staging", json!(false));
    let vc = cfg.get("ViewerCertificate").cloned().unwrap_or(json!({}));
    let mut vc = if vc.is_object() { vc } else { json!({}) };
    if let Some(arn) = text(&vc, "ACMCertificateArn").map(str::to_string) {
        vc["Certificate"] = json!(arn);
        vc["CertificateSource"] = json!("acm");
        default(&mut vc, "SSLSupportMethod", json!("sni-only"));
        default(&mut vc, "MinimumProtocolVersion", json!("TLSv1.2_2021"));
        vc["CloudFrontDefaultCertificate"] = json!(false);
    } else if let Some(id) = text(&vc, "IAMCertificateId").map(str::to_string) {
        vc["Certificate"] = json!(id);
        vc["CertificateSource"] = json!("iam");
        vc["CloudFrontDefaultCertificate"] = json!(false);
    } else {
        vc = json!({"CloudFrontDefaultCertificate": true, "SSLSupportMethod": "vip", "MinimumProtocolVersion": "TLSv1", "CertificateSource": "cloudfront"});
    }
    cfg["ViewerCertificate"] = vc;
    normalize_behavior(&mut cfg["DefaultCacheBehavior"]);
    if let Some(list) = cfg["CacheBehaviors"]
        .get_mut("Items")
        .and_then(Value::as_array_mut)
    {
        list.iter_mut().for_each(normalize_behavior);
    }
    for o in cfg["Origins"]
        .get_mut("Items")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        default(o, "OriginPath", json!(""));
        default(o, "CustomHeaders", json!({"Quantity": 0}));
        default(o, "ConnectionAttempts", json!(3));
        default(o, "ConnectionTimeout", json!(10));
        default(o, "OriginAccessControlId", json!(""));
        if let Some(c) = o.get_mut("CustomOriginConfig").filter(|c| c.is_object()) {
            default(c, "HTTPPort", json!(80));
            default(c, "HTTPSPort", json!(443));
            default(
                c,
                "OriginSslProtocols",
                json!({"Quantity": 1, "Items": ["TLSv1.2"]}),
            );
            default(c, "OriginReadTimeout", json!(30));
            default(c, "OriginKeepaliveTimeout", json!(5));
        }
    }
}

/// Every cache behavior of a config, the default one first.
fn behaviors(cfg: &Value) -> Vec<&Value> {
    let mut out = vec![&cfg["DefaultCacheBehavior"]];
    out.extend(
        cfg["CacheBehaviors"]
            .get("Items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    out
}

fn aliases(cfg: &Value) -> Vec<String> {
    items(cfg.get("Aliases"))
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect()
}

impl CloudFrontService {
    /// Checks a config against the API's rules and what it references.
    fn check_config(&self, s: &State, cfg: &Value, own_id: Option<&str>) -> Result<(), AwsError> {
        for k in [
            "CallerReference",
            "Origins",
            "DefaultCacheBehavior",
            "Comment",
            "Enabled",
        ] {
            required(cfg, k)?;
        }
        check_quantities(cfg)?;
        let origins = items(cfg.get("Origins"));
        if origins.is_empty() {
            return Err(invalid(
                "The parameter Origins must contain at least one origin.",
            ));
        }
        let mut ids: Vec<String> = Vec::new();
        for o in &origins {
            let id =
                text(o, "Id").ok_or_else(|| invalid("The parameter Origin Id is required."))?;
            if text(o, "DomainName").is_none_or(str::is_empty) {
                return Err(error(
                    400,
                    "InvalidOrigin",
                    "The specified origin server does not exist or is not valid.",
                ));
            }
            if ids.iter().any(|i| i == id) {
                return Err(invalid(format!(
                    "The parameter Origin Id must be unique. Origin Id '{id}' is repeated."
                )));
            }
            ids.push(id.to_string());
            if let Some(oac) = text(o, "OriginAccessControlId").filter(|x| !x.is_empty())
                && !s.configured(OAC).any(|c| c.id == oac)
            {
                return Err(error(
                    404,
                    "NoSuchOriginAccessControl",
                    "The origin access control does not exist.",
                ));
            }
            if let Some(oai) = o
                .pointer("/S3OriginConfig/OriginAccessIdentity")
                .and_then(Value::as_str)
                .filter(|x| !x.is_empty())
            {
                let id = oai
                    .strip_prefix("origin-access-identity/cloudfront/")
                    .unwrap_or("");
                if !s.configured(OAI).any(|c| c.id == id) {
                    return Err(error(
                        400,
                        "InvalidOriginAccessIdentity",
                        "The origin access identity is not valid or doesn't exist.",
                    ));
                }
            }
        }
        ids.extend(
            items(cfg.get("OriginGroups"))
                .iter()
                .filter_map(|g| text(g, "Id").map(str::to_string)),
        );
        for b in behaviors(cfg) {
            let target = text(b, "TargetOriginId")
                .ok_or_else(|| invalid("The parameter TargetOriginId is required."))?;
            if !ids.iter().any(|i| i == target) {
                return Err(error(
                    404,
                    "NoSuchOrigin",
                    "One or more of your origins or origin groups do not exist.",
                ));
            }
            match text(b, "ViewerProtocolPolicy") {
                Some("allow-all" | "https-only" | "redirect-to-https") => {}
                _ => {
                    return Err(invalid(
                        "The parameter ViewerProtocolPolicy is required and must be allow-all, https-only or redirect-to-https.",
                    ));
                }
            }
            match text(b, "CachePolicyId") {
                Some(id) if !self.policy_exists(s, &POLICIES[0], id) => {
                    return Err(error(
                        404,
                        "NoSuchCachePolicy",
                        "The cache policy does not exist.",
                    ));
                }
                Some(_) => {}
                None if b.get("ForwardedValues").is_none() => {
                    return Err(invalid("The parameter ForwardedValues is required."));
                }
                None => {}
            }
            if let Some(id) = text(b, "OriginRequestPolicyId")
                && !self.policy_exists(s, &POLICIES[1], id)
            {
                return Err(error(
                    404,
                    "NoSuchOriginRequestPolicy",
                    "The origin request policy does not exist.",
                ));
            }
            if let Some(id) = text(b, "ResponseHeadersPolicyId")
                && !self.policy_exists(s, &POLICIES[2], id)
            {
                return Err(error(
                    404,
                    "NoSuchResponseHeadersPolicy",
                    "The response headers policy does not exist.",
                ));
            }
            for f in items(b.get("FunctionAssociations")) {
                let arn = text(&f, "FunctionARN").unwrap_or("");
                let published = arn
                    .rsplit_once(":function/")
                    .and_then(|(_, n)| s.functions.get(n))
                    .is_some_and(|f| f.live.is_some());
                if !published {
                    return Err(error(
                        400,
                        "InvalidFunctionAssociation",
                        format!(
                            "The function association is not valid: the function {arn} does not exist or is not published."
                        ),
                    ));
                }
            }
        }
        let names = aliases(cfg);
        let default_cert = cfg
            .pointer("/ViewerCertificate/ACMCertificateArn")
            .or_else(|| cfg.pointer("/ViewerCertificate/IAMCertificateId"))
            .is_none();
        if !names.is_empty() && default_cert {
            return Err(error(
                400,
                "InvalidViewerCertificate",
                "To add an alternate domain name (CNAME) to a CloudFront distribution, you must attach a trusted certificate that validates your authorization to use the domain name. For more details, see: https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/CNAMEs.html#alternate-domain-names-requirements",
            ));
        }
        for d in s
            .distributions
            .values()
            .filter(|d| Some(d.id.as_str()) != own_id)
        {
            if aliases(&d.config).iter().any(|a| names.contains(a)) {
                return Err(error(
                    409,
                    "CNAMEAlreadyExists",
                    "One or more of the CNAMEs you provided are already associated with a different resource.",
                ));
            }
        }
        Ok(())
    }

    /// Records the distribution in its ACM certificate's InUseBy (certificates for CloudFront
    /// live in us-east-1).
    fn use_certificate(&self, cfg: &Value, dist_arn: &str) -> Result<Option<String>, AwsError> {
        let Some(arn) = cfg
            .pointer("/ViewerCertificate/ACMCertificateArn")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        self.acm.add_in_use_by("us-east-1", arn, dist_arn).map_err(|_| {
            error(400, "InvalidViewerCertificate", "The specified SSL certificate doesn't exist, isn't in us-east-1 region, isn't valid, or doesn't include a valid certificate chain.")
        })?;
        Ok(Some(arn.to_string()))
    }

    fn release_certificate(&self, cert: Option<&str>, dist_arn: &str) {
        if let Some(c) = cert {
            // A certificate already gone no longer names anything.
            let _ = self.acm.remove_in_use_by("us-east-1", c, dist_arn);
        }
    }

    fn distribution_json(&self, d: &Distribution) -> Value {
        json!({
            "Id": d.id,
            "ARN": self.distribution_arn(&d.id),
            "Status": d.status,
            "LastModifiedTime": d.last_modified,
            "InProgressInvalidationBatches": 0,
            "DomainName": d.domain,
            "ActiveTrustedSigners": {"Enabled": false, "Quantity": 0},
            "ActiveTrustedKeyGroups": {"Enabled": false, "Quantity": 0},
            "DistributionConfig": d.config,
        })
    }

    fn answer(&self, d: &Distribution) -> Value {
        json!({
            "Distribution": self.distribution_json(d),
            "ETag": d.etag,
            "Location": format!("https://cloudfront.amazonaws.com/2020-05-31/distribution/{}", d.id),
        })
    }

    /// CreateDistribution / CreateDistributionWithTags. The same CallerReference with the same
    /// config answers the existing distribution; with another config, DistributionAlreadyExists.
    pub fn create_distribution(&self, config: &Value, tags: Tags) -> Result<Value, AwsError> {
        let mut cfg = config.clone();
        if !cfg.is_object() {
            return Err(error(
                400,
                "MissingBody",
                "This operation requires a body. Ensure that the body is present and the Content-Type header is set.",
            ));
        }
        let reference = text(&cfg, "CallerReference").unwrap_or("").to_string();
        let id = new_id();
        let arn = self.distribution_arn(&id);
        let prepared = self.read(|s| -> Result<Option<Value>, AwsError> {
            self.check_config(s, &cfg, None)?;
            normalize(&mut cfg);
            if let Some(d) = s.distributions.values().find(|d| text(&d.config, "CallerReference") == Some(&reference)) {
                if d.config == cfg {
                    return Ok(Some(self.answer(d)));
                }
                return Err(error(409, "DistributionAlreadyExists", format!("The caller reference that you are using to create a distribution is associated with another distribution. Already exists: {}", d.id)));
            }
            Ok(None)
        })?;
        if let Some(existing) = prepared {
            return Ok(existing);
        }
        let certificate = self.use_certificate(&cfg, &arn)?;
        let d = Distribution {
            id: id.clone(),
            domain: new_domain(),
            status: "InProgress".into(),
            etag: new_id(),
            last_modified: now(),
            config: cfg,
            tags,
            invalidations: Vec::new(),
            certificate,
        };
        let out = self.answer(&d);
        let saved = self.mutate(|s| {
            s.touch(DISTRIBUTION, &id);
            s.distributions.insert(id.clone(), d);
            Ok(())
        });
        if let Err(e) = saved {
            self.release_certificate(
                config
                    .pointer("/ViewerCertificate/ACMCertificateArn")
                    .and_then(Value::as_str),
                &arn,
            );
            return Err(e);
        }
        Ok(out)
    }

    /// GetDistribution. A change is Deployed from the next Get on (what the
    /// `distribution_deployed` waiter polls).
    pub fn get_distribution(&self, id: &str) -> Result<Value, AwsError> {
        self.mutate(|s| {
            let d = s.distributions.get_mut(id).ok_or_else(no_distribution)?;
            if d.status != "Deployed" {
                d.status = "Deployed".into();
                s.touch(DISTRIBUTION, id);
            }
            let d = &s.distributions[id];
            Ok(json!({"Distribution": self.distribution_json(d), "ETag": d.etag}))
        })
    }

    pub fn get_distribution_config(&self, id: &str) -> Result<Value, AwsError> {
        self.read(|s| {
            let d = s.distributions.get(id).ok_or_else(no_distribution)?;
            Ok(json!({"DistributionConfig": d.config, "ETag": d.etag}))
        })
    }

    pub fn update_distribution(&self, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "Id").unwrap_or("");
        let mut cfg = required(input, "DistributionConfig")?.clone();
        let arn = self.distribution_arn(id);
        let old_cert = self.read(|s| -> Result<Option<String>, AwsError> {
            let d = s.distributions.get(id).ok_or_else(no_distribution)?;
            if_match(input, &d.etag)?;
            self.check_config(s, &cfg, Some(id))?;
            if text(&cfg, "CallerReference") != text(&d.config, "CallerReference") {
                return Err(error(
                    400,
                    "IllegalUpdate",
                    "Origin and CallerReference cannot be updated.",
                ));
            }
            Ok(d.certificate.clone())
        })?;
        normalize(&mut cfg);
        let new_cert_arn = cfg
            .pointer("/ViewerCertificate/ACMCertificateArn")
            .and_then(Value::as_str)
            .map(str::to_string);
        let certificate = if new_cert_arn != old_cert {
            let c = self.use_certificate(&cfg, &arn)?;
            self.release_certificate(old_cert.as_deref(), &arn);
            c
        } else {
            old_cert
        };
        self.mutate(|s| {
            let d = s.distributions.get_mut(id).ok_or_else(no_distribution)?;
            if d.config != cfg {
                d.config = cfg;
                d.status = "InProgress".into();
                d.last_modified = now();
            }
            d.etag = new_id();
            d.certificate = certificate;
            let out = self.answer(d);
            s.touch(DISTRIBUTION, id);
            Ok(out)
        })
    }

    pub fn delete_distribution(&self, input: &Value) -> Result<(), AwsError> {
        let id = text(input, "Id").unwrap_or("");
        let cert = self.mutate(|s| {
            let d = s.distributions.get(id).ok_or_else(no_distribution)?;
            if_match(input, &d.etag)?;
            if d.config["Enabled"] != json!(false) || d.status != "Deployed" {
                return Err(error(
                    409,
                    "DistributionNotDisabled",
                    "The distribution you are trying to delete has not been disabled.",
                ));
            }
            let cert = d.certificate.clone();
            s.distributions.remove(id);
            s.touch(DISTRIBUTION, id);
            Ok(cert)
        })?;
        self.release_certificate(cert.as_deref(), &self.distribution_arn(id));
        Ok(())
    }

    fn summary(&self, d: &Distribution) -> Value {
        let c = &d.config;
        let mut v = json!({
            "Id": d.id,
            "ARN": self.distribution_arn(&d.id),
            "ETag": d.etag,
            "Status": d.status,
            "LastModifiedTime": d.last_modified,
            "DomainName": d.domain,
            "Staging": false,
        });
        for k in [
            "Aliases",
            "Origins",
            "OriginGroups",
            "DefaultCacheBehavior",
            "CacheBehaviors",
            "CustomErrorResponses",
            "Comment",
            "PriceClass",
            "Enabled",
            "ViewerCertificate",
            "Restrictions",
            "WebACLId",
            "HttpVersion",
            "IsIPV6Enabled",
        ] {
            if let Some(x) = c.get(k) {
                v[k] = x.clone();
            }
        }
        v
    }

    pub fn list_distributions(&self, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let marker = text(input, "Marker").filter(|m| !m.is_empty());
        let all = self.read(|s| {
            s.distributions
                .values()
                .map(|d| (d.id.clone(), self.summary(d)))
                .collect::<Vec<_>>()
        });
        let (items, next) = page(all, marker, max);
        Ok(json!({"DistributionList": list_answer(items, next, marker, max)}))
    }

    // ----- invalidations -----

    pub fn create_invalidation(&self, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "DistributionId").unwrap_or("").to_string();
        let batch = required(input, "InvalidationBatch")?.clone();
        check_quantities(&batch)?;
        let reference = text(&batch, "CallerReference")
            .ok_or_else(|| invalid("The parameter CallerReference is required."))?
            .to_string();
        let paths = items(batch.get("Paths"));
        if paths.is_empty()
            || paths
                .iter()
                .any(|p| !p.as_str().is_some_and(|p| p.starts_with('/')))
        {
            return Err(invalid(
                "Your request contains one or more invalid invalidation paths.",
            ));
        }
        if paths.len() > 3000 {
            return Err(error(
                413,
                "BatchTooLarge",
                "Invalidation batch specified is too large.",
            ));
        }
        self.mutate(|s| {
            let d = s.distributions.get_mut(&id).ok_or_else(no_distribution)?;
            let location = |inv: &str| format!("https://cloudfront.amazonaws.com/2020-05-31/distribution/{id}/invalidation/{inv}");
            if let Some(inv) = d.invalidations.iter().find(|i| i.pointer("/InvalidationBatch/CallerReference").and_then(Value::as_str) == Some(&reference)) {
                let inv_id = text(inv, "Id").unwrap_or("").to_string();
                return Ok(json!({"Invalidation": inv, "Location": location(&inv_id)}));
            }
            let inv_id = format!("I{}", upper(13));
            let inv = json!({"Id": inv_id, "Status": "Completed", "CreateTime": now(), "InvalidationBatch": batch});
            d.invalidations.push(inv.clone());
            s.touch(DISTRIBUTION, &id);
            Ok(json!({"Invalidation": inv, "Location": location(&inv_id)}))
        })
    }

    pub fn get_invalidation(&self, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "DistributionId").unwrap_or("");
        let inv = text(input, "Id").unwrap_or("");
        self.read(|s| {
            let d = s.distributions.get(id).ok_or_else(no_distribution)?;
            let i = d
                .invalidations
                .iter()
                .find(|i| text(i, "Id") == Some(inv))
                .ok_or_else(|| {
                    error(
                        404,
                        "NoSuchInvalidation",
                        "The specified invalidation does not exist.",
                    )
                })?;
            Ok(json!({"Invalidation": i}))
        })
    }

    pub fn list_invalidations(&self, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "DistributionId").unwrap_or("");
        let max = max_items(input)?;
        let marker = text(input, "Marker").filter(|m| !m.is_empty());
        let all = self.read(|s| -> Result<Vec<(String, Value)>, AwsError> {
            let d = s.distributions.get(id).ok_or_else(no_distribution)?;
            // Newest first, as AWS lists them; the marker is the position.
            Ok(d.invalidations
                .iter()
                .rev()
                .enumerate()
                .map(|(n, i)| (format!("{n:08}"), json!({"Id": i["Id"], "CreateTime": i["CreateTime"], "Status": i["Status"]})))
                .collect())
        })?;
        let (items, next) = page(all, marker, max);
        Ok(json!({"InvalidationList": list_answer(items, next, marker, max)}))
    }

    // ----- tags -----

    fn with_tags<T>(&self, arn: &str, f: impl FnOnce(&mut Tags) -> T) -> Result<T, AwsError> {
        let prefix = format!("arn:aws:cloudfront::{}:", self.account_id);
        let Some(rest) = arn.strip_prefix(&prefix) else {
            return Err(invalid(format!("The resource ARN {arn} is not valid.")));
        };
        let missing = || {
            error(
                404,
                "NoSuchResource",
                "The specified resource does not exist.",
            )
        };
        self.mutate(|s| {
            if let Some(id) = rest.strip_prefix("distribution/") {
                let d = s.distributions.get_mut(id).ok_or_else(missing)?;
                let out = f(&mut d.tags);
                s.touch(DISTRIBUTION, id);
                Ok(out)
            } else if let Some(name) = rest.strip_prefix("function/") {
                let func = s.functions.get_mut(name).ok_or_else(missing)?;
                let out = f(&mut func.tags);
                s.touch(FUNCTION, name);
                Ok(out)
            } else {
                Err(missing())
            }
        })
    }

    pub fn tag_resource(&self, arn: &str, tags: &Value) -> Result<(), AwsError> {
        let tags = tags_in(Some(tags))?;
        self.with_tags(arn, |t| set_tags(t, tags))
    }

    pub fn untag_resource(&self, arn: &str, keys: &Value) -> Result<(), AwsError> {
        let keys: Vec<String> = items(Some(keys))
            .iter()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        self.with_tags(arn, |t| t.retain(|(k, _)| !keys.contains(k)))
    }

    pub fn list_tags_for_resource(&self, arn: &str) -> Result<Value, AwsError> {
        let tags = self.with_tags(arn, |t| t.clone())?;
        Ok(json!({"Tags": tags_out(&tags)}))
    }

    /// The tags of a distribution or function, as providers diff them.
    pub fn tags_of(&self, arn: &str) -> Result<Tags, AwsError> {
        self.with_tags(arn, |t| t.clone())
    }

    pub fn set_resource_tags(&self, arn: &str, tags: Tags) -> Result<(), AwsError> {
        self.with_tags(arn, |t| *t = tags)
    }
}

/// What sets one configured kind apart: its names in the API and its errors.
pub(crate) struct Kind {
    pub key: &'static str,
    /// The object's member name (`CachePolicy`) and its config's (`CachePolicyConfig`).
    pub object: &'static str,
    pub config: &'static str,
    pub list: &'static str,
    pub uri: &'static str,
    pub not_found: (&'static str, &'static str),
    pub exists: (&'static str, &'static str),
    pub in_use: (&'static str, &'static str),
    /// The cache behavior field that references it (policies), or how an origin does.
    pub referenced_by: &'static str,
    pub managed: fn() -> Vec<(&'static str, Value)>,
}

fn no_managed() -> Vec<(&'static str, Value)> {
    Vec::new()
}

/// The three policy kinds, in the order `check_config` reads them.
pub(crate) static POLICIES: [Kind; 3] = [
    Kind {
        key: CACHE_POLICY,
        object: "CachePolicy",
        config: "CachePolicyConfig",
        list: "CachePolicyList",
        uri: "cache-policy",
        not_found: ("NoSuchCachePolicy", "The cache policy does not exist."),
        exists: (
            "CachePolicyAlreadyExists",
            "A cache policy with this name already exists. You must provide a unique name. To modify an existing cache policy, use UpdateCachePolicy.",
        ),
        in_use: (
            "CachePolicyInUse",
            "Cannot delete the cache policy because it is attached to one or more cache behaviors.",
        ),
        referenced_by: "CachePolicyId",
        managed: managed::cache_policies,
    },
    Kind {
        key: ORIGIN_REQUEST_POLICY,
        object: "OriginRequestPolicy",
        config: "OriginRequestPolicyConfig",
        list: "OriginRequestPolicyList",
        uri: "origin-request-policy",
        not_found: (
            "NoSuchOriginRequestPolicy",
            "The origin request policy does not exist.",
        ),
        exists: (
            "OriginRequestPolicyAlreadyExists",
            "An origin request policy with this name already exists. You must provide a unique name. To modify an existing origin request policy, use UpdateOriginRequestPolicy.",
        ),
        in_use: (
            "OriginRequestPolicyInUse",
            "Cannot delete the origin request policy because it is attached to one or more cache behaviors.",
        ),
        referenced_by: "OriginRequestPolicyId",
        managed: managed::origin_request_policies,
    },
    Kind {
        key: RESPONSE_HEADERS_POLICY,
        object: "ResponseHeadersPolicy",
        config: "ResponseHeadersPolicyConfig",
        list: "ResponseHeadersPolicyList",
        uri: "response-headers-policy",
        not_found: (
            "NoSuchResponseHeadersPolicy",
            "The response headers policy does not exist.",
        ),
        exists: (
            "ResponseHeadersPolicyAlreadyExists",
            "A response headers policy with this name already exists. You must provide a unique name. To modify an existing response headers policy, use UpdateResponseHeadersPolicy.",
        ),
        in_use: (
            "ResponseHeadersPolicyInUse",
            "Cannot delete the response headers policy because it is attached to one or more cache behaviors.",
        ),
        referenced_by: "ResponseHeadersPolicyId",
        managed: managed::response_headers_policies,
    },
];

pub(crate) static ORIGIN_ACCESS_CONTROL: Kind = Kind {
    key: OAC,
    object: "OriginAccessControl",
    config: "OriginAccessControlConfig",
    list: "OriginAccessControlList",
    uri: "origin-access-control",
    not_found: (
        "NoSuchOriginAccessControl",
        "The origin access control does not exist.",
    ),
    exists: (
        "OriginAccessControlAlreadyExists",
        "An origin access control with the same name already exists.",
    ),
    in_use: (
        "OriginAccessControlInUse",
        "Cannot delete the origin access control because it's in use by one or more distributions.",
    ),
    referenced_by: "OriginAccessControlId",
    managed: no_managed,
};

pub(crate) static ORIGIN_ACCESS_IDENTITY: Kind = Kind {
    key: OAI,
    object: "CloudFrontOriginAccessIdentity",
    config: "CloudFrontOriginAccessIdentityConfig",
    list: "CloudFrontOriginAccessIdentityList",
    uri: "origin-access-identity/cloudfront",
    not_found: (
        "NoSuchCloudFrontOriginAccessIdentity",
        "The specified origin access identity does not exist.",
    ),
    exists: (
        "CloudFrontOriginAccessIdentityAlreadyExists",
        "If the CallerReference is a value you already sent in a previous request to create an identity but the content of the CloudFrontOriginAccessIdentityConfig is different from the original request, CloudFront returns a CloudFrontOriginAccessIdentityAlreadyExists error.",
    ),
    in_use: (
        "CloudFrontOriginAccessIdentityInUse",
        "The Origin Access Identity specified is already in use.",
    ),
    referenced_by: "OriginAccessIdentity",
    managed: no_managed,
};

impl CloudFrontService {
    fn policy_exists(&self, s: &State, kind: &Kind, id: &str) -> bool {
        (kind.managed)().iter().any(|(m, _)| *m == id) || s.configured(kind.key).any(|c| c.id == id)
    }

    fn object_json(&self, kind: &Kind, c: &Configured) -> Value {
        let mut o = json!({"Id": c.id, kind.config: c.config});
        if kind.key == OAI {
            o["S3CanonicalUserId"] = json!(c.canonical_user);
        } else if kind.key != OAC {
            o["LastModifiedTime"] = json!(c.last_modified);
        }
        o
    }

    fn configured_answer(&self, kind: &Kind, c: &Configured) -> Value {
        json!({
            kind.object: self.object_json(kind, c),
            "ETag": c.etag,
            "Location": format!("https://cloudfront.amazonaws.com/2020-05-31/{}/{}", kind.uri, c.id),
        })
    }

    fn managed_record(kind: &Kind, id: &str) -> Option<Configured> {
        (kind.managed)()
            .into_iter()
            .find(|(m, _)| *m == id)
            .map(|(m, config)| Configured {
                id: m.to_string(),
                etag: "E23ZP02F085DFQ".into(),
                last_modified: "2020-06-03T00:00:00.000Z".into(),
                config,
                canonical_user: None,
            })
    }

    /// Whether a distribution references `id` through `kind`.
    fn in_use(s: &State, kind: &Kind, id: &str) -> bool {
        s.distributions.values().any(|d| match kind.key {
            OAC => items(d.config.get("Origins"))
                .iter()
                .any(|o| text(o, "OriginAccessControlId") == Some(id)),
            OAI => items(d.config.get("Origins")).iter().any(|o| {
                o.pointer("/S3OriginConfig/OriginAccessIdentity")
                    .and_then(Value::as_str)
                    == Some(&format!("origin-access-identity/cloudfront/{id}"))
            }),
            _ => behaviors(&d.config)
                .iter()
                .any(|b| text(b, kind.referenced_by) == Some(id)),
        })
    }

    fn check_configured(kind: &Kind, cfg: &Value) -> Result<(), AwsError> {
        check_quantities(cfg)?;
        let need: &[&str] = match kind.key {
            OAC => &[
                "Name",
                "SigningProtocol",
                "SigningBehavior",
                "OriginAccessControlOriginType",
            ],
            OAI => &["CallerReference", "Comment"],
            CACHE_POLICY => &["Name", "MinTTL"],
            ORIGIN_REQUEST_POLICY => &[
                "Name",
                "HeadersConfig",
                "CookiesConfig",
                "QueryStringsConfig",
            ],
            _ => &["Name"],
        };
        for k in need {
            required(cfg, k)?;
        }
        if kind.key == OAC {
            if text(cfg, "SigningProtocol") != Some("sigv4") {
                return Err(invalid("The parameter SigningProtocol must be sigv4."));
            }
            if !matches!(
                text(cfg, "SigningBehavior"),
                Some("never" | "always" | "no-override")
            ) {
                return Err(invalid(
                    "The parameter SigningBehavior must be never, always or no-override.",
                ));
            }
            if !matches!(
                text(cfg, "OriginAccessControlOriginType"),
                Some("s3" | "mediastore" | "mediapackagev2" | "lambda")
            ) {
                return Err(invalid(
                    "The parameter OriginAccessControlOriginType is not valid.",
                ));
            }
        }
        if kind.key == CACHE_POLICY {
            let ttl = |k: &str| cfg.get(k).and_then(Value::as_i64);
            let (min, def, max) = (
                ttl("MinTTL").unwrap_or(0),
                ttl("DefaultTTL").unwrap_or(86400),
                ttl("MaxTTL").unwrap_or(31536000),
            );
            if min > def || def > max || min < 0 {
                return Err(error(
                    400,
                    "InvalidTTLOrder",
                    "The TTL order specified in CacheBehavior is not valid.",
                ));
            }
        }
        if let Some(name) = text(cfg, "Name")
            && (name.is_empty()
                || name.len() > 128
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            && kind.key != OAC
        {
            return Err(invalid(format!(
                "The parameter Name '{name}' is not valid: use 1 to 128 letters, digits, '-' and '_'."
            )));
        }
        Ok(())
    }

    pub(crate) fn create_configured(&self, kind: &Kind, input: &Value) -> Result<Value, AwsError> {
        let mut cfg = required(input, kind.config)?.clone();
        Self::check_configured(kind, &cfg)?;
        if kind.key == CACHE_POLICY {
            for (k, d) in [("DefaultTTL", 86400), ("MaxTTL", 31536000)] {
                if cfg.get(k).is_none() {
                    cfg[k] = json!(d);
                }
            }
        }
        self.mutate(|s| {
            if kind.key == OAI {
                if let Some(c) = s
                    .configured(OAI)
                    .find(|c| c.config["CallerReference"] == cfg["CallerReference"])
                {
                    if c.config == cfg {
                        return Ok(self.configured_answer(kind, c));
                    }
                    return Err(error(409, kind.exists.0, kind.exists.1));
                }
            } else if s
                .configured(kind.key)
                .any(|c| c.config["Name"] == cfg["Name"])
                || (kind.managed)()
                    .iter()
                    .any(|(_, m)| m["Name"] == cfg["Name"])
            {
                return Err(error(409, kind.exists.0, kind.exists.1));
            }
            let id = if kind.key == OAI || kind.key == OAC {
                new_id()
            } else {
                uuid::Uuid::new_v4().to_string()
            };
            let c = Configured {
                id: id.clone(),
                etag: new_id(),
                last_modified: now(),
                config: cfg,
                canonical_user: (kind.key == OAI).then(|| {
                    let a = uuid::Uuid::new_v4().simple().to_string();
                    let b = uuid::Uuid::new_v4().simple().to_string();
                    format!("{a}{b}")
                }),
            };
            let out = self.configured_answer(kind, &c);
            s.configured_mut(kind.key).insert(id.clone(), c);
            s.touch(kind.key, &id);
            Ok(out)
        })
    }

    fn find_configured(&self, s: &State, kind: &Kind, id: &str) -> Result<Configured, AwsError> {
        s.configured
            .get(kind.key)
            .and_then(|m| m.get(id))
            .cloned()
            .or_else(|| Self::managed_record(kind, id))
            .ok_or_else(|| error(404, kind.not_found.0, kind.not_found.1))
    }

    pub(crate) fn get_configured(&self, kind: &Kind, id: &str) -> Result<Value, AwsError> {
        let c = self.read(|s| self.find_configured(s, kind, id))?;
        Ok(json!({kind.object: self.object_json(kind, &c), "ETag": c.etag}))
    }

    pub(crate) fn get_configured_config(&self, kind: &Kind, id: &str) -> Result<Value, AwsError> {
        let c = self.read(|s| self.find_configured(s, kind, id))?;
        Ok(json!({kind.config: c.config, "ETag": c.etag}))
    }

    pub(crate) fn update_configured(&self, kind: &Kind, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "Id").unwrap_or("");
        let mut cfg = required(input, kind.config)?.clone();
        Self::check_configured(kind, &cfg)?;
        self.mutate(|s| {
            let c = self.find_configured(s, kind, id)?;
            if Self::managed_record(kind, id).is_some() {
                return Err(error(
                    400,
                    "IllegalUpdate",
                    format!(
                        "The {} is managed by AWS and cannot be updated.",
                        kind.object
                    ),
                ));
            }
            if_match(input, &c.etag)?;
            if kind.key == OAI && cfg["CallerReference"] != c.config["CallerReference"] {
                return Err(error(
                    400,
                    "IllegalUpdate",
                    "Origin and CallerReference cannot be updated.",
                ));
            }
            if kind.key != OAI
                && s.configured(kind.key)
                    .any(|o| o.id != id && o.config["Name"] == cfg["Name"])
            {
                return Err(error(409, kind.exists.0, kind.exists.1));
            }
            if kind.key == CACHE_POLICY {
                for (k, d) in [("DefaultTTL", 86400), ("MaxTTL", 31536000)] {
                    if cfg.get(k).is_none() {
                        cfg[k] = json!(d);
                    }
                }
            }
            let c = s
                .configured_mut(kind.key)
                .get_mut(id)
                .ok_or_else(|| error(404, kind.not_found.0, kind.not_found.1))?;
            c.config = cfg;
            c.etag = new_id();
            c.last_modified = now();
            let c = c.clone();
            s.touch(kind.key, id);
            Ok(json!({kind.object: self.object_json(kind, &c), "ETag": c.etag}))
        })
    }

    pub(crate) fn delete_configured(&self, kind: &Kind, input: &Value) -> Result<(), AwsError> {
        let id = text(input, "Id").unwrap_or("");
        self.mutate(|s| {
            let c = self.find_configured(s, kind, id)?;
            if Self::managed_record(kind, id).is_some() {
                return Err(error(
                    400,
                    "IllegalDelete",
                    format!(
                        "The {} is managed by AWS and cannot be deleted.",
                        kind.object
                    ),
                ));
            }
            if_match(input, &c.etag)?;
            if Self::in_use(s, kind, id) {
                return Err(error(409, kind.in_use.0, kind.in_use.1));
            }
            s.configured_mut(kind.key).remove(id);
            s.touch(kind.key, id);
            Ok(())
        })
    }

    pub(crate) fn list_configured(&self, kind: &Kind, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let marker = text(input, "Marker").filter(|m| !m.is_empty());
        let filter = text(input, "Type");
        if let Some(t) = filter
            && t != "managed"
            && t != "custom"
        {
            return Err(invalid(format!(
                "The value '{t}' of Type is not valid: use managed or custom."
            )));
        }
        let all = self.read(|s| {
            let mut all: Vec<(String, Value)> = Vec::new();
            let is_policy = kind.key != OAC && kind.key != OAI;
            if filter != Some("custom") {
                for (id, _) in (kind.managed)() {
                    if let Some(c) = Self::managed_record(kind, id) {
                        all.push((format!("0{id}"), json!({"Type": "managed", kind.object: self.object_json(kind, &c)})));
                    }
                }
            }
            if filter != Some("managed") {
                for c in s.configured(kind.key) {
                    let item = if is_policy {
                        json!({"Type": "custom", kind.object: self.object_json(kind, c)})
                    } else if kind.key == OAI {
                        json!({"Id": c.id, "S3CanonicalUserId": c.canonical_user, "Comment": c.config["Comment"]})
                    } else {
                        let mut o = c.config.clone();
                        o["Id"] = json!(c.id);
                        if o.get("Description").is_none() {
                            o["Description"] = json!("");
                        }
                        o
                    };
                    all.push((format!("1{}", c.id), item));
                }
            }
            all
        });
        let (items, next) = page(all, marker, max);
        let mut l = list_answer(items, next, marker, max);
        if kind.key != OAC && kind.key != OAI {
            l.as_object_mut().map(|m| {
                m.remove("Marker");
                m.remove("IsTruncated")
            });
        }
        Ok(json!({kind.list: l}))
    }

    // ----- functions -----

    fn function_summary(&self, f: &Function, stage: &str) -> Option<Value> {
        let st = if stage == "LIVE" {
            f.live.as_ref()?
        } else {
            &f.development
        };
        let status = if f.live.is_none() {
            "UNPUBLISHED"
        } else if self.read(|s| Self::function_associated(s, &self.function_arn(&f.name))) {
            "DEPLOYED"
        } else {
            "UNASSOCIATED"
        };
        Some(json!({
            "Name": f.name,
            "Status": status,
            "FunctionConfig": st.config,
            "FunctionMetadata": {
                "FunctionARN": self.function_arn(&f.name),
                "Stage": stage,
                "CreatedTime": f.created,
                "LastModifiedTime": st.last_modified,
            },
        }))
    }

    fn function_associated(s: &State, arn: &str) -> bool {
        s.distributions.values().any(|d| {
            behaviors(&d.config).iter().any(|b| {
                items(b.get("FunctionAssociations"))
                    .iter()
                    .any(|a| text(a, "FunctionARN") == Some(arn))
            })
        })
    }

    fn check_function(input: &Value) -> Result<(Value, String), AwsError> {
        let cfg = required(input, "FunctionConfig")?.clone();
        if cfg.get("Comment").is_none() {
            return Err(invalid("The parameter Comment is required."));
        }
        match text(&cfg, "Runtime") {
            Some("cloudfront-js-1.0" | "cloudfront-js-2.0") => {}
            _ => {
                return Err(invalid(
                    "The parameter Runtime must be cloudfront-js-1.0 or cloudfront-js-2.0.",
                ));
            }
        }
        let code = text(input, "FunctionCode")
            .ok_or_else(|| invalid("The parameter FunctionCode is required."))?;
        let bytes = B64
            .decode(code)
            .map_err(|_| invalid("The parameter FunctionCode is not valid base64."))?;
        if bytes.is_empty() {
            return Err(invalid("The parameter FunctionCode must not be empty."));
        }
        if bytes.len() > 10240 {
            return Err(error(
                413,
                "FunctionSizeLimitExceeded",
                "The function is too large. For more information, see Quotas (formerly known as limits) in the Amazon CloudFront Developer Guide.",
            ));
        }
        Ok((cfg, code.to_string()))
    }

    pub fn create_function(&self, input: &Value) -> Result<Value, AwsError> {
        let name = text(input, "Name").unwrap_or("").to_string();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(format!(
                "The parameter Name '{name}' is not valid: use 1 to 64 letters, digits, '-' and '_'."
            )));
        }
        let (config, code) = Self::check_function(input)?;
        let tags = tags_in(input.get("Tags"))?;
        let f = self.mutate(|s| {
            if s.functions.contains_key(&name) {
                return Err(error(
                    409,
                    "FunctionAlreadyExists",
                    "A function with the same name already exists in this account.",
                ));
            }
            let t = now();
            let f = Function {
                name: name.clone(),
                created: t.clone(),
                development: FunctionStage {
                    config,
                    code,
                    etag: new_id(),
                    last_modified: t,
                },
                live: None,
                tags,
            };
            s.functions.insert(name.clone(), f.clone());
            s.touch(FUNCTION, &name);
            Ok(f)
        })?;
        Ok(json!({
            "FunctionSummary": self.function_summary(&f, "DEVELOPMENT"),
            "ETag": f.development.etag,
            "Location": format!("https://cloudfront.amazonaws.com/2020-05-31/function/{}", self.function_arn(&name)),
        }))
    }

    fn stage_of(input: &Value) -> Result<&str, AwsError> {
        match text(input, "Stage").unwrap_or("DEVELOPMENT") {
            s @ ("DEVELOPMENT" | "LIVE") => Ok(s),
            s => Err(invalid(format!(
                "The value '{s}' of Stage is not valid: use DEVELOPMENT or LIVE."
            ))),
        }
    }

    pub fn describe_function(&self, input: &Value) -> Result<Value, AwsError> {
        let name = text(input, "Name").unwrap_or("");
        let stage = Self::stage_of(input)?;
        let f = self
            .read(|s| s.functions.get(name).cloned())
            .ok_or_else(no_function)?;
        let summary = self.function_summary(&f, stage).ok_or_else(no_function)?;
        let etag = if stage == "LIVE" {
            f.live.as_ref().map(|l| l.etag.clone())
        } else {
            Some(f.development.etag.clone())
        };
        Ok(json!({"FunctionSummary": summary, "ETag": etag}))
    }

    /// GetFunction: the stage's code as bytes, with its ETag.
    pub fn get_function(&self, input: &Value) -> Result<Value, AwsError> {
        let name = text(input, "Name").unwrap_or("");
        let stage = Self::stage_of(input)?;
        let f = self
            .read(|s| s.functions.get(name).cloned())
            .ok_or_else(no_function)?;
        let st = if stage == "LIVE" {
            f.live.ok_or_else(no_function)?
        } else {
            f.development
        };
        let code = B64.decode(&st.code).unwrap_or_default();
        Ok(json!({
            "FunctionCode": String::from_utf8_lossy(&code),
            "ETag": st.etag,
            "ContentType": "application/octet-stream",
        }))
    }

    pub fn update_function(&self, input: &Value) -> Result<Value, AwsError> {
        let name = text(input, "Name").unwrap_or("").to_string();
        let (config, code) = Self::check_function(input)?;
        let f = self.mutate(|s| {
            let f = s.functions.get_mut(&name).ok_or_else(no_function)?;
            if_match(input, &f.development.etag)?;
            f.development = FunctionStage {
                config,
                code,
                etag: new_id(),
                last_modified: now(),
            };
            let f = f.clone();
            s.touch(FUNCTION, &name);
            Ok(f)
        })?;
        Ok(
            json!({"FunctionSummary": self.function_summary(&f, "DEVELOPMENT"), "ETag": f.development.etag}),
        )
    }

    pub fn publish_function(&self, input: &Value) -> Result<Value, AwsError> {
        let name = text(input, "Name").unwrap_or("").to_string();
        let f = self.mutate(|s| {
            let f = s.functions.get_mut(&name).ok_or_else(no_function)?;
            if_match(input, &f.development.etag)?;
            let mut live = f.development.clone();
            live.etag = new_id();
            live.last_modified = now();
            f.live = Some(live);
            let f = f.clone();
            s.touch(FUNCTION, &name);
            Ok(f)
        })?;
        Ok(json!({"FunctionSummary": self.function_summary(&f, "LIVE")}))
    }

    pub fn delete_function(&self, input: &Value) -> Result<(), AwsError> {
        let name = text(input, "Name").unwrap_or("").to_string();
        let arn = self.function_arn(&name);
        self.mutate(|s| {
            let f = s.functions.get(&name).ok_or_else(no_function)?;
            if_match(input, &f.development.etag)?;
            if Self::function_associated(s, &arn) {
                return Err(error(
                    409,
                    "FunctionInUse",
                    "Cannot delete function, it's associated with one or more cache behaviors.",
                ));
            }
            s.functions.remove(&name);
            s.touch(FUNCTION, &name);
            Ok(())
        })
    }

    pub fn list_functions(&self, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let marker = text(input, "Marker").filter(|m| !m.is_empty());
        let stage = text(input, "Stage");
        if let Some(s) = stage
            && s != "LIVE"
            && s != "DEVELOPMENT"
        {
            return Err(invalid(format!(
                "The value '{s}' of Stage is not valid: use DEVELOPMENT or LIVE."
            )));
        }
        let funcs: Vec<Function> = self.read(|s| s.functions.values().cloned().collect());
        let mut all = Vec::new();
        for f in &funcs {
            for st in ["DEVELOPMENT", "LIVE"] {
                if stage.is_none_or(|x| x == st)
                    && let Some(summary) = self.function_summary(f, st)
                {
                    all.push((format!("{}/{st}", f.name), summary));
                }
            }
        }
        let (items, next) = page(all, marker, max);
        let mut l = json!({"MaxItems": max, "Quantity": items.len()});
        if !items.is_empty() {
            l["Items"] = json!(items);
        }
        if let Some(n) = next {
            l["NextMarker"] = json!(n);
        }
        Ok(json!({"FunctionList": l}))
    }

    /// A function's ETag for a stage, as providers pass If-Match.
    pub fn function_etag(&self, name: &str) -> Result<String, AwsError> {
        self.read(|s| s.functions.get(name).map(|f| f.development.etag.clone()))
            .ok_or_else(no_function)
    }
}

/// What a CreateDistributionWithTags body holds.
pub(crate) fn config_with_tags(input: &Value) -> Result<(Value, Tags), AwsError> {
    let body = required(input, "DistributionConfigWithTags")?;
    Ok((
        required(body, "DistributionConfig")?.clone(),
        tags_in(body.get("Tags"))?,
    ))
}

pub(crate) fn object_or_empty(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Object(Map::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_domains_and_quantities() {
        let id = new_id();
        assert!(
            id.starts_with('E')
                && id.len() == 14
                && id
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        );
        let d = new_domain();
        assert!(
            d.starts_with('d')
                && d.ends_with(".cloudfront.net")
                && d.len() == 14 + ".cloudfront.net".len()
        );
        assert!(check_quantities(&json!({"A": {"Quantity": 2, "Items": [1, 2]}})).is_ok());
        assert_eq!(
            check_quantities(&json!({"A": [{"Quantity": 1}]}))
                .unwrap_err()
                .code,
            "InconsistentQuantities"
        );
    }

    #[test]
    fn if_match_is_required_and_checked() {
        assert_eq!(
            if_match(&json!({}), "E1").unwrap_err().code,
            "InvalidIfMatchVersion"
        );
        let e = if_match(&json!({"IfMatch": "E2"}), "E1").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.status.as_u16()),
            ("PreconditionFailed", 412)
        );
        assert!(if_match(&json!({"IfMatch": "E1"}), "E1").is_ok());
    }

    #[test]
    fn normalize_fills_aws_defaults() {
        let mut c = json!({"CallerReference": "r", "Comment": "", "Enabled": true,
            "Origins": {"Quantity": 1, "Items": [{"Id": "o", "DomainName": "x.example", "CustomOriginConfig": {"OriginProtocolPolicy": "match-viewer"}}]},
            "DefaultCacheBehavior": {"TargetOriginId": "o", "ViewerProtocolPolicy": "allow-all"}});
        normalize(&mut c);
        assert_eq!(c["ViewerCertificate"]["CloudFrontDefaultCertificate"], true);
        assert_eq!(c["DefaultCacheBehavior"]["AllowedMethods"]["Quantity"], 2);
        assert_eq!(
            c["Origins"]["Items"][0]["CustomOriginConfig"]["HTTPSPort"],
            443
        );
        assert!(check_quantities(&c).is_ok());
    }
}
