//! Identifiers AWS puts on every response.

/// A fresh request id in AWS's usual UUID form; every response carries one.
pub fn request_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
