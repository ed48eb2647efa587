//! What the gateway knows about a service before building it: how requests name it (signing
//! name, `X-Amz-Target` prefix, query `Version`, REST path) and which protocol it answers in.
//! Each service module declares one [`Descriptor`]; the gateway's routing reads only these, so a
//! new service's routing keys live beside its code and nowhere else.

use cumulo_wire::{AwsRequest, Protocol};

/// One service's identity and routing keys, as botocore's model has them (`signingName`,
/// `metadata.protocols`, `targetPrefix`, `apiVersion`, `xmlNamespace`).
#[derive(Debug)]
pub struct Descriptor {
    /// The SigV4 signing name: the credential scope's service, the health report's key and the
    /// name the service goes by everywhere in cumulo.
    pub name: &'static str,
    /// Further signing names that reach this service (S3 Express One Zone signs as `s3express`).
    pub also_signed_as: &'static [&'static str],
    /// Every protocol the service answers (SQS speaks JSON 1.0 and, for older SDKs, query).
    pub protocols: &'static [Wire],
    /// The model is `awsQueryCompatible`: botocore reads a JSON error's code from the
    /// `x-amzn-query-error` header, so errors raised for it carry the legacy query code there.
    pub query_compatible: bool,
}

/// One protocol a service answers, with the keys that route a request in it to the service.
#[derive(Debug)]
pub enum Wire {
    /// `application/x-amz-json-1.0`, `X-Amz-Target: <target_prefix>.<Operation>`.
    Json10 { target_prefix: &'static str },
    /// `application/x-amz-json-1.1`, `X-Amz-Target: <target_prefix>.<Operation>`.
    Json11 { target_prefix: &'static str },
    /// `query`: form-encoded `Action` and `Version`, XML answers in `namespace`.
    Query {
        version: &'static str,
        namespace: &'static str,
    },
    /// EC2's dialect of query (errors are `<Response><Errors><Error>`).
    Ec2 {
        version: &'static str,
        namespace: &'static str,
    },
    /// Smithy RPC v2 CBOR: `POST /service/<service>/operation/<Operation>` with
    /// `smithy-protocol: rpc-v2-cbor` (unsigned requests are routed by that path).
    RpcV2Cbor { service: &'static str },
    /// `rest-json`; `paths` are the prefixes that name the service when a request carries no
    /// signature (signed requests are routed by signing name).
    RestJson { paths: &'static [&'static str] },
    /// `rest-xml`; `paths` as for [`Wire::RestJson`].
    RestXml { paths: &'static [&'static str] },
}

/// Namespace for query errors of services cumulo has no model of; botocore ignores it on errors.
const UNKNOWN_NAMESPACE: &str = "https://cumulo.invalid/doc/";

impl Descriptor {
    /// A base for declarations to fill in (`..Descriptor::BASE`).
    pub const BASE: Descriptor = Descriptor {
        name: "",
        also_signed_as: &[],
        protocols: &[],
        query_compatible: false,
    };

    fn signed_as(&self, name: &str) -> bool {
        self.name == name || self.also_signed_as.contains(&name)
    }

    fn json10(&self) -> bool {
        self.protocols
            .iter()
            .any(|w| matches!(w, Wire::Json10 { .. }))
    }

    fn target_prefix(&self, prefix: &str) -> bool {
        self.protocols.iter().any(|w| {
            matches!(w, Wire::Json10 { target_prefix } | Wire::Json11 { target_prefix }
                if *target_prefix == prefix)
        })
    }

    fn query_version(&self, version: &str) -> bool {
        self.protocols.iter().any(|w| {
            matches!(w, Wire::Query { version: v, .. } | Wire::Ec2 { version: v, .. }
                if *v == version)
        })
    }

