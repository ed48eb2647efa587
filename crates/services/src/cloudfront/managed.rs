//! AWS's managed cache, origin request and response headers policies, under the fixed ids
//! CloudFront gives them in every account (the ids as the CloudFront developer guide's "Use
//! managed ... policies" pages list them, and as the CDK's constants name them). They are
//! listed with Type `managed`, usable in any distribution, and can be neither changed nor
//! deleted.

use serde_json::{Value, json};

fn list(items: &[&str]) -> Value {
    if items.is_empty() {
        json!({"Quantity": 0})
    } else {
        json!({"Quantity": items.len(), "Items": items})
    }
}

fn cache(
    name: &str,
    comment: &str,
    ttl: (i64, i64, i64),
    gzip: bool,
    headers: &[&str],
    cookies: &str,
    query: &str,
) -> Value {
    json!({
        "Name": name,
        "Comment": comment,
        "MinTTL": ttl.0,
        "DefaultTTL": ttl.1,
        "MaxTTL": ttl.2,
        "ParametersInCacheKeyAndForwardedToOrigin": {
            "EnableAcceptEncodingGzip": gzip,
            "EnableAcceptEncodingBrotli": gzip,
            "HeadersConfig": if headers.is_empty() {
                json!({"HeaderBehavior": "none"})
            } else {
                json!({"HeaderBehavior": "whitelist", "Headers": list(headers)})
            },
            "CookiesConfig": {"CookieBehavior": cookies},
            "QueryStringsConfig": {"QueryStringBehavior": query},
        }
    })
}

/// `(id, config)` of every managed cache policy.
pub fn cache_policies() -> Vec<(&'static str, Value)> {
    vec![
        (
            "2e54312d-136d-493c-8eb9-b001f22f67d2",
            cache(
                "Amplify",
                "Policy for Amplify Origin",
                (2, 2, 600),
                true,
                &["Authorization", "CloudFront-Viewer-Country", "Host"],
                "all",
                "all",
            ),
        ),
        (
            "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
            cache(
                "Managed-CachingDisabled",
                "Policy with caching disabled",
                (0, 0, 0),
                false,
                &[],
                "none",
                "none",
            ),
        ),
        (
            "658327ea-f89d-4fab-a63d-7e88639e58f6",
            cache(
                "Managed-CachingOptimized",
                "Policy with caching enabled. Supports Gzip and Brotli compression.",
                (1, 86400, 31536000),
                true,
                &[],
                "none",
                "none",
            ),
        ),
        (
            "b2884449-e4de-46a7-ac36-70bc7f1ddd6d",
            cache(
                "Managed-CachingOptimizedForUncompressedObjects",
                "Default policy when compression is disabled",
                (1, 86400, 31536000),
                false,
                &[],
                "none",
                "none",
            ),
        ),
        (
            "08627262-05a9-4f76-9ded-b50ca2e3a84f",
            cache(
                "Managed-Elemental-MediaPackage",
                "Policy for Elemental MediaPackage Origin",
                (0, 86400, 31536000),
                true,
                &["origin"],
                "none",
                "whitelist",
            ),
        ),
        (
            "83da9c7e-98b4-4e11-a168-04f0df8e2c65",
            cache(
                "UseOriginCacheControlHeaders",
                "Policy for origins that return Cache-Control headers. Query strings are not included in the cache key.",
                (0, 0, 31536000),
                true,
                &[
                    "host",
                    "origin",
                    "x-http-method-override",
                    "x-http-method",
                    "x-method-override",
                ],
                "all",
                "none",
            ),
        ),
        (
            "4cc15a8a-d715-48a4-82b8-cc0b614638fe",
            cache(
                "UseOriginCacheControlHeaders-QueryStrings",
                "Policy for origins that return Cache-Control headers and serve different content based on values present in the query string.",
                (0, 0, 31536000),
                true,
                &[
                    "host",
                    "origin",
                    "x-http-method-override",
                    "x-http-method",
                    "x-method-override",
                ],
                "all",
                "all",
            ),
        ),
    ]
}

fn origin_request(
    name: &str,
    comment: &str,
    headers: (&str, &[&str]),
    cookies: &str,
    query: &str,
) -> Value {
    let mut h = json!({"HeaderBehavior": headers.0});
    if !headers.1.is_empty() {
        h["Headers"] = list(headers.1);
    }
    json!({
        "Name": name,
        "Comment": comment,
        "HeadersConfig": h,
        "CookiesConfig": {"CookieBehavior": cookies},
        "QueryStringsConfig": {"QueryStringBehavior": query},
    })
}

