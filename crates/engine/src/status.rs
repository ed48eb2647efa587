//! Stack statuses and which operation may start from which, as CloudFormation enforces them.

use serde::{Deserialize, Serialize};

macro_rules! statuses {
    ($($v:ident),* $(,)?) => {
        /// Every value of AWS's `StackStatus` enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[allow(non_camel_case_types)]
        pub enum StackStatus { $($v),* }

        impl StackStatus {
            pub const ALL: &'static [StackStatus] = &[$(StackStatus::$v),*];

            pub fn as_str(self) -> &'static str {
                match self { $(StackStatus::$v => stringify!($v)),* }
            }

            pub fn parse(s: &str) -> Option<StackStatus> {
                match s { $(stringify!($v) => Some(StackStatus::$v),)* _ => None }
            }
        }
    };
}

statuses!(
    CREATE_IN_PROGRESS,
    CREATE_FAILED,
    CREATE_COMPLETE,
    ROLLBACK_IN_PROGRESS,
    ROLLBACK_FAILED,
    ROLLBACK_COMPLETE,
    DELETE_IN_PROGRESS,
    DELETE_FAILED,
    DELETE_COMPLETE,
    UPDATE_IN_PROGRESS,
    UPDATE_COMPLETE_CLEANUP_IN_PROGRESS,
    UPDATE_COMPLETE,
    UPDATE_FAILED,
    UPDATE_ROLLBACK_IN_PROGRESS,
    UPDATE_ROLLBACK_FAILED,
    UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS,
    UPDATE_ROLLBACK_COMPLETE,
    REVIEW_IN_PROGRESS,
    IMPORT_IN_PROGRESS,
    IMPORT_COMPLETE,
    IMPORT_ROLLBACK_IN_PROGRESS,
    IMPORT_ROLLBACK_FAILED,
    IMPORT_ROLLBACK_COMPLETE,
);

impl std::fmt::Display for StackStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StackStatus {
    /// An operation is running: nothing else may start (except CancelUpdateStack, and
    /// DeleteStack on a stack already deleting).
    pub fn in_progress(self) -> bool {
        self.as_str().ends_with("_IN_PROGRESS") && self != StackStatus::REVIEW_IN_PROGRESS
    }

    /// The last known stable states an update may start from.
    pub fn updatable(self) -> bool {
        use StackStatus::*;
        matches!(
            self,
            CREATE_COMPLETE
                | UPDATE_COMPLETE
                | UPDATE_ROLLBACK_COMPLETE
                | IMPORT_COMPLETE
                | IMPORT_ROLLBACK_COMPLETE
        )
    }

    /// Where an operation that is in (or finishing with) this state ends when it cannot go on,
    /// e.g. when its state could not be written: a stack never shows success for an operation
    /// whose record was lost.
    pub fn failed(self) -> StackStatus {
        use StackStatus::*;
        match self {
            CREATE_IN_PROGRESS | CREATE_COMPLETE => CREATE_FAILED,
            ROLLBACK_IN_PROGRESS | ROLLBACK_COMPLETE => ROLLBACK_FAILED,
            DELETE_IN_PROGRESS | DELETE_COMPLETE => DELETE_FAILED,
            UPDATE_IN_PROGRESS | UPDATE_COMPLETE_CLEANUP_IN_PROGRESS | UPDATE_COMPLETE => {
                UPDATE_FAILED
            }
            UPDATE_ROLLBACK_IN_PROGRESS
            | UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS
            | UPDATE_ROLLBACK_COMPLETE => UPDATE_ROLLBACK_FAILED,
            IMPORT_IN_PROGRESS
            | IMPORT_COMPLETE
            | IMPORT_ROLLBACK_IN_PROGRESS
            | IMPORT_ROLLBACK_COMPLETE => IMPORT_ROLLBACK_FAILED,
            other => other,
        }
    }

    /// A failed state an update may resume when it sets DisableRollback.
    pub fn resumable_without_rollback(self) -> bool {
        matches!(
            self,
            StackStatus::CREATE_FAILED | StackStatus::UPDATE_FAILED
        )
    }
}
