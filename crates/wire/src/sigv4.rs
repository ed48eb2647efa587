//! SigV4: reading the credential scope (which tells the region and the service a call is for) from
//! the `Authorization` header or a presigned URL's `X-Amz-Credential`.

/// What the credential scope of a signed request says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialScope {
    pub access_key: String,
    pub date: String,
    pub region: String,
    pub service: String,
}

impl CredentialScope {
    /// Parses `AKID/20240101/us-east-1/sqs/aws4_request`.
    pub fn parse(credential: &str) -> Option<Self> {
        let mut parts = credential.split('/');
        let access_key = parts.next()?.to_string();
        let date = parts.next()?.to_string();
        let region = parts.next()?.to_string();
        let service = parts.next()?.to_string();
        if parts.next()? != "aws4_request" {
            return None;
        }
        Some(CredentialScope {
            access_key,
            date,
            region,
            service,
        })
    }

    /// From `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`.
    pub fn from_authorization(header: &str) -> Option<Self> {
        let rest = header.strip_prefix("AWS4-HMAC-SHA256")?;
        rest.split(',')
            .map(str::trim)
            .find_map(|p| p.strip_prefix("Credential="))
            .and_then(Self::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_authorization() {
        let s = CredentialScope::from_authorization(
            "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=abc",
        )
        .unwrap();
        assert_eq!(s.region, "eu-west-1");
        assert_eq!(s.service, "sqs");
        assert_eq!(s.access_key, "AKID");
    }

    #[test]
    fn rejects_garbage() {
        assert!(CredentialScope::from_authorization("Basic abc").is_none());
        assert!(CredentialScope::parse("a/b/c").is_none());
    }
}
