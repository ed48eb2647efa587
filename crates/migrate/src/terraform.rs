//! CloudFormation types to Terraform AWS provider resources and import ids (issue 19).
