//! A turn's events as a call collects them: its usage, its questions and
//! their answers, its end; what a [`Turn`] is made of.

use super::controller_error::ControllerError;
use super::engine::Decision;
use super::reply::{Approval, CommandLine, Turn, TurnEnd};
use crate::v2::{Command, Event, Usage};

/// The command that answers a turn's question as `decision` says; `None`
/// for [`Decision::Withdrawn`]: nobody answers it.
fn decided(decision: Decision, id: &str) -> Option<Command> {
    match decision {
        Decision::Allowed => Some(Command::allow(id)),
        Decision::Rejected => Some(Command::reject(id)),
        Decision::Cancelled => Some(Command::Cancel),
        Decision::Withdrawn => None,
    }
}

/// A turn's events as they come: what [`Turn`] is made of.
#[derive(Debug)]
pub(super) struct TurnLog {
    pub(super) command: CommandLine,
    events: Vec<Event>,
    usage: Option<Usage>,
    /// Every question the turn asked.
    asked: Vec<Approval>,
    /// The ids the controller answered.
    answered: Vec<String>,
    pub(super) end: Option<TurnEnd>,
    /// The next question [`TurnLog::next_open`] looks at.
    next: usize,
}

impl TurnLog {
    pub(super) fn new(command: CommandLine) -> TurnLog {
        TurnLog {
            command,
            events: Vec::new(),
            usage: None,
            asked: Vec::new(),
            answered: Vec::new(),
            end: None,
            next: 0,
        }
    }

    /// Takes the turn's next event.
    pub(super) fn take(&mut self, event: &Event) {
        match event {
            Event::ApprovalRequested {
                id,
                tool_name,
                detail,
                body,
            } => self.asked.push(Approval {
                id: id.clone(),
                tool_name: tool_name.clone(),
                detail: detail.clone(),
                body: body.clone(),
            }),
            Event::Usage { usage } => self.usage = Some(*usage),
            Event::AgentFinished { answer } => self.end = Some(TurnEnd::Finished(answer.clone())),
            Event::AgentAborted { reason } => self.end = Some(TurnEnd::Aborted(reason.clone())),
            Event::TurnFailed { error } => self.end = Some(TurnEnd::Failed(error.clone())),
            _ => {}
        }
        self.events.push(event.clone());
    }

    /// Where a wait starts looking for open questions: `wait_with` answers
    /// those asked before it (seen through `next_event`) and left open;
    /// `wait` leaves them to the caller, who saw them.
    pub(super) fn start_wait(&mut self, answering: bool) {
        self.next = if answering { 0 } else { self.asked.len() };
    }

    /// The command answering question `id` as `decision` says, the
    /// question then counted answered; `None` for
    /// [`Decision::Withdrawn`]: it stays open.
    pub(super) fn answer(&mut self, id: &str, decision: Decision) -> Option<Command> {
        let command = decided(decision, id)?;
        if !matches!(decision, Decision::Cancelled) {
            self.answered.push(id.to_owned());
        }
        Some(command)
    }

    /// During a wait: the command that answers the next open question as
    /// `decide` says; `Unanswered` when nobody answers it (no `decide`, or
    /// [`Decision::Withdrawn`]).
    pub(super) fn next_answer(
        &mut self,
        decide: &mut Option<impl FnMut(&Approval) -> Decision>,
    ) -> Result<Option<Command>, ControllerError> {
        let Some(approval) = self.next_open() else {
            return Ok(None);
        };
        let decision = decide
            .as_mut()
            .map_or(Decision::Withdrawn, |decide| decide(&approval));
        match self.answer(&approval.id, decision) {
            Some(command) => Ok(Some(command)),
            None => Err(ControllerError::Unanswered(approval)),
        }
    }

    /// The next question asked that the controller has not answered.
    fn next_open(&mut self) -> Option<Approval> {
        while let Some(approval) = self.asked.get(self.next) {
            self.next += 1;
            if !self.answered.contains(&approval.id) {
                return Some(approval.clone());
            }
        }
        None
    }

    /// The turn, once it has ended.
    pub(super) fn into_turn(self) -> Turn {
        let unanswered = self
            .asked
            .iter()
            .filter(|a| !self.answered.contains(&a.id))
            .cloned()
            .collect();
        Turn {
            command: self.command,
            events: self.events,
            end: self.end.unwrap_or(TurnEnd::Failed(String::new())),
            usage: self.usage,
            unanswered,
        }
    }
}
