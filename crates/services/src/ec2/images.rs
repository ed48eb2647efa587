//! The Amazon machine images DescribeImages lists: a small fixed catalogue of Amazon's own
//! images, the same ids in every region (AWS's differ per region), each named by the public SSM
//! parameters CDK and templates read for AMIs. No image holds a disk: an instance launched from
//! one is a record.

/// One image of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Image {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub owner_id: &'static str,
    pub architecture: &'static str,
    pub creation_date: &'static str,
    /// The public SSM parameters (`/aws/service/...`) whose value is this image's id.
    pub parameters: &'static [&'static str],
}

const AMAZON: &str = "137112412989";
const ECS: &str = "591542846629";

pub const CATALOGUE: &[Image] = &[
    Image {
        id: "ami-0a3c3a20c09d6f377",
        name: "al2023-ami-2023.6.20241212.0-kernel-6.1-x86_64",
        description: "Amazon Linux 2023 AMI 2023.6.20241212.0 x86_64 HVM kernel-6.1",
        owner_id: AMAZON,
        architecture: "x86_64",
        creation_date: "2024-12-13T00:02:26.000Z",
        parameters: &[
            "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64",
            "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64",
        ],
    },
    Image {
        id: "ami-0b8b9c1d2e3f40516",
        name: "al2023-ami-2023.6.20241212.0-kernel-6.1-arm64",
        description: "Amazon Linux 2023 AMI 2023.6.20241212.0 arm64 HVM kernel-6.1",
        owner_id: AMAZON,
        architecture: "arm64",
        creation_date: "2024-12-13T00:02:31.000Z",
        parameters: &[
            "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64",
            "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64",
        ],
    },
    Image {
        id: "ami-01816d07b1128cd2d",
        name: "amzn2-ami-hvm-2.0.20241217.0-x86_64-gp2",
        description: "Amazon Linux 2 AMI 2.0.20241217.0 x86_64 HVM gp2",
        owner_id: AMAZON,
        architecture: "x86_64",
        creation_date: "2024-12-18T20:52:42.000Z",
        parameters: &[
            "/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2",
            "/aws/service/ami-amazon-linux-latest/amzn2-ami-kernel-5.10-hvm-x86_64-gp2",
        ],
    },
    Image {
        id: "ami-05b10e08d247fb927",
        name: "amzn2-ami-ecs-hvm-2.0.20241217-x86_64-ebs",
        description: "Amazon Linux AMI 2.0.20241217 x86_64 ECS HVM GP2",
        owner_id: ECS,
        architecture: "x86_64",
        creation_date: "2024-12-18T01:27:09.000Z",
        parameters: &["/aws/service/ecs/optimized-ami/amazon-linux-2/recommended/image_id"],
    },
    Image {
        id: "ami-07c8bc6b0bb890e9e",
        name: "amzn2-ami-ecs-hvm-2.0.20241217-arm64-ebs",
        description: "Amazon Linux AMI 2.0.20241217 arm64 ECS HVM GP2",
        owner_id: ECS,
        architecture: "arm64",
        creation_date: "2024-12-18T01:27:12.000Z",
        parameters: &["/aws/service/ecs/optimized-ami/amazon-linux-2/arm64/recommended/image_id"],
    },
    Image {
        id: "ami-0dd0e4b8d5e6a1c23",
        name: "al2023-ami-ecs-hvm-2023.0.20241217-kernel-6.1-x86_64",
        description: "Amazon Linux AMI 2023.0.20241217 x86_64 ECS HVM EBS",
        owner_id: ECS,
        architecture: "x86_64",
        creation_date: "2024-12-18T01:27:20.000Z",
        parameters: &["/aws/service/ecs/optimized-ami/amazon-linux-2023/recommended/image_id"],
    },
];

pub fn image(id: &str) -> Option<&'static Image> {
    CATALOGUE.iter().find(|i| i.id == id)
}

/// The value of a public parameter that names an image: its id, or for an ECS `recommended`
/// parameter the JSON document AWS publishes there.
pub fn parameter(name: &str) -> Option<String> {
    if let Some(i) = CATALOGUE.iter().find(|i| i.parameters.contains(&name)) {
        return Some(i.id.to_string());
    }
    let base = name.strip_suffix("/recommended")?;
    let i = CATALOGUE.iter().find(|i| {
        i.parameters
            .contains(&format!("{base}/recommended/image_id").as_str())
    })?;
    Some(
        serde_json::json!({
            "ecs_agent_version": "1.89.2",
            "ecs_runtime_version": "Docker version 25.0.6",
            "image_id": i.id,
            "image_name": i.name,
            "os": "Amazon Linux 2",
            "schema_version": 1,
            "source_image_name": i.name,
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_parameters_name_catalogued_images() {
        let al2023 =
            parameter("/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64")
                .unwrap();
        assert!(image(&al2023).is_some());
        let doc: serde_json::Value = serde_json::from_str(
            &parameter("/aws/service/ecs/optimized-ami/amazon-linux-2/recommended").unwrap(),
        )
        .unwrap();
        assert_eq!(
            doc["image_id"].as_str(),
            parameter("/aws/service/ecs/optimized-ami/amazon-linux-2/recommended/image_id")
                .as_deref()
        );
        assert!(parameter("/aws/service/nothing").is_none());
        for i in CATALOGUE {
            assert!(
                i.parameters
                    .iter()
                    .all(|p| parameter(p) == Some(i.id.to_string()))
            );
        }
        let ids: std::collections::BTreeSet<_> = CATALOGUE.iter().map(|i| i.id).collect();
        assert_eq!(ids.len(), CATALOGUE.len());
    }
}
