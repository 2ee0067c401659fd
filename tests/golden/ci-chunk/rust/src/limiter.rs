//! Token buckets, one per client.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::Error;

/// The default refill rate, in tokens per second.
pub const DEFAULT_RATE: f64 = 10.0;

/// Something that decides whether a request may pass.
pub trait Limiter {
    /// Take one token for `client`, or say how long to wait.
    fn check(&mut self, client: &str) -> Result<(), Error>;

    fn reset(&mut self) {}
}

/// A bucket of `capacity` tokens refilled at `rate` per second.
#[derive(Debug)]
pub struct TokenBucket {
    capacity: f64,
    rate: f64,
    buckets: HashMap<String, (f64, Instant)>,
}

impl TokenBucket {
    pub fn new(capacity: u32, rate: f64) -> Self {
        Self { capacity: capacity as f64, rate, buckets: HashMap::new() }
    }

    fn refill(&self, tokens: f64, since: Instant, now: Instant) -> f64 {
        let elapsed = now.duration_since(since).as_secs_f64();
        (tokens + elapsed * self.rate).min(self.capacity)
    }
}

impl Limiter for TokenBucket {
    fn check(&mut self, client: &str) -> Result<(), Error> {
        let now = Instant::now();
        let (tokens, last) = self
            .buckets
            .get(client)
            .copied()
            .unwrap_or((self.capacity, now));
        let tokens = self.refill(tokens, last, now);

        if tokens < 1.0 {
            let wait = Duration::from_secs_f64((1.0 - tokens) / self.rate);
            self.buckets.insert(client.to_string(), (tokens, now));
            return Err(Error::RateLimited {
                retry_after_ms: wait.as_millis() as u64,
            });
        }

        // Spend one token and remember when.
        self.buckets.insert(client.to_string(), (tokens - 1.0, now));
        if self.buckets.len() > 10_000 {
            self.buckets.retain(|_, (_, t)| now.duration_since(*t) < Duration::from_secs(600));
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.buckets.clear();
    }
}

macro_rules! limit {
    ($cap:expr) => {
        TokenBucket::new($cap, DEFAULT_RATE)
    };
}

pub fn for_tests() -> impl Limiter {
    limit!(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_when_empty() {
        let mut l = for_tests();
        assert!(l.check("a").is_ok());
        assert!(l.check("a").is_ok());
        assert!(matches!(l.check("a"), Err(Error::RateLimited { .. })));
    }
}
