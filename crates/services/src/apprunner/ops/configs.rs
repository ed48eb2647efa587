//! Auto scaling and observability configurations: named, revisioned records (`name/revision/id`
//! in the ARN). Creating a name again adds the next revision; the highest active revision is
//! `Latest`. Every region has App Runner's `DefaultConfiguration` revision 1.

use super::{
    AppRunnerService, body, check_pattern, check_range, hex32, internal, invalid, not_found, now,
    page, put, tags_in, with_token,
};
use crate::apprunner::state::{self, ConfigKind, Doc, Region, Versioned};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub const DEFAULT_AUTO_SCALING: &str =
    "autoscalingconfiguration/DefaultConfiguration/1/00000000000000000000000000000001";

/// When the built-in configuration reports it was made (it predates every account's use).
const BUILTIN_CREATED: f64 = 1_620_000_000.0;

const NAME_PATTERN: &str = r"[A-Za-z0-9][A-Za-z0-9\-_]{3,31}";

/// Puts App Runner's DefaultConfiguration in a region that has not got it yet (it is written
/// to the store only once something changes it).
pub fn ensure_builtin(r: &mut Region, arn: &str) {
    if !r.configs.contains_key(arn) {
        r.configs.insert(
            arn.to_string(),
            Versioned {
                kind: ConfigKind::AutoScaling,
                name: "DefaultConfiguration".into(),
                revision: 1,
                created: BUILTIN_CREATED,
                deleted_at: None,
                settings: json!({"MaxConcurrency": 100, "MinSize": 1, "MaxSize": 25}),
                tags: vec![],
            },
        );
    }
}

impl ConfigKind {
    fn prefix(self) -> &'static str {
        match self {
            ConfigKind::AutoScaling => "autoscalingconfiguration",
            ConfigKind::Observability => "observabilityconfiguration",
        }
    }

    /// The API's member-name stem (`AutoScalingConfiguration`).
    fn member(self) -> &'static str {
        match self {
            ConfigKind::AutoScaling => "AutoScalingConfiguration",
            ConfigKind::Observability => "ObservabilityConfiguration",
        }
    }

    fn words(self) -> &'static str {
        match self {
            ConfigKind::AutoScaling => "auto scaling configuration",
            ConfigKind::Observability => "observability configuration",
        }
    }
}

/// Whether `v` is the highest active revision of its name.
fn is_latest(r: &Region, v: &Versioned) -> bool {
    v.deleted_at.is_none()
        && !r.configs.values().any(|o| {
            o.kind == v.kind
                && o.name == v.name
                && o.deleted_at.is_none()
                && o.revision > v.revision
        })
}

impl AppRunnerService {
    /// The ARN of the active configuration a reference names: a whole ARN, or one ending at
    /// the name (its latest revision) or at the revision, as App Runner accepts (Copilot's
    /// `autoscalingconfiguration/high-availability/3`).
    pub(super) fn resolve_config(
        &self,
        r: &Region,
        region: &str,
        kind: ConfigKind,
        reference: &str,
    ) -> Option<String> {
        let prefix = self.arn(region, &format!("{}/", kind.prefix()));
        let rest = reference.strip_prefix(&prefix)?;
        let mut parts = rest.split('/');
        let name = parts.next()?;
        let revision: Option<i64> = match parts.next() {
            Some(p) => Some(p.parse().ok()?),
            None => None,
        };
        let id = parts.next();
        if parts.next().is_some() {
            return None;
        }
        r.configs
            .iter()
            .filter(|(arn, v)| {
                v.kind == kind
                    && v.name == name
                    && v.deleted_at.is_none()
                    && revision.is_none_or(|n| v.revision == n)
                    && id.is_none_or(|id| arn.ends_with(&format!("/{id}")))
            })
            .max_by_key(|(_, v)| v.revision)
            .map(|(arn, _)| arn.clone())
    }

