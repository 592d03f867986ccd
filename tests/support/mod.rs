#![allow(dead_code)]
pub mod model;
