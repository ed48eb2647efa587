//! Identifiers in AWS's formats: REST and HTTP API ids and API keys are 10 lowercase
//! alphanumerics, resources, deployments, authorizers and the like 6 (v2 routes and
//! integrations 7), API key values 40 mixed-case alphanumerics.

use rand::Rng;

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const MIXED: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn draw(alphabet: &[u8], len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
        .collect()
}

/// A REST or HTTP API id, an API key id, a root resource id.
pub fn long() -> String {
    draw(LOWER, 10)
}

/// A resource, deployment, authorizer, validator, model or usage plan id.
pub fn short() -> String {
    draw(LOWER, 6)
}

/// A v2 route, integration or API mapping id.
pub fn seven() -> String {
    draw(LOWER, 7)
}

/// An API key's value.
pub fn key_value() -> String {
    draw(MIXED, 40)
}

/// Seconds since the epoch, as rest-json timestamps are written.
pub fn now() -> f64 {
    chrono::Utc::now().timestamp() as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_have_aws_shapes() {
        let id = super::long();
        assert_eq!(id.len(), 10);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        assert_eq!(super::short().len(), 6);
        assert_eq!(super::key_value().len(), 40);
    }
}
