//! `Serialize` and `Deserialize` for events, over the same wire shape and
//! rules as the byte path: with serde_json, `to_string` writes exactly
//! [`Event::to_line`]'s bytes (without the LF), and `from_str` decides as
//! [`Event::from_slice`] does.

use crate::v2::event::jobs::{
    JobEventKind, JobRecord, JobState, JobStopOutcome, PredictionOutcome, Usage,
};
use crate::v2::event::json_text::JsonText;
use crate::v2::event::{decode, Event};
use crate::wire::tree::{JStr, Json, Num};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::borrow::Cow;
use std::fmt;

impl<'de> Deserialize<'de> for Event {
    /// Any JSON value, decided as [`Event::from_slice`] decides a line; a
    /// value that is not an event fails with a custom error whose message
    /// is the [`EventError`](crate::v2::EventError)'s.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tree = deserializer.deserialize_any(TreeVisitor)?;
        decode(&tree).map_err(de::Error::custom)
    }
}

/// A serde value as a tree, borrowing the strings it can.
struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num {
            text: Cow::Owned(n.to_string()),
        }))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num {
            text: Cow::Owned(n.to_string()),
        }))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num {
            // With a fraction or an exponent, so that it is never taken
            // for an integer's exact text.
            text: Cow::Owned(format!("{x:e}")),
        }))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(JStr::Text(Cow::Borrowed(s))))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(JStr::Text(Cow::Owned(s.to_owned()))))
    }
    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(JStr::Text(Cow::Owned(s))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(TreeSeed)? {
            items.push(item);
        }
        Ok(Json::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            members.push((JStr::Text(key), map.next_value_seed(TreeSeed)?));
        }
        Ok(Json::Obj(members))
    }
}

struct TreeSeed;

impl<'de> de::DeserializeSeed<'de> for TreeSeed {
    type Value = Json<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

impl Serialize for Event {
    /// The wire object: with serde_json, exactly [`Event::to_line`]'s bytes
    /// without the LF (a job's `data` holding a number past 64 bits or a
    /// double is the exception: serde has no raw number).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("event", self.name())?;
        self.serialize_fields(&mut map)?;
        map.end()
    }
}

impl Serialize for Usage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("prompt_tokens", &self.prompt_tokens)?;
        map.serialize_entry("completion_tokens", &self.completion_tokens)?;
        map.serialize_entry("total_tokens", &self.total_tokens)?;
        map.serialize_entry("prompt_cache_hit_tokens", &self.prompt_cache_hit_tokens)?;
        map.serialize_entry("prompt_cache_miss_tokens", &self.prompt_cache_miss_tokens)?;
        map.end()
    }
}

impl Serialize for JobEventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Serialize for JobStopOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Serialize for PredictionOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            PredictionOutcome::Completed {
                text,
                input_tokens,
                output_tokens,
            } => {
                map.serialize_entry("kind", "completed")?;
                map.serialize_entry("text", text)?;
                map.serialize_entry("input_tokens", input_tokens)?;
                map.serialize_entry("output_tokens", output_tokens)?;
            }
            PredictionOutcome::Skipped => map.serialize_entry("kind", "skipped")?,
            PredictionOutcome::Cancelled => map.serialize_entry("kind", "cancelled")?,
            PredictionOutcome::Failed(message) => {
                map.serialize_entry("kind", "failed")?;
                map.serialize_entry("message", message)?;
            }
        }
        map.end()
    }
}

impl Serialize for JobState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            JobState::Running => map.serialize_entry("kind", "running")?,
            JobState::Stopping => map.serialize_entry("kind", "stopping")?,
            JobState::Interrupted => map.serialize_entry("kind", "interrupted")?,
            JobState::Exited(code) => {
                map.serialize_entry("kind", "exited")?;
                map.serialize_entry("code", code)?;
            }
            JobState::Stopped(reason) => {
                map.serialize_entry("kind", "stopped")?;
                map.serialize_entry("reason", reason)?;
            }
        }
        map.end()
    }
}

impl Serialize for JobRecord {
    /// `to_json`'s keys in its order; `data` last, only when set.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("schema_version", &1)?;
        map.serialize_entry("cleanup_error", &self.cleanup_error)?;
        map.serialize_entry("generation", &self.generation)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("revision", &self.revision)?;
        map.serialize_entry("command", &self.command)?;
        map.serialize_entry("description", &self.description)?;
        map.serialize_entry("cwd", &self.cwd)?;
        map.serialize_entry("state", &self.state)?;
        map.serialize_entry("started_at_ms", &self.started_at_ms)?;
        map.serialize_entry("backgrounded_at_ms", &self.backgrounded_at_ms)?;
        map.serialize_entry("finished_at_ms", &self.finished_at_ms)?;
        map.serialize_entry("last_output_at_ms", &self.last_output_at_ms)?;
        map.serialize_entry("output_file", &self.output_file)?;
        map.serialize_entry("output_persistent", &self.output_persistent)?;
        map.serialize_entry("output_bytes", &self.output_bytes)?;
        map.serialize_entry("output_chars", &self.output_chars)?;
        map.serialize_entry("output_truncated", &self.output_truncated)?;
        map.serialize_entry("invalid_utf8", &self.invalid_utf8)?;
        map.serialize_entry("output_error", &self.output_error)?;
        map.serialize_entry("persistence_error", &self.persistence_error)?;
        if let Some(data) = &self.data {
            map.serialize_entry("data", data)?;
        }
        map.end()
    }
}

impl Serialize for JsonText {
    /// The value, its keys in order; a number as an integer when its text
    /// is one that fits 64 bits, else as a double.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The text is canonical JSON: it always parses.
        let tree = crate::wire::scan::parse_tree(self.as_str().as_bytes()).unwrap_or(Json::Null);
        Value(&tree).serialize(serializer)
    }
}

/// A tree value, serialized.
struct Value<'v, 'a>(&'v Json<'a>);

impl Serialize for Value<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Str(s) => serializer.serialize_str(&s.text()),
            Json::Num(n) => {
                if let Ok(i) = n.text.parse::<i64>() {
                    serializer.serialize_i64(i)
                } else if let Ok(u) = n.text.parse::<u64>() {
                    serializer.serialize_u64(u)
                } else {
                    serializer.serialize_f64(n.value())
                }
            }
            Json::Arr(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Value(item))?;
                }
                seq.end()
            }
            Json::Obj(_) => {
                let members = self.0.members();
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(&*key, &Value(value))?;
                }
                map.end()
            }
        }
    }
}
