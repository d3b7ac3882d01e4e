//! The inspector's tests, as one test binary: the HTTP API (`http`) and the page in a real
//! browser (`browser`: headless Chromium over WebDriver, `webdriver`).

mod browser;
mod http;
mod support;
mod webdriver;
