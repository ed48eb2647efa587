//! AWS wire protocols: the request/response types every emulated service speaks, the error shapes of
//! each protocol, SigV4 parsing, and the small XML/JSON helpers services render with.
//!
//! Invariant: this crate knows nothing about any particular service or about persistence. It turns
//! bytes into [`AwsRequest`]s and [`AwsError`]s into bytes, exactly as botocore expects them.

pub mod cbor;
pub mod chunked;
pub mod error;
pub mod ids;
pub mod protocol;
pub mod query;
pub mod query_model;
pub mod request;
pub mod response;
pub mod rest_xml_model;
pub mod sigv2;
pub mod sigv4;
pub mod xml;
mod xml_tree;

pub use error::AwsError;
pub use protocol::Protocol;
pub use request::AwsRequest;
pub use response::AwsResponse;
