//! Which resource of a REST API a request path reaches: literal path parts first, then a
//! `{param}` part (one segment), then a greedy `{param+}` (the rest, at least one segment),
//! backtracking when a branch leads nowhere. Empty segments (`//`, a trailing `/`) are ignored,
//! as API Gateway does.

use crate::apigateway::state::Resource;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub resource_id: String,
    pub params: BTreeMap<String, String>,
}

pub fn find(resources: &BTreeMap<String, Resource>, path: &str) -> Option<Found> {
    let root = resources.values().find(|r| r.parent_id.is_none())?;
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut children: BTreeMap<&str, Vec<&Resource>> = BTreeMap::new();
    for r in resources.values() {
        if let Some(p) = &r.parent_id {
            children.entry(p.as_str()).or_default().push(r);
        }
    }
    let mut params = BTreeMap::new();
    walk(&children, &root.id, &segs, &mut params).map(|resource_id| Found {
        resource_id,
        params,
    })
}

fn walk(
    children: &BTreeMap<&str, Vec<&Resource>>,
    at: &str,
    segs: &[&str],
    params: &mut BTreeMap<String, String>,
) -> Option<String> {
    let Some((first, rest)) = segs.split_first() else {
        return Some(at.to_string());
    };
    let kids = children.get(at).map(Vec::as_slice).unwrap_or(&[]);
    if let Some(r) = kids.iter().find(|r| r.path_part == *first)
        && let Some(found) = walk(children, &r.id, rest, params)
    {
        return Some(found);
    }
    for r in kids {
        let Some(name) = r
            .path_part
            .strip_prefix('{')
            .and_then(|p| p.strip_suffix('}'))
        else {
            continue;
        };
        if let Some(greedy) = name.strip_suffix('+') {
            params.insert(greedy.to_string(), segs.join("/"));
            return Some(r.id.clone());
        }
        params.insert(name.to_string(), (*first).to_string());
        if let Some(found) = walk(children, &r.id, rest, params) {
            return Some(found);
        }
        params.remove(name);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(parts: &[(&str, Option<&str>, &str)]) -> BTreeMap<String, Resource> {
        parts
            .iter()
            .map(|(id, parent, part)| {
                (
                    id.to_string(),
                    Resource {
                        id: id.to_string(),
                        parent_id: parent.map(str::to_string),
                        path_part: part.to_string(),
                        methods: BTreeMap::new(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn literal_param_and_greedy() {
        let t = tree(&[
            ("root", None, ""),
            ("pets", Some("root"), "pets"),
            ("pet", Some("pets"), "{id}"),
            ("toys", Some("pet"), "toys"),
            ("mine", Some("pets"), "mine"),
            ("proxy", Some("root"), "{proxy+}"),
        ]);
        let f = |p: &str| find(&t, p).map(|f| (f.resource_id, f.params));
        assert_eq!(f("/").unwrap().0, "root");
        assert_eq!(f("/pets").unwrap().0, "pets");
        assert_eq!(f("/pets/").unwrap().0, "pets");
        assert_eq!(f("/pets/mine").unwrap().0, "mine");
        let (id, params) = f("/pets/7/toys").unwrap();
        assert_eq!((id.as_str(), params["id"].as_str()), ("toys", "7"));
        // A branch that leads nowhere falls back to the greedy resource.
        let (id, params) = f("/pets/7/food").unwrap();
        assert_eq!(
            (id.as_str(), params["proxy"].as_str()),
            ("proxy", "pets/7/food")
        );
        assert_eq!(params.get("id"), None);
        let (id, params) = f("/a//b/").unwrap();
        assert_eq!((id.as_str(), params["proxy"].as_str()), ("proxy", "a/b"));
    }

    #[test]
    fn nothing_matches_without_greedy() {
        let t = tree(&[("root", None, ""), ("a", Some("root"), "a")]);
        assert_eq!(find(&t, "/b"), None);
        assert_eq!(find(&t, "/a/b"), None);
    }
}
