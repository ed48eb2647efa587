//! Versions (immutable snapshots of `$LATEST`) and aliases (named pointers to a version, with
//! optional weighted routing to a second one).

use super::Lambda;
use super::model::{Alias, Function, Resolved};
use super::names::parse_function;
use super::ops::{conflict, function_not_found, invalid_parameter, new_revision, validation};
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

/// Publishes `$LATEST` into `f` and returns the version number. Publishing an unchanged
/// `$LATEST` returns the version that already has it, as AWS does.
pub(super) fn publish_into(f: &mut Function, description: Option<&str>) -> String {
    if let Some((n, v)) = f.versions.iter().next_back() {
        let mut latest = f.latest.clone();
        latest.description = v.description.clone();
        latest.last_modified = v.last_modified.clone();
        latest.revision_id = v.revision_id.clone();
        if &latest == v {
            return n.to_string();
        }
    }
    let n = f.next_version;
    let mut snapshot = f.latest.clone();
    if let Some(d) = description {
        snapshot.description = d.to_string();
    }
    snapshot.revision_id = new_revision();
    f.versions.insert(n, snapshot);
    f.next_version = n + 1;
    n.to_string()
}

fn alias_not_found(region: &str, account: &str, name: &str, alias: &str) -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        format!(
            "Alias not found: {}",
            super::names::function_arn(region, account, name, Some(alias))
        ),
    )
}

fn check_alias_name(name: &str) -> Result<(), AwsError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.bytes().all(|b| b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(validation(
            "name",
            name,
            "Member must satisfy regular expression pattern: (?!^[0-9]+$)([a-zA-Z0-9-_]+)",
        ))
    }
}

fn check_version_exists(
    f: &Function,
    region: &str,
    account: &str,
    version: &str,
) -> Result<(), AwsError> {
    if version == "$LATEST" {
        return Ok(());
    }
    let exists = version
        .parse::<u64>()
        .ok()
        .is_some_and(|n| f.versions.contains_key(&n));
    if exists {
        Ok(())
    } else {
        Err(function_not_found(region, account, &f.name, Some(version)))
    }
}

fn check_routing(
    f: &Function,
    region: &str,
    account: &str,
    routing: &BTreeMap<String, f64>,
) -> Result<(), AwsError> {
    for (v, w) in routing {
        check_version_exists(f, region, account, v)?;
        if !(0.0..=1.0).contains(w) {
            return Err(invalid_parameter(format!(
                "Invalid weight {w} for version {v}: must be between 0.0 and 1.0"
            )));
        }
    }
    Ok(())
}

