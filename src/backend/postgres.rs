//! Placeholder until the postgres backend lands: connecting says so plainly.

use super::{Backend, ConnectOptions};
use crate::error::{Error, Result};

pub async fn connect(_url: &str, _options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    Err(Error::Usage("the postgres backend is not available in this build".into()))
}
