//! What an account's stacks hold, taken read-only (filled in by issue 19's inventory work).