/// `(id, config)` of every managed origin request policy.
pub fn origin_request_policies() -> Vec<(&'static str, Value)> {
    vec![
        (
            "216adef6-5c7f-47e4-b989-5492eafa07d3",
            origin_request(
                "Managed-AllViewer",
                "Policy to forward all parameters in viewer requests",
                ("allViewer", &[]),
                "all",
                "all",
            ),
        ),
        (
            "33f36d7e-f396-46d9-90e0-52428a34d9dc",
            origin_request(
                "Managed-AllViewerAndCloudFrontHeaders-2022-06",
                "Policy to forward all parameters in viewer requests and all CloudFront headers released through June 2022",
                (
                    "allViewerAndWhitelistCloudFront",
                    &[
                        "CloudFront-Viewer-Country",
                        "CloudFront-Is-Mobile-Viewer",
                        "CloudFront-Forwarded-Proto",
                    ],
                ),
                "all",
                "all",
            ),
        ),
        (
            "b689b0a8-53d0-40ab-baf2-68738e2966ac",
            origin_request(
                "Managed-AllViewerExceptHostHeader",
                "Policy to forward all parameters in viewer requests except for the Host header",
                ("allExcept", &["host"]),
                "all",
                "all",
            ),
        ),
        (
            "59781a5b-3903-41f3-afcb-af62929ccde1",
            origin_request(
                "Managed-CORS-CustomOrigin",
                "Policy for allowing CORS requests from a custom origin",
                ("whitelist", &["origin"]),
                "none",
                "none",
            ),
        ),
        (
            "88a5eaf4-2fd4-4709-b370-b4c650ea3fcf",
            origin_request(
                "Managed-CORS-S3Origin",
                "Policy for allowing CORS requests from an S3 origin",
                (
                    "whitelist",
                    &[
                        "origin",
                        "access-control-request-headers",
                        "access-control-request-method",
                    ],
                ),
                "none",
                "none",
            ),
        ),
        (
            "775133bc-15f2-49f9-abea-afb2e0bf67d2",
            origin_request(
                "Managed-Elemental-MediaTailor-PersonalizedManifests",
                "Policy for Elemental MediaTailor personalized manifests",
                (
                    "whitelist",
                    &[
                        "origin",
                        "access-control-request-headers",
                        "x-forwarded-for",
                        "access-control-request-method",
                        "user-agent",
                    ],
                ),
                "none",
                "all",
            ),
        ),
        (
            "acba4595-bd28-49b8-b9fe-13317c0390fa",
            origin_request(
                "Managed-UserAgentRefererHeaders",
                "Policy to forward user-agent and referer headers to origin",
                ("whitelist", &["referer", "user-agent"]),
                "none",
                "none",
            ),
        ),
    ]
}

fn response_headers(name: &str, comment: &str, cors: Option<bool>, security: bool) -> Value {
    let mut c = json!({"Name": name, "Comment": comment});
    if let Some(preflight) = cors {
        let methods: &[&str] = if preflight {
            &["ALL"]
        } else {
            &["GET", "HEAD"]
        };
        c["CorsConfig"] = json!({
            "AccessControlAllowOrigins": list(&["*"]),
            "AccessControlAllowHeaders": list(&["*"]),
            "AccessControlAllowMethods": list(methods),
            "AccessControlAllowCredentials": false,
            "AccessControlExposeHeaders": list(&["*"]),
            "OriginOverride": false,
        });
    }
    if security {
        c["SecurityHeadersConfig"] = json!({
            "XSSProtection": {"Override": false, "Protection": true, "ModeBlock": true},
            "FrameOptions": {"Override": false, "FrameOption": "SAMEORIGIN"},
            "ReferrerPolicy": {"Override": false, "ReferrerPolicy": "strict-origin-when-cross-origin"},
            "ContentTypeOptions": {"Override": true},
            "StrictTransportSecurity": {"Override": false, "IncludeSubdomains": false, "Preload": false, "AccessControlMaxAgeSec": 31536000},
        });
    }
    c
}

/// `(id, config)` of every managed response headers policy.
pub fn response_headers_policies() -> Vec<(&'static str, Value)> {
    vec![
        (
            "60669652-455b-4ae9-85a4-c4c02393f86c",
            response_headers(
                "Managed-SimpleCORS",
                "Allows all origins for simple CORS requests",
                Some(false),
                false,
            ),
        ),
        (
            "5cc3b908-e619-4b99-88e5-2cf7f45965bd",
            response_headers(
                "Managed-CORS-With-Preflight",
                "Allows all origins for CORS requests, including preflight requests",
                Some(true),
                false,
            ),
        ),
        (
            "67f7725c-6f97-4210-82d7-5512b31e9d03",
            response_headers(
                "Managed-SecurityHeadersPolicy",
                "Adds a set of security headers to every response",
                None,
                true,
            ),
        ),
        (
            "e61eb60c-9c35-4d20-a928-2b84e02af89c",
            response_headers(
                "Managed-CORS-and-SecurityHeadersPolicy",
                "Allows all origins for simple CORS requests and adds security headers",
                Some(false),
                true,
            ),
        ),
        (
            "eaab4381-ed33-4a86-88ca-d9558dc6cd63",
            response_headers(
                "Managed-CORS-with-preflight-and-SecurityHeadersPolicy",
                "Allows all origins for CORS requests, including preflight requests, and adds security headers",
                Some(true),
                true,
            ),
        ),
    ]
}
