#![allow(dead_code)]
pub mod model;
pub mod stream;
pub mod to_model;
