//! Listing: ListObjects (v1 and v2) and ListObjectVersions, with S3's prefix / delimiter /
//! common-prefix / marker semantics. The pure [`list_keys`] is what both object listings use.

use super::state::ObjectMeta;
use super::{S3Service, errors};
use cumulo_wire::AwsError;
use std::ops::Bound;

/// A listing request, independent of v1/v2 naming (v2's continuation token and start-after
/// both become `marker`).
#[derive(Debug, Clone, Default)]
pub struct ListInput {
    pub prefix: String,
    pub delimiter: String,
    /// List keys strictly after this one.
    pub marker: String,
    pub max_keys: usize,
}

/// A page of keys and common prefixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing<T> {
    pub entries: Vec<T>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    /// The last key or common prefix returned: where the next page starts.
    pub next_marker: Option<String>,
}

pub type ListOutput = Listing<ObjectMeta>;

/// One page of ListObjectVersions: versions and delete markers in key order, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionsOutput {
    pub versions: Vec<(ObjectMeta, bool)>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    pub next_key_marker: Option<String>,
    pub next_version_id_marker: Option<String>,
}

/// Walks `items` (sorted by key) applying prefix, delimiter, marker and max-keys. Each common
/// prefix counts as one key towards max-keys and is never returned again on a later page.
pub fn list_keys<'a, T>(
    items: impl Iterator<Item = (&'a str, T)>,
    input: &ListInput,
) -> Listing<T> {
    let mut out = Listing {
        entries: Vec::new(),
        common_prefixes: Vec::new(),
        is_truncated: false,
        next_marker: None,
    };
    let mut count = 0;
    for (key, item) in items {
        if !key.starts_with(&input.prefix) {
            if key > input.prefix.as_str() {
                break;
            }
            continue;
        }
        if key <= input.marker.as_str() {
            continue;
        }
        if !input.delimiter.is_empty() {
            let rest = &key[input.prefix.len()..];
            if let Some(i) = rest.find(&input.delimiter) {
                let cp = &key[..input.prefix.len() + i + input.delimiter.len()];
                if cp <= input.marker.as_str()
                    || out.common_prefixes.last().is_some_and(|l| l == cp)
                {
                    continue;
                }
                if count == input.max_keys {
                    out.is_truncated = true;
                    break;
                }
                out.common_prefixes.push(cp.to_string());
                out.next_marker = Some(cp.to_string());
                count += 1;
                continue;
            }
        }
        if count == input.max_keys {
            out.is_truncated = true;
            break;
        }
        out.entries.push(item);
        out.next_marker = Some(key.to_string());
        count += 1;
    }
    out
}

impl S3Service {
    /// ListObjects / ListObjectsV2: current versions that are not delete markers.
    pub fn list_objects(&self, bucket: &str, input: &ListInput) -> Result<ListOutput, AwsError> {
        let state = self.read();
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        let start = input.marker.as_str().max(input.prefix.as_str());
        let items = b
            .objects
            .range::<str, _>((Bound::Included(start), Bound::Unbounded))
            .filter_map(|(k, vs)| {
                vs.last()
                    .filter(|m| !m.delete_marker)
                    .map(|m| (k.as_str(), m))
            });
        let page = list_keys(items, input);
        Ok(Listing {
            entries: page.entries.into_iter().cloned().collect(),
            common_prefixes: page.common_prefixes,
            is_truncated: page.is_truncated,
            next_marker: page.next_marker,
        })
    }