    fn rest_path(&self, path: &str) -> bool {
        self.protocols.iter().any(|w| match w {
            Wire::RestJson { paths } | Wire::RestXml { paths } => {
                paths.iter().any(|p| path.starts_with(p))
            }
            Wire::RpcV2Cbor { service } => path
                .strip_prefix("/service/")
                .and_then(|p| p.strip_prefix(service))
                .is_some_and(|p| p.starts_with("/operation/")),
            _ => false,
        })
    }

    fn cbor(&self, req: &AwsRequest) -> bool {
        req.header("smithy-protocol") == Some("rpc-v2-cbor")
            && self
                .protocols
                .iter()
                .any(|w| matches!(w, Wire::RpcV2Cbor { .. }))
    }

    /// The protocol `req` is in: a REST-XML service always answers in it; an `X-Amz-Target`
    /// means JSON; otherwise the service's query dialect, then its JSON, then REST-JSON.
    pub fn protocol_for(&self, req: &AwsRequest) -> Protocol {
        let find = |pick: fn(&Wire) -> Option<Protocol>| self.protocols.iter().find_map(pick);
        if let Some(p) = find(|w| matches!(w, Wire::RestXml { .. }).then_some(Protocol::RestXml)) {
            return p;
        }
        if self.cbor(req) {
            return Protocol::RpcV2Cbor;
        }
        if req.header("x-amz-target").is_some() {
            return json_of_request(self.json10(), req);
        }
        find(|w| match w {
            Wire::Query { namespace, .. } => Some(Protocol::Query(namespace)),
            Wire::Ec2 { namespace, .. } => Some(Protocol::Ec2(namespace)),
            _ => None,
        })
        .or_else(|| {
            find(|w| match w {
                Wire::Json10 { .. } => Some(Protocol::Json10),
                Wire::Json11 { .. } => Some(Protocol::Json11),
                _ => None,
            })
        })
        .unwrap_or(Protocol::RestJson)
    }
}

/// JSON 1.0 when the service speaks it or the request says so, else 1.1.
fn json_of_request(json10: bool, req: &AwsRequest) -> Protocol {
    let says_10 = req
        .header("content-type")
        .is_some_and(|c| c.contains("json-1.0"));
    if json10 || says_10 {
        Protocol::Json10
    } else {
        Protocol::Json11
    }
}

/// The protocol of a request to a service cumulo has no descriptor of, judged from its shape
/// as botocore would have built it.
pub fn protocol_of_unknown(req: &AwsRequest) -> Protocol {
    if req.header("x-amz-target").is_some() {
        json_of_request(false, req)
    } else if req.query_param("Action").is_some() || req.body.starts_with(b"Action=") {
        Protocol::Query(UNKNOWN_NAMESPACE)
    } else {
        Protocol::RestJson
    }
}

/// Lookups over a list of descriptors (the catalog's, or a test's).
pub struct Routes<'a>(pub &'a [&'a Descriptor]);

impl<'a> Routes<'a> {
    /// The service a SigV4 signing name names.
    pub fn by_signing_name(&self, name: &str) -> Option<&'a Descriptor> {
        self.0.iter().copied().find(|d| d.signed_as(name))
    }

    /// The service of an `X-Amz-Target` header (`AmazonSQS.SendMessage`).
    pub fn by_target(&self, target: &str) -> Option<&'a Descriptor> {
        let prefix = target.split('.').next()?;
        self.0.iter().copied().find(|d| d.target_prefix(prefix))
    }

    /// The query-protocol service of an API `Version`.
    pub fn by_query_version(&self, version: &str) -> Option<&'a Descriptor> {
        self.0.iter().copied().find(|d| d.query_version(version))
    }

    /// The REST service whose path prefixes `path` starts with.
    pub fn by_path(&self, path: &str) -> Option<&'a Descriptor> {
        self.0.iter().copied().find(|d| d.rest_path(path))
    }
}

#[cfg(test)]
mod tests {
    //! The shapes of the services that come next fit the descriptor: each is routed by the key
    //! botocore's model gives it and answered in its protocol.
    use super::*;
    use http::{HeaderValue, Method};