    fn config_json(&self, r: &Region, arn: &str, v: &Versioned) -> Value {
        let stem = v.kind.member();
        let mut m = Map::new();
        m.insert(format!("{stem}Arn"), json!(arn));
        m.insert(format!("{stem}Name"), json!(v.name));
        m.insert(format!("{stem}Revision"), json!(v.revision));
        m.insert("Latest".into(), json!(is_latest(r, v)));
        m.insert(
            "Status".into(),
            json!(if v.deleted_at.is_some() {
                "INACTIVE"
            } else {
                "ACTIVE"
            }),
        );
        if let Value::Object(s) = &v.settings {
            m.extend(s.clone());
        }
        m.insert("CreatedAt".into(), json!(v.created));
        put(&mut m, "DeletedAt", v.deleted_at.map(|d| json!(d)));
        if v.kind == ConfigKind::AutoScaling {
            m.insert(
                "HasAssociatedService".into(),
                json!(self.has_associated_service(r, arn)),
            );
            m.insert(
                "IsDefault".into(),
                json!(arn.ends_with(DEFAULT_AUTO_SCALING)),
            );
        }
        Value::Object(m)
    }

    fn has_associated_service(&self, r: &Region, arn: &str) -> bool {
        r.services
            .values()
            .any(|s| s.deleted_at.is_none() && s.auto_scaling_arn == arn)
    }

    /// The summary the service record and the List operation report.
    pub(super) fn config_summary(&self, r: &Region, arn: &str) -> Value {
        let Some(v) = r.configs.get(arn) else {
            return json!({"AutoScalingConfigurationArn": arn});
        };
        let full = self.config_json(r, arn, v);
        let keep: &[&str] = match v.kind {
            ConfigKind::AutoScaling => &[
                "AutoScalingConfigurationArn",
                "AutoScalingConfigurationName",
                "AutoScalingConfigurationRevision",
                "Status",
                "CreatedAt",
                "HasAssociatedService",
                "IsDefault",
            ],
            ConfigKind::Observability => &[
                "ObservabilityConfigurationArn",
                "ObservabilityConfigurationName",
                "ObservabilityConfigurationRevision",
            ],
        };
        Value::Object(
            keep.iter()
                .filter_map(|k| full.get(*k).map(|v| (k.to_string(), v.clone())))
                .collect(),
        )
    }

    pub fn create_config(
        &self,
        region: &str,
        kind: ConfigKind,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let stem = kind.member();
        let name = b.str(&format!("{stem}Name"))?;
        check_pattern(&format!("{stem}Name"), &name, NAME_PATTERN)?;
        let settings = match kind {
            ConfigKind::AutoScaling => {
                let concurrency = b.opt_i64("MaxConcurrency")?.unwrap_or(100);
                check_range("MaxConcurrency", concurrency, 1, 200)?;
                let min = b.opt_i64("MinSize")?.unwrap_or(1);
                check_range("MinSize", min, 1, 25)?;
                let max = b.opt_i64("MaxSize")?.unwrap_or(25);
                check_range("MaxSize", max, 1, i64::MAX)?;
                if min > max {
                    return Err(invalid(format!(
                        "MinSize ({min}) must not be greater than MaxSize ({max})"
                    )));
                }
                json!({"MaxConcurrency": concurrency, "MinSize": min, "MaxSize": max})
            }
            ConfigKind::Observability => match b.object("TraceConfiguration")? {
                Some(t) => {
                    let vendor = t.str("Vendor")?;
                    super::check_enum("TraceConfiguration.Vendor", &vendor, &["AWSXRAY"])?;
                    json!({"TraceConfiguration": {"Vendor": vendor}})
                }
                None => json!({}),
            },
        };
        let tags = tags_in(&b)?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let revision = r
            .configs
            .values()
            .filter(|v| v.kind == kind && v.name == name)
            .map(|v| v.revision)
            .max()
            .unwrap_or(0)
            + 1;
        let arn = self.arn(
            region,
            &format!("{}/{name}/{revision}/{}", kind.prefix(), hex32()),
        );
        let v = Versioned {
            kind,
            name,
            revision,
            created: now(),
            deleted_at: None,
            settings,
            tags,
        };
        self.store
            .write(|tx| state::save(tx, region, &arn, Doc::Config(&v)))
            .map_err(internal)?;
        r.configs.insert(arn.clone(), v);
        let out = self.config_json(r, &arn, &r.configs[&arn]);
        Ok(json!({ stem: out }))
    }

