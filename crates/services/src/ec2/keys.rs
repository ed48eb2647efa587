//! Key pairs: looked up by name (RunInstances' KeyName).

use super::Region;
use super::model::{KeyPair, Resource};
use cumulo_wire::AwsError;

pub fn key_not_found(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidKeyPair.NotFound",
        format!("The key pair '{name}' does not exist"),
    )
}

impl Region {
    pub fn key_pair_named(&self, name: &str) -> Result<&KeyPair, AwsError> {
        self.items
            .values()
            .find_map(|r| match r {
                Resource::KeyPair(k) if k.name == name => Some(k),
                _ => None,
            })
            .ok_or_else(|| key_not_found(name))
    }
}
