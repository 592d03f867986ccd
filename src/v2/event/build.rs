//! The constructors of the events with more than four fields: a call site
//! names each field rather than passing five or six in a row, and a field
//! upstream adds later is one more method, not a broken call.

use crate::v2::event::{Event, SubrunStatus};

impl Event {
    /// `tool_result`: a tool call finished, and this is what it returned to
    /// the model. An engine writes it inside a turn, after the tool ran;
    /// `brief` (written `null` when `None`) is the tool's one-line summary
    /// for a display. [`Event::tool_error`] for a call that failed.
    ///
    /// ```
    /// use serve_command::v2::Event;
    /// let event = Event::tool_result("call-1", "read_file", "fn main() {}", Some("1 line".to_owned()));
    /// assert_eq!(
    ///     event.to_line(),
    ///     "{\"event\":\"tool_result\",\"tool_call_id\":\"call-1\",\"tool_name\":\"read_file\",\"is_error\":false,\"content\":\"fn main() {}\",\"brief\":\"1 line\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
        brief: impl Into<Option<String>>,
    ) -> Event {
        tool_output(tool_call_id, tool_name, false, content, brief)
    }

    /// `tool_result` with `"is_error":true`: a tool call failed, and
    /// `content` is the error the model is shown.
    ///
    /// ```
    /// use serve_command::v2::Event;
    /// let event = Event::tool_error("call-2", "read_file", "no such file", None);
    /// assert_eq!(
    ///     event.to_line(),
    ///     "{\"event\":\"tool_result\",\"tool_call_id\":\"call-2\",\"tool_name\":\"read_file\",\"is_error\":true,\"content\":\"no such file\",\"brief\":null}\n",
    /// );
    /// ```
    #[must_use]
    pub fn tool_error(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
        brief: impl Into<Option<String>>,
    ) -> Event {
        tool_output(tool_call_id, tool_name, true, content, brief)
    }

    /// `subrun_finished`: a nested sub-run (a review, an explore) ended,
    /// paired by `id` with its `subrun_started`. Upstream writes it on
    /// success, failure and cancellation alike, and before the parent
    /// turn's own terminal event, so a reader never shows a sub-run as
    /// running forever. The spend (`steps`, `tokens`) is 0 until set;
    /// `unaccounted` says why it may fall short of the child's.
    ///
    /// ```
    /// use serve_command::v2::{Event, SubrunStatus};
    /// let event: Event = Event::subrun_finished("s1", SubrunStatus::Captured)
    ///     .steps(3)
    ///     .tokens(100, 20)
    ///     .build();
    /// assert_eq!(
    ///     event.to_line(),
    ///     "{\"event\":\"subrun_finished\",\"id\":\"s1\",\"status\":\"captured\",\"steps\":3,\"prompt_tokens\":100,\"completion_tokens\":20}\n",
    /// );
    /// ```
    pub fn subrun_finished(
        id: impl Into<String>,
        status: impl Into<SubrunStatus>,
    ) -> SubrunFinishedBuilder {
        SubrunFinishedBuilder {
            id: id.into(),
            status: status.into(),
            steps: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            unaccounted: None,
        }
    }

    /// `workflow_started`: an `mbtx` snippet started a workflow, a run
    /// that delegates to child agents of its own. `journal` is the
    /// append-only ledger of its resolved calls and `events` the sidecar
    /// that reports each launch as it starts, both absolute paths a reader
    /// tails. The reserved child ordinals (`first_child`, `child_count`)
    /// are 0 until set with [`children`](WorkflowStartedBuilder::children).
    ///
    /// ```
    /// use serve_command::v2::Event;
    /// let event: Event = Event::workflow_started("w1", "/s/journal.jsonl", "/s/events.jsonl")
    ///     .children(4, 2)
    ///     .build();
    /// assert_eq!(
    ///     event.to_line(),
    ///     "{\"event\":\"workflow_started\",\"id\":\"w1\",\"journal\":\"/s/journal.jsonl\",\"events\":\"/s/events.jsonl\",\"first_child\":4,\"child_count\":2}\n",
    /// );
    /// ```
    pub fn workflow_started(
        id: impl Into<String>,
        journal: impl Into<String>,
        events: impl Into<String>,
    ) -> WorkflowStartedBuilder {
        WorkflowStartedBuilder {
            id: id.into(),
            journal: journal.into(),
            events: events.into(),
            first_child: 0,
            child_count: 0,
        }
    }
}

/// `tool_result` and `tool_error`, whose one difference is `is_error`.
fn tool_output(
    tool_call_id: impl Into<String>,
    tool_name: impl Into<String>,
    is_error: bool,
    content: impl Into<String>,
    brief: impl Into<Option<String>>,
) -> Event {
    Event::ToolResult {
        tool_call_id: tool_call_id.into(),
        tool_name: tool_name.into(),
        is_error,
        content: content.into(),
        brief: brief.into(),
    }
}

/// A `subrun_finished` being built ([`Event::subrun_finished`]); `build()`
/// or `Event::from` gives the event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct SubrunFinishedBuilder {
    id: String,
    status: SubrunStatus,
    steps: i32,
    prompt_tokens: i32,
    completion_tokens: i32,
    unaccounted: Option<String>,
}

impl SubrunFinishedBuilder {
    /// The steps the child took (`steps`).
    pub fn steps(mut self, steps: i32) -> Self {
        self.steps = steps;
        self
    }

    /// The child's token spend: `prompt_tokens`, then `completion_tokens`.
    pub fn tokens(mut self, prompt_tokens: i32, completion_tokens: i32) -> Self {
        self.prompt_tokens = prompt_tokens;
        self.completion_tokens = completion_tokens;
        self
    }

    /// Why the spend may fall short of the child's own account
    /// (`unaccounted`; left out of the line when never set).
    pub fn unaccounted(mut self, why: impl Into<String>) -> Self {
        self.unaccounted = Some(why.into());
        self
    }

    /// The event.
    #[must_use]
    pub fn build(self) -> Event {
        Event::SubrunFinished {
            id: self.id,
            status: self.status,
            steps: self.steps,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            unaccounted: self.unaccounted,
        }
    }
}

impl From<SubrunFinishedBuilder> for Event {
    fn from(builder: SubrunFinishedBuilder) -> Event {
        builder.build()
    }
}

/// A `workflow_started` being built ([`Event::workflow_started`]);
/// `build()` or `Event::from` gives the event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct WorkflowStartedBuilder {
    id: String,
    journal: String,
    events: String,
    first_child: i32,
    child_count: i32,
}

impl WorkflowStartedBuilder {
    /// The child ordinals reserved for the run: its child sessions are
    /// `<parent>-sr-N` for N from `first_child`, `child_count` of them.
    pub fn children(mut self, first_child: i32, child_count: i32) -> Self {
        self.first_child = first_child;
        self.child_count = child_count;
        self
    }

    /// The event.
    #[must_use]
    pub fn build(self) -> Event {
        Event::WorkflowStarted {
            id: self.id,
            journal: self.journal,
            events: self.events,
            first_child: self.first_child,
            child_count: self.child_count,
        }
    }
}

impl From<WorkflowStartedBuilder> for Event {
    fn from(builder: WorkflowStartedBuilder) -> Event {
        builder.build()
    }
}