    /// The configuration an ARN (whole, or ending at the name or revision) names, active or
    /// not when the ARN is whole.
    fn find_config(
        &self,
        r: &Region,
        region: &str,
        kind: ConfigKind,
        reference: &str,
    ) -> Result<String, AwsError> {
        if r.configs.get(reference).is_some_and(|v| v.kind == kind) {
            return Ok(reference.to_string());
        }
        self.resolve_config(r, region, kind, reference)
            .ok_or_else(|| {
                not_found(format!(
                    "The {} with ARN {reference} does not exist",
                    kind.words()
                ))
            })
    }

    pub fn describe_config(
        &self,
        region: &str,
        kind: ConfigKind,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let stem = kind.member();
        let reference = b.str(&format!("{stem}Arn"))?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let arn = self.find_config(r, region, kind, &reference)?;
        Ok(json!({ stem: self.config_json(r, &arn, &r.configs[&arn]) }))
    }

    pub fn list_configs(
        &self,
        region: &str,
        kind: ConfigKind,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let stem = kind.member();
        let name = b.opt_str(&format!("{stem}Name"))?;
        let latest_only = b.bool("LatestOnly")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut arns: Vec<(&String, &Versioned)> = r
            .configs
            .iter()
            .filter(|(_, v)| {
                v.kind == kind
                    && v.deleted_at.is_none()
                    && name.as_ref().is_none_or(|n| &v.name == n)
                    && (!latest_only || is_latest(r, v))
            })
            .collect();
        arns.sort_by(|a, b| (&a.1.name, a.1.revision).cmp(&(&b.1.name, b.1.revision)));
        let arns: Vec<String> = arns.into_iter().map(|(a, _)| a.clone()).collect();
        let (items, token) = page(&b, &arns, 100)?;
        let list: Vec<Value> = items.iter().map(|a| self.config_summary(r, a)).collect();
        Ok(with_token(
            json!({ format!("{stem}SummaryList"): list }),
            token,
        ))
    }

    pub fn delete_config(
        &self,
        region: &str,
        kind: ConfigKind,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let stem = kind.member();
        let reference = b.str(&format!("{stem}Arn"))?;
        let all = kind == ConfigKind::AutoScaling && b.bool("DeleteAllRevisions")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let arn = self.find_config(r, region, kind, &reference)?;
        let target = r.configs[&arn].clone();
        if target.deleted_at.is_some() {
            return Err(not_found(format!(
                "The {} with ARN {reference} does not exist",
                kind.words()
            )));
        }
        let at = now();
        let doomed: Vec<String> = r
            .configs
            .iter()
            .filter(|(a, v)| {
                v.deleted_at.is_none()
                    && (**a == arn || (all && v.kind == kind && v.name == target.name))
            })
            .map(|(a, _)| a.clone())
            .collect();
        let mut changed = Vec::new();
        for a in &doomed {
            let mut v = r.configs[a].clone();
            v.deleted_at = Some(at);
            changed.push((a.clone(), v));
        }
        self.store
            .write(|tx| {
                for (a, v) in &changed {
                    state::save(tx, region, a, Doc::Config(v))?;
                }
                Ok(())
            })
            .map_err(internal)?;
        for (a, v) in changed {
            r.configs.insert(a, v);
        }
        Ok(json!({ stem: self.config_json(r, &arn, &r.configs[&arn]) }))
    }
}
