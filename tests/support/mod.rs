//! Helpers shared by integration tests and benchmarks.
pub mod corpus;
pub mod pdf;
pub mod servers;
