//! Placeholder until the mssql backend lands: connecting says so plainly.

use super::{Backend, ConnectOptions};
use crate::error::{Error, Result};

pub async fn connect(_config: &str, _options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    Err(Error::Usage("the mssql backend is not available in this build".into()))
}
