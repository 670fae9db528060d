//! eavpivot: turn entity–attribute–value tables into wide tables.
//!
//! Data flows one way: job file ([`config`]) → [`plan`] (discover, name, type) → SQL text per
//! [`dialect`] → [`execute`] over a [`backend`] (pushdown or streaming, with [`transform`]s)
//! → verify → [`report`].
#![forbid(unsafe_code)]

pub mod backend;
pub mod cli;
pub mod config;
pub mod dialect;
pub mod display;
pub mod error;
pub mod examples;
pub mod execute;
pub mod plan;
pub mod report;
pub mod transform;
pub mod value;

pub use error::{Error, Result};
