//! GetRandomPassword: every option of AWS's, from a cryptographically secure generator
//! (`rand`'s thread RNG, a ChaCha stream seeded from the OS).

use cumulo_wire::AwsError;
use rand::Rng;
use rand::seq::SliceRandom;

pub const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

#[derive(Debug, Clone, Default)]
pub struct PasswordOptions {
    pub length: Option<i64>,
    pub exclude_characters: String,
    pub exclude_numbers: bool,
    pub exclude_punctuation: bool,
    pub exclude_uppercase: bool,
    pub exclude_lowercase: bool,
    pub include_space: bool,
    /// Defaults to true, as AWS's.
    pub require_each_included_type: Option<bool>,
}

fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidParameterException", message)
}

pub fn generate(o: &PasswordOptions) -> Result<String, AwsError> {
    let length = o.length.unwrap_or(32);
    if !(1..=4096).contains(&length) {
        return Err(AwsError::validation_exception(format!(
            "1 validation error detected: Value '{length}' at 'passwordLength' failed to satisfy constraint: Member must have value {}",
            if length < 1 {
                "greater than or equal to 1"
            } else {
                "less than or equal to 4096"
            }
        )));
    }
    if o.exclude_characters.chars().count() > 4096 {
        return Err(AwsError::validation_exception(
            "1 validation error detected: Value at 'excludeCharacters' failed to satisfy constraint: Member must have length less than or equal to 4096",
        ));
    }
    let keep = |set: &str| -> Vec<char> {
        set.chars()
            .filter(|c| !o.exclude_characters.contains(*c))
            .collect()
    };
    let mut classes: Vec<Vec<char>> = Vec::new();
    if !o.exclude_lowercase {
        classes.push(keep("abcdefghijklmnopqrstuvwxyz"));
    }
    if !o.exclude_uppercase {
        classes.push(keep("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
    }
    if !o.exclude_numbers {
        classes.push(keep("0123456789"));
    }
    if !o.exclude_punctuation {
        classes.push(keep(PUNCTUATION));
    }
    classes.retain(|c| !c.is_empty());
    let mut all: Vec<char> = classes.concat();
    if o.include_space && !o.exclude_characters.contains(' ') {
        all.push(' ');
    }
    if all.is_empty() {
        return Err(invalid(
            "The password cannot be generated: every character type is excluded.",
        ));
    }
    let length = length as usize;
    let mut rng = rand::rng();
    let mut out: Vec<char> = Vec::with_capacity(length);
    if o.require_each_included_type.unwrap_or(true) {
        if length < classes.len() {
            return Err(invalid(format!(
                "The password length ({length}) is too short to include one character of each of the {} required character types.",
                classes.len()
            )));
        }
        for class in &classes {
            out.push(class[rng.random_range(0..class.len())]);
        }
    }
    while out.len() < length {
        out.push(all[rng.random_range(0..all.len())]);
    }
    out.shuffle(&mut rng);
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_every_option() {
        let p = generate(&PasswordOptions::default()).unwrap();
        assert_eq!(p.chars().count(), 32);
        for _ in 0..50 {
            let p = generate(&PasswordOptions {
                length: Some(4),
                ..Default::default()
            })
            .unwrap();
            assert!(p.chars().any(|c| c.is_ascii_lowercase()), "{p}");
            assert!(p.chars().any(|c| c.is_ascii_uppercase()), "{p}");
            assert!(p.chars().any(|c| c.is_ascii_digit()), "{p}");
            assert!(p.chars().any(|c| PUNCTUATION.contains(c)), "{p}");
        }
        let p = generate(&PasswordOptions {
            length: Some(200),
            exclude_punctuation: true,
            exclude_uppercase: true,
            exclude_characters: "abc0".into(),
            ..Default::default()
        })
        .unwrap();
        assert!(
            p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        );
        assert!(!p.contains(['a', 'b', 'c', '0']));
        let p = generate(&PasswordOptions {
            length: Some(300),
            exclude_lowercase: true,
            exclude_uppercase: true,
            exclude_numbers: true,
            exclude_punctuation: true,
            include_space: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(p, " ".repeat(300));
        let none = PasswordOptions {
            exclude_lowercase: true,
            exclude_uppercase: true,
            exclude_numbers: true,
            exclude_punctuation: true,
            ..Default::default()
        };
        assert_eq!(
            generate(&none).unwrap_err().code,
            "InvalidParameterException"
        );
        let short = PasswordOptions {
            length: Some(3),
            ..Default::default()
        };
        assert_eq!(
            generate(&short).unwrap_err().code,
            "InvalidParameterException"
        );
        assert_eq!(
            generate(&PasswordOptions {
                length: Some(0),
                ..Default::default()
            })
            .unwrap_err()
            .code,
            "ValidationException"
        );
    }
}
