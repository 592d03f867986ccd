//! Writing events: each value as upstream's `to_json` shapes it and
//! today's stringify writes it (compact, keys in `to_json`'s order).

use crate::v2::encode::{write_content, Out};
use crate::v2::event::jobs::{
    JobEventKind, JobRecord, JobState, JobStopOutcome, PredictionOutcome, Usage,
};
use crate::v2::Content;
use crate::wire::escape::{write_int, write_str};

/// A field value, written.
pub(crate) trait WriteValue {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error>;
}

impl WriteValue for String {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_str(k, self)
    }
}

impl WriteValue for i32 {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_int(k, (*self).into())
    }
}

impl WriteValue for i64 {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_int(k, *self)
    }
}

impl WriteValue for bool {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        k.put(if *self { "true" } else { "false" })
    }
}

/// An optional value upstream always writes: the value, or `null`.
impl<T: WriteValue> WriteValue for Option<T> {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        match self {
            Some(v) => v.write(k),
            None => k.put("null"),
        }
    }
}

impl WriteValue for Content {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_content(k, self)
    }
}

impl<T: WriteValue> WriteValue for Box<T> {
    #[inline]
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        (**self).write(k)
    }
}

impl WriteValue for Vec<String> {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        list(k, self)
    }
}

impl WriteValue for Vec<JobRecord> {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        list(k, self)
    }
}

fn list<K: Out, T: WriteValue>(k: &mut K, items: &[T]) -> Result<(), K::Error> {
    k.put("[")?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            k.put(",")?;
        }
        item.write(k)?;
    }
    k.put("]")
}

impl WriteValue for JobEventKind {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_str(k, self.as_str())
    }
}

impl WriteValue for JobStopOutcome {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        write_str(k, self.as_str())
    }
}

impl WriteValue for Usage {
    /// The derived `ToJson`: the fields in their declared order.
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        k.put("{\"prompt_tokens\":")?;
        self.prompt_tokens.write(k)?;
        k.put(",\"completion_tokens\":")?;
        self.completion_tokens.write(k)?;
        k.put(",\"total_tokens\":")?;
        self.total_tokens.write(k)?;
        k.put(",\"prompt_cache_hit_tokens\":")?;
        self.prompt_cache_hit_tokens.write(k)?;
        k.put(",\"prompt_cache_miss_tokens\":")?;
        self.prompt_cache_miss_tokens.write(k)?;
        k.put("}")
    }
}

impl WriteValue for PredictionOutcome {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        match self {
            PredictionOutcome::Completed {
                text,
                input_tokens,
                output_tokens,
            } => {
                k.put("{\"kind\":\"completed\",\"text\":")?;
                text.write(k)?;
                k.put(",\"input_tokens\":")?;
                input_tokens.write(k)?;
                k.put(",\"output_tokens\":")?;
                output_tokens.write(k)?;
            }
            PredictionOutcome::Skipped => k.put("{\"kind\":\"skipped\"")?,
            PredictionOutcome::Cancelled => k.put("{\"kind\":\"cancelled\"")?,
            PredictionOutcome::Failed(message) => {
                k.put("{\"kind\":\"failed\",\"message\":")?;
                message.write(k)?;
            }
        }
        k.put("}")
    }
}

impl WriteValue for JobState {
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        match self {
            JobState::Running => k.put("{\"kind\":\"running\"}"),
            JobState::Stopping => k.put("{\"kind\":\"stopping\"}"),
            JobState::Interrupted => k.put("{\"kind\":\"interrupted\"}"),
            JobState::Exited(code) => {
                k.put("{\"kind\":\"exited\",\"code\":")?;
                code.write(k)?;
                k.put("}")
            }
            JobState::Stopped(reason) => {
                k.put("{\"kind\":\"stopped\",\"reason\":")?;
                reason.write(k)?;
                k.put("}")
            }
        }
    }
}

impl WriteValue for JobRecord {
    /// `JobRecord::to_json`'s map, in its insertion order; `data` last, and
    /// only when set.
    fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
        k.put("{\"schema_version\":1,\"cleanup_error\":")?;
        self.cleanup_error.write(k)?;
        k.put(",\"generation\":")?;
        self.generation.write(k)?;
        k.put(",\"id\":")?;
        self.id.write(k)?;
        k.put(",\"revision\":")?;
        self.revision.write(k)?;
        k.put(",\"command\":")?;
        self.command.write(k)?;
        k.put(",\"description\":")?;
        self.description.write(k)?;
        k.put(",\"cwd\":")?;
        self.cwd.write(k)?;
        k.put(",\"state\":")?;
        self.state.write(k)?;
        k.put(",\"started_at_ms\":")?;
        self.started_at_ms.write(k)?;
        k.put(",\"backgrounded_at_ms\":")?;
        self.backgrounded_at_ms.write(k)?;
        k.put(",\"finished_at_ms\":")?;
        self.finished_at_ms.write(k)?;
        k.put(",\"last_output_at_ms\":")?;
        self.last_output_at_ms.write(k)?;
        k.put(",\"output_file\":")?;
        self.output_file.write(k)?;
        k.put(",\"output_persistent\":")?;
        self.output_persistent.write(k)?;
        k.put(",\"output_bytes\":")?;
        self.output_bytes.write(k)?;
        k.put(",\"output_chars\":")?;
        self.output_chars.write(k)?;
        k.put(",\"output_truncated\":")?;
        self.output_truncated.write(k)?;
        k.put(",\"invalid_utf8\":")?;
        self.invalid_utf8.write(k)?;
        k.put(",\"output_error\":")?;
        self.output_error.write(k)?;
        k.put(",\"persistence_error\":")?;
        self.persistence_error.write(k)?;
        if let Some(data) = &self.data {
            k.put(",\"data\":")?;
            k.put(data.as_str())?;
        }
        k.put("}")
    }
}
