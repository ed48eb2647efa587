//! AWS Step Functions (work in progress on branch `sfn`): the Amazon States Language
//! interpreter (`asl`). The service (json 1.0, `AWSStepFunctions.<Operation>`), its store and
//! its CloudFormation providers are not written yet; nothing routes here.

pub mod asl;
