//! [`proptest`](mod@proptest) strategies for the later revision (feature
//! `proptest`).