    const EC2: Descriptor = Descriptor {
        name: "ec2",
        protocols: &[Wire::Ec2 {
            version: "2016-11-15",
            namespace: "http://ec2.amazonaws.com/doc/2016-11-15/",
        }],
        ..Descriptor::BASE
    };
    const ROUTE53: Descriptor = Descriptor {
        name: "route53",
        protocols: &[Wire::RestXml {
            paths: &["/2013-04-01/"],
        }],
        ..Descriptor::BASE
    };
    const CLOUDWATCH: Descriptor = Descriptor {
        name: "monitoring",
        protocols: &[
            Wire::RpcV2Cbor {
                service: "GraniteServiceVersion20100801",
            },
            Wire::Query {
                version: "2010-08-01",
                namespace: "http://monitoring.amazonaws.com/doc/2010-08-01/",
            },
            Wire::Json10 {
                target_prefix: "GraniteServiceVersion20100801",
            },
        ],
        query_compatible: true,
        ..Descriptor::BASE
    };
    const ACM: Descriptor = Descriptor {
        name: "acm",
        protocols: &[Wire::Json11 {
            target_prefix: "CertificateManager",
        }],
        ..Descriptor::BASE
    };
    const ROUTES: Routes = Routes(&[&EC2, &ROUTE53, &CLOUDWATCH, &ACM]);

    fn req(headers: &[(&'static str, &'static str)]) -> AwsRequest {
        let mut r = AwsRequest::new(Method::POST, "/");
        for (k, v) in headers {
            r.headers.insert(*k, HeaderValue::from_static(v));
        }
        r
    }

    #[test]
    fn upcoming_services_route_by_their_models_keys() {
        let name = |d: Option<&Descriptor>| d.map(|d| d.name);
        assert_eq!(name(ROUTES.by_query_version("2016-11-15")), Some("ec2"));
        assert_eq!(
            name(ROUTES.by_query_version("2010-08-01")),
            Some("monitoring")
        );
        assert_eq!(
            name(ROUTES.by_target("GraniteServiceVersion20100801.PutMetricData")),
            Some("monitoring")
        );
        assert_eq!(
            name(ROUTES.by_target("CertificateManager.ListCertificates")),
            Some("acm")
        );
        assert_eq!(
            name(ROUTES.by_path("/2013-04-01/hostedzone")),
            Some("route53")
        );
        assert_eq!(name(ROUTES.by_path("/2015-03-31/functions")), None);
        assert_eq!(
            name(ROUTES.by_signing_name("monitoring")),
            Some("monitoring")
        );
    }

    #[test]
    fn each_answers_in_the_protocol_the_request_is_in() {
        let plain = req(&[]);
        let target = req(&[("x-amz-target", "GraniteServiceVersion20100801.ListMetrics")]);
        assert!(matches!(EC2.protocol_for(&plain), Protocol::Ec2(_)));
        assert_eq!(ROUTE53.protocol_for(&target), Protocol::RestXml);
        assert!(matches!(
            CLOUDWATCH.protocol_for(&plain),
            Protocol::Query(_)
        ));
        assert_eq!(CLOUDWATCH.protocol_for(&target), Protocol::Json10);
        let cbor = req(&[("smithy-protocol", "rpc-v2-cbor")]);
        assert_eq!(CLOUDWATCH.protocol_for(&cbor), Protocol::RpcV2Cbor);
        assert!(matches!(EC2.protocol_for(&cbor), Protocol::Ec2(_)));
        let name = |d: Option<&Descriptor>| d.map(|d| d.name);
        assert_eq!(
            name(ROUTES.by_path("/service/GraniteServiceVersion20100801/operation/ListMetrics")),
            Some("monitoring")
        );
        assert_eq!(
            name(ROUTES.by_path("/service/Other/operation/ListMetrics")),
            None
        );
        assert_eq!(ACM.protocol_for(&plain), Protocol::Json11);
        assert_eq!(protocol_of_unknown(&plain), Protocol::RestJson);
    }
}