    /// ListObjectVersions. `version_id_marker` continues inside `input.marker`'s versions.
    pub fn list_object_versions(
        &self,
        bucket: &str,
        input: &ListInput,
        version_id_marker: Option<&str>,
    ) -> Result<VersionsOutput, AwsError> {
        let state = self.read();
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        let mut out = VersionsOutput {
            versions: Vec::new(),
            common_prefixes: Vec::new(),
            is_truncated: false,
            next_key_marker: None,
            next_version_id_marker: None,
        };
        let start = input.marker.as_str().max(input.prefix.as_str());
        let mut count = 0;
        'keys: for (key, versions) in b
            .objects
            .range::<str, _>((Bound::Included(start), Bound::Unbounded))
        {
            if !key.starts_with(&input.prefix) {
                if key.as_str() > input.prefix.as_str() {
                    break;
                }
                continue;
            }
            // Inside the marker key, continue after the given version (newest first).
            let mut skip_until: Option<&str> = None;
            if key.as_str() <= input.marker.as_str() {
                match version_id_marker.filter(|_| key == &input.marker) {
                    Some(v) => skip_until = Some(v),
                    None => continue,
                }
            }
            if !input.delimiter.is_empty() {
                let rest = &key[input.prefix.len()..];
                if let Some(i) = rest.find(&input.delimiter) {
                    let cp = &key[..input.prefix.len() + i + input.delimiter.len()];
                    if cp <= input.marker.as_str()
                        || out.common_prefixes.last().is_some_and(|l| l == cp)
                    {
                        continue;
                    }
                    if count == input.max_keys {
                        out.is_truncated = true;
                        break;
                    }
                    out.common_prefixes.push(cp.to_string());
                    out.next_key_marker = Some(cp.to_string());
                    out.next_version_id_marker = None;
                    count += 1;
                    continue;
                }
            }
            let newest = versions.len().saturating_sub(1);
            for (i, v) in versions.iter().enumerate().rev() {
                if let Some(marker) = skip_until {
                    if v.version_id == marker {
                        skip_until = None;
                    }
                    continue;
                }
                if count == input.max_keys {
                    out.is_truncated = true;
                    break 'keys;
                }
                out.versions.push((v.clone(), i == newest));
                out.next_key_marker = Some(key.clone());
                out.next_version_id_marker = Some(v.version_id.clone());
                count += 1;
            }
        }
        if !out.is_truncated {
            out.next_key_marker = None;
            out.next_version_id_marker = None;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        keys: &[&str],
        prefix: &str,
        delimiter: &str,
        marker: &str,
        max: usize,
    ) -> Listing<String> {
        let input = ListInput {
            prefix: prefix.into(),
            delimiter: delimiter.into(),
            marker: marker.into(),
            max_keys: max,
        };
        list_keys(keys.iter().map(|k| (*k, k.to_string())), &input)
    }

    const KEYS: &[&str] = &["a.txt", "dir/a", "dir/b", "dir/sub/c", "dir2/x", "z"];

    #[test]
    fn flat_listing_and_prefix() {
        let l = run(KEYS, "", "", "", 1000);
        assert_eq!(l.entries.len(), 6);
        assert!(!l.is_truncated);
        let l = run(KEYS, "dir/", "", "", 1000);
        assert_eq!(l.entries, vec!["dir/a", "dir/b", "dir/sub/c"]);
    }

    #[test]
    fn delimiter_groups_common_prefixes() {
        let l = run(KEYS, "", "/", "", 1000);
        assert_eq!(l.entries, vec!["a.txt", "z"]);
        assert_eq!(l.common_prefixes, vec!["dir/", "dir2/"]);
        let l = run(KEYS, "dir/", "/", "", 1000);
        assert_eq!(l.entries, vec!["dir/a", "dir/b"]);
        assert_eq!(l.common_prefixes, vec!["dir/sub/"]);
    }

    #[test]
    fn pagination_counts_prefixes_and_never_repeats_them() {
        let l = run(KEYS, "", "/", "", 2);
        assert_eq!(l.entries, vec!["a.txt"]);
        assert_eq!(l.common_prefixes, vec!["dir/"]);
        assert!(l.is_truncated);
        assert_eq!(l.next_marker.as_deref(), Some("dir/"));
        let l = run(KEYS, "", "/", "dir/", 2);
        assert_eq!(l.common_prefixes, vec!["dir2/"]);
        assert_eq!(l.entries, vec!["z"]);
        assert!(!l.is_truncated);
    }

    #[test]
    fn marker_and_max_keys() {
        let l = run(KEYS, "", "", "dir/b", 2);
        assert_eq!(l.entries, vec!["dir/sub/c", "dir2/x"]);
        assert!(l.is_truncated);
        let l = run(KEYS, "", "", "", 0);
        assert!(l.entries.is_empty());
        // Exactly max-keys left: not truncated.
        let l = run(KEYS, "", "", "dir2/x", 1);
        assert_eq!(l.entries, vec!["z"]);
        assert!(!l.is_truncated);
    }

    #[test]
    fn multi_char_delimiter_and_unicode() {
        let keys = ["p--a--b", "p--c", "é/ü", "é/ü/x"];
        let l = run(&keys, "p--", "--", "", 10);
        assert_eq!(l.entries, vec!["p--c"]);
        assert_eq!(l.common_prefixes, vec!["p--a--"]);
        let l = run(&keys, "é/", "/", "", 10);
        assert_eq!(l.entries, vec!["é/ü"]);
        assert_eq!(l.common_prefixes, vec!["é/ü/"]);
    }
}
