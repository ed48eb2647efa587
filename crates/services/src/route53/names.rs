//! DNS names as Route 53 stores, validates and orders them.

use std::cmp::Ordering;

/// A DNS name as Route 53 stores and reports it: lower case, with the trailing dot, and `*`
/// escaped as `\052` (AWS answers names in that octal escape form).
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    for c in name.trim().chars() {
        match c {
            '*' => out.push_str("\\052"),
            c => out.extend(c.to_lowercase()),
        }
    }
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// A zone id as callers may give it: bare `Z...` or `/hostedzone/Z...`.
pub fn bare_zone_id(id: &str) -> &str {
    id.trim_start_matches("/hostedzone/")
}

/// Whether `name` is `zone` or a name below it (both normalized).
pub fn within_zone(name: &str, zone: &str) -> bool {
    name == zone || name.ends_with(&format!(".{zone}"))
}

/// The key Route 53 orders names by: the labels reversed, joined with dots, with the trailing
/// dot (`www.example.com.` is `com.example.www.`), compared as text, as ListResourceRecordSets
/// and ListHostedZonesByName document.
pub fn order_key(name: &str) -> String {
    let trimmed = name.trim_end_matches('.');
    let mut key: String = trimmed.rsplit('.').collect::<Vec<_>>().join(".");
    key.push('.');
    key
}

/// Orders two normalized names as Route 53 lists them.
pub fn compare_names(a: &str, b: &str) -> Ordering {
    order_key(a).cmp(&order_key(b))
}

/// Why a name is not a valid DNS name for a hosted zone (`None` when it is): at most 255
/// characters with 63 per label, no empty label, letters, digits, `-`, `_` and `\052`.
pub fn invalid_domain(name: &str) -> Option<&'static str> {
    let n = name.trim_end_matches('.');
    if n.is_empty() {
        return Some("empty");
    }
    if n.len() > 255 {
        return Some("too long");
    }
    for label in n.split('.') {
        let plain = label.replace("\\052", "*");
        if plain.is_empty() {
            return Some("empty label");
        }
        if plain.len() > 63 {
            return Some("label too long");
        }
        if !plain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '*'))
        {
            return Some("character not permitted");
        }
    }
    None
}

/// Whether `value` is a dotted-quad IPv4 address.
pub fn is_ipv4(value: &str) -> bool {
    value.parse::<std::net::Ipv4Addr>().is_ok()
}

pub fn is_ipv6(value: &str) -> bool {
    value.parse::<std::net::Ipv6Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_with_trailing_dot_and_escaped_star() {
        assert_eq!(normalize_name("Example.COM"), "example.com.");
        assert_eq!(normalize_name("*.example.com."), "\\052.example.com.");
    }

    #[test]
    fn names_order_by_reversed_labels_with_the_trailing_dot() {
        let mut names = vec![
            "www.example.com.",
            "example.org.",
            "example.com.",
            "a.example.com.",
            "example-a.com.",
            "b.com.",
        ];
        names.sort_by(|a, b| compare_names(a, b));
        assert_eq!(
            names,
            [
                "b.com.",
                "example-a.com.",
                "example.com.",
                "a.example.com.",
                "www.example.com.",
                "example.org.",
            ]
        );
        assert_eq!(order_key("www.example.com."), "com.example.www.");
    }

    #[test]
    fn zone_membership_needs_a_label_boundary() {
        assert!(within_zone("a.example.com.", "example.com."));
        assert!(within_zone("example.com.", "example.com."));
        assert!(!within_zone("badexample.com.", "example.com."));
    }

    #[test]
    fn domain_names_are_validated() {
        assert_eq!(invalid_domain("example.com."), None);
        assert_eq!(invalid_domain("\\052.example.com."), None);
        assert_eq!(invalid_domain("_svc.example.com."), None);
        assert!(invalid_domain("a..b.").is_some());
        assert!(invalid_domain("bad name.com.").is_some());
        assert!(invalid_domain(&format!("{}.com.", "a".repeat(64))).is_some());
        assert!(invalid_domain(".").is_some());
        assert!(is_ipv4("10.0.0.1") && !is_ipv4("10.0.0") && !is_ipv4("abc"));
        assert!(is_ipv6("2001:db8::1") && !is_ipv6("10.0.0.1"));
    }
}
