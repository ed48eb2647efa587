//! The awsQuery request side: form decoding and the flattened `Member.N` / `Entry.N.key` shapes.

/// Decodes `application/x-www-form-urlencoded` (also used for query strings): `+` is a space.
pub fn parse_form(body: &[u8]) -> Vec<(String, String)> {
    body.split(|b| *b == b'&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = match pair.iter().position(|b| *b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(raw: &[u8]) -> String {
    let spaced: Vec<u8> = raw
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    percent_encoding::percent_decode(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

/// Query-protocol parameters of one request, with helpers for the list and map encodings.
#[derive(Debug, Clone, Default)]
pub struct QueryParams(pub Vec<(String, String)>);

impl QueryParams {
    /// Parameters from the form body merged after the URL query (AWS accepts both).
    pub fn from_request(req: &crate::AwsRequest) -> Self {
        let mut all = req.query.clone();
        all.extend(parse_form(&req.body));
        QueryParams(all)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `Prefix.1`, `Prefix.2`, ... (or `Prefix.member.1` ...), in index order.
    pub fn list(&self, prefix: &str) -> Vec<String> {
        let mut items: Vec<(u32, String)> = self
            .0
            .iter()
            .filter_map(|(k, v)| {
                let rest = k.strip_prefix(prefix)?.strip_prefix('.')?;
                let rest = rest.strip_prefix("member.").unwrap_or(rest);
                rest.parse::<u32>().ok().map(|i| (i, v.clone()))
            })
            .collect();
        items.sort_by_key(|(i, _)| *i);
        items.into_iter().map(|(_, v)| v).collect()
    }

    /// Structures in a list: for `Prefix.N.Field=value` returns, per N in order, the fields.
    pub fn list_of_structs(&self, prefix: &str) -> Vec<Vec<(String, String)>> {
        let mut by_index: std::collections::BTreeMap<u32, Vec<(String, String)>> =
            Default::default();
        for (k, v) in &self.0 {
            let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            let rest = rest.strip_prefix("member.").unwrap_or(rest);
            let Some((idx, field)) = rest.split_once('.') else {
                continue;
            };
            if let Ok(i) = idx.parse::<u32>() {
                by_index
                    .entry(i)
                    .or_default()
                    .push((field.to_string(), v.clone()));
            }
        }
        by_index.into_values().collect()
    }

    /// A map encoded as `Prefix.entry.N.key` / `Prefix.entry.N.value` (also `Prefix.N.Name` /
    /// `Prefix.N.Value` as SQS attributes use): give the key and value field names.
    pub fn map(&self, prefix: &str, key_field: &str, value_field: &str) -> Vec<(String, String)> {
        let p = format!("{prefix}.entry");
        let structs = {
            let s = self.list_of_structs(&p);
            if s.is_empty() {
                self.list_of_structs(prefix)
            } else {
                s
            }
        };
        structs
            .into_iter()
            .filter_map(|fields| {
                let k = fields.iter().find(|(f, _)| f == key_field)?.1.clone();
                let v = fields
                    .iter()
                    .find(|(f, _)| f == value_field)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                Some((k, v))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_form_and_lists() {
        let p = QueryParams(parse_form(
            b"Action=X&Tags.member.2.Key=b&Tags.member.1.Key=a&Tags.member.1.Value=1&Names.1=x+y&Names.2=%2F",
        ));
        assert_eq!(p.get("Action"), Some("X"));
        assert_eq!(p.list("Names"), vec!["x y", "/"]);
        let tags = p.list_of_structs("Tags");
        assert_eq!(
            tags[0],
            vec![("Key".into(), "a".into()), ("Value".into(), "1".into())]
        );
        assert_eq!(tags[1], vec![("Key".into(), "b".into())]);
    }

    #[test]
    fn decodes_maps() {
        let p = QueryParams(parse_form(
            b"Attributes.entry.1.key=A&Attributes.entry.1.value=1&Attribute.1.Name=B&Attribute.1.Value=2",
        ));
        assert_eq!(
            p.map("Attributes", "key", "value"),
            vec![("A".into(), "1".into())]
        );
        assert_eq!(
            p.map("Attribute", "Name", "Value"),
            vec![("B".into(), "2".into())]
        );
    }
}
