//! The policies AWS defines for every classic load balancer: the predefined SSL negotiation
//! policies (`ELBSecurityPolicy-*`, which DescribeLoadBalancerPolicies lists without a load
//! balancer name and a `Reference-Security-Policy` attribute copies) and the policy types.

use serde_json::{Value, json};

const TLS12_CIPHERS: &[&str] = &[
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES128-SHA256",
    "ECDHE-RSA-AES128-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-AES256-SHA384",
    "ECDHE-RSA-AES256-SHA384",
    "AES128-GCM-SHA256",
    "AES128-SHA256",
    "AES256-GCM-SHA384",
    "AES256-SHA256",
];

const SHA1_CIPHERS: &[&str] = &[
    "ECDHE-ECDSA-AES128-SHA",
    "ECDHE-RSA-AES128-SHA",
    "ECDHE-ECDSA-AES256-SHA",
    "ECDHE-RSA-AES256-SHA",
    "AES128-SHA",
    "AES256-SHA",
];

/// Each predefined policy: its name, the protocols it enables and whether it keeps the SHA-1
/// ciphers (the older policies).
const PREDEFINED: &[(&str, &[&str], bool)] = &[
    (
        "ELBSecurityPolicy-2016-08",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-TLS-1-2-2017-01",
        &["Protocol-TLSv1.2"],
        false,
    ),
    (
        "ELBSecurityPolicy-TLS-1-1-2017-01",
        &["Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2015-05",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2015-03",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2015-02",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2014-10",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2014-01",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
    (
        "ELBSecurityPolicy-2011-08",
        &["Protocol-TLSv1", "Protocol-TLSv1.1", "Protocol-TLSv1.2"],
        true,
    ),
];

/// The policy types a classic load balancer's policies may have.
pub(crate) const TYPES: &[(&str, &str)] = &[
    (
        "SSLNegotiationPolicyType",
        "Listener policy that defines the ciphers and protocols that will be accepted by the load balancer. This policy can be associated only with HTTPS/SSL listeners.",
    ),
    (
        "BackendServerAuthenticationPolicyType",
        "Policy that controls authentication to back-end server(s) and contains one or more policies, such as an instance of a PublicKeyPolicyType. This policy can be associated only with back-end servers that are using HTTPS/SSL.",
    ),
    (
        "PublicKeyPolicyType",
        "Policy containing a list of public keys to accept when authenticating the back-end server(s). This policy cannot be applied directly to back-end servers or listeners but must be part of a BackendServerAuthenticationPolicyType.",
    ),
    (
        "AppCookieStickinessPolicyType",
        "Stickiness policy with session lifetimes controlled by the lifetime of the application-generated cookie. This policy can be associated only with HTTP/HTTPS listeners.",
    ),
    (
        "LBCookieStickinessPolicyType",
        "Stickiness policy with session lifetimes controlled by the browser (user-agent) or a specified expiration period. This policy can be associated only with HTTP/HTTPS listeners.",
    ),
    (
        "ProxyProtocolPolicyType",
        "Policy that controls whether to include the IP address and port of the originating request for TCP messages. This policy operates on TCP listeners only.",
    ),
];

/// The default policy AWS gives an HTTPS or SSL listener created without one.
pub(crate) const DEFAULT_SSL_POLICY: &str = "ELBSecurityPolicy-2016-08";

/// A predefined policy's attributes, `None` for a name AWS does not define.
pub(crate) fn predefined_attributes(name: &str) -> Option<Vec<Value>> {
    let (_, protocols, sha1) = PREDEFINED.iter().find(|(n, _, _)| *n == name)?;
    let mut out: Vec<Value> = [
        "Protocol-SSLv3",
        "Protocol-TLSv1",
        "Protocol-TLSv1.1",
        "Protocol-TLSv1.2",
    ]
    .iter()
    .map(|p| json!({"AttributeName": p, "AttributeValue": protocols.contains(p).to_string()}))
    .collect();
    out.push(json!({"AttributeName": "Server-Defined-Cipher-Order", "AttributeValue": "true"}));
    for c in TLS12_CIPHERS {
        out.push(json!({"AttributeName": c, "AttributeValue": "true"}));
    }
    for c in SHA1_CIPHERS {
        out.push(json!({"AttributeName": c, "AttributeValue": sha1.to_string()}));
    }
    Some(out)
}

/// A predefined policy as DescribeLoadBalancerPolicies answers it.
pub(crate) fn predefined(name: &str) -> Option<Value> {
    predefined_attributes(name).map(|attrs| {
        json!({"PolicyName": name, "PolicyTypeName": "SSLNegotiationPolicyType", "PolicyAttributeDescriptions": attrs})
    })
}

/// Every predefined policy, newest first as AWS lists them.
pub(crate) fn all_predefined() -> Vec<Value> {
    PREDEFINED
        .iter()
        .filter_map(|(n, _, _)| predefined(n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_policies_differ_in_protocols() {
        let tls12 = predefined_attributes("ELBSecurityPolicy-TLS-1-2-2017-01").unwrap();
        let v1 = tls12
            .iter()
            .find(|a| a["AttributeName"] == "Protocol-TLSv1")
            .unwrap();
        assert_eq!(v1["AttributeValue"], "false");
        let d = predefined_attributes(DEFAULT_SSL_POLICY).unwrap();
        assert!(
            d.iter()
                .any(|a| a["AttributeName"] == "Protocol-TLSv1" && a["AttributeValue"] == "true")
        );
        assert!(predefined("ELBSecurityPolicy-1999").is_none());
        assert_eq!(all_predefined().len(), PREDEFINED.len());
    }
}
