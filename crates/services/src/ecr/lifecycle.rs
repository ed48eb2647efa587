//! Applying a repository's lifecycle policy: rules in priority order, each selecting images by
//! tag status (`tagged` with `tagPrefixList` / `tagPatternList`, `untagged`, `any`) and expiring
//! those beyond `imageCountMoreThan` (the newest are kept) or pushed more than `sinceImagePushed`
//! days ago. As on AWS, an image a rule selects is never expired by a lower-priority rule.
//!
//! AWS evaluates policies some time after a push; cumulo applies them on every push and when a
//! policy is put, so the outcome is the same and visible at once.

use super::state::{Image, Repository};
use serde_json::Value;

const DAY_S: f64 = 86_400.0;

struct Rule {
    priority: i64,
    status: String,
    prefixes: Vec<String>,
    patterns: Vec<String>,
    count_more_than: Option<usize>,
    older_than_days: Option<f64>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The rules of a policy already validated by `check_lifecycle`; anything else yields none.
fn rules(text: &str) -> Vec<Rule> {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut out: Vec<Rule> = v
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let sel = r.get("selection")?;
            let number = sel.get("countNumber")?.as_i64()?;
            let count_type = sel.get("countType")?.as_str()?;
            Some(Rule {
                priority: r.get("rulePriority")?.as_i64()?,
                status: sel.get("tagStatus")?.as_str()?.to_string(),
                prefixes: strings(sel.get("tagPrefixList")),
                patterns: strings(sel.get("tagPatternList")),
                count_more_than: (count_type == "imageCountMoreThan").then_some(number as usize),
                older_than_days: (count_type == "sinceImagePushed").then_some(number as f64),
            })
        })
        .collect();
    out.sort_by_key(|r| r.priority);
    out
}

fn wildcard(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            text.starts_with(head)
                && (0..=text.len() - head.len())
                    .filter(|i| text.is_char_boundary(head.len() + i))
                    .any(|i| wildcard(rest, &text[head.len() + i..]))
        }
    }
}

impl Rule {
    fn selects(&self, i: &Image) -> bool {
        match self.status.as_str() {
            "untagged" => i.tags.is_empty(),
            "any" => true,
            _ => i.tags.iter().any(|t| {
                self.prefixes.iter().any(|p| t.starts_with(p.as_str()))
                    || self.patterns.iter().any(|p| wildcard(p, t))
            }),
        }
    }
}

/// Removes the images the repository's lifecycle policy expires at `now` (seconds); returns
/// how many.
pub fn apply(repo: &mut Repository, now: f64) -> usize {
    let Some(text) = repo.lifecycle_policy.as_deref() else {
        return 0;
    };
    let mut claimed = vec![false; repo.images.len()];
    let mut expired = vec![false; repo.images.len()];
    for rule in rules(text) {
        // Newest first, so imageCountMoreThan keeps the first N; images are stored in push
        // order, which breaks ties between pushes in the same millisecond.
        let mut selected: Vec<usize> = (0..repo.images.len())
            .filter(|&i| !claimed[i] && rule.selects(&repo.images[i]))
            .collect();
        selected.sort_by(|&a, &b| {
            repo.images[b]
                .pushed_at
                .total_cmp(&repo.images[a].pushed_at)
                .then(b.cmp(&a))
        });
        for (rank, &i) in selected.iter().enumerate() {
            claimed[i] = true;
            let too_many = rule.count_more_than.is_some_and(|n| rank >= n);
            let too_old = rule
                .older_than_days
                .is_some_and(|d| now - repo.images[i].pushed_at > d * DAY_S);
            if too_many || too_old {
                expired[i] = true;
            }
        }
    }
    let before = repo.images.len();
    let mut idx = 0;
    repo.images.retain(|_| {
        let keep = !expired[idx];
        idx += 1;
        keep
    });
    before - repo.images.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn image(n: u32, tags: &[&str], pushed_at: f64) -> Image {
        Image {
            digest: format!("sha256:{n}"),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            manifest: "{}".into(),
            media_type: "m".into(),
            artifact_media_type: None,
            pushed_at,
            size: 0,
        }
    }

    fn repo(policy: &str, images: Vec<Image>) -> Repository {
        Repository {
            name: "r".into(),
            created: 0.0,
            tag_mutability: "MUTABLE".into(),
            scan_on_push: false,
            encryption_type: "AES256".into(),
            kms_key: None,
            tags: BTreeMap::new(),
            policy: None,
            lifecycle_policy: Some(policy.into()),
            images,
        }
    }

    #[test]
    fn count_and_age_rules_with_priorities() {
        let policy = r#"{"rules": [
            {"rulePriority": 1, "selection": {"tagStatus": "tagged", "tagPrefixList": ["prod"], "countType": "imageCountMoreThan", "countNumber": 1}, "action": {"type": "expire"}},
            {"rulePriority": 2, "selection": {"tagStatus": "any", "countType": "sinceImagePushed", "countUnit": "days", "countNumber": 1}, "action": {"type": "expire"}}
        ]}"#;
        let now = 10.0 * DAY_S;
        let mut r = repo(
            policy,
            vec![
                image(1, &["prod-1"], 0.0),
                image(2, &["prod-2"], 1.0),
                image(3, &["dev"], 0.0),
                image(4, &[], now - 10.0),
            ],
        );
        assert_eq!(apply(&mut r, now), 2);
        let left: Vec<&str> = r.images.iter().map(|i| i.digest.as_str()).collect();
        // prod-2 is the newest prod image (kept; rule 2 cannot expire it though it is old);
        // dev is older than a day; the untagged one is recent.
        assert_eq!(left, ["sha256:2", "sha256:4"]);
        assert!(wildcard("v*-rc", "v1.2-rc"));
        assert!(!wildcard("v*-rc", "v1.2"));
    }
}
