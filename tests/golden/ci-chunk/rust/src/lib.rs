//! A rate limiter for the API gateway.

pub mod error;
pub mod limiter;

pub use limiter::{Limiter, TokenBucket};