impl Lambda {
    /// PublishVersion.
    pub fn publish_version(
        &self,
        region: &str,
        name_or_arn: &str,
        description: Option<&str>,
        code_sha256: Option<&str>,
        revision_id: Option<&str>,
    ) -> Result<(Function, String), AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        self.mutate(region, &name, |f| {
            if let Some(sha) = code_sha256
                && sha != f.latest.code_sha256
            {
                return Err(invalid_parameter(format!(
                    "CodeSHA256 ({sha}) is different from current CodeSHA256 in $LATEST ({}). Please try again with the CodeSHA256 in $LATEST.",
                    f.latest.code_sha256
                )));
            }
            if let Some(r) = revision_id
                && r != f.latest.revision_id
            {
                return Err(AwsError::new(
                    http::StatusCode::PRECONDITION_FAILED,
                    "PreconditionFailedException",
                    "The Revision Id provided does not match the latest Revision Id. Call the GetFunction/GetAlias API to retrieve the latest Revision Id",
                ));
            }
            let v = publish_into(f, description);
            Ok((f.clone(), v))
        })
    }

    /// Resolves a function and qualifier (`$LATEST`, a version number or an alias) to the
    /// version it designates.
    pub fn resolve(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(Function, Resolved), AwsError> {
        let (name, q) = parse_function(name_or_arn)?;
        let qualifier = qualifier.map(str::to_string).or(q);
        let f = self.function(region, &name)?;
        let account = &self.account_id;
        let (version, alias) = match qualifier.as_deref() {
            None | Some("$LATEST") => ("$LATEST".to_string(), None),
            Some(q) if q.bytes().all(|b| b.is_ascii_digit()) => (q.to_string(), None),
            Some(q) => {
                let a = f
                    .aliases
                    .get(q)
                    .ok_or_else(|| function_not_found(region, account, &name, Some(q)))?;
                (pick_version(a), Some(q.to_string()))
            }
        };
        let config = if version == "$LATEST" {
            f.latest.clone()
        } else {
            version
                .parse::<u64>()
                .ok()
                .and_then(|n| f.versions.get(&n))
                .cloned()
                .ok_or_else(|| function_not_found(region, account, &name, Some(&version)))?
        };
        let resolved = Resolved {
            name,
            version,
            config,
            alias,
        };
        Ok((f, resolved))
    }

    pub fn create_alias(
        &self,
        region: &str,
        name_or_arn: &str,
        alias: &str,
        version: &str,
        description: Option<&str>,
        routing: BTreeMap<String, f64>,
    ) -> Result<Alias, AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        check_alias_name(alias)?;
        let account = self.account_id.clone();
        self.mutate(region, &name, |f| {
            if f.aliases.contains_key(alias) {
                return Err(conflict(format!(
                    "Alias already exists: {}",
                    super::names::function_arn(region, &account, &name, Some(alias))
                )));
            }
            check_version_exists(f, region, &account, version)?;
            check_routing(f, region, &account, &routing)?;
            let a = Alias {
                name: alias.to_string(),
                function_version: version.to_string(),
                description: description.unwrap_or_default().to_string(),
                routing,
                revision_id: new_revision(),
            };
            f.aliases.insert(alias.to_string(), a.clone());
            Ok(a)
        })
    }

    pub fn get_alias(
        &self,
        region: &str,
        name_or_arn: &str,
        alias: &str,
    ) -> Result<Alias, AwsError> {
        let f = self.function(region, name_or_arn)?;
        f.aliases
            .get(alias)
            .cloned()
            .ok_or_else(|| alias_not_found(region, &self.account_id, &f.name, alias))
    }

    pub fn list_aliases(&self, region: &str, name_or_arn: &str) -> Result<Vec<Alias>, AwsError> {
        Ok(self
            .function(region, name_or_arn)?
            .aliases
            .into_values()
            .collect())
    }

    #[allow(clippy::too_many_arguments)]
    pub fn update_alias(
        &self,
        region: &str,
        name_or_arn: &str,
        alias: &str,
        version: Option<&str>,
        description: Option<&str>,
        routing: Option<BTreeMap<String, f64>>,
        revision_id: Option<&str>,
    ) -> Result<Alias, AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        let account = self.account_id.clone();
        self.mutate(region, &name, |f| {
            let mut a = f
                .aliases
                .get(alias)
                .cloned()
                .ok_or_else(|| alias_not_found(region, &account, &name, alias))?;
            if let Some(r) = revision_id
                && r != a.revision_id
            {
                return Err(AwsError::new(
                    http::StatusCode::PRECONDITION_FAILED,
                    "PreconditionFailedException",
                    "The Revision Id provided does not match the latest Revision Id. Call the GetFunction/GetAlias API to retrieve the latest Revision Id",
                ));
            }
            if let Some(v) = version {
                check_version_exists(f, region, &account, v)?;
                a.function_version = v.to_string();
            }
            if let Some(d) = description {
                a.description = d.to_string();
            }
            if let Some(r) = routing {
                check_routing(f, region, &account, &r)?;
                a.routing = r;
            }
            a.revision_id = new_revision();
            f.aliases.insert(alias.to_string(), a.clone());
            Ok(a)
        })
    }

    pub fn delete_alias(
        &self,
        region: &str,
        name_or_arn: &str,
        alias: &str,
    ) -> Result<(), AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        self.mutate(region, &name, |f| {
            f.aliases.remove(alias);
            f.urls.remove(alias);
            Ok(())
        })
    }
}

/// The version an alias sends one invocation to, honouring its routing weights.
fn pick_version(a: &Alias) -> String {
    use rand::Rng;
    let mut roll: f64 = rand::rng().random();
    for (v, w) in &a.routing {
        if roll < *w {
            return v.clone();
        }
        roll -= w;
    }
    a.function_version.clone()
}
